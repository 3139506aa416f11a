/**
 * Loc-RIB: candidate paths per prefix and the selected best / ECMP set.
 * A prefix with one candidate stores the Path itself (the common case, and
 * the cheap one: local originations share one Path per attribute set).
 */
import { selectBest, type BestPathOptions } from './best-path.js';
import type { Path } from './path.js';
import type { PrefixKey } from './prefix-key.js';

class MultiEntry {
  constructor(
    public paths: Path[],
    public best: Path,
    public multipath: readonly Path[],
  ) {}
}

export type Change = 'none' | 'best' | 'multipath';

export class LocRib {
  private readonly table = new Map<PrefixKey, Path | MultiEntry>();
  /** The candidate the last `upsert` replaced (same source and path id), if any; saves callers a lookup. */
  replaced: Path | undefined;

  constructor(private readonly opts: BestPathOptions = {}) {}

  get size(): number {
    return this.table.size;
  }

  /** Calls `fn` with every prefix and its best path, in table order. */
  forEachBest(fn: (best: Path, key: PrefixKey) => void): void {
    this.table.forEach((e, key) => fn(e instanceof MultiEntry ? e.best : e, key));
  }

  keys(): IterableIterator<PrefixKey> {
    return this.table.keys();
  }

  has(key: PrefixKey): boolean {
    return this.table.has(key);
  }

  /** The candidate from `source` with `pathId`, if any. */
  find(key: PrefixKey, source: Path['source'], pathId: number): Path | undefined {
    const e = this.table.get(key);
    if (e === undefined) return undefined;
    if (!(e instanceof MultiEntry)) return e.source === source && e.pathId === pathId ? e : undefined;
    return e.paths.find((p) => p.source === source && p.pathId === pathId);
  }

  best(key: PrefixKey): Path | undefined {
    const e = this.table.get(key);
    return e instanceof MultiEntry ? e.best : e;
  }

  multipath(key: PrefixKey): readonly Path[] {
    const e = this.table.get(key);
    if (e === undefined) return [];
    return e instanceof MultiEntry ? e.multipath : [e];
  }

  candidates(key: PrefixKey): readonly Path[] {
    const e = this.table.get(key);
    if (e === undefined) return [];
    return e instanceof MultiEntry ? e.paths : [e];
  }

  /**
   * Adds `path`, replacing the candidate with the same source and path id
   * (`replaces`). Returns what changed in the selection.
   */
  upsert(key: PrefixKey, path: Path): Change {
    const e = this.table.get(key);
    this.replaced = undefined;
    if (e === undefined) {
      this.table.set(key, path);
      return 'best';
    }
    if (!(e instanceof MultiEntry)) {
      if (samePath(e, path)) {
        this.replaced = e;
        if (e === path) return 'none';
        this.table.set(key, path);
        return 'best';
      }
      return this.reselect(key, [e, path], e, [e]);
    }
    this.replaced = e.paths.find((p) => samePath(p, path));
    const paths = e.paths.filter((p) => !samePath(p, path));
    paths.push(path);
    return this.reselect(key, paths, e.best, e.multipath);
  }

  /** Removes the candidate from `source` with `pathId`. */
  remove(key: PrefixKey, source: Path['source'], pathId: number): Change {
    const e = this.table.get(key);
    if (e === undefined) return 'none';
    if (!(e instanceof MultiEntry)) {
      if (e.source !== source || e.pathId !== pathId) return 'none';
      this.table.delete(key);
      return 'best';
    }
    const paths = e.paths.filter((p) => p.source !== source || p.pathId !== pathId);
    if (paths.length === e.paths.length) return 'none';
    return this.reselect(key, paths, e.best, e.multipath);
  }

  private reselect(key: PrefixKey, paths: Path[], oldBest: Path, oldMulti: readonly Path[]): Change {
    if (paths.length === 1) {
      this.table.set(key, paths[0]);
      return paths[0] === oldBest ? (oldMulti.length === 1 ? 'none' : 'multipath') : 'best';
    }
    const sel = selectBest(paths, this.opts)!;
    this.table.set(key, new MultiEntry(paths, sel.best, sel.multipath));
    if (sel.best !== oldBest) return 'best';
    if (sel.multipath.length !== oldMulti.length || sel.multipath.some((p, i) => p !== oldMulti[i])) return 'multipath';
    return 'none';
  }
}

function samePath(a: Path, b: Path): boolean {
  return a.source === b.source && a.pathId === b.pathId;
}
