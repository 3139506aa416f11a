import type { Prefix } from '../net/index.js';
import { effectiveConfig, isExcludedFromLB, nodeAddress, nodeAsn, type EffectiveConfig } from './config.js';
import { planPeers } from './peers.js';
import type { ExportAllowList, Plan, PlanError, PlannedPeer, PlannedRoute, RefusedIP, RouteReason, NodeSummary } from './plan-types.js';
import type { BGPFilter, CommunityValue, Node } from './resources.js';
import { planService, type ServiceContext, type ServiceContribution } from './services.js';
import { serviceKey, type ClusterState } from './state.js';
import { parseCommunityLiteral } from './validate.js';

/** Everything in a plan that does not depend on one Service. */
export interface GlobalPart {
  readonly config: EffectiveConfig;
  readonly serviceContext: ServiceContext;
  readonly node: NodeSummary;
  readonly listen: Plan['listen'];
  readonly routes: readonly { readonly prefix: Prefix; readonly reason: RouteReason }[];
  readonly peers: readonly PlannedPeer[];
  readonly filters: readonly BGPFilter[];
  readonly exportAllowList: ExportAllowList;
  readonly errors: readonly PlanError[];
}

const RANGE_FIELDS = ['serviceClusterIPs', 'serviceExternalIPs', 'serviceLoadBalancerIPs'] as const;

/** Service ranges (reference §4 first part): what every node advertises. */
function serviceRanges(cfg: EffectiveConfig): { prefix: Prefix; field: (typeof RANGE_FIELDS)[number] }[] {
  const out: { prefix: Prefix; field: (typeof RANGE_FIELDS)[number] }[] = [];
  for (const p of cfg.serviceClusterIPs) out.push({ prefix: p, field: 'serviceClusterIPs' });
  for (const p of cfg.serviceExternalIPs) if (p.length !== p.maxLength) out.push({ prefix: p, field: 'serviceExternalIPs' });
  if (cfg.aggregation === 'Enabled') for (const p of cfg.serviceLoadBalancerIPs) if (p.length !== p.maxLength) out.push({ prefix: p, field: 'serviceLoadBalancerIPs' });
  return out;
}

/** Pod blocks of this node (reference §5): confirmed BlockAffinities, else the Node's podCIDRs; never from disableBGPExport pools. */
function podBlocks(state: ClusterState, node: Node | undefined, nodeName: string): { prefix: Prefix; reason: RouteReason }[] {
  const blocked = [...state.ipPools.values()].filter((p) => p.disableBGPExport);
  const exported = (p: Prefix) => !blocked.some((pool) => pool.cidr.contains(p));
  const affs = [...state.blockAffinities.values()].filter((a) => a.node === nodeName && a.state === 'confirmed');
  if (affs.length > 0) {
    return affs.filter((a) => exported(a.cidr)).map((a) => ({ prefix: a.cidr, reason: { kind: 'BlockAffinity', name: a.name, field: 'spec.cidr' } }));
  }
  return (node?.podCIDRs ?? []).filter(exported).map((p) => ({ prefix: p, reason: { kind: 'Node', name: nodeName, field: 'spec.podCIDRs' } }));
}

