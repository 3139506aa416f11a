/**
 * A 16-8-8 multibit lookup table for IPv4 longest-prefix match, kept beside
 * the binary trie (which stays the source of truth). A lookup is at most three
 * array reads instead of a pointer walk of ~20 nodes, which is what makes
 * full-table LPM fast. Prefixes are expanded into the slots they cover
 * ("controlled prefix expansion"); each slot remembers the length that
 * painted it, so an insert only overwrites slots painted by shorter prefixes
 * and a delete repaints its slots with the covering prefix.
 *
 * Slot encoding (Int32): 0 no match; even `(id + 1) << 1` the result with
 * that id; odd `(chunk << 1) | 1` a pointer to a 256-slot chunk one level down.
 */
/** Top-level slots: one per /16. */
const TOP = 65536;

export class V4Index<T> {
  /**
   * One array for every level: the 65536 top slots, then 256-slot chunks
   * (chunk c at TOP + c * 256). A lookup then loads one array field and one
   * results field, however many levels it goes down; separate top and pool
   * arrays cost extra dependent loads per call when the index is reached
   * through the trie (measured 1.5× on a full table). Replaced when it grows.
   */
  private slots = new Int32Array(TOP + 256 * 64);
  /** The prefix length that painted each slot (0 for none). */
  private lens = new Uint8Array(TOP + 256 * 64);
  private chunks = 0;
  /** Results by id; ids of deleted results are reused. */
  private readonly results: (T | undefined)[] = [];
  private readonly free: number[] = [];

  /** Looks up a 32-bit address; returns the longest matching result. */
  lookup(v: number): T | undefined {
    const s = this.slots;
    let e = s[v >>> 16];
    if (e & 1) {
      e = s[TOP + ((e >>> 1) << 8) + ((v >>> 8) & 255)];
      if (e & 1) e = s[TOP + ((e >>> 1) << 8) + (v & 255)];
    }
    return e === 0 ? undefined : this.results[(e >>> 1) - 1];
  }

  /** Like lookup, but the id of the result (as `insert` returned it), or -1: no read of the results list. */
  lookupId(v: number): number {
    const s = this.slots;
    let e = s[v >>> 16];
    if (e & 1) {
      e = s[TOP + ((e >>> 1) << 8) + ((v >>> 8) & 255)];
      if (e & 1) e = s[TOP + ((e >>> 1) << 8) + (v & 255)];
    }
    return (e >>> 1) - 1;
  }

  /**
   * Looks up many addresses. Done in passes over the whole batch (top level,
   * then the chunk levels, then results) so the independent cache misses of
   * different addresses overlap instead of being paid one after another.
   */
  lookupMany(values: ArrayLike<number>, out: (T | undefined)[], scratch: Int32Array): void {
    const n = values.length;
    const s = this.slots;
    for (let i = 0; i < n; i++) scratch[i] = s[values[i] >>> 16];
    for (let i = 0; i < n; i++) {
      const e = scratch[i];
      if (e & 1) scratch[i] = s[TOP + ((e >>> 1) << 8) + ((values[i] >>> 8) & 255)];
    }
    for (let i = 0; i < n; i++) {
      const e = scratch[i];
      if (e & 1) scratch[i] = s[TOP + ((e >>> 1) << 8) + (values[i] & 255)];
    }
    const results = this.results;
    for (let i = 0; i < n; i++) {
      const e = scratch[i];
      out[i] = e === 0 ? undefined : results[(e >>> 1) - 1];
    }
  }

  /** Registers a result for prefix value/len and paints its slots; returns the id. */
  insert(value: number, len: number, result: T): number {
    let id = this.free.pop();
    if (id === undefined) {
      id = this.results.length;
      this.results.push(result);
    } else this.results[id] = result;
    const entry = (id + 1) << 1;
    if (len <= 16) {
      this.paint(value >>> 16, 1 << (16 - len), entry, len);
      return id;
    }
    const base2 = TOP + (this.chunkUnder(value >>> 16) << 8);
    if (len <= 24) {
      this.paint(base2 + ((value >>> 8) & 255), 1 << (24 - len), entry, len);
      return id;
    }
    const base3 = TOP + (this.chunkUnder(base2 + ((value >>> 8) & 255)) << 8);
    this.paint(base3 + (value & 255), 1 << (32 - len), entry, len);
    return id;
  }

  /**
   * Removes result `id` of prefix value/len, repainting its slots with the
   * covering result (`coverId`, -1 for none) of length `coverLen`.
   */
  remove(value: number, len: number, id: number, coverId: number, coverLen: number): void {
    const entry = (id + 1) << 1;
    const repl = coverId < 0 ? 0 : (coverId + 1) << 1;
    const rlen = coverId < 0 ? 0 : coverLen;
    if (len <= 16) {
      this.replace(value >>> 16, 1 << (16 - len), entry, repl, rlen);
    } else {
      const e2 = this.slots[value >>> 16];
      if (e2 & 1) {
        const base2 = TOP + ((e2 >>> 1) << 8);
        if (len <= 24) this.replace(base2 + ((value >>> 8) & 255), 1 << (24 - len), entry, repl, rlen);
        else {
          const e3 = this.slots[base2 + ((value >>> 8) & 255)];
          if (e3 & 1) this.replace(TOP + ((e3 >>> 1) << 8) + (value & 255), 1 << (32 - len), entry, repl, rlen);
        }
      }
    }
    this.results[id] = undefined;
    this.free.push(id);
  }

  /** The chunk under slot i, created (filled with the slot's result) if absent. */
  private chunkUnder(i: number): number {
    const e = this.slots[i];
    if (e & 1) return e >>> 1;
    const c = this.newChunk(e, this.lens[i]);
    this.slots[i] = (c << 1) | 1; // read the array after newChunk: it may have grown
    return c;
  }

  private newChunk(fill: number, fillLen: number): number {
    if (TOP + ((this.chunks + 1) << 8) > this.slots.length) {
      const size = TOP + (this.slots.length - TOP) * 2;
      const slots = new Int32Array(size);
      slots.set(this.slots);
      const lens = new Uint8Array(size);
      lens.set(this.lens);
      this.slots = slots;
      this.lens = lens;
    }
    const c = this.chunks++;
    const base = TOP + (c << 8);
    this.slots.fill(fill, base, base + 256);
    this.lens.fill(fillLen, base, base + 256);
    return c;
  }

  private paint(start: number, count: number, entry: number, len: number): void {
    for (let i = start; i < start + count; i++) {
      const e = this.slots[i];
      if (e & 1) this.paint(TOP + ((e >>> 1) << 8), 256, entry, len);
      else if (this.lens[i] <= len) {
        this.slots[i] = entry;
        this.lens[i] = len;
      }
    }
  }

  private replace(start: number, count: number, entry: number, repl: number, rlen: number): void {
    for (let i = start; i < start + count; i++) {
      const e = this.slots[i];
      if (e & 1) this.replace(TOP + ((e >>> 1) << 8), 256, entry, repl, rlen);
      else if (e === entry) {
        this.slots[i] = repl;
        this.lens[i] = rlen;
      }
    }
  }
}
