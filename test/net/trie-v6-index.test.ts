import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address, Prefix } from '../../src/net/index.js';
import { PrefixTrie } from '../../src/net/trie.js';

/** Longest stored prefix containing `a`, by scanning a list. */
function oracle(list: Map<string, [Prefix, number]>, a: Address): number | undefined {
  let best: [Prefix, number] | undefined;
  for (const e of list.values()) if (e[0].contains(Prefix.host(a)) && (best === undefined || e[0].length > best[0].length)) best = e;
  return best?.[1];
}

// Few /16s and /32s so that blocks hold many prefixes of every length, nested and glued exactly at /32.
const word0 = fc.constantFrom(0x20010db8, 0x20010db9, 0x2001fdb8, 0x2a000000, 0x20010db8 ^ 0x80, 0xffffffff, 0);
const v6Addr = fc
  .tuple(word0, fc.constantFrom(0, 0xffffffff, 0x80000000, 0x00010000), fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([a, b, c, d]) => Address.v6(a, b, c, d));
const v6Pre = fc
  .tuple(v6Addr, fc.oneof(fc.integer({ min: 0, max: 128 }), fc.constantFrom(16, 31, 32, 33, 48, 64, 65)))
  .map(([a, l]) => Prefix.containing(a, l));

describe('PrefixTrie IPv6 lookup index', () => {
  it('agrees with a list scan on big tables, before and after changes and rebuilds', () => {
    fc.assert(
      fc.property(
        fc.array(v6Pre, { minLength: 80, maxLength: 300 }),
        fc.array(v6Addr, { minLength: 200, maxLength: 400 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        (prefixes, addrs, dels) => {
          const trie = new PrefixTrie<number>();
          const list = new Map<string, [Prefix, number]>();
          prefixes.forEach((p, i) => {
            trie.set(p, i);
            list.set(p.toString(), [p, i]);
          });
          // Enough lookups to build the index (a quarter of the entries), then check every answer.
          for (let round = 0; round < 2; round++) {
            for (const a of addrs) expect(trie.lookup(a)?.value).toBe(oracle(list, a));
            for (const a of addrs) expect(trie.lookup(a)?.value).toBe(oracle(list, a));
            // Change the table: deletes and new entries make the index stale.
            for (const d of dels) {
              const p = prefixes[d % prefixes.length];
              expect(trie.delete(p)).toBe(list.delete(p.toString()));
            }
            const extra = Prefix.containing(addrs[0], 40 + round);
            trie.set(extra, 1000 + round);
            list.set(extra.toString(), [extra, 1000 + round]);
          }
        },
      ),
      { numRuns: 25 },
    );
    // CPU-bound: several times the default on a loaded machine (scripts/stress-unit.sh).
  }, 120_000);
});
