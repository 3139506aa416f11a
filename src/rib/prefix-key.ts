/** Rebuilds a Prefix from its `key`, so tables need not keep Prefix objects per route. */
import { Prefix } from '../net/prefix.js';

export type PrefixKey = number | string;

export function prefixFromKey(key: PrefixKey): Prefix {
  if (typeof key === 'number') return Prefix.v4(Math.floor(key / 64), key % 64);
  const slash = key.lastIndexOf('/');
  const w = key.slice(0, slash).split('.');
  if (slash < 0 || w.length !== 4) throw new Error(`not a prefix key: ${JSON.stringify(key)}`);
  return Prefix.v6(parseInt(w[0], 36), parseInt(w[1], 36), parseInt(w[2], 36), parseInt(w[3], 36), Number(key.slice(slash + 1)));
}

export function familyOfKey(key: PrefixKey): 4 | 6 {
  return typeof key === 'number' ? 4 : 6;
}
