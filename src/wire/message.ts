import { HEADER_LENGTH, MAX_MESSAGE, MessageType } from './constants.js';
import { maxMessageSize, type CodecContext } from './context.js';
import { BgpError } from './errors.js';
import { badLengthError } from './framer.js';
import { frameMessage } from './header.js';
import { decodeNotification, encodeNotificationBody } from './notification.js';
import { decodeOpen, encodeOpenBody } from './open.js';
import { decodeRouteRefresh, encodeRouteRefreshBody } from './route-refresh.js';
import type { Message } from './types.js';
import { decodeUpdate, encodeUpdateBody } from './update.js';

/**
 * Decodes one framed message body. Throws only BgpError. The framer has
 * normally checked the header already; the length rules are repeated here so
 * that a body from anywhere gets the same answer.
 */
export function decodeMessage(type: number, body: Uint8Array, ctx: CodecContext): Message {
  const max = type === MessageType.OPEN || type === MessageType.KEEPALIVE ? MAX_MESSAGE : maxMessageSize(ctx);
  if (HEADER_LENGTH + body.length > max) throw badLengthError(body.length, `message of ${HEADER_LENGTH + body.length} bytes exceeds ${max}`);
  switch (type) {
    case MessageType.OPEN:
      return decodeOpen(body);
    case MessageType.UPDATE:
      if (body.length < 4) throw badLengthError(body.length, `UPDATE body is ${body.length} bytes, at least 4 required`);
      return decodeUpdate(body, ctx);
    case MessageType.NOTIFICATION:
      return decodeNotification(body);
    case MessageType.KEEPALIVE:
      if (body.length !== 0) throw badLengthError(body.length, `KEEPALIVE has a ${body.length}-byte body, expected none`);
      return KEEPALIVE;
    case MessageType.ROUTE_REFRESH:
      return decodeRouteRefresh(body);
    default:
      throw BgpError.header('BAD_MESSAGE_TYPE', `unknown message type ${type}`, Uint8Array.of(type & 0xff));
  }
}

const KEEPALIVE: Message = Object.freeze({ type: 'keepalive' });

/**
 * Encodes a whole message, header included. Throws RangeError when a field
 * does not fit its wire form or the message exceeds what the context allows
 * (4096 bytes, or 65535 with RFC 8654 — never for OPEN and KEEPALIVE).
 * NOTIFICATION data is truncated to fit instead.
 */
export function encodeMessage(msg: Message, ctx: CodecContext): Uint8Array {
  let type: number;
  let body: Uint8Array;
  switch (msg.type) {
    case 'open':
      type = MessageType.OPEN;
      body = encodeOpenBody(msg);
      break;
    case 'update':
      type = MessageType.UPDATE;
      body = encodeUpdateBody(msg, ctx);
      break;
    case 'notification':
      type = MessageType.NOTIFICATION;
      // A NOTIFICATION must always go out: data (often a copy of the faulty message) is cut to fit.
      body = encodeNotificationBody(msg).subarray(0, maxMessageSize(ctx) - HEADER_LENGTH);
      break;
    case 'keepalive':
      type = MessageType.KEEPALIVE;
      body = new Uint8Array(0);
      break;
    case 'routeRefresh':
      type = MessageType.ROUTE_REFRESH;
      body = encodeRouteRefreshBody(msg);
      break;
    default:
      throw new RangeError(`unknown message type ${JSON.stringify((msg as { type: unknown }).type)}`);
  }
  const max = type === MessageType.OPEN ? MAX_MESSAGE : maxMessageSize(ctx);
  if (HEADER_LENGTH + body.length > max)
    throw new RangeError(`${msg.type} message would be ${HEADER_LENGTH + body.length} bytes, more than the ${max} allowed`);
  return frameMessage(type, body);
}
