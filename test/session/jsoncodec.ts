/**
 * A test codec for the socket-shell tests: real BGP framing (marker, length,
 * type) around a JSON body, so the shell can be exercised before the wire
 * codec lands. Not a BGP encoding; the WIRE_CODEC tests cover that.
 */
import type { Codec } from '../../src/session/connection.js';
import { MessageType } from '../../src/wire/constants.js';
import { BgpError } from '../../src/wire/errors.js';
import { frameMessage } from '../../src/wire/header.js';
import type { Message } from '../../src/wire/types.js';

const TYPE: Record<Message['type'], number> = { open: MessageType.OPEN, update: MessageType.UPDATE, notification: MessageType.NOTIFICATION, keepalive: MessageType.KEEPALIVE, routeRefresh: MessageType.ROUTE_REFRESH };

const replacer = (_k: string, v: unknown) => (v instanceof Uint8Array ? { $bytes: [...v] } : v);
const reviver = (_k: string, v: unknown) => (v && typeof v === 'object' && '$bytes' in v ? Uint8Array.from((v as { $bytes: number[] }).$bytes) : v);

export const JSON_CODEC: Codec = {
  encode(msg) {
    if (msg.type === 'keepalive') return frameMessage(TYPE.keepalive, new Uint8Array(0));
    // Pad to the framer's per-type minimum lengths.
    const text = JSON.stringify(msg, replacer).padEnd(16, ' ');
    return frameMessage(TYPE[msg.type], new TextEncoder().encode(text));
  },
  decode(type, body) {
    if (type === MessageType.KEEPALIVE) return { type: 'keepalive' };
    try {
      return JSON.parse(new TextDecoder().decode(body), reviver) as Message;
    } catch {
      throw new BgpError(1, 1, 'test codec: body is not JSON');
    }
  },
};
