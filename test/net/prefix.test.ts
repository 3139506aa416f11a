import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address, ParseError, Prefix } from '../../src/net/index.js';

describe('Address', () => {
  it('parses and formats IPv4 and IPv6', () => {
    expect(Address.parse('192.0.2.1').toString()).toBe('192.0.2.1');
    expect(Address.parse('2001:DB8:0:0:0:0:0:1').toString()).toBe('2001:db8::1');
    expect(Address.parse('2001:db8:0:1:0:0:0:1').toString()).toBe('2001:db8:0:1::1');
    expect(Address.parse('::').toString()).toBe('::');
    expect(Address.parse('fe80::1').isLinkLocal).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['192.0.2', 'four dotted'],
    ['192.0.2.256', 'above 255'],
    ['192.0.2.01', 'not a decimal'],
    ['2001:db8::zz', 'IPv6'],
    ['fe80::1%eth0', 'zone'],
  ])('rejects %j, saying %s', (text, why) => {
    expect(() => Address.parse(text)).toThrow(ParseError);
    expect(() => Address.parse(text)).toThrow(why);
  });

  it('round-trips any IPv4 and IPv6 value through text and bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (v) => {
        const a = Address.v4(v);
        expect(Address.parse(a.toString()).equals(a)).toBe(true);
        expect(Address.fromBytes(4, a.toBytes()).equals(a)).toBe(true);
      }),
    );
    const word = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffffffff }));
    fc.assert(
      fc.property(word, word, word, word, (a, b, c, d) => {
        const x = Address.v6(a, b, c, d);
        expect(Address.parse(x.toString()).equals(x)).toBe(true);
        expect(Address.fromBytes(6, x.toBytes()).equals(x)).toBe(true);
      }),
    );
  });
});

describe('Prefix', () => {
  it('parses valid prefixes', () => {
    expect(Prefix.parse('10.0.0.0/8').toString()).toBe('10.0.0.0/8');
    expect(Prefix.parse('0.0.0.0/0').length).toBe(0);
    expect(Prefix.parse('2001:db8::/32').toString()).toBe('2001:db8::/32');
    expect(Prefix.parse('192.0.2.7', { allowBareAddress: true }).toString()).toBe('192.0.2.7/32');
  });

  it.each([
    ['10.0.0.1/8', 'host bits set; did you mean 10.0.0.0/8'],
    ['10.0.0.0/33', 'above 32'],
    ['2001:db8::/129', 'above 128'],
    ['2001:db8::1/32', 'host bits'],
    ['10.0.0.0', 'missing "/length"'],
    ['10.0.0.0/x', 'not a decimal'],
    ['10.0.0.0/8/8', 'more than one'],
    ['junk', 'prefix'],
  ])('rejects %j, saying %s', (text, why) => {
    expect(() => Prefix.parse(text)).toThrow(why);
  });

  it('contains is consistent with masking', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }), fc.integer({ min: 0, max: 32 }), (v, l1, l2) => {
        const outer = Prefix.containing(Address.v4(v), Math.min(l1, l2));
        const inner = Prefix.containing(Address.v4(v), Math.max(l1, l2));
        expect(outer.contains(inner)).toBe(true);
        expect(inner.contains(outer)).toBe(l1 === l2);
        expect(Prefix.parse(inner.toString()).equals(inner)).toBe(true);
      }),
    );
  });

  it('gives its words back unsigned, whatever the top bit, and compares them as unsigned (property)', () => {
    // The words are stored as signed 32-bit integers; the getters, equals, compare and key must not show it.
    const word = fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(0, 0x7fffffff, 0x80000000, 0xffffffff));
    const v4 = fc.tuple(word, fc.integer({ min: 0, max: 32 })).map(([w, len]) => Prefix.containing(Address.v4(w), len));
    const v6 = fc.tuple(word, word, word, word, fc.integer({ min: 0, max: 128 })).map(([a, b, c, d, len]) => Prefix.containing(Address.v6(a, b, c, d), len));
    const prefix = fc.oneof(v4, v6);
    const words = (p: Prefix) => [p.w0, p.w1, p.w2, p.w3];
    fc.assert(
      fc.property(prefix, prefix, (p, q) => {
        for (const w of words(p)) expect(w >= 0 && w <= 0xffffffff && Number.isInteger(w)).toBe(true);
        const back = p.family === 4 ? Prefix.v4(p.w0, p.length) : Prefix.v6(p.w0, p.w1, p.w2, p.w3, p.length);
        expect(words(back)).toEqual(words(p));
        expect(back.equals(p)).toBe(true);
        expect(back.key).toBe(p.key);
        expect(Prefix.parse(p.toString()).equals(p)).toBe(true);
        // compare: family, then unsigned words, then length (a reference on plain numbers).
        const ref =
          p.family - q.family ||
          words(p)
            .map((w, i) => w - words(q)[i])
            .find((d) => d !== 0) ||
          p.length - q.length;
        expect(Math.sign(p.compare(q))).toBe(Math.sign(ref));
        expect(p.equals(q)).toBe(ref === 0);
        expect(p.equals(q)).toBe(p.toString() === q.toString());
      }),
      { numRuns: 500 },
    );
  });

  it('keys IPv4 prefixes by number and IPv6 by a distinct string', () => {
    expect(typeof Prefix.parse('10.0.0.0/8').key).toBe('number');
    expect(Prefix.parse('10.0.0.0/8').key).not.toBe(Prefix.parse('10.0.0.0/9').key);
    expect(Prefix.parse('2001:db8::/32').key).not.toBe(Prefix.parse('2001:db8::/33').key);
  });
});

describe('Prefix and Address in console.log / util.inspect', () => {
  it('show their text, also inside a route object', () => {
    const route = { prefix: Prefix.parse('203.0.113.0/24'), nextHop: Address.parse('2001:db8::1') };
    expect(inspect(route)).toBe('{ prefix: 203.0.113.0/24, nextHop: 2001:db8::1 }');
    expect(inspect(Prefix.parse('2001:db8::/32'))).toBe('2001:db8::/32');
  });
});
