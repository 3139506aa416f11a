/**
 * Kernel programming rules for one node (pure): Calico's
 * `calico_kernel_programming` filter and the static protocol of
 * bird_aggr.cfg.template, as data for the speaker's kernel FIB
 * (reference: calico-node-parity.md §1).
 *
 * Rules, in order (the first covering rule decides; anything else — ToR and
 * route-reflector routes, reachableBy statics — is accepted):
 *   1. service CIDRs (serviceClusterIPs, serviceExternalIPs, serviceLoadBalancerIPs): never programmed;
 *   2. per IP pool, most specific first: VXLAN (Always/CrossSubnet) → not
 *      programmed (Felix does); IPIP Always → via tunl0 onlink; IPIP
 *      CrossSubnet → via tunl0 unless the next hop is in the node's subnet;
 *      no encapsulation → as learned; `programClusterRoutes` can reject the
 *      IPIP pools, the no-encap pools, or both.
 * Statics: a blackhole for each confirmed block affine to this node (not a
 * /32 or /128), and `reachableBy` routes to peers.
 */
import { Prefix } from '../net/index.js';
import { NORMAL_ROUTE_PRIORITY, type KernelRule } from '../kernel/index.js';
import type { KernelStaticRoute } from '../speaker/index.js';
import type { EffectiveConfig } from './config.js';
import type { PlannedPeer } from './plan-types.js';
import type { Node, ProgramClusterRoutes } from './resources.js';
import type { ClusterState } from './state.js';

export interface KernelPlan {
  readonly programClusterRoutes: ProgramClusterRoutes;
  /**
   * BGPConfiguration's ipv4/ipv6NormalRoutePriority (default 1024): the routes this node
   * originates carry LOCAL_PREF 2147483647 − it, so that peers install them with that metric.
   */
  readonly normalRoutePriority: { readonly v4: number; readonly v6: number };
  readonly rules: readonly KernelRule[];
  readonly statics: readonly KernelStaticRoute[];
}

export const TUNNEL_DEVICE = 'tunl0';

export function planKernel(state: ClusterState, node: Node | undefined, nodeName: string, cfg: EffectiveConfig, peers: readonly PlannedPeer[]): KernelPlan {
  const global = state.bgpConfigurations.get('default');
  const pcr = global?.programClusterRoutes ?? 'Enabled';
  const normalRoutePriority = { v4: global?.ipv4NormalRoutePriority ?? NORMAL_ROUTE_PRIORITY, v6: global?.ipv6NormalRoutePriority ?? NORMAL_ROUTE_PRIORITY };
  const rules: KernelRule[] = [];
  for (const [field, list] of [['serviceClusterIPs', cfg.serviceClusterIPs], ['serviceExternalIPs', cfg.serviceExternalIPs], ['serviceLoadBalancerIPs', cfg.serviceLoadBalancerIPs]] as const) {
    for (const p of list) rules.push({ prefix: p.toString(), action: 'reject', why: `service CIDR (BGPConfiguration ${field})` });
  }
  const subnet = node?.ipv4Address !== undefined ? Prefix.containing(node.ipv4Address.address, node.ipv4Address.length ?? 32).toString() : undefined;
  const pools = [...state.ipPools.values()].sort((a, b) => b.cidr.length - a.cidr.length || a.cidr.compare(b.cidr));
  for (const pool of pools) {
    const prefix = pool.cidr.toString();
    const name = `IPPool ${pool.name}`;
    if (pool.vxlanMode !== 'Never') {
      rules.push({ prefix, action: 'reject', why: `${name} uses VXLAN (${pool.vxlanMode}): Felix programs its routes` });
      continue;
    }
    const ipip = pool.cidr.family === 4 && pool.ipipMode !== 'Never';
    if (ipip) {
      if (pcr === 'Disabled' || pcr === 'EnabledNoEncapOnly') rules.push({ prefix, action: 'reject', why: `${name} uses IPIP and programClusterRoutes is ${pcr}` });
      else rules.push({ prefix, action: 'accept', tunnel: { dev: TUNNEL_DEVICE, ...(pool.ipipMode === 'CrossSubnet' ? { unlessWithin: subnet !== undefined ? [subnet] : [] } : {}) }, why: `${name} IPIP ${pool.ipipMode}` });
    } else if (pcr === 'Disabled' || pcr === 'EnabledIPIPOnly') rules.push({ prefix, action: 'reject', why: `${name} has no encapsulation and programClusterRoutes is ${pcr}` });
    else rules.push({ prefix, action: 'accept', why: `${name}, no encapsulation` });
  }
  const statics: KernelStaticRoute[] = [];
  const blocks = [...state.blockAffinities.values()].filter((a) => a.node === nodeName && a.state === 'confirmed' && a.cidr.length !== a.cidr.maxLength);
  blocks.sort((a, b) => a.cidr.compare(b.cidr));
  for (const b of blocks) statics.push({ prefix: b.cidr.toString(), blackhole: true });
  for (const p of peers) {
    if (p.reachableBy === undefined || p.refused) continue;
    statics.push({ prefix: Prefix.host(p.address).toString(), via: p.reachableBy.toString() });
  }
  return { programClusterRoutes: pcr, normalRoutePriority, rules, statics };
}
