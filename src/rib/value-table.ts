/**
 * A Map<PrefixKey, V> built on KeyTable: values sit in a slot array and the
 * table maps keys to slot numbers. Values the caller marks shareable (the
 * local-origination Path shared by every prefix with one attribute set) use
 * one slot however many keys hold them, so such a route costs table bytes only.
 */
import { KeyTable } from './key-table.js';
import type { PrefixKey } from './prefix-key.js';

export class ValueTable<V extends object> {
  private readonly table = new KeyTable();
  private readonly vals: (V | undefined)[] = [undefined];
  private readonly counts: number[] = [0];
  private readonly free: number[] = [];
  private readonly shared = new Map<V, number>();

  constructor(private readonly isShared: (v: V) => boolean) {}

  get size(): number {
    return this.table.size;
  }

  get(key: PrefixKey): V | undefined {
    const i = this.table.get(key);
    return i === 0 ? undefined : this.vals[i];
  }

  has(key: PrefixKey): boolean {
    return this.table.get(key) !== 0;
  }

  set(key: PrefixKey, v: V): void {
    const old = this.table.get(key);
    if (old !== 0 && this.vals[old] === v) return;
    this.table.set(key, this.slotFor(v));
    if (old !== 0) this.unref(old);
  }

  delete(key: PrefixKey): boolean {
    const old = this.table.get(key);
    if (old === 0) return false;
    this.table.delete(key);
    this.unref(old);
    return true;
  }

  /** Visits every entry; do not add or delete while visiting. */
  forEach(fn: (v: V, key: PrefixKey) => void): void {
    const vals = this.vals;
    this.table.forEach((i, key) => fn(vals[i]!, key));
  }

  private slotFor(v: V): number {
    const share = this.isShared(v);
    if (share) {
      const i = this.shared.get(v);
      if (i !== undefined) {
        this.counts[i]++;
        return i;
      }
    }
    const i = this.free.pop() ?? this.vals.length;
    this.vals[i] = v;
    this.counts[i] = 1;
    if (share) this.shared.set(v, i);
    return i;
  }

  private unref(i: number): void {
    if (--this.counts[i] > 0) return;
    const v = this.vals[i]!;
    this.vals[i] = undefined;
    this.shared.delete(v);
    this.free.push(i);
  }
}
