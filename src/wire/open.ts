import { formatV4, parseV4 } from '../net/index.js';
import { u16, u32, Writer } from './buffer.js';
import { decodeCapabilities, encodeCapabilities } from './capabilities.js';
import { AS_TRANS, BGP_VERSION } from './constants.js';
import { BgpError } from './errors.js';
import { badLengthError } from './framer.js';
import type { Capability, OpenMessage, OptionalParameter } from './types.js';

/**
 * OPEN (RFC 4271 §4.2) with RFC 9072 extended optional parameters. The
 * codec checks syntax only: the version (the layout of the rest depends on
 * it), lengths, parameters and capability TLVs. What the values mean (hold
 * time, BGP identifier, peer AS, required capabilities) is judged in one
 * place, the session's checkOpen (src/session/open.ts).
 */

/** Version, My AS, Hold Time, BGP Identifier, Opt Parm Len. */
const FIXED = 10;
const CAPABILITIES_PARAM = 2;
/** RFC 9072: the Non-Ext OP Type value announcing the extended format. */
const EXTENDED_LENGTH_PARAM = 255;

export function decodeOpen(body: Uint8Array): OpenMessage {
  if (body.length < FIXED) throw badLengthError(body.length, `OPEN body is ${body.length} bytes, at least ${FIXED} required`);
  const version = body[0];
  if (version !== BGP_VERSION) {
    // RFC 4271 §6.2: data is the largest supported version below the bid, else the smallest; we only have 4.
    throw BgpError.open('UNSUPPORTED_VERSION', `unsupported BGP version ${version} (only 4)`, Uint8Array.of(0, BGP_VERSION));
  }
  const myAs = u16(body, 1);
  const holdTime = u16(body, 3);
  const id = u32(body, 5);

  const optLen = body[9];
  // RFC 9072: a non-zero Opt Parm Len followed by type 255 means the extended format.
  const extended = optLen !== 0 && body.length > FIXED && body[FIXED] === EXTENDED_LENGTH_PARAM;
  let start: number;
  let end: number;
  if (extended) {
    if (body.length < FIXED + 3) throw BgpError.open('UNSPECIFIC', 'extended optional parameters length is truncated');
    start = FIXED + 3;
    end = start + u16(body, FIXED + 1);
  } else {
    start = FIXED;
    end = start + optLen;
  }
  if (end > body.length)
    throw BgpError.open('UNSPECIFIC', `optional parameters length ${end - start} overruns the OPEN body (${body.length - start} byte(s) present)`);
  if (end < body.length) throw BgpError.open('UNSPECIFIC', `${body.length - end} byte(s) after the optional parameters`);

  const params = decodeParams(body, start, end, extended ? 2 : 1);
  const bgpId = formatV4(id);
  return extended ? { type: 'open', version, myAs, holdTime, bgpId, params, extendedParams: true } : { type: 'open', version, myAs, holdTime, bgpId, params };
}

function decodeParams(b: Uint8Array, off: number, end: number, lenWidth: 1 | 2): OptionalParameter[] {
  const params: OptionalParameter[] = [];
  while (off < end) {
    if (end - off < 1 + lenWidth) throw BgpError.open('UNSPECIFIC', `optional parameter header truncated: ${end - off} byte(s) left`);
    const type = b[off];
    const len = lenWidth === 1 ? b[off + 1] : u16(b, off + 1);
    off += 1 + lenWidth;
    if (off + len > end)
      throw BgpError.open('UNSPECIFIC', `optional parameter ${type} length ${len} overruns the optional parameters (${end - off} byte(s) left)`);
    // RFC 5492 leaves capabilities (2) as the only parameter in use; type 1 (authentication) is deprecated.
    if (type !== CAPABILITIES_PARAM) throw BgpError.open('UNSUPPORTED_OPTIONAL_PARAMETER', `unsupported optional parameter type ${type}`);
    params.push({ type: CAPABILITIES_PARAM, capabilities: decodeCapabilities(b, off, off + len) });
    off += len;
  }
  return params;
}

