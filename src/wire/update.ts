// Placeholder replaced by the UPDATE codec work (issue 2).
import { BgpError } from './errors.js';
import type { CodecContext } from './context.js';
import type { UpdateMessage } from './types.js';

/** Decodes an UPDATE body (the bytes after the 19-byte header). */
export function decodeUpdate(_body: Uint8Array, _ctx: CodecContext): UpdateMessage {
  throw new BgpError(3, 0, 'UPDATE decoding not implemented yet');
}

/** Encodes an UPDATE body (without header). */
export function encodeUpdateBody(_msg: UpdateMessage, _ctx: CodecContext): Uint8Array {
  throw new Error('UPDATE encoding not implemented yet');
}
