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
export class V4Index<T> {
  private readonly top = new Int32Array(65536);
  private readonly topLen = new Uint8Array(65536);
  /** Replaced when it grows. */
  private pool = new Int32Array(256 * 64);
  private poolLen = new Uint8Array(256 * 64);
  private chunks = 0;
  /** Results by id; ids of deleted results are reused. */
  private readonly results: (T | undefined)[] = [];
  private readonly free: number[] = [];

  /** Looks up a 32-bit address; returns the longest matching result. */
  lookup(v: number): T | undefined {
    let e = this.top[v >>> 16];
    if (e & 1) {
      e = this.pool[((e >>> 1) << 8) | ((v >>> 8) & 255)];
      if (e & 1) e = this.pool[((e >>> 1) << 8) | (v & 255)];
    }
    return e === 0 ? undefined : this.results[(e >>> 1) - 1];
  }

  /**
   * Looks up many addresses. Done in passes over the whole batch (top level,
   * then the chunk levels, then results) so the independent cache misses of
   * different addresses overlap instead of being paid one after another.
   */
  lookupMany(values: ArrayLike<number>, out: (T | undefined)[], scratch: Int32Array): void {
    const n = values.length;
    const top = this.top;
    const pool = this.pool;
    for (let i = 0; i < n; i++) scratch[i] = top[values[i] >>> 16];
    for (let i = 0; i < n; i++) {
      const e = scratch[i];
      if (e & 1) scratch[i] = pool[((e >>> 1) << 8) | ((values[i] >>> 8) & 255)];
    }
    for (let i = 0; i < n; i++) {
      const e = scratch[i];
      if (e & 1) scratch[i] = pool[((e >>> 1) << 8) | (values[i] & 255)];
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
      this.paintTop(value >>> 16, 1 << (16 - len), entry, len);
      return id;
    }
    const c2 = this.topChunk(value >>> 16);
    const base2 = c2 << 8;
    if (len <= 24) {
      this.paintPool(base2 + ((value >>> 8) & 255), 1 << (24 - len), entry, len);
      return id;
    }
    const c3 = this.poolChunk(base2 + ((value >>> 8) & 255));
    this.paintPool((c3 << 8) + (value & 255), 1 << (32 - len), entry, len);
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
      this.replaceTop(value >>> 16, 1 << (16 - len), entry, repl, rlen);
    } else {
      const e2 = this.top[value >>> 16];
      if (e2 & 1) {
        const base2 = (e2 >>> 1) << 8;
        if (len <= 24) this.replacePool(base2 + ((value >>> 8) & 255), 1 << (24 - len), entry, repl, rlen);
        else {
          const e3 = this.pool[base2 + ((value >>> 8) & 255)];
          if (e3 & 1) this.replacePool(((e3 >>> 1) << 8) + (value & 255), 1 << (32 - len), entry, repl, rlen);
        }
      }
    }
    this.results[id] = undefined;
    this.free.push(id);
  }

  /** The chunk under top slot i, created (filled with the slot's result) if absent. */
  private topChunk(i: number): number {
    const e = this.top[i];
    if (e & 1) return e >>> 1;
    const c = this.newChunk(e, this.topLen[i]);
    this.top[i] = (c << 1) | 1;
    return c;
  }

  /** The chunk under pool slot i, created if absent (read the pool after growing it). */
  private poolChunk(i: number): number {
    const e = this.pool[i];
    if (e & 1) return e >>> 1;
    const c = this.newChunk(e, this.poolLen[i]);
    this.pool[i] = (c << 1) | 1;
    return c;
  }

  private newChunk(fill: number, fillLen: number): number {
    if ((this.chunks + 1) << 8 > this.pool.length) {
      const pool = new Int32Array(this.pool.length * 2);
      pool.set(this.pool);
      const lens = new Uint8Array(this.poolLen.length * 2);
      lens.set(this.poolLen);
      this.pool = pool;
      this.poolLen = lens;
    }
    const c = this.chunks++;
    this.pool.fill(fill, c << 8, (c + 1) << 8);
    this.poolLen.fill(fillLen, c << 8, (c + 1) << 8);
    return c;
  }

  private paintTop(start: number, count: number, entry: number, len: number): void {
    const top = this.top;
    const lens = this.topLen;
    for (let i = start; i < start + count; i++) {
      const e = top[i];
      if (e & 1) this.paintPool((e >>> 1) << 8, 256, entry, len);
      else if (lens[i] <= len) {
        top[i] = entry;
        lens[i] = len;
      }
    }
  }

  private paintPool(start: number, count: number, entry: number, len: number): void {
    for (let i = start; i < start + count; i++) {
      const e = this.pool[i];
      if (e & 1) this.paintPool((e >>> 1) << 8, 256, entry, len);
      else if (this.poolLen[i] <= len) {
        this.pool[i] = entry;
        this.poolLen[i] = len;
      }
    }
  }

  private replaceTop(start: number, count: number, entry: number, repl: number, rlen: number): void {
    const top = this.top;
    for (let i = start; i < start + count; i++) {
      const e = top[i];
      if (e & 1) this.replacePool((e >>> 1) << 8, 256, entry, repl, rlen);
      else if (e === entry) {
        top[i] = repl;
        this.topLen[i] = rlen;
      }
    }
  }

  private replacePool(start: number, count: number, entry: number, repl: number, rlen: number): void {
    for (let i = start; i < start + count; i++) {
      const e = this.pool[i];
      if (e & 1) this.replacePool((e >>> 1) << 8, 256, entry, repl, rlen);
      else if (e === entry) {
        this.pool[i] = repl;
        this.poolLen[i] = rlen;
      }
    }
  }
}
