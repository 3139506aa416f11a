/**
 * A node becoming, or ceasing to be, a route reflector: `Rib.setClusterId`
 * changes reflection live, without a session going down.
 */
import { describe, expect, it } from 'vitest';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import { prefixFromKey } from '../../src/rib/prefix-key.js';
import { A, CTX, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const SESSION: SessionInfo = { ctx: CTX, families: [4], routerId: '10.255.0.1' };

function setup() {
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
  const c1 = rib.addPeer({ address: A('192.0.2.1'), asn: 65000, rrClient: true, localAddressV4: A('192.0.2.100') });
  const c2 = rib.addPeer({ address: A('192.0.2.2'), asn: 65000, rrClient: true, localAddressV4: A('192.0.2.100') });
  const tor = rib.addPeer({ address: A('198.51.100.1'), asn: 65001, localAddressV4: A('192.0.2.100') });
  for (const [i, id] of [c1, c2, tor].entries()) rib.peerUp(id, { ...SESSION, routerId: `10.255.0.${i + 1}` }, 0);
  const held = (id: string) =>
    [...(rib.adjRibOut(id) ?? new Map()).entries()].map(([k, a]) => ({
      prefix: prefixFromKey(k).toString(),
      nextHop: a.attrs.nextHop?.toString(),
      originatorId: a.attrs.originatorId?.toString(),
      clusterList: a.attrs.clusterList?.map(String),
    }));
  return { rib, c1, c2, tor, held };
}

describe('Rib.setClusterId', () => {
  it('starts reflecting client routes (next hop untouched, ORIGINATOR_ID and CLUSTER_LIST added) and stops again, the sessions staying up', () => {
    const { rib, c1, c2, tor, held } = setup();
    rib.ingest(c1, update({ origin: 0, asPath: [], nextHop: A('192.0.2.1'), localPref: 100 }, ['198.19.1.0/26']), 0);
    rib.flushDue(1000);
    expect(held(c2)).toEqual([]); // not a reflector: iBGP routes are not passed to iBGP peers
    expect(held(tor).map((r) => r.prefix)).toEqual(['198.19.1.0/26']);

    rib.setClusterId('244.0.0.1', 1000);
    rib.flushDue(2000);
    expect(held(c2)).toEqual([{ prefix: '198.19.1.0/26', nextHop: '192.0.2.1', originatorId: '10.255.0.1', clusterList: ['244.0.0.1'] }]);
    expect(held(tor).map((r) => r.prefix)).toEqual(['198.19.1.0/26']);

    rib.setClusterId(undefined, 2000);
    rib.flushDue(3000);
    expect(held(c2)).toEqual([]);
    expect(held(tor).map((r) => r.prefix)).toEqual(['198.19.1.0/26']);
    // The sessions never went down: each peer is still in an update group.
    for (const id of [c1, c2, tor]) expect(rib.adjRibOut(id)).toBeDefined();
  });

  it('re-checks received routes against the new cluster ID (CLUSTER_LIST loop detection), both ways', () => {
    const { rib, c1 } = setup();
    rib.ingest(c1, update(ebgpAttrs([], '192.0.2.9', { clusterList: [A('244.0.0.1')] }), ['203.0.113.0/24']), 0);
    expect(rib.best(P('203.0.113.0/24'))).toBeDefined();
    rib.setClusterId('244.0.0.1', 1);
    expect(rib.best(P('203.0.113.0/24'))).toBeUndefined();
    rib.setClusterId('244.0.0.2', 2);
    expect(rib.best(P('203.0.113.0/24'))).toBeDefined();
    expect(() => rib.setClusterId('not-a-quad', 3)).toThrow(/clusterId/);
  });
});
