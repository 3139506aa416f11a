import { formatV4, parseV4, ParseError } from '../net/index.js';
import { WellKnownCommunity } from './constants.js';
import type { LargeCommunity } from './types.js';

/**
 * The one text form of communities, used by the codec's describers, the
 * policy engine, the Calico validator, the agent and the speaker's API:
 * RFC 1997 "AS:value" (and well-known names), RFC 8092 large
 * "global:local1:local2", and the common RFC 4360 extended types
 * ("rt:65000:100", "soo:192.0.2.1:7", "rt:4200000000:1"), the link
 * bandwidth of draft-ietf-idr-link-bandwidth / RFC 10005 ("lb:65000:125000",
 * AS and bytes per second), falling back to 16 hex digits
 * ("0x0002fde800000064") for types without a name. Parsers
 * throw ParseError naming the text and the part that is wrong;
 * parse(format(x)) === x for every value (test/wire/communities.test.ts).
 */

const NAMES: ReadonlyMap<number, string> = new Map([
  [WellKnownCommunity.GRACEFUL_SHUTDOWN, 'graceful-shutdown'],
  [WellKnownCommunity.ACCEPT_OWN, 'accept-own'],
  [WellKnownCommunity.LLGR_STALE, 'llgr-stale'],
  [WellKnownCommunity.NO_LLGR, 'no-llgr'],
  [WellKnownCommunity.BLACKHOLE, 'blackhole'],
  [WellKnownCommunity.NO_EXPORT, 'no-export'],
  [WellKnownCommunity.NO_ADVERTISE, 'no-advertise'],
  [WellKnownCommunity.NO_EXPORT_SUBCONFED, 'no-export-subconfed'],
  [WellKnownCommunity.NOPEER, 'no-peer'],
]);

const BY_NAME: ReadonlyMap<string, number> = new Map([
  ...[...NAMES].map(([v, n]) => [n, v] as [string, number]),
  ['local-as', WellKnownCommunity.NO_EXPORT_SUBCONFED],
]);

/** The well-known name of a community, if it has one. */
export function communityName(value: number): string | undefined {
  return NAMES.get(value >>> 0);
}

/** "AS:value" in numbers, even for well-known values (what policy regular expressions match against). */
export function communityPair(value: number): string {
  const v = value >>> 0;
  return `${v >>> 16}:${v & 0xffff}`;
}

/** "no-export" for well-known values, else "AS:value". */
export function formatCommunity(value: number): string {
  return NAMES.get(value >>> 0) ?? communityPair(value);
}

/** A decimal part (leading zeros allowed, as Calico's and GoBGP's parsers do) up to `max`. */
export function decimal(text: string, part: string, max: number, what: string): number {
  if (!/^[0-9]{1,20}$/.test(part)) throw new ParseError(text, `${what} (${JSON.stringify(part)} is not a decimal number)`);
  const n = Number(part);
  if (n > max) throw new ParseError(text, `${what} (${n} is above ${max})`);
  return n;
}

/** Parses "65000:100" or a well-known name ("no-export", "blackhole", …) into the 32-bit value. */
export function parseCommunity(text: string): number {
  const t = text.trim().toLowerCase();
  const named = BY_NAME.get(t);
  if (named !== undefined) return named;
  const parts = t.split(':');
  if (parts.length !== 2) throw new ParseError(text, 'community (expected "AS:value" or a well-known name)');
  return ((decimal(text, parts[0], 0xffff, 'community AS') << 16) | decimal(text, parts[1], 0xffff, 'community value')) >>> 0;
}

/**
 * "AS:value" as a standard community, "global:local1:local2" as a large one
 * (Calico's literal forms: the number of parts decides); undefined for text
 * without a colon (a name, for the caller to resolve).
 */
export function parseCommunityLiteral(text: string): { type: 'standard'; value: number } | { type: 'large'; value: LargeCommunity } | undefined {
  const parts = text.split(':').length;
  if (parts === 1) return undefined;
  if (parts === 3) return { type: 'large', value: parseLargeCommunity(text) };
  if (parts !== 2) throw new ParseError(text, 'community (expected "AS:value" or "global:local1:local2")');
  return { type: 'standard', value: parseCommunity(text) };
}

