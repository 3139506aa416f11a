import type { Prefix } from '../net/index.js';
import { interfaceMatches } from './kernel.js';
import type { Plan, PlannedRoute } from './plan-types.js';
import type { CommunityValue } from './resources.js';

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
  if (pool)
    return { accept: true, reason: `inside IPPool ${pool.name} (${pool.cidr})${pool.disabled ? ', a disabled pool used as an export allow-list' : ''}` };
  return { accept: false, reason: 'not inside any IP pool or service range' };
}

/**
 * A route another program put into the kernel's table (BIRD's `protocol
 * kernel { learn; }`: Felix's `<ip>/32 dev cali… proto boot metric 1024` to a
 * local workload, say), or a connected network (BIRD's `protocol direct`).
 */
export interface LearnedRoute {
  readonly prefix: Prefix;
  readonly source: 'kernel' | 'direct';
  readonly type: 'unicast' | 'blackhole' | 'unreachable' | 'prohibit' | 'other';
  /** The interface of its (first) next hop. */
  readonly dev?: string;
  /** Its priority in the kernel (0: none given, which Calico takes as the normal route priority). */
  readonly metric: number;
  /** rtm_protocol (3 boot is Felix's default; 2 kernel for a connected network). */
  readonly protocol: number;
}

/** The verdict on a learned route, and when accepted what it is advertised with. */
export interface LearnedVerdict extends ExportVerdict {
  /** Calico v3.32: 2147483647 − the route's metric (the normal route priority when it has none). */
  readonly localPref?: number;
  readonly communities?: readonly CommunityValue[];
}

const BIRD_INT_MAX = 2147483647;

/**
 * Whether this node advertises a route it learned from the kernel, as
 * Calico's calico_export_to_bgp_peers decides it (bird_ipam.cfg.template and
 * confd's bgp_processor.go), from a plan alone. In Calico's order:
 *  1. inside a pool with disableBGPExport: no;
 *  2. through Felix's tunnel devices or the eBPF dataplane's: no (Calico sends
 *     tunnel routes to eBGP peers only; tsbgp advertises to all, so to none);
 *  3. calico_aggr, per block of this node: the block itself yes (a /32 block
 *     while the kernel holds a route to it); beneath it only a route of a
 *     metric below the normal route priority (Felix's elevated priority,
 *     a live migration); else no;
 *  4. inside a service range (Calico's /staticroutes) or, on a route
 *     reflector, an external or LB range: yes;
 *  5. inside any IP pool, disabled ones included: yes — how a pod whose IP
 *     is borrowed from another node's block is reached;
 *  6. else no.
 * Connected networks of `cali*`, `kube-ipvs*` and ignoredInterfaces are not
 * taken at all (Calico's protocol direct); BIRD learns only unicast,
 * blackhole, unreachable and prohibit routes.
 */
