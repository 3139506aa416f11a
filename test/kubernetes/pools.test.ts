import { describe, expect, it } from 'vitest';
import { affinity, bgpConfig, node, planFor, pool, prefixes, threeNodes } from './helpers.js';

describe('§5 pod blocks: BlockAffinities confirmed for this node', () => {
  it('exports confirmed blocks of this node only, with the BlockAffinity as reason', () => {
    const rs = [
      ...threeNodes(),
      pool('default-ipv4', { cidr: '198.19.0.0/16', blockSize: 26 }),
      affinity('worker1', '198.19.0.0/26'),
      affinity('worker1', '198.19.0.64/26', 'pending'),
      affinity('worker1', '198.19.0.128/26', 'pendingDeletion'),
      affinity('worker2', '198.19.1.0/26'),
    ];
    const p = planFor(rs, 'worker1');
    expect(prefixes(p)).toEqual(['198.19.0.0/26']);
    expect(p.routes[0].reasons).toEqual([{ kind: 'BlockAffinity', name: 'worker1-198-19-0-0-26', field: 'spec.cidr' }]);
  });
});

describe('§5 pod blocks: an affinity marked deleted is not confirmed', () => {
  it('deleted: "true" drops the block', async () => {
    const { validateObject } = await import('../../src/kubernetes/validate.js');
    const r = validateObject({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'BlockAffinity',
      metadata: { name: 'x' },
      spec: { node: 'worker1', cidr: '198.19.0.0/26', state: 'confirmed', deleted: 'true' },
    });
    expect(r.ok && r.resource.kind === 'BlockAffinity' && r.resource.state).toBe('pendingDeletion');
    if (r.ok) expect(prefixes(planFor([...threeNodes(), r.resource], 'worker1'))).toEqual([]);
  });
});

describe('§5 pod blocks: Node spec.podCIDRs when no BlockAffinity is confirmed for the node', () => {
  it('uses the podCIDRs (plain Kubernetes IPAM)', () => {
    const p = planFor(
      [node('worker1', '192.0.2.10', { podCIDRs: ['10.244.1.0/24', 'fd00:244:1::/64'] }), affinity('worker1', '198.19.0.0/26', 'pending')],
      'worker1',
    );
    expect(prefixes(p)).toEqual(['10.244.1.0/24', 'fd00:244:1::/64']);
    expect(p.routes[0].reasons).toEqual([{ kind: 'Node', name: 'worker1', field: 'spec.podCIDRs' }]);
  });
  it('confirmed BlockAffinities take precedence over podCIDRs', () => {
    const p = planFor([node('worker1', '192.0.2.10', { podCIDRs: ['10.244.1.0/24'] }), affinity('worker1', '198.19.0.0/26')], 'worker1');
    expect(prefixes(p)).toEqual(['198.19.0.0/26']);
  });
});

describe('§5 built-in export: blocks of pools with disableBGPExport are not exported', () => {
  it('drops blocks inside the non-exported pool, keeps the others', () => {
    const rs = [
      ...threeNodes(),
      pool('routable', { cidr: '198.19.0.0/16' }),
      pool('private', { cidr: '100.64.0.0/16', disableBGPExport: true }),
      affinity('worker1', '198.19.0.0/26'),
      affinity('worker1', '100.64.0.0/26'),
    ];
    expect(prefixes(planFor(rs, 'worker1'))).toEqual(['198.19.0.0/26']);
  });
});

describe('§5 export allow-list: every IP pool including disabled ones, plus the service ranges', () => {
  it('exposes pools (with flags) and service ranges for redistributed routes', () => {
    const rs = [
      ...threeNodes(),
      bgpConfig({ serviceClusterIPs: [{ cidr: '198.18.0.0/16' }], serviceLoadBalancerIPs: [{ cidr: '203.0.113.0/24' }, { cidr: '203.0.114.1/32' }] }),
      pool('metallb-allow', { cidr: '203.0.113.0/24', disabled: true }),
      pool('pods', { cidr: '198.19.0.0/16' }),
      pool('hidden', { cidr: '100.64.0.0/16', disableBGPExport: true }),
    ];
    const p = planFor(rs, 'worker2');
    expect(p.exportAllowList.pools.map((x) => [x.name, x.cidr.toString(), x.disabled, x.disableBGPExport])).toEqual([
      ['hidden', '100.64.0.0/16', false, true],
      ['pods', '198.19.0.0/16', false, false],
      ['metallb-allow', '203.0.113.0/24', true, false],
    ]);
    expect(p.exportAllowList.serviceRanges.map((r) => [r.prefix.toString(), r.field])).toEqual([
      ['198.18.0.0/16', 'serviceClusterIPs'],
      ['203.0.113.0/24', 'serviceLoadBalancerIPs'],
    ]);
    expect(p.exportAllowList.reflected).toEqual([]);
    // A route reflector also lets through clients' routes inside the external and LB allow-lists, /32 entries included.
    const rr = planFor([node('rr1', '192.0.2.1', { annotations: { 'projectcalico.org/RouteReflectorClusterID': '244.0.0.1' } }), ...rs], 'rr1');
    expect(rr.exportAllowList.reflected.map((r) => [r.prefix.toString(), r.field])).toEqual([
      ['203.0.113.0/24', 'serviceLoadBalancerIPs'],
      ['203.0.114.1/32', 'serviceLoadBalancerIPs'],
    ]);
    // A disabled pool allows export but originates nothing by itself.
    expect(prefixes(p)).toEqual(['198.18.0.0/16', '203.0.113.0/24']);
  });
});

