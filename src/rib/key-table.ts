/**
 * A compact map from PrefixKey to a small positive integer. IPv4 keys that
 * are 32-bit integers (every prefix up to /31) live in an open-addressing
 * table of one Int32Array, key and value side by side (linear probing,
 * backward-shift deletion): 16–32 bytes a route and no per-entry objects for
 * the GC to trace. Wider
 * non-negative integer keys (/32 host routes, IPv6 up to /48) use a second
 * such table with Float64Array keys; only strings (longer IPv6) and other
 * numbers fall back to a Map.
 */
import type { PrefixKey } from './prefix-key.js';

const MIN_CAPACITY = 16;
let instances = 0;

export class KeyTable {
  /**
   * Key and value side by side: slot i is cells[2i] (key) and cells[2i + 1]
   * (value), so a probe touches one cache line where two arrays cost two
   * misses (the table is far larger than the cache for a full table, and a
   * burst of new prefixes probes it at random).
   */
  private cells: Int32Array;
  /** Slots − 1 (a power of two minus one). 0 marks an empty slot's value, so stored values must be ≥ 1. */
  private mask: number;
  private used = 0;
  /** Keys neither table takes (long IPv6 strings); made on the first such key (most tables never see one). */
  private other: Map<PrefixKey, number> | undefined;
  private wide: WideTable | undefined;
  /**
   * Per-table hash seed. Copying one table into another in slot order is
   * what a full scan does; with one shared hash that order piles every key
   * into one probe run of the target (quadratic). Seeds decorrelate them.
   */
  private readonly seed = Math.imul(++instances, 0x9e3779b1) | 1;
  /** What `warm` read, kept so its loads are not optimised away. */
  private warmed = 0;

  constructor(capacity = MIN_CAPACITY) {
    let cap = MIN_CAPACITY;
    while (cap < capacity) cap *= 2;
    this.cells = new Int32Array(cap * 2);
    this.mask = cap - 1;
  }

  get size(): number {
    return this.used + (this.other?.size ?? 0) + (this.wide?.size ?? 0);
  }

  /** The value for `key`, or 0 when absent. */
  get(key: PrefixKey): number {
    if (!isInt32(key)) {
      if (isWide(key)) return this.wide?.get(key) ?? 0;
      return this.other?.get(key) ?? 0;
    }
    const { cells, mask } = this;
    for (let i = slot(key, mask, this.seed); ; i = (i + 1) & mask) {
      const v = cells[2 * i + 1];
      if (v === 0) return 0;
      if (cells[2 * i] === key) return v;
    }
  }

  /**
   * Reads the home slot of each of keys[from, to) and changes nothing. In a
   * table far larger than the cache every lookup of a burst waits on memory
   * (a received table arrives in hash order, so no two neighbours share a
   * line); these loads do not depend on each other, so the CPU keeps several
   * in flight, and the lookups that follow find their lines in cache. For a
   * run of keys about to be looked up (an UPDATE's prefixes).
   */
  warm(keys: readonly PrefixKey[], from: number, to: number): void {
    const { cells, mask, seed } = this;
    const wide = this.wide;
    let x = 0;
    for (let i = from; i < to; i++) {
      const k = keys[i];
      if (isInt32(k)) x ^= cells[2 * slot(k, mask, seed) + 1];
      else if (wide !== undefined && isWide(k)) x ^= wide.peek(k);
    }
    this.warmed = x;
  }

  /** Stores `value` for `key` and returns the value it replaces (0 when new): one probe, not a get and a set. */
  set(key: PrefixKey, value: number): number {
    if (!(value >= 1 && value <= 0x7fffffff && Number.isInteger(value))) throw new RangeError(`KeyTable value must be an integer 1..2^31-1, got ${value}`);
    if (!isInt32(key)) {
      if (isWide(key)) return (this.wide ??= new WideTable(this.seed)).set(key, value);
      const other = (this.other ??= new Map());
      const old = other.get(key) ?? 0;
      other.set(key, value);
      return old;
    }
    // Overwriting never moves entries (so it is safe while visiting); only an insertion may grow the table.
    for (;;) {
      const { cells, mask } = this;
      let i = slot(key, mask, this.seed);
      for (; cells[2 * i + 1] !== 0; i = (i + 1) & mask) {
        if (cells[2 * i] === key) {
          const old = cells[2 * i + 1];
          cells[2 * i + 1] = value;
          return old;
        }
      }
      if ((this.used + 1) * 2 > mask + 1) {
        this.grow();
        continue;
      }
      cells[2 * i] = key;
      cells[2 * i + 1] = value;
      this.used++;
      return 0;
    }
  }

  /** The value for `key`; when absent, stores `value` and returns 0. One probe either way. */
  getOrAdd(key: PrefixKey, value: number): number {
    if (!isInt32(key)) {
      const old = this.get(key);
      if (old === 0) this.set(key, value);
      return old;
    }
    for (;;) {
      const { cells, mask } = this;
      let i = slot(key, mask, this.seed);
      for (; cells[2 * i + 1] !== 0; i = (i + 1) & mask) if (cells[2 * i] === key) return cells[2 * i + 1];
      if ((this.used + 1) * 2 > mask + 1) {
        this.grow();
        continue;
      }
      if (!(value >= 1 && value <= 0x7fffffff && Number.isInteger(value))) throw new RangeError(`KeyTable value must be an integer 1..2^31-1, got ${value}`);
      cells[2 * i] = key;
      cells[2 * i + 1] = value;
      this.used++;
      return 0;
    }
  }