export function planGlobal(state: ClusterState, nodeName: string): GlobalPart {
  const config = effectiveConfig(state, nodeName);
  const node = state.nodes.get(nodeName);
  const errors: PlanError[] = [];
  const excluded = isExcludedFromLB(node);
  const ranges = serviceRanges(config);
  const routes: { prefix: Prefix; reason: RouteReason }[] = [];
  if (!node) errors.push({ kind: 'Node', name: nodeName, message: `node ${nodeName} is not in the cluster state: no peers are planned` });
  if (!excluded) for (const r of ranges) routes.push({ prefix: r.prefix, reason: { kind: 'BGPConfiguration', name: 'default', field: r.field } });
  routes.push(...podBlocks(state, node, nodeName));
  const ipv4 = nodeAddress(node, 4);
  const summary: NodeSummary = {
    name: nodeName,
    asn: nodeAsn(node, config),
    ipv4,
    ipv6: nodeAddress(node, 6),
    routeReflectorClusterId: node?.routeReflectorClusterId,
    serviceAdvertisementExcluded: excluded,
  };
  const peers = node ? planPeers(state, node, config, errors) : [];
  const used = new Set(peers.flatMap((p) => p.filters));
  const filters = [...used]
    .sort()
    .map((n) => state.bgpFilters.get(n))
    .filter((f): f is BGPFilter => f !== undefined);
  const pools = [...state.ipPools.values()]
    .sort((a, b) => a.cidr.compare(b.cidr) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((p) => ({ name: p.name, cidr: p.cidr, disabled: p.disabled, disableBGPExport: p.disableBGPExport }));
  return {
    config,
    serviceContext: { nodeName, excluded, config },
    node: summary,
    listen: { port: config.listenPort, address: config.bindMode === 'NodeIP' ? ipv4 : undefined },
    routes,
    peers,
    filters,
    exportAllowList: { pools, serviceRanges: ranges },
    errors,
  };
}

/** One Service's contribution, looked up by its namespace/name key. */
export function planServiceByKey(state: ClusterState, key: string, ctx: ServiceContext): ServiceContribution | undefined {
  const svc = state.services.get(key);
  if (!svc) return undefined;
  return planService(svc, state.slicesOf(svc.namespace, svc.name), ctx);
}

function reasonKey(r: RouteReason): string {
  switch (r.kind) {
    case 'Service':
      return `Service|${r.namespace}|${r.name}|${r.source}|${r.ip}`;
    case 'BGPConfiguration':
      return `BGPConfiguration|${r.name}|${r.field}`;
    default:
      return `${r.kind}|${r.name}|${r.field}`;
  }
}

function compareStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Resolves prefixAdvertisements for one prefix (all matching entries, in order, no repeats). */
export function communitiesFor(prefix: Prefix, cfg: EffectiveConfig, errors?: Set<string>): CommunityValue[] {
  const out: CommunityValue[] = [];
  const seen = new Set<string>();
  for (const pa of cfg.prefixAdvertisements) {
    if (!pa.cidr.contains(prefix)) continue;
    for (const c of pa.communities) {
      const lit = parseCommunityLiteral(c);
      const value = lit instanceof Error ? undefined : (lit ?? cfg.communities.get(c));
      if (!value) {
        errors?.add(`community ${JSON.stringify(c)} in BGPConfiguration ${cfg.prefixAdvertisementsFrom} prefixAdvertisements (${pa.cidr}) is not defined in BGPConfiguration default spec.communities`);
        continue;
      }
      if (seen.has(value.text)) continue;
      seen.add(value.text);
      out.push(value);
    }
  }
  return out;
}

function compareRefused(a: RefusedIP, b: RefusedIP): number {
  return compareStr(a.namespace, b.namespace) || compareStr(a.name, b.name) || compareStr(a.source, b.source) || compareStr(a.ip, b.ip);
}

/**
 * Builds the final plan from the global part and the per-service
 * contributions. Routes wanted by several resources merge, reasons sorted so
 * that the same inputs always give the same plan.
 */
export function assemble(g: GlobalPart, services: Iterable<ServiceContribution>): Plan {
  const byKey = new Map<number | string, { prefix: Prefix; reasons: Map<string, RouteReason> }>();
  const refused: RefusedIP[] = [];
  const addRoute = (prefix: Prefix, reason: RouteReason) => {
    let e = byKey.get(prefix.key);
    if (!e) byKey.set(prefix.key, (e = { prefix, reasons: new Map() }));
    e.reasons.set(reasonKey(reason), reason);
  };
  for (const r of g.routes) addRoute(r.prefix, r.reason);
  for (const c of services) {
    for (const r of c.routes) addRoute(r.prefix, r.reason);
    refused.push(...c.refused);
  }
  const communityErrors = new Set<string>();
  const routes: PlannedRoute[] = [...byKey.values()]
    .sort((a, b) => a.prefix.compare(b.prefix))
    .map((e) => ({
      prefix: e.prefix,
      communities: communitiesFor(e.prefix, g.config, communityErrors),
      reasons: [...e.reasons.entries()].sort((a, b) => compareStr(a[0], b[0])).map(([, r]) => r),
    }));
  const errors: PlanError[] = [...g.errors];
  for (const m of [...communityErrors].sort()) errors.push({ kind: 'BGPConfiguration', name: g.config.prefixAdvertisementsFrom, field: 'spec.prefixAdvertisements', message: m });
  return {
    node: g.node,
    listen: g.listen,
    logSeverity: g.config.logSeverityScreen,
    routes,
    refused: refused.sort(compareRefused),
    peers: g.peers,
    filters: g.filters,
    exportAllowList: g.exportAllowList,
    errors,
  };
}

/** The pure planner: cluster state + node name → what this node advertises and to whom. */
export function plan(state: ClusterState, nodeName: string): Plan {
  const g = planGlobal(state, nodeName);
  const contributions: ServiceContribution[] = [];
  for (const svc of state.services.values()) {
    contributions.push(planService(svc, state.slicesOf(svc.namespace, svc.name), g.serviceContext));
  }
  return assemble(g, contributions);
}

export { serviceKey };
