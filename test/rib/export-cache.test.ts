/**
 * An update group keeps its export results across plans (input attribute
 * set → output set, per family and source). Whatever happens between
 * flushes — routes in and out, sources restarting with another router ID
 * (reflection writes it into ORIGINATOR_ID), members joining and leaving
 * (eBGP split horizon) — every peer's Adj-RIB-Out must hold exactly what the
 * export rules give from scratch for the current best paths
 * (`Rib.exportPreview`, which computes them afresh each time).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attrsEqual } from '../../src/rib/attr-store.js';
import { keyOf } from '../../src/rib/prefix-key.js';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A, CTX, FakePacker, P, update } from './helpers.js';

const LOCAL_ASN = 65000;
const PREFIXES = ['198.51.100.0/24', '203.0.113.0/24', '198.18.0.0/16'];
/** Peers: two iBGP reflector clients, one iBGP non-client, two eBGP peers of one AS (one update group while their export policies agree). */
const PEERS: { address: string; asn: number; rrClient: boolean }[] = [
  { address: '10.0.0.1', asn: LOCAL_ASN, rrClient: true },
  { address: '10.0.0.2', asn: LOCAL_ASN, rrClient: true },
  { address: '10.0.0.3', asn: LOCAL_ASN, rrClient: false },
  { address: '10.0.1.1', asn: 65010, rrClient: false },
  { address: '10.0.1.2', asn: 65010, rrClient: false },
];
const ROUTER_IDS = ['10.255.0.1', '10.255.0.2', '10.255.0.3'];

/**
 * Attribute sets a peer may send. Peers of one kind send equal sets, so one
 * interned set outlives a peer's restart when another peer holds it: a cache
 * keyed by set alone would hand out results computed for the old router ID
 * or the old members.
 */
function attrsFor(peer: number, i: number): PathAttributes {
  const p = PEERS[peer];
  // eBGP: a path without the peer's own AS (a route server's), or its group-mate would refuse it as a loop before split horizon
  const asPath = p.asn === LOCAL_ASN ? [] : [{ type: 2 as const, asns: [64990 + i] }];
  const base: PathAttributes = { origin: 0, asPath, nextHop: A('192.0.2.10') };
  return [base, { ...base, med: 5 }, { ...base, communities: [LOCAL_ASN * 65536 + 7] }, { ...base, localPref: 300 }][i];
}

type Op =
  | { op: 'announce'; peer: number; prefix: number; attrs: number }
  | { op: 'withdraw'; peer: number; prefix: number }
  | { op: 'restart'; peer: number; routerId: number }
  | { op: 'down'; peer: number }
  /** A new export policy (accept all, another object): the peer changes update group, its routes stay. */
  | { op: 'move'; peer: number }
  | { op: 'flush' };

const peerArb = fc.nat(PEERS.length - 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('announce' as const), peer: peerArb, prefix: fc.nat(PREFIXES.length - 1), attrs: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('withdraw' as const), peer: peerArb, prefix: fc.nat(PREFIXES.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('restart' as const), peer: peerArb, routerId: fc.nat(ROUTER_IDS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('down' as const), peer: peerArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('move' as const), peer: peerArb }) },
  { weight: 2, arbitrary: fc.constant({ op: 'flush' as const }) },
);

function session(routerId: string): SessionInfo {
  return { ctx: CTX, families: [4], routerId };
}

function check(rib: Rib, ids: string[], up: boolean[]): void {
  ids.forEach((id, i) => {
    const out = rib.adjRibOut(id);
    if (!up[i]) {
      expect(out).toBeUndefined();
      return;
    }
    for (const s of PREFIXES) {
      // Accept-all policies: what is sent is the session's rules over the route's own attributes.
      const x = rib.exportPreview(id, P(s));
      const want = x.attrs === undefined ? undefined : x.send!(x.attrs);
      const got = out!.get(keyOf(P(s)));
      if (want === undefined) expect(got, `${s} to ${id}`).toBeUndefined();
      else expect(got !== undefined && attrsEqual(got.attrs, want), `${s} to ${id}`).toBe(true);
    }
  });
}

