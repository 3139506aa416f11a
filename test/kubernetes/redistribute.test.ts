import { describe, expect, it } from 'vitest';
import type { LearnedJson } from '../../src/kubernetes/export.js';
import {
  desiredRedistribution,
  isLocalPeer,
  redistributedAttributes,
  redistributedOptions,
  redistributionOps,
  type Redistributed,
} from '../../src/kubernetes/redistribute.js';
import { Prefix } from '../../src/net/index.js';
import { peer, plan, route, rx, withPool } from '../agent/plans.js';

describe('redistribution', () => {
  const p = withPool(plan([route('198.18.0.0/16')], [peer('127.0.0.1'), peer('192.0.2.1', { id: 'Node_self' }), peer('192.0.2.20'), peer('::1')]));

  it('local peers: loopback (v4 and v6) and the node’s own address', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '192.0.2.1', '192.0.2.20', '2001:db8::1', 'junk'].map((a) => isLocalPeer(p, a))).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('takes what the built-in export accepts from local peers only; a disabled pool is the allow-list', () => {
    const got = desiredRedistribution(p, [
      rx('127.0.0.1', '198.51.100.7/32', { communities: ['65000:1'] }),
      rx('192.0.2.20', '198.51.100.8/32'), // not local
      rx('127.0.0.1', '10.0.0.1/32'), // outside every pool and range
      rx('127.0.0.1', '198.18.0.0/16'), // the plan originates it itself
      rx('127.0.0.1', '198.18.5.5/32', { stale: true }), // inside a service range; stale kept
    ]);
    expect(got).toEqual([
      { prefix: Prefix.parse('198.18.5.5/32'), from: '127.0.0.1', communities: [] },
      { prefix: Prefix.parse('198.51.100.7/32'), from: '127.0.0.1', communities: ['65000:1'] },
    ]);
  });

  it("a local peer's large and transitive extended communities pass through, as BIRD passes the route's attributes on", () => {
    const [r] = desiredRedistribution(p, [
      rx('127.0.0.1', '198.51.100.7/32', {
        communities: ['65000:1'],
        largeCommunities: ['64512:1:2', '64512:3:4'],
        extendedCommunities: ['rt:65000:100', 'lb:65000:125000'],
      }),
    ]);
    expect(r).toEqual({
      prefix: Prefix.parse('198.51.100.7/32'),
      from: '127.0.0.1',
      communities: ['65000:1', '64512:1:2', '64512:3:4'],
      extendedCommunities: ['rt:65000:100'],
      withheldExtendedCommunities: ['lb:65000:125000'],
    });
    expect(redistributedAttributes(r!)).toEqual({
      origin: 'igp',
      communities: ['65000:1'],
      largeCommunities: ['64512:1:2', '64512:3:4'],
      extendedCommunities: ['rt:65000:100'],
    });
    // A change of the large or extended communities alone is re-originated.
    const cur = new Map([['198.51.100.7/32', { ...r!, communities: ['65000:1'] }]]);
    expect(redistributionOps(cur, [r!], p).originate).toEqual([r]);
    const cur2 = new Map([['198.51.100.7/32', { ...r!, extendedCommunities: [] }]]);
    expect(redistributionOps(cur2, [r!], p).originate).toEqual([r]);
    expect(redistributionOps(new Map([['198.51.100.7/32', r!]]), [r!], p).originate).toEqual([]);
  });

  it('a peering with another cluster node is never local, even on loopback (several agents on one host)', () => {
    const q = withPool(
      plan(
        [],
        [
          peer('127.0.0.11', { id: 'Mesh_127_0_0_11', type: 'node-to-node mesh', remoteNode: 'worker2' }),
          peer('127.0.0.12', { remoteNode: 'master1' }),
          peer('127.0.0.1'),
        ],
      ),
    );
    const got = desiredRedistribution(q, [rx('127.0.0.11', '198.51.100.7/32'), rx('127.0.0.12', '198.51.100.8/32'), rx('127.0.0.1', '198.51.100.9/32')]);
    expect(got.map((r) => r.from)).toEqual(['127.0.0.1']);
  });

  it('one route per prefix: the best one wins', () => {
    const got = desiredRedistribution(p, [
      rx('127.0.0.1', '198.51.100.7/32', { communities: ['1:1'] }),
      rx('192.0.2.1', '198.51.100.7/32', { communities: ['2:2'], best: true }),
    ]);
    expect(got.map((r) => [r.from, r.communities])).toEqual([['192.0.2.1', ['2:2']]]);
  });

  it('ops: originate new and changed, withdraw gone, forget (no withdraw) what the plan now originates', () => {
    const cur = new Map([
      ['198.51.100.1/32', { prefix: Prefix.parse('198.51.100.1/32'), from: '127.0.0.1', communities: [] }],
      ['198.51.100.2/32', { prefix: Prefix.parse('198.51.100.2/32'), from: '127.0.0.1', communities: ['1:1'] }],
      ['198.51.100.3/32', { prefix: Prefix.parse('198.51.100.3/32'), from: '127.0.0.1', communities: [] }],
    ]);
    const next = withPool(plan([route('198.51.100.3/32')], [...p.peers]));
    const ops = redistributionOps(
      cur,
      [
        { prefix: Prefix.parse('198.51.100.2/32'), from: '127.0.0.1', communities: ['1:2'] },
        { prefix: Prefix.parse('198.51.100.4/32'), from: '127.0.0.1', communities: [] },
      ],
      next,
    );
    expect(ops.originate.map((r) => r.prefix.toString())).toEqual(['198.51.100.2/32', '198.51.100.4/32']);
    expect(ops.withdraw.map(String)).toEqual(['198.51.100.1/32']);
    expect(ops.forget).toEqual(['198.51.100.3/32']);
  });
});

