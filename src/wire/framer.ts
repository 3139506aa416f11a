import { HEADER_LENGTH, HeaderSubcode, MAX_MESSAGE, MessageType } from './constants.js';
import { BgpError } from './errors.js';

/** Minimum total length per message type (RFC 4271 §4, RFC 2918). */
const MIN_LENGTH: Record<number, number> = {
  [MessageType.OPEN]: 29,
  [MessageType.UPDATE]: 23,
  [MessageType.NOTIFICATION]: 21,
  [MessageType.KEEPALIVE]: 19,
  [MessageType.ROUTE_REFRESH]: 23,
};

export type FrameHandler = (type: number, body: Uint8Array) => void;

/**
 * Push parser for the TCP byte stream: reassembles messages split across
 * chunks and splits chunks holding many. Complete frames are handed out as
 * views into the chunk (no copy); only a frame that straddles chunks is
 * copied. Header faults raise BgpError with the RFC 4271 §6.1 code.
 */
export class Framer {
  private pending: Uint8Array | null = null;
  /** Largest accepted message: 4096, or 65535 once RFC 8654 is negotiated. */
  maxSize: number;

  constructor(maxSize = MAX_MESSAGE) {
    this.maxSize = maxSize;
  }

  /** Bytes held back waiting for the rest of a message. */
  get buffered(): number {
    return this.pending?.length ?? 0;
  }

  push(chunk: Uint8Array, onFrame: FrameHandler): void {
    let buf = chunk;
    if (this.pending) {
      const joined = new Uint8Array(this.pending.length + chunk.length);
      joined.set(this.pending, 0);
      joined.set(chunk, this.pending.length);
      buf = joined;
      this.pending = null;
    }
    let off = 0;
    while (buf.length - off >= HEADER_LENGTH) {
      for (let i = 0; i < 16; i++) {
        if (buf[off + i] !== 0xff) throw new BgpError(1, HeaderSubcode.CONNECTION_NOT_SYNCHRONIZED, 'message header marker is not all ones');
      }
      const length = (buf[off + 16] << 8) | buf[off + 17];
      const type = buf[off + 18];
      const lengthField = buf.slice(off + 16, off + 18);
      const min = MIN_LENGTH[type];
      if (min === undefined) throw new BgpError(1, HeaderSubcode.BAD_MESSAGE_TYPE, `unknown message type ${type}`, Uint8Array.of(type));
      if (length < min || length > this.maxSize || (type === MessageType.KEEPALIVE && length !== HEADER_LENGTH)) {
        throw new BgpError(1, HeaderSubcode.BAD_MESSAGE_LENGTH, `bad message length ${length} for type ${type} (allowed ${min}..${type === MessageType.KEEPALIVE ? HEADER_LENGTH : this.maxSize})`, lengthField);
      }
      if (buf.length - off < length) break;
      onFrame(type, buf.subarray(off + HEADER_LENGTH, off + length));
      off += length;
    }
    if (off < buf.length) this.pending = buf.slice(off);
  }
}
