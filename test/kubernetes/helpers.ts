import { validateObject } from '../../src/kubernetes/validate.js';
import type { BGPConfiguration, BGPFilter, BGPPeer, BlockAffinity, EndpointSlice, IPPool, Node, Resource, Service } from '../../src/kubernetes/resources.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { plan } from '../../src/kubernetes/plan.js';
import type { Plan } from '../../src/kubernetes/plan-types.js';

/** Validates a raw object and fails loudly if it is invalid (test fixtures must be valid). */
export function valid<T extends Resource>(raw: unknown): T {
  const r = validateObject(raw, 'test.yaml');
  if (!r.ok) throw new Error(`fixture invalid: ${JSON.stringify(r.issue)}`);
  return r.resource as T;
}

export function node(
  name: string,
  ip: string,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string>; podCIDRs?: string[] } = {},
): Node {
  return valid<Node>({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: extra.labels ?? {}, annotations: extra.annotations ?? {} },
    spec: { podCIDRs: extra.podCIDRs ?? [] },
    status: {
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
    },
  });
}

export interface SvcOpts {
  ns?: string;
  type?: string;
  clusterIP?: string;
  clusterIPs?: readonly string[];
  externalIPs?: readonly string[];
  lbIngress?: readonly ({ ip: string } | { hostname: string })[];
  loadBalancerIP?: string;
  eTP?: 'Cluster' | 'Local';
  ipFamilies?: readonly string[];
  annotations?: Readonly<Record<string, string>>;
}

export function svc(name: string, o: SvcOpts = {}): Service {
  return valid<Service>({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: o.ns ?? 'default', ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      type: o.type ?? 'ClusterIP',
      clusterIP: o.clusterIP ?? o.clusterIPs?.[0],
      clusterIPs: o.clusterIPs,
      externalIPs: o.externalIPs,
      loadBalancerIP: o.loadBalancerIP,
      externalTrafficPolicy: o.eTP,
      ipFamilies: o.ipFamilies,
    },
    status: o.lbIngress ? { loadBalancer: { ingress: o.lbIngress } } : {},
  });
}

export function slice(
  name: string,
  service: string,
  endpoints: { node?: string; ready?: boolean }[],
  o: { ns?: string; addressType?: string } = {},
): EndpointSlice {
  return valid<EndpointSlice>({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: o.ns ?? 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: o.addressType ?? 'IPv4',
    endpoints: endpoints.map((e, i) => ({
      addresses: [`10.0.0.${i + 1}`],
      nodeName: e.node,
      conditions: e.ready === undefined ? {} : { ready: e.ready },
    })),
  });
}

export function bgpConfig(spec: Record<string, unknown>, name = 'default'): BGPConfiguration {
  return valid<BGPConfiguration>({ apiVersion: 'projectcalico.org/v3', kind: 'BGPConfiguration', metadata: { name }, spec });
}

export function peer(name: string, spec: Record<string, unknown>): BGPPeer {
  return valid<BGPPeer>({ apiVersion: 'projectcalico.org/v3', kind: 'BGPPeer', metadata: { name }, spec });
}

/** A Secret (stringData), by default in kube-system (tsbgp's namespace unless NAMESPACE says otherwise). */
export function secret(name: string, stringData: Record<string, string>, namespace = 'kube-system'): Resource {
  return valid<Resource>({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, stringData });
}

export function pool(name: string, spec: Record<string, unknown>): IPPool {
  return valid<IPPool>({ apiVersion: 'projectcalico.org/v3', kind: 'IPPool', metadata: { name }, spec });
}

export function filter(name: string, spec: Record<string, unknown>): BGPFilter {
  return valid<BGPFilter>({ apiVersion: 'projectcalico.org/v3', kind: 'BGPFilter', metadata: { name }, spec });
}

export function affinity(node: string, cidr: string, state = 'confirmed'): BlockAffinity {
  return valid<BlockAffinity>({
    apiVersion: 'crd.projectcalico.org/v1',
    kind: 'BlockAffinity',
    metadata: { name: `${node}-${cidr.replace(/[./]/g, '-')}` },
    spec: { node, cidr, state },
  });
}

export function planFor(resources: Resource[], nodeName: string): Plan {
  return plan(stateOf(resources), nodeName);
}

/** The prefixes of a plan, as text, in plan order. */
export function prefixes(p: Plan): string[] {
  return p.routes.map((r) => r.prefix.toString());
}

/** Just the /32 and /128 routes. */
export function hostRoutes(p: Plan): string[] {
  return p.routes.filter((r) => r.prefix.length === r.prefix.maxLength).map((r) => r.prefix.toString());
}

export const threeNodes = (): Node[] => [node('worker1', '192.0.2.10'), node('worker2', '192.0.2.11'), node('master1', '192.0.2.12')];
