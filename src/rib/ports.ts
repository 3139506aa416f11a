/**
 * The shapes the RIB consumes from neighbouring layers. The policy types
 * mirror what the policy engine exports; the packer type mirrors
 * `src/wire/packer.ts`, injected so tests can count messages.
 */
import type { Address } from '../net/address.js';
import type { Prefix } from '../net/prefix.js';
import type { CodecContext } from '../wire/context.js';
import type { PathAttributes } from '../wire/types.js';

export type PeerType = 'ebgp' | 'ibgp';

export type RouteSource =
  | { readonly kind: 'local' }
  | { readonly kind: 'peer'; readonly address: Address; readonly asn: number; readonly type: PeerType; readonly routerId?: string };

export interface PolicyRoute {
  readonly prefix: Prefix;
  readonly attrs: PathAttributes;
  readonly source: RouteSource;
}

export interface PeerRef {
  readonly address: Address;
  readonly asn: number;
  readonly type: PeerType;
  readonly localAsn: number;
}

export interface PolicyContext {
  readonly peer: PeerRef;
  readonly direction: 'import' | 'export';
}

export interface PolicyResult {
  readonly verdict: 'accept' | 'reject';
  /** The attributes to use when accepted; return the input object when unchanged (saves re-interning). */
  readonly attrs: PathAttributes;
}

export type PolicyEvaluator = (route: PolicyRoute, ctx: PolicyContext) => PolicyResult;
export type ImportPolicy = PolicyEvaluator;
export type ExportPolicy = PolicyEvaluator;

export const acceptAll: PolicyEvaluator = (route) => ({ verdict: 'accept', attrs: route.attrs });

export interface PackOptions {
  readonly nextHopV6?: readonly Address[];
  readonly pathIds?: readonly number[];
}

/** The UPDATE packer (src/wire/packer.ts): whole messages, header included. */
export interface Packer {
  packUpdates(attrs: PathAttributes, prefixes: readonly Prefix[], ctx: CodecContext, opts?: PackOptions): Uint8Array[];
  packWithdrawals(prefixes: readonly Prefix[], ctx: CodecContext, opts?: { pathIds?: readonly number[] }): Uint8Array[];
}
