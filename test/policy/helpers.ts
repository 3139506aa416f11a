import { Address, Prefix } from '../../src/net/index.js';
import type { PathAttributes } from '../../src/wire/types.js';
import type { PeerRef, PolicyContext, PolicyRoute, RouteSource } from '../../src/policy/types.js';

export const ebgpPeer: PeerRef = { address: Address.parse('192.0.2.1'), asn: 65001, type: 'ebgp', localAsn: 65000 };
export const ibgpPeer: PeerRef = { address: Address.parse('10.0.0.2'), asn: 65000, type: 'ibgp', localAsn: 65000 };
export const learned: RouteSource = { kind: 'peer', address: Address.parse('192.0.2.9'), asn: 65009, type: 'ebgp' };
export const local: RouteSource = { kind: 'local' };

export function ctx(peer: PeerRef, direction: 'import' | 'export'): PolicyContext {
  return { peer, direction };
}

export function route(prefix: string, attrs: PathAttributes = {}, source: RouteSource = learned): PolicyRoute {
  return { prefix: Prefix.parse(prefix), attrs, source };
}

/** A deep, frozen copy, so any write by the engine throws. */
export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as object)) deepFreeze(v);
  }
  return o;
}
