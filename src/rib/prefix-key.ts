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
  // IPv4 keys up to /31 (nearly all) by a radix sort of their unsigned value: V8's typed-array sort took ~75 ns a key.
  const small = new Uint32Array(keys.length);
  let n = 0;
  let wide: number[] | undefined;
  let strings: string[] | undefined;
  for (const k of keys) {
    if (typeof k !== 'number') (strings ??= []).push(k);
    else if (k < TWO31 && k >= -TWO31) small[n++] = k;
    // /32s (2^32 + address) and numeric IPv6 keys (≥ 2^50) sort after them, string IPv6 keys last.
    else (wide ??= []).push(k);
  }
  const sorted = radixSort(small.subarray(0, n));
  for (let i = 0; i < n; i++) keys[i] = sorted[i] | 0;
  let at = n;
  if (wide !== undefined) {
    const w = Float64Array.from(wide).sort();
    for (let i = 0; i < w.length; i++) keys[at++] = w[i];
  }
  if (strings !== undefined) {
    strings.sort();
    for (let i = 0; i < strings.length; i++) keys[at++] = strings[i];
  }
  return keys;
}

const TWO31 = 2147483648;

/** Unsigned 32-bit values in ascending order: least significant byte first, four counting passes (a pass whose byte is the same everywhere is skipped). */
function radixSort(a: Uint32Array): Uint32Array {
  let src: Uint32Array = a;
  let dst: Uint32Array = new Uint32Array(a.length);
  const count = new Int32Array(256);
  for (let shift = 0; shift < 32; shift += 8) {
    count.fill(0);
    for (let i = 0; i < src.length; i++) count[(src[i] >>> shift) & 255]++;
    if (count[(src[0] >>> shift) & 255] === src.length) continue;
    let sum = 0;
    for (let b = 0; b < 256; b++) {
      const c = count[b];
      count[b] = sum;
      sum += c;
    }
    for (let i = 0; i < src.length; i++) {
      const v = src[i];
      dst[count[(v >>> shift) & 255]++] = v;
    }
    const t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/** Up to this many keys, `sortKeys` sorts by insertion (measured cheaper than the radix sort below about 100). */
const SMALL_SORT = 64;

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
