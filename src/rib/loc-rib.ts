/**
 * Loc-RIB: candidate paths per prefix and the selected best / ECMP set.
 * A prefix with one candidate stores the Path itself (the common case, and
 * the cheap one: local originations share one Path per attribute set).
 *
 * Entries live in slot arrays in insertion order (freed slots are reused),
 * found through a KeyTable (key → slot + 1): an upsert is one probe of a
 * typed-array hash table plus an array write, where a Map needed a get and
 * a set; scans walk the arrays in insertion order, which keeps runs of one
 * attribute set together for the update groups' export memo and buckets.
 */
import { selectBest, type BestPathOptions } from './best-path.js';
import { KeyTable } from './key-table.js';
import type { Path } from './path.js';
import { prefixFromKey, type PrefixKey } from './prefix-key.js';
import { KeySlots, Slots } from './slots.js';

class MultiEntry {
  constructor(
    public paths: Path[],
    public best: Path,
    public multipath: readonly Path[],
  ) {}
}

export type Change = 'none' | 'best' | 'multipath';

export class LocRib {
  private readonly index = new KeyTable();
  private readonly entries = new Slots<Path | MultiEntry>();
  private readonly slotKeys = new KeySlots();
  private readonly free: number[] = [];
  /** The candidate the last `upsert` replaced (same source and path id), if any; saves callers a lookup. */
  replaced: Path | undefined;
  /** With `named`: each entry's prefix as text (`Prefix.toString()`), built the first time it is asked for. */
  private readonly slotNames = new Slots<string>();
  /** The slot the last `upsert` or `remove` changed (-1: it freed it), for `touchedMultipath` and `touchedName`. */
  private touched = -1;
  /** The name of the prefix the last `remove` took out of the table. */
  private freedName: string | undefined;
  private freedKey: PrefixKey = 0;

  /**
   * `named`: keep each prefix's text with its entry (`touchedName`), so that
   * a consumer keyed by text (the kernel FIB) gets one string per prefix for
   * as long as it is in the table — built once and hashed once, where
   * building it per change cost a string and a hash each time.
   */
  constructor(
    private readonly opts: BestPathOptions = {},
    private readonly named = false,
  ) {}

  get size(): number {
    return this.entries.length - this.free.length;
  }

  /** Calls `fn` with every prefix and its best path, in insertion order. */
  forEachBest(fn: (best: Path, key: PrefixKey) => void): void {
    const { entries, slotKeys } = this;
    for (let i = 0; i < entries.length; i++) {
      const e = entries.get(i);
      if (e !== undefined) fn(e instanceof MultiEntry ? e.best : e, slotKeys.get(i)!);
    }
  }

  *keys(): IterableIterator<PrefixKey> {
    for (let i = 0; i < this.entries.length; i++) if (this.entries.get(i) !== undefined) yield this.slotKeys.get(i)!;
  }

  /** Loads the index's slots for keys[from, to) ahead of upserts (KeyTable.warm). */
  warm(keys: readonly PrefixKey[], from: number, to: number): void {
    this.index.warm(keys, from, to);
  }

  has(key: PrefixKey): boolean {
    return this.index.get(key) !== 0;
  }

  private entry(key: PrefixKey): Path | MultiEntry | undefined {
    const slot = this.index.get(key);
    return slot === 0 ? undefined : this.entries.get(slot - 1);
  }

  /** The candidate from `source` with `pathId`, if any. */
  find(key: PrefixKey, source: Path['source'], pathId: number): Path | undefined {
    const e = this.entry(key);
    if (e === undefined) return undefined;
    if (!(e instanceof MultiEntry)) return e.source === source && e.pathId === pathId ? e : undefined;
    return e.paths.find((p) => p.source === source && p.pathId === pathId);
  }

  best(key: PrefixKey): Path | undefined {
    const e = this.entry(key);
    return e instanceof MultiEntry ? e.best : e;
  }

  multipath(key: PrefixKey): readonly Path[] {
    const e = this.entry(key);
    if (e === undefined) return [];
    return e instanceof MultiEntry ? e.multipath : [e];
  }

  candidates(key: PrefixKey): readonly Path[] {
    const e = this.entry(key);
    if (e === undefined) return [];
    return e instanceof MultiEntry ? e.paths : [e];
  }

