import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address, Prefix } from '../../src/net/index.js';
import { PrefixTrie } from '../../src/net/trie.js';

// Prefixes are drawn from a few base addresses truncated to random lengths,
// so that random sets are full of nesting, siblings and duplicates.
const V4_BASES = [0x0a000000, 0x0a010000, 0x0a010100, 0x0a0101ff, 0xc0a80000, 0xc0a80180, 0x0a800000, 0xffffffff, 0, 0x7f000001];
const V6_BASES: [number, number, number, number][] = [
  [0x20010db8, 0, 0, 1],
  [0x20010db8, 0x00010000, 0, 0],
  [0x20010db8, 0x00010000, 0x80000000, 0],
  [0x20010db8, 0x00018000, 0, 0xffff],
  [0xfe800000, 0, 0, 1],
  [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
  [0, 0, 0, 0],
];

const v4Prefix = fc
  .tuple(fc.oneof(fc.constantFrom(...V4_BASES), fc.integer({ min: 0, max: 0xffffffff })), fc.integer({ min: 0, max: 32 }))
  .map(([v, len]) => Prefix.containing(Address.v4(v), len));
const v6Prefix = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(...V6_BASES),
      fc.tuple(
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
        fc.integer({ min: 0, max: 0xffffffff }),
      ),
    ),
    fc.integer({ min: 0, max: 128 }),
  )
  .map(([w, len]) => Prefix.containing(Address.v6(w[0], w[1], w[2], w[3]), len));
const anyPrefix = fc.oneof(v4Prefix, v6Prefix);
const v4Address = fc.oneof(fc.constantFrom(...V4_BASES), fc.integer({ min: 0, max: 0xffffffff })).map((v) => Address.v4(v));
const v6Address = fc
  .oneof(
    fc.constantFrom(...V6_BASES),
    fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 0xffffffff }), fc.constant(0), fc.constant(1)),
  )
  .map((w) => Address.v6(w[0], w[1], w[2], w[3]));

type Op = { kind: 'set'; prefix: Prefix; value: number } | { kind: 'delete'; prefix: Prefix } | { kind: 'clear'; prefix: Prefix };
const op = (p: fc.Arbitrary<Prefix>): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('set' as const), prefix: p, value: fc.integer() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), prefix: p }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('clear' as const), prefix: p }).filter((o) => o.prefix.length % 16 === 0) },
  );

/** The oracle: a plain list of [prefix, value] pairs. */
class NaiveMap {
  items: { prefix: Prefix; value: number }[] = [];
  set(p: Prefix, v: number) {
    const i = this.items.findIndex((e) => e.prefix.equals(p));
    if (i >= 0) this.items[i].value = v;
    else this.items.push({ prefix: p, value: v });
  }
  clear() {
    this.items = [];
  }
  delete(p: Prefix): boolean {
    const i = this.items.findIndex((e) => e.prefix.equals(p));
    if (i < 0) return false;
    this.items.splice(i, 1);
    return true;
  }
  get(p: Prefix) {
    return this.items.find((e) => e.prefix.equals(p))?.value;
  }
  sorted() {
    return [...this.items].sort((a, b) => a.prefix.compare(b.prefix));
  }
  covering(t: Prefix | Address) {
    return this.sorted()
      .filter((e) => e.prefix.contains(t))
      .sort((a, b) => a.prefix.length - b.prefix.length);
  }
  covered(t: Prefix) {
    return this.sorted().filter((e) => t.contains(e.prefix));
  }
  lookup(t: Prefix | Address) {
    const c = this.covering(t);
    return c[c.length - 1];
  }
}

const show = (es: Iterable<{ prefix: Prefix; value: number }>) => [...es].map((e) => `${e.prefix.toString()}=${e.value}`);

