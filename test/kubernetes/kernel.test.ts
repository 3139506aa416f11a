import { describe, expect, it } from 'vitest';
import { FibCore } from '../../src/kernel/fib-core.js';
import { KernelRules } from '../../src/kernel/rules.js';
import { Prefix } from '../../src/net/prefix.js';
import { affinity, bgpConfig, node, peer, planFor, pool } from './helpers.js';
import { converge, SimKernel } from '../kernel/sim.js';

const worker1 = () => node('worker1', '192.0.2.10', { annotations: { 'projectcalico.org/IPv4Address': '192.0.2.10/24' } });
const POOLS = () => [
  pool('plain', { cidr: '198.19.0.0/18' }),
  pool('ipip', { cidr: '198.19.64.0/18', ipipMode: 'Always' }),
  pool('cross', { cidr: '198.19.128.0/18', ipipMode: 'CrossSubnet' }),
  pool('vxlan', { cidr: '198.19.192.0/18', vxlanMode: 'Always' }),
];

describe('kernel programming plan (calico_kernel_programming)', () => {
  it('rejects service CIDRs and VXLAN pools, tunnels IPIP pools, accepts no-encap pools', () => {
    const p = planFor([worker1(), bgpConfig({ serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] }), ...POOLS()], 'worker1');
    expect(p.kernel!.programClusterRoutes).toBe('Enabled');
    expect(p.kernel!.rules).toEqual([
      { prefix: '198.18.0.0/16', action: 'reject', why: 'service CIDR (BGPConfiguration serviceClusterIPs)' },
      { prefix: '198.19.0.0/18', action: 'accept', why: 'IPPool plain, no encapsulation' },
      { prefix: '198.19.64.0/18', action: 'accept', tunnel: { dev: 'tunl0' }, why: 'IPPool ipip IPIP Always' },
      { prefix: '198.19.128.0/18', action: 'accept', tunnel: { dev: 'tunl0', unlessWithin: ['192.0.2.0/24'] }, why: 'IPPool cross IPIP CrossSubnet' },
      { prefix: '198.19.192.0/18', action: 'reject', why: 'IPPool vxlan uses VXLAN (Always): Felix programs its routes' },
    ]);
  });

  it('programClusterRoutes rejects the IPIP pools, the no-encap pools, or both', () => {
    const actions = (pcr: string) =>
      planFor([worker1(), bgpConfig({ programClusterRoutes: pcr }), ...POOLS()], 'worker1').kernel!.rules.map((r) => `${r.prefix} ${r.action}`);
    expect(actions('Disabled')).toEqual(['198.19.0.0/18 reject', '198.19.64.0/18 reject', '198.19.128.0/18 reject', '198.19.192.0/18 reject']);
    expect(actions('EnabledIPIPOnly')).toEqual(['198.19.0.0/18 reject', '198.19.64.0/18 accept', '198.19.128.0/18 accept', '198.19.192.0/18 reject']);
    expect(actions('EnabledNoEncapOnly')).toEqual(['198.19.0.0/18 accept', '198.19.64.0/18 reject', '198.19.128.0/18 reject', '198.19.192.0/18 reject']);
  });

  it('a blackhole for each confirmed block of this node (not /32), and reachableBy routes', () => {
    const p = planFor(
      [
        worker1(),
        node('worker2', '192.0.2.11'),
        ...POOLS(),
        affinity('worker1', '198.19.0.0/26'),
        affinity('worker1', '198.19.0.64/26', 'pending'),
        affinity('worker1', '198.19.0.200/32'),
        affinity('worker2', '198.19.1.0/26'),
        peer('tor', { peerIP: '203.0.113.1', asNumber: 65001, reachableBy: '192.0.2.1' }),
      ],
      'worker1',
    );
    expect(p.kernel!.statics).toEqual([
      { prefix: '198.19.0.0/26', blackhole: true },
      { prefix: '203.0.113.1/32', via: '192.0.2.1' },
    ]);
  });

  it('no blackhole for a block of a pool whose routes Felix programs (VXLAN, or left to Felix by programClusterRoutes); the static protocol passes the same filter', () => {
    const res = [
      worker1(),
      ...POOLS(),
      affinity('worker1', '198.19.0.0/26'),
      affinity('worker1', '198.19.64.0/26'),
      affinity('worker1', '198.19.192.0/26'),
      affinity('worker1', '10.0.0.0/30'),
    ];
    expect(planFor(res, 'worker1').kernel!.statics).toEqual([
      { prefix: '10.0.0.0/30', blackhole: true },
      { prefix: '198.19.0.0/26', blackhole: true },
      { prefix: '198.19.64.0/26', blackhole: true },
    ]);
    expect(planFor([...res, bgpConfig({ programClusterRoutes: 'EnabledNoEncapOnly' })], 'worker1').kernel!.statics).toEqual([
      { prefix: '10.0.0.0/30', blackhole: true },
      { prefix: '198.19.0.0/26', blackhole: true },
    ]);
    expect(planFor([...res, bgpConfig({ programClusterRoutes: 'Disabled' })], 'worker1').kernel!.statics).toEqual([{ prefix: '10.0.0.0/30', blackhole: true }]);
  });

  it("a node without an IPv4 address: no IPv4 pool rule (confd writes none without the node's subnet), IPv6 pools as usual", () => {
    const v6only = node('worker6', '2001:db8::6', { annotations: { 'projectcalico.org/IPv6Address': '2001:db8::6/64' } });
    const p = planFor([v6only, ...POOLS(), pool('v6vx', { cidr: '2001:db8:1::/64', vxlanMode: 'Always' })], 'worker6');
    expect(p.kernel!.rules).toEqual([{ prefix: '2001:db8:1::/64', action: 'reject', why: 'IPPool v6vx uses VXLAN (Always): Felix programs its routes' }]);
  });

  it('against a simulated kernel: IPIP Always via tunl0 onlink, CrossSubnet only across subnets, VXLAN and services never, a missing tunl0 a per-route error', () => {
    const p = planFor([worker1(), bgpConfig({ serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] }), ...POOLS()], 'worker1');
    const rules = new KernelRules(p.kernel!.rules);
    const core = new FibCore({ restarting: false });
    const k = new SimKernel();
    k.links = new Set(['eth0', 'tunl0']);
    core.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }], k.links);
    core.setLookup('198.51.100.9', { ok: true, via: '192.0.2.1', dev: 'eth0' });
    core.kernelTable([]);
    const learn = (prefix: string, ...nh: string[]) => {
      const out = rules.apply(
        Prefix.parse(prefix),
        nh.map((address) => ({ address })),
      );
      core.setRoute(prefix, out.ok ? { kind: 'unicast', gateways: out.gateways } : undefined);
    };
    learn('198.19.0.0/26', '192.0.2.11'); // plain
    learn('198.19.64.0/26', '192.0.2.11'); // IPIP Always, same subnet: still tunl0
    learn('198.19.128.0/26', '192.0.2.11'); // CrossSubnet, same subnet: direct
    learn('198.19.128.64/26', '198.51.100.9'); // CrossSubnet, other subnet: tunl0
    learn('198.19.192.0/26', '192.0.2.11'); // VXLAN: none
    learn('198.18.0.0/16', '192.0.2.11'); // service CIDR: none
    learn('203.0.113.0/24', '192.0.2.1'); // ToR route: as learned
    learn('198.19.64.64/26', '192.0.2.11', '192.0.2.12'); // multipath in an IPIP pool: next hops kept (as krt_tunnel)
    converge(core, k);
    const table = Object.fromEntries(k.routes().map((r) => [r.prefix, r.nexthops.map((h) => `${h.via} ${h.dev}${h.onlink ? ' onlink' : ''}`)]));
    expect(table).toEqual({
      '198.19.0.0/26': ['192.0.2.11 eth0'],
      '198.19.64.0/26': ['192.0.2.11 tunl0 onlink'],
      '198.19.128.0/26': ['192.0.2.11 eth0'],
      '198.19.128.64/26': ['198.51.100.9 tunl0 onlink'],
      '203.0.113.0/24': ['192.0.2.1 eth0'],
      '198.19.64.64/26': ['192.0.2.11 eth0', '192.0.2.12 eth0'],
    });
    // a node without tunl0 (this machine's kernel has no IPIP): those routes are refused, one by one, the rest stays
    const c2 = new FibCore({ restarting: false });
    const k2 = new SimKernel();
    k2.links = new Set(['eth0']);
    c2.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }]); // interfaces unknown to the core: the kernel says no
    c2.kernelTable([]);
    for (const pfx of ['198.19.0.0/26', '198.19.64.0/26']) {
      const out = rules.apply(Prefix.parse(pfx), [{ address: '192.0.2.11' }]);
      c2.setRoute(pfx, out.ok ? { kind: 'unicast', gateways: out.gateways } : undefined);
    }
    converge(c2, k2);
    expect(k2.routes().map((r) => r.prefix)).toEqual(['198.19.0.0/26']);
    expect(c2.refusals()).toEqual([{ prefix: '198.19.64.0/26', by: 'kernel', reason: 'Cannot find device "tunl0"' }]);
  });
});
