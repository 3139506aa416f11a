import { describe, expect, it } from 'vitest';
import { NextHopResolver } from '../../src/kernel/resolver.js';
import { hopKey, sameRoute, sortNextHops } from '../../src/kernel/next-hops.js';
import type { DesiredRoute } from '../../src/kernel/types.js';

const unicast = (...gateways: { address: string; dev?: string; onlink?: boolean }[]) =>
  ({ kind: 'unicast', gateways }) as Extract<DesiredRoute, { kind: 'unicast' }>;

describe('next-hops.ts', () => {
  it('sorts by gateway, device, onlink, and compares routes hop by hop', () => {
    const hops = [
      { via: '192.0.2.9', dev: 'eth0' },
      { via: '192.0.2.1', dev: 'eth1' },
      { via: '192.0.2.1', dev: 'eth0', onlink: true },
    ];
    expect(sortNextHops(hops).map(hopKey)).toEqual(['192.0.2.1|eth0|1', '192.0.2.1|eth1|0', '192.0.2.9|eth0|0']);
    const a = { prefix: '198.51.100.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.1', dev: 'eth0' }] } as const;
    expect(sameRoute(a, { ...a, nexthops: [{ via: '192.0.2.1', dev: 'eth0' }] })).toBe(true);
    expect(sameRoute(a, { ...a, nexthops: [{ via: '192.0.2.1', dev: 'eth0', onlink: true }] })).toBe(false);
    expect(sameRoute(a, { ...a, metric: 1 })).toBe(false);
  });
});

describe('NextHopResolver', () => {
  it('resolves on a connected network, waits for a lookup elsewhere, and says why a gateway cannot be used', () => {
    const r = new NextHopResolver(16, true);
    r.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }], new Set(['eth0']));
    r.resolve(unicast({ address: '192.0.2.1' }));
    expect(r.hops).toEqual([{ via: '192.0.2.1', dev: 'eth0' }]);
    expect(r.needsLookup({ address: '203.0.113.1' })).toBe(true);
    expect(r.needsLookup({ address: '192.0.2.7' })).toBe(false);
    r.resolve(unicast({ address: '203.0.113.1' }));
    expect([r.hops, r.pending]).toEqual([undefined, true]);
    r.setLookup('203.0.113.1', { ok: true, via: '192.0.2.254', dev: 'eth0' });
    expect(r.needsLookup({ address: '203.0.113.1' })).toBe(false);
    r.forget();
    r.resolve(unicast({ address: '203.0.113.1' }, { address: '192.0.2.5', dev: 'eth9' }));
    expect(r.hops).toEqual([{ via: '192.0.2.254', dev: 'eth0' }]);
    expect(r.partial).toBe('next hop(s) left out: interface eth9 does not exist (next hop 192.0.2.5)');
    r.resolve(unicast({ address: 'not-an-ip' }));
    expect([r.hops, r.pending, r.reason]).toEqual([undefined, false, 'next hop "not-an-ip" is not an IP address']);
  });
  it('without recursion, a next hop on no connected network is refused, not looked up', () => {
    const r = new NextHopResolver(16, false);
    r.resolve(unicast({ address: '198.51.100.1' }));
    expect(r.reason).toBe('next hop 198.51.100.1 is on no connected network (recursive resolution is off)');
  });
});
