import { u16 } from './buffer.js';
import { MessageType, RefreshSubtype } from './constants.js';
import { BgpError } from './errors.js';
import { badLengthError } from './framer.js';
import { frameMessage } from './header.js';
import type { RouteRefreshMessage } from './types.js';

/**
 * ROUTE-REFRESH (RFC 2918; RFC 7313 turns the reserved byte into a subtype):
 * AFI (2), subtype (1), SAFI (1). The body is always 4 bytes.
 *
 * Which error a wrong length gets: RFC 7313 §5 prescribes ROUTE-REFRESH
 * Message Error / Invalid Message Length (7/1), with the whole message as
 * data, for subtypes 1 (BoRR) and 2 (EoRR) — messages only an enhanced route
 * refresh speaker sends. Any other subtype byte (0, a plain RFC 2918 request,
 * or an unassigned one) has no such rule, so a wrong length there is the
 * RFC 4271 §6.1 header error Bad Message Length with the length field.
 * Subtypes other than 0..2 decode as they are; RFC 7313 says to ignore
 * them, which is the session's call.
 */
export function decodeRouteRefresh(body: Uint8Array): RouteRefreshMessage {
  if (body.length !== 4) {
    const subtype = body.length >= 3 ? body[2] : -1;
    if (subtype === RefreshSubtype.BORR || subtype === RefreshSubtype.EORR) {
      throw BgpError.routeRefresh(
        'INVALID_MESSAGE_LENGTH',
        `ROUTE-REFRESH (subtype ${subtype}) body is ${body.length} bytes, expected 4`,
        frameMessage(MessageType.ROUTE_REFRESH, body),
      );
    }
    throw badLengthError(body.length, `ROUTE-REFRESH body is ${body.length} bytes, expected 4`);
  }
  return { type: 'routeRefresh', afi: u16(body, 0), subtype: body[2], safi: body[3] };
}

export function encodeRouteRefreshBody(msg: RouteRefreshMessage): Uint8Array {
  checkUint(msg.afi, 0xffff, 'ROUTE-REFRESH AFI');
  checkUint(msg.subtype, 0xff, 'ROUTE-REFRESH subtype');
  checkUint(msg.safi, 0xff, 'ROUTE-REFRESH SAFI');
  return Uint8Array.of(msg.afi >>> 8, msg.afi & 0xff, msg.subtype, msg.safi);
}

function checkUint(v: number, max: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`${what} must be an integer in 0..${max}, got ${v}`);
}
