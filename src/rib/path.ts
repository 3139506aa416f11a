/** A candidate path in the Loc-RIB: where it came from and its (post-policy) attributes. */
import type { Address, Prefix } from '../net/index.js';
import type { PathAttributes } from '../wire/index.js';
import type { AttrSet } from './attr-store.js';
import type { PeerType, PolicyRoute, RouteSource } from './ports.js';
import { prefixFromKey, type PrefixKey } from './prefix-key.js';

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
  /** The interface the session runs over and its connected network, when the speaker found them (set at Established). */
  link?: SessionLink;
  /**
   * The interface the kernel's table sends a next hop off the session's network out of (BIRD's
   * `gateway recursive`), when the speaker knows it (set at Established).
   */
  resolveIface?: (nextHop: Address) => string | undefined;
}

/** The interface a session runs over and the network connected there (from the session's local address). */
export interface SessionLink {
  readonly iface: string;
  readonly network: Prefix;
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
   * The interface the route goes out of, when the speaker was told it (a
   * kernel route the agent originates): not a BGP attribute, never sent;
   * the export policy sees it as `PolicyRoute.iface`.
   */
  readonly iface?: string;
  /**
   * A local route only: `attrs` with communities added after the export
   * policy (interned in the same store). The export policy sees `attrs`; what
   * it lets through gets these communities too (export.ts `withLate`), as
   * Calico's BIRD adds prefixAdvertisements communities after its BGPFilter
   * functions. Absent when there are none.
   */
  readonly late?: AttrSet;
}

/**
 * The interface a path goes out of (`PolicyRoute.iface`): the one it was
 * originated with; for a path learned over BGP, the session's interface when
 * a next hop lies on the network connected there (BIRD's `ifname` for a
 * `gateway direct` next hop, and what `gateway recursive` resolves to for a
 * next hop on that network); for a next hop elsewhere, the interface the
 * kernel's table sends it out of when the speaker knows it (`resolveIface`:
 * with kernel learning, the longest learned route holding it, as BIRD's
 * `gateway recursive` resolves it through its table), else none.
 */
export function pathIface(p: Path): string | undefined {
  if (p.iface !== undefined) return p.iface;
  return p.source.kind === 'peer' ? linkIface(p.source, p.attrs.attrs) : undefined;
}

/** The session's interface when one of the route's next hops is on its connected network; else the one `resolveIface` finds for the first next hop. */
export function linkIface(s: PeerSource, a: PathAttributes): string | undefined {
  const l = s.link;
  if (l !== undefined) {
    if (a.nextHop !== undefined && l.network.contains(a.nextHop)) return l.iface;
    for (const h of a.mpReach?.nextHops ?? []) if (l.network.contains(h)) return l.iface;
  }
  const resolve = s.resolveIface;
  if (resolve === undefined) return undefined;
  const first = a.mpReach?.nextHops[0] ?? a.nextHop;
  return first !== undefined && !first.isLinkLocal ? resolve(first) : undefined;
}

/** The route a policy sees for `path` at `prefix`, its interface included when it has one. */
export function policyRoute(prefix: Prefix, path: Path, attrs: PathAttributes = path.attrs.attrs): PolicyRoute {
  const iface = pathIface(path);
  return iface !== undefined ? { prefix, attrs, source: policySource(path.source), iface } : { prefix, attrs, source: policySource(path.source) };
}

/**
 * The route a policy sees at a table key: its Prefix built from the key only
 * when the policy reads it (a prefix-set or family condition, a trace), so a
 * policy matching on attributes alone costs no Prefix per route. Import
 * (Rib) and export (UpdateGroup) both evaluate routes this way.
 */
export class KeyedRoute implements PolicyRoute {
  #prefix: Prefix | undefined = undefined;

  constructor(
    private readonly key: PrefixKey,
    readonly attrs: PathAttributes,
    readonly source: RouteSource,
    readonly iface: string | undefined,
  ) {}

  get prefix(): Prefix {
    return (this.#prefix ??= prefixFromKey(this.key));
  }
}

/** `policyRoute` for a path at a table key, its Prefix made only if read (KeyedRoute). */
export function keyedPolicyRoute(key: PrefixKey, path: Path): PolicyRoute {
  return new KeyedRoute(key, path.attrs.attrs, policySource(path.source), pathIface(path));
}

/** The RouteSource shape the policy engine expects. */
export function policySource(s: PathSource): RouteSource {
  if (s.kind === 'local') return s;
  // One per peer source and router ID: a policy sees it for every route it evaluates (export: every route sent).
  const kept = policySources.get(s);
  if (kept !== undefined && kept.routerId === s.routerId) return kept;
  const r: RouteSource = Object.freeze(
    s.routerId !== undefined
      ? { kind: 'peer', address: s.address, asn: s.asn, type: s.type, routerId: s.routerId }
      : { kind: 'peer', address: s.address, asn: s.asn, type: s.type },
  );
  policySources.set(s, r);
  return r;
}

/** See `policySource`: the policy's view of a peer source, remade when the router ID changes (the rest of a PeerSource is fixed). */
const policySources = new WeakMap<PeerSource, RouteSource & { readonly kind: 'peer' }>();

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
