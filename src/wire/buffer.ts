/**
 * A growable byte writer that can reserve a length field and fill it in
 * later (BGP nests lengths: message, attribute, NLRI). One per encode call,
 * never shared at module level.
 */
export class Writer {
  buf: Uint8Array;
  pos = 0;

  constructor(initial = 256) {
    this.buf = new Uint8Array(initial);
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  u16(v: number): this {
    this.ensure(2);
    this.buf[this.pos++] = v >>> 8;
    this.buf[this.pos++] = v;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    const b = this.buf;
    b[this.pos++] = v >>> 24;
    b[this.pos++] = v >>> 16;
    b[this.pos++] = v >>> 8;
    b[this.pos++] = v;
    return this;
  }

  bytes(src: Uint8Array): this {
    this.ensure(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
    return this;
  }

  /** Reserves `width` (1 or 2) bytes for a length; returns the mark for `patch`. */
  reserve(width: 1 | 2): number {
    const mark = this.pos;
    this.ensure(width);
    this.pos += width;
    return mark;
  }

  /** Writes the number of bytes written since the reserved field ended. */
  patch(mark: number, width: 1 | 2): number {
    const len = this.pos - mark - width;
    if (width === 1) this.buf[mark] = len;
    else {
      this.buf[mark] = len >>> 8;
      this.buf[mark + 1] = len;
    }
    return len;
  }

  /** A copy of what was written. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }
}

/** Big-endian reads without allocation; callers check bounds before reading. */
export function u16(b: Uint8Array, o: number): number {
  return (b[o] << 8) | b[o + 1];
}

export function u32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}
