import { AS_TRANS, AttrFlag, AttrType } from '../constants.js';
import type { Writer } from '../buffer.js';
import type { CodecContext } from '../context.js';
import { BgpError } from '../errors.js';
import type { AttributeIssue, PathAttributes, RawAttribute } from '../types.js';
import { mergeAs4Path } from './aspath.js';
import { copyBytes } from './bytes.js';
import { DESCRIPTORS, ENCODE_ORDER, type DecodeScratch, type Mutable } from './descriptors.js';

/**
 * The path attribute block: the generic RFC 7606 checks done once for every
 * attribute (header and length against the block, duplicates, flag bits,
 * unknown codes), then the descriptor's own value check, then the RFC 6793
 * AS4 merge.
 */

export interface DecodedBlock {
  readonly attrs: Mutable<PathAttributes>;
  readonly issues: AttributeIssue[];
  /** True when some problem calls for treat-as-withdraw. */
  readonly withdraw: boolean;
}

const MP_REACH = AttrType.MP_REACH_NLRI;
const MP_UNREACH = AttrType.MP_UNREACH_NLRI;

export function decodeAttributeBlock(b: Uint8Array, start: number, end: number, ctx: CodecContext, peer: 'internal' | 'external' | undefined): DecodedBlock {
  const attrs: Mutable<PathAttributes> = {};
  const issues: AttributeIssue[] = [];
  const s: DecodeScratch = { ctx, peer, attrs, issues };
  let withdraw = false;
  // Codes seen so far: bits for 0..31 and 32..63, a Set for the rare higher codes.
  let seenLo = 0;
  let seenHi = 0;
  let seenMore: Set<number> | undefined;
  let unknown: RawAttribute[] | undefined;
  let o = start;
  while (o < end) {
    const left = end - o;
    const flags = b[o];
    const extended = (flags & AttrFlag.EXTENDED_LENGTH) !== 0;
    const headerLen = extended ? 4 : 3;
    if (left < headerLen) {
      // RFC 7606 §4: bytes left that cannot hold an attribute header.
      issues.push({
        code: left >= 2 ? b[o + 1] : 0,
        action: 'treat-as-withdraw',
        reason: `${left} trailing byte(s) in the attribute block cannot hold an attribute header`,
      });
      withdraw = true;
      break;
    }
    const code = b[o + 1];
    const len = extended ? (b[o + 2] << 8) | b[o + 3] : b[o + 2];
    const v = o + headerLen;
    if (v + len > end) {
      // RFC 7606 §4: treat-as-withdraw, the block's total length still locates the NLRI.
      // An MP attribute cut short hides NLRI that cannot then be withdrawn: reset.
      if (code === MP_REACH || code === MP_UNREACH) {
        throw BgpError.update(
          'OPTIONAL_ATTRIBUTE_ERROR',
          `${DESCRIPTORS[code]!.name} length ${len} overruns the attribute block by ${v + len - end} byte(s)`,
          copyBytes(b, o, end),
        );
      }
      issues.push({ code, action: 'treat-as-withdraw', reason: `attribute length ${len} overruns the attribute block by ${v + len - end} byte(s)` });
      withdraw = true;
      break;
    }
    const next = v + len;
    const d = DESCRIPTORS[code];
    if (d === undefined) {
      if ((flags & AttrFlag.OPTIONAL) === 0) {
        throw BgpError.update('UNRECOGNIZED_WELL_KNOWN_ATTRIBUTE', `unrecognized well-known attribute ${code}`, copyBytes(b, o, next));
      }
    }
    if (d !== undefined && d.ignored !== undefined && d.ignored(ctx)) {
      o = next;
      continue;
    }
    // RFC 7606 §3(g): later copies are discarded, except MP_* which reset.
    let dup: boolean;
    if (code < 32) {
      dup = (seenLo & (1 << code)) !== 0;
      seenLo |= 1 << code;
    } else if (code < 64) {
      dup = (seenHi & (1 << (code - 32))) !== 0;
      seenHi |= 1 << (code - 32);
    } else {
      seenMore ??= new Set();
      dup = seenMore.has(code);
      seenMore.add(code);
    }
    if (dup) {
      if (code === MP_REACH || code === MP_UNREACH) {
        throw BgpError.update('MALFORMED_ATTRIBUTE_LIST', `${DESCRIPTORS[code]!.name} appears more than once`);
      }
      issues.push({ code, action: 'attribute-discard', reason: `repeated ${DESCRIPTORS[code]?.name ?? `attribute ${code}`} discarded` });
      o = next;
      continue;
    }
    if (d === undefined) {
      // Unknown optional: transitive ones travel on (flags kept as received, less the length bit); others are dropped.
      if ((flags & AttrFlag.TRANSITIVE) !== 0) {
        (unknown ??= []).push({ flags: flags & ~AttrFlag.EXTENDED_LENGTH & 0xff, code, value: copyBytes(b, v, next) });
      }
      o = next;
      continue;
    }
    let why: string | undefined;
    if ((flags & 0xc0) !== d.flags) {
      why =
        `flags 0x${flags.toString(16).padStart(2, '0')} conflict with the ` +
        `${d.flags === 0x40 ? 'well-known' : d.flags === 0xc0 ? 'optional transitive' : 'optional non-transitive'} type`;
      if (d.onMalformed === 'session-reset') throw BgpError.update('ATTRIBUTE_FLAGS_ERROR', `${d.name}: ${why}`, copyBytes(b, o, next));
      // RFC 7606 §3(c): a flag conflict makes the attribute malformed, handled as treat-as-withdraw.
      issues.push({ code, action: 'treat-as-withdraw', reason: `${d.name}: ${why}` });
      withdraw = true;
      o = next;
      continue;
    }
    why = d.decode(b, v, len, s, o);
    if (why !== undefined) {
      const action = d.onMalformed === 'attribute-discard' ? 'attribute-discard' : 'treat-as-withdraw';
      issues.push({ code, action, reason: `malformed ${d.name}: ${why}` });
      if (action === 'treat-as-withdraw') withdraw = true;
    }
    o = next;
  }
  if (unknown !== undefined) attrs.unknown = unknown;
  if (!ctx.asn4) mergeAs4(s);
  return { attrs, issues, withdraw };
}

