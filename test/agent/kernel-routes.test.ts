import { describe, expect, it } from 'vitest';
import { kernelRoutesJson, kernelRoutesText, kernelStatusText } from '../../src/agent/kernel.js';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { Path } from '../../src/rib/path.js';
import { PolicyRegistry } from '../../src/speaker/policies.js';
import { SpeakerKernel, type KernelOptions } from '../../src/speaker/kernel.js';
import type { SpeakerApi } from '../../src/speaker/types.js';
import type { KernelRoute } from '../../src/kernel/types.js';
import { converge, SimKernel } from '../kernel/sim.js';
import { peerOptions } from '../../src/kubernetes/reconcile.js';
import { peer, plan } from './plans.js';

const path = (nh: string, localPref?: number): Path =>
  ({
    source: { kind: 'peer', id: nh, address: Address.parse(nh), asn: 64512, type: 'ibgp', rrClient: false },
    attrs: { attrs: { nextHop: Address.parse(nh), ...(localPref !== undefined ? { localPref } : {}) } },
    pathId: 0,
  }) as unknown as Path;

/** A speaker whose kernel side is a real SpeakerKernel over a simulated kernel (the FIB shell is never started). */
function speakerWithKernel(dump: KernelRoute[]): { api: SpeakerApi; sk: SpeakerKernel; settle: () => void; k: SimKernel } {
  const sk = new SpeakerKernel(
    {
      metricFromLocalPref: true,
      statics: [{ prefix: '198.19.0.0/26', blackhole: true }],
      rules: [{ prefix: '198.19.64.0/18', action: 'accept', tunnel: { dev: 'tunl0' }, why: 'IPIP' }],
    } as KernelOptions,
    new PolicyRegistry(),
    { asn: 64512, scheduler: { setTimeout: () => 0, clearTimeout: () => {} }, restartTime: 120, forEach: () => {} } as never,
    () => {},
  );
  const k = new SimKernel();
  for (const r of dump) k.table.set(SimKernel.key(r), r);
  sk.fib.core.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }], k.links);
  sk.fib.core.kernelTable(k.routes());
  const status = () => ({ ...sk.fib.status(), enabled: true, table: 254 });
  const api = {
    kernelStatus: status,
    kernelRoute: () => undefined,
    kernelRoutes: () => sk.routes(),
    setKernelRules: () => {},
    setKernelStatics: () => {},
  } as unknown as SpeakerApi;
  return { api, sk, k, settle: () => void converge(sk.fib.core, k) };
}