export function formatLargeCommunity(c: LargeCommunity): string {
  return `${c.global >>> 0}:${c.local1 >>> 0}:${c.local2 >>> 0}`;
}

/** Parses "global:local1:local2", each 0..4294967295. */
export function parseLargeCommunity(text: string): LargeCommunity {
  const parts = text.trim().split(':');
  if (parts.length !== 3) throw new ParseError(text, 'large community (expected "global:local1:local2")');
  return {
    global: decimal(text, parts[0], 0xffffffff, 'large community global administrator'),
    local1: decimal(text, parts[1], 0xffffffff, 'large community local data 1'),
    local2: decimal(text, parts[2], 0xffffffff, 'large community local data 2'),
  };
}

/** RFC 4360 / RFC 5668 subtypes with names: 2 route target, 3 route origin. */
const SUBTYPE_NAMES: Record<number, string> = { 2: 'rt', 3: 'soo' };
const NAME_SUBTYPES: Record<string, number> = { rt: 2, soo: 3 };

/**
 * "rt:65000:100" (two-octet AS specific, type 0x00), "rt:192.0.2.1:100"
 * (IPv4 specific, 0x01), "rt:4200000000:100" (four-octet AS specific, 0x02);
 * anything else as "0x" and 16 hex digits.
 */
export function formatExtendedCommunity(value: bigint): string {
  const v = BigInt.asUintN(64, value);
  const hi = Number(v >> 32n);
  const lo = Number(v & 0xffffffffn);
  const type = hi >>> 24;
  const sub = (hi >>> 16) & 0xff;
  if (sub === LINK_BANDWIDTH_SUBTYPE && (type === 0x40 || type === 0x00)) {
    const bw = float32(lo);
    // NaN, infinities, negatives and -0 have no decimal form that reads back: hex.
    if (Number.isFinite(bw) && bw >= 0 && !Object.is(bw, -0)) return `${type === 0x40 ? 'lb' : 'lb-transitive'}:${hi & 0xffff}:${bw}`;
  }
  const name = SUBTYPE_NAMES[sub];
  if (name !== undefined) {
    if (type === 0x00) return `${name}:${hi & 0xffff}:${lo >>> 0}`;
    if (type === 0x01) return `${name}:${formatV4((((hi & 0xffff) << 16) | (lo >>> 16)) >>> 0)}:${lo & 0xffff}`;
    const as4 = (((hi & 0xffff) << 16) | (lo >>> 16)) >>> 0;
    // A four-octet-AS form holding a 2-byte AS would read back as type 0x00: leave it in hex.
    if (type === 0x02 && as4 > 0xffff) return `${name}:${as4}:${lo & 0xffff}`;
  }
  return `0x${v.toString(16).padStart(16, '0')}`;
}

