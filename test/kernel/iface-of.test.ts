/**
 * ifaceOf: the interface the learned kernel routes send an address out of,
 * as BIRD's `gateway recursive` resolves a BGP next hop through its table.
 */
import { describe, expect, it } from 'vitest';
import { ifaceOf } from '../../src/kernel/iface-of.js';
import type { LearnedKernelRoute, NextHop, RouteType } from '../../src/kernel/types.js';
import { Address } from '../../src/net/index.js';

const r = (prefix: string, nexthops: NextHop[], o: { metric?: number; type?: RouteType; source?: 'kernel' | 'direct' } = {}): LearnedKernelRoute => ({
  source: o.source ?? 'kernel',
  protocol: o.source === 'direct' ? 2 : 3,
  route: { prefix, type: o.type ?? 'unicast', metric: o.metric ?? 0, nexthops },
});

const TABLE: LearnedKernelRoute[] = [
  r('192.0.2.0/24', [{ dev: 'eth0' }], { source: 'direct' }),
  r('2001:db8::/64', [{ dev: 'eth0' }], { source: 'direct' }),
  // Felix's routes to local workloads
  r('198.19.0.2/32', [{ dev: 'cali1' }]),
  r('198.19.0.3/32', [{ dev: 'cali2' }], { metric: 1024 }),
  r('198.19.0.3/32', [{ dev: 'cali3' }], { metric: 512 }),
  // a route through a router on eth0, another out of two interfaces, one to nowhere
  r('203.0.113.0/24', [{ via: '192.0.2.1', dev: 'eth0' }]),
  r('198.51.100.0/24', [
    { via: '192.0.2.1', dev: 'eth0' },
    { via: '192.0.2.2', dev: 'eth1' },
  ]),
  r('198.51.101.0/24', [
    { via: '192.0.2.1', dev: 'eth0' },
    { via: '192.0.2.2', dev: 'eth0' },
  ]),
  r('198.18.0.0/15', [], { type: 'blackhole' }),
  r('198.18.5.0/24', [{ dev: 'tunl0', via: '192.0.2.9', onlink: true }]),
];

const of = (a: string) => ifaceOf(Address.parse(a), TABLE);

describe('ifaceOf', () => {
  it('a connected network, a workload /32, a route through a router: their interface', () => {
    expect([of('192.0.2.77'), of('198.19.0.2'), of('203.0.113.9'), of('2001:db8::5')]).toEqual(['eth0', 'cali1', 'eth0', 'eth0']);
  });

  it('the longest prefix wins (a more specific route inside a blackhole), the lowest metric among equals', () => {
    expect([of('198.18.5.1'), of('198.19.0.3')]).toEqual(['tunl0', 'cali3']);
  });

  it('none for a blackhole, a route out of several interfaces, an address no route holds, or the other family', () => {
    expect([of('198.18.9.9'), of('198.51.100.7'), of('100.64.0.1'), of('2001:db8:1::1')]).toEqual([undefined, undefined, undefined, undefined]);
    // several next hops out of one interface: that one
    expect(of('198.51.101.7')).toBe('eth0');
  });
});
