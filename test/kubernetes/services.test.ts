import { describe, expect, it } from 'vitest';
import { Planner } from '../../src/kubernetes/planner.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { bgpConfig, hostRoutes, node, planFor, prefixes, slice, svc, threeNodes } from './helpers.js';

// Reference §4, one describe per rule. Allow-lists shared by most tests.
const ranges = {
  serviceClusterIPs: [{ cidr: '10.96.0.0/12' }, { cidr: 'fd00:96::/108' }],
  serviceExternalIPs: [{ cidr: '203.0.113.0/24' }, { cidr: '198.51.100.7/32' }, { cidr: '2001:db8:e::1/128' }],
  serviceLoadBalancerIPs: [{ cidr: '192.0.2.128/25' }, { cidr: '192.0.2.99/32' }, { cidr: '2001:db8:1b::/64' }],
};
const NODES = ['worker1', 'worker2', 'master1'];

describe('§4 ranges: every serviceClusterIPs CIDR, from every node', () => {
  it.each(NODES)('%s advertises each cluster range with the BGPConfiguration field as reason', (n) => {
    const p = planFor([...threeNodes(), bgpConfig({ serviceClusterIPs: ranges.serviceClusterIPs })], n);
    expect(prefixes(p)).toEqual(['10.96.0.0/12', 'fd00:96::/108']);
    expect(p.routes[0].reasons).toEqual([{ kind: 'BGPConfiguration', name: 'default', field: 'serviceClusterIPs' }]);
  });
});

describe('§4 ranges: serviceExternalIPs and serviceLoadBalancerIPs except /32 and /128 entries', () => {
  it.each(NODES)('%s advertises the external and LB ranges but not their single-IP entries', (n) => {
    const p = planFor([...threeNodes(), bgpConfig(ranges)], n);
    expect(prefixes(p)).toEqual(['10.96.0.0/12', '192.0.2.128/25', '203.0.113.0/24', '2001:db8:1b::/64', 'fd00:96::/108']);
    const r = p.routes.find((x) => x.prefix.toString() === '203.0.113.0/24')!;
    expect(r.reasons).toEqual([{ kind: 'BGPConfiguration', name: 'default', field: 'serviceExternalIPs' }]);
  });
});

describe('§4 ranges: no LB ranges when serviceLoadBalancerAggregation is Disabled', () => {
  it('keeps cluster and external ranges, drops every LB range', () => {
    const p = planFor([...threeNodes(), bgpConfig({ ...ranges, serviceLoadBalancerAggregation: 'Disabled' })], 'worker1');
    expect(prefixes(p)).toEqual(['10.96.0.0/12', '203.0.113.0/24', 'fd00:96::/108']);
  });
});

