/**
 * The agent's drain (RFC 8326 graceful shutdown), as plain state with time
 * passed in: why it started, when, and when it is over. The agent (shell)
 * arms the timer, tells the speaker, and stops or holds when it runs out.
 *
 * Two kinds:
 * - `stop`: SIGTERM (a rolling update, a node shutdown). After the drain
 *   time the agent closes every session with Cease / Administrative Shutdown
 *   and an RFC 9003 message, and exits.
 * - `hold`: `tsbgp drain`, or the node cordoned (with --drain-on-cordon or
 *   the tsbgp.io/drain-on-cordon annotation). Routes stay marked and the
 *   sessions stay up until `tsbgp drain --cancel` or the node is uncordoned:
 *   an agent that exited would be restarted by its DaemonSet and come back
 *   undrained, pulling traffic back onto the node. A SIGTERM during a hold
 *   whose drain time has passed stops at once (routers have converged).
 */

/**
 * Default drain time, seconds. The peer re-runs best path within a second of
 * our UPDATE; what takes longer is the routers behind it: an eBGP hop may
 * hold its UPDATE for the MinRouteAdvertisementInterval, 30 s by RFC 4271's
 * suggested value (§10) and several vendors' default. 30 s covers one such
 * hop; deploy/daemonset.yaml's terminationGracePeriodSeconds is 45 (drain +
 * the close and the kubelet's margin).
 */
export const DEFAULT_DRAIN_SECONDS = 30;

export type DrainKind = 'stop' | 'hold';

/**
 * How a `stop` drain closes its sessions once its time is up.
 * - `hard-reset`: Cease / Administrative Shutdown, which is a Hard Reset on
 *   sessions with the RFC 8538 N bit: peers drop the routes at once.
 * - `keep-stale`: Cease / Administrative Reset to N-bit peers (a TCP close to
 *   the others): peers keep the routes as stale, still marked
 *   GRACEFUL_SHUTDOWN, until the agent is back or their restart timer ends.
 * The drain lab (docs/drain-lab.md) measured both: see DEFAULT_DRAIN_CLOSE.
 */
export type DrainClose = 'hard-reset' | 'keep-stale';
export const DRAIN_CLOSES: readonly DrainClose[] = ['hard-reset', 'keep-stale'];

/** The default close after a drain; why, in docs/drain-lab.md. */
export const DEFAULT_DRAIN_CLOSE: DrainClose = 'hard-reset';

export interface DrainState {
  readonly kind: DrainKind;
  /** Why, for logs, status, the Event and the Cease message: "SIGTERM", "tsbgp drain", "node cordoned". */
  readonly reason: string;
  readonly since: number;
  readonly until: number;
}

export interface DrainStatusJson {
  readonly kind: DrainKind;
  readonly reason: string;
  readonly since: string;
  /** Seconds until routers are taken to have moved traffic away (0 once passed). */
  readonly remainingSeconds: number;
  /** `stop`: the agent closes its sessions and exits then; `hold`: it keeps them up, marked. */
  readonly then: 'close sessions and exit' | 'hold until cancelled';
}

export function startDrain(kind: DrainKind, reason: string, now: number, seconds: number): DrainState {
  if (!(Number.isFinite(seconds) && seconds >= 0)) throw new RangeError(`drain time must be a non-negative number of seconds, got ${seconds}`);
  return { kind, reason, since: now, until: now + seconds * 1000 };
}

export function remainingSeconds(d: DrainState, now: number): number {
  return Math.max(0, Math.ceil((d.until - now) / 1000));
}

export function drainStatusJson(d: DrainState, now: number): DrainStatusJson {
  return {
    kind: d.kind,
    reason: d.reason,
    since: new Date(d.since).toISOString(),
    remainingSeconds: remainingSeconds(d, now),
    then: d.kind === 'stop' ? 'close sessions and exit' : 'hold until cancelled',
  };
}

/** The RFC 9003 shutdown communication sent with the Cease at the end of a drain (at most 255 bytes of UTF-8). */
export function drainedMessage(d: DrainState, now: number): string {
  const held = Math.round((now - d.since) / 1000);
  const text = `tsbgp: node leaving (${d.reason}); routes drained with GRACEFUL_SHUTDOWN for ${held} s`;
  return truncateUtf8(text, 255);
}

function truncateUtf8(text: string, max: number): string {
  const enc = new TextEncoder();
  if (enc.encode(text).length <= max) return text;
  let out = text;
  while (enc.encode(out).length > max) out = out.slice(0, -1);
  return out;
}

/**
 * What a signal does, given the drain in progress (pure: the agent carries it out).
 * - `drain`: start a `stop` drain.
 * - `finish`: a `hold` drain becomes a `stop` one with the same end (at once if passed).
 * - `stop-now`: SIGINT, a second SIGTERM, or a drain time of 0.
 */
export function onSignalAction(sig: 'SIGTERM' | 'SIGINT', d: DrainState | undefined, drainSeconds: number): 'drain' | 'finish' | 'stop-now' {
  if (sig === 'SIGINT') return 'stop-now';
  if (d === undefined) return drainSeconds > 0 ? 'drain' : 'stop-now';
  return d.kind === 'hold' ? 'finish' : 'stop-now';
}
