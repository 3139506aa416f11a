import { CeaseSubcode, ErrorCode, type AfiSafi, type NotificationMessage } from '../wire/index.js';
import type { Negotiated } from './negotiate.js';
import { sameFamily } from './negotiate.js';
import type { DownReason, PeerTimerName } from './types.js';

/** What graceful restart asks of the RIB and the peer-level timers. */
export type GrAction =
  /** Keep the peer's routes of these families but mark them stale. */
  | { readonly type: 'markStale'; readonly families: readonly AfiSafi[] }
  /**
   * RFC 9494: the stale routes of these families become long-lived stale:
   * they get LLGR_STALE (least preferred, sent only to LLGR peers), and those
   * carrying NO_LLGR go.
   */
  | { readonly type: 'longLivedStale'; readonly families: readonly AfiSafi[] }
  /** Drop the peer's routes of these families that are still stale. */
  | { readonly type: 'purgeStale'; readonly families: readonly AfiSafi[] }
  /** Plain session loss: drop all of the peer's routes. */
  | { readonly type: 'flushRoutes' }
  | { readonly type: 'startPeerTimer'; readonly timer: PeerTimerName; readonly seconds: number }
  | { readonly type: 'stopPeerTimer'; readonly timer: PeerTimerName };

/** A family kept long-lived stale (RFC 9494) until `until` (ms). */
export interface LongLivedFamily {
  readonly afi: number;
  readonly safi: number;
  readonly until: number;
}

/**
 * RFC 4724 receiving-speaker state for one peer. `waitingRestart`: session
 * lost, routes stale; the Restart timer runs for the families in `stale` but
 * not in `longLived`. `waitingEor`: back up, waiting for End-of-RIB per
 * family under the StalePath timer.
 *
 * RFC 9494 adds, while `waitingRestart`: `longLived`, families whose routes
 * are long-lived stale, each until its deadline (one LongLivedStale timer
 * armed at the nearest); `pendingLongLived`, families that go long-lived
 * (for their stale time, seconds) when the Restart timer runs out instead of
 * being purged. Both are absent when empty.
 */
export interface GrState {
  readonly phase: 'none' | 'waitingRestart' | 'waitingEor';
  readonly stale: readonly AfiSafi[];
  readonly longLived?: readonly LongLivedFamily[];
  readonly pendingLongLived?: readonly { readonly afi: number; readonly safi: number; readonly staleTime: number }[];
}

export const GR_NONE: GrState = Object.freeze({ phase: 'none', stale: [] });

export interface GrStep {
  readonly gr: GrState;
  readonly actions: readonly GrAction[];
}

const without = <T extends AfiSafi>(list: readonly T[], drop: readonly AfiSafi[]): T[] => list.filter((f) => !drop.some((d) => sameFamily(d, f)));
const within = <T extends AfiSafi>(list: readonly T[], keep: readonly AfiSafi[]): T[] => list.filter((f) => keep.some((d) => sameFamily(d, f)));
const family = (f: AfiSafi): AfiSafi => ({ afi: f.afi, safi: f.safi });

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
  if (!gr) return false;
  const shortLived = gr.restartTime > 0 && gr.families.length > 0;
  // RFC 9494 §4.2: long-lived families are kept even with a restart time of 0.
  const longLived = n!.longLived?.families.some((f) => f.staleTime > 0) ?? false;
  if (!shortLived && !longLived) return false;
  if (reason.kind === 'tcpFailed' || reason.kind === 'holdTimerExpired' || reason.kind === 'collision') return true;
  if (!n!.gracefulNotification) return false;
  if (reason.kind === 'sendHoldTimerExpired') return true;
  if (reason.kind === 'notificationReceived' || reason.kind === 'notificationSent') return !isHardReset(reason.code, reason.subcode);
  return false;
}