/** Inverse of formatExtendedCommunity. A 2-byte global AS picks type 0x00 (its 32-bit local value allowed); larger picks 0x02. */
export function parseExtendedCommunity(text: string): bigint {
  const t = text.trim().toLowerCase();
  if (/^0x[0-9a-f]{1,16}$/.test(t)) return BigInt(t);
  const parts = t.split(':');
  if (parts.length === 3 && (parts[0] === 'lb' || parts[0] === 'lb-transitive')) {
    return linkBandwidth(decimal(text, parts[1], 0xffff, 'link bandwidth AS'), bandwidthValue(text, parts[2]), parts[0] === 'lb-transitive');
  }
  if (parts.length !== 3 || NAME_SUBTYPES[parts[0]] === undefined) {
    throw new ParseError(text, 'extended community (expected "rt:ADMIN:VALUE", "soo:ADMIN:VALUE", "lb:AS:BYTES_PER_SECOND" or 0x and up to 16 hex digits)');
  }
  const sub = NAME_SUBTYPES[parts[0]];
  let hi: number;
  let lo: number;
  if (parts[1].includes('.')) {
    const ip = parseV4(parts[1], 'extended community IPv4 administrator');
    const local = decimal(text, parts[2], 0xffff, 'extended community local value');
    hi = (0x01 << 24) | (sub << 16) | (ip >>> 16);
    lo = ((ip & 0xffff) << 16) | local;
  } else {
    const admin = decimal(text, parts[1], 0xffffffff, 'extended community AS');
    if (admin <= 0xffff) {
      hi = (sub << 16) | admin;
      lo = decimal(text, parts[2], 0xffffffff, 'extended community local value');
    } else {
      const local = decimal(text, parts[2], 0xffff, 'extended community local value (four-octet AS form)');
      hi = (0x02 << 24) | (sub << 16) | (admin >>> 16);
      lo = ((admin & 0xffff) << 16) | local;
    }
  }
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

// ---------------------------------------------------------------- link bandwidth

/** draft-ietf-idr-link-bandwidth (RFC 10005): subtype 0x04 of the two-octet-AS types. */
const LINK_BANDWIDTH_SUBTYPE = 0x04;

const f32 = new DataView(new ArrayBuffer(4));

function float32(bits: number): number {
  f32.setUint32(0, bits >>> 0);
  return f32.getFloat32(0);
}

function float32Bits(n: number): number {
  f32.setFloat32(0, n);
  return f32.getUint32(0);
}

/** A bandwidth in bytes per second: a non-negative decimal ("125000", "1.5e9") that fits an IEEE single (rounded to the nearest one). */
function bandwidthValue(text: string, part: string): number {
  if (!/^[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/.test(part))
    throw new ParseError(text, `link bandwidth (${JSON.stringify(part)} is not a non-negative decimal number of bytes per second)`);
  const n = Number(part);
  if (!Number.isFinite(Math.fround(n))) throw new ParseError(text, `link bandwidth (${part} bytes per second does not fit an IEEE single-precision float)`);
  return n;
}

/**
 * The link bandwidth extended community: type 0x40 (non-transitive, the
 * draft's) or with `transitive` 0x00 (what FRR's `set extcommunity bandwidth`
 * sends unless told `non-transitive`), the AS, and the bandwidth in bytes per
 * second as an IEEE single-precision float.
 */
export function linkBandwidth(asn: number, bytesPerSecond: number, transitive = false): bigint {
  if (!Number.isInteger(asn) || asn < 0 || asn > 0xffff) throw new RangeError(`link bandwidth AS must be 0..65535 (a four-octet AS goes as 23456), got ${asn}`);
  if (!(bytesPerSecond >= 0) || !Number.isFinite(Math.fround(bytesPerSecond)))
    throw new RangeError(`link bandwidth must be a finite, non-negative number of bytes per second, got ${bytesPerSecond}`);
  const hi = ((transitive ? 0x00 : 0x40) << 24) | (LINK_BANDWIDTH_SUBTYPE << 16) | asn;
  return (BigInt(hi >>> 0) << 32n) | BigInt(float32Bits(bytesPerSecond) >>> 0);
}

/** The parts of a link bandwidth community, or undefined for any other extended community. */
export function linkBandwidthOf(value: bigint): { asn: number; bytesPerSecond: number; transitive: boolean } | undefined {
  const v = BigInt.asUintN(64, value);
  const hi = Number(v >> 32n);
  const type = hi >>> 24;
  if (((hi >>> 16) & 0xff) !== LINK_BANDWIDTH_SUBTYPE || (type !== 0x40 && type !== 0x00)) return undefined;
  return { asn: hi & 0xffff, bytesPerSecond: float32(Number(v & 0xffffffffn)), transitive: type === 0x00 };
}

/** RFC 4360 §2: the T bit (0x40 of the type octet) set means the community must not leave the AS. */
export function isNonTransitive(value: bigint): boolean {
  return ((BigInt.asUintN(64, value) >> 56n) & 0x40n) !== 0n;
}
