/**
 * RIB table keys. IPv4 prefixes up to /31 become a small integer (the
 * address with a marker bit set just below the prefix), which V8 keeps
 * unboxed and hashes fast; /32 becomes 2^32 + address. IPv6 uses the
 * Prefix's string key. Tables keep keys rather than Prefix objects per route.
 */
import { Prefix } from '../net/prefix.js';

export type PrefixKey = number | string;

const TWO32 = 4294967296;

export function keyOf(p: Prefix): PrefixKey {
  if (p.family === 6) return p.key;
  if (p.length === 32) return TWO32 + p.w0;
  return (p.w0 | (1 << (31 - p.length))) | 0;
}

export function prefixFromKey(key: PrefixKey): Prefix {
  if (typeof key === 'number') {
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
  return typeof key === 'number' ? 4 : 6;
}
