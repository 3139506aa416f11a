import type { Prefix } from '../net/index.js';
import type { Plan, PlannedRoute } from './plan-types.js';

export interface ExportVerdict {
  readonly accept: boolean;
  readonly reason: string;
}

/** The plan's route for exactly `prefix` (binary search: a plan's routes are in prefix order). */
export function plannedRoute(plan: Plan, prefix: Prefix): PlannedRoute | undefined {
  const rs = plan.routes;
  let lo = 0;
  let hi = rs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = rs[mid].prefix.compare(prefix);
    if (c === 0) return rs[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}

/** The plan's local pod blocks (routes a BlockAffinity or the Node's podCIDRs want), once per plan. */
const blocksOf = new WeakMap<Plan, readonly PlannedRoute[]>();
function localBlocks(plan: Plan): readonly PlannedRoute[] {
  let b = blocksOf.get(plan);
  if (!b) blocksOf.set(plan, (b = plan.routes.filter((r) => r.reasons.some((x) => x.kind === 'BlockAffinity' || x.kind === 'Node'))));
  return b;
}

/**
 * Calico's built-in export policy (reference §5) for one prefix, decided
 * from a plan alone: what a node passes on to global and node peers after
 * their BGPFilters, and to mesh peers directly. Used for routes the node did
 * not plan itself (e.g. a MetalLB speaker injecting /32s over a local session).
 * Costs a binary search plus a scan of the few pools, ranges and blocks, so
 * the agent can ask it for every route a local speaker sends.
 */
export function builtinExport(plan: Plan, prefix: Prefix): ExportVerdict {
  const { pools, serviceRanges, reflected } = plan.exportAllowList;
  const hidden = pools.find((p) => p.disableBGPExport && p.cidr.contains(prefix));
  if (hidden) return { accept: false, reason: `inside IPPool ${hidden.name} (${hidden.cidr}) with disableBGPExport` };
  if (plannedRoute(plan, prefix)) return { accept: true, reason: 'originated by this node' };
  const block = localBlocks(plan).find((r) => r.prefix.contains(prefix));
  if (block) return { accept: false, reason: `more specific than the local block ${block.prefix}, which is exported instead` };
  const range = serviceRanges.find((r) => r.prefix.contains(prefix));
  if (range) return { accept: true, reason: `inside ${range.field} ${range.prefix}` };
  const refl = reflected.find((r) => r.prefix.contains(prefix));
  if (refl) return { accept: true, reason: `route reflector: inside ${refl.field} ${refl.prefix}` };
  const pool = pools.find((p) => p.cidr.contains(prefix));
  if (pool) return { accept: true, reason: `inside IPPool ${pool.name} (${pool.cidr})${pool.disabled ? ', a disabled pool used as an export allow-list' : ''}` };
  return { accept: false, reason: 'not inside any IP pool or service range' };
}
