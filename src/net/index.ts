export { Address, type Family, type FamilyName } from './address.js';
export { Prefix, wordMask } from './prefix.js';
export { ParseError } from './errors.js';
export { PrefixTrie, type TrieEntry } from './trie.js';
export { PrefixSet, parsePrefixRange, formatPrefixRange, type PrefixRange } from './prefix-set.js';
export { formatV4, parseV4 } from './address.js';
export { familyOfKey, keyOf, prefixFromKey, v4Key, v6Key, type PrefixKey } from './prefix-key.js';
