import { Address } from '../../net/index.js';
import { AS_TRANS, AttrType } from '../constants.js';
import type { Writer } from '../buffer.js';
import type { CodecContext } from '../context.js';
import type { Aggregator, AsPathSegment, AttributeIssue, LargeCommunity, PathAttributes } from '../types.js';
import { decodeSegments, encodeSegments, needsAs4Path, segmentsSize } from './aspath.js';
import { decodeMpReach, decodeMpUnreach, encodeMpReachValue, encodeMpUnreachValue, mpReachSize, mpUnreachSize } from './mp.js';

/**
 * One descriptor per attribute type code (BIRD's design): its name, the
 * Optional/Transitive bits it must carry, what RFC 7606 does when its value
 * is malformed, and its value decoder and encoder. The generic checks
 * (lengths, duplicates, flags, unknown codes) live in ./block.ts and run
 * before a descriptor sees the value.
 */

export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Per-UPDATE decode state shared by the descriptors. */
export interface DecodeScratch {
  readonly ctx: CodecContext;
  /** Peer kind when the caller knows it: some RFC 7606 rules differ for eBGP. */
  readonly peer: 'internal' | 'external' | undefined;
  readonly attrs: Mutable<PathAttributes>;
  readonly issues: AttributeIssue[];
  as4Path?: readonly AsPathSegment[];
  as4Aggregator?: Aggregator;
}

const WELL_KNOWN = 0x40;
const OPTIONAL_TRANSITIVE = 0xc0;
export const OPTIONAL = 0x80;

export interface AttributeDescriptor {
  readonly code: number;
  readonly name: string;
  /** The Optional (0x80) and Transitive (0x40) bits the attribute must carry. */
  readonly flags: number;
  /** RFC 7606 outcome for a malformed value; 'session-reset' descriptors throw BgpError themselves. */
  readonly onMalformed: 'treat-as-withdraw' | 'attribute-discard' | 'session-reset';
  /** When true for this context the attribute is dropped unread (AS4_* on a 4-byte-AS session). */
  readonly ignored?: (ctx: CodecContext) => boolean;
  /**
   * Decodes the value b[o, o+len) into the scratch; returns why it is
   * malformed, or undefined. The attribute's header starts at `at`.
   */
  decode(b: Uint8Array, o: number, len: number, s: DecodeScratch, at: number): string | undefined;
  /** Whether `a` carries this attribute when encoding for `ctx`. */
  present(a: PathAttributes, ctx: CodecContext): boolean;
  /** The value's encoded size in bytes (known before writing, so the header goes out first). */
  size(a: PathAttributes, ctx: CodecContext): number;
  /** Writes the value (no header). */
  encode(w: Writer, a: PathAttributes, ctx: CodecContext): void;
}

function word(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}

function fixed(len: number, want: number): string | undefined {
  return len === want ? undefined : `length ${len}, expected ${want}`;
}

/** A value that is a list of `unit`-byte items (the communities, CLUSTER_LIST): the items, or why the length is wrong. */
function readList<T>(b: Uint8Array, o: number, len: number, unit: number, read: (b: Uint8Array, at: number) => T): T[] | string {
  if (len === 0 || len % unit !== 0) return `length ${len} is not a non-zero multiple of ${unit}`;
  const out = new Array<T>(len / unit);
  for (let i = 0; i < out.length; i++) out[i] = read(b, o + unit * i);
  return out;
}

const v4At = (b: Uint8Array, o: number): Address => Address.v4(word(b, o));

function u32Checked(w: Writer, v: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`${what} ${v} is not a 32-bit unsigned integer`);
  w.u32(v);
}

function v4Address(w: Writer, a: Address, what: string): void {
  if (a.family !== 4) throw new Error(`${what} must be an IPv4 address, got ${a.toString()}`);
  w.u32(a.w0);
}

const origin: AttributeDescriptor = {
  code: AttrType.ORIGIN,
  name: 'ORIGIN',
  flags: WELL_KNOWN,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    if (len !== 1) return fixed(len, 1);
    const v = b[o];
    if (v > 2) return `undefined value ${v}`;
    s.attrs.origin = v as 0 | 1 | 2;
    return undefined;
  },
  present: (a) => a.origin !== undefined,
  size: () => 1,
  encode(w, a) {
    const v = a.origin as number;
    if (v !== 0 && v !== 1 && v !== 2) throw new Error(`ORIGIN ${v} is not 0, 1 or 2`);
    w.u8(v);
  },
};

