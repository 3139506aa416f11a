import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttrStore } from '../../src/rib/attr-store.js';
import { explainSelection, selectBest, type BestPathOptions } from '../../src/rib/best-path.js';
import { LOCAL_SOURCE, type Path, type PeerSource } from '../../src/rib/path.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A } from './helpers.js';

const store = new AttrStore();

function peer(addr: string, type: 'ebgp' | 'ibgp', routerId: string, asn = type === 'ibgp' ? 65000 : 65100): PeerSource {
  return { kind: 'peer', id: addr, address: A(addr), asn, type, routerId, routerIdNum: A(routerId).w0, rrClient: false };
}

const seq = (...asns: number[]) => [{ type: 2 as const, asns }];

function path(src: PeerSource | typeof LOCAL_SOURCE, attrs: PathAttributes, pathId = 0): Path {
  return { source: src, attrs: store.acquire({ origin: 0, nextHop: A('192.0.2.254'), ...attrs }), pathId };
}

const e1 = peer('10.0.0.1', 'ebgp', '1.1.1.1', 65001);
const e2 = peer('10.0.0.2', 'ebgp', '2.2.2.2', 65002);
const e3 = peer('10.0.0.3', 'ebgp', '0.0.0.3', 65001);
const i1 = peer('10.0.1.1', 'ibgp', '3.3.3.3');
const i2 = peer('10.0.1.2', 'ibgp', '4.4.4.4');

/** Each row: the winner first, the loser second; checked in both arrival orders. */
const table: { step: string; win: Path; lose: Path; opts?: BestPathOptions }[] = [
  { step: 'higher LOCAL_PREF', win: path(i1, { localPref: 200, asPath: seq(1, 2, 3) }), lose: path(e1, { asPath: seq(65001) }) },
  { step: 'missing LOCAL_PREF counts as 100', win: path(i1, { localPref: 101, asPath: seq(1, 2) }), lose: path(e1, { asPath: seq(65001) }) },
  {
    step: 'configured default LOCAL_PREF',
    win: path(e1, { asPath: seq(65001, 7, 8) }),
    lose: path(i1, { localPref: 90, asPath: seq(1) }),
    opts: { defaultLocalPref: 95 },
  },
  { step: 'locally originated first', win: path(LOCAL_SOURCE, { asPath: seq(1, 2, 3, 4) }), lose: path(e1, { asPath: seq(65001) }) },
  { step: 'shorter AS_PATH', win: path(e2, { asPath: seq(65002) }), lose: path(e1, { asPath: seq(65001, 9) }) },
  {
    step: 'AS_SET counts one',
    win: path(e2, {
      asPath: [
        { type: 2, asns: [65002] },
        { type: 1, asns: [1, 2, 3, 4] },
      ],
    }),
    lose: path(e1, { asPath: seq(65001, 8, 9) }),
  },
  {
    step: 'confederation segments count zero',
    win: path(e2, {
      asPath: [
        { type: 3, asns: [1, 2, 3] },
        { type: 2, asns: [65002] },
      ],
    }),
    lose: path(e1, { asPath: seq(65001, 9) }),
  },
  { step: 'lower ORIGIN', win: path(e2, { origin: 0, asPath: seq(65002) }), lose: path(e1, { origin: 1, asPath: seq(65001) }) },
  { step: 'INCOMPLETE last', win: path(e2, { origin: 1, asPath: seq(65002) }), lose: path(e1, { origin: 2, asPath: seq(65001) }) },
  { step: 'lower MED from the same neighbour AS', win: path(e3, { med: 10, asPath: seq(65001) }), lose: path(e1, { med: 20, asPath: seq(65001) }) },
  { step: 'missing MED is 0', win: path(e3, { asPath: seq(65001) }), lose: path(e1, { med: 1, asPath: seq(65001) }) },
  {
    step: 'MED ignored across neighbour ASes (router ID decides)',
    win: path(e1, { med: 50, asPath: seq(65001) }),
    lose: path(e2, { med: 0, asPath: seq(65002) }),
  },
  {
    step: 'always-compare-med',
    win: path(e2, { med: 0, asPath: seq(65002) }),
    lose: path(e1, { med: 50, asPath: seq(65001) }),
    opts: { alwaysCompareMed: true },
  },
  { step: 'eBGP over iBGP', win: path(e2, { asPath: seq(65002) }), lose: path(i1, { asPath: seq(65001) }) },
  { step: 'lower router ID', win: path(i1, { asPath: seq(65001) }), lose: path(i2, { asPath: seq(65001) }) },
  { step: 'ORIGINATOR_ID replaces router ID', win: path(i2, { asPath: seq(65001), originatorId: A('0.0.0.9') }), lose: path(i1, { asPath: seq(65001) }) },
  {
    step: 'shorter CLUSTER_LIST',
    win: path(i2, { asPath: seq(65001), originatorId: A('9.9.9.9'), clusterList: [A('1.0.0.1')] }),
    lose: path(i1, { asPath: seq(65001), originatorId: A('9.9.9.9'), clusterList: [A('1.0.0.1'), A('1.0.0.2')] }),
  },
  {
    step: 'lower peer address',
    win: path(peer('10.0.1.1', 'ibgp', '5.5.5.5'), { asPath: seq(65001) }),
    lose: path(peer('10.0.1.9', 'ibgp', '5.5.5.5'), { asPath: seq(65001) }),
  },
  {
    step: 'lower path id from one ADD-PATH peer',
    win: path(i1, { asPath: seq(65001) }, 1),
    lose: path(i1, { asPath: seq(65001), med: 0, communities: [1] }, 2),
  },
];

