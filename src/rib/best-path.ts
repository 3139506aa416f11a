/**
 * Best path selection (RFC 4271 §9.1.2.2 and common practice) as a sequence
 * of set eliminations, so the result is independent of arrival order even
 * though the MED rule alone is not a total order.
 */
import { carriesLlgrStale } from './llgr.js';
import { asPathLength, neighborAs, type Path } from './path.js';

export interface MultipathOptions {
  /** Most paths kept in the ECMP set (1 disables multipath). */
  readonly maxPaths: number;
  /** Allow paths from different neighbouring ASes in the ECMP set ("as-path multipath-relax"). */
  readonly relaxNeighborAs: boolean;
}

export interface BestPathOptions {
  readonly multipath?: MultipathOptions;
  /** Compare MED across neighbouring ASes too. */
  readonly alwaysCompareMed?: boolean;
  readonly defaultLocalPref?: number;
}

export interface Selection {
  readonly best: Path;
  /** The best path first, then the equal-cost peers (at least [best]). */
  readonly multipath: readonly Path[];
}

function keepBest(paths: Path[], score: (p: Path) => number): Path[] {
  let best = Infinity;
  for (const p of paths) {
    const s = score(p);
    if (s < best) best = s;
  }
  return paths.filter((p) => score(p) === best);
}

function routerIdOf(p: Path): number {
  if (p.source.kind === 'local') return 0;
  const o = p.attrs.attrs.originatorId;
  return o !== undefined ? o.w0 : p.source.routerIdNum;
}

/** The final tie-breakers, in order: each compares two paths of the equal set. */
const TIE_BREAKS: readonly { readonly step: string; readonly cmp: (a: Path, b: Path) => number }[] = [
  { step: 'lower router ID (ORIGINATOR_ID when present)', cmp: (a, b) => routerIdOf(a) - routerIdOf(b) },
  { step: 'shorter CLUSTER_LIST', cmp: (a, b) => (a.attrs.attrs.clusterList?.length ?? 0) - (b.attrs.attrs.clusterList?.length ?? 0) },
  {
    step: 'lower peer address',
    cmp: (a, b) => {
      if (a.source.kind === 'peer' && b.source.kind === 'peer') return a.source.address.compare(b.source.address);
      return a.source.kind === b.source.kind ? 0 : a.source.kind === 'local' ? -1 : 1;
    },
  },
  { step: 'lower path id', cmp: (a, b) => a.pathId - b.pathId },
];

/** The final tie-breakers: lowest router ID (ORIGINATOR_ID when present), shortest CLUSTER_LIST, lowest peer address, lowest path id. */
function tieBreak(a: Path, b: Path): number {
  for (const t of TIE_BREAKS) {
    const d = t.cmp(a, b);
    if (d !== 0) return d;
  }
  return 0;
}

/** The elimination steps of §9.1.2.2 (and common practice) before the tie-breakers; each keeps the best of a set. */
const STEPS: readonly { readonly step: string; readonly keep: (c: Path[], opts: BestPathOptions) => Path[] }[] = [
  // RFC 9494 §4.3: a long-lived stale route is the least preferred, before any other step.
  { step: 'not long-lived stale (LLGR_STALE)', keep: (c) => (c.some(isFresh) ? c.filter(isFresh) : c) },
  { step: 'higher LOCAL_PREF', keep: (c, o) => keepBest(c, (p) => -(p.attrs.attrs.localPref ?? o.defaultLocalPref ?? 100)) },
  { step: 'locally originated', keep: (c) => (c.some((p) => p.source.kind === 'local') ? c.filter((p) => p.source.kind === 'local') : c) },
  { step: 'shorter AS_PATH', keep: (c) => keepBest(c, (p) => asPathLength(p.attrs.attrs)) },
  { step: 'lower ORIGIN', keep: (c) => keepBest(c, (p) => p.attrs.attrs.origin ?? 0) },
  { step: 'lower MED (same neighbouring AS)', keep: (c, o) => eliminateMed(c, o.alwaysCompareMed ?? false) },
  { step: 'eBGP over iBGP', keep: (c) => (c.some(isExternal) ? c.filter(isExternal) : c) },
];

const isFresh = (p: Path) => !carriesLlgrStale(p.attrs.attrs);
const isExternal = (p: Path) => p.source.kind === 'local' || p.source.type === 'ebgp';

export function selectBest(candidates: readonly Path[], opts: BestPathOptions = {}): Selection | undefined {
  if (candidates.length === 0) return undefined;
  if (candidates.length === 1) return { best: candidates[0], multipath: [candidates[0]] };
  let c = candidates.slice();
  for (const s of STEPS) c = s.keep(c, opts);
  // `c` is now the multipath-equal set; the remaining steps only order it.
  c.sort(tieBreak);
  const best = c[0];
  const mp = opts.multipath;
  if (mp === undefined || mp.maxPaths <= 1) return { best, multipath: [best] };
  const bestAs = neighborAs(best.attrs.attrs);
  const multipath = (mp.relaxNeighborAs ? c : c.filter((p) => neighborAs(p.attrs.attrs) === bestAs)).slice(0, mp.maxPaths);
  return { best, multipath };
}

/** Why each candidate was or was not selected. */
export interface CandidateOutcome {
  readonly path: Path;
  /** 'best', 'multipath' (in the ECMP set), or 'lost'. */
  readonly outcome: 'best' | 'multipath' | 'lost';
  /** The step that decided against it (or, for the best path, the last step that mattered). */
  readonly step: string;
}

/** The selection with, for every candidate, the step that eliminated it: for `explain`. */
export function explainSelection(candidates: readonly Path[], opts: BestPathOptions = {}): CandidateOutcome[] {
  const sel = selectBest(candidates, opts);
  if (sel === undefined) return [];
  if (candidates.length === 1) return [{ path: sel.best, outcome: 'best', step: 'only candidate' }];
  const lostAt = new Map<Path, string>();
  let c = candidates.slice();
  let decisive = 'tie-breakers';
  for (const s of STEPS) {
    const next = s.keep(c, opts);
    if (next.length < c.length) {
      for (const p of c) if (!next.includes(p)) lostAt.set(p, s.step);
      decisive = s.step;
    }
    c = next;
  }
  for (const p of c) {
    if (p === sel.best) continue;
    const t = TIE_BREAKS.find((x) => x.cmp(sel.best, p) !== 0);
    lostAt.set(p, t?.step ?? 'equal');
  }
  if (c.length > 1) decisive = TIE_BREAKS.find((t) => c.some((p) => p !== sel.best && t.cmp(sel.best, p) !== 0))?.step ?? decisive;
  return candidates.map((path) => {
    if (path === sel.best) return { path, outcome: 'best', step: decisive };
    return { path, outcome: sel.multipath.includes(path) ? 'multipath' : 'lost', step: lostAt.get(path)! };
  });
}

/** Drops every path whose MED (missing = 0) is above the lowest among paths from the same neighbouring AS. */
function eliminateMed(paths: Path[], always: boolean): Path[] {
  const lowest = new Map<number, number>();
  for (const p of paths) {
    const as = always ? -1 : neighborAs(p.attrs.attrs);
    const med = p.attrs.attrs.med ?? 0;
    const cur = lowest.get(as);
    if (cur === undefined || med < cur) lowest.set(as, med);
  }
  return paths.filter((p) => (p.attrs.attrs.med ?? 0) === lowest.get(always ? -1 : neighborAs(p.attrs.attrs)));
}
