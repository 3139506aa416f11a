/**
 * The shapes the RIB consumes from neighbouring layers: the policy route,
 * context and result (the one definition; src/policy/types.ts re-exports
 * them), and the packer of `src/wire/packer.ts`, injected so tests can
 * count messages.
 */
import type { Address, Prefix } from '../net/index.js';
import type { CodecContext, PackArena, PathAttributes } from '../wire/index.js';

export type PeerType = 'ebgp' | 'ibgp';

// The route and context a policy sees: defined once here, the lower of the two
// layers; the policy engine (src/policy/types.ts) re-exports them.

/** Where a route came from. */
export type RouteSource =
  { readonly kind: 'local' } | { readonly kind: 'peer'; readonly address: Address; readonly asn: number; readonly type: PeerType; readonly routerId?: string };

/** What a policy sees of one route. Policies never mutate it. */
export interface PolicyRoute {
  readonly prefix: Prefix;
  readonly attrs: PathAttributes;
  readonly source: RouteSource;
  /**
   * The interface the route goes out of, when the route carries one: a
   * route the agent originates from the kernel's table (its device), a
   * route learned over BGP whose next hop is on the network of its
   * session's interface (src/rib/path.ts `pathIface`); absent for the node's
   * own blackholes and statics, as in Calico's BIRD.
   */
  readonly iface?: string;
}

/** The neighbour a policy is applied for (the sender on import, the receiver on export). */
export interface PeerRef {
  readonly address: Address;
  readonly asn: number;
  readonly type: PeerType;
  readonly localAsn: number;
  /** Our address on this session, used by `nextHop: 'self'` when known. */
  readonly localAddress?: Address;
}

export type Direction = 'import' | 'export';

export interface PolicyContext {
  readonly peer: PeerRef;
  readonly direction: Direction;
}

export type Verdict = 'accept' | 'reject';

export interface PolicyResult {
  readonly verdict: Verdict;
  /** The attributes to use when accepted; the input object when unchanged (saves re-interning). */
  readonly attrs: PathAttributes;
  /**
   * True when a statement's accept or reject decided, absent when the chain's
   * default did. On export, a route a statement accepted leaves the filter
   * there (BIRD's `accept`): it gets no late communities (Path.late).
   */
  readonly decided?: true;
}

export type PolicyEvaluator = (route: PolicyRoute, ctx: PolicyContext) => PolicyResult;
export type ImportPolicy = PolicyEvaluator;
export type ExportPolicy = PolicyEvaluator;

export const acceptAll: PolicyEvaluator = (route) => ({ verdict: 'accept', attrs: route.attrs });

export interface PackOptions {
  readonly nextHopV6?: readonly Address[];
  readonly pathIds?: readonly number[];
  /** One per batch: its messages written back to back in shared buffers (src/wire/packer.ts). */
  readonly arena?: PackArena;
}

/** The UPDATE packer (src/wire/packer.ts): whole messages, header included. */
export interface Packer {
  packUpdates(attrs: PathAttributes, prefixes: readonly Prefix[], ctx: CodecContext, opts?: PackOptions): Uint8Array[];
  packWithdrawals(prefixes: readonly Prefix[], ctx: CodecContext, opts?: { pathIds?: readonly number[]; arena?: PackArena }): Uint8Array[];
}