describe('the interface of a re-advertised route (BGPFilter interface rules)', () => {
  const learned = (dev: string | null): LearnedJson => ({
    prefix: '198.51.100.9/32',
    source: 'kernel',
    protocol: 3,
    type: 'unicast',
    dev,
    metric: 1024,
    exported: true,
    why: 'test',
  });
  const kernel = (dev: string | null): Redistributed => ({ prefix: Prefix.parse('198.51.100.9/32'), from: 'kernel', communities: [], kernel: learned(dev) });
  const p = withPool(plan([], [peer('127.0.0.1')]));

  it("a kernel route is originated with its device; a local peer's route and a device-less kernel route with none", () => {
    expect(redistributedOptions(kernel('cali12'))).toEqual({ iface: 'cali12' });
    expect(redistributedOptions(kernel(null))).toEqual({});
    expect(redistributedOptions({ prefix: Prefix.parse('198.51.100.7/32'), from: '127.0.0.1', communities: [] })).toEqual({});
  });

  it('a kernel route that moved to another interface is originated again; one that did not is left alone', () => {
    const cur = new Map([['198.51.100.9/32', kernel('cali1')]]);
    expect(redistributionOps(cur, [kernel('cali2')], p).originate.map((r) => redistributedOptions(r))).toEqual([{ iface: 'cali2' }]);
    expect(redistributionOps(cur, [kernel('cali1')], p).originate).toEqual([]);
  });
});

describe('the attributes of a re-advertised route', () => {
  const P = Prefix.parse('198.51.100.9/32');
  it("a local peer's communities and AS path are its own (the export policy sees them)", () => {
    expect(
      redistributedAttributes({ prefix: P, from: '127.0.0.1', communities: ['65000:1', '64512:0:7'], extendedCommunities: ['rt:65000:100'], asPath: [65100] }),
    ).toEqual({
      origin: 'igp',
      communities: ['65000:1'],
      largeCommunities: ['64512:0:7'],
      extendedCommunities: ['rt:65000:100'],
      asPath: [65100],
    });
    expect(redistributedAttributes({ prefix: P, from: '127.0.0.1', communities: [] })).toEqual({ origin: 'igp', communities: [] });
  });

  it("a kernel route's are prefixAdvertisements communities, added after the export policy, standard and large apart", () => {
    expect(redistributedAttributes({ prefix: P, from: 'kernel', communities: ['65000:1', '64512:0:7', '65000:2'], localPref: 2147482623 })).toEqual({
      origin: 'igp',
      exportCommunities: ['65000:1', '65000:2'],
      exportLargeCommunities: ['64512:0:7'],
      localPref: 2147482623,
    });
    expect(redistributedAttributes({ prefix: P, from: 'kernel', communities: [] })).toEqual({ origin: 'igp' });
  });
});
