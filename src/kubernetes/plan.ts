import type { Prefix } from '../net/index.js';
import { effectiveConfig, isExcludedFromLB, nodeAddress, nodeAsn, ROUTER_ID_ENV, routerIdFor, type EffectiveConfig } from './config.js';
import { planKernel, type KernelPlan } from './kernel.js';
import { planPeers } from './peers.js';
import type { ExportAllowList, NodeSummary, Plan, PlanError, PlannedPeer, PlannedRoute, RefusedIP, RouteReason, RouteShaping } from './plan-types.js';
import type { BGPFilter, CommunityValue, Node } from './resources.js';
import { nodeMessages, planService, type ServiceContext, type ServiceContribution } from './services.js';
import { none } from './compact.js';
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
  readonly kernel: KernelPlan;
  readonly errors: readonly PlanError[];
}

const RANGE_FIELDS = ['serviceClusterIPs', 'serviceExternalIPs', 'serviceLoadBalancerIPs'] as const;

/** Service ranges (reference §4 first part): what every node advertises. */
function serviceRanges(cfg: EffectiveConfig): { prefix: Prefix; field: (typeof RANGE_FIELDS)[number] }[] {
  const out: { prefix: Prefix; field: (typeof RANGE_FIELDS)[number] }[] = [];
  for (const p of cfg.serviceClusterIPs) out.push({ prefix: p, field: 'serviceClusterIPs' });
  for (const p of cfg.serviceExternalIPs) if (p.length !== p.maxLength) out.push({ prefix: p, field: 'serviceExternalIPs' });
  if (cfg.aggregation === 'Enabled')
    for (const p of cfg.serviceLoadBalancerIPs) if (p.length !== p.maxLength) out.push({ prefix: p, field: 'serviceLoadBalancerIPs' });
  return out;
}

function reflectedRanges(cfg: EffectiveConfig): ExportAllowList['reflected'] {
  return [
    ...cfg.serviceExternalIPs.map((prefix) => ({ prefix, field: 'serviceExternalIPs' as const })),
    ...cfg.serviceLoadBalancerIPs.map((prefix) => ({ prefix, field: 'serviceLoadBalancerIPs' as const })),
  ];
}

/**
 * Pod blocks of this node (reference §5): confirmed BlockAffinities, else the
 * Node's podCIDRs; never from disableBGPExport pools. A /32 (/128) block is
 * not originated by itself: as Calico, the node advertises it only while the
 * kernel holds a route to the address (kernel.ts `KernelLearnPlan.blocks`, export.ts `kernelExport`).
 */
