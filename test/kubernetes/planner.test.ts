import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plan } from '../../src/kubernetes/plan.js';
import { newlyRefused, Planner } from '../../src/kubernetes/planner.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { ClusterState, stateOf, type ClusterEvent } from '../../src/kubernetes/state.js';
import { affinity, bgpConfig, node, peer, pool, slice, svc, threeNodes } from './helpers.js';

// ---- a small universe of resources, so that random events collide often ----

const nodeIPs: Record<string, string> = { worker1: '192.0.2.10', worker2: '192.0.2.11', master1: '192.0.2.12' };
const nodeName = fc.constantFrom('worker1', 'worker2', 'master1');
const ns = fc.constantFrom('ns0', 'ns1');
const svcName = fc.constantFrom('s0', 's1', 's2');
const subset = <T>(xs: T[]) => fc.subarray(xs);

const nodeArb = fc
  .record({
    name: nodeName,
    exclude: fc.boolean(),
    rr: fc.boolean(),
    asn: fc.option(fc.constantFrom('64512', '65001'), { nil: undefined }),
    pod: subset(['10.244.0.0/24', '10.244.9.0/24']),
  })
  .map(({ name, exclude, rr, asn, pod }) =>
    node(name, nodeIPs[name], {
      labels: { ...(exclude ? { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } : {}), ...(rr ? { rr: 'yes' } : {}) },
      annotations: { ...(asn ? { 'projectcalico.org/ASNumber': asn } : {}), ...(rr ? { 'projectcalico.org/RouteReflectorClusterID': '244.0.0.1' } : {}) },
      podCIDRs: pod,
    }),
  );

const serviceArb = fc
  .record({
    name: svcName,
    ns,
    type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'),
    headless: fc.boolean(),
    clusterIP: fc.constantFrom('10.96.0.1', '10.96.0.2'),
    externalIPs: subset(['203.0.113.5', '198.51.100.7', '100.64.0.1']),
    lb: subset(['192.0.2.130', '192.0.2.99', '100.64.9.9']),
    eTP: fc.constantFrom('Cluster', 'Local') as fc.Arbitrary<'Cluster' | 'Local'>,
  })
  .map((o) =>
    svc(o.name, {
      ns: o.ns,
      type: o.type,
      clusterIP: o.headless ? 'None' : o.clusterIP,
      externalIPs: o.externalIPs,
      lbIngress: o.lb.map((ip) => ({ ip })),
      eTP: o.type === 'ClusterIP' ? undefined : o.eTP,
    }),
  );

const sliceArb = fc
  .record({
    name: fc.constantFrom('e0', 'e1', 'e2', 'e3'),
    ns,
    service: svcName,
    addressType: fc.constantFrom('IPv4', 'IPv4', 'IPv6'),
    endpoints: fc.array(fc.record({ node: nodeName, ready: fc.option(fc.boolean(), { nil: undefined }) }), { maxLength: 3 }),
  })
  .map((o) => slice(o.name, o.service, o.endpoints, { ns: o.ns, addressType: o.addressType }));

const configArb = fc
  .record({
    perNode: fc.boolean(),
    clusterIPs: subset([{ cidr: '10.96.0.0/12' }]),
    externalIPs: subset([{ cidr: '203.0.113.0/24' }, { cidr: '198.51.100.7/32' }]),
    lbIPs: subset([{ cidr: '192.0.2.128/25' }, { cidr: '192.0.2.99/32' }]),
    aggregation: fc.constantFrom('Enabled', 'Disabled'),
    mesh: fc.boolean(),
    adverts: subset([
      { cidr: '10.96.0.0/12', communities: ['64512:1', 'named'] },
      { cidr: '0.0.0.0/0', communities: ['65000:1:2'] },
    ]),
  })
  .map((o) =>
    o.perNode
      ? bgpConfig({ prefixAdvertisements: o.adverts, listenPort: 1179 }, 'node.worker1')
      : bgpConfig({
          serviceClusterIPs: o.clusterIPs,
          serviceExternalIPs: o.externalIPs,
          serviceLoadBalancerIPs: o.lbIPs,
          serviceLoadBalancerAggregation: o.aggregation,
          nodeToNodeMeshEnabled: o.mesh,
          communities: [{ name: 'named', value: '65000:7' }],
          prefixAdvertisements: o.adverts,
        }),
  );

const poolArb = fc
  .record({
    name: fc.constantFrom('p0', 'p1'),
    cidr: fc.constantFrom('198.19.0.0/16', '10.244.0.0/16'),
    disabled: fc.boolean(),
    disableBGPExport: fc.boolean(),
  })
  .map((o) => pool(o.name, { cidr: o.cidr, disabled: o.disabled, disableBGPExport: o.disableBGPExport }));

const affinityArb = fc
  .record({ node: nodeName, cidr: fc.constantFrom('198.19.0.0/26', '198.19.0.64/26', '10.244.0.0/26'), state: fc.constantFrom('confirmed', 'pending') })
  .map((o) => affinity(o.node, o.cidr, o.state));