describe('§4 exclude-from-external-load-balancers: a labelled node advertises no service routes', () => {
  const resources = (): Resource[] => [
    node('edge', '192.0.2.30', { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' }, podCIDRs: ['10.244.3.0/24'] }),
    node('worker1', '192.0.2.10'),
    bgpConfig(ranges),
    svc('web', { type: 'LoadBalancer', clusterIP: '10.96.0.10', externalIPs: ['198.51.100.7'], eTP: 'Local' }),
    slice('web-1', 'web', [{ node: 'edge' }]),
  ];
  it('the labelled node keeps its pod block only and lists the IPs as refused', () => {
    const p = planFor(resources(), 'edge');
    expect(prefixes(p)).toEqual(['10.244.3.0/24']);
    expect(p.node.serviceAdvertisementExcluded).toBe(true);
    expect(p.refused.map((r) => [r.ip, r.reason])).toEqual([['198.51.100.7', 'node excluded']]);
  });
  it('a label value other than "true" does not exclude', () => {
    const rs = resources();
    rs[0] = node('edge', '192.0.2.30', { labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'false' } });
    const p = planFor(rs, 'edge');
    expect(hostRoutes(p)).toEqual(['10.96.0.10/32', '198.51.100.7/32']);
  });
});

describe('§4 scope: only ClusterIP, NodePort and LoadBalancer services with a clusterIP that is not None', () => {
  it.each([
    ['ExternalName', { type: 'ExternalName', externalIPs: ['198.51.100.7'] }, []],
    ['headless ClusterIP', { type: 'ClusterIP', clusterIP: 'None', externalIPs: ['198.51.100.7'] }, []],
    ['ClusterIP', { type: 'ClusterIP', clusterIP: '10.96.0.5', externalIPs: ['198.51.100.7'] }, ['198.51.100.7/32']],
    ['NodePort', { type: 'NodePort', clusterIP: '10.96.0.5', externalIPs: ['198.51.100.7'] }, ['198.51.100.7/32']],
    ['LoadBalancer', { type: 'LoadBalancer', clusterIP: '10.96.0.5', externalIPs: ['198.51.100.7'] }, ['198.51.100.7/32']],
  ] as const)('%s', (_label, opts, expected) => {
    const p = planFor([...threeNodes(), bgpConfig(ranges), svc('s', opts)], 'worker2');
    expect(hostRoutes(p)).toEqual(expected);
  });
});

describe('§4 rule A: eTP Cluster and the IP in a single-IP allow-list entry: from every node, whatever the endpoints', () => {
  // Calico #11204 counted single external IPs only for some service types: every type counts here.
  it.each([
    ['ClusterIP', 'externalIP', { type: 'ClusterIP', clusterIP: '10.96.0.5', externalIPs: ['198.51.100.7'] }, '198.51.100.7/32'],
    ['NodePort', 'externalIP', { type: 'NodePort', clusterIP: '10.96.0.5', externalIPs: ['198.51.100.7'], eTP: 'Cluster' }, '198.51.100.7/32'],
    ['LoadBalancer', 'externalIP', { type: 'LoadBalancer', clusterIP: '10.96.0.5', externalIPs: ['198.51.100.7'] }, '198.51.100.7/32'],
    ['LoadBalancer', 'loadBalancerIP', { type: 'LoadBalancer', clusterIP: '10.96.0.5', lbIngress: [{ ip: '192.0.2.99' }] }, '192.0.2.99/32'],
    [
      'LoadBalancer IPv6',
      'externalIP',
      { type: 'LoadBalancer', clusterIPs: ['fd00:96::5'], externalIPs: ['2001:db8:e::1'], ipFamilies: ['IPv6'] },
      '2001:db8:e::1/128',
    ],
  ] as const)('%s %s (Calico bug #11204 avoided)', (_t, source, opts, expected) => {
    for (const n of NODES) {
      const p = planFor([...threeNodes(), bgpConfig(ranges), svc('s', opts)], n); // no EndpointSlice at all
      expect(hostRoutes(p)).toEqual([expected]);
      const route = p.routes.find((r) => r.prefix.toString() === expected)!;
      expect(route.reasons).toHaveLength(1);
      expect(route.reasons[0]).toMatchObject({ kind: 'Service', namespace: 'default', name: 's', source, rule: expect.stringContaining('single-IP') });
    }
  });
});

describe('§4 rule B: not Local and aggregation Enabled: nothing more than the ranges', () => {
  it.each([
    ['ClusterIP (no eTP, counts as not Local)', { type: 'ClusterIP', clusterIP: '10.96.0.5', externalIPs: ['203.0.113.5'], eTP: 'Local' as const }],
    ['NodePort eTP Cluster', { type: 'NodePort', clusterIP: '10.96.0.5', externalIPs: ['203.0.113.5'] }],
    ['LoadBalancer eTP Cluster', { type: 'LoadBalancer', clusterIP: '10.96.0.5', lbIngress: [{ ip: '192.0.2.130' }] }],
  ])('%s', (_label, opts) => {
    const p = planFor([...threeNodes(), bgpConfig(ranges), svc('s', opts), slice('s-1', 's', [{ node: 'worker1' }])], 'worker1');
    expect(hostRoutes(p)).toEqual([]);
    expect(prefixes(p)).toContain('203.0.113.0/24');
    expect(p.refused).toEqual([]);
  });
});

describe('§4 rule C Local: advertise only from a node with a ready local endpoint', () => {
  const resources = (): Resource[] => [
    ...threeNodes(),
    bgpConfig(ranges),
    svc('web', { type: 'LoadBalancer', clusterIP: '10.96.0.10', externalIPs: ['203.0.113.10'], lbIngress: [{ ip: '192.0.2.140' }], eTP: 'Local' }),
    slice('web-a', 'web', [{ node: 'worker1', ready: true }]),
    slice('web-b', 'web', [{ node: 'worker2', ready: false }]),
  ];
  it.each([
    ['worker1', ['10.96.0.10/32', '192.0.2.140/32', '203.0.113.10/32'], []],
    ['worker2', [], ['not ready', 'not ready']],
    ['master1', [], ['not-local', 'not-local']],
  ] as const)('%s', (n, routes, refused) => {
    const p = planFor(resources(), n);
    expect(hostRoutes(p)).toEqual(routes);
    expect(p.refused.map((r) => r.reason)).toEqual(refused);
    for (const r of p.routes.filter((x) => x.prefix.length === 32)) {
      expect(r.reasons[0]).toMatchObject({ kind: 'Service', name: 'web', rule: 'externalTrafficPolicy=Local with a ready local endpoint' });
    }
  });
  it('Calico bug #13246 avoided: a not-ready local endpoint attracts no traffic', () => {
    const p = planFor(
      [
        ...threeNodes(),
        bgpConfig(ranges),
        svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', eTP: 'Local' }),
        slice('web-a', 'web', [{ node: 'worker1', ready: false }]),
      ],
      'worker1',
    );
    expect(hostRoutes(p)).toEqual([]);
  });
  it('an endpoint without conditions.ready counts as ready', () => {
    const p = planFor(
      [
        ...threeNodes(),
        bgpConfig(ranges),
        svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', eTP: 'Local' }),
        slice('web-a', 'web', [{ node: 'worker1' }]),
      ],
      'worker1',
    );
    expect(hostRoutes(p)).toEqual(['10.96.0.10/32']);
  });
  it('only slices whose addressType is in the service ipFamilies count', () => {
    const rs = [...threeNodes(), bgpConfig(ranges), svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', eTP: 'Local', ipFamilies: ['IPv4'] })];
    expect(hostRoutes(planFor([...rs, slice('web-6', 'web', [{ node: 'worker1' }], { addressType: 'IPv6' })], 'worker1'))).toEqual([]);
    expect(hostRoutes(planFor([...rs, slice('web-4', 'web', [{ node: 'worker1' }], { addressType: 'IPv4' })], 'worker1'))).toEqual(['10.96.0.10/32']);
  });
  it('slices of another namespace or service do not count', () => {
    const rs = [...threeNodes(), bgpConfig(ranges), svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', eTP: 'Local' })];
    expect(
      hostRoutes(planFor([...rs, slice('x', 'web', [{ node: 'worker1' }], { ns: 'other' }), slice('y', 'api', [{ node: 'worker1' }])], 'worker1')),
    ).toEqual([]);
  });
});

describe('§4 rule C Cluster with aggregation Disabled: from every node if any ready endpoint exists', () => {
  const cfg = bgpConfig({ ...ranges, serviceLoadBalancerAggregation: 'Disabled' });
  const s = svc('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.20', lbIngress: [{ ip: '192.0.2.150' }] });
  it.each(NODES)('%s advertises the /32s when a ready endpoint exists on worker2', (n) => {
    const p = planFor([...threeNodes(), cfg, s, slice('lb-1', 'lb', [{ node: 'worker2' }])], n);
    expect(hostRoutes(p)).toEqual(['10.96.0.20/32', '192.0.2.150/32']);
    expect(p.routes.find((r) => r.prefix.toString() === '192.0.2.150/32')!.reasons[0]).toMatchObject({
      rule: 'serviceLoadBalancerAggregation=Disabled with a ready endpoint',
    });
  });
  it('advertises nothing when every endpoint is not ready, and says why', () => {
    const p = planFor([...threeNodes(), cfg, s, slice('lb-1', 'lb', [{ node: 'worker2', ready: false }])], 'worker1');
    expect(hostRoutes(p)).toEqual([]);
    expect(p.refused).toMatchObject([{ ip: '192.0.2.150', source: 'loadBalancerIP', reason: 'not ready' }]);
  });
});

describe('§4 advertised: clusterIPs only when some serviceClusterIPs CIDR is configured', () => {
  const s = svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', externalIPs: ['203.0.113.10'], eTP: 'Local' });
  const sl = slice('web-a', 'web', [{ node: 'worker1' }]);
  it('without serviceClusterIPs: the external IP only', () => {
    const p = planFor([...threeNodes(), bgpConfig({ serviceExternalIPs: ranges.serviceExternalIPs }), s, sl], 'worker1');
    expect(hostRoutes(p)).toEqual(['203.0.113.10/32']);
  });
  it('with serviceClusterIPs: every clusterIPs entry, /32 and /128', () => {
    const ds = svc('web', { type: 'NodePort', clusterIPs: ['10.96.0.10', 'fd00:96::10'], ipFamilies: ['IPv4', 'IPv6'], eTP: 'Local' });
    const p = planFor([...threeNodes(), bgpConfig(ranges), ds, sl], 'worker1');
    expect(hostRoutes(p)).toEqual(['10.96.0.10/32', 'fd00:96::10/128']);
  });
});

describe('§4 advertised: external IPs only inside serviceExternalIPs', () => {
  it('an external IP outside the allow-list is refused with the reason', () => {
    const p = planFor(
      [
        ...threeNodes(),
        bgpConfig(ranges),
        svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', externalIPs: ['203.0.113.10', '100.64.0.1'], eTP: 'Local' }),
        slice('a', 'web', [{ node: 'worker1' }]),
      ],
      'worker1',
    );
    expect(hostRoutes(p)).toEqual(['10.96.0.10/32', '203.0.113.10/32']);
    expect(p.refused).toEqual([
      {
        namespace: 'default',
        name: 'web',
        ip: '100.64.0.1',
        source: 'externalIP',
        reason: 'outside allow-list',
        message: expect.stringContaining('serviceExternalIPs'),
      },
    ]);
  });
});

describe('§4 advertised: LB ingress IPs from status (not spec) inside serviceLoadBalancerIPs', () => {
  it('Calico bug #11917 avoided: spec.loadBalancerIP alone is never advertised', () => {
    const p = planFor(
      [...threeNodes(), bgpConfig(ranges), svc('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.20', loadBalancerIP: '192.0.2.99' })],
      'worker1',
    );
    expect(hostRoutes(p)).toEqual([]);
  });
  it('the status IP is advertised; one outside the allow-list is refused', () => {
    const p = planFor(
      [
        ...threeNodes(),
        bgpConfig(ranges),
        svc('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.20', lbIngress: [{ ip: '192.0.2.99' }, { ip: '100.64.1.1' }] }),
      ],
      'worker1',
    );
    expect(hostRoutes(p)).toEqual(['192.0.2.99/32']);
    expect(p.refused.map((r) => [r.ip, r.source, r.reason])).toEqual([['100.64.1.1', 'loadBalancerIP', 'outside allow-list']]);
  });
  it('hostname-only ingress entries are ignored', () => {
    const s = svc('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.20', lbIngress: [{ hostname: 'lb.example.com' }] });
    expect(s.loadBalancerIngressIPs).toEqual([]);
    const p = planFor([...threeNodes(), bgpConfig(ranges), s], 'worker1');
    expect(hostRoutes(p)).toEqual([]);
    expect(p.refused).toEqual([]);
  });
});