  /**
   * Adds `path`, replacing the candidate with the same source and path id
   * (`replaces`). Returns what changed in the selection.
   */
  upsert(key: PrefixKey, path: Path): Change {
    this.replaced = undefined;
    // A new prefix (the common case in a burst) costs one probe.
    const free = this.free.length > 0 ? this.free[this.free.length - 1] : this.entries.length;
    const had = this.index.getOrAdd(key, free + 1);
    if (had === 0) {
      if (free < this.entries.length) {
        this.free.pop();
        this.entries.set(free, path);
        this.slotKeys.set(free, key);
        if (this.named) this.slotNames.set(free, undefined);
      } else {
        this.entries.push(path);
        this.slotKeys.push(key);
        if (this.named) this.slotNames.push(undefined);
      }
      this.touched = free;
      return 'best';
    }
    const at = had - 1;
    this.touched = at;
    const e = this.entries.get(at)!;
    if (!(e instanceof MultiEntry)) {
      if (samePath(e, path)) {
        this.replaced = e;
        if (e === path) return 'none';
        this.entries.set(at, path);
        return 'best';
      }
      return this.reselect(at, [e, path], e, [e]);
    }
    this.replaced = e.paths.find((p) => samePath(p, path));
    const paths = e.paths.filter((p) => !samePath(p, path));
    paths.push(path);
    return this.reselect(at, paths, e.best, e.multipath);
  }

  /** Removes the candidate from `source` with `pathId`. */
  remove(key: PrefixKey, source: Path['source'], pathId: number): Change {
    const slot = this.index.get(key);
    if (slot === 0) return 'none';
    const at = slot - 1;
    this.touched = at;
    const e = this.entries.get(at)!;
    if (!(e instanceof MultiEntry)) {
      if (e.source !== source || e.pathId !== pathId) return 'none';
      this.index.delete(key);
      if (this.named) {
        this.freedName = this.slotNames.get(at);
        this.freedKey = key;
        this.slotNames.set(at, undefined);
      }
      this.touched = -1;
      this.entries.set(at, undefined);
      this.slotKeys.set(at, 0);
      this.free.push(at);
      this.shrink();
      return 'best';
    }
    const paths = e.paths.filter((p) => p.source !== source || p.pathId !== pathId);
    if (paths.length === e.paths.length) return 'none';
    return this.reselect(at, paths, e.best, e.multipath);
  }

  /** An emptied table gives its arrays back (a withdrawn full table should not keep them). */
  private shrink(): void {
    if (this.free.length !== this.entries.length) return;
    this.entries.clear();
    this.slotKeys.clear();
    this.slotNames.clear();
    this.free.length = 0;
  }

  /** The ECMP set (best first) of the prefix the last `upsert` or `remove` changed: empty when that removed it. */
  touchedMultipath(): readonly Path[] {
    const e = this.touched < 0 ? undefined : this.entries.get(this.touched);
    if (e === undefined) return [];
    return e instanceof MultiEntry ? e.multipath : [e];
  }

  /** With `named`: the text of the prefix the last `upsert` or `remove` changed (the same string each time for one prefix in the table). */
  touchedName(): string {
    const at = this.touched;
    if (at < 0) return (this.freedName ??= prefixFromKey(this.freedKey).toString());
    let name = this.slotNames.get(at);
    if (name === undefined) this.slotNames.set(at, (name = prefixFromKey(this.slotKeys.get(at)!).toString()));
    return name;
  }

  private reselect(at: number, paths: Path[], oldBest: Path, oldMulti: readonly Path[]): Change {
    if (paths.length === 1) {
      this.entries.set(at, paths[0]);
      return paths[0] === oldBest ? (oldMulti.length === 1 ? 'none' : 'multipath') : 'best';
    }
    const sel = selectBest(paths, this.opts)!;
    this.entries.set(at, new MultiEntry(paths, sel.best, sel.multipath));
    if (sel.best !== oldBest) return 'best';
    if (sel.multipath.length !== oldMulti.length || sel.multipath.some((p, i) => p !== oldMulti[i])) return 'multipath';
    return 'none';
  }
}

function samePath(a: Path, b: Path): boolean {
  return a.source === b.source && a.pathId === b.pathId;
}