const asPath: AttributeDescriptor = {
  code: AttrType.AS_PATH,
  name: 'AS_PATH',
  flags: WELL_KNOWN,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    const segs = decodeSegments(b, o, len, s.ctx.asn4 ? 4 : 2);
    if (typeof segs === 'string') return segs;
    s.attrs.asPath = segs;
    return undefined;
  },
  present: (a) => a.asPath !== undefined,
  size: (a, ctx) => segmentsSize(a.asPath!, ctx.asn4 ? 4 : 2),
  encode: (w, a, ctx) => encodeSegments(w, a.asPath!, ctx.asn4 ? 4 : 2),
};

const nextHop: AttributeDescriptor = {
  code: AttrType.NEXT_HOP,
  name: 'NEXT_HOP',
  flags: WELL_KNOWN,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    if (len !== 4) return fixed(len, 4);
    s.attrs.nextHop = v4At(b, o);
    return undefined;
  },
  present: (a) => a.nextHop !== undefined,
  size: () => 4,
  encode: (w, a) => v4Address(w, a.nextHop!, 'NEXT_HOP'),
};

const med: AttributeDescriptor = {
  code: AttrType.MULTI_EXIT_DISC,
  name: 'MULTI_EXIT_DISC',
  flags: OPTIONAL,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    if (len !== 4) return fixed(len, 4);
    s.attrs.med = word(b, o);
    return undefined;
  },
  present: (a) => a.med !== undefined,
  size: () => 4,
  encode: (w, a) => u32Checked(w, a.med!, 'MULTI_EXIT_DISC'),
};

const localPref: AttributeDescriptor = {
  code: AttrType.LOCAL_PREF,
  name: 'LOCAL_PREF',
  flags: WELL_KNOWN,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    // RFC 4271 §5.1.5 / RFC 7606 §7.5: an external peer's LOCAL_PREF is disregarded, whatever its shape.
    if (s.peer === 'external') {
      s.issues.push({ code: AttrType.LOCAL_PREF, action: 'attribute-discard', reason: 'LOCAL_PREF from an external peer is disregarded' });
      return undefined;
    }
    if (len !== 4) return fixed(len, 4);
    s.attrs.localPref = word(b, o);
    return undefined;
  },
  present: (a) => a.localPref !== undefined,
  size: () => 4,
  encode: (w, a) => u32Checked(w, a.localPref!, 'LOCAL_PREF'),
};

const atomicAggregate: AttributeDescriptor = {
  code: AttrType.ATOMIC_AGGREGATE,
  name: 'ATOMIC_AGGREGATE',
  flags: WELL_KNOWN,
  onMalformed: 'attribute-discard',
  decode(_b, _o, len, s) {
    if (len !== 0) return fixed(len, 0);
    s.attrs.atomicAggregate = true;
    return undefined;
  },
  present: (a) => a.atomicAggregate === true,
  size: () => 0,
  encode: () => undefined,
};

const aggregator: AttributeDescriptor = {
  code: AttrType.AGGREGATOR,
  name: 'AGGREGATOR',
  flags: OPTIONAL_TRANSITIVE,
  onMalformed: 'attribute-discard',
  decode(b, o, len, s) {
    if (s.ctx.asn4) {
      if (len !== 8) return fixed(len, 8);
      s.attrs.aggregator = { asn: word(b, o), address: Address.v4(word(b, o + 4)) };
    } else {
      if (len !== 6) return fixed(len, 6);
      s.attrs.aggregator = { asn: (b[o] << 8) | b[o + 1], address: Address.v4(word(b, o + 2)) };
    }
    return undefined;
  },
  present: (a) => a.aggregator !== undefined,
  size: (_a, ctx) => (ctx.asn4 ? 8 : 6),
  encode(w, a, ctx) {
    const { asn, address } = a.aggregator!;
    if (ctx.asn4) u32Checked(w, asn, 'AGGREGATOR AS');
    else {
      if (!Number.isInteger(asn) || asn < 0 || asn > 0xffffffff) throw new Error(`AGGREGATOR AS ${asn} is not a 32-bit AS number`);
      w.u16(asn > 0xffff ? AS_TRANS : asn);
    }
    v4Address(w, address, 'AGGREGATOR address');
  },
};

