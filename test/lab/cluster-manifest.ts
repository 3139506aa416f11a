/**
 * The cluster the lab's `tsbgp agent` nodes read from one manifest file, as
 * multi-document YAML: each node with its InternalIP, the default
 * BGPConfiguration, global BGPPeers, and LoadBalancer Services with their
 * ready endpoints per node (the weighted-ECMP, drain and ADD-PATH labs).
 */
import { stringify } from 'yaml';

const CALICO = 'projectcalico.org/v3';

export interface LabService {
  readonly name: string;
  /** The load-balancer ingress IP. */
  readonly vip: string;
  readonly policy: 'Local' | 'Cluster';
  readonly annotations?: Record<string, string>;
  /** Ready endpoints per node name, in one EndpointSlice; none: no slice. */
  readonly endpoints?: Record<string, number>;
}

export function clusterManifest(c: {
  /** Node name → InternalIP. */
  readonly nodes: Record<string, string>;
  /** The default BGPConfiguration's spec. */
  readonly bgp: object;
  /** Global BGPPeers: name → spec. */
  readonly peers: Record<string, object>;
  readonly services?: readonly LabService[];
  /** More objects, as they are. */
  readonly extra?: readonly object[];
}): string {
  const docs: object[] = [
    ...Object.entries(c.nodes).map(([name, ip]) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    })),
    { apiVersion: CALICO, kind: 'BGPConfiguration', metadata: { name: 'default' }, spec: c.bgp },
    ...Object.entries(c.peers).map(([name, spec]) => ({ apiVersion: CALICO, kind: 'BGPPeer', metadata: { name }, spec })),
    ...(c.services ?? []).flatMap(service),
    ...(c.extra ?? []),
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

function service(s: LabService): object[] {
  let n = 0;
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: 'default', ...(s.annotations ? { annotations: s.annotations } : {}) },
    spec: { type: 'LoadBalancer', clusterIP: '10.96.0.10', externalTrafficPolicy: s.policy },
    status: { loadBalancer: { ingress: [{ ip: s.vip }] } },
  };
  if (s.endpoints === undefined) return [svc];
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${s.name}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': s.name } },
    addressType: 'IPv4',
    endpoints: Object.entries(s.endpoints).flatMap(([node, count]) =>
      Array.from({ length: count }, () => ({ addresses: [`10.244.0.${++n}`], nodeName: node, conditions: { ready: true } })),
    ),
  };
  return [svc, slice];
}
