// A growable array in fixed chunks, for the routing layer's per-route lists
// (the Loc-RIB's slots, an update group's pending keys).

/** Slots per chunk of `Slots`: 8,192 × 8 bytes = 64 KiB, below V8's large-object size (128 KiB). */
const CHUNK_BITS = 13;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;

/**
 * A growable array kept in fixed chunks: growing adds a chunk and never
 * copies. A plain array of a full table's million slots lives in V8's
 * large-object space, and each time it grew it left its old copy there as
 * garbage that only a full collection frees: in the lab, at a receiving
 * node's largest RSS, most of the V8 heap was large-object space (85–98 MB,
 * with 29 MB live after a collection). Chunks are ordinary old-space objects.
 */
export class Slots<T> {
  private chunks: (T | undefined)[][] = [];
  length = 0;

  get(i: number): T | undefined {
    return this.chunks[i >>> CHUNK_BITS][i & CHUNK_MASK];
  }

  set(i: number, v: T | undefined): void {
    this.chunks[i >>> CHUNK_BITS][i & CHUNK_MASK] = v;
  }

  /** Appends a slot holding `v`; returns its index. */
  push(v: T | undefined): number {
    const i = this.length++;
    if ((i & CHUNK_MASK) === 0) this.chunks.push(new Array<T | undefined>(CHUNK).fill(undefined));
    this.set(i, v);
    return i;
  }

  /** Calls `fn` with every slot's value, in order. */
  forEach(fn: (v: T | undefined, i: number) => void): void {
    const { chunks, length } = this;
    for (let c = 0, i = 0; i < length; c++) {
      const chunk = chunks[c];
      const end = Math.min(length - i, CHUNK);
      for (let k = 0; k < end; k++, i++) fn(chunk[k], i);
    }
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}

/**
 * `Slots` for table keys (numbers, and strings for long IPv6 prefixes).
 * Chunks start as numbers, so a double key (IPv6 up to /48, IPv4 /32) is
 * stored unboxed, 8 bytes, as in a plain array of numbers. Its own class,
 * not `Slots` with another fill: V8 keeps elements-kind feedback per
 * allocation site and per store, and chunks sharing them with the chunks of
 * objects became object arrays that box every double in a heap number
 * (measured: the Loc-RIB +13 bytes a route for 220,000 IPv6 /48s).
 */
export class KeySlots {
  private chunks: (number | string)[][] = [];
  length = 0;

  get(i: number): number | string {
    return this.chunks[i >>> CHUNK_BITS][i & CHUNK_MASK];
  }

  set(i: number, v: number | string): void {
    this.chunks[i >>> CHUNK_BITS][i & CHUNK_MASK] = v;
  }

  /** Appends a slot holding `v`; returns its index. */
  push(v: number | string): number {
    const i = this.length++;
    if ((i & CHUNK_MASK) === 0) this.chunks.push(new Array<number>(CHUNK).fill(0));
    this.set(i, v);
    return i;
  }

  /** Calls `fn` with every slot's value, in order. */
  forEach(fn: (v: number | string, i: number) => void): void {
    const { chunks, length } = this;
    for (let c = 0, i = 0; i < length; c++) {
      const chunk = chunks[c];
      const end = Math.min(length - i, CHUNK);
      for (let k = 0; k < end; k++, i++) fn(chunk[k], i);
    }
  }

  clear(): void {
    this.chunks = [];
    this.length = 0;
  }
}