describe('§4 a route shared by several services stays until the last one goes', () => {
  it('reasons list every service; deleting one keeps the route, deleting both withdraws it', () => {
    const a = svc('a', { type: 'ClusterIP', clusterIP: '10.96.0.1', externalIPs: ['198.51.100.7'] });
    const b = svc('b', { type: 'NodePort', clusterIP: '10.96.0.2', externalIPs: ['198.51.100.7'], ns: 'other' });
    const planner = new Planner('worker1', stateOf([...threeNodes(), bgpConfig(ranges), a, b]));
    const r = planner.plan.routes.find((x) => x.prefix.toString() === '198.51.100.7/32')!;
    expect(r.reasons.map((x) => (x.kind === 'Service' ? `${x.namespace}/${x.name}` : x.kind))).toEqual(['default/a', 'other/b']);
    const first = planner.apply({ type: 'delete', kind: 'Service', namespace: 'default', name: 'a' });
    expect(first.diff.removed).toEqual([]);
    expect(hostRoutes(first.plan)).toEqual(['198.51.100.7/32']);
    const second = planner.apply({ type: 'delete', kind: 'Service', namespace: 'other', name: 'b' });
    expect(second.diff.removed.map((x) => x.prefix.toString())).toEqual(['198.51.100.7/32']);
    expect(hostRoutes(second.plan)).toEqual([]);
  });
});

