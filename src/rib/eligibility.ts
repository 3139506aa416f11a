/** Routes refused at import whatever the policy says (RFC 4271 §9.1.2 loop detection, RFC 4456 §8). */
import type { Address } from '../net/index.js';
import type { PathAttributes } from '../wire/index.js';

export interface EligibilityContext {
  /** Our AS numbers on this session (global and per-peer local AS). */
  readonly ownAsns: readonly number[];
  /** How many times our AS may appear in AS_PATH ("allowas-in"); 0 by default. */
  readonly allowOwnAs: number;
  readonly routerId: Address;
  readonly clusterId?: Address;
}

/** Why a route cannot be used, or undefined when it can. */
export function refusalReason(a: PathAttributes, ctx: EligibilityContext): string | undefined {
  let own = 0;
  for (const seg of a.asPath ?? []) for (const asn of seg.asns) if (ctx.ownAsns.includes(asn)) own++;
  if (own > ctx.allowOwnAs) return `AS loop: own AS appears ${own} time(s) in AS_PATH (allowed ${ctx.allowOwnAs})`;
  if (a.originatorId !== undefined && a.originatorId.equals(ctx.routerId)) return 'ORIGINATOR_ID is our router ID';
  const cid = ctx.clusterId ?? ctx.routerId;
  if (ctx.clusterId !== undefined && a.clusterList?.some((c) => c.equals(cid))) return 'our cluster ID is in CLUSTER_LIST';
  return undefined;
}