export function kernelExport(plan: Plan, r: LearnedRoute): LearnedVerdict {
  const k = plan.kernel;
  if (k === undefined) return { accept: false, reason: 'no kernel plan' };
  const { learn } = k;
  const prefix = r.prefix;
  if (r.type === 'other') return { accept: false, reason: 'not a unicast, blackhole, unreachable or prohibit route' };
  if (r.source === 'direct') {
    const skip = r.dev !== undefined ? learn.directExcluded.find((p) => interfaceMatches(p, r.dev!)) : undefined;
    if (skip !== undefined)
      return {
        accept: false,
        reason: `connected network of ${r.dev}, excluded by "${skip}"${learn.ignoredInterfaces.includes(skip) ? ' (ignoredInterfaces)' : ''}`,
      };
  }
  const { pools, serviceRanges, reflected } = plan.exportAllowList;
  const hidden = pools.find((p) => p.disableBGPExport && p.cidr.contains(prefix));
  if (hidden) return { accept: false, reason: `inside IPPool ${hidden.name} (${hidden.cidr}) with disableBGPExport` };
  if (r.dev !== undefined) {
    const tunnel = learn.rejectInterfaces.find((x) => interfaceMatches(x.pattern, r.dev!));
    if (tunnel) return { accept: false, reason: `through ${r.dev}: ${tunnel.why}` };
  }
  const nrp = prefix.family === 4 ? k.normalRoutePriority.v4 : k.normalRoutePriority.v6;
  // Calico's export filter: krt_metric, else the normal route priority; LOCAL_PREF = 2147483647 − it.
  const metric = r.metric > 0 && r.source === 'kernel' ? Math.min(r.metric, BIRD_INT_MAX) : nrp;
  const yes = (reason: string): LearnedVerdict => ({
    accept: true,
    reason,
    localPref: BIRD_INT_MAX - metric,
    communities: communitiesOf(learn.communities, prefix),
  });
  for (const b of learn.blocks) {
    if (!b.prefix.contains(prefix)) continue;
    if (b.prefix.length === prefix.length)
      return yes(
        b.prefix.length === b.prefix.maxLength
          ? `the ${b.prefix.length === 32 ? '/32' : '/128'} block of ${b.name}: advertised while the kernel holds a route to it`
          : `the block of ${b.name}`,
      );
    if (metric < nrp)
      return yes(`inside the block ${b.prefix} of ${b.name}, with metric ${metric} below the normal route priority ${nrp} (elevated: a live migration)`);
    return { accept: false, reason: `more specific than the local block ${b.prefix}, which is exported instead` };
  }
  const range = serviceRanges.find((x) => x.prefix.contains(prefix));
  if (range) return yes(`inside ${range.field} ${range.prefix}`);
  const refl = reflected.find((x) => x.prefix.contains(prefix));
  if (refl) return yes(`route reflector: inside ${refl.field} ${refl.prefix}`);
  const pool = pools.find((p) => p.cidr.contains(prefix));
  if (pool)
    return yes(
      `inside IPPool ${pool.name} (${pool.cidr}) and outside this node's blocks${pool.disabled ? ' (a disabled pool, used as an export allow-list)' : ''}`,
    );
  return { accept: false, reason: 'not inside any IP pool or service range' };
}

function communitiesOf(
  list: readonly { readonly prefix: Prefix; readonly communities: readonly CommunityValue[] }[],
  prefix: Prefix,
): readonly CommunityValue[] {
  const out: CommunityValue[] = [];
  for (const e of list) if (e.prefix.contains(prefix)) for (const c of e.communities) if (!out.some((x) => x.text === c.text)) out.push(c);
  return out;
}

/** One learned route this node advertises: the route it came from and the verdict. */
export interface KernelExport {
  readonly prefix: Prefix;
  readonly route: LearnedRoute;
  readonly verdict: LearnedVerdict & { readonly accept: true };
}

/**
 * Every learned route to advertise, one per prefix, in prefix order: a
 * kernel route before a connected network, then the lowest metric (the
 * route the kernel itself uses); never a prefix the plan originates itself.
 */
export function kernelExports(plan: Plan, learned: Iterable<LearnedRoute>): KernelExport[] {
  const best = new Map<number | string, LearnedRoute>();
  for (const r of learned) {
    if (plannedRoute(plan, r.prefix)) continue;
    const have = best.get(r.prefix.key);
    if (have === undefined || rank(r) < rank(have)) best.set(r.prefix.key, r);
  }
  const out: KernelExport[] = [];
  for (const r of best.values()) {
    const verdict = kernelExport(plan, r);
    if (verdict.accept) out.push({ prefix: r.prefix, route: r, verdict: verdict as KernelExport['verdict'] });
  }
  return out.sort((a, b) => a.prefix.compare(b.prefix));
}

const rank = (r: LearnedRoute): number => (r.source === 'direct' ? 2 ** 33 : 0) + (r.metric === 0 ? 0 : r.metric);

/** A route learned from the kernel's table, as `tsbgp plan --json` shows it (`kernel.learned`, `redistributed[].kernel`). */
export interface LearnedJson {
  readonly prefix: string;
  /** `kernel`: another program's route in the table (Felix's to a workload); `direct`: a connected network. */
  readonly source: 'kernel' | 'direct';
  readonly protocol: number;
  readonly type: string;
  readonly dev: string | null;
  readonly metric: number;
  readonly exported: boolean;
  readonly why: string;
}

/** One learned route and the verdict on it, as the JSON views show it. */
export function learnedJson(r: LearnedRoute, v: ExportVerdict): LearnedJson {
  return {
    prefix: r.prefix.toString(),
    source: r.source,
    protocol: r.protocol,
    type: r.type,
    dev: r.dev ?? null,
    metric: r.metric,
    exported: v.accept,
    why: v.reason,
  };
}
