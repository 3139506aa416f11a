/**
 * RFC 8326 graceful shutdown, on the attributes of one route. Pure.
 *
 * Sending: a speaker about to go away marks every route it sends with the
 * GRACEFUL_SHUTDOWN community (65535:0), so receivers that honour it (§4)
 * move traffic to other paths while the session still stands; toward iBGP
 * peers it also sets LOCAL_PREF 0 itself (§5.1), which works even where the
 * receiver has no policy for the community. Receiving: a route carrying the
 * community gets LOCAL_PREF 0, the lowest preference.
 */
import { WellKnownCommunity, type PathAttributes } from '../wire/index.js';
import type { PeerType } from './ports.js';

export const GRACEFUL_SHUTDOWN = WellKnownCommunity.GRACEFUL_SHUTDOWN;

export function carriesGracefulShutdown(a: PathAttributes): boolean {
  return a.communities !== undefined && a.communities.includes(GRACEFUL_SHUTDOWN);
}

/** The attributes to send while draining toward a peer of `type`; `a` itself when nothing changes. */
export function withGracefulShutdown(a: PathAttributes, type: PeerType): PathAttributes {
  const tagged = carriesGracefulShutdown(a);
  const lowered = type === 'ebgp' || a.localPref === 0;
  if (tagged && lowered) return a;
  const out: { -readonly [K in keyof PathAttributes]: PathAttributes[K] } = { ...a };
  if (!tagged) out.communities = [...(a.communities ?? []), GRACEFUL_SHUTDOWN];
  if (!lowered) out.localPref = 0;
  return out;
}
