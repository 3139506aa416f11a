import { HEADER_LENGTH } from './constants.js';

/** Writes the 19-byte header (16 × 0xff marker, length, type) at `offset`. */
export function writeHeader(buf: Uint8Array, offset: number, length: number, type: number): void {
  buf.fill(0xff, offset, offset + 16);
  buf[offset + 16] = length >>> 8;
  buf[offset + 17] = length;
  buf[offset + 18] = type;
}

/** A whole message: header then body. */
export function frameMessage(type: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(HEADER_LENGTH + body.length);
  writeHeader(out, 0, out.length, type);
  out.set(body, HEADER_LENGTH);
  return out;
}
