import { CeaseSubcode, ErrorCode, type AfiSafi, type NotificationMessage } from '../wire/index.js';
import type { Negotiated } from './negotiate.js';
import { sameFamily } from './negotiate.js';
import type { DownReason, PeerTimerName } from './types.js';

/** What graceful restart asks of the RIB and the peer-level timers. */
export type GrAction =
  /** Keep the peer's routes of these families but mark them stale. */
  | { readonly type: 'markStale'; readonly families: readonly AfiSafi[] }
  /** Drop the peer's routes of these families that are still stale. */
  | { readonly type: 'purgeStale'; readonly families: readonly AfiSafi[] }
  /** Plain session loss: drop all of the peer's routes. */
  | { readonly type: 'flushRoutes' }
  | { readonly type: 'startPeerTimer'; readonly timer: PeerTimerName; readonly seconds: number }
  | { readonly type: 'stopPeerTimer'; readonly timer: PeerTimerName };

/**
 * RFC 4724 receiving-speaker state for one peer. `waitingRestart`: session
 * lost, routes stale, Restart timer running. `waitingEor`: back up, waiting
 * for End-of-RIB per family under the StalePath timer.
 */
export interface GrState {
  readonly phase: 'none' | 'waitingRestart' | 'waitingEor';
  readonly stale: readonly AfiSafi[];
}

export const GR_NONE: GrState = Object.freeze({ phase: 'none', stale: [] });

export interface GrStep {
  readonly gr: GrState;
  readonly actions: readonly GrAction[];
}

const without = (list: readonly AfiSafi[], drop: readonly AfiSafi[]) => list.filter((f) => !drop.some((d) => sameFamily(d, f)));

/**
 * RFC 8538 §5: the Cease subcodes that end a session for good, sent as Hard
 * Reset when both sides set the N bit: a prefix limit, an administrative
 * shutdown, a de-configured peer. The others (Administrative Reset among
 * them: a restart, `stop({ graceful })`) go as they are, and the peer keeps
 * our routes as stale.
 */
const HARD_CEASES: readonly number[] = [
  CeaseSubcode.MAXIMUM_PREFIXES,
  CeaseSubcode.ADMINISTRATIVE_SHUTDOWN,
  CeaseSubcode.PEER_DECONFIGURED,
  // BFD found the forwarding path dead (RFC 5882): keeping its routes as stale would defeat BFD.
  CeaseSubcode.BFD_DOWN,
];

export const isHardReset = (code: number, subcode: number): boolean => code === ErrorCode.CEASE && subcode === CeaseSubcode.HARD_RESET;

/** The NOTIFICATION to send on a session that negotiated the N bit: wrapped in Cease / Hard Reset (RFC 8538 §3) when it must flush. */
export function withHardReset(m: NotificationMessage): NotificationMessage {
  if (m.code !== ErrorCode.CEASE || !HARD_CEASES.includes(m.subcode)) return m;
  const data = new Uint8Array(2 + m.data.length);
  data[0] = m.code;
  data[1] = m.subcode;
  data.set(m.data, 2);
  return { type: 'notification', code: ErrorCode.CEASE, subcode: CeaseSubcode.HARD_RESET, data };
}

/** The NOTIFICATION a Hard Reset carries (RFC 8538 §3), or undefined when `m` is none or too short. */
export function hardResetInner(m: NotificationMessage): NotificationMessage | undefined {
  if (!isHardReset(m.code, m.subcode) || m.data.length < 2) return undefined;
  return { type: 'notification', code: m.data[0], subcode: m.data[1], data: m.data.subarray(2) };
}

/**
 * A session loss keeps routes only when GR was negotiated and the loss was
 * not an operator stop; a NOTIFICATION keeps them only when both sides set
 * the N bit (RFC 8538) and it was not a Hard Reset.
 */
export function retainsRoutes(n: Negotiated | undefined, reason: DownReason): boolean {
  const gr = n?.gracefulRestart;
  if (!gr || gr.restartTime === 0 || gr.families.length === 0) return false;
  if (reason.kind === 'tcpFailed' || reason.kind === 'holdTimerExpired' || reason.kind === 'collision') return true;
  if (!n!.gracefulNotification) return false;
  if (reason.kind === 'sendHoldTimerExpired') return true;
  if (reason.kind === 'notificationReceived' || reason.kind === 'notificationSent') return !isHardReset(reason.code, reason.subcode);
  return false;
}

export function grSessionDown(gr: GrState, n: Negotiated | undefined, reason: DownReason): GrStep {
  const actions: GrAction[] = [];
  // Routes still stale from an earlier restart do not survive a second one.
  if (gr.stale.length > 0) actions.push({ type: 'purgeStale', families: gr.stale });
  if (gr.phase === 'waitingEor') actions.push({ type: 'stopPeerTimer', timer: 'StalePath' });
  if (!retainsRoutes(n, reason)) {
    actions.push({ type: 'flushRoutes' });
    return { gr: GR_NONE, actions };
  }
  const peer = n!.gracefulRestart!;
  const families = peer.families.map((f) => ({ afi: f.afi, safi: f.safi }));
  actions.push({ type: 'markStale', families }, { type: 'startPeerTimer', timer: 'Restart', seconds: peer.restartTime });
  return { gr: { phase: 'waitingRestart', stale: families }, actions };
}

/** The peer is back: families it no longer covers, or without the F bit, are purged now. */
export function grSessionUp(gr: GrState, n: Negotiated, stalePathTime: number): GrStep {
  if (gr.phase === 'none') return { gr, actions: [] };
  const actions: GrAction[] = [];
  if (gr.phase === 'waitingRestart') actions.push({ type: 'stopPeerTimer', timer: 'Restart' });
  const kept = (n.gracefulRestart?.families ?? []).filter((f) => f.forwardingPreserved);
  const keep = gr.stale.filter((f) => kept.some((k) => sameFamily(k, f)));
  const drop = without(gr.stale, keep);
  if (drop.length > 0) actions.push({ type: 'purgeStale', families: drop });
  if (keep.length === 0) return { gr: GR_NONE, actions };
  actions.push({ type: 'startPeerTimer', timer: 'StalePath', seconds: stalePathTime });
  return { gr: { phase: 'waitingEor', stale: keep }, actions };
}

export function grEndOfRib(gr: GrState, family: AfiSafi): GrStep {
  if (gr.phase !== 'waitingEor' || !gr.stale.some((f) => sameFamily(f, family))) return { gr, actions: [] };
  const stale = without(gr.stale, [family]);
  const actions: GrAction[] = [{ type: 'purgeStale', families: [family] }];
  if (stale.length > 0) return { gr: { phase: 'waitingEor', stale }, actions };
  actions.push({ type: 'stopPeerTimer', timer: 'StalePath' });
  return { gr: GR_NONE, actions };
}

/** Restart or StalePath timer ran out: whatever is still stale goes. */
export function grTimerExpired(gr: GrState, timer: PeerTimerName): GrStep {
  const expected = gr.phase === 'waitingRestart' ? 'Restart' : gr.phase === 'waitingEor' ? 'StalePath' : undefined;
  if (timer !== expected) return { gr, actions: [] };
  return { gr: GR_NONE, actions: [{ type: 'purgeStale', families: gr.stale }] };
}
