import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import { AdjRibIn, splitInKey } from '../../src/rib/adj-rib-in.js';
import { AttrStore } from '../../src/rib/attr-store.js';
import type { PeerSource } from '../../src/rib/path.js';
import type { ImportPolicy } from '../../src/rib/ports.js';
import { familyOfKey, keyOf } from '../../src/rib/prefix-key.js';
import { Rib } from '../../src/rib/rib.js';
import type { PathAttributes, UpdateMessage } from '../../src/wire/types.js';
import { A, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const NH6 = A('2001:db8::1');

function v6Update(attrs: PathAttributes, prefixes: string[]): UpdateMessage {
  return { type: 'update', withdrawn: [], nlri: [], attributes: { ...attrs, mpReach: { afi: 2, safi: 1, nextHops: [NH6], nlri: prefixes.map(P) } } };
}

describe('Adj-RIB-In storage', () => {
  it('two IPv6 UPDATEs with equal attributes share one AttrSet, holding no NLRI', () => {
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
    const e1 = rib.addPeer({ address: A('2001:db8::1'), asn: 65001 });
    rib.ingest(e1, v6Update({ origin: 0, asPath: [{ type: 2, asns: [65001] }] }, ['2001:db8:1::/48', '2001:db8:2::/48']), 0);
    rib.ingest(e1, v6Update({ origin: 0, asPath: [{ type: 2, asns: [65001] }] }, ['2001:db8:3::/48']), 1);
    const a = rib.best(P('2001:db8:1::/48'))!.attrs;
    expect(rib.best(P('2001:db8:3::/48'))!.attrs).toBe(a);
    expect(rib.store.size).toBe(1);
    expect(a.attrs.mpReach!.nlri).toEqual([]);
    expect(a.attrs.mpReach!.nextHops.map(String)).toEqual(['2001:db8::1']);
    expect(a.attrs.mpUnreach).toBeUndefined();
  });

  it('without an import policy the pre- and post-policy copies are one set', () => {
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
    const e1 = rib.addPeer({ address: A('10.0.0.1'), asn: 65001 });
    rib.ingest(e1, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 0);
    const [pre] = rib.adjRibIn(e1, 'pre');
    const [post] = rib.adjRibIn(e1, 'post');
    expect(post.attrs).toBe(pre.attrs);
    expect(rib.best(P('198.51.100.0/24'))!.attrs.refs).toBe(2); // one reference as pre, one as post, no third copy
  });

  it('markStale(family) turns every route of that family stale, each variant into its one stale twin, the other family and the counts untouched', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            n: fc.integer({ min: 0, max: 199 }),
            v6: fc.boolean(),
            attrs: fc.integer({ min: 0, max: 3 }),
            post: fc.integer({ min: 0, max: 2 }),
            stale: fc.boolean(),
            pathId: fc.integer({ min: 0, max: 1 }),
          }),
          { maxLength: 120 },
        ),
        fc.constantFrom(4 as const, 6 as const),
        (routes, family) => {
          const store = new AttrStore();
          const source: PeerSource = { kind: 'peer', id: 'x', address: A('10.0.0.1'), asn: 65001, type: 'ebgp', routerIdNum: 0, rrClient: false };
          const sets = [0, 1, 2, 3].map((m) => store.acquire(ebgpAttrs([65001], '10.0.0.1', { med: m })));
          const t = new AdjRibIn(source);
          const want = new AdjRibIn(source);
          const keyOfRoute = (r: (typeof routes)[number]) =>
            keyOf(r.v6 ? P(`2001:db8:${r.n.toString(16)}::/48`) : Prefix.v4((0xc6120000 + r.n * 256) >>> 0, 24));
          for (const r of routes) {
            const post = r.post === 0 ? null : sets[(r.attrs + r.post) % 4];
            t.set(keyOfRoute(r), r.pathId, false, sets[r.attrs], post, r.stale);
            want.set(keyOfRoute(r), r.pathId, false, sets[r.attrs], post, r.stale);
          }
          const before = { v4: t.countsOf(4), v6: t.countsOf(6), size: t.size };
          t.markStale(family);
          // What it must equal: the same routes set one by one with the stale flag.
          want.forEach((v, k) => {
            if (!v.stale && familyOfKey(typeof k === 'number' ? k : splitInKey(k).key) === family) want.set(k, v.pathId, v.addPath, v.pre, v.post, true);
          });
          expect({ v4: t.countsOf(4), v6: t.countsOf(6), size: t.size }).toEqual(before);
          expect(t.variantCount).toBe(want.variantCount);
          const seen = new Map<string, unknown>();
          want.forEach((w, k) => {
            const v = t.get(k)!;
            expect([v.stale, v.pathId, v.pre, v.post]).toEqual([w.stale, w.pathId, w.pre, w.post]);
            // Equal parts, one shared variant.
            const id = `${v.stale}|${v.pathId}|${v.pre.id}|${v.post?.id ?? 0}`;
            if (seen.has(id)) expect(seen.get(id)).toBe(v);
            else seen.set(id, v);
          });
        },
      ),
    );
  });

  it('routes with equal parts share one variant, which is also their Loc-RIB candidate', () => {
    const store = new AttrStore();
    const source: PeerSource = { kind: 'peer', id: 'x', address: A('10.0.0.1'), asn: 65001, type: 'ebgp', routerIdNum: 0, rrClient: false };
    const t = new AdjRibIn(source);
    const pre = store.acquire(ebgpAttrs([65001], '10.0.0.1'));
    const post = store.acquire(ebgpAttrs([65001], '10.0.0.1', { med: 5 }));
    const vs = Array.from({ length: 1000 }, (_, i) => t.set(keyOf(Prefix.v4((0x0a000000 + i * 256) >>> 0, 24)), 0, false, pre, post, false));
    expect(new Set(vs).size).toBe(1);
    expect(t.size).toBe(1000);
    expect(t.variantCount).toBe(1);
    expect(vs[0].attrs).toBe(post);
    expect(vs[0].source).toBe(source);
    // A stale flag makes a second variant; deleting every route frees them all.
    const k0 = keyOf(Prefix.v4(0x0a000000, 24));
    expect(t.set(k0, 0, false, pre, post, true).stale).toBe(true);
    expect(t.variantCount).toBe(2);
    expect(t.get(k0)!.stale).toBe(true);
    for (let i = 0; i < 1000; i++) t.delete(keyOf(Prefix.v4((0x0a000000 + i * 256) >>> 0, 24)));
    expect(t.size).toBe(0);
    expect(t.variantCount).toBe(0);
  });
});

