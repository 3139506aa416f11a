/**
 * Routes learned from the kernel (issue 28, points 2 and 3): which of them a
 * node advertises, as Calico's calico_export_to_bgp_peers and calico_aggr
 * decide (bird_ipam.cfg / bird_aggr.cfg), and what the other nodes then put
 * into their kernels (calico_kernel_programming), against the simulated kernel.
 */
import { describe, expect, it } from 'vitest';
import { kernelExport, kernelExports, type LearnedRoute } from '../../src/kubernetes/export.js';
import { interfaceMatches } from '../../src/kubernetes/kernel.js';
import type { Plan } from '../../src/kubernetes/plan-types.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { Path } from '../../src/rib/path.js';
import { PolicyRegistry } from '../../src/speaker/policies.js';
import { SpeakerKernel, type KernelOptions } from '../../src/speaker/kernel.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { converge, SimKernel } from '../kernel/sim.js';
import { affinity, bgpConfig, node, planFor, pool, prefixes } from './helpers.js';

const [A, B, C] = ['192.0.2.11', '192.0.2.12', '192.0.2.13'];
const nodes = () => [
  node('a', A, { annotations: { 'projectcalico.org/IPv4Address': `${A}/24` } }),
  node('b', B, { annotations: { 'projectcalico.org/IPv4Address': `${B}/24` } }),
  node('c', C, { annotations: { 'projectcalico.org/IPv4Address': `${C}/24` } }),
];
/** Three nodes with a block each in a no-encapsulation pool and one in an IPIP pool (node b's). */
const cluster = (...more: Resource[]): Resource[] => [
  ...nodes(),
  pool('plain', { cidr: '198.19.0.0/18' }),
  pool('ipip', { cidr: '198.19.64.0/18', ipipMode: 'Always' }),
  affinity('a', '198.19.0.0/26'),
  affinity('b', '198.19.0.64/26'),
  affinity('c', '198.19.0.128/26'),
  affinity('b', '198.19.64.0/26'),
  ...more,
];

/** Felix's route to a local workload: `<ip>/32 dev cali… proto boot metric 1024`. */
const felix = (prefix: string, dev = 'cali1234', metric = 1024): LearnedRoute => ({
  prefix: Prefix.parse(prefix),
  source: 'kernel',
  type: 'unicast',
  dev,
  metric,
  protocol: 3,
});
const verdict = (p: Plan, r: LearnedRoute) => {
  const v = kernelExport(p, r);
  return v.accept ? `yes: ${v.reason}` : `no: ${v.reason}`;
};

