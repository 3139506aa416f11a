// Signatures fixed for the layers above; bodies come with the message codecs (issue 2).
import type { CodecContext } from './context.js';
import { BgpError } from './errors.js';
import type { Message } from './types.js';

/** Decodes one framed message body. Throws only BgpError. */
export function decodeMessage(type: number, _body: Uint8Array, _ctx: CodecContext): Message {
  throw new BgpError(1, 3, `decoding of message type ${type} not implemented yet`);
}

/** Encodes a whole message, header included. */
export function encodeMessage(_msg: Message, _ctx: CodecContext): Uint8Array {
  throw new Error('message encoding not implemented yet');
}
