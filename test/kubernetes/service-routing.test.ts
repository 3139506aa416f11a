/**
 * Per-Service routing annotations (src/kubernetes/service-routing.ts) and
 * weighted ECMP by local endpoints, through the planner: what each
 * annotation puts on the route, the errors that name the field, and what a
 * bad annotation leaves alone.
 */
import { describe, expect, it } from 'vitest';
import { eventsFromPlan } from '../../src/kubernetes/events.js';
import { plan } from '../../src/kubernetes/plan.js';
import { diffPlans, Planner } from '../../src/kubernetes/planner.js';
import { parseServiceRouting, SERVICE_ANNOTATIONS as A } from '../../src/kubernetes/service-routing.js';
import { stateOf } from '../../src/kubernetes/state.js';
import type { Plan, PlannedRoute } from '../../src/kubernetes/plan-types.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { hostRoutes, node, peer, slice, svc, valid } from './helpers.js';

const LB = '203.0.113.0/24';
const base = (extra: Record<string, unknown> = {}, annotations?: Record<string, string>): Resource[] => [
  node('worker1', '192.0.2.10'),
  node('worker2', '192.0.2.11'),
  valid({
    apiVersion: 'projectcalico.org/v3',
    kind: 'BGPConfiguration',
    metadata: { name: 'default', ...(annotations ? { annotations } : {}) },
    spec: { asNumber: 64512, serviceLoadBalancerIPs: [{ cidr: LB }], serviceLoadBalancerAggregation: 'Disabled', ...extra },
  }),
  peer('tor-a', { peerIP: '198.51.100.1', asNumber: 65000 }),
  peer('tor-b', { peerIP: '198.51.100.2', asNumber: 65000 }),
];
const lbSvc = (name: string, ips: string[], annotations: Record<string, string>, eTP: 'Cluster' | 'Local' = 'Cluster') =>
  svc(name, { type: 'LoadBalancer', clusterIP: '10.96.0.9', lbIngress: ips.map((ip) => ({ ip })), eTP, annotations });
const ready = (name: string, nodes: string[]) =>
  slice(
    `${name}-1`,
    name,
    nodes.map((n) => ({ node: n })),
  );
const route = (p: Plan, prefix: string): PlannedRoute | undefined => p.routes.find((r) => r.prefix.toString() === prefix);