  delete(key: PrefixKey): boolean {
    if (!isInt32(key)) return isWide(key) ? (this.wide?.delete(key) ?? false) : (this.other?.delete(key) ?? false);
    const { cells, mask } = this;
    let i = slot(key, mask, this.seed);
    for (; ; i = (i + 1) & mask) {
      if (cells[2 * i + 1] === 0) return false;
      if (cells[2 * i] === key) break;
    }
    // Backward-shift: pull later members of the probe run into the hole so lookups never stop early.
    let hole = i;
    for (let j = (i + 1) & mask; cells[2 * j + 1] !== 0; j = (j + 1) & mask) {
      const home = slot(cells[2 * j], mask, this.seed);
      // Move j into the hole when its home is not cyclically in (hole, j].
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        cells[2 * hole] = cells[2 * j];
        cells[2 * hole + 1] = cells[2 * j + 1];
        hole = j;
      }
    }
    cells[2 * hole] = 0;
    cells[2 * hole + 1] = 0;
    this.used--;
    return true;
  }

  /** Visits every entry. Do not add or delete while visiting. */
  forEach(fn: (value: number, key: PrefixKey) => void): void {
    const { cells } = this;
    for (let i = 1; i < cells.length; i += 2) if (cells[i] !== 0) fn(cells[i], cells[i - 1]);
    this.wide?.forEach(fn);
    this.other?.forEach(fn);
  }

  clear(): void {
    this.cells = new Int32Array(MIN_CAPACITY * 2);
    this.mask = MIN_CAPACITY - 1;
    this.used = 0;
    this.wide = undefined;
    this.other = undefined;
  }

  private grow(): void {
    const old = this.cells;
    const cap = old.length; // slots double: the old array holds 2 cells per slot
    const cells = new Int32Array(cap * 2);
    const mask = cap - 1;
    for (let k = 1; k < old.length; k += 2) {
      const v = old[k];
      if (v === 0) continue;
      const key = old[k - 1];
      let i = slot(key, mask, this.seed);
      while (cells[2 * i + 1] !== 0) i = (i + 1) & mask;
      cells[2 * i] = key;
      cells[2 * i + 1] = v;
    }
    this.cells = cells;
    this.mask = mask;
  }
}

function isInt32(key: PrefixKey): key is number {
  return typeof key === 'number' && (key | 0) === key;
}

/** A seeded 32-bit finaliser (murmur3's), then the top bits: every input bit matters (prefix keys share their low bits). */
function slot(key: number, mask: number, seed: number): number {
  let h = key ^ seed;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  // mask = 2^b - 1, so clz32(mask) = 32 - b.
  return (h >>> Math.clz32(mask)) & mask;
}

function isWide(key: PrefixKey): key is number {
  return typeof key === 'number' && Number.isSafeInteger(key) && key >= 0;
}

const TWO32 = 4294967296;

/** Hash of a non-negative safe integer: both 32-bit halves matter. */
function wideSlot(key: number, mask: number, seed: number): number {
  const lo = key % TWO32;
  const hi = (key - lo) / TWO32;
  return slot((lo ^ Math.imul(hi, 0x27d4eb2d)) | 0, mask, seed);
}

/** The same open-addressing scheme for keys in 0..2^53 (Float64Array keys). */
class WideTable {
  private keys = new Float64Array(MIN_CAPACITY);
  private vals = new Int32Array(MIN_CAPACITY);
  private mask = MIN_CAPACITY - 1;
  size = 0;

  constructor(private readonly seed: number) {}

  /** The value in `key`'s home slot, whatever key is there (for KeyTable.warm). */
  peek(key: number): number {
    return this.vals[wideSlot(key, this.mask, this.seed)];
  }

  get(key: number): number {
    const { keys, vals, mask } = this;
    for (let i = wideSlot(key, mask, this.seed); ; i = (i + 1) & mask) {
      const v = vals[i];
      if (v === 0) return 0;
      if (keys[i] === key) return v;
    }
  }

  set(key: number, value: number): number {
    for (;;) {
      const { keys, vals, mask } = this;
      let i = wideSlot(key, mask, this.seed);
      for (; vals[i] !== 0; i = (i + 1) & mask) {
        if (keys[i] === key) {
          const old = vals[i];
          vals[i] = value;
          return old;
        }
      }
      if ((this.size + 1) * 2 > vals.length) {
        this.grow();
        continue;
      }
      keys[i] = key;
      vals[i] = value;
      this.size++;
      return 0;
    }
  }

  delete(key: number): boolean {
    const { keys, vals, mask } = this;
    let i = wideSlot(key, mask, this.seed);
    for (; ; i = (i + 1) & mask) {
      if (vals[i] === 0) return false;
      if (keys[i] === key) break;
    }
    let hole = i;
    for (let j = (i + 1) & mask; vals[j] !== 0; j = (j + 1) & mask) {
      const home = wideSlot(keys[j], mask, this.seed);
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        keys[hole] = keys[j];
        vals[hole] = vals[j];
        hole = j;
      }
    }
    vals[hole] = 0;
    keys[hole] = 0;
    this.size--;
    return true;
  }

  forEach(fn: (value: number, key: number) => void): void {
    const { keys, vals } = this;
    for (let i = 0; i < vals.length; i++) if (vals[i] !== 0) fn(vals[i], keys[i]);
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldVals = this.vals;
    const cap = oldVals.length * 2;
    const keys = new Float64Array(cap);
    const vals = new Int32Array(cap);
    const mask = cap - 1;
    for (let k = 0; k < oldVals.length; k++) {
      const v = oldVals[k];
      if (v === 0) continue;
      let i = wideSlot(oldKeys[k], mask, this.seed);
      while (vals[i] !== 0) i = (i + 1) & mask;
      keys[i] = oldKeys[k];
      vals[i] = v;
    }
    this.keys = keys;
    this.vals = vals;
    this.mask = mask;
  }
}
