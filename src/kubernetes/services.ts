import { Prefix, type Address } from '../net/index.js';
import type { EffectiveConfig } from './config.js';
import type { RefusedIP, RouteReason } from './plan-types.js';
import type { EndpointSlice, Service } from './resources.js';
import { compact, none } from './compact.js';

/** What one Service contributes to this node's plan. */
export interface ServiceContribution {
  readonly routes: readonly { readonly prefix: Prefix; readonly reason: RouteReason }[];
  readonly refused: readonly RefusedIP[];
}

export const EMPTY_CONTRIBUTION: ServiceContribution = Object.freeze({ routes: none<ServiceContribution['routes'][number]>(), refused: none<RefusedIP>() });

export interface ServiceContext {
  readonly nodeName: string;
  /** This node is labelled exclude-from-external-load-balancers=true. */
  readonly excluded: boolean;
  readonly config: EffectiveConfig;
  /** The refusal messages that name only the node: one string each for every Service that gets one (`nodeMessages`). */
  readonly messages: NodeMessages;
}

export interface NodeMessages {
  readonly excluded: string;
  readonly notLocal: string;
  readonly notReady: string;
}

export function nodeMessages(nodeName: string): NodeMessages {
  return {
    excluded: `node ${nodeName} is labelled node.kubernetes.io/exclude-from-external-load-balancers=true`,
    notLocal: `externalTrafficPolicy=Local and no endpoint runs on node ${nodeName}`,
    notReady: `externalTrafficPolicy=Local and no endpoint on node ${nodeName} is ready`,
  };
}

/** A contribution as the planner keeps it: exact lists, the shared empty one when there is nothing. */
function contribution(routes: ServiceContribution['routes'], refused: readonly RefusedIP[]): ServiceContribution {
  return routes.length + refused.length === 0 ? EMPTY_CONTRIBUTION : { routes: compact(routes), refused: compact(refused) };
}

function isHostRoute(p: Prefix): boolean {
  return p.length === p.maxLength;
}

/** The allow-list entry that contains `ip`, preferring a single-IP entry (rule A). */
function allowEntry(list: readonly Prefix[], ip: Address): Prefix | undefined {
  let best: Prefix | undefined;
  for (const p of list) if (p.contains(ip) && (!best || p.length > best.length)) best = p;
  return best;
}

const FAMILY_TYPE = { 4: 'IPv4', 6: 'IPv6' } as const;

/** Endpoint facts for rule C, over slices whose addressType is one of the service's ipFamilies. */
function endpointFacts(svc: Service, slices: readonly EndpointSlice[], nodeName: string) {
  const families = new Set<string>(svc.ipFamilies.map((f) => FAMILY_TYPE[f]));
  let anyReady = false;
  let localReady = false;
  let localAny = false;
  for (const s of slices) {
    if (!families.has(s.addressType)) continue;
    for (const e of s.endpoints) {
      const local = e.nodeName === nodeName;
      if (local) localAny = true;
      if (!e.ready) continue; // Calico #13246: a not-ready endpoint must not attract traffic.
      anyReady = true;
      if (local) localReady = true;
    }
  }
  return { anyReady, localReady, localAny };
}

/**
 * Section 4 of the reference, per Service: which /32 and /128 routes this node
 * originates for it, and which external / LB IPs it will not advertise and why.
 */
export function planService(svc: Service, slices: readonly EndpointSlice[], ctx: ServiceContext): ServiceContribution {
  if (svc.type === 'ExternalName' || svc.headless) return EMPTY_CONTRIBUTION;
  const { config, nodeName } = ctx;
  const routes: { prefix: Prefix; reason: RouteReason }[] = [];
  const refused: RefusedIP[] = [];
  const refuse = (ip: Address, source: RefusedIP['source'], reason: RefusedIP['reason'], message: string) =>
    refused.push({ namespace: svc.namespace, name: svc.name, ip: ip.toString(), source, reason, message });

  type Candidate = { ip: Address; source: 'clusterIP' | 'externalIP' | 'loadBalancerIP'; singleEntry?: Prefix };
  const candidates: Candidate[] = [];
  if (config.serviceClusterIPs.length > 0) for (const ip of svc.clusterIPs) candidates.push({ ip, source: 'clusterIP' });
  for (const ip of svc.externalIPs) {
    const entry = allowEntry(config.serviceExternalIPs, ip);
    if (!entry) refuse(ip, 'externalIP', 'outside allow-list', `external IP ${ip} is not inside any serviceExternalIPs CIDR of BGPConfiguration default`);
    else candidates.push({ ip, source: 'externalIP', singleEntry: isHostRoute(entry) ? entry : undefined });
  }
  // Only status IPs are real assignments (Calico #11917 read spec.loadBalancerIP instead).
  for (const ip of svc.loadBalancerIngressIPs) {
    const entry = allowEntry(config.serviceLoadBalancerIPs, ip);
    if (!entry) refuse(ip, 'loadBalancerIP', 'outside allow-list', `load-balancer IP ${ip} is not inside any serviceLoadBalancerIPs CIDR of BGPConfiguration default`);
    else candidates.push({ ip, source: 'loadBalancerIP', singleEntry: isHostRoute(entry) ? entry : undefined });
  }
  if (candidates.length === 0) return contribution(routes, refused);

  if (ctx.excluded) {
    for (const c of candidates) {
      if (c.source !== 'clusterIP') refuse(c.ip, c.source, 'node excluded', ctx.messages.excluded);
    }
    return contribution(routes, refused);
  }

  // ClusterIP services have no externalTrafficPolicy: they count as Cluster.
  const local = svc.type !== 'ClusterIP' && svc.externalTrafficPolicy === 'Local';
  const facts = endpointFacts(svc, slices, nodeName);
  const add = (c: Candidate, rule: string) =>
    routes.push({
      prefix: Prefix.host(c.ip),
      reason: { kind: 'Service', namespace: svc.namespace, name: svc.name, ip: c.ip.toString(), source: c.source, rule },
    });

  for (const c of candidates) {
    if (local) {
      if (facts.localReady) add(c, 'externalTrafficPolicy=Local with a ready local endpoint');
      else if (c.source !== 'clusterIP') {
        if (facts.localAny) refuse(c.ip, c.source, 'not ready', ctx.messages.notReady);
        else refuse(c.ip, c.source, 'not-local', ctx.messages.notLocal);
      }
      continue;
    }
    // Rule A holds for every service type (Calico #11204 counted it only for some).
    if (c.singleEntry) {
      const field = c.source === 'externalIP' ? 'serviceExternalIPs' : 'serviceLoadBalancerIPs';
      add(c, `externalTrafficPolicy=Cluster and the IP is a single-IP ${field} entry (${c.singleEntry})`);
      continue;
    }
    if (config.aggregation === 'Enabled') continue; // rule B: the ranges cover it
    if (facts.anyReady) add(c, 'serviceLoadBalancerAggregation=Disabled with a ready endpoint');
    else if (c.source !== 'clusterIP') refuse(c.ip, c.source, 'not ready', 'serviceLoadBalancerAggregation=Disabled and the service has no ready endpoint');
  }
  return contribution(routes, refused);
}