function podBlocks(state: ClusterState, node: Node | undefined, nodeName: string): { prefix: Prefix; reason: RouteReason }[] {
  const blocked = [...state.ipPools.values()].filter((p) => p.disableBGPExport);
  const exported = (p: Prefix) => !blocked.some((pool) => pool.cidr.contains(p));
  const affs = [...state.blockAffinities.values()].filter((a) => a.node === nodeName && a.state === 'confirmed');
  if (affs.length > 0) {
    return affs
      .filter((a) => exported(a.cidr) && a.cidr.length !== a.cidr.maxLength)
      .map((a) => ({ prefix: a.cidr, reason: { kind: 'BlockAffinity', name: a.name, field: 'spec.cidr' } }));
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
  const rid = routerIdFor(state.routerIdSetting, nodeName, ipv4);
  if (rid.error) errors.push({ kind: 'Node', name: nodeName, field: ROUTER_ID_ENV, message: rid.error });
  const summary: NodeSummary = {
    name: nodeName,
    asn: nodeAsn(node, config),
    ipv4,
    ipv6: nodeAddress(node, 6),
    ...(rid.routerId ? { routerId: rid.routerId } : {}),
    routeReflectorClusterId: node?.routeReflectorClusterId,
    serviceAdvertisementExcluded: excluded,
  };
  const peers = node ? planPeers(state, node, config, errors) : [];
  const asn = summary.asn;
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
    serviceContext: { nodeName, excluded, config, messages: nodeMessages(nodeName), peers, bgpPeers: state.bgpPeers, ranges: ranges.map((r) => r.prefix), asn },
    node: summary,
    listen: {
      port: config.listenPort,
      address: config.bindMode === 'NodeIP' ? ipv4 : undefined,
      ...(config.bindMode === 'NodeIP' && summary.ipv6 ? { addressV6: summary.ipv6 } : {}),
    },
    routes,
    peers,
    filters,
    // A node excluded from service advertisement has no static routes in Calico's export either (/staticroutes is empty for it).
    exportAllowList: { pools, serviceRanges: excluded ? [] : ranges, reflected: node?.routeReflectorClusterId ? reflectedRanges(config) : [] },
    kernel: planKernel(state, node, nodeName, config, peers, prefixCommunities(config)),
    errors: [...errors, ...communityErrors(config)],
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

/** Resolves prefixAdvertisements for one prefix (all matching entries, in order, no repeats). Unknown names are skipped (planGlobal reports them). */
function communitiesFor(prefix: Prefix, cfg: EffectiveConfig): readonly CommunityValue[] {
  // Most routes have none: the shared empty list, not one per route.
  if (cfg.prefixAdvertisements.length === 0) return none();
  const out: CommunityValue[] = [];
  const seen = new Set<string>();
  for (const pa of cfg.prefixAdvertisements) {
    if (!pa.cidr.contains(prefix)) continue;
    for (const c of pa.communities) {
      const value = resolveCommunity(c, cfg);
      if (!value || seen.has(value.text)) continue;
      seen.add(value.text);
      out.push(value);
    }
  }
  return out.length === 0 ? none() : out;
}

/** prefixAdvertisements with their names resolved (unknown names left out: planGlobal reports them), for routes learned from the kernel. */
function prefixCommunities(cfg: EffectiveConfig): { prefix: Prefix; communities: CommunityValue[] }[] {
  return cfg.prefixAdvertisements.map((pa) => ({
    prefix: pa.cidr,
    communities: pa.communities.map((c) => resolveCommunity(c, cfg)).filter((c): c is CommunityValue => c !== undefined),
  }));
}

function resolveCommunity(c: string, cfg: EffectiveConfig): CommunityValue | undefined {
  const lit = parseCommunityLiteral(c);
  return lit instanceof Error ? undefined : (lit ?? cfg.communities.get(c));
}

/** Community names in prefixAdvertisements that their own BGPConfiguration does not define. */
function communityErrors(cfg: EffectiveConfig): PlanError[] {
  const out: PlanError[] = [];
  cfg.prefixAdvertisements.forEach((pa, i) => {
    pa.communities.forEach((c, j) => {
      if (resolveCommunity(c, cfg)) return;
      out.push({
        kind: 'BGPConfiguration',
        name: cfg.prefixAdvertisementsFrom,
        field: `spec.prefixAdvertisements[${i}].communities[${j}]`,
        message: `community ${JSON.stringify(c)} (for ${pa.cidr}) is not defined in BGPConfiguration ${cfg.prefixAdvertisementsFrom} spec.communities`,
      });
    });
  });
  return out;
}

/** Service errors in a stable order: namespace, name, field. */
export function sortServiceErrors(errors: PlanError[]): PlanError[] {
  return errors.sort(
    (a, b) => compareStr(a.namespace ?? '', b.namespace ?? '') || compareStr(a.name ?? '', b.name ?? '') || compareStr(a.field ?? '', b.field ?? ''),
  );
}

export function compareRefused(a: RefusedIP, b: RefusedIP): number {
  return compareStr(a.namespace, b.namespace) || compareStr(a.name, b.name) || compareStr(a.source, b.source) || compareStr(a.ip, b.ip);
}

/**
 * The shaping of a route several reasons want: one Service's as it is;
 * for several (Services sharing an IP), communities joined, the first
 * Service's (in reason order) MED, LOCAL_PREF and prepend, the largest
 * link bandwidth, and a peer choice only when every reason makes one (a
 * reason without one wants the route everywhere).
 */
export function mergeShaping(reasons: readonly RouteReason[]): RouteShaping | undefined {
  if (reasons.length === 1) return reasons[0].kind === 'Service' ? reasons[0].shaping : undefined;
  const all = reasons.map((r) => (r.kind === 'Service' ? r.shaping : undefined));
  const some = all.filter((s): s is RouteShaping => s !== undefined);
  if (some.length === 0) return undefined;
  const out: { -readonly [K in keyof RouteShaping]: RouteShaping[K] } = { by: some.flatMap((s) => s.by) };
  const seen = new Set<string>();
  const communities = some.flatMap((s) => s.communities ?? []).filter((c) => !seen.has(c.text) && seen.add(c.text));
  if (communities.length > 0) out.communities = communities;
  const first = <K extends 'med' | 'localPref' | 'prepend'>(k: K) => some.find((s) => s[k] !== undefined)?.[k];
  for (const k of ['med', 'localPref', 'prepend'] as const) {
    const v = first(k);
    if (v !== undefined) out[k] = v;
  }
  if (all.every((s) => s?.peers !== undefined)) out.peers = [...new Set(some.flatMap((s) => s.peers!))].sort();
  const lb = some
    .map((s) => s.linkBandwidth)
    .filter((x) => x !== undefined)
    .sort((a, b) => b.bytesPerSecond - a.bytesPerSecond)[0];
  if (lb) out.linkBandwidth = lb;
  return out;
}

/**
 * One prefix in the route index: the reason that wants it, or, when
 * several do, every reason by `reasonKey` in `more`. Nearly every route has
 * one reason, so nearly none carries a Map (about 200 bytes each).
 */
interface IndexEntry {
  readonly prefix: Prefix;
  reason: RouteReason;
  more: Map<string, RouteReason> | undefined;
}

/**
 * The merged route table: every prefix with the reasons that want it. A
 * route stays while any reason is left (a /32 shared by several Services).
 */
export class RouteIndex {
  private readonly entries = new Map<number | string, IndexEntry>();

  add(prefix: Prefix, reason: RouteReason): void {
    const e = this.entries.get(prefix.key);
    if (!e) this.entries.set(prefix.key, { prefix, reason, more: undefined });
    else if (e.more) e.more.set(reasonKey(reason), reason);
    else {
      const had = reasonKey(e.reason);
      const key = reasonKey(reason);
      if (had === key) e.reason = reason;
      else
        e.more = new Map([
          [had, e.reason],
          [key, reason],
        ]);
    }
  }

  remove(prefix: Prefix, reason: RouteReason): void {
    const e = this.entries.get(prefix.key);
    if (!e) return;
    const key = reasonKey(reason);
    if (!e.more) {
      if (reasonKey(e.reason) === key) this.entries.delete(prefix.key);
      return;
    }
    e.more.delete(key);
    if (e.more.size === 0) this.entries.delete(prefix.key);
    else if (e.more.size === 1) {
      e.reason = e.more.values().next().value!;
      e.more = undefined;
    }
  }

  /** The planned route for one prefix, or undefined when nothing wants it. */
  route(key: number | string, cfg: EffectiveConfig): PlannedRoute | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const reasons = e.more ? [...e.more.entries()].sort((a, b) => compareStr(a[0], b[0])).map(([, r]) => r) : [e.reason];
    const shaping = mergeShaping(reasons);
    return { prefix: e.prefix, communities: communitiesFor(e.prefix, cfg), reasons, ...(shaping ? { shaping } : {}) };
  }

  /** Every route, in prefix order. */
  routes(cfg: EffectiveConfig): PlannedRoute[] {
    return [...this.entries.values()].sort((a, b) => a.prefix.compare(b.prefix)).map((e) => this.route(e.prefix.key, cfg)!);
  }
}

/** Builds a plan from its parts; routes come already merged and sorted, refused IPs sorted by `compareRefused`. */
export function planFrom(g: GlobalPart, routes: readonly PlannedRoute[], refused: readonly RefusedIP[], serviceErrors: readonly PlanError[] = []): Plan {
  return {
    node: g.node,
    listen: g.listen,
    logSeverity: g.config.logSeverityScreen,
    routes,
    refused,
    peers: g.peers,
    filters: g.filters,
    exportAllowList: g.exportAllowList,
    kernel: g.kernel,
    errors: serviceErrors.length > 0 ? [...g.errors, ...serviceErrors] : g.errors,
  };
}

/**
 * Builds the final plan from the global part and the per-service
 * contributions, sorted so that the same inputs always give the same plan.
 */
function assemble(g: GlobalPart, services: Iterable<ServiceContribution>): Plan {
  const index = new RouteIndex();
  const refused: RefusedIP[] = [];
  const errors: PlanError[] = [];
  for (const r of g.routes) index.add(r.prefix, r.reason);
  for (const c of services) {
    for (const r of c.routes) index.add(r.prefix, r.reason);
    refused.push(...c.refused);
    if (c.errors) errors.push(...c.errors);
  }
  return planFrom(g, index.routes(g.config), refused.sort(compareRefused), sortServiceErrors(errors));
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
