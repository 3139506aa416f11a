/**
 * Prefixes as table keys (`PrefixKey`), the form the RIB stores and the
 * codec decodes NLRI into, so a received route needs no Prefix object. IPv4
 * prefixes up to /31 become a small integer (the address with a marker bit
 * set just below the prefix), which V8 keeps unboxed and hashes fast; /32
 * becomes 2^32 + address. IPv6 prefixes up to /48 (nearly the whole IPv6
 * table) become 2^50 + a 49-bit integer (the top 48 address bits with the
 * same marker-bit trick): a 12-byte heap number instead of a ~50-byte
 * string. Longer IPv6 prefixes use the Prefix's string key.
 */
import { Prefix } from './prefix.js';

export type PrefixKey = number | string;

const TWO32 = 4294967296;
const TWO16 = 65536;
const TWO24 = 16777216;
/** IPv6 numeric keys start here: above every IPv4 key, and base + 2^49 is still an exact double. */
const V6_BASE = 2 ** 50;
/** POW2[n] = 2^n for the IPv6 marker bit (a table read, not a power, per key). */
const POW2: Float64Array = Float64Array.from({ length: 49 }, (_, n) => 2 ** n);

/** The key of the IPv4 prefix `w0/length` (host bits of `w0` already zero, length 0..32). */
export function v4Key(w0: number, length: number): number {
  if (length === 32) return TWO32 + w0;
  return w0 | (1 << (31 - length)) | 0;
}

/**
 * The key of an IPv6 prefix up to /48 from its first two address words
 * (host bits already zero, length 0..48); longer ones have `Prefix.key`.
 */
export function v6Key(w0: number, w1: number, length: number): number {
  // Top 48 bits, doubled, plus the marker 2^(48 - length).
  const top = w0 * TWO16 + (w1 >>> 16);
  return V6_BASE + top * 2 + POW2[48 - length];
}

export function keyOf(p: Prefix): PrefixKey {
  if (p.family === 6) return p.length > 48 ? p.key : v6Key(p.w0, p.w1, p.length);
  return v4Key(p.w0, p.length);
}

export function prefixFromKey(key: PrefixKey): Prefix {
  if (typeof key === 'number') {
    if (key >= V6_BASE) return v6FromNumber(key - V6_BASE);
    if (key >= TWO32) return Prefix.v4(key - TWO32, 32);
    const u = key >>> 0;
    const marker = (u & -u) >>> 0;
    const length = Math.clz32(marker);
    return Prefix.v4((u ^ marker) >>> 0, length);
  }
  const slash = key.lastIndexOf('/');
  const w = key.slice(0, slash).split('.');
  if (slash < 0 || w.length !== 4) throw new Error(`not a prefix key: ${JSON.stringify(key)}`);
  return Prefix.v6(parseInt(w[0], 36), parseInt(w[1], 36), parseInt(w[2], 36), parseInt(w[3], 36), Number(key.slice(slash + 1)));
}

export function familyOfKey(key: PrefixKey): 4 | 6 {
  return typeof key === 'number' && key < V6_BASE ? 4 : 6;
}

function v6FromNumber(v: number): Prefix {
  // The marker is v's lowest set bit; v < 2^49, so look in 24-bit halves.
  const lo = v % TWO24;
  const tz = lo !== 0 ? 31 - Math.clz32(lo & -lo) : 24 + 31 - Math.clz32(((v - lo) / TWO24) & -((v - lo) / TWO24));
  const top = (v - 2 ** tz) / 2;
  const w0 = Math.floor(top / TWO16);
  return Prefix.v6(w0, ((top - w0 * TWO16) << 16) >>> 0, 0, 0, 48 - tz);
}
