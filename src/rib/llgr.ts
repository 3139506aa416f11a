/**
 * RFC 9494 long-lived graceful restart, on the attributes of one route. Pure.
 *
 * When a peer's graceful-restart time runs out (or it had none) and it
 * advertised a long-lived stale time, its routes stay as long-lived stale:
 * they carry LLGR_STALE (65535:6), lose to any route without it in best-path
 * selection (§4.3), and are sent only to peers that advertised the LLGR
 * capability (§4.5). Routes carrying NO_LLGR (65535:7) are dropped instead
 * of being kept.
 */
import { WellKnownCommunity, type PathAttributes } from '../wire/index.js';

export const LLGR_STALE = WellKnownCommunity.LLGR_STALE;
export const NO_LLGR = WellKnownCommunity.NO_LLGR;

export function carriesLlgrStale(a: PathAttributes): boolean {
  return a.communities !== undefined && a.communities.includes(LLGR_STALE);
}

export function carriesNoLlgr(a: PathAttributes): boolean {
  return a.communities !== undefined && a.communities.includes(NO_LLGR);
}

/** `a` with LLGR_STALE added (itself when it already carries it). */
export function withLlgrStale(a: PathAttributes): PathAttributes {
  if (carriesLlgrStale(a)) return a;
  return { ...a, communities: [...(a.communities ?? []), LLGR_STALE] };
}
