import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rib } from '../../src/rib/rib.js';
import type { ImportPolicy } from '../../src/rib/ports.js';
import { A, ebgpAttrs, FakePacker, P, update } from './helpers.js';

function setup(opts: { clusterId?: string } = {}) {
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker(), ...opts });
  const e1 = rib.addPeer({ address: A('10.0.0.1'), asn: 65001 });
  const e2 = rib.addPeer({ address: A('10.0.0.2'), asn: 65002 });
  const i1 = rib.addPeer({ address: A('10.0.1.1'), asn: 65000 });
  return { rib, e1, e2, i1 };
}

describe('Adj-RIB-In and import', () => {
  it('keeps pre- and post-policy copies and feeds the Loc-RIB', () => {
    const { rib, e1 } = setup();
    const policy: ImportPolicy = (r) =>
      r.prefix.length > 24 ? { verdict: 'reject', attrs: r.attrs } : { verdict: 'accept', attrs: { ...r.attrs, localPref: 150 } };
    rib.setImportPolicy(e1, policy, 0);
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24', '198.51.100.128/25']), 0);
    expect(rib.adjRibIn(e1, 'pre').map((r) => r.prefix.toString())).toEqual(['198.51.100.0/24', '198.51.100.128/25']);
    expect(rib.adjRibIn(e1, 'post').map((r) => [r.prefix.toString(), r.attrs.localPref])).toEqual([['198.51.100.0/24', 150]]);
    expect(rib.best(P('198.51.100.0/24'))!.attrs.attrs.localPref).toBe(150);
    expect(rib.best(P('198.51.100.128/25'))).toBeUndefined();
  });

  it('soft reconfiguration re-runs import from the pre-policy copy', () => {
    const { rib, e1 } = setup();
    rib.setImportPolicy(e1, (r) => ({ verdict: 'reject', attrs: r.attrs }), 0);
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 0);
    expect(rib.best(P('198.51.100.0/24'))).toBeUndefined();
    rib.setImportPolicy(e1, (r) => ({ verdict: 'accept', attrs: { ...r.attrs, med: 7 } }), 1);
    expect(rib.best(P('198.51.100.0/24'))!.attrs.attrs.med).toBe(7);
    rib.setImportPolicy(e1, undefined, 2);
    expect(rib.best(P('198.51.100.0/24'))!.attrs.attrs.med).toBeUndefined();
    expect(rib.adjRibIn(e1, 'pre')[0].attrs.med).toBeUndefined();
  });

  it('withdraws, replaces and shares interned attributes', () => {
    const { rib, e1 } = setup();
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24', '203.0.113.0/24']), 0);
    const a = rib.best(P('198.51.100.0/24'))!;
    expect(rib.best(P('203.0.113.0/24'))!.attrs).toBe(a.attrs);
    expect(rib.store.size).toBe(1);
    rib.ingest(e1, update(ebgpAttrs([65001, 7], '10.0.0.1'), ['198.51.100.0/24']), 1);
    expect(rib.best(P('198.51.100.0/24'))!.attrs.attrs.asPath![0].asns).toEqual([65001, 7]);
    rib.ingest(e1, update({}, [], ['198.51.100.0/24', '203.0.113.0/24']), 2);
    expect(rib.best(P('198.51.100.0/24'))).toBeUndefined();
    expect(rib.adjRibIn(e1, 'pre')).toEqual([]);
    expect(rib.store.size).toBe(0);
  });

  it('ignores LOCAL_PREF received over eBGP, but keeps it in the pre-policy copy', () => {
    const { rib, e1, e2 } = setup();
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1', { localPref: 1000 }), ['198.51.100.0/24']), 0);
    rib.ingest(e2, update(ebgpAttrs([65002], '10.0.0.2'), ['198.51.100.0/24']), 0);
    expect(rib.adjRibIn(e1, 'pre')[0].attrs.localPref).toBe(1000);
    expect(rib.adjRibIn(e1, 'post')[0].attrs.localPref).toBeUndefined();
    expect(rib.best(P('198.51.100.0/24'))!.source).toMatchObject({ id: '10.0.0.1' }); // lower peer address wins the tie
  });

  it('refuses AS loops beyond allowas-in, our ORIGINATOR_ID, and our cluster ID', () => {
    const { rib, e1, i1 } = setup({ clusterId: '192.0.2.200' });
    rib.ingest(e1, update(ebgpAttrs([65001, 65000], '10.0.0.1'), ['198.51.100.0/24']), 0);
    expect(rib.best(P('198.51.100.0/24'))).toBeUndefined();
    expect(rib.adjRibIn(e1, 'pre')).toHaveLength(1);
    rib.ingest(i1, update(ebgpAttrs([65001], '10.0.0.9', { originatorId: A('192.0.2.100') }), ['203.0.113.0/24']), 0);
    expect(rib.best(P('203.0.113.0/24'))).toBeUndefined();
    rib.ingest(i1, update(ebgpAttrs([65001], '10.0.0.9', { clusterList: [A('1.1.1.1'), A('192.0.2.200')] }), ['203.0.113.64/26']), 0);
    expect(rib.best(P('203.0.113.64/26'))).toBeUndefined();
    rib.ingest(i1, update(ebgpAttrs([65001], '10.0.0.9', { clusterList: [A('1.1.1.1')] }), ['203.0.113.128/26']), 0);
    expect(rib.best(P('203.0.113.128/26'))).toBeDefined();

    const allow = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
    const p = allow.addPeer({ address: A('10.0.0.1'), asn: 65001, allowOwnAs: 1 });
    allow.ingest(p, update(ebgpAttrs([65001, 65000], '10.0.0.1'), ['198.51.100.0/24']), 0);
    expect(allow.best(P('198.51.100.0/24'))).toBeDefined();
    allow.ingest(p, update(ebgpAttrs([65001, 65000, 65000], '10.0.0.1'), ['198.51.100.0/24']), 0);
    expect(allow.best(P('198.51.100.0/24'))).toBeUndefined();
  });

  it('keys routes by path id under ADD-PATH and picks among them', () => {
    const { rib, i1 } = setup();
    const msg = (pathId: number, med: number) => ({ ...update(ebgpAttrs([65001], '10.0.0.9', { med }), ['198.51.100.0/24']), nlriPathIds: [pathId] });
    rib.ingest(i1, msg(1, 20), 0);
    rib.ingest(i1, msg(2, 10), 0);
    expect(rib.adjRibIn(i1, 'pre').map((r) => r.pathId)).toEqual([1, 2]);
    expect(rib.best(P('198.51.100.0/24'))!.pathId).toBe(2);
    rib.ingest(i1, { ...update({}, [], ['198.51.100.0/24']), withdrawnPathIds: [2] }, 1);
    expect(rib.best(P('198.51.100.0/24'))!.pathId).toBe(1);
  });

  it('reads IPv6 routes from MP_REACH and withdrawals from MP_UNREACH', () => {
    const { rib, e1 } = setup();
    const nh = A('2001:db8::1');
    rib.ingest(
      e1,
      update({ origin: 0, asPath: [{ type: 2, asns: [65001] }], mpReach: { afi: 2, safi: 1, nextHops: [nh], nlri: [P('2001:db8:1::/48')] } }, []),
      0,
    );
    const best = rib.best(P('2001:db8:1::/48'))!;
    expect(best.attrs.attrs.mpReach!.nextHops[0].equals(nh)).toBe(true);
    rib.ingest(e1, update({ mpUnreach: { afi: 2, safi: 1, withdrawn: [P('2001:db8:1::/48')] } }, []), 1);
    expect(rib.best(P('2001:db8:1::/48'))).toBeUndefined();
  });

  it('graceful restart: marks a family stale, keeps re-announced routes, purges the rest', () => {
    const { rib, e1 } = setup();
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24', '203.0.113.0/24']), 0);
    rib.ingest(
      e1,
      update({ origin: 0, asPath: [{ type: 2, asns: [65001] }], mpReach: { afi: 2, safi: 1, nextHops: [A('2001:db8::1')], nlri: [P('2001:db8:1::/48')] } }, []),
      0,
    );
    rib.peerDown(e1, 1, { gracefulFamilies: [4] });
    expect(rib.best(P('2001:db8:1::/48'))).toBeUndefined(); // not graceful for IPv6
    expect(rib.adjRibIn(e1, 'pre').every((r) => r.stale)).toBe(true);
    expect(rib.best(P('198.51.100.0/24'))).toBeDefined();
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 2);
    expect(rib.purgeStale(e1, 4, 3)).toBe(1);
    expect(rib.best(P('198.51.100.0/24'))).toBeDefined();
    expect(rib.best(P('203.0.113.0/24'))).toBeUndefined();
    expect(rib.adjRibIn(e1, 'pre').map((r) => [r.prefix.toString(), r.stale])).toEqual([['198.51.100.0/24', false]]);
  });

  it('local originations beat peers and share one attribute set', () => {
    const { rib, e1 } = setup();
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 0);
    const attrs = { origin: 0 as const, asPath: [] };
    rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24'), P('2001:db8:5::/48')], attrs, 0);
    expect(rib.best(P('198.51.100.0/24'))!.source.kind).toBe('local');
    expect(rib.best(P('203.0.113.0/24'))).toBe(rib.best(P('2001:db8:5::/48'))); // one shared Path object
    expect(rib.store.size).toBe(2);
    rib.withdraw(P('198.51.100.0/24'), 1);
    expect(rib.best(P('198.51.100.0/24'))!.source.kind).toBe('peer');
    rib.withdraw(P('203.0.113.0/24'), 1);
    rib.withdraw(P('2001:db8:5::/48'), 1);
    expect(rib.store.size).toBe(1);
    rib.withdraw(P('2001:db8:5::/48'), 1); // idempotent
    expect(rib.locRibSize).toBe(1);
  });

  it('names a bad router ID and an unknown peer', () => {
    expect(() => new Rib({ localAsn: 1, routerId: 'nope' })).toThrow(/routerId/);
    const { rib } = setup();
    expect(() => rib.ingest('10.9.9.9', update({}, []), 0)).toThrow(/unknown peer "10.9.9.9"/);
  });

  it('reports best-path and ECMP changes to onLocChange', () => {
    const seen: string[] = [];
    const rib = new Rib({
      localAsn: 65000,
      routerId: '192.0.2.100',
      packer: new FakePacker(),
      multipath: { maxPaths: 4, relaxNeighborAs: false },
      onLocChange: (p, mp) => seen.push(`${p} ${mp.map((x) => (x.source.kind === 'peer' ? x.source.id : 'local')).join(',')}`),
    });
    const a = rib.addPeer({ address: A('10.0.0.1'), asn: 65001 });
    const b = rib.addPeer({ address: A('10.0.0.2'), asn: 65001 });
    rib.ingest(a, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 0);
    rib.ingest(b, update(ebgpAttrs([65001], '10.0.0.2'), ['198.51.100.0/24']), 0);
    rib.ingest(b, update(ebgpAttrs([65001], '10.0.0.2'), ['198.51.100.0/24']), 0); // unchanged: no event
    rib.originate(P('198.51.100.0/24'), { origin: 0 }, 1);
    rib.withdraw(P('198.51.100.0/24'), 2);
    rib.ingest(a, update({}, [], ['198.51.100.0/24']), 3);
    rib.ingest(b, update({}, [], ['198.51.100.0/24']), 3);
    expect(seen).toEqual([
      '198.51.100.0/24 10.0.0.1',
      '198.51.100.0/24 10.0.0.1,10.0.0.2',
      '198.51.100.0/24 local',
      '198.51.100.0/24 10.0.0.1,10.0.0.2',
      '198.51.100.0/24 10.0.0.2',
      '198.51.100.0/24 ',
    ]);
  });

  it('onLocChange gets the ECMP set as the Loc-RIB then holds it, and the prefix text, through every change and removal (property)', () => {
    const prefixes = ['198.51.100.0/24', '198.51.100.128/25', '203.0.113.7/32', '2001:db8::/48', '2001:db8:1:2::/64', '0.0.0.0/0'];
    const peers = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
    const step = fc.record({
      peer: fc.integer({ min: 0, max: 2 }),
      prefix: fc.integer({ min: 0, max: prefixes.length - 1 }),
      op: fc.constantFrom('announce', 'med', 'withdraw', 'originate', 'unoriginate'),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const names = new Map<string, string>();
        let calls = 0;
        const rib: Rib = new Rib({
          localAsn: 65000,
          routerId: '192.0.2.100',
          packer: new FakePacker(),
          multipath: { maxPaths: 4, relaxNeighborAs: false },
          onLocChange: (p, mp, name) => {
            calls++;
            expect(name).toBe(p.toString());
            expect(mp).toEqual(rib.multipath(p));
            for (let i = 0; i < mp.length; i++) expect(mp[i]).toBe(rib.multipath(p)[i]);
            if (mp.length === 0) names.delete(name);
            else names.set(name, name);
          },
        });
        const ids = peers.map((a) => rib.addPeer({ address: A(a), asn: 65001 }));
        for (const s of steps) {
          const p = prefixes[s.prefix];
          const nh = p.includes(':') ? undefined : peers[s.peer];
          const attrs = (med: number) =>
            ebgpAttrs([65001], nh ?? '10.0.0.1', {
              med,
              ...(nh === undefined ? { nextHop: undefined, mpReach: { afi: 2, safi: 1, nextHops: [A('2001:db8::1')], nlri: [] } } : {}),
            });
          if (s.op === 'announce') rib.ingest(ids[s.peer], update(attrs(0), [p]), 0);
          else if (s.op === 'med') rib.ingest(ids[s.peer], update(attrs(5), [p]), 0);
          else if (s.op === 'withdraw') rib.ingest(ids[s.peer], update({}, [], [p]), 0);
          else if (s.op === 'originate') rib.originate(P(p), { origin: 0 }, 0);
          else rib.withdraw(P(p), 0);
        }
        // Every prefix in the Loc-RIB was reported, and every prefix reported gone is gone.
        for (const p of prefixes) expect(names.has(p)).toBe(rib.multipath(P(p)).length > 0);
        expect(calls).toBeGreaterThanOrEqual(names.size);
      }),
    );
  });

  it('keeps no stray attribute sets when eBGP LOCAL_PREF is stripped and policy rejects', () => {
    const { rib, e1 } = setup();
    rib.setImportPolicy(e1, (r) => ({ verdict: r.prefix.length === 24 ? 'accept' : 'reject', attrs: r.attrs }), 0);
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1', { localPref: 300 }), ['198.51.100.0/25', '198.51.100.128/25']), 0);
    expect(rib.store.size).toBe(1); // only the pre-policy set
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1', { localPref: 300 }), ['203.0.113.0/24']), 0);
    expect(rib.store.size).toBe(2); // plus the stripped set the accepted route uses
    rib.setImportPolicy(e1, undefined, 1);
    expect(rib.adjRibIn(e1, 'post')).toHaveLength(3);
    rib.ingest(e1, update({}, [], ['198.51.100.0/25', '198.51.100.128/25', '203.0.113.0/24']), 2);
    expect(rib.store.size).toBe(0);
  });
});
