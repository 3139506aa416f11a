import { Prefix, type Address } from '../net/index.js';
import type { EffectiveConfig } from './config.js';
import type { PlanError, PlannedPeer, RefusedIP, RouteReason, RouteShaping } from './plan-types.js';
import type { BGPPeer, EndpointSlice, Service } from './resources.js';
import { compact, none } from './compact.js';
import { AS_TRANS, BYTES_PER_ENDPOINT, parseServiceRouting, peerWanted, type ServiceRouting } from './service-routing.js';

/** What one Service contributes to this node's plan. */
export interface ServiceContribution {
  readonly routes: readonly { readonly prefix: Prefix; readonly reason: RouteReason }[];
  readonly refused: readonly RefusedIP[];
  /** Bad tsbgp.io annotations, naming the field (absent when none). */
  readonly errors?: readonly PlanError[];
}

export const EMPTY_CONTRIBUTION: ServiceContribution = Object.freeze({ routes: none<ServiceContribution['routes'][number]>(), refused: none<RefusedIP>() });

export interface ServiceContext {
  readonly nodeName: string;
  /** This node is labelled exclude-from-external-load-balancers=true. */
  readonly excluded: boolean;
  readonly config: EffectiveConfig;
  /** The refusal messages that name only the node: one string each for every Service that gets one (`nodeMessages`). */
  readonly messages: NodeMessages;
  /** This node's planned peers and the cluster's BGPPeers (tsbgp.io/peers, tsbgp.io/peer-selector). */
  readonly peers?: readonly PlannedPeer[];
  readonly bgpPeers?: ReadonlyMap<string, BGPPeer>;
  /** The ranges this node advertises (tsbgp.io/advertise=range needs one to cover the IP). */
  readonly ranges?: readonly Prefix[];
  /** This node's AS (the link bandwidth community's AS; a 4-byte one goes as AS_TRANS). */
  readonly asn?: number;
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
function contribution(routes: ServiceContribution['routes'], refused: readonly RefusedIP[], errors: readonly PlanError[] = []): ServiceContribution {
  if (routes.length + refused.length + errors.length === 0) return EMPTY_CONTRIBUTION;
  return errors.length > 0 ? { routes: compact(routes), refused: compact(refused), errors } : { routes: compact(routes), refused: compact(refused) };
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
  let localReady = 0;
  let localAny = false;
  for (const s of slices) {
    if (!families.has(s.addressType)) continue;
    for (const e of s.endpoints) {
      const local = e.nodeName === nodeName;
      if (local) localAny = true;
      if (!e.ready) continue; // Calico #13246: a not-ready endpoint must not attract traffic.
      anyReady = true;
      if (local) localReady++;
    }
  }
  return { anyReady, localReady, localAny };
}

/**
 * The shaping a Service's routing controls give its routes on this node
 * (before weighted ECMP, which depends on the IP's rule), and the errors of
 * resolving them (a BGPPeer name that does not exist).
 */
function baseShaping(svc: Service, r: ServiceRouting, ctx: ServiceContext, errors: PlanError[]): RouteShaping | undefined {
  if (r.annotations.length === 0) return undefined;
  const out: { -readonly [K in keyof RouteShaping]: RouteShaping[K] } = { by: r.annotations };
  if (r.communities.length > 0) out.communities = r.communities;
  if (r.med !== undefined) out.med = r.med;
  if (r.localPref !== undefined) out.localPref = r.localPref;
  if (r.prepend !== undefined) out.prepend = r.prepend;
  if (r.peers) {
    const p = r.peers;
    for (const name of p.names) {
      if (ctx.bgpPeers && !ctx.bgpPeers.has(name)) {
        errors.push({
          kind: 'Service',
          namespace: svc.namespace,
          name: svc.name,
          field: 'metadata.annotations.tsbgp.io/peers',
          message: `BGPPeer ${JSON.stringify(name)} does not exist`,
        });
      }
    }
    out.peers = (ctx.peers ?? [])
      .filter((pp) => pp.from.kind === 'BGPPeer' && peerWanted(p, pp.from.name, ctx.bgpPeers?.get(pp.from.name)?.labels ?? {}))
      .map((pp) => pp.id);
  }
  return out;
}

/**
 * Section 4 of the reference, per Service: which /32 and /128 routes this node
 * originates for it, and which external / LB IPs it will not advertise and why.
 */
export function planService(svc: Service, slices: readonly EndpointSlice[], ctx: ServiceContext): ServiceContribution {
  if (svc.type === 'ExternalName' || svc.headless) return EMPTY_CONTRIBUTION;
  const { config, nodeName } = ctx;
  const parsed = parseServiceRouting(svc.annotations ?? {});
  const errors: PlanError[] = parsed.errors.map((e) => ({ kind: 'Service', namespace: svc.namespace, name: svc.name, field: e.field, message: e.message }));
  const routing = parsed.routing;
  const base = baseShaping(svc, routing, ctx, errors);
  // A control that does not read is not guessed at (advertising without a
  // no-export the user asked for could leak): the Service's routes wait,
  // refused with the annotation named, until it is fixed.
  const badAnnotation = parsed.errors.length > 0 ? `bad annotation: ${parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}` : undefined;
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
    if (!entry)
      refuse(ip, 'loadBalancerIP', 'outside allow-list', `load-balancer IP ${ip} is not inside any serviceLoadBalancerIPs CIDR of BGPConfiguration default`);
    else candidates.push({ ip, source: 'loadBalancerIP', singleEntry: isHostRoute(entry) ? entry : undefined });
  }
  if (candidates.length === 0) return contribution(routes, refused, errors);

