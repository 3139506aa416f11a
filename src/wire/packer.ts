// Signatures fixed for the RIB; bodies come with the UPDATE codec (issue 2).
import type { Prefix } from '../net/prefix.js';
import type { CodecContext } from './context.js';
import type { PathAttributes } from './types.js';

/**
 * The fewest whole UPDATE messages (header included) announcing `prefixes`
 * (IPv4 and/or IPv6; IPv6 in MP_REACH_NLRI) with `attrs`, each within the
 * context's size limit. `attrs.mpReach`/`mpUnreach` are ignored: the packer
 * builds them. `nextHopV6` gives the IPv6 next hop(s) for MP_REACH.
 */
export function packUpdates(
  _attrs: PathAttributes,
  _prefixes: readonly Prefix[],
  _ctx: CodecContext,
  _opts?: { nextHopV6?: readonly import('../net/address.js').Address[]; pathIds?: readonly number[] },
): Uint8Array[] {
  throw new Error('packUpdates not implemented yet');
}

/** The fewest whole UPDATE messages withdrawing `prefixes` (IPv6 in MP_UNREACH_NLRI). */
export function packWithdrawals(_prefixes: readonly Prefix[], _ctx: CodecContext, _opts?: { pathIds?: readonly number[] }): Uint8Array[] {
  throw new Error('packWithdrawals not implemented yet');
}