/** The step explain names for each table row. */
const WHY: Record<string, string> = {
  'higher LOCAL_PREF': 'higher LOCAL_PREF',
  'missing LOCAL_PREF counts as 100': 'higher LOCAL_PREF',
  'configured default LOCAL_PREF': 'higher LOCAL_PREF',
  'locally originated first': 'locally originated',
  'shorter AS_PATH': 'shorter AS_PATH',
  'AS_SET counts one': 'shorter AS_PATH',
  'confederation segments count zero': 'shorter AS_PATH',
  'lower ORIGIN': 'lower ORIGIN',
  'INCOMPLETE last': 'lower ORIGIN',
  'lower MED from the same neighbour AS': 'lower MED (same neighbouring AS)',
  'missing MED is 0': 'lower MED (same neighbouring AS)',
  'MED ignored across neighbour ASes (router ID decides)': 'lower router ID (ORIGINATOR_ID when present)',
  'always-compare-med': 'lower MED (same neighbouring AS)',
  'eBGP over iBGP': 'eBGP over iBGP',
  'lower router ID': 'lower router ID (ORIGINATOR_ID when present)',
  'ORIGINATOR_ID replaces router ID': 'lower router ID (ORIGINATOR_ID when present)',
  'shorter CLUSTER_LIST': 'shorter CLUSTER_LIST',
  'lower peer address': 'lower peer address',
  'lower path id from one ADD-PATH peer': 'lower path id',
};

const byIndex = (all: Path[]) => (a: Path, b: Path) => all.indexOf(a) - all.indexOf(b);

