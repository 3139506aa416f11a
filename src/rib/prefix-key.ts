/**
 * RIB table keys. IPv4 prefixes up to /31 become a small integer (the
 * address with a marker bit set just below the prefix), which V8 keeps
 * unboxed and hashes fast; /32 becomes 2^32 + address. IPv6 prefixes up
 * to /48 (nearly the whole IPv6 table) become 2^50 + a 49-bit integer (the
 * top 48 address bits with the same marker-bit trick): a 12-byte heap
 * number instead of a ~50-byte string. Longer IPv6 prefixes use the
 * Prefix's string key. Tables keep keys rather than Prefix objects per route.
 */
import { Prefix } from '../net/index.js';

export type PrefixKey = number | string;

const TWO32 = 4294967296;
const TWO16 = 65536;
const TWO24 = 16777216;
/** IPv6 numeric keys start here: above every IPv4 key, and base + 2^49 is still an exact double. */
const V6_BASE = 2 ** 50;

export function keyOf(p: Prefix): PrefixKey {
  if (p.family === 6) {
    if (p.length > 48) return p.key;
    // Top 48 bits (bits past the length are zero in a Prefix), doubled, plus the marker 2^(48 - length).
    const top = p.w0 * TWO16 + (p.w1 >>> 16);
    return V6_BASE + top * 2 + 2 ** (48 - p.length);
  }
  if (p.length === 32) return TWO32 + p.w0;
  return p.w0 | (1 << (31 - p.length)) | 0;
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

/**
 * Keys in a canonical order (IPv4 by address for one length, /32 after the
 * rest, then IPv6 by key), so output does not depend on hash-table layout.
 * A sorted copy; `sortKeysInPlace` sorts an array the caller owns.
 */
export function sortKeys(keys: readonly PrefixKey[]): PrefixKey[] {
  return sortKeysInPlace(keys.slice());
}

/** `sortKeys` without the copy: `keys` itself, sorted. */
export function sortKeysInPlace(keys: PrefixKey[]): PrefixKey[] {
  // A propagating node plans thousands of buckets of a few keys each per flush: by insertion, without a typed array.
  if (keys.length <= SMALL_SORT) return insertionSort(keys);
  let strings: string[] | undefined;
  const nums = new Float64Array(keys.length);
  let n = 0;
  for (const k of keys) {
    // Numeric IPv6 keys (≥ 2^50) sort after every IPv4 key, string IPv6 keys after them.
    if (typeof k === 'number') nums[n++] = k < 0 ? k + TWO32 : k;
    else (strings ??= []).push(k);
  }
  const sorted = nums.subarray(0, n).sort();
  for (let i = 0; i < n; i++) {
    const v = sorted[i];
    keys[i] = v >= 2147483648 && v < TWO32 ? v - TWO32 : v;
  }
  if (strings !== undefined) {
    strings.sort();
    for (let i = 0; i < strings.length; i++) keys[n + i] = strings[i];
  }
  return keys;
}

/** Up to this many keys, `sortKeys` sorts by insertion. */
const SMALL_SORT = 16;

/** The canonical order of `sortKeys` on a few keys, in place. */
function insertionSort(a: PrefixKey[]): PrefixKey[] {
  for (let i = 1; i < a.length; i++) {
    const k = a[i];
    let j = i - 1;
    while (j >= 0 && keyAfter(a[j], k)) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = k;
  }
  return a;
}

/** Whether `a` sorts after `b`: numbers by unsigned value (IPv4 addresses ≥ 128.0.0.0 are negative keys), strings after numbers. */
function keyAfter(a: PrefixKey, b: PrefixKey): boolean {
  if (typeof a === 'number') {
    if (typeof b !== 'number') return false;
    return (a < 0 ? a + TWO32 : a) > (b < 0 ? b + TWO32 : b);
  }
  return typeof b === 'number' || a > b;
}