/** RFC 6793 §4.2.3 on a 2-byte-AS session. */
function mergeAs4(s: DecodeScratch): void {
  const a = s.attrs;
  let as4Path = s.as4Path;
  if (s.as4Aggregator !== undefined && a.aggregator !== undefined) {
    if (a.aggregator.asn !== AS_TRANS)
      as4Path = undefined; // the aggregating speaker was 2-byte only: both AS4 attributes are stale
    else a.aggregator = s.as4Aggregator;
  }
  if (as4Path !== undefined && a.asPath !== undefined) a.asPath = mergeAs4Path(a.asPath, as4Path);
}

function headerSize(len: number): number {
  return len > 255 ? 4 : 3;
}

function writeHeader(w: Writer, flags: number, code: number, len: number): void {
  if (len > 0xffff) throw new Error(`attribute ${code} value of ${len} bytes exceeds 65535`);
  w.ensure(headerSize(len) + len);
  const buf = w.buf;
  let p = w.pos;
  if (len > 255) {
    buf[p++] = flags | AttrFlag.EXTENDED_LENGTH;
    buf[p++] = code;
    buf[p++] = len >>> 8;
  } else {
    buf[p++] = flags & ~AttrFlag.EXTENDED_LENGTH;
    buf[p++] = code;
  }
  buf[p++] = len;
  w.pos = p;
}

function sortedUnknown(list: readonly RawAttribute[] | undefined): readonly RawAttribute[] {
  if (list === undefined || list.length === 0) return EMPTY;
  for (const u of list) {
    if (DESCRIPTORS[u.code] !== undefined) throw new Error(`attribute ${u.code} has a codec; put it in its own field, not in unknown`);
    if (!Number.isInteger(u.code) || u.code < 0 || u.code > 255) throw new Error(`attribute code ${u.code} is not a byte`);
  }
  return [...list].sort((x, y) => x.code - y.code);
}

const EMPTY: readonly RawAttribute[] = [];

/** Bytes encodeAttributes will write for `a`. */
export function attributesSize(a: PathAttributes, ctx: CodecContext, skipMp = false): number {
  let n = 0;
  for (let i = skipMp ? 2 : 0; i < ENCODE_ORDER.length; i++) {
    const d = ENCODE_ORDER[i];
    if (!d.present(a, ctx)) continue;
    const len = d.size(a, ctx);
    n += headerSize(len) + len;
  }
  if (a.unknown !== undefined) for (const u of a.unknown) n += headerSize(u.value.length) + u.value.length;
  return n;
}

/**
 * Writes the attribute block (no total-length field) in canonical form: see
 * ENCODE_ORDER; the extended-length flag only when a value exceeds 255
 * bytes; unknown attributes with the Partial bit set (we pass them on
 * without understanding them). `skipMp` leaves out MP_REACH/MP_UNREACH.
 * Each value's size is computed first so its header is written once, in place.
 */
export function encodeAttributes(w: Writer, a: PathAttributes, ctx: CodecContext, skipMp = false): void {
  const unknown = sortedUnknown(a.unknown);
  let u = 0;
  for (let i = skipMp ? 2 : 0; i < ENCODE_ORDER.length; i++) {
    const d = ENCODE_ORDER[i];
    while (i >= 2 && u < unknown.length && unknown[u].code < d.code) writeUnknown(w, unknown[u++]);
    if (!d.present(a, ctx)) continue;
    const len = d.size(a, ctx);
    writeHeader(w, d.flags, d.code, len);
    const start = w.pos;
    d.encode(w, a, ctx);
    if (w.pos - start !== len) throw new Error(`${d.name} wrote ${w.pos - start} bytes, not the ${len} it announced`);
  }
  while (u < unknown.length) writeUnknown(w, unknown[u++]);
}

function writeUnknown(w: Writer, raw: RawAttribute): void {
  writeHeader(w, (raw.flags | AttrFlag.PARTIAL) & 0xff, raw.code, raw.value.length);
  w.bytes(raw.value);
}
