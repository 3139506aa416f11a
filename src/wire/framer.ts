import { HEADER_LENGTH, MAX_MESSAGE, MessageType } from './constants.js';
import { BgpError } from './errors.js';

/** Minimum total length per message type (RFC 4271 §4, RFC 2918). */
const MIN_LENGTH: Record<number, number> = {
  [MessageType.OPEN]: 29,
  [MessageType.UPDATE]: 23,
  [MessageType.NOTIFICATION]: 21,
  [MessageType.KEEPALIVE]: 19,
  [MessageType.ROUTE_REFRESH]: 23,
};

/** RFC 8654 lifts the 4096 limit for every type except OPEN and KEEPALIVE. */
const FIXED_MAX: Record<number, number> = {
  [MessageType.OPEN]: MAX_MESSAGE,
  [MessageType.KEEPALIVE]: HEADER_LENGTH,
};

/** Message Header Error / Bad Message Length; the data is the 2-byte length field (RFC 4271 §6.1). */
export function badLengthError(bodyLength: number, reason: string): BgpError {
  const total = HEADER_LENGTH + bodyLength;
  return BgpError.header('BAD_MESSAGE_LENGTH', reason, Uint8Array.of((total >>> 8) & 0xff, total & 0xff));
}

/** Handles one frame; returning `false` stops `push` after this frame (the caller keeps the rest of the chunk). */
export type FrameHandler = (type: number, body: Uint8Array) => unknown;

/**
 * Push parser for the TCP byte stream: reassembles messages split across
 * chunks and splits chunks holding many. Complete frames are handed out as
 * views into the chunk (no copy); a frame that straddles chunks is gathered
 * into one buffer of exactly its length, so reassembly is linear however
 * small the chunks. Each header is checked as soon as its 19 bytes are in
 * (RFC 4271 §6.1), before the body arrives. After a BgpError (or a throwing
 * handler) the framer's state is undefined: the session closes anyway.
 */
export class Framer {
  /** The frame being gathered across chunks, and how many of its bytes are in. */
  private partial: Uint8Array | null = null;
  private have = 0;
  /** Largest accepted message: 4096, or 65535 once RFC 8654 is negotiated. */
  maxSize: number;

  constructor(maxSize = MAX_MESSAGE) {
    this.maxSize = maxSize;
  }

  /** Bytes held back waiting for the rest of a message. */
  get buffered(): number {
    return this.have;
  }

  /**
   * Hands out every complete frame of `chunk` (and keeps an incomplete tail).
   * Returns the bytes of `chunk` consumed: `chunk.length`, unless the handler
   * returned `false`, in which case it stopped right after that frame and the
   * caller pushes `chunk.subarray(returned)` later (the session slices a big
   * burst this way to yield to the event loop).
   */
  push(chunk: Uint8Array, onFrame: FrameHandler): number {
    let off = 0;
    if (this.partial) {
      off = this.fill(chunk, onFrame);
      if (this.partial) return chunk.length;
      if (this.halted) return this.halt(off);
    }
    while (chunk.length - off >= HEADER_LENGTH) {
      const length = this.check(chunk, off);
      if (chunk.length - off < length) break;
      const go = onFrame(chunk[off + 18], chunk.subarray(off + HEADER_LENGTH, off + length));
      off += length;
      if (go === false && off < chunk.length) return off;
    }
    const rest = chunk.length - off;
    if (rest > 0) {
      const size = rest >= HEADER_LENGTH ? (chunk[off + 16] << 8) | chunk[off + 17] : HEADER_LENGTH;
      this.partial = new Uint8Array(size);
      this.partial.set(chunk.subarray(off), 0);
      this.have = rest;
    }
    return chunk.length;
  }

  /** Set when the handler of a frame completed by `fill` asked to stop. */
  private halted = false;

  private halt(off: number): number {
    this.halted = false;
    return off;
  }

  /** Feeds the start of `chunk` into the pending frame; returns the bytes consumed. */
  private fill(chunk: Uint8Array, onFrame: FrameHandler): number {
    let buf = this.partial!;
    let off = 0;
    if (this.have < HEADER_LENGTH) {
      off = Math.min(HEADER_LENGTH - this.have, chunk.length);
      buf.set(chunk.subarray(0, off), this.have);
      this.have += off;
      if (this.have < HEADER_LENGTH) return off;
      const length = this.check(buf, 0);
      if (length > buf.length) {
        const grown = new Uint8Array(length);
        grown.set(buf.subarray(0, this.have), 0);
        buf = this.partial = grown;
      }
    }
    const total = buf.length;
    const n = Math.min(total - this.have, chunk.length - off);
    buf.set(chunk.subarray(off, off + n), this.have);
    this.have += n;
    off += n;
    if (this.have === total) {
      this.partial = null;
      this.have = 0;
      this.halted = onFrame(buf[18], buf.subarray(HEADER_LENGTH, total)) === false && off < chunk.length;
    }
    return off;
  }

  /** Validates the header at `off` (19 bytes present); returns the message length. */
  private check(buf: Uint8Array, off: number): number {
    for (let i = 0; i < 16; i++) {
      if (buf[off + i] !== 0xff) throw BgpError.header('CONNECTION_NOT_SYNCHRONIZED', 'message header marker is not all ones');
    }
    const length = (buf[off + 16] << 8) | buf[off + 17];
    const type = buf[off + 18];
    const lengthField = buf.slice(off + 16, off + 18);
    if (length < HEADER_LENGTH || length > this.maxSize) {
      throw BgpError.header('BAD_MESSAGE_LENGTH', `bad message length ${length} (allowed ${HEADER_LENGTH}..${this.maxSize})`, lengthField);
    }
    const min = MIN_LENGTH[type];
    if (min === undefined) throw BgpError.header('BAD_MESSAGE_TYPE', `unknown message type ${type}`, Uint8Array.of(type));
    const max = Math.min(FIXED_MAX[type] ?? this.maxSize, this.maxSize);
    if (length < min || length > max) {
      throw BgpError.header('BAD_MESSAGE_LENGTH', `bad message length ${length} for type ${type} (allowed ${min}..${max})`, lengthField);
    }
    return length;
  }
}