const peerArb = fc
  .record({ name: fc.constantFrom('tor', 'rr'), selector: fc.boolean(), node: fc.option(nodeName, { nil: undefined }) })
  .map((o) =>
    peer(
      o.name,
      o.selector
        ? { peerSelector: 'has(rr)', ...(o.node ? { node: o.node } : {}) }
        : { peerIP: '192.0.2.20', asNumber: 65000, ...(o.node ? { node: o.node } : {}) },
    ),
  );

const resourceArb: fc.Arbitrary<Resource> = fc.oneof(
  { arbitrary: serviceArb, weight: 4 },
  { arbitrary: sliceArb, weight: 4 },
  { arbitrary: nodeArb, weight: 1 },
  { arbitrary: configArb, weight: 2 },
  { arbitrary: poolArb, weight: 1 },
  { arbitrary: affinityArb, weight: 1 },
  { arbitrary: peerArb, weight: 1 },
);

const eventArb: fc.Arbitrary<ClusterEvent> = fc.oneof(
  { arbitrary: resourceArb.map((resource): ClusterEvent => ({ type: 'update', resource })), weight: 4 },
  {
    // Deletes name only the identity, like a watch DELETE.
    arbitrary: resourceArb.map((r): ClusterEvent => ({ type: 'delete', kind: r.kind, name: r.name, namespace: 'namespace' in r ? r.namespace : undefined })),
    weight: 1,
  },
);

/** Start with every allow-list configured, so that most random services produce routes. */
const initial = (): Resource[] => [
  ...threeNodes(),
  bgpConfig({
    serviceClusterIPs: [{ cidr: '10.96.0.0/12' }],
    serviceExternalIPs: [{ cidr: '203.0.113.0/24' }, { cidr: '198.51.100.7/32' }],
    serviceLoadBalancerIPs: [{ cidr: '192.0.2.128/25' }, { cidr: '192.0.2.99/32' }],
    serviceLoadBalancerAggregation: 'Disabled',
  }),
];

