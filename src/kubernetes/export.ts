import type { Prefix } from '../net/index.js';
import type { Plan } from './plan-types.js';

export interface ExportVerdict {
  readonly accept: boolean;
  readonly reason: string;
}

/**
 * Calico's built-in export policy (reference §5) for one prefix, decided
 * from a plan alone: what a node passes on to global and node peers after
 * their BGPFilters, and to mesh peers directly. Used for routes the node did
 * not plan itself (e.g. a MetalLB speaker injecting /32s over a local session).
 */
export function builtinExport(plan: Plan, prefix: Prefix): ExportVerdict {
  const { pools, serviceRanges, reflected } = plan.exportAllowList;
  const hidden = pools.find((p) => p.disableBGPExport && p.cidr.contains(prefix));
  if (hidden) return { accept: false, reason: `inside IPPool ${hidden.name} (${hidden.cidr}) with disableBGPExport` };
  const own = plan.routes.find((r) => r.prefix.equals(prefix));
  if (own) return { accept: true, reason: 'originated by this node' };
  const block = plan.routes.find((r) => r.reasons.some((x) => x.kind === 'BlockAffinity' || x.kind === 'Node') && r.prefix.contains(prefix));
  if (block) return { accept: false, reason: `more specific than the local block ${block.prefix}, which is exported instead` };
  const range = serviceRanges.find((r) => r.prefix.contains(prefix));
  if (range) return { accept: true, reason: `inside ${range.field} ${range.prefix}` };
  const refl = reflected.find((r) => r.prefix.contains(prefix));
  if (refl) return { accept: true, reason: `route reflector: inside ${refl.field} ${refl.prefix}` };
  const pool = pools.find((p) => p.cidr.contains(prefix));
  if (pool) return { accept: true, reason: `inside IPPool ${pool.name} (${pool.cidr})${pool.disabled ? ', a disabled pool used as an export allow-list' : ''}` };
  return { accept: false, reason: 'not inside any IP pool or service range' };
}
