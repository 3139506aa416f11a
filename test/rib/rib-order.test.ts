import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rib } from '../../src/rib/rib.js';
import type { UpdateMessage } from '../../src/wire/types.js';
import { A, CTX, decodeFake, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const PEERS = [
  { address: '10.0.0.1', asn: 65001 },
  { address: '10.0.0.2', asn: 65001 },
  { address: '10.0.0.3', asn: 65002 },
  { address: '10.0.1.1', asn: 65000 },
  { address: '10.0.1.2', asn: 65000 },
];
const PREFIXES = ['198.51.100.0/24', '203.0.113.0/24', '2001:db8:1::/48'];

function build(multipath = { maxPaths: 3, relaxNeighborAs: false }) {
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker(), multipath });
  const ids = PEERS.map((p) => rib.addPeer({ address: A(p.address), asn: p.asn }));
  ids.forEach((id, i) => rib.peerUp(id, { ctx: CTX, families: [4, 6], routerId: `1.1.1.${10 - i}` }, 0));
  return { rib, ids };
}

function announce(prefix: string, first: number, len: number, med: number | undefined, lp: number | undefined): UpdateMessage {
  const attrs = ebgpAttrs([first, ...Array(len).fill(64512)], '10.9.9.9', { med, localPref: lp });
  if (prefix.includes(':')) return update({ ...attrs, mpReach: { afi: 2, safi: 1, nextHops: [A('2001:db8::9')], nlri: [P(prefix)] } }, []);
  return update(attrs, [prefix]);
}