describe('Planner (incremental)', () => {
  /** Applies each batch to a planner and to a reference state: the plan equals plan() from scratch, the diffs replay. */
  const replays = (batches: ClusterEvent[][], me: string, step: (p: Planner, batch: ClusterEvent[]) => ReturnType<Planner['applyAll']>) => {
    const reference = stateOf(initial());
    const planner = new Planner(me, stateOf(initial()));
    const routes = new Map(planner.plan.routes.map((r) => [String(r.prefix), r]));
    for (const batch of batches) {
      for (const ev of batch) reference.apply(ev);
      const { plan: p, diff } = step(planner, batch);
      for (const r of diff.removed) expect(routes.delete(String(r.prefix))).toBe(true);
      for (const r of [...diff.added, ...diff.changed]) routes.set(String(r.prefix), r);
      expect(p).toEqual(plan(reference, me));
      expect([...routes.keys()].sort()).toEqual(p.routes.map((r) => String(r.prefix)).sort());
    }
  };

  it('after any event sequence equals a from-scratch plan(state, node), and its diffs replay to the new route set', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 25 }), nodeName, (events, me) =>
        replays(
          events.map((ev) => [ev]),
          me,
          (p, [ev]) => p.apply(ev),
        ),
      ),
      { numRuns: 300 },
    );
  });

  it('applyAll over random batches equals a from-scratch plan, and its diffs replay to the new route set', () => {
    fc.assert(
      fc.property(fc.array(fc.array(eventArb, { maxLength: 8 }), { maxLength: 6 }), nodeName, (batches, me) =>
        replays(batches, me, (p, batch) => p.applyAll(batch)),
      ),
      { numRuns: 200 },
    );
  });

  it('a large batch of Service events (merged, not spliced) equals a from-scratch plan', () => {
    const base: Resource[] = [...threeNodes(), bgpConfig({ serviceClusterIPs: [{ cidr: '10.96.0.0/12' }], serviceExternalIPs: [{ cidr: '203.0.113.0/24' }] })];
    const reference = stateOf(base);
    const planner = new Planner('worker1', stateOf(base));
    const add: ClusterEvent[] = [];
    // Even services have a ready endpoint on worker1; odd ones only elsewhere (their external IP refused as not-local).
    for (let i = 0; i < 120; i++) {
      add.push({ type: 'add', resource: svc(`s${i}`, { type: 'LoadBalancer', clusterIP: `10.96.1.${i}`, externalIPs: [`203.0.113.${i}`], eTP: 'Local' }) });
      add.push({ type: 'add', resource: slice(`s${i}-e`, `s${i}`, [{ node: i % 2 === 0 ? 'worker1' : 'worker2' }]) });
    }
    const drop: ClusterEvent[] = [];
    for (let i = 0; i < 120; i += 3) drop.push({ type: 'delete', kind: 'Service', name: `s${i}`, namespace: 'default' });
    // Odd services below 110 get a ready endpoint here: their refused IPs go, their routes come (both merged).
    const move: ClusterEvent[] = [];
    for (let i = 1; i < 110; i += 2) move.push({ type: 'update', resource: slice(`s${i}-e`, `s${i}`, [{ node: 'worker1' }]) });
    for (const batch of [add, drop, move]) {
      for (const ev of batch) reference.apply(ev);
      const before = new Set(planner.plan.routes.map((r) => String(r.prefix)));
      const { plan: p, diff } = planner.applyAll(batch);
      expect(p).toEqual(plan(reference, 'worker1'));
      for (const r of diff.removed) before.delete(String(r.prefix));
      for (const r of diff.added) before.add(String(r.prefix));
      expect([...before].sort()).toEqual(p.routes.map((r) => String(r.prefix)).sort());
    }
    const kept = Array.from({ length: 120 }, (_, i) => i).filter((i) => i % 3 !== 0);
    const local = (i: number) => i % 2 === 0 || i < 110;
    // Two /32s (cluster and external IP) per kept local service; one refused external IP per kept remote one.
    expect(planner.plan.routes.filter((r) => r.prefix.length === 32).length).toBe(2 * kept.filter(local).length);
    expect(planner.plan.refused.map((r) => `${r.name} ${r.reason}`)).toEqual(
      kept
        .filter((i) => !local(i))
        .map((i) => `s${i} not-local`)
        .sort(),
    );
  });

  it('a Service or EndpointSlice event recomputes only the services it touches', () => {
    const rs: Resource[] = [...threeNodes(), bgpConfig({ serviceClusterIPs: [{ cidr: '10.96.0.0/12' }] })];
    for (let i = 0; i < 50; i++) rs.push(svc(`s${i}`, { type: 'NodePort', clusterIP: `10.96.1.${i}`, eTP: 'Local' }));
    const planner = new Planner('worker1', stateOf(rs));
    const out = planner.apply({ type: 'add', resource: slice('s7-abc', 's7', [{ node: 'worker1' }]) });
    expect(planner.lastRecomputed).toBe(1);
    expect(out.diff.added.map((r) => String(r.prefix))).toEqual(['10.96.1.7/32']);
    expect(out.diff.removed).toEqual([]);
    // Moving a slice to another service recomputes both.
    const moved = planner.apply({ type: 'update', resource: slice('s7-abc', 's8', [{ node: 'worker1' }]) });
    expect(planner.lastRecomputed).toBe(2);
    expect(moved.diff.removed.map((r) => String(r.prefix))).toEqual(['10.96.1.7/32']);
    expect(moved.diff.added.map((r) => String(r.prefix))).toEqual(['10.96.1.8/32']);
    // Global configuration recomputes every service.
    planner.apply({ type: 'update', resource: bgpConfig({}) });
    expect(planner.lastRecomputed).toBe(50);
    expect(planner.plan.routes).toEqual([]);
  });

  it('a diff reports community changes as changed, not as withdraw + announce', () => {
    const planner = new Planner('worker1', stateOf([...threeNodes(), bgpConfig({ serviceClusterIPs: [{ cidr: '10.96.0.0/12' }] })]));
    const out = planner.apply({
      type: 'update',
      resource: bgpConfig({ serviceClusterIPs: [{ cidr: '10.96.0.0/12' }], prefixAdvertisements: [{ cidr: '10.0.0.0/8', communities: ['64512:100'] }] }),
    });
    expect([out.diff.added, out.diff.removed]).toEqual([[], []]);
    expect(out.diff.changed.map((r) => [String(r.prefix), r.communities.map((c) => c.text)])).toEqual([['10.96.0.0/12', ['64512:100']]]);
  });

  it('newlyRefused names the IPs a change refused, or refused for another reason, and nothing carried over', () => {
    const base: Resource[] = [...threeNodes(), bgpConfig({ serviceExternalIPs: [{ cidr: '203.0.113.0/24' }] })];
    for (let i = 0; i < 6; i++) base.push(svc(`s${i}`, { type: 'LoadBalancer', clusterIP: `10.96.1.${i}`, externalIPs: [`203.0.113.${i}`], eTP: 'Local' }));
    const planner = new Planner('worker1', stateOf(base));
    const before = planner.plan.refused;
    expect(before.map((r) => r.reason)).toEqual(Array(6).fill('not-local'));
    // s2 gets a not-ready local endpoint (refused for another reason), s4 a ready one (no longer refused), s9 arrives outside the allow-list.
    const after = planner.applyAll([
      { type: 'add', resource: slice('s2-e', 's2', [{ node: 'worker1', ready: false }]) },
      { type: 'add', resource: slice('s4-e', 's4', [{ node: 'worker1' }]) },
      { type: 'add', resource: svc('s9', { type: 'LoadBalancer', clusterIP: '10.96.1.9', externalIPs: ['198.51.100.9'] }) },
    ]).plan.refused;
    expect(newlyRefused(before, after).map((r) => `${r.name} ${r.reason}`)).toEqual(['s2 not ready', 's9 outside allow-list']);
    expect(newlyRefused(after, after)).toEqual([]);
    expect(newlyRefused([], after)).toEqual(after);
  });

  it('an unknown node plans no peers and says so', () => {
    const p = new Planner('ghost', new ClusterState()).plan;
    expect(p.peers).toEqual([]);
    expect(p.errors).toEqual([{ kind: 'Node', name: 'ghost', message: 'node ghost is not in the cluster state: no peers are planned' }]);
  });
});
