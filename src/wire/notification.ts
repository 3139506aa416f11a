import { CeaseSubcode, ErrorCode, FsmSubcode, HoldTimerSubcode } from './constants.js';
import type { BgpError } from './errors.js';
import { badLengthError } from './framer.js';
import type { NotificationMessage } from './types.js';

/** NOTIFICATION (RFC 4271 §4.5): error code, subcode, data. */

const EMPTY = new Uint8Array(0);
const message = (code: number, subcode: number, data: Uint8Array = EMPTY): NotificationMessage => ({ type: 'notification', code, subcode, data });

/**
 * Every NOTIFICATION we send is built here, code and subcode by name
 * (as holo-bgp's NotificationMsg constructors): from a codec or OPEN-check
 * error, or for the FSM's own reasons.
 */
export const Notify = {
  /** The NOTIFICATION a codec error or a failed OPEN check carries. */
  of: (err: BgpError): NotificationMessage => message(err.code, err.subcode, err.data),
  /** RFC 4271 §6.5. */
  holdTimerExpired: (): NotificationMessage => message(ErrorCode.HOLD_TIMER_EXPIRED, HoldTimerSubcode.UNSPECIFIC),
  /** RFC 4271 §6.6 / RFC 6608: an event the state does not expect. */
  fsm: (subcode: keyof typeof FsmSubcode): NotificationMessage => message(ErrorCode.FSM, FsmSubcode[subcode]),
  /** RFC 4486 Cease; `data` e.g. an RFC 9003 shutdown communication. */
  cease: (subcode: keyof typeof CeaseSubcode, data?: Uint8Array): NotificationMessage => message(ErrorCode.CEASE, CeaseSubcode[subcode], data),
} as const;

export function decodeNotification(body: Uint8Array): NotificationMessage {
  if (body.length < 2) throw badLengthError(body.length, `NOTIFICATION body is ${body.length} byte(s), at least 2 required`);
  // Copied: the data outlives the receive buffer (it is logged and kept in status).
  return { type: 'notification', code: body[0], subcode: body[1], data: body.slice(2) };
}

export function encodeNotificationBody(msg: NotificationMessage): Uint8Array {
  checkByte(msg.code, 'NOTIFICATION error code');
  checkByte(msg.subcode, 'NOTIFICATION error subcode');
  const out = new Uint8Array(2 + msg.data.length);
  out[0] = msg.code;
  out[1] = msg.subcode;
  out.set(msg.data, 2);
  return out;
}

function checkByte(v: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v > 255) throw new RangeError(`${what} must be an integer in 0..255, got ${v}`);
}

// ------------------------------------------------------------------ names

const CODE_NAMES: Record<number, string> = {
  1: 'Message Header Error',
  2: 'OPEN Message Error',
  3: 'UPDATE Message Error',
  4: 'Hold Timer Expired',
  5: 'Finite State Machine Error',
  6: 'Cease',
  7: 'ROUTE-REFRESH Message Error',
  8: 'Send Hold Timer Expired',
};

/** Subcode names per code (RFC 4271, RFC 5492, RFC 6608, RFC 4486, RFC 8538, RFC 9384, RFC 7313, RFC 9234). */
const SUBCODE_NAMES: Record<number, Record<number, string>> = {
  1: { 1: 'Connection Not Synchronized', 2: 'Bad Message Length', 3: 'Bad Message Type' },
  2: {
    1: 'Unsupported Version Number',
    2: 'Bad Peer AS',
    3: 'Bad BGP Identifier',
    4: 'Unsupported Optional Parameter',
    5: 'Authentication Failure (deprecated)',
    6: 'Unacceptable Hold Time',
    7: 'Unsupported Capability',
    8: 'Deprecated (8)',
    9: 'Deprecated (9)',
    10: 'Deprecated (10)',
    11: 'Role Mismatch',
  },
  3: {
    1: 'Malformed Attribute List',
    2: 'Unrecognized Well-known Attribute',
    3: 'Missing Well-known Attribute',
    4: 'Attribute Flags Error',
    5: 'Attribute Length Error',
    6: 'Invalid ORIGIN Attribute',
    7: 'AS Routing Loop (deprecated)',
    8: 'Invalid NEXT_HOP Attribute',
    9: 'Optional Attribute Error',
    10: 'Invalid Network Field',
    11: 'Malformed AS_PATH',
  },
  5: {
    0: 'Unspecified Error',
    1: 'Receive Unexpected Message in OpenSent State',
    2: 'Receive Unexpected Message in OpenConfirm State',
    3: 'Receive Unexpected Message in Established State',
  },
  6: {
    1: 'Maximum Number of Prefixes Reached',
    2: 'Administrative Shutdown',
    3: 'Peer De-configured',
    4: 'Administrative Reset',
    5: 'Connection Rejected',
    6: 'Other Configuration Change',
    7: 'Connection Collision Resolution',
    8: 'Out of Resources',
    9: 'Hard Reset',
    10: 'BFD Down',
  },
  7: { 1: 'Invalid Message Length' },
};

