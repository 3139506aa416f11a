/**
 * Best path selection (RFC 4271 §9.1.2.2 and common practice) as a sequence
 * of set eliminations, so the result is independent of arrival order even
 * though the MED rule alone is not a total order.
 */
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

/** The final tie-breakers: lowest router ID (ORIGINATOR_ID when present), shortest CLUSTER_LIST, lowest peer address, lowest path id. */
export function tieBreak(a: Path, b: Path): number {
  const r = routerIdOf(a) - routerIdOf(b);
  if (r !== 0) return r;
  const c = (a.attrs.attrs.clusterList?.length ?? 0) - (b.attrs.attrs.clusterList?.length ?? 0);
  if (c !== 0) return c;
  if (a.source.kind === 'peer' && b.source.kind === 'peer') {
    const d = a.source.address.compare(b.source.address);
    if (d !== 0) return d;
  } else if (a.source.kind !== b.source.kind) return a.source.kind === 'local' ? -1 : 1;
  return a.pathId - b.pathId;
}

export function selectBest(candidates: readonly Path[], opts: BestPathOptions = {}): Selection | undefined {
  if (candidates.length === 0) return undefined;
  if (candidates.length === 1) return { best: candidates[0], multipath: [candidates[0]] };
  const defLp = opts.defaultLocalPref ?? 100;
  let c = keepBest(candidates.slice(), (p) => -(p.attrs.attrs.localPref ?? defLp));
  if (c.some((p) => p.source.kind === 'local')) c = c.filter((p) => p.source.kind === 'local');
  c = keepBest(c, (p) => asPathLength(p.attrs.attrs));
  c = keepBest(c, (p) => p.attrs.attrs.origin ?? 0);
  c = eliminateMed(c, opts.alwaysCompareMed ?? false);
  if (c.some((p) => p.source.kind === 'local' || p.source.type === 'ebgp')) c = c.filter((p) => p.source.kind === 'local' || p.source.type === 'ebgp');
  // `c` is now the multipath-equal set; the remaining steps only order it.
  c.sort(tieBreak);
  const best = c[0];
  const mp = opts.multipath;
  if (mp === undefined || mp.maxPaths <= 1) return { best, multipath: [best] };
  const bestAs = neighborAs(best.attrs.attrs);
  const multipath = (mp.relaxNeighborAs ? c : c.filter((p) => neighborAs(p.attrs.attrs) === bestAs)).slice(0, mp.maxPaths);
  return { best, multipath };
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