const communities: AttributeDescriptor = {
  code: AttrType.COMMUNITIES,
  name: 'COMMUNITIES',
  flags: OPTIONAL_TRANSITIVE,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    const l = readList(b, o, len, 4, word);
    if (typeof l === 'string') return l;
    s.attrs.communities = l;
    return undefined;
  },
  // An empty list cannot be sent (RFC 7606 calls zero length malformed), so it is left out.
  present: (a) => a.communities !== undefined && a.communities.length > 0,
  size: (a) => 4 * a.communities!.length,
  encode(w, a) {
    for (const c of a.communities!) u32Checked(w, c, 'community');
  },
};

const originatorId: AttributeDescriptor = {
  code: AttrType.ORIGINATOR_ID,
  name: 'ORIGINATOR_ID',
  flags: OPTIONAL,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    if (len !== 4) return fixed(len, 4);
    s.attrs.originatorId = v4At(b, o);
    return undefined;
  },
  present: (a) => a.originatorId !== undefined,
  size: () => 4,
  encode: (w, a) => v4Address(w, a.originatorId!, 'ORIGINATOR_ID'),
};

const clusterList: AttributeDescriptor = {
  code: AttrType.CLUSTER_LIST,
  name: 'CLUSTER_LIST',
  flags: OPTIONAL,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    const l = readList(b, o, len, 4, v4At);
    if (typeof l === 'string') return l;
    s.attrs.clusterList = l;
    return undefined;
  },
  present: (a) => a.clusterList !== undefined && a.clusterList.length > 0,
  size: (a) => 4 * a.clusterList!.length,
  encode(w, a) {
    for (const c of a.clusterList!) v4Address(w, c, 'CLUSTER_LIST entry');
  },
};

const mpReach: AttributeDescriptor = {
  code: AttrType.MP_REACH_NLRI,
  name: 'MP_REACH_NLRI',
  flags: OPTIONAL,
  onMalformed: 'session-reset',
  decode(b, o, len, s, at) {
    s.attrs.mpReach = decodeMpReach(b, o, len, s.ctx, at);
    return undefined;
  },
  present: (a) => a.mpReach !== undefined,
  size: (a, ctx) => mpReachSize(a.mpReach!, ctx),
  encode: (w, a, ctx) => encodeMpReachValue(w, a.mpReach!, ctx),
};

const mpUnreach: AttributeDescriptor = {
  code: AttrType.MP_UNREACH_NLRI,
  name: 'MP_UNREACH_NLRI',
  flags: OPTIONAL,
  onMalformed: 'session-reset',
  decode(b, o, len, s, at) {
    s.attrs.mpUnreach = decodeMpUnreach(b, o, len, s.ctx, at);
    return undefined;
  },
  present: (a) => a.mpUnreach !== undefined,
  size: (a, ctx) => mpUnreachSize(a.mpUnreach!, ctx),
  encode: (w, a, ctx) => encodeMpUnreachValue(w, a.mpUnreach!, ctx),
};

const extendedCommunities: AttributeDescriptor = {
  code: AttrType.EXTENDED_COMMUNITIES,
  name: 'EXTENDED_COMMUNITIES',
  flags: OPTIONAL_TRANSITIVE,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    const l = readList(b, o, len, 8, (b, p) => (BigInt(word(b, p)) << 32n) | BigInt(word(b, p + 4)));
    if (typeof l === 'string') return l;
    s.attrs.extendedCommunities = l;
    return undefined;
  },
  present: (a) => a.extendedCommunities !== undefined && a.extendedCommunities.length > 0,
  size: (a) => 8 * a.extendedCommunities!.length,
  encode(w, a) {
    for (const c of a.extendedCommunities!) {
      if (typeof c !== 'bigint' || c < 0n || c > 0xffffffffffffffffn) throw new Error(`extended community ${String(c)} is not a 64-bit unsigned value`);
      w.u32(Number(c >> 32n));
      w.u32(Number(c & 0xffffffffn));
    }
  },
};

