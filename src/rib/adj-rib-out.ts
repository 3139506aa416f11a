/**
 * An update group's Adj-RIB-Out: prefix key → attribute set, stored as a
 * small per-table index in a KeyTable, so a route costs a few bytes and no
 * object. The table holds one store reference per distinct attribute set.
 */
import type { AttrSet, AttrStore } from './attr-store.js';
import { KeyTable } from './key-table.js';
import { familyOfKey, type PrefixKey } from './prefix-key.js';

export class AdjRibOut {
  private readonly table = new KeyTable();
  /** Index → set (index 0 unused); routes per index; free indexes for reuse. */
  private readonly sets: (AttrSet | undefined)[] = [undefined];
  private readonly counts: number[] = [0];
  private readonly free: number[] = [];
  private readonly index = new Map<AttrSet, number>();
  private lastSet: AttrSet | undefined;
  private lastIdx = 0;
  /** Routes per family (index 0 IPv4, 1 IPv6), kept as they change. */
  private readonly sizeBy = [0, 0];

  constructor(private readonly store: AttrStore) {}

  get size(): number {
    return this.table.size;
  }

  /** Routes of one family: O(1). */
  sizeOf(family: 4 | 6): number {
    return this.sizeBy[family === 4 ? 0 : 1];
  }

  get(key: PrefixKey): AttrSet | undefined {
    const i = this.table.get(key);
    return i === 0 ? undefined : this.sets[i];
  }

  has(key: PrefixKey): boolean {
    return this.table.get(key) !== 0;
  }

  /** Stores `set` for `key`; returns the set it replaces (undefined when new). One table probe. */
  set(key: PrefixKey, set: AttrSet): AttrSet | undefined {
    const idx = this.indexOf(set);
    const old = this.table.set(key, idx);
    if (old === idx) return set;
    this.counts[idx]++;
    if (old === 0) {
      this.sizeBy[familyOfKey(key) === 4 ? 0 : 1]++;
      return undefined;
    }
    const prev = this.sets[old];
    this.unref(old);
    return prev;
  }

  delete(key: PrefixKey): boolean {
    const old = this.table.get(key);
    if (old === 0) return false;
    this.table.delete(key);
    this.sizeBy[familyOfKey(key) === 4 ? 0 : 1]--;
    this.unref(old);
    return true;
  }

  forEach(fn: (set: AttrSet, key: PrefixKey) => void): void {
    const sets = this.sets;
    this.table.forEach((i, key) => fn(sets[i]!, key));
  }

  /** A copy as a plain Map (for inspection and for a peer moving between groups). */
  snapshot(): Map<PrefixKey, AttrSet> {
    const m = new Map<PrefixKey, AttrSet>();
    this.forEach((set, key) => m.set(key, set));
    return m;
  }

  /** Drops every route and store reference. */
  clear(): void {
    for (const set of this.index.keys()) this.store.release(set);
    this.index.clear();
    this.sets.length = 1;
    this.counts.length = 1;
    this.free.length = 0;
    this.table.clear();
    this.sizeBy[0] = this.sizeBy[1] = 0;
    this.lastSet = undefined;
    this.lastIdx = 0;
  }

  private indexOf(set: AttrSet): number {
    if (set === this.lastSet) return this.lastIdx;
    let idx = this.index.get(set);
    if (idx === undefined) {
      idx = this.free.pop() ?? this.sets.length;
      this.sets[idx] = set;
      this.counts[idx] = 0;
      this.index.set(set, idx);
      this.store.retain(set);
    }
    this.lastSet = set;
    this.lastIdx = idx;
    return idx;
  }

  private unref(idx: number): void {
    if (--this.counts[idx] > 0) return;
    const set = this.sets[idx]!;
    this.sets[idx] = undefined;
    this.index.delete(set);
    this.free.push(idx);
    if (this.lastSet === set) this.lastSet = undefined;
    this.store.release(set);
  }
}
