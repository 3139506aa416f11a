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
 */
export function sortKeys(keys: PrefixKey[]): PrefixKey[] {
  let strings: string[] | undefined;
  const nums = new Float64Array(keys.length);
  let n = 0;
  for (const k of keys) {
    // Numeric IPv6 keys (≥ 2^50) sort after every IPv4 key, string IPv6 keys after them.
    if (typeof k === 'number') nums[n++] = k < 0 ? k + TWO32 : k;
    else (strings ??= []).push(k);
  }
  const sorted = nums.subarray(0, n).sort();
  const out: PrefixKey[] = new Array(keys.length);
  for (let i = 0; i < n; i++) {
    const v = sorted[i];
    out[i] = v >= 2147483648 && v < TWO32 ? v - TWO32 : v;
  }
  if (strings !== undefined) {
    strings.sort();
    for (let i = 0; i < strings.length; i++) out[n + i] = strings[i];
  }
  return out;
}