describe('Service routing annotations', () => {
  it('each control reaches the route, with the annotations that shaped it', () => {
    const p = plan(
      stateOf([
        ...base(),
        lbSvc('web', ['203.0.113.10'], {
          [A.communities]: '65000:100, no-export',
          [A.largeCommunities]: '64512:1:2',
          [A.med]: '50',
          [A.asPathPrepend]: '2',
          [A.localPref]: '300',
          [A.peers]: 'tor-a',
        }),
        ready('web', ['worker1']),
      ]),
      'worker1',
    );
    expect(p.errors).toEqual([]);
    const s = route(p, '203.0.113.10/32')!.shaping!;
    expect(s.communities!.map((c) => c.text)).toEqual(['65000:100', 'no-export', '64512:1:2']);
    expect(s).toMatchObject({ med: 50, prepend: 2, localPref: 300, peers: [p.peers.find((x) => x.from.name === 'tor-a')!.id] });
    expect(s.by).toEqual([
      `${A.communities}=65000:100, no-export`,
      `${A.largeCommunities}=64512:1:2`,
      `${A.med}=50`,
      `${A.asPathPrepend}=2`,
      `${A.localPref}=300`,
      `${A.peers}=tor-a`,
    ]);
    expect(s.linkBandwidth).toBeUndefined();
  });

  it('a peer selector picks BGPPeers by their labels', () => {
    const labelled = valid<Resource>({
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPPeer',
      metadata: { name: 'tor-c', labels: { rack: 'r1' } },
      spec: { peerIP: '198.51.100.3', asNumber: 65000 },
    });
    const p = plan(stateOf([...base(), labelled, lbSvc('web', ['203.0.113.10'], { [A.peerSelector]: "rack == 'r1'" }), ready('web', ['worker1'])]), 'worker1');
    expect(route(p, '203.0.113.10/32')!.shaping!.peers).toEqual([p.peers.find((x) => x.from.name === 'tor-c')!.id]);
  });

  it('advertise=range: no /32, the IP listed as covered by the range; without a covering range that IP alone is an error', () => {
    const cfg = { serviceLoadBalancerIPs: [{ cidr: LB }, { cidr: '198.51.100.77/32' }], serviceLoadBalancerAggregation: 'Enabled' };
    const p = plan(
      stateOf([...base(cfg), lbSvc('web', ['203.0.113.10', '198.51.100.77'], { [A.advertise]: 'range' }, 'Local'), ready('web', ['worker1'])]),
      'worker1',
    );
    expect(hostRoutes(p)).toEqual([]);
    expect(route(p, LB)).toBeDefined();
    expect(p.refused.map((r) => [r.ip, r.reason])).toEqual([
      ['198.51.100.77', 'bad annotation'],
      ['203.0.113.10', 'range only'],
    ]);
    expect(p.errors).toEqual([
      expect.objectContaining({
        kind: 'Service',
        name: 'web',
        field: `metadata.annotations.${A.advertise}`,
        message: expect.stringContaining('no advertised serviceLoadBalancerIPs range covers 198.51.100.77'),
      }),
    ]);
    // The other way round: host mode (default) advertises the /32 as before.
    const q = plan(stateOf([...base(cfg), lbSvc('web', ['198.51.100.77'], { [A.advertise]: 'host' }), ready('web', ['worker1'])]), 'worker1');
    expect(hostRoutes(q)).toEqual(['198.51.100.77/32']);
  });

  it.each([
    [A.med, 'fifty', /expected an integer 0\.\.4294967295, got "fifty"/],
    [A.asPathPrepend, '40', /expected an integer 0\.\.32, got 40/],
    [A.localPref, '-1', /expected an integer/],
    [A.communities, '65000:100 70000:1', /community AS.*70000 is above 65535/],
    [A.largeCommunities, '1:2', /large community/],
    [A.advertise, 'aggregate', /expected "host".*or "range"/],
    [A.weightedEcmp, 'yes', /expected "true" or "false"/],
    [A.peerSelector, 'rack ==', /./],
    [A.peers, ' , ', /names no BGPPeer/],
    ['tsbgp.io/meds', '5', /unknown tsbgp\.io annotation/],
  ])('a bad %s (%j) is an error naming the field; that Service waits, the others keep their routes', (key, value, message) => {
    const p = plan(
      stateOf([
        ...base(),
        lbSvc('bad', ['203.0.113.10', '203.0.113.11'], { [key]: value }),
        lbSvc('good', ['203.0.113.20'], { [A.med]: '5' }),
        ready('bad', ['worker1']),
        ready('good', ['worker1']),
      ]),
      'worker1',
    );
    expect(p.errors).toEqual([
      expect.objectContaining({
        kind: 'Service',
        namespace: 'default',
        name: 'bad',
        field: `metadata.annotations.${key}`,
        message: expect.stringMatching(message),
      }),
    ]);
    expect(hostRoutes(p)).toEqual(['203.0.113.20/32']);
    expect(p.refused.map((r) => `${r.name} ${r.ip} ${r.reason}`)).toEqual(['bad 203.0.113.10 bad annotation', 'bad 203.0.113.11 bad annotation']);
    expect(p.refused[0].message).toContain(`metadata.annotations.${key}`);
    // A Kubernetes Event on the Service, naming the field.
    const events = eventsFromPlan(p, 'worker1', { serviceExternalIPs: [], serviceLoadBalancerIPs: [] });
    expect(events).toEqual([
      expect.objectContaining({
        involved: { kind: 'Service', name: 'bad', namespace: 'default' },
        reason: 'BadAnnotation',
        message: expect.stringContaining(`metadata.annotations.${key}`),
      }),
    ]);
  });

  it('a BGPPeer name that does not exist is an error; the route goes to the peers that do match', () => {
    const p = plan(stateOf([...base(), lbSvc('web', ['203.0.113.10'], { [A.peers]: 'tor-a tor-z' }), ready('web', ['worker1'])]), 'worker1');
    expect(p.errors).toEqual([expect.objectContaining({ name: 'web', field: `metadata.annotations.${A.peers}`, message: 'BGPPeer "tor-z" does not exist' })]);
    expect(route(p, '203.0.113.10/32')!.shaping!.peers).toHaveLength(1);
  });

  it('annotations outside tsbgp.io are none of its business', () => {
    expect(parseServiceRouting({ 'metallb.universe.tf/address-pool': 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' })).toEqual({
      routing: expect.objectContaining({ annotations: [] }),
      errors: [],
    });
  });
});

describe('weighted ECMP by ready local endpoints', () => {
  const eps = (n: number, m: number) =>
    slice('web-1', 'web', [
      ...Array<{ node: string }>(n).fill({ node: 'worker1' }),
      ...Array<{ node: string }>(m).fill({ node: 'worker2' }),
      { node: 'worker1', ready: false } as { node: string },
    ]);

  it('Local + opted in: link bandwidth = ready local endpoints × 125,000 bytes/s, AS of the node', () => {
    const st = stateOf([...base(), lbSvc('web', ['203.0.113.10'], { [A.weightedEcmp]: 'true' }, 'Local'), eps(3, 1)]);
    expect(route(plan(st, 'worker1'), '203.0.113.10/32')!.shaping!.linkBandwidth).toEqual({ asn: 64512, endpoints: 3, bytesPerSecond: 375_000 });
    expect(route(plan(st, 'worker2'), '203.0.113.10/32')!.shaping!.linkBandwidth).toEqual({ asn: 64512, endpoints: 1, bytesPerSecond: 125_000 });
    expect(route(plan(st, 'worker2'), '203.0.113.10/32')!.shaping!.by).toEqual([
      `${A.weightedEcmp}=true`,
      'weighted ECMP (tsbgp.io/weighted-ecmp): 1 ready local endpoint',
    ]);
  });

  it('off unless asked: per Service, or for the cluster on the default BGPConfiguration (a Service can say no)', () => {
    const local = (ann: Record<string, string>) => lbSvc('web', ['203.0.113.10'], ann, 'Local');
    expect(route(plan(stateOf([...base(), local({}), eps(3, 1)]), 'worker1'), '203.0.113.10/32')!.shaping).toBeUndefined();
    const cluster = base({}, { [A.weightedEcmp]: 'true' });
    const p = plan(stateOf([...cluster, local({}), eps(3, 1)]), 'worker1');
    expect(route(p, '203.0.113.10/32')!.shaping).toEqual({
      by: ['weighted ECMP (BGPConfiguration default tsbgp.io/weighted-ecmp): 3 ready local endpoints'],
      linkBandwidth: { asn: 64512, endpoints: 3, bytesPerSecond: 375_000 },
    });
    expect(
      route(plan(stateOf([...cluster, local({ [A.weightedEcmp]: 'false' }), eps(3, 1)]), 'worker1'), '203.0.113.10/32')!.shaping!.linkBandwidth,
    ).toBeUndefined();
    // Cluster policy: every node is an equal path; no weight.
    expect(route(plan(stateOf([...cluster, lbSvc('web', ['203.0.113.10'], {}, 'Cluster'), eps(3, 1)]), 'worker1'), '203.0.113.10/32')!.shaping).toBeUndefined();
  });

  it('a 4-byte node AS goes in the community as AS_TRANS', () => {
    const p = plan(stateOf([...base({ asNumber: 4200000001 }), lbSvc('web', ['203.0.113.10'], { [A.weightedEcmp]: 'true' }, 'Local'), eps(2, 0)]), 'worker1');
    expect(route(p, '203.0.113.10/32')!.shaping!.linkBandwidth!.asn).toBe(23456);
  });

  it('a bad cluster-wide annotation is a validation error on the BGPConfiguration', () => {
    expect(() => bgpConfigWith({ [A.weightedEcmp]: 'maybe' })).toThrow(/metadata\.annotations\.tsbgp\.io\/weighted-ecmp.*true.*or.*false.*maybe/);
  });

  it('the incremental planner re-plans the weight on an EndpointSlice change and reports the route changed', () => {
    const planner = new Planner('worker1', stateOf([...base(), lbSvc('web', ['203.0.113.10'], { [A.weightedEcmp]: 'true' }, 'Local'), eps(3, 1)]));
    const before = planner.plan;
    const { plan: after, diff } = planner.apply({ type: 'update', resource: eps(2, 2) });
    expect(diff.changed.map((r) => r.prefix.toString())).toEqual(['203.0.113.10/32']);
    expect(diff.added).toEqual([]);
    expect(route(after, '203.0.113.10/32')!.shaping!.linkBandwidth!.bytesPerSecond).toBe(250_000);
    expect(diffPlans(before, after).changed.map((r) => r.prefix.toString())).toEqual(['203.0.113.10/32']);
    expect(after).toEqual(plan(planner.state, 'worker1'));
    // An annotation edit is a change too; removing every annotation as well.
    const edited = planner.apply({ type: 'update', resource: lbSvc('web', ['203.0.113.10'], { [A.weightedEcmp]: 'true', [A.med]: '7' }, 'Local') });
    expect(edited.diff.changed.map((r) => r.shaping?.med)).toEqual([7]);
    const plain = planner.apply({ type: 'update', resource: lbSvc('web', ['203.0.113.10'], {}, 'Local') });
    expect(plain.diff.changed.map((r) => r.shaping)).toEqual([undefined]);
    expect(plain.plan).toEqual(plan(planner.state, 'worker1'));
  });

  it('the planner keeps Service errors across incremental changes, and re-resolves peers when BGPPeers change', () => {
    const planner = new Planner('worker1', stateOf([...base(), lbSvc('web', ['203.0.113.10'], { [A.peers]: 'tor-c' }), ready('web', ['worker1'])]));
    expect(planner.plan.errors.map((e) => e.message)).toEqual(['BGPPeer "tor-c" does not exist']);
    const { plan: p } = planner.apply({ type: 'add', resource: peer('tor-c', { peerIP: '198.51.100.3', asNumber: 65000 }) });
    expect(p.errors).toEqual([]);
    expect(route(p, '203.0.113.10/32')!.shaping!.peers).toEqual([p.peers.find((x) => x.from.name === 'tor-c')!.id]);
    expect(p).toEqual(plan(planner.state, 'worker1'));
  });
});

function bgpConfigWith(annotations: Record<string, string>) {
  return valid({ apiVersion: 'projectcalico.org/v3', kind: 'BGPConfiguration', metadata: { name: 'default', annotations }, spec: {} });
}