describe('Loc-RIB arrival order', () => {
  it('best path and ECMP set do not depend on the order UPDATEs arrive in (property)', () => {
    const msg = fc.record({
      peer: fc.integer({ min: 0, max: PEERS.length - 1 }),
      prefix: fc.constantFrom(...PREFIXES),
      len: fc.integer({ min: 0, max: 2 }),
      med: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
      lp: fc.option(fc.constantFrom(100, 200), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc
          .uniqueArray(msg, { maxLength: 12, selector: (m) => `${m.peer} ${m.prefix}` })
          .chain((msgs) => fc.tuple(fc.constant(msgs), fc.shuffledSubarray(msgs, { minLength: msgs.length, maxLength: msgs.length }))),
        ([msgs, perm]) => {
          const a = build();
          const b = build();
          for (const [r, list] of [
            [a, msgs],
            [b, perm],
          ] as const) {
            for (const m of list)
              r.rib.ingest(r.ids[m.peer], announce(m.prefix, PEERS[m.peer].asn === 65000 ? 65005 : PEERS[m.peer].asn, m.len, m.med, m.lp), 0);
          }
          for (const p of PREFIXES) {
            const ba = a.rib.best(P(p));
            const bb = b.rib.best(P(p));
            expect(ba?.source.kind === 'peer' ? ba.source.id : undefined).toBe(bb?.source.kind === 'peer' ? bb.source.id : undefined);
            const ids = (r: Rib) => r.multipath(P(p)).map((x) => (x.source.kind === 'peer' ? x.source.id : 'local'));
            expect(ids(a.rib)).toEqual(ids(b.rib));
          }
          // And the planned output agrees too, up to prefix order inside a message.
          const routes = (m: Uint8Array): string[] => {
            const [kind, ...rest] = decodeFake(m).split(' ');
            if (kind === 'A') return rest.slice(2).map((p) => `A ${rest[0]} ${rest[1]} ${p}`);
            if (kind === 'W') return rest.map((p) => `W ${p}`);
            return [Array.from(m).join(',')];
          };
          const out = (r: Rib) => r.flushDue(1000).map((s) => [s.peerId, s.messages.flatMap(routes).sort()]);
          expect(out(a.rib)).toEqual(out(b.rib));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('an incremental history with withdrawals ends where the final routes alone lead (property)', () => {
    const op = fc.record({
      peer: fc.integer({ min: 0, max: PEERS.length - 1 }),
      prefix: fc.constantFrom(...PREFIXES),
      withdraw: fc.boolean(),
      len: fc.integer({ min: 0, max: 2 }),
      med: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), fc.integer({ min: 0, max: 1000 }), (ops, flushEvery) => {
        const inc = build();
        const fin = build();
        const last = new Map<string, (typeof ops)[number]>();
        const asnOf = (i: number) => (PEERS[i].asn === 65000 ? 65005 : PEERS[i].asn);
        ops.forEach((o, t) => {
          const msg = o.withdraw
            ? o.prefix.includes(':')
              ? update({ mpUnreach: { afi: 2, safi: 1, withdrawn: [P(o.prefix)] } }, [])
              : update({}, [], [o.prefix])
            : announce(o.prefix, asnOf(o.peer), o.len, o.med, undefined);
          inc.rib.ingest(inc.ids[o.peer], msg, t);
          if (flushEvery > 0 && t % ((flushEvery % 7) + 1) === 0) inc.rib.flushDue(t + 1000);
          last.set(`${o.peer} ${o.prefix}`, o);
        });
        for (const o of [...last.values()].reverse())
          if (!o.withdraw) fin.rib.ingest(fin.ids[o.peer], announce(o.prefix, asnOf(o.peer), o.len, o.med, undefined), 0);
        for (const p of PREFIXES) {
          const ids = (r: Rib) => r.multipath(P(p)).map((x) => (x.source.kind === 'peer' ? x.source.id : 'local'));
          expect(ids(inc.rib)).toEqual(ids(fin.rib));
        }
        // The Adj-RIB-Out reached incrementally equals the one planned in one go.
        inc.rib.flushDue(1e6);
        fin.rib.flushDue(1e6);
        for (let i = 0; i < PEERS.length; i++) {
          const out = (r: Rib, id: string) =>
            [...r.adjRibOut(id)!].map(([k, v]) => `${k} ${JSON.stringify(v.attrs, (_k, x) => (typeof x === 'bigint' ? String(x) : x))}`).sort();
          expect(out(inc.rib, inc.ids[i])).toEqual(out(fin.rib, fin.ids[i]));
        }
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the ECMP set visible, capped and per neighbour AS unless relaxed', () => {
    const { rib, ids } = build({ maxPaths: 2, relaxNeighborAs: false });
    const mp = (r: Rib) => r.multipath(P('198.51.100.0/24')).map((p) => (p.source.kind === 'peer' ? p.source.id : ''));
    for (const i of [0, 1, 2]) rib.ingest(ids[i], announce('198.51.100.0/24', PEERS[i].asn, 1, undefined, undefined), 0);
    // Router IDs descend with the peer index, so 10.0.0.3 (AS 65002) wins and has no same-AS partner.
    expect(mp(rib)).toEqual(['10.0.0.3']);
    rib.ingest(ids[2], update({}, [], ['198.51.100.0/24']), 1);
    expect(mp(rib)).toEqual(['10.0.0.2', '10.0.0.1']);
    const capped = build({ maxPaths: 2, relaxNeighborAs: true });
    for (const i of [0, 1, 2]) capped.rib.ingest(capped.ids[i], announce('198.51.100.0/24', PEERS[i].asn, 1, undefined, undefined), 0);
    expect(mp(capped.rib)).toEqual(['10.0.0.3', '10.0.0.2']);
    const relaxed = build({ maxPaths: 8, relaxNeighborAs: true });
    for (const i of [0, 1, 2, 3])
      relaxed.rib.ingest(relaxed.ids[i], announce('198.51.100.0/24', PEERS[i].asn === 65000 ? 65005 : PEERS[i].asn, 1, undefined, undefined), 0);
    // The iBGP path is not equal through eBGP-over-iBGP.
    expect(mp(relaxed.rib)).toEqual(['10.0.0.3', '10.0.0.2', '10.0.0.1']);
  });
});
