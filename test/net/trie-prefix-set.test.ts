import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address, ParseError, Prefix } from '../../src/net/index.js';
import { formatPrefixRange, parsePrefixRange, PrefixSet, type PrefixRange } from '../../src/net/prefix-set.js';

const p = (s: string) => Prefix.parse(s);

describe('parsePrefixRange', () => {
  it.each([
    ['10.0.0.0/8', 8, 8],
    ['10.0.0.0/8{16,24}', 16, 24],
    ['10.0.0.0/8{ 16 , 24 }', 16, 24],
    ['10.0.0.0/8+', 8, 32],
    ['10.0.0.0/8 le 24', 8, 24],
    ['10.0.0.0/8 ge 16', 16, 32],
    ['10.0.0.0/8 ge 16 le 24', 16, 24],
    ['10.0.0.0/8 16..24', 16, 24],
    ['10.0.0.0/8 masklength 16..24', 16, 24],
    ['2001:db8::/32 le 48', 32, 48],
    ['2001:db8::/32 ge 64', 64, 128],
  ])('reads %j as [%d, %d]', (text, ge, le) => {
    const r = parsePrefixRange(text);
    expect([r.prefix.toString(), r.ge, r.le]).toEqual([text.split(/[ {+]/)[0], ge, le]);
  });

  it.each([
    ['', 'empty'],
    ['10.0.0.0', 'must start with a prefix'],
    ['10.0.0.1/8', 'host bits set'],
    ['10.0.0.0/8{4,24}', 'shorter than the prefix length 8'],
    ['10.0.0.0/8{24,16}', 'above maximum length 16'],
    ['10.0.0.0/8 le 33', 'above 32'],
    ['10.0.0.0/8 between 1 and 2', 'cannot read'],
    ['10.0.0.0/8 ge', 'cannot read'],
  ])('rejects %j saying %s', (text, why) => {
    expect(() => parsePrefixRange(text)).toThrow(ParseError);
    expect(() => parsePrefixRange(text)).toThrow(why);
  });

  it('formats back to a form it reads', () => {
    for (const t of ['10.0.0.0/8', '10.0.0.0/8{16,24}', '2001:db8::/32{40,64}']) {
      const r = parsePrefixRange(t);
      const back = parsePrefixRange(formatPrefixRange(r));
      expect([back.prefix.equals(r.prefix), back.ge, back.le]).toEqual([true, r.ge, r.le]);
    }
  });
});

describe('PrefixSet', () => {
  it('matches by containment and length range', () => {
    const s = PrefixSet.parse(['10.0.0.0/8{16,24}', '192.0.2.0/24', '2001:db8::/32 le 48']);
    expect(s.matches(p('10.1.0.0/16'))).toBe(true);
    expect(s.matches(p('10.1.2.0/24'))).toBe(true);
    expect(s.matches(p('10.1.2.0/25'))).toBe(false);
    expect(s.matches(p('10.0.0.0/8'))).toBe(false);
    expect(s.matches(p('11.1.0.0/16'))).toBe(false);
    expect(s.matches(p('192.0.2.0/24'))).toBe(true);
    expect(s.matches(p('192.0.2.0/25'))).toBe(false);
    expect(s.matches(p('2001:db8:1::/48'))).toBe(true);
    expect(s.matches(p('2001:db8:1::/64'))).toBe(false);
    expect(s.size).toBe(3);
  });

  const v4 = fc
    .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }))
    .map(([v, l]) => Prefix.containing(Address.v4(v & 0xff00ff00), l));
  const v6 = fc
    .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 128 }))
    .map(([v, l]) => Prefix.containing(Address.v6(0x20010db8, v & 0xf000000f, 0, v), l));
  const range = fc
    .oneof(v4, v6)
    .chain((pre) =>
      fc
        .tuple(fc.integer({ min: pre.length, max: pre.maxLength }), fc.integer({ min: pre.length, max: pre.maxLength }))
        .map(([a, b]): PrefixRange => ({ prefix: pre, ge: Math.min(a, b), le: Math.max(a, b) })),
    );

  it('agrees with a linear scan over its ranges', () => {
    fc.assert(
      fc.property(fc.array(range, { maxLength: 100 }), fc.array(fc.oneof(v4, v6), { maxLength: 30 }), (ranges, probes) => {
        const s = new PrefixSet(ranges);
        for (const q of [...probes, ...ranges.map((r) => r.prefix)]) {
          const want = ranges.some((r) => r.prefix.contains(q) && q.length >= r.ge && q.length <= r.le);
          expect(s.matches(q)).toBe(want);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with a linear scan for large sets (flattened index), also after more adds', () => {
    fc.assert(
      fc.property(
        fc.array(range, { minLength: 64, maxLength: 150 }),
        fc.array(range, { maxLength: 20 }),
        fc.array(fc.oneof(v4, v6), { maxLength: 40 }),
        (ranges, more, probes) => {
          const s = new PrefixSet(ranges);
          const check = (all: PrefixRange[]) => {
            for (const q of [...probes, ...all.map((r) => r.prefix)]) {
              const want = all.some((r) => r.prefix.contains(q) && q.length >= r.ge && q.length <= r.le);
              expect(s.matches(q)).toBe(want);
            }
          };
          check(ranges);
          for (const r of more) s.add(r);
          check([...ranges, ...more]);
        },
      ),
      { numRuns: 100 },
    );
  });
});
