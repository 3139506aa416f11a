/** A candidate path in the Loc-RIB: where it came from and its (post-policy) attributes. */
import type { Address } from '../net/index.js';
import type { PathAttributes } from '../wire/index.js';
import type { AttrSet } from './attr-store.js';
import type { PeerType, RouteSource } from './ports.js';

/** The peer a path came from. One object per configured peer, shared by all its paths. */
export interface PeerSource {
  readonly kind: 'peer';
  readonly id: string;
  readonly address: Address;
  readonly asn: number;
  readonly type: PeerType;
  /** Learned from the peer's OPEN; dotted quad. */
  routerId?: string;
  /** routerId as a number, for the tie-break. */
  routerIdNum: number;
  /** Route-reflector client of ours (iBGP). */
  readonly rrClient: boolean;
}

export interface LocalSource {
  readonly kind: 'local';
}

export type PathSource = PeerSource | LocalSource;

export const LOCAL_SOURCE: LocalSource = Object.freeze({ kind: 'local' });

export interface Path {
  readonly source: PathSource;
  readonly attrs: AttrSet;
  /** ADD-PATH identifier as received (0 without ADD-PATH). */
  readonly pathId: number;
  /**
   * A local route only: `attrs` with communities added after the export
   * policy (interned in the same store). The export policy sees `attrs`; what
   * it lets through gets these communities too (export.ts `withLate`), as
   * Calico's BIRD adds prefixAdvertisements communities after its BGPFilter
   * functions. Absent when there are none.
   */
  readonly late?: AttrSet;
}

/** The RouteSource shape the policy engine expects. */
export function policySource(s: PathSource): RouteSource {
  if (s.kind === 'local') return s;
  return s.routerId !== undefined
    ? { kind: 'peer', address: s.address, asn: s.asn, type: s.type, routerId: s.routerId }
    : { kind: 'peer', address: s.address, asn: s.asn, type: s.type };
}

/** AS_PATH length for best path: an AS_SET counts 1, confederation segments 0. */
export function asPathLength(a: PathAttributes): number {
  let n = 0;
  for (const s of a.asPath ?? []) {
    if (s.type === 2) n += s.asns.length;
    else if (s.type === 1) n += 1;
  }
  return n;
}

/** The neighbouring AS: first AS of the first AS_SEQUENCE (0 for a locally originated or empty path). */
export function neighborAs(a: PathAttributes): number {
  for (const s of a.asPath ?? []) {
    if (s.type === 3 || s.type === 4) continue;
    if (s.type === 2 && s.asns.length > 0) return s.asns[0];
    return 0;
  }
  return 0;
}
