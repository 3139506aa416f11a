// Planner cost on a large cluster: from-scratch plan() versus one incremental
// EndpointSlice update, and a batch of new Services planned at once
// (Planner.applyAll). Prints medians of several runs.
//   node --import tsx bench/kubernetes-planner.ts [services]
import { plan } from '../src/kubernetes/plan.js';
import { Planner } from '../src/kubernetes/planner.js';
import type { Resource } from '../src/kubernetes/resources.js';
import { stateOf } from '../src/kubernetes/state.js';
import { validateObject } from '../src/kubernetes/validate.js';
import { emit, median } from './report.js';

const SERVICES = Number(process.argv[2] ?? 5000);
const NODES = 100;

function valid(raw: unknown): Resource {
  const r = validateObject(raw);
  if (!r.ok) throw new Error(JSON.stringify(r.issue));
  return r.resource;
}

const ip = (base: number, i: number) => `${base >>> 24}.${(base >>> 16) & 255}.${((base >>> 8) + (i >> 8)) & 255}.${i & 255}`;
const resources: Resource[] = [];
for (let n = 0; n < NODES; n++) {
  resources.push(
    valid({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `n${n}` },
      status: { addresses: [{ type: 'InternalIP', address: `10.1.${n >> 8}.${n & 255}` }] },
    }),
  );
  resources.push(
    valid({ apiVersion: 'crd.projectcalico.org/v1', kind: 'BlockAffinity', metadata: { name: `b${n}` }, spec: { node: `n${n}`, cidr: `198.19.${n}.0/26` } }),
  );
}
resources.push(
  valid({
    apiVersion: 'projectcalico.org/v3',
    kind: 'BGPConfiguration',
    metadata: { name: 'default' },
    spec: {
      serviceClusterIPs: [{ cidr: '10.96.0.0/12' }],
      serviceExternalIPs: [{ cidr: '203.0.0.0/16' }],
      serviceLoadBalancerIPs: [{ cidr: '192.168.0.0/16' }],
      serviceLoadBalancerAggregation: 'Disabled',
    },
  }),
);
const slice = (i: number, ready: boolean) =>
  valid({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `s${i}-x`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `s${i}` } },
    addressType: 'IPv4',
    endpoints: [0, 1, 2].map((k) => ({ addresses: ['10.0.0.1'], nodeName: `n${(i + k * 7) % NODES}`, conditions: { ready } })),
  });
const service = (i: number) =>
  valid({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `s${i}`, namespace: 'bench' },
    spec: { type: 'LoadBalancer', clusterIP: ip(0x0a600000, i), externalIPs: [ip(0xcb000000, i)], externalTrafficPolicy: i % 2 ? 'Local' : 'Cluster' },
    status: { loadBalancer: { ingress: [{ ip: ip(0xc0a80000, i) }] } },
  });
for (let i = 0; i < SERVICES; i++) resources.push(service(i), slice(i, true));

function time(fn: () => void, runs: number): number {
  const out: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t = process.hrtime.bigint();
    fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return median(out);
}

const state = stateOf(resources);
let routes = 0;
const full = time(() => (routes = plan(state, 'n0').routes.length), 7);
const planner = new Planner('n0', stateOf(resources));
let flip = false;
let i = 0;
const incr = time(() => {
  flip = !flip;
  planner.apply({ type: 'update', resource: slice(i++ % SERVICES, flip) });
}, 51);
// A batch of new Services with their slices, planned at once (a burst of watch events, a reload).
const BATCH = 1000;
let next = SERVICES;
const batch = time(() => {
  const events = [];
  for (let k = 0; k < BATCH; k++, next++) events.push({ type: 'add' as const, resource: service(next) }, { type: 'add' as const, resource: slice(next, true) });
  planner.applyAll(events);
}, 7);
console.log(`services=${SERVICES} nodes=${NODES} routes(n0)=${routes}`);
console.log(`plan() from scratch: median ${full.toFixed(2)} ms`);
console.log(`Planner.apply(EndpointSlice update): median ${incr.toFixed(3)} ms`);
console.log(`Planner.applyAll(${BATCH} new Services with slices): median ${batch.toFixed(2)} ms`);
emit({
  suite: 'kubernetes-planner',
  title: `Planner: ${SERVICES.toLocaleString('en-US')} Services on ${NODES} nodes`,
  columns: ['operation', 'median (ms)'],
  rows: [
    [`plan() from scratch (${routes.toLocaleString('en-US')} routes for one node), 7 runs`, full],
    ['Planner.apply: one EndpointSlice update, 51 runs', incr],
    [`Planner.applyAll: ${BATCH.toLocaleString('en-US')} new Services with their slices, 7 runs`, batch],
  ],
  notes: [
    'Half the Services have externalTrafficPolicy Local; each has a cluster IP, an external IP and a load-balancer IP inside the allow-lists, and a slice of three endpoints on three nodes.',
  ],
});