describe('which learned kernel routes a node advertises (calico_export_to_bgp_peers)', () => {
  it("a pod on node a with an IP borrowed from node b's block: advertised by a (LOCAL_PREF from its metric); a pod in a's own block: not (the block is)", () => {
    const a = planFor(cluster(), 'a');
    expect(verdict(a, felix('198.19.0.70/32'))).toBe("yes: inside IPPool plain (198.19.0.0/18) and outside this node's blocks");
    expect(kernelExport(a, felix('198.19.0.70/32')).localPref).toBe(2147483647 - 1024);
    // no metric (an IPv4 route added without one): the normal route priority, as Calico's export filter sets it
    expect(kernelExport(a, felix('198.19.0.70/32', 'cali1234', 0)).localPref).toBe(2147483647 - 1024);
    expect(verdict(a, felix('198.19.0.5/32'))).toBe('no: more specific than the local block 198.19.0.0/26, which is exported instead');
    // Felix's elevated priority (a live migration) escapes the aggregation
    expect(verdict(a, felix('198.19.0.5/32', 'cali1234', 512))).toBe(
      'yes: inside the block 198.19.0.0/26 of BlockAffinity a-198-19-0-0-26, with metric 512 below the normal route priority 1024 (elevated: a live migration)',
    );
    expect(kernelExport(a, felix('198.19.0.5/32', 'cali1234', 512)).localPref).toBe(2147483647 - 512);
    // the normal route priority is BGPConfiguration's
    const a2 = planFor(cluster(bgpConfig({ ipv4NormalRoutePriority: 2000 })), 'a');
    expect(verdict(a2, felix('198.19.0.5/32', 'cali1234', 1024))).toMatch(
      /^yes: inside the block 198\.19\.0\.0\/26 .* metric 1024 below the normal route priority 2000/,
    );
  });

  it("never: outside every pool, inside a disableBGPExport pool, through Felix's tunnels or the eBPF dataplane; tunl0 only when tsbgp programs IPIP", () => {
    const a = planFor(cluster(pool('hidden', { cidr: '198.19.128.0/18', disableBGPExport: true })), 'a');
    expect(verdict(a, felix('203.0.113.7/32'))).toBe('no: not inside any IP pool or service range');
    expect(verdict(a, felix('198.19.128.9/32'))).toBe('no: inside IPPool hidden (198.19.128.0/18) with disableBGPExport');
    expect(verdict(a, felix('198.19.0.70/32', 'vxlan.calico'))).toMatch(/^no: through vxlan\.calico: a route Felix programs through its tunnel device/);
    expect(verdict(a, felix('198.19.0.70/32', 'wireguard.cali'))).toMatch(/^no: through wireguard\.cali/);
    expect(verdict(a, felix('198.19.0.70/32', 'bpfin.cali'))).toBe('no: through bpfin.cali: a route of the eBPF dataplane, local to the node');
    // programClusterRoutes Enabled (tsbgp's default): tsbgp programs IPIP routes itself, so tunl0 routes are someone else's and go out
    expect(verdict(a, felix('198.19.0.70/32', 'tunl0'))).toMatch(/^yes/);
    const felixIpip = planFor(cluster(bgpConfig({ programClusterRoutes: 'EnabledNoEncapOnly' })), 'a');
    expect(verdict(felixIpip, felix('198.19.0.70/32', 'tunl0'))).toBe(
      'no: through tunl0: a route Felix programs through tunl0 (programClusterRoutes is EnabledNoEncapOnly; Calico sends these to eBGP peers only, tsbgp to none)',
    );
    // a disabled pool still allows export (Calico accepts routes inside any pool)
    const d = planFor([...nodes(), pool('off', { cidr: '198.19.0.0/18', disabled: true })], 'a');
    expect(verdict(d, felix('198.19.0.70/32'))).toBe(
      "yes: inside IPPool off (198.19.0.0/18) and outside this node's blocks (a disabled pool, used as an export allow-list)",
    );
    // only route types BIRD learns
    expect(verdict(a, { ...felix('198.19.0.70/32'), type: 'other' })).toMatch(/^no: not a unicast/);
  });

  it('a /32 block: no blackhole, not originated by itself; advertised while the kernel holds a route to it; the same for IPv6 /128', () => {
    const res = cluster(pool('v6', { cidr: '2001:db8:1::/112' }), affinity('a', '198.19.0.200/32'), affinity('a', '2001:db8:1::5/128'));
    const a = planFor(res, 'a');
    expect(prefixes(a)).not.toContain('198.19.0.200/32');
    expect(prefixes(a)).not.toContain('2001:db8:1::5/128');
    expect(prefixes(a)).toContain('198.19.0.0/26');
    expect(a.kernel!.statics).toEqual([{ prefix: '198.19.0.0/26', blackhole: true }]);
    expect(a.kernel!.learn.blocks.map((b) => b.prefix.toString())).toEqual(['198.19.0.0/26', '198.19.0.200/32', '2001:db8:1::5/128']);
    expect(verdict(a, felix('198.19.0.200/32'))).toBe('yes: the /32 block of BlockAffinity a-198-19-0-200-32: advertised while the kernel holds a route to it');
    expect(verdict(a, felix('2001:db8:1::5/128'))).toBe(
      'yes: the /128 block of BlockAffinity a-2001:db8:1::5-128: advertised while the kernel holds a route to it',
    );
    // nothing in the kernel: nothing advertised
    expect(kernelExports(a, []).map((x) => x.prefix.toString())).toEqual([]);
    expect(kernelExports(a, [felix('198.19.0.200/32'), felix('2001:db8:1::5/128')]).map((x) => x.prefix.toString())).toEqual([
      '198.19.0.200/32',
      '2001:db8:1::5/128',
    ]);
  });

  it('one route per prefix (the lowest metric, a kernel route before a connected network), never a prefix the plan originates, in prefix order', () => {
    const a = planFor(cluster(), 'a');
    const got = kernelExports(a, [
      felix('198.19.0.71/32', 'caliB', 1024),
      felix('198.19.0.70/32', 'caliA', 2000),
      felix('198.19.0.70/32', 'caliC', 1024),
      { prefix: Prefix.parse('198.19.0.0/26'), source: 'kernel', type: 'blackhole', metric: 0, protocol: 80 }, // Felix's blackhole for the block: planned already
      { prefix: Prefix.parse('198.19.1.0/24'), source: 'direct', type: 'unicast', dev: 'eth1', metric: 0, protocol: 2 },
    ]);
    expect(got.map((x) => [x.prefix.toString(), x.route.dev, x.verdict.localPref])).toEqual([
      ['198.19.0.70/32', 'caliC', 2147482623],
      ['198.19.0.71/32', 'caliB', 2147482623],
      ['198.19.1.0/24', 'eth1', 2147482623],
    ]);
  });

  it("connected networks: not of cali*, kube-ipvs* or ignoredInterfaces (Calico's protocol direct)", () => {
    const a = planFor(cluster(bgpConfig({ ignoredInterfaces: ['eth9', 'vlan*'] })), 'a');
    const direct = (dev: string): LearnedRoute => ({ prefix: Prefix.parse('198.19.1.0/24'), source: 'direct', type: 'unicast', dev, metric: 0, protocol: 2 });
    expect(verdict(a, direct('eth1'))).toMatch(/^yes: inside IPPool plain/);
    expect(verdict(a, direct('eth9'))).toBe('no: connected network of eth9, excluded by "eth9" (ignoredInterfaces)');
    expect(verdict(a, direct('vlan100'))).toBe('no: connected network of vlan100, excluded by "vlan*" (ignoredInterfaces)');
    expect(verdict(a, direct('cali77'))).toBe('no: connected network of cali77, excluded by "cali*"');
    expect(verdict(a, direct('kube-ipvs0'))).toBe('no: connected network of kube-ipvs0, excluded by "kube-ipvs*"');
    expect(a.kernel!.learn.directExcluded).toEqual(['eth9', 'vlan*', 'cali*', 'kube-ipvs*']);
  });

  it("inside a service range: advertised (Calico's static routes accept it), except on a node excluded from service advertisement", () => {
    const cfg = bgpConfig({ serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] });
    expect(verdict(planFor(cluster(cfg), 'a'), felix('198.18.0.9/32', 'eth0'))).toBe('yes: inside serviceClusterIPs 198.18.0.0/16');
    const excluded = node('a', A, {
      labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' },
      annotations: { 'projectcalico.org/IPv4Address': `${A}/24` },
    });
    const res = cluster(cfg).map((r) => (r.kind === 'Node' && r.name === 'a' ? excluded : r));
    expect(verdict(planFor(res, 'a'), felix('198.18.0.9/32', 'eth0'))).toBe('no: not inside any IP pool or service range');
  });

  it('prefixAdvertisements communities go on learned routes too (apply_communities)', () => {
    const a = planFor(
      cluster(
        bgpConfig({
          communities: [{ name: 'pods', value: '65000:100' }],
          prefixAdvertisements: [
            { cidr: '198.19.0.0/18', communities: ['pods', '65000:7'] },
            { cidr: '198.19.0.64/26', communities: ['pods'] },
          ],
        }),
      ),
      'a',
    );
    expect(kernelExport(a, felix('198.19.0.70/32')).communities!.map((c) => c.text)).toEqual(['65000:100', '65000:7']);
  });

  it('interface patterns as BIRD matches them', () => {
    expect(interfaceMatches('cali*', 'cali1234')).toBe(true);
    expect(interfaceMatches('cali*', 'eth0')).toBe(false);
    expect(interfaceMatches('*.cali', 'wireguard.cali')).toBe(true);
    expect(interfaceMatches('*.cali', 'wireguard.calico')).toBe(false);
    expect(interfaceMatches('bpf*.cali', 'bpfout.cali')).toBe(true);
    expect(interfaceMatches('eth?', 'eth1')).toBe(true);
    expect(interfaceMatches('eth?', 'eth10')).toBe(false);
    expect(interfaceMatches('tunl0', 'tunl0')).toBe(true);
    expect(interfaceMatches('*', '')).toBe(true);
  });
});