/**
 * A readable name such as "Cease / Administrative Shutdown". Subcode 0 is
 * "Unspecific" (RFC 4271 §4.5) except under FSM errors (RFC 6608 names it);
 * codes without subcodes give the code name alone when the subcode is 0.
 */
export function describeNotification(code: number, subcode: number): string {
  const codeName = CODE_NAMES[code];
  if (codeName === undefined) return `Unknown error code ${code} / subcode ${subcode}`;
  const sub = SUBCODE_NAMES[code]?.[subcode];
  if (sub !== undefined) return `${codeName} / ${sub}`;
  if (subcode === 0) return SUBCODE_NAMES[code] ? `${codeName} / Unspecific` : codeName;
  return `${codeName} / unknown subcode ${subcode}`;
}

// ------------------------------------------------------------------ RFC 9003

/** RFC 9003 raised the Shutdown Communication limit from 128 to 255 bytes. */
const MAX_SHUTDOWN_COMMUNICATION = 255;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

/**
 * A Cease NOTIFICATION (Administrative Shutdown or Reset) carrying `text` as
 * a Shutdown Communication: one length byte, then UTF-8, cut to 255 bytes at
 * a character boundary.
 */
export function shutdownNotification(
  subcode: typeof CeaseSubcode.ADMINISTRATIVE_SHUTDOWN | typeof CeaseSubcode.ADMINISTRATIVE_RESET,
  text: string,
): NotificationMessage {
  if (subcode !== CeaseSubcode.ADMINISTRATIVE_SHUTDOWN && subcode !== CeaseSubcode.ADMINISTRATIVE_RESET) {
    throw new RangeError(`a Shutdown Communication goes with Cease subcode 2 or 4, not ${String(subcode)}`);
  }
  let bytes = utf8Encoder.encode(text);
  if (bytes.length > MAX_SHUTDOWN_COMMUNICATION) {
    let cut = MAX_SHUTDOWN_COMMUNICATION;
    // Back up over continuation bytes (10xxxxxx) so no character is split.
    while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--;
    bytes = bytes.subarray(0, cut);
  }
  const data = new Uint8Array(1 + bytes.length);
  data[0] = bytes.length;
  data.set(bytes, 1);
  return { type: 'notification', code: ErrorCode.CEASE, subcode, data };
}

/**
 * The Shutdown Communication of a Cease 2/4 NOTIFICATION, or undefined when
 * there is none or it is malformed (bad length, bad UTF-8). RFC 9003 asks the
 * receiver only to log such faults, so this never throws.
 */
export function shutdownCommunication(msg: NotificationMessage): string | undefined {
  if (msg.code !== ErrorCode.CEASE) return undefined;
  if (msg.subcode !== CeaseSubcode.ADMINISTRATIVE_SHUTDOWN && msg.subcode !== CeaseSubcode.ADMINISTRATIVE_RESET) return undefined;
  const d = msg.data;
  if (d.length < 1) return undefined;
  const len = d[0];
  if (len === 0 || 1 + len > d.length) return undefined;
  try {
    return utf8.decode(d.subarray(1, 1 + len));
  } catch {
    return undefined;
  }
}