describe('tsbgp routes --kernel', () => {
  it('lists each prefix in order: installed with metric and next hops, refused with the reason, pending, adopted routes as stale', () => {
    const adopted: KernelRoute = { prefix: '203.0.113.0/24', type: 'unicast', metric: 1024, nexthops: [{ via: '192.0.2.9', dev: 'eth0' }] };
    const { api, sk, settle } = speakerWithKernel([adopted]);
    sk.onLocChange(Prefix.parse('198.19.1.0/26'), [path('192.0.2.12', 2147482623), path('192.0.2.13', 2147482623)]);
    sk.onLocChange(Prefix.parse('198.19.64.0/26'), [path('192.0.2.12', 2147482623)]);
    sk.onLocChange(Prefix.parse('198.51.100.0/24'), [path('198.18.0.1')]);
    settle();
    const v = kernelRoutesJson(api, plan([]));
    expect(v.status).toMatchObject({ enabled: true, installed: 3, refusedCount: 1, restarting: true, stale: 1 });
    expect(v.routes.map((r) => [r.prefix, r.state, r.source])).toEqual([
      ['198.19.0.0/26', 'installed', 'static'],
      ['198.19.1.0/26', 'installed', 'bgp'],
      ['198.19.64.0/26', 'refused', 'bgp'],
      ['198.51.100.0/24', 'pending', 'bgp'], // waiting for the kernel's lookup of a next hop on no connected network
      ['203.0.113.0/24', 'stale', null],
    ]);
    expect(v.routes[1].installed).toEqual([
      {
        type: 'unicast',
        metric: 1024,
        nexthops: [
          { via: '192.0.2.12', dev: 'eth0', onlink: false },
          { via: '192.0.2.13', dev: 'eth0', onlink: false },
        ],
      },
    ]);
    expect(v.routes[2]).toMatchObject({ reason: 'interface tunl0 does not exist (next hop 192.0.2.12)', refusedBy: 'resolve', installed: [] });
    expect(v.routes[3]).toMatchObject({ reason: null, installed: [] });
    const text = kernelRoutesText(v);
    expect(text).toContain('Kernel routes: table 254, proto 12: 3 installed of');
    expect(text).toMatch(/198\.19\.1\.0\/26\s+installed\s+bgp\s+metric 1024 via 192\.0\.2\.12 dev eth0, via 192\.0\.2\.13 dev eth0/);
    expect(text).toMatch(/198\.19\.64\.0\/26\s+refused\s+bgp\s+interface tunl0 does not exist/);
    expect(text).toMatch(/198\.19\.0\.0\/26\s+installed\s+static\s+blackhole metric 0/);
    expect(text).toMatch(/203\.0\.113\.0\/24\s+stale\s+-\s+metric 1024 via 192\.0\.2\.9 dev eth0/);
  });

  it('a route that stops being wanted shows as removing until it is gone; kernel programming off says so', () => {
    const { api, sk, settle } = speakerWithKernel([]);
    const p = Prefix.parse('198.19.1.0/26');
    sk.fib.core.endRestart();
    sk.onLocChange(p, [path('192.0.2.12')]);
    settle();
    sk.onLocChange(p, []);
    expect(kernelRoutesJson(api, plan([])).routes.find((r) => r.prefix === '198.19.1.0/26')).toMatchObject({ state: 'removing', source: null });
    settle();
    expect(kernelRoutesJson(api, plan([])).routes.map((r) => r.prefix)).toEqual(['198.19.0.0/26']);
    expect(kernelRoutesJson(undefined, plan([]))).toEqual({ version: 1, status: null, routes: [] });
    expect(kernelRoutesText({ version: 1, status: null, routes: [] })).toBe('Kernel routes: off (agent started without --kernel on)\n');
  });

  it("IPv6 routes never arrive over an IPv4 session (or the reverse): one family per session, as Calico's bird and bird6", () => {
    expect(peerOptions(peer('192.0.2.20')).families).toEqual(['ipv4']);
    expect(peerOptions(peer('2001:db8::20')).families).toEqual(['ipv6']);
  });
});

describe('`tsbgp status` kernel lines', () => {
  const base = {
    enabled: true,
    error: null,
    table: 254,
    protocol: 12,
    restarting: false,
    installed: 3,
    desired: 4,
    stale: 0,
    refused: [{ prefix: '198.19.64.0/26', reason: 'Network is unreachable (Nexthop has invalid gateway)' }],
    refusedCount: 1,
    programClusterRoutes: 'Enabled',
  };
  it('say why routes go through ip -batch when rtnetlink was wanted, and nothing when it is used', () => {
    expect(kernelStatusText({ ...base, writer: 'netlink', writerNote: null, listener: 'netlink', listenerNote: null })).toEqual([
      'Kernel routes: table 254, proto 12, writer netlink: 3 installed of 4 wanted, 1 refused',
      '  refused 198.19.64.0/26: Network is unreachable (Nexthop has invalid gateway)',
    ]);
    const note =
      'cannot write routes over netlink from this process (cannot load the FFI package koffi and libc on linux/s390x: no prebuilt): writing through ip -batch';
    expect(kernelStatusText({ ...base, writer: 'iproute2', writerNote: note, listener: 'netlink', listenerNote: null })[1]).toBe(`  ${note}`);
  });

  it('say why changes are heard through ip monitor when rtnetlink was wanted', () => {
    const note =
      'cannot listen to the kernel over netlink (cannot load the FFI package koffi and libc on linux/s390x: no prebuilt): watching through ip monitor';
    expect(kernelStatusText({ ...base, writer: 'netlink', writerNote: null, listener: 'iproute2', listenerNote: note })).toEqual([
      'Kernel routes: table 254, proto 12, writer netlink: 3 installed of 4 wanted, 1 refused',
      `  ${note}`,
      '  refused 198.19.64.0/26: Network is unreachable (Nexthop has invalid gateway)',
    ]);
  });
});