/** Encodes an OPEN body (no header). Throws RangeError for fields the wire cannot carry. */
export function encodeOpenBody(msg: OpenMessage): Uint8Array {
  checkUint(msg.version, 0xff, 'OPEN version');
  checkUint(msg.myAs, 0xffff, 'OPEN My AS');
  checkUint(msg.holdTime, 0xffff, 'OPEN hold time');
  const id = parseV4(msg.bgpId, 'BGP identifier');

  const values = msg.params.map((p) => {
    checkUint(p.type, 0xff, 'optional parameter type');
    if (p.type === EXTENDED_LENGTH_PARAM) throw new RangeError('optional parameter type 255 is reserved (RFC 9072)');
    if (p.capabilities) return { type: p.type, value: encodeCapabilities(p.capabilities) };
    const value = (p as { value?: unknown }).value;
    if (!(value instanceof Uint8Array)) throw new RangeError(`optional parameter ${p.type} has neither capabilities nor a byte value`);
    return { type: p.type, value };
  });
  const plainLength = values.reduce((n, v) => n + 2 + v.value.length, 0);
  const extended = msg.extendedParams === true || plainLength > 255 || values.some((v) => v.value.length > 255);

  const w = new Writer(FIXED + 3 + plainLength + values.length);
  w.u8(msg.version).u16(msg.myAs).u16(msg.holdTime).u32(id);
  if (extended) {
    // Non-Ext OP Len 255, Non-Ext OP Type 255, then the real length in 2 bytes; parameters carry 2-byte lengths.
    w.u8(255).u8(EXTENDED_LENGTH_PARAM);
    const mark = w.reserve(2);
    for (const v of values) {
      if (v.value.length > 0xffff) throw new RangeError(`optional parameter ${v.type} is ${v.value.length} bytes, more than 65535`);
      w.u8(v.type).u16(v.value.length).bytes(v.value);
    }
    if (w.patch(mark, 2) > 0xffff) throw new RangeError('optional parameters exceed 65535 bytes');
  } else {
    const mark = w.reserve(1);
    for (const v of values) w.u8(v.type).u8(v.value.length).bytes(v.value);
    w.patch(mark, 1);
  }
  return w.finish();
}

// ------------------------------------------------------------------ helpers

/** Every capability of the OPEN, in wire order, across all optional parameters. */
export function capabilitiesOf(open: OpenMessage): Capability[] {
  const out: Capability[] = [];
  for (const p of open.params) if (p.capabilities) out.push(...p.capabilities);
  return out;
}

/** The sender's real AS: from the 4-octet AS capability (RFC 6793) when present, else My AS. */
export function openAsn(open: OpenMessage): number {
  for (const cap of capabilitiesOf(open)) if (cap.kind === 'fourOctetAs') return cap.asn;
  return open.myAs;
}

export interface OpenOptions {
  readonly asn: number;
  readonly holdTime: number;
  /** Dotted quad, not 0.0.0.0. */
  readonly bgpId: string;
  readonly capabilities: readonly Capability[];
  /** Force the RFC 9072 encoding even when the parameters fit in 255 bytes. */
  readonly extendedParams?: boolean;
}

/**
 * An OPEN carrying all capabilities in one optional parameter. My AS is
 * AS_TRANS when `asn` needs 4 bytes, which then requires a matching
 * fourOctetAs capability (without one the peer could not learn our AS).
 */
export function buildOpen(opts: OpenOptions): OpenMessage {
  checkUint(opts.asn, 0xffffffff, 'AS number');
  checkUint(opts.holdTime, 0xffff, 'hold time');
  if (opts.holdTime === 1 || opts.holdTime === 2) throw new RangeError(`hold time must be 0 or at least 3 seconds, got ${opts.holdTime}`);
  if (parseV4(opts.bgpId, 'BGP identifier') === 0) throw new RangeError('BGP identifier must not be 0.0.0.0');
  const four = opts.capabilities.find((c) => c.kind === 'fourOctetAs');
  if (four && four.asn !== opts.asn) throw new RangeError(`4-octet AS capability says ${four.asn} but asn is ${opts.asn}`);
  if (!four && opts.asn > 0xffff) throw new RangeError(`AS ${opts.asn} needs a fourOctetAs capability`);
  const params: OptionalParameter[] = opts.capabilities.length > 0 ? [{ type: CAPABILITIES_PARAM, capabilities: [...opts.capabilities] }] : [];
  const open: OpenMessage = {
    type: 'open',
    version: BGP_VERSION,
    myAs: opts.asn > 0xffff ? AS_TRANS : opts.asn,
    holdTime: opts.holdTime,
    bgpId: opts.bgpId,
    params,
  };
  return opts.extendedParams ? { ...open, extendedParams: true } : open;
}

function checkUint(v: number, max: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`${what} must be an integer in 0..${max}, got ${v}`);
}