describe('best path', () => {
  for (const row of table) {
    it(row.step, () => {
      expect(selectBest([row.win, row.lose], row.opts)!.best).toBe(row.win);
      expect(selectBest([row.lose, row.win], row.opts)!.best).toBe(row.win);
      // explain names the step that decided, for both paths.
      const [w, l] = explainSelection([row.win, row.lose], row.opts);
      expect([w.outcome, l.outcome]).toEqual(['best', 'lost']);
      expect(l.step).toBe(WHY[row.step]);
      expect(w.step).toBe(WHY[row.step]);
    });
  }

  it('MED elimination is per neighbour AS, not pairwise', () => {
    // Pairwise comparison would cycle: a beats b on MED, b beats c on router ID, c beats a on router ID.
    const a = path(peer('10.0.0.5', 'ebgp', '9.0.0.1', 65001), { med: 1, asPath: seq(65001) });
    const b = path(peer('10.0.0.6', 'ebgp', '8.0.0.1', 65001), { med: 2, asPath: seq(65001) });
    const c = path(peer('10.0.0.7', 'ebgp', '8.5.0.1', 65009), { med: 0, asPath: seq(65009) });
    for (const order of [
      [a, b, c],
      [b, c, a],
      [c, a, b],
      [c, b, a],
    ])
      expect(selectBest(order)!.best).toBe(c);
  });

  it('ECMP keeps paths equal through eBGP-over-iBGP from the same neighbour AS', () => {
    const p1 = path(e1, { asPath: seq(65001, 5) });
    const p3 = path(e3, { asPath: seq(65001, 6) });
    const p2 = path(e2, { asPath: seq(65002, 5) });
    const longer = path(peer('10.0.0.8', 'ebgp', '0.0.0.1', 65001), { asPath: seq(65001, 5, 5) });
    const sel = selectBest([p1, p2, p3, longer], { multipath: { maxPaths: 4, relaxNeighborAs: false } })!;
    expect(sel.best).toBe(p3); // router ID 0.0.0.3
    expect(sel.multipath).toEqual([p3, p1]);
    const relaxed = selectBest([p1, p2, p3, longer], { multipath: { maxPaths: 4, relaxNeighborAs: true } })!;
    expect(relaxed.multipath).toEqual([p3, p1, p2]);
    const capped = selectBest([p1, p2, p3], { multipath: { maxPaths: 2, relaxNeighborAs: true } })!;
    expect(capped.multipath).toEqual([p3, p1]);
    expect(selectBest([p1, p3])!.multipath).toEqual([p3]);
  });

  it('does not depend on arrival order (property)', () => {
    const sources = [e1, e2, e3, i1, i2, peer('10.0.2.1', 'ibgp', '1.1.1.1'), peer('10.0.2.2', 'ebgp', '7.7.7.7', 65002)];
    const arb = fc.uniqueArray(
      fc.record({
        src: fc.integer({ min: 0, max: sources.length }),
        pathId: fc.integer({ min: 0, max: 2 }),
        lp: fc.option(fc.constantFrom(90, 100, 110), { nil: undefined }),
        len: fc.integer({ min: 1, max: 3 }),
        first: fc.constantFrom(65001, 65002),
        origin: fc.constantFrom(0 as const, 1 as const),
        med: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
        orig: fc.option(fc.constantFrom('0.0.0.1', '9.9.9.9'), { nil: undefined }),
        clusters: fc.integer({ min: 0, max: 2 }),
      }),
      { minLength: 1, maxLength: 8, selector: (r) => `${r.src}/${r.src === sources.length ? 0 : r.pathId}` },
    );
    fc.assert(
      fc.property(arb, fc.integer({ min: 1, max: 4 }), fc.boolean(), fc.infiniteStream(fc.nat()), (rows, maxPaths, relax, rnd) => {
        const paths = rows.map((r) =>
          path(
            r.src === sources.length ? LOCAL_SOURCE : sources[r.src],
            {
              localPref: r.lp,
              origin: r.origin,
              med: r.med,
              asPath: seq(r.first, ...Array(r.len - 1).fill(7)),
              originatorId: r.orig !== undefined ? A(r.orig) : undefined,
              clusterList: Array.from({ length: r.clusters }, (_, i) => A(`1.0.0.${i + 1}`)),
            },
            r.src === sources.length ? 0 : r.pathId,
          ),
        );
        const opts = { multipath: { maxPaths, relaxNeighborAs: relax } };
        const ref = selectBest(paths, opts)!;
        const shuffled = paths.slice();
        const it = rnd[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (it.next().value as number) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
        }
        const got = selectBest(shuffled, opts)!;
        expect(got.best).toBe(ref.best);
        const why = explainSelection(shuffled, opts);
        expect(why.filter((w) => w.outcome === 'best').map((w) => w.path)).toEqual([ref.best]);
        expect(
          why
            .filter((w) => w.outcome !== 'lost')
            .map((w) => w.path)
            .sort(byIndex(paths)),
        ).toEqual([...ref.multipath].sort(byIndex(paths)));
        for (const w of why) expect(Object.values(WHY).concat('tie-breakers', 'only candidate')).toContain(w.step);
        expect(got.multipath).toEqual(ref.multipath);
        expect(got.multipath[0]).toBe(got.best);
        expect(got.multipath.length).toBeLessThanOrEqual(maxPaths);
      }),
    );
  });
});