  if (ctx.excluded) {
    for (const c of candidates) {
      if (c.source !== 'clusterIP') refuse(c.ip, c.source, 'node excluded', ctx.messages.excluded);
    }
    return contribution(routes, refused, errors);
  }
  if (badAnnotation !== undefined) {
    for (const c of candidates) if (c.source !== 'clusterIP') refuse(c.ip, c.source, 'bad annotation', badAnnotation);
    return contribution(routes, refused, errors);
  }

  // ClusterIP services have no externalTrafficPolicy: they count as Cluster.
  const local = svc.type !== 'ClusterIP' && svc.externalTrafficPolicy === 'Local';
  const facts = endpointFacts(svc, slices, nodeName);
  const weighted = local && (routing.weightedEcmp ?? config.weightedEcmp ?? false);
  const asn = ctx.asn === undefined ? undefined : ctx.asn > 0xffff ? AS_TRANS : ctx.asn;
  const lbShaping: RouteShaping | undefined =
    weighted && facts.localReady > 0 && asn !== undefined
      ? {
          ...(base ?? { by: [] }),
          linkBandwidth: { asn, endpoints: facts.localReady, bytesPerSecond: facts.localReady * BYTES_PER_ENDPOINT },
          by: [
            ...(base?.by ?? []),
            `weighted ECMP (${routing.weightedEcmp !== undefined ? 'tsbgp.io/weighted-ecmp' : 'BGPConfiguration default tsbgp.io/weighted-ecmp'}): ` +
              `${facts.localReady} ready local endpoint${facts.localReady === 1 ? '' : 's'}`,
          ],
        }
      : undefined;
  const add = (c: Candidate, rule: string) => {
    if (routing.advertise === 'range') {
      if (c.source === 'clusterIP') return; // cluster IPs are in serviceClusterIPs, always a range
      const range = (ctx.ranges ?? []).find((p) => p.contains(c.ip));
      if (range) refuse(c.ip, c.source, 'range only', `tsbgp.io/advertise=range: covered by ${range}, no /${c.ip.family === 4 ? 32 : 128} of its own`);
      else {
        const field = c.source === 'externalIP' ? 'serviceExternalIPs' : 'serviceLoadBalancerIPs';
        const message =
          `tsbgp.io/advertise=range but no advertised ${field} range covers ${c.ip} ` +
          '(a single-IP entry, or serviceLoadBalancerAggregation=Disabled): not advertised';
        refuse(c.ip, c.source, 'bad annotation', message);
        errors.push({ kind: 'Service', namespace: svc.namespace, name: svc.name, field: 'metadata.annotations.tsbgp.io/advertise', message });
      }
      return;
    }
    const shaping = lbShaping ?? base;
    routes.push({
      prefix: Prefix.host(c.ip),
      reason: { kind: 'Service', namespace: svc.namespace, name: svc.name, ip: c.ip.toString(), source: c.source, rule, ...(shaping ? { shaping } : {}) },
    });
  };

  for (const c of candidates) {
    if (local) {
      if (facts.localReady > 0) add(c, 'externalTrafficPolicy=Local with a ready local endpoint');
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
  return contribution(routes, refused, errors);
}
