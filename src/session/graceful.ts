import type { AfiSafi } from '../wire/index.js';
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

/** A session loss keeps routes only when GR was negotiated and the loss was not a NOTIFICATION or an operator stop. */
export function retainsRoutes(n: Negotiated | undefined, reason: DownReason): boolean {
  const gr = n?.gracefulRestart;
  if (!gr || gr.restartTime === 0 || gr.families.length === 0) return false;
  return reason.kind === 'tcpFailed' || reason.kind === 'holdTimerExpired' || reason.kind === 'collision';
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
