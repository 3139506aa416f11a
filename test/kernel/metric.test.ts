import { describe, expect, it } from 'vitest';
import { routeAttributes, reconcile } from '../../src/kubernetes/reconcile.js';
import { localPrefForMetric, metricForLocalPref } from '../../src/kernel/metric.js';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { Path } from '../../src/rib/path.js';
import { PolicyRegistry } from '../../src/speaker/policies.js';
import { SpeakerKernel, type KernelOptions } from '../../src/speaker/kernel.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { NO_LEARNING } from '../../src/kubernetes/kernel.js';
import { plan, route } from '../agent/plans.js';
import { bgpConfig, node, planFor } from '../kubernetes/helpers.js';
import { converge, SimKernel } from './sim.js';

/** A Loc-RIB path from a peer, as the speaker's kernel wiring sees it. */
function path(peer: string, attrs: PathAttributes): Path {
  return {
    source: { kind: 'peer', id: peer, address: Address.parse(peer), asn: 64512, type: 'ibgp', rrClient: false },
    attrs: { attrs },
    pathId: 0,
  } as unknown as Path;
}

/** The speaker's kernel wiring over a simulated kernel (nothing started: the core is driven by hand). */
function wiring(opts: Partial<KernelOptions> = {}): { sk: SpeakerKernel; k: SimKernel; settle: () => void } {
  const speaker = { asn: 64512, scheduler: { setTimeout: () => 0, clearTimeout: () => {} }, restartTime: 120, forEach: () => {} };
  const sk = new SpeakerKernel({ adopt: false, ...opts } as KernelOptions, new PolicyRegistry(), speaker as never, () => {});
  const k = new SimKernel();
  const core = sk.fib.core;
  core.setConnected(
    [
      { prefix: '192.0.2.0/24', dev: 'eth0' },
      { prefix: '2001:db8::/64', dev: 'eth0' },
    ],
    k.links,
  );
  core.kernelTable([]);
  return { sk, k, settle: () => void converge(core, k) };
}

const MESH_LOCAL_PREF = 2147483647 - 1024;

describe("Calico v3.32's kernel metric (SetMetricForBGPRoutes)", () => {
  it("metric = 2147483647 − LOCAL_PREF; BIRD's 100 when absent; originated routes carry 2147483647 − the normal priority", () => {
    expect(localPrefForMetric()).toBe(2147482623);
    expect(localPrefForMetric(512)).toBe(2147483135);
    expect(metricForLocalPref(localPrefForMetric())).toBe(1024);
    expect(metricForLocalPref(localPrefForMetric(512))).toBe(512);
    expect(metricForLocalPref(undefined)).toBe(2147483547);
    expect(metricForLocalPref(100)).toBe(2147483547);
    expect(metricForLocalPref(0xffffffff)).toBe(0);
    expect(() => localPrefForMetric(0)).toThrow(/route priority must be 1\.\.2147483646, got 0/);
    expect(() => localPrefForMetric(2147483647)).toThrow(RangeError);
  });

  it('mesh routes go in with 1024, eBGP routes (no LOCAL_PREF) with 2147483547, an elevated one with 512; statics keep the FIB metric', () => {
    const { sk, k, settle } = wiring({ metricFromLocalPref: true, statics: [{ prefix: '198.51.100.0/26', blackhole: true }] });
    sk.onLocChange(Prefix.parse('198.19.0.64/26'), [
      path('192.0.2.11', { nextHop: Address.parse('192.0.2.11'), localPref: MESH_LOCAL_PREF }),
      path('192.0.2.12', { nextHop: Address.parse('192.0.2.12'), localPref: MESH_LOCAL_PREF }),
    ]);
    sk.onLocChange(Prefix.parse('203.0.113.0/24'), [path('192.0.2.1', { nextHop: Address.parse('192.0.2.1') })]);
    sk.onLocChange(Prefix.parse('198.19.0.5/32'), [path('192.0.2.13', { nextHop: Address.parse('192.0.2.13'), localPref: localPrefForMetric(512) })]);
    settle();
    const byPrefix = new Map(k.routes().map((r) => [r.prefix, r]));
    expect(byPrefix.get('198.19.0.64/26')).toMatchObject({ metric: 1024, nexthops: [{ via: '192.0.2.11' }, { via: '192.0.2.12' }] });
    expect(byPrefix.get('203.0.113.0/24')!.metric).toBe(2147483547);
    expect(byPrefix.get('198.19.0.5/32')!.metric).toBe(512);
    expect(byPrefix.get('198.51.100.0/26')).toMatchObject({ type: 'blackhole', metric: 0 });
    expect(k.table.size).toBe(4);
  });

  it('a LOCAL_PREF change moves the route to its new metric and removes the old one', () => {
    const { sk, k, settle } = wiring({ metricFromLocalPref: true });
    const p = Prefix.parse('198.19.0.5/32');
    sk.onLocChange(p, [path('192.0.2.13', { nextHop: Address.parse('192.0.2.13'), localPref: localPrefForMetric(512) })]);
    settle();
    sk.onLocChange(p, [path('192.0.2.13', { nextHop: Address.parse('192.0.2.13'), localPref: MESH_LOCAL_PREF })]);
    settle();
    expect(k.routes().map((r) => `${r.prefix} ${r.metric}`)).toEqual(['198.19.0.5/32 1024']);
    expect(sk.route(p).installed.map((r) => r.metric)).toEqual([1024]);
  });

  it('without the option (the library default), learned routes take the FIB metric', () => {
    const { sk, k, settle } = wiring({ metric: 7 });
    sk.onLocChange(Prefix.parse('198.19.0.64/26'), [path('192.0.2.11', { nextHop: Address.parse('192.0.2.11'), localPref: MESH_LOCAL_PREF })]);
    settle();
    expect(k.routes().map((r) => r.metric)).toEqual([7]);
  });

  it("the agent: the plan carries BGPConfiguration's normal route priorities (default 1024), and originated routes get the LOCAL_PREF", () => {
    const worker1 = node('worker1', '192.0.2.10');
    expect(planFor([worker1, bgpConfig({})], 'worker1').kernel!.normalRoutePriority).toEqual({ v4: 1024, v6: 1024 });
    expect(planFor([worker1, bgpConfig({ ipv4NormalRoutePriority: 512, ipv6NormalRoutePriority: 2000 })], 'worker1').kernel!.normalRoutePriority).toEqual({
      v4: 512,
      v6: 2000,
    });
    expect(routeAttributes(route('198.19.0.0/26'), { v4: 1024, v6: 2000 }).localPref).toBe(2147482623);
    expect(routeAttributes(route('2001:db8:1::/64'), { v4: 1024, v6: 2000 }).localPref).toBe(2147481647);
    expect(routeAttributes(route('198.19.0.0/26')).localPref).toBeUndefined();
  });

  it('the agent: a new normal route priority re-originates every route with the new LOCAL_PREF', () => {
    const kernel = (v4: number) => ({
      programClusterRoutes: 'Enabled' as const,
      normalRoutePriority: { v4, v6: 1024 },
      rules: [],
      statics: [],
      learn: NO_LEARNING,
    });
    const a = { ...plan([route('198.19.0.0/26'), route('198.19.0.64/26')]), kernel: kernel(1024) };
    expect(reconcile(a, a).originate).toEqual([]);
    const ops = reconcile(a, { ...a, kernel: kernel(512) });
    expect(ops.originate.map((o) => [o.prefix.toString(), o.attrs.localPref])).toEqual([
      ['198.19.0.0/26', 2147483135],
      ['198.19.0.64/26', 2147483135],
    ]);
  });
});
