/**
 * BFD Control packets (RFC 5880 §4.1): encode, and decode with the checks of
 * §6.8.6 that need no session. Decoding never throws: a bad packet comes back
 * as `{ ok: false, reason }` so the shell can count it and drop it.
 */

export type BfdStateName = 'AdminDown' | 'Down' | 'Init' | 'Up';
export const STATE_NAMES: readonly BfdStateName[] = ['AdminDown', 'Down', 'Init', 'Up'];
const STATE_CODE: Record<BfdStateName, number> = { AdminDown: 0, Down: 1, Init: 2, Up: 3 };

/** Diagnostic codes (RFC 5880 §4.1). */
export const Diag = {
  NONE: 0,
  CONTROL_DETECTION_TIME_EXPIRED: 1,
  ECHO_FUNCTION_FAILED: 2,
  NEIGHBOR_SIGNALED_SESSION_DOWN: 3,
  FORWARDING_PLANE_RESET: 4,
  PATH_DOWN: 5,
  CONCATENATED_PATH_DOWN: 6,
  ADMINISTRATIVELY_DOWN: 7,
  REVERSE_CONCATENATED_PATH_DOWN: 8,
} as const;

const DIAG_TEXT = [
  'No Diagnostic',
  'Control Detection Time Expired',
  'Echo Function Failed',
  'Neighbor Signaled Session Down',
  'Forwarding Plane Reset',
  'Path Down',
  'Concatenated Path Down',
  'Administratively Down',
  'Reverse Concatenated Path Down',
];

export function describeDiag(code: number): string {
  return DIAG_TEXT[code] ?? `Reserved (${code})`;
}

export interface BfdPacket {
  readonly diag: number;
  readonly state: BfdStateName;
  readonly poll: boolean;
  readonly final: boolean;
  /** Control Plane Independent. */
  readonly cpi: boolean;
  /** Authentication Present. */
  readonly auth: boolean;
  readonly demand: boolean;
  readonly multipoint: boolean;
  readonly detectMult: number;
  readonly myDiscr: number;
  readonly yourDiscr: number;
  /** Microseconds. */
  readonly desiredMinTx: number;
  readonly requiredMinRx: number;
  readonly requiredMinEchoRx: number;
}

const PACKET_LENGTH = 24;

export type DecodeResult = { readonly ok: true; readonly packet: BfdPacket } | { readonly ok: false; readonly reason: string };

export function encodePacket(p: BfdPacket): Uint8Array {
  const b = new Uint8Array(PACKET_LENGTH);
  const v = new DataView(b.buffer);
  b[0] = (1 << 5) | (p.diag & 0x1f);
  b[1] =
    (STATE_CODE[p.state] << 6) |
    (p.poll ? 0x20 : 0) |
    (p.final ? 0x10 : 0) |
    (p.cpi ? 0x08 : 0) |
    (p.auth ? 0x04 : 0) |
    (p.demand ? 0x02 : 0) |
    (p.multipoint ? 0x01 : 0);
  b[2] = p.detectMult;
  b[3] = PACKET_LENGTH;
  v.setUint32(4, p.myDiscr >>> 0);
  v.setUint32(8, p.yourDiscr >>> 0);
  v.setUint32(12, p.desiredMinTx >>> 0);
  v.setUint32(16, p.requiredMinRx >>> 0);
  v.setUint32(20, p.requiredMinEchoRx >>> 0);
  return b;
}

/**
 * RFC 5880 §6.8.6, the checks that need no session: version 1, a length that
 * fits the datagram (24, or 26 with the A bit), a nonzero Detect Mult, M clear,
 * a nonzero My Discriminator, and Your Discriminator zero only in Down or
 * AdminDown. (Selecting the session and the A-bit-versus-our-auth check are
 * the session table's and the FSM's.)
 */
export function decodePacket(buf: Uint8Array): DecodeResult {
  if (buf.length < PACKET_LENGTH) return { ok: false, reason: `packet of ${buf.length} bytes is shorter than the 24-byte minimum` };
  const version = buf[0] >> 5;
  if (version !== 1) return { ok: false, reason: `version ${version}, not 1` };
  const flags = buf[1];
  const auth = (flags & 0x04) !== 0;
  const length = buf[3];
  if (length < (auth ? 26 : PACKET_LENGTH))
    return { ok: false, reason: `Length field ${length} is below the minimum (${auth ? 26 : 24}${auth ? ' with the A bit' : ''})` };
  if (length > buf.length) return { ok: false, reason: `Length field ${length} exceeds the ${buf.length}-byte datagram` };
  const detectMult = buf[2];
  if (detectMult === 0) return { ok: false, reason: 'Detect Mult is zero' };
  if ((flags & 0x01) !== 0) return { ok: false, reason: 'Multipoint (M) bit set' };
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const myDiscr = v.getUint32(4);
  if (myDiscr === 0) return { ok: false, reason: 'My Discriminator is zero' };
  const yourDiscr = v.getUint32(8);
  const state = STATE_NAMES[flags >> 6];
  if (yourDiscr === 0 && state !== 'Down' && state !== 'AdminDown') return { ok: false, reason: `Your Discriminator is zero in state ${state}` };
  return {
    ok: true,
    packet: {
      diag: buf[0] & 0x1f,
      state,
      poll: (flags & 0x20) !== 0,
      final: (flags & 0x10) !== 0,
      cpi: (flags & 0x08) !== 0,
      auth,
      demand: (flags & 0x02) !== 0,
      multipoint: false,
      detectMult,
      myDiscr,
      yourDiscr,
      desiredMinTx: v.getUint32(12),
      requiredMinRx: v.getUint32(16),
      requiredMinEchoRx: v.getUint32(20),
    },
  };
}