// ------------------------------------------------------------ model check

const PREFIXES = ['198.51.100.0/24', '198.51.100.128/25', '203.0.113.0/24', '192.0.2.7/32', '2001:db8:1::/48', '2001:db8:2::/64', '2001:db8::5/128'];
const POLICIES: (ImportPolicy | undefined)[] = [
  undefined,
  (r) => (r.prefix.length > 24 ? { verdict: 'reject', attrs: r.attrs } : { verdict: 'accept', attrs: { ...r.attrs, localPref: 150 } }),
  (r) => ({ verdict: 'accept', attrs: { ...r.attrs, med: r.prefix.length } }),
  (r) => ((r.attrs.med ?? 0) % 2 === 1 ? { verdict: 'reject', attrs: r.attrs } : { verdict: 'accept', attrs: r.attrs }),
];

type Op =
  | { op: 'announce'; peer: number; set: number; prefixes: number[]; pathId: number }
  | { op: 'withdraw'; peer: number; prefixes: number[]; pathId: number }
  | { op: 'policy'; peer: number; policy: number }
  | { op: 'stale'; peer: number; family: 4 | 6 }
  | { op: 'purge'; peer: number; family: 4 | 6 };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('announce' as const),
      peer: fc.nat(2),
      set: fc.nat(3),
      prefixes: fc.uniqueArray(fc.nat(PREFIXES.length - 1), { minLength: 1, maxLength: 4 }),
      pathId: fc.integer({ min: 1, max: 2 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('withdraw' as const),
      peer: fc.nat(2),
      prefixes: fc.uniqueArray(fc.nat(PREFIXES.length - 1), { minLength: 1, maxLength: 4 }),
      pathId: fc.integer({ min: 1, max: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('policy' as const), peer: fc.nat(2), policy: fc.nat(POLICIES.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('stale' as const), peer: fc.nat(2), family: fc.constantFrom(4 as const, 6 as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('purge' as const), peer: fc.nat(2), family: fc.constantFrom(4 as const, 6 as const) }) },
);

/** Peers: two eBGP (no ADD-PATH), one iBGP with ADD-PATH ids. */
const PEERS = [
  { address: '10.0.0.1', asn: 65001, addPath: false },
  { address: '10.0.0.2', asn: 65002, addPath: false },
  { address: '10.0.1.1', asn: 65000, addPath: true },
];

interface ModelRoute {
  prefix: string;
  pathId: number | undefined;
  set: number;
  stale: boolean;
}

function preAttrs(peer: number, set: number): PathAttributes {
  const p = PEERS[peer];
  return {
    origin: 0,
    asPath: p.asn === 65000 ? [] : [{ type: 2, asns: [p.asn] }],
    nextHop: A(p.address),
    med: set,
    localPref: p.asn === 65000 ? 100 + set : undefined,
  };
}

function toUpdate(peer: number, set: number | undefined, prefixes: string[], pathId: number | undefined): UpdateMessage {
  const v4 = prefixes.filter((p) => !p.includes(':'));
  const v6 = prefixes.filter((p) => p.includes(':'));
  const ids = (ps: string[]) => (pathId === undefined ? undefined : ps.map(() => pathId));
  if (set === undefined) {
    return {
      type: 'update',
      withdrawn: v4.map(P),
      withdrawnPathIds: ids(v4),
      nlri: [],
      attributes: v6.length > 0 ? { mpUnreach: { afi: 2, safi: 1, withdrawn: v6.map(P), pathIds: ids(v6) } } : {},
    };
  }
  const a = preAttrs(peer, set);
  return {
    type: 'update',
    withdrawn: [],
    nlri: v4.map(P),
    nlriPathIds: ids(v4),
    attributes: v6.length > 0 ? { ...a, mpReach: { afi: 2, safi: 1, nextHops: [NH6], nlri: v6.map(P), pathIds: ids(v6) } } : a,
  };
}

/** What import makes of a model route: the fields the checks compare, or null when refused. */
function modelPost(peer: number, r: ModelRoute, policy: number): { med: number | undefined; localPref: number | undefined } | null {
  const pre = preAttrs(peer, r.set);
  const base = PEERS[peer].asn === 65000 ? pre : { ...pre, localPref: undefined };
  const pol = POLICIES[policy];
  if (pol === undefined) return { med: base.med, localPref: base.localPref };
  const res = pol(
    { prefix: P(r.prefix), attrs: base, source: { kind: 'local' } },
    { peer: { address: A(PEERS[peer].address), asn: PEERS[peer].asn, type: 'ebgp', localAsn: 65000 }, direction: 'import' },
  );
  return res.verdict === 'reject' ? null : { med: res.attrs.med, localPref: res.attrs.localPref };
}

describe('compact Adj-RIB-In against a Map model', () => {
  it('answers like a Map after random ingest, withdraw, policy changes and graceful restart (property)', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40, size: 'large' }), (ops) => {
        const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
        const ids = PEERS.map((p) => rib.addPeer({ address: A(p.address), asn: p.asn }));
        const model = PEERS.map(() => new Map<string, ModelRoute>());
        const policy = PEERS.map(() => 0);
        for (const o of ops) {
          const peer = o.peer;
          const pathId = PEERS[peer].addPath && (o.op === 'announce' || o.op === 'withdraw') ? o.pathId : undefined;
          const mk = (prefix: string) => `${prefix}#${pathId ?? '-'}`;
          if (o.op === 'announce') {
            const ps = o.prefixes.map((i) => PREFIXES[i]);
            rib.ingest(ids[peer], toUpdate(peer, o.set, ps, pathId), 0);
            for (const p of ps) model[peer].set(mk(p), { prefix: p, pathId, set: o.set, stale: false });
          } else if (o.op === 'withdraw') {
            const ps = o.prefixes.map((i) => PREFIXES[i]);
            rib.ingest(ids[peer], toUpdate(peer, undefined, ps, pathId), 0);
            for (const p of ps) model[peer].delete(mk(p));
          } else if (o.op === 'policy') {
            rib.setImportPolicy(ids[peer], POLICIES[o.policy], 0);
            policy[peer] = o.policy;
          } else if (o.op === 'stale') {
            rib.markStale(ids[peer], o.family);
            for (const r of model[peer].values()) if (P(r.prefix).family === o.family) r.stale = true;
          } else {
            const gone = [...model[peer].entries()].filter(([, r]) => r.stale && P(r.prefix).family === o.family);
            expect(rib.purgeStale(ids[peer], o.family, 0)).toBe(gone.length);
            for (const [k] of gone) model[peer].delete(k);
          }
        }
        const canon = (xs: { prefix: string; pathId: number | undefined }[]) => xs.map((x) => `${x.prefix}#${x.pathId ?? '-'}`).sort();
        for (let peer = 0; peer < PEERS.length; peer++) {
          const routes = [...model[peer].values()];
          const pre = rib.adjRibIn(ids[peer], 'pre');
          expect(canon(pre.map((r) => ({ prefix: r.prefix.toString(), pathId: r.pathId })))).toEqual(canon(routes));
          const byKey = new Map(routes.map((r) => [`${r.prefix}#${r.pathId ?? '-'}`, r]));
          for (const r of pre) {
            const m = byKey.get(`${r.prefix.toString()}#${r.pathId ?? '-'}`)!;
            expect([r.attrs.med, r.stale]).toEqual([m.set, m.stale]);
          }
          const post = rib.adjRibIn(ids[peer], 'post');
          const want = routes.map((r) => ({ r, p: modelPost(peer, r, policy[peer]) })).filter((x) => x.p !== null);
          expect(canon(post.map((r) => ({ prefix: r.prefix.toString(), pathId: r.pathId })))).toEqual(canon(want.map((x) => x.r)));
          for (const r of post) {
            const p = modelPost(peer, byKey.get(`${r.prefix.toString()}#${r.pathId ?? '-'}`)!, policy[peer])!;
            expect([r.attrs.med, r.attrs.localPref]).toEqual([p.med, p.localPref]);
          }
          // the cheap counts (status()) agree with the model
          expect(rib.adjRibInCounts(ids[peer])).toEqual({ received: routes.length, accepted: want.length });
        }
        // The Loc-RIB holds exactly the accepted routes as candidates.
        for (const prefix of PREFIXES) {
          const want: string[] = [];
          for (let peer = 0; peer < PEERS.length; peer++)
            for (const r of model[peer].values())
              if (r.prefix === prefix && modelPost(peer, r, policy[peer]) !== null) want.push(`${PEERS[peer].address}#${r.pathId ?? 0}`);
          const got = rib.candidates(P(prefix)).map((c) => `${c.source.kind === 'peer' ? c.source.address.toString() : 'local'}#${c.pathId}`);
          expect(got.sort()).toEqual(want.sort());
        }
        // Withdrawing everything leaves no attribute set behind.
        for (let peer = 0; peer < PEERS.length; peer++) rib.removePeer(ids[peer], 1);
        expect(rib.store.size).toBe(0);
        expect(rib.locRibSize).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});