/** A Loc-RIB path from a peer, as the speaker's kernel wiring sees it. */
function path(peer: string, attrs: PathAttributes): Path {
  return {
    source: { kind: 'peer', id: peer, address: Address.parse(peer), asn: 64512, type: 'ibgp', rrClient: false },
    attrs: { attrs },
    pathId: 0,
  } as unknown as Path;
}

/** One node's kernel programming (its plan's rules and statics) over a simulated kernel with tunl0. */
function kernelOf(p: Plan): { sk: SpeakerKernel; k: SimKernel; settle: () => void } {
  const speaker = { asn: 64512, scheduler: { setTimeout: () => 0, clearTimeout: () => {} }, restartTime: 120, forEach: () => {} };
  const sk = new SpeakerKernel(
    { adopt: false, rules: p.kernel!.rules, statics: p.kernel!.statics, metricFromLocalPref: true } as KernelOptions,
    new PolicyRegistry(),
    speaker as never,
    () => {},
  );
  const k = new SimKernel();
  k.links = new Set(['eth0', 'tunl0']);
  sk.fib.core.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }], k.links);
  sk.fib.core.kernelTable([]);
  return { sk, k, settle: () => void converge(sk.fib.core, k) };
}

describe('the other nodes install a borrowed /32 more specific than the block (calico_kernel_programming)', () => {
  it('no encapsulation: on c, the /32 via a beside the /26 via b; on b, the /32 via a beside its own blackhole', () => {
    const res = cluster();
    // what a advertises for its pod 198.19.0.70 (from b's block), with the LOCAL_PREF the decision gives
    const lp = kernelExport(planFor(res, 'a'), felix('198.19.0.70/32')).localPref!;
    for (const [name, expected] of [
      ['c', { '198.19.0.64/26': `via ${B} dev eth0 metric 1024`, '198.19.0.70/32': `via ${A} dev eth0 metric 1024`, '198.19.0.128/26': 'blackhole metric 0' }],
      ['b', { '198.19.0.64/26': 'blackhole metric 0', '198.19.64.0/26': 'blackhole metric 0', '198.19.0.70/32': `via ${A} dev eth0 metric 1024` }],
    ] as const) {
      const { sk, k, settle } = kernelOf(planFor(res, name));
      if (name === 'c') sk.onLocChange(Prefix.parse('198.19.0.64/26'), [path(B, { nextHop: Address.parse(B), localPref: 2147482623 })]);
      sk.onLocChange(Prefix.parse('198.19.0.70/32'), [path(A, { nextHop: Address.parse(A), localPref: lp })]);
      settle();
      const table = Object.fromEntries(
        k
          .routes()
          .map((r) => [
            r.prefix,
            r.type === 'blackhole'
              ? `blackhole metric ${r.metric}`
              : `${r.nexthops.map((h) => `via ${h.via} dev ${h.dev}${h.onlink ? ' onlink' : ''}`).join(',')} metric ${r.metric}`,
          ]),
      );
      expect(table, `node ${name}`).toEqual(expected);
    }
  });

  it('IPIP Always: the borrowed /32 via a through tunl0 onlink; VXLAN: not programmed (Felix does)', () => {
    const res = [...cluster(), pool('vx', { cidr: '198.19.128.0/18', vxlanMode: 'Always' }), affinity('b', '198.19.128.0/26')];
    const a = planFor(res, 'a');
    const lp = kernelExport(a, felix('198.19.64.9/32')).localPref!;
    expect(kernelExport(a, felix('198.19.128.9/32')).accept).toBe(true); // advertised (Calico accepts VXLAN pools for export) …
    const { sk, k, settle } = kernelOf(planFor(res, 'c'));
    sk.onLocChange(Prefix.parse('198.19.64.9/32'), [path(A, { nextHop: Address.parse(A), localPref: lp })]);
    sk.onLocChange(Prefix.parse('198.19.128.9/32'), [path(A, { nextHop: Address.parse(A), localPref: lp })]);
    settle();
    expect(
      k
        .routes()
        .filter((r) => r.prefix !== '198.19.0.128/26')
        .map((r) => [r.prefix, r.nexthops]),
    ).toEqual([['198.19.64.9/32', [{ via: A, dev: 'tunl0', onlink: true }]]]);
    // … but not programmed on c: VXLAN routes are Felix's
    expect(sk.route(Prefix.parse('198.19.128.9/32')).installed).toEqual([]);
  });
});