describe('§1 prefixAdvertisements: communities by name or literal on routes inside the cidr', () => {
  const cfg = (extra: Record<string, unknown> = {}) =>
    bgpConfig({
      serviceClusterIPs: [{ cidr: '198.18.0.0/16' }],
      communities: [
        { name: 'no-export-ish', value: '65000:100' },
        { name: 'big', value: '65000:1:2' },
      ],
      prefixAdvertisements: [
        { cidr: '198.18.0.0/16', communities: ['no-export-ish', '64512:7'] },
        { cidr: '198.18.0.0/15', communities: ['big', '64512:7'] },
      ],
      ...extra,
    });
  it('resolves names, keeps literals, merges every matching entry in order without repeats', () => {
    const p = planFor([...threeNodes(), cfg(), affinity('worker1', '198.19.0.0/26')], 'worker1');
    const byPrefix = Object.fromEntries(p.routes.map((r) => [r.prefix.toString(), r.communities.map((c) => c.text)]));
    expect(byPrefix).toEqual({ '198.18.0.0/16': ['65000:100', '64512:7', '65000:1:2'], '198.19.0.0/26': ['65000:1:2', '64512:7'] });
    const std = p.routes[0].communities[0];
    expect(std).toEqual({ type: 'standard', value: 65000 * 65536 + 100, text: '65000:100' });
    expect(p.routes[0].communities[2]).toEqual({ type: 'large', value: { global: 65000, local1: 1, local2: 2 }, text: '65000:1:2' });
  });
  it('a node.<name> BGPConfiguration replaces prefixAdvertisements for that node only, its names resolved in its own communities', () => {
    // As Calico (mesh/communities step 2): the node-specific resource's `big` wins over default's.
    const perNode = bgpConfig(
      { communities: [{ name: 'big', value: '50:50:5364' }], prefixAdvertisements: [{ cidr: '198.18.0.0/16', communities: ['big', '5663:12', '5663:12'] }] },
      'node.worker1',
    );
    const rs = [...threeNodes(), cfg(), perNode];
    const w1 = planFor(rs, 'worker1');
    expect(w1.routes[0].communities.map((c) => c.text)).toEqual(['50:50:5364', '5663:12']);
    expect(w1.errors).toEqual([]);
    expect(planFor(rs, 'worker2').routes[0].communities.map((c) => c.text)).toEqual(['65000:100', '64512:7', '65000:1:2']);
  });
  it('a per-node name defined only in default does not resolve there (Calico drops it); a plan error names the resource and field', () => {
    const perNode = bgpConfig({ prefixAdvertisements: [{ cidr: '198.18.0.0/16', communities: ['big', 'nope', '64512:9'] }] }, 'node.worker1');
    const p = planFor([...threeNodes(), cfg(), perNode], 'worker1');
    expect(p.routes[0].communities.map((c) => c.text)).toEqual(['64512:9']);
    expect(p.errors).toEqual([
      {
        kind: 'BGPConfiguration',
        name: 'node.worker1',
        field: 'spec.prefixAdvertisements[0].communities[0]',
        message: expect.stringContaining('"big" (for 198.18.0.0/16) is not defined in BGPConfiguration node.worker1 spec.communities'),
      },
      { kind: 'BGPConfiguration', name: 'node.worker1', field: 'spec.prefixAdvertisements[0].communities[1]', message: expect.stringContaining('"nope"') },
    ]);
  });
  it('per-node listenPort and logSeverityScreen override; other per-node fields are ignored', () => {
    const perNode = bgpConfig({ listenPort: 1179, logSeverityScreen: 'Debug', serviceClusterIPs: [{ cidr: '10.0.0.0/8' }], asNumber: 65099 }, 'node.worker1');
    const p = planFor([...threeNodes(), cfg(), perNode], 'worker1');
    expect(p.listen.port).toBe(1179);
    expect(p.logSeverity).toBe('Debug');
    expect(prefixes(p)).toEqual(['198.18.0.0/16']);
    expect(p.node.asn).toBe(64512);
  });
});

describe('§5 built-in export order, for routes the node did not plan (e.g. MetalLB /32s)', () => {
  it.each([
    ['203.0.113.7/32', true, 'disabled pool used as an export allow-list'],
    ['100.64.0.9/32', false, 'disableBGPExport'],
    ['198.19.0.70/32', false, 'more specific than the local block 198.19.0.64/26'],
    ['198.19.0.64/26', true, 'originated by this node'],
    ['198.19.5.0/26', true, 'inside IPPool pods'],
    ['198.18.4.4/32', true, 'inside serviceClusterIPs 198.18.0.0/16'],
    ['192.0.2.77/32', false, 'not inside any IP pool or service range'],
    ['2001:db8::/64', false, 'not inside any IP pool or service range'],
  ])('%s → accept %s (%s)', async (prefix, accept, reason) => {
    const { builtinExport } = await import('../../src/kubernetes/export.js');
    const { Prefix } = await import('../../src/net/index.js');
    const rs = [
      ...threeNodes(),
      bgpConfig({ serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] }),
      pool('metallb-allow', { cidr: '203.0.113.0/24', disabled: true }),
      pool('pods', { cidr: '198.19.0.0/16' }),
      pool('hidden', { cidr: '100.64.0.0/16', disableBGPExport: true }),
      affinity('worker1', '198.19.0.64/26'),
    ];
    const v = builtinExport(planFor(rs, 'worker1'), Prefix.parse(prefix));
    expect(v.accept).toBe(accept);
    expect(v.reason).toContain(reason);
  });
});