describe('§4 Calico bug (EndpointSlice key mismatch) avoided: deleting a slice withdraws at once', () => {
  it('a delete event carrying only the slice identity removes the eTP Local route', () => {
    const planner = new Planner(
      'worker1',
      stateOf([
        ...threeNodes(),
        bgpConfig(ranges),
        svc('web', { type: 'NodePort', clusterIP: '10.96.0.10', eTP: 'Local', ns: 'shop' }),
        slice('web-x1', 'web', [{ node: 'worker1' }], { ns: 'shop' }),
      ]),
    );
    expect(hostRoutes(planner.plan)).toEqual(['10.96.0.10/32']);
    const out = planner.apply({ type: 'delete', kind: 'EndpointSlice', namespace: 'shop', name: 'web-x1' });
    expect(out.diff.removed.map((r) => r.prefix.toString())).toEqual(['10.96.0.10/32']);
    expect(hostRoutes(out.plan)).toEqual([]);
    expect(planner.lastRecomputed).toBe(1);
  });
});

describe('§4 an empty entry in a service range list (Calico case mesh/static-routes)', () => {
  it('is left out and the other ranges are advertised', () => {
    const conf = bgpConfig({
      serviceClusterIPs: [{ cidr: '198.18.0.0/16' }, {}, { cidr: '2001:db8:96::/112' }],
      serviceLoadBalancerIPs: [{ cidr: '203.0.113.0/24' }, {}],
    });
    const p = planFor([node('worker1', '192.0.2.10', { annotations: { 'projectcalico.org/IPv6Address': '2001:db8::10/64' } }), conf], 'worker1');
    expect(p.routes.map((r) => r.prefix.toString())).toEqual(['198.18.0.0/16', '203.0.113.0/24', '2001:db8:96::/112']);
    expect(p.exportAllowList.serviceRanges.map((r) => [r.prefix.toString(), r.field])).toEqual([
      ['198.18.0.0/16', 'serviceClusterIPs'],
      ['2001:db8:96::/112', 'serviceClusterIPs'],
      ['203.0.113.0/24', 'serviceLoadBalancerIPs'],
    ]);
  });
});
