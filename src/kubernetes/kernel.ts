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
 *
 * Learning (`learn`, BIRD's `protocol kernel { learn; }` and `protocol
 * direct`): what the export decision (export.ts `kernelExport`) needs to
 * pass on routes of other programs in the kernel's table — Felix's /32 (/128)
 * routes to local workloads among them — as calico_export_to_bgp_peers
 * does: this node's blocks for calico_aggr (the block itself and, beneath
 * it, only routes of a metric below the normal route priority), the
 * interfaces whose routes never leave the node, the interfaces whose
 * connected networks are not taken, and the communities of
 * prefixAdvertisements.
 */
import { Prefix } from '../net/index.js';
import { KernelRules, NORMAL_ROUTE_PRIORITY, type KernelRule } from '../kernel/index.js';
import type { KernelStaticRoute } from '../speaker/index.js';
import type { EffectiveConfig } from './config.js';
import type { PlannedPeer } from './plan-types.js';
import type { CommunityValue, Node, ProgramClusterRoutes } from './resources.js';
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
  readonly learn: KernelLearnPlan;
}

/** What decides which routes learned from the kernel this node advertises (export.ts `kernelExport`). */
export interface KernelLearnPlan {
  /**
   * This node's blocks (confirmed BlockAffinities, else the Node's podCIDRs),
   * /32 and /128 ones included, in prefix order: Calico's calico_aggr. A
   * /32 (/128) block is never blackholed nor originated by itself: it is
   * advertised while the kernel holds a route to the address.
   */
  readonly blocks: readonly { readonly prefix: Prefix; readonly name: string }[];
  /** Interface patterns (BIRD's: `*`, `?`) whose kernel routes are not advertised, and why. */
  readonly rejectInterfaces: readonly { readonly pattern: string; readonly why: string }[];
  /** BGPConfiguration default's ignoredInterfaces: their connected networks are not taken (as Calico's protocol direct). */
  readonly ignoredInterfaces: readonly string[];
  /** Interfaces whose connected networks are not taken: ignoredInterfaces, then `cali*` and `kube-ipvs*` (Calico's DirectInterfaces). */
  readonly directExcluded: readonly string[];
  /** prefixAdvertisements, names resolved: communities for the learned routes inside each prefix, in order. */
  readonly communities: readonly { readonly prefix: Prefix; readonly communities: readonly CommunityValue[] }[];
}

/** A kernel plan's learning part with nothing in it (hand-built plans). */
export const NO_LEARNING: KernelLearnPlan = { blocks: [], rejectInterfaces: [], ignoredInterfaces: [], directExcluded: [], communities: [] };

/** Felix's tunnel devices' routes (VXLAN `vxlan.calico`, WireGuard `wireguard.cali`). */
const FELIX_TUNNELS = ['*.cali', '*.calico'];

const TUNNEL_DEVICE = 'tunl0';

/** `communities`: prefixAdvertisements with their names resolved (plan.ts), for the learned routes. */
export function planKernel(
  state: ClusterState,
  node: Node | undefined,
  nodeName: string,
  cfg: EffectiveConfig,
  peers: readonly PlannedPeer[],
  communities: KernelLearnPlan['communities'] = [],
): KernelPlan {
  const global = state.bgpConfigurations.get('default');
  const pcr = global?.programClusterRoutes ?? 'Enabled';
  const normalRoutePriority = { v4: global?.ipv4NormalRoutePriority ?? NORMAL_ROUTE_PRIORITY, v6: global?.ipv6NormalRoutePriority ?? NORMAL_ROUTE_PRIORITY };
  const rules: KernelRule[] = [];
  for (const [field, list] of [
    ['serviceClusterIPs', cfg.serviceClusterIPs],
    ['serviceExternalIPs', cfg.serviceExternalIPs],
    ['serviceLoadBalancerIPs', cfg.serviceLoadBalancerIPs],
  ] as const) {
    for (const p of list) rules.push({ prefix: p.toString(), action: 'reject', why: `service CIDR (BGPConfiguration ${field})` });
  }
  const subnet = node?.ipv4Address !== undefined ? Prefix.containing(node.ipv4Address.address, node.ipv4Address.length ?? 32).toString() : undefined;
  const pools = [...state.ipPools.values()].sort((a, b) => b.cidr.length - a.cidr.length || a.cidr.compare(b.cidr));
  for (const pool of pools) {
    // As confd: without the node's IPv4 subnet (no IPv4 address) no IPv4 pool statement is written, so every IPv4 route is programmed as learned.
    if (pool.cidr.family === 4 && subnet === undefined) continue;
    const prefix = pool.cidr.toString();
    const name = `IPPool ${pool.name}`;
    if (pool.vxlanMode !== 'Never') {
      rules.push({ prefix, action: 'reject', why: `${name} uses VXLAN (${pool.vxlanMode}): Felix programs its routes` });
      continue;
    }
    const ipip = pool.cidr.family === 4 && pool.ipipMode !== 'Never';
    if (ipip) {
      if (pcr === 'Disabled' || pcr === 'EnabledNoEncapOnly')
        rules.push({ prefix, action: 'reject', why: `${name} uses IPIP and programClusterRoutes is ${pcr}` });
      else
        rules.push({
          prefix,
          action: 'accept',
          tunnel: { dev: TUNNEL_DEVICE, ...(pool.ipipMode === 'CrossSubnet' ? { unlessWithin: subnet !== undefined ? [subnet] : [] } : {}) },
          why: `${name} IPIP ${pool.ipipMode}`,
        });
    } else if (pcr === 'Disabled' || pcr === 'EnabledIPIPOnly')
      rules.push({ prefix, action: 'reject', why: `${name} has no encapsulation and programClusterRoutes is ${pcr}` });
    else rules.push({ prefix, action: 'accept', why: `${name}, no encapsulation` });
  }
  const statics: KernelStaticRoute[] = [];
  const own = [...state.blockAffinities.values()]
    .filter((a) => a.node === nodeName && a.state === 'confirmed')
    .map((a) => ({ prefix: a.cidr, name: `BlockAffinity ${a.name}` }));
  if (own.length === 0) for (const c of node?.podCIDRs ?? []) own.push({ prefix: c, name: `Node ${nodeName} spec.podCIDRs` });
  own.sort((a, b) => a.prefix.compare(b.prefix));
  const isHost = (p: Prefix) => p.length === p.maxLength;
  // The kernel protocol's export filter applies to the statics too: no blackhole for a block of a pool whose routes Felix programs.
  const decide = new KernelRules(rules);
  for (const b of own) if (!isHost(b.prefix) && decide.match(b.prefix)?.action !== 'reject') statics.push({ prefix: b.prefix.toString(), blackhole: true });
  for (const p of peers) {
    if (p.reachableBy === undefined || p.refused) continue;
    statics.push({ prefix: Prefix.host(p.address).toString(), via: p.reachableBy.toString() });
  }
  const ipipByBird = pcr === 'Enabled' || pcr === 'EnabledIPIPOnly';
  const rejectInterfaces = [
    { pattern: 'bpf*.cali', why: 'a route of the eBPF dataplane, local to the node' },
    ...FELIX_TUNNELS.map((pattern) => ({
      pattern,
      why: 'a route Felix programs through its tunnel device (Calico sends these to eBGP peers only; tsbgp advertises to every peer, so to none)',
    })),
    ...(ipipByBird
      ? []
      : [
          {
            pattern: TUNNEL_DEVICE,
            why: `a route Felix programs through tunl0 (programClusterRoutes is ${pcr}; Calico sends these to eBGP peers only, tsbgp to none)`,
          },
        ]),
  ];
  const ignoredInterfaces = global?.ignoredInterfaces ?? [];
  const learn: KernelLearnPlan = {
    blocks: own,
    rejectInterfaces,
    ignoredInterfaces,
    directExcluded: [...ignoredInterfaces, 'cali*', 'kube-ipvs*'],
    communities,
  };
  return { programClusterRoutes: pcr, normalRoutePriority, rules, statics, learn };
}

/** BIRD's interface pattern match (`*` any run, `?` one character), as in `interface "cali*"`. */
export function interfaceMatches(pattern: string, name: string): boolean {
  // Greedy glob with one backtrack point (the last `*`): linear in practice.
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
