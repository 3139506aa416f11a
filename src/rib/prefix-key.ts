/**
 * RIB table keys: the prefix-key form (`PrefixKey`, `keyOf`,
 * `prefixFromKey`, `familyOfKey`) is defined in src/net/prefix-key.ts, where
 * the codec decodes NLRI into it too; re-exported here for the routing layer.
 * Tables keep keys rather than Prefix objects per route.
 */
export { familyOfKey, keyOf, prefixFromKey, type PrefixKey } from '../net/index.js';
import type { PrefixKey } from '../net/index.js';

const TWO32 = 4294967296;

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
