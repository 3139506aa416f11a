/**
 * A synthetic cluster as manifest objects (plain JSON, what the agent reads
 * from files): one node `worker1` at 127.0.0.1 peering with a router, and
 * Services of type LoadBalancer with externalTrafficPolicy Local. Even
 * Services have an endpoint on worker1 and one on worker2, odd ones only on
 * worker2 (as in a real cluster, most eTP Local Services have no pod on a
 * given node: the planner refuses their IPs as not-local). A Service with a
 * ready endpoint on worker1 gets its load-balancer IP (one /32 inside
 * 198.18.0.0/15) advertised by worker1; a "probe" Service (even) starts with
 * that endpoint not ready, so making it ready announces one /32.
 */

export const NODE = 'worker1';
export const NAMESPACE = 'bench';
export const LB_RANGE = '198.18.0.0/15';
const LB_BASE = 0xc6120000; // 198.18.0.0

const dotted = (v: number) => `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;

/** The load-balancer IP of Service `i` (i < 131,070). */
export const lbIp = (i: number): string => dotted((LB_BASE + 1 + i) >>> 0);
/** What the router receives for Service `i`. */
export const lbRoute = (i: number): string => `${lbIp(i)}/32`;

export function clusterObjects(opts: { routerAddress: string; routerPort: number; routerAsn: number; asn: number }): object[] {
  const node = (name: string, ip: string) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { podCIDRs: [name === NODE ? '10.244.1.0/24' : '10.244.2.0/24'] },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  });
  return [
    node(NODE, '127.0.0.1'),
    node('worker2', '127.0.0.3'),
    {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPConfiguration',
      metadata: { name: 'default' },
      spec: { asNumber: opts.asn, nodeToNodeMeshEnabled: false, serviceLoadBalancerIPs: [{ cidr: LB_RANGE }] },
    },
    {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPPeer',
      metadata: { name: 'router' },
      spec: { peerIP: `${opts.routerAddress}:${opts.routerPort}`, asNumber: opts.routerAsn },
    },
  ];
}

export function service(i: number): object {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `s${i}`, namespace: NAMESPACE },
    spec: { type: 'LoadBalancer', clusterIP: dotted((0x0a600000 + i) >>> 0), externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }] },
    status: { loadBalancer: { ingress: [{ ip: lbIp(i) }] } },
  };
}

/** Whether Service `i` has an endpoint on this node (even ones do). */
export const hasLocal = (i: number): boolean => i % 2 === 0;

export function endpointSlice(i: number, readyOnNode: boolean, local = hasLocal(i)): object {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `s${i}-abcde`, namespace: NAMESPACE, labels: { 'kubernetes.io/service-name': `s${i}` } },
    addressType: 'IPv4',
    endpoints: [
      ...(local ? [{ addresses: [dotted((0x0af40100 + (i & 0xff)) >>> 0)], nodeName: NODE, conditions: { ready: readyOnNode } }] : []),
      { addresses: [dotted((0x0af40200 + (i & 0xff)) >>> 0)], nodeName: 'worker2', conditions: { ready: true } },
    ],
    ports: [{ port: 8080, protocol: 'TCP' }],
  };
}

/** A `kind: List` of objects, as JSON text. */
export const list = (items: readonly object[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

/** Services [from, to) with their slices, probes (the set given) not ready on this node. */
export function serviceObjects(from: number, to: number, probes: ReadonlySet<number>): object[] {
  const items: object[] = [];
  for (let i = from; i < to; i++) items.push(service(i), endpointSlice(i, !probes.has(i)));
  return items;
}

/** The same as a `kind: List` manifest. */
export const serviceList = (from: number, to: number, probes: ReadonlySet<number>): string => list(serviceObjects(from, to, probes));