export function grSessionDown(gr: GrState, n: Negotiated | undefined, reason: DownReason, now = 0): GrStep {
  const actions: GrAction[] = [];
  // Routes still stale from an earlier restart do not survive a second one.
  if (gr.stale.length > 0) actions.push({ type: 'purgeStale', families: gr.stale });
  if (gr.phase === 'waitingEor') actions.push({ type: 'stopPeerTimer', timer: 'StalePath' });
  if (!retainsRoutes(n, reason)) {
    actions.push({ type: 'flushRoutes' });
    return { gr: GR_NONE, actions };
  }
  const peer = n!.gracefulRestart!;
  const shortLived = peer.restartTime > 0 ? peer.families.map(family) : [];
  const longLived = (n!.longLived?.families ?? []).filter((f) => f.staleTime > 0);
  const families = [...shortLived, ...without(longLived, shortLived).map(family)];
  actions.push({ type: 'markStale', families });
  if (shortLived.length > 0) actions.push({ type: 'startPeerTimer', timer: 'Restart', seconds: peer.restartTime });
  const pending = within(longLived, shortLived).map((f) => ({ ...family(f), staleTime: f.staleTime }));
  const state: GrState = { phase: 'waitingRestart', stale: families, ...(pending.length > 0 ? { pendingLongLived: pending } : {}) };
  // No restart time for these: long-lived stale at once (RFC 9494 §4.2).
  const direct = without(longLived, shortLived);
  return { gr: direct.length > 0 ? enterLongLived(state, direct, now, actions) : state, actions };
}

/** Moves `families` (stale already) to long-lived stale and arms the LongLivedStale timer at the nearest deadline. */
function enterLongLived(gr: GrState, families: readonly { afi: number; safi: number; staleTime: number }[], now: number, actions: GrAction[]): GrState {
  actions.push({ type: 'longLivedStale', families: families.map(family) });
  const longLived = [...(gr.longLived ?? []), ...families.map((f) => ({ ...family(f), until: now + f.staleTime * 1000 }))];
  actions.push({ type: 'startPeerTimer', timer: 'LongLivedStale', seconds: (Math.min(...longLived.map((f) => f.until)) - now) / 1000 });
  const pending = without(gr.pendingLongLived ?? [], families);
  const { pendingLongLived: _, ...rest } = gr;
  return { ...rest, longLived, ...(pending.length > 0 ? { pendingLongLived: pending } : {}) };
}

/** The peer is back: families it no longer covers, or without the F bit, are purged now. */
export function grSessionUp(gr: GrState, n: Negotiated, stalePathTime: number): GrStep {
  if (gr.phase === 'none') return { gr, actions: [] };
  const actions: GrAction[] = [];
  const longLived = gr.longLived ?? [];
  if (gr.phase === 'waitingRestart' && without(gr.stale, longLived).length > 0) actions.push({ type: 'stopPeerTimer', timer: 'Restart' });
  if (longLived.length > 0) actions.push({ type: 'stopPeerTimer', timer: 'LongLivedStale' });
  // The F bit of the capability that kept the family: long-lived ones read the new LLGR capability (RFC 9494 §4.2).
  const kept = [
    ...without(
      (n.gracefulRestart?.families ?? []).filter((f) => f.forwardingPreserved),
      longLived,
    ),
    ...within(
      (n.longLived?.families ?? []).filter((f) => f.forwardingPreserved),
      longLived,
    ),
  ];
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

/**
 * A peer timer ran out. Restart: families with a long-lived stale time go
 * long-lived stale (RFC 9494), the rest are purged. StalePath: whatever is
 * still stale goes. LongLivedStale: the families whose deadline has come go.
 */
export function grTimerExpired(gr: GrState, timer: PeerTimerName, now = 0): GrStep {
  const longLived = gr.longLived ?? [];
  if (gr.phase === 'waitingEor' && timer === 'StalePath') return { gr: GR_NONE, actions: [{ type: 'purgeStale', families: gr.stale }] };
  if (gr.phase !== 'waitingRestart') return { gr, actions: [] };
  const actions: GrAction[] = [];
  let next: GrState;
  if (timer === 'Restart') {
    const restarting = without(gr.stale, longLived);
    if (restarting.length === 0) return { gr, actions: [] };
    const pending = gr.pendingLongLived ?? [];
    const drop = without(restarting, pending);
    if (drop.length > 0) actions.push({ type: 'purgeStale', families: drop });
    next = { ...gr, stale: without(gr.stale, drop) };
    if (pending.length > 0) next = enterLongLived(next, pending, now, actions);
  } else if (timer === 'LongLivedStale') {
    const due = longLived.filter((f) => f.until <= now);
    if (due.length === 0) return { gr, actions: [] };
    actions.push({ type: 'purgeStale', families: due.map(family) });
    const left = without(longLived, due);
    const { longLived: _, ...rest } = gr;
    next = { ...rest, stale: without(gr.stale, due), ...(left.length > 0 ? { longLived: left } : {}) };
    if (left.length > 0) actions.push({ type: 'startPeerTimer', timer: 'LongLivedStale', seconds: (Math.min(...left.map((f) => f.until)) - now) / 1000 });
  } else return { gr, actions: [] };
  return { gr: next.stale.length > 0 ? next : GR_NONE, actions };
}