const as4Path: AttributeDescriptor = {
  code: AttrType.AS4_PATH,
  name: 'AS4_PATH',
  flags: OPTIONAL_TRANSITIVE,
  // RFC 6793 §6: a malformed AS4_PATH is discarded and AS_PATH used alone.
  onMalformed: 'attribute-discard',
  ignored: (ctx) => ctx.asn4,
  decode(b, o, len, s) {
    const segs = decodeSegments(b, o, len, 4);
    if (typeof segs === 'string') return segs;
    for (const seg of segs) if (seg.type === 3 || seg.type === 4) return 'confederation segment in AS4_PATH';
    s.as4Path = segs;
    return undefined;
  },
  present: (a, ctx) => !ctx.asn4 && a.asPath !== undefined && needsAs4Path(a.asPath),
  size: (a) => segmentsSize(a.asPath!, 4, true),
  encode: (w, a) => encodeSegments(w, a.asPath!, 4, true),
};

const as4Aggregator: AttributeDescriptor = {
  code: AttrType.AS4_AGGREGATOR,
  name: 'AS4_AGGREGATOR',
  flags: OPTIONAL_TRANSITIVE,
  onMalformed: 'attribute-discard',
  ignored: (ctx) => ctx.asn4,
  decode(b, o, len, s) {
    if (len !== 8) return fixed(len, 8);
    s.as4Aggregator = { asn: word(b, o), address: Address.v4(word(b, o + 4)) };
    return undefined;
  },
  present: (a, ctx) => !ctx.asn4 && a.aggregator !== undefined && a.aggregator.asn > 0xffff,
  size: () => 8,
  encode(w, a) {
    w.u32(a.aggregator!.asn);
    v4Address(w, a.aggregator!.address, 'AS4_AGGREGATOR address');
  },
};

const largeCommunities: AttributeDescriptor = {
  code: AttrType.LARGE_COMMUNITIES,
  name: 'LARGE_COMMUNITIES',
  flags: OPTIONAL_TRANSITIVE,
  onMalformed: 'treat-as-withdraw',
  decode(b, o, len, s) {
    const l = readList(b, o, len, 12, (b, p): LargeCommunity => ({ global: word(b, p), local1: word(b, p + 4), local2: word(b, p + 8) }));
    if (typeof l === 'string') return l;
    s.attrs.largeCommunities = l;
    return undefined;
  },
  present: (a) => a.largeCommunities !== undefined && a.largeCommunities.length > 0,
  size: (a) => 12 * a.largeCommunities!.length,
  encode(w, a) {
    for (const c of a.largeCommunities!) {
      u32Checked(w, c.global, 'large community global administrator');
      u32Checked(w, c.local1, 'large community local data 1');
      u32Checked(w, c.local2, 'large community local data 2');
    }
  },
};

/**
 * Canonical encoding order: MP_REACH_NLRI then MP_UNREACH_NLRI first (RFC
 * 7606 §5.1 asks for them to lead so a receiver can find the NLRI even when
 * a later attribute is broken), then every other attribute, known or not, in
 * ascending type code. The one list of the descriptors the codec knows;
 * `DESCRIPTORS` is built from it.
 */
export const ENCODE_ORDER: readonly AttributeDescriptor[] = [
  origin,
  asPath,
  nextHop,
  med,
  localPref,
  atomicAggregate,
  aggregator,
  communities,
  originatorId,
  clusterList,
  mpReach,
  mpUnreach,
  extendedCommunities,
  as4Path,
  as4Aggregator,
  largeCommunities,
].sort((x, y) => encodeRank(x.code) - encodeRank(y.code));

function encodeRank(code: number): number {
  if (code === AttrType.MP_REACH_NLRI) return -2;
  if (code === AttrType.MP_UNREACH_NLRI) return -1;
  return code;
}

/** Descriptor by type code (undefined for codes the codec does not interpret): ENCODE_ORDER indexed by code. */
export const DESCRIPTORS: readonly (AttributeDescriptor | undefined)[] = (() => {
  const table = new Array<AttributeDescriptor | undefined>(256).fill(undefined);
  for (const d of ENCODE_ORDER) {
    if (table[d.code] !== undefined) throw new Error(`attribute descriptors: code ${d.code} is described twice (${table[d.code]!.name}, ${d.name})`);
    table[d.code] = d;
  }
  return table;
})();

export function attributeName(code: number): string {
  return DESCRIPTORS[code]?.name ?? `attribute ${code}`;
}