describe('update group: export results kept across plans', () => {
  it('a reflector client back with a new router ID has its routes reflected with the new ORIGINATOR_ID, also to a group it is not in', () => {
    const rib = new Rib({ localAsn: LOCAL_ASN, routerId: '192.0.2.100', clusterId: '192.0.2.100', packer: new FakePacker() });
    // clients 0 and 1 send equal attributes (one interned set, kept alive by client 1); peer 2, a non-client, is in another group
    const ids = PEERS.slice(0, 3).map((p) => rib.addPeer({ address: A(p.address), asn: p.asn, rrClient: p.rrClient }));
    rib.peerUp(ids[0], session('10.255.0.1'), 0);
    rib.peerUp(ids[1], session('10.255.0.9'), 0);
    rib.peerUp(ids[2], session('10.255.0.3'), 0);
    const key = keyOf(P('198.51.100.0/24'));
    const originator = () => rib.adjRibOut(ids[2])!.get(key)!.attrs.originatorId?.toString();
    rib.ingest(ids[0], update(attrsFor(0, 0), ['198.51.100.0/24']), 0);
    rib.ingest(ids[1], update(attrsFor(1, 0), ['198.51.100.0/24']), 0);
    rib.flushDue(100);
    expect(originator()).toBe('10.255.0.1'); // client 0 wins on the lower router ID
    rib.peerDown(ids[0], 200);
    rib.flushDue(300);
    expect(originator()).toBe('10.255.0.9');
    rib.peerUp(ids[0], session('10.255.0.2'), 400);
    rib.ingest(ids[0], update(attrsFor(0, 0), ['198.51.100.0/24']), 400);
    rib.flushDue(500);
    expect(originator()).toBe('10.255.0.2');
  });

  it('a reflector client back from a graceful restart with a new router ID: its new routes carry the new ORIGINATOR_ID while the stale ones keep the old set alive', () => {
    const rib = new Rib({ localAsn: LOCAL_ASN, routerId: '192.0.2.100', clusterId: '192.0.2.100', packer: new FakePacker() });
    const ids = [0, 2].map((i) => rib.addPeer({ address: A(PEERS[i].address), asn: PEERS[i].asn, rrClient: PEERS[i].rrClient }));
    rib.peerUp(ids[0], session('10.255.0.1'), 0);
    rib.peerUp(ids[1], session('10.255.0.3'), 0);
    rib.ingest(ids[0], update(attrsFor(0, 0), ['198.51.100.0/24']), 0);
    rib.flushDue(100);
    rib.peerDown(ids[0], 200, { gracefulFamilies: [4] });
    rib.peerUp(ids[0], session('10.255.0.2'), 300);
    rib.ingest(ids[0], update(attrsFor(0, 0), ['203.0.113.0/24']), 300);
    rib.flushDue(400);
    expect(
      rib
        .adjRibOut(ids[1])!
        .get(keyOf(P('203.0.113.0/24')))!
        .attrs.originatorId?.toString(),
    ).toBe('10.255.0.2');
  });

  it('an eBGP peer that leaves its update group (new export policy) is no longer split horizon for the member left behind', () => {
    const rib = new Rib({ localAsn: LOCAL_ASN, routerId: '192.0.2.100', packer: new FakePacker() });
    const ids = PEERS.slice(3).map((p) => rib.addPeer({ address: A(p.address), asn: p.asn, localAddressV4: A('192.0.2.100') }));
    ids.forEach((id, i) => rib.peerUp(id, session(ROUTER_IDS[i]), 0));
    expect(rib.groupOf(ids[0])).toBe(rib.groupOf(ids[1]));
    rib.ingest(ids[0], update(attrsFor(3, 0), ['198.51.100.0/24']), 0);
    rib.flushDue(100);
    expect(rib.adjRibOut(ids[1])!.size).toBe(0); // split horizon: learned from a member of the group
    rib.setExportPolicy(ids[0], (r) => ({ verdict: 'accept', attrs: r.attrs }), 200);
    rib.flushDue(300);
    expect(rib.adjRibOut(ids[1])!.size).toBe(1);
  });

  it('any sequence of route changes, restarts and membership changes leaves every Adj-RIB-Out equal to the export rules from scratch (property)', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const rib = new Rib({ localAsn: LOCAL_ASN, routerId: '192.0.2.100', clusterId: '192.0.2.100', packer: new FakePacker() });
        const ids = PEERS.map((p) => rib.addPeer({ address: A(p.address), asn: p.asn, rrClient: p.rrClient, localAddressV4: A('192.0.2.100') }));
        const up = ids.map(() => true);
        ids.forEach((id, i) => rib.peerUp(id, session(ROUTER_IDS[i % ROUTER_IDS.length]), 0));
        let now = 0;
        for (const o of ops) {
          now += 1;
          switch (o.op) {
            case 'announce':
              if (up[o.peer]) rib.ingest(ids[o.peer], update(attrsFor(o.peer, o.attrs), [PREFIXES[o.prefix]]), now);
              break;
            case 'withdraw':
              if (up[o.peer]) rib.ingest(ids[o.peer], update({}, [], [PREFIXES[o.prefix]]), now);
              break;
            case 'restart':
              if (up[o.peer]) rib.peerDown(ids[o.peer], now);
              rib.peerUp(ids[o.peer], session(ROUTER_IDS[o.routerId]), now);
              up[o.peer] = true;
              break;
            case 'down':
              if (up[o.peer]) rib.peerDown(ids[o.peer], now);
              up[o.peer] = false;
              break;
            case 'move':
              rib.setExportPolicy(ids[o.peer], (r) => ({ verdict: 'accept', attrs: r.attrs }), now);
              break;
            case 'flush':
              now += 100;
              rib.flushDue(now);
              check(rib, ids, up);
          }
        }
        rib.flushDue(now + 1000);
        check(rib, ids, up);
      }),
      { numRuns: 300 },
    );
  });
});