function checkAgainstOracle(ops: Op[], queries: Prefix[], addresses: Address[]) {
  const trie = new PrefixTrie<number>();
  const naive = new NaiveMap();
  // Build the IPv4 index up front half of the time, so it is also checked while kept up to date.
  if (ops.length % 2 === 0) trie.lookupV4(0);
  for (const o of ops) {
    if (o.kind === 'set') {
      trie.set(o.prefix, o.value);
      naive.set(o.prefix, o.value);
    } else if (o.kind === 'clear') {
      trie.clear();
      naive.clear();
    } else {
      expect(trie.delete(o.prefix)).toBe(naive.delete(o.prefix));
    }
    expect(trie.size).toBe(naive.items.length);
    for (const a of [o.prefix.network, ...addresses.slice(0, 3)]) {
      const want = naive.lookup(a);
      const got = a.family === 4 ? trie.lookupV4(a.w0) : trie.lookup(a);
      expect(got && `${got.prefix}=${got.value}`).toBe(want && `${want.prefix}=${want.value}`);
    }
  }
  expect(show(trie)).toEqual(show(naive.sorted()));
  const probes = [...queries, ...ops.map((o) => o.prefix)];
  for (const q of probes) {
    expect(trie.get(q)).toBe(naive.get(q));
    const entry = trie.getEntry(q);
    expect(entry && `${entry.prefix}=${entry.value}`).toBe(naive.get(q) === undefined ? undefined : `${q}=${naive.get(q)}`);
    expect(trie.has(q)).toBe(naive.get(q) !== undefined);
    expect(show(trie.covering(q))).toEqual(show(naive.covering(q)));
    expect(show(trie.covered(q))).toEqual(show(naive.covered(q)));
    const lpm = trie.lookup(q);
    const want = naive.lookup(q);
    expect(lpm && `${lpm.prefix}=${lpm.value}`).toBe(want && `${want.prefix}=${want.value}`);
    const pred = (v: number, arg: number) => (v & 3) === arg;
    expect(trie.someCovering(q, pred, 1)).toBe(naive.covering(q).some((e) => pred(e.value, 1)));
  }
  const v4s = addresses.filter((a) => a.family === 4);
  const many = trie.lookupV4Many(v4s.map((a) => a.w0));
  expect(many.map((e) => e && `${e.prefix}=${e.value}`)).toEqual(v4s.map((a) => naive.lookup(a)).map((e) => e && `${e.prefix}=${e.value}`));
  for (const a of addresses) {
    const want = naive.lookup(a);
    const got = trie.lookup(a);
    expect(got && `${got.prefix}=${got.value}`).toBe(want && `${want.prefix}=${want.value}`);
    expect(show(trie.covering(a))).toEqual(show(naive.covering(a)));
    if (a.family === 4) {
      const g4 = trie.lookupV4(a.w0);
      expect(g4 && `${g4.prefix}=${g4.value}`).toBe(want && `${want.prefix}=${want.value}`);
    }
  }
}

describe('PrefixTrie', () => {
  it('stores, finds and removes prefixes', () => {
    const t = new PrefixTrie<string>();
    t.set(Prefix.parse('10.0.0.0/8'), 'a').set(Prefix.parse('10.1.0.0/16'), 'b').set(Prefix.parse('0.0.0.0/0'), 'default');
    t.set(Prefix.parse('2001:db8::/32'), 'v6');
    expect(t.size).toBe(4);
    expect(t.lookup(Address.parse('10.1.2.3'))?.value).toBe('b');
    expect(t.lookupV4(Address.parse('10.2.0.1').w0)?.prefix.toString()).toBe('10.0.0.0/8');
    expect(t.lookupV4(Address.parse('11.0.0.1').w0)?.value).toBe('default');
    expect(t.lookup(Address.parse('2001:db8::1'))?.value).toBe('v6');
    expect(t.lookup(Address.parse('2001:db9::1'))).toBeUndefined();
    expect(t.delete(Prefix.parse('10.0.0.0/8'))).toBe(true);
    expect(t.delete(Prefix.parse('10.0.0.0/8'))).toBe(false);
    expect(t.lookup(Address.parse('10.2.0.1'))?.value).toBe('default');
    expect([...t.keys()].map(String)).toEqual(['0.0.0.0/0', '10.1.0.0/16', '2001:db8::/32']);
  });

  it('matches a naive list for random IPv4 operation sequences', () => {
    fc.assert(
      fc.property(fc.array(op(v4Prefix), { maxLength: 60 }), fc.array(v4Prefix, { maxLength: 15 }), fc.array(v4Address, { maxLength: 15 }), checkAgainstOracle),
      { numRuns: 300 },
    );
  });

  it('matches a naive list for random IPv6 operation sequences', () => {
    fc.assert(
      fc.property(fc.array(op(v6Prefix), { maxLength: 60 }), fc.array(v6Prefix, { maxLength: 15 }), fc.array(v6Address, { maxLength: 15 }), checkAgainstOracle),
      { numRuns: 300 },
    );
  });

  it('matches a naive list once big enough to use the IPv4 index and IPv6 jump table', () => {
    let biggest = 0;
    fc.assert(
      fc.property(fc.array(op(anyPrefix), { minLength: 150, maxLength: 250 }), fc.array(fc.oneof(v4Address, v6Address), { maxLength: 20 }), (ops, addrs) => {
        const trie = new PrefixTrie<number>();
        const naive = new NaiveMap();
        ops.forEach((o, i) => {
          if (o.kind === 'set') {
            trie.set(o.prefix, o.value);
            naive.set(o.prefix, o.value);
          } else if (o.kind === 'delete') expect(trie.delete(o.prefix)).toBe(naive.delete(o.prefix));
          biggest = Math.max(biggest, trie.size);
          // Probe after every few changes, so cached jump entries and the index must follow them.
          if (i % 7 === 0)
            for (const a of [...addrs, o.prefix.network]) {
              const want = naive.lookup(a);
              const got = trie.lookup(a);
              expect(got && `${got.prefix}=${got.value}`).toBe(want && `${want.prefix}=${want.value}`);
            }
        });
      }),
      { numRuns: 40 },
    );
    expect(biggest).toBeGreaterThanOrEqual(64);
  });

  it('keeps the two families apart in a mixed trie', () => {
    fc.assert(
      fc.property(
        fc.array(op(anyPrefix), { maxLength: 60 }),
        fc.array(anyPrefix, { maxLength: 15 }),
        fc.array(fc.oneof(v4Address, v6Address), { maxLength: 15 }),
        checkAgainstOracle,
      ),
      { numRuns: 200 },
    );
  });
});
