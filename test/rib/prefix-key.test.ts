import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { familyOfKey, keyOf, prefixFromKey, sortKeys, sortKeysInPlace } from '../../src/rib/prefix-key.js';

describe('prefix keys', () => {
  it('round-trips every IPv4 and IPv6 prefix, and distinct prefixes get distinct keys (property)', () => {
    const v4 = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([v, l]) => Prefix.containing(Address.v4(v), l));
    const v6 = fc
      .tuple(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 4, maxLength: 4 }), fc.integer({ min: 0, max: 128 }))
      .map(([w, l]) => Prefix.containing(Address.v6(w[0], w[1], w[2], w[3]), l));
    const any = fc.oneof(v4, v6);
    fc.assert(
      fc.property(any, any, (a, b) => {
        expect(prefixFromKey(keyOf(a)).equals(a)).toBe(true);
        expect(familyOfKey(keyOf(a))).toBe(a.family);
        expect(keyOf(a) === keyOf(b)).toBe(a.equals(b));
      }),
    );
  });

  it('keeps IPv4 prefixes up to /31 as small integers and tells /31 from /32 apart', () => {
    for (const text of ['0.0.0.0/0', '10.0.0.0/8', '255.255.255.254/31', '192.0.2.0/24']) {
      const k = keyOf(Prefix.parse(text));
      expect(Number.isInteger(k) && (k as number) >= -(2 ** 31) && (k as number) < 2 ** 31).toBe(true);
      expect(prefixFromKey(k).toString()).toBe(text);
    }
    expect(keyOf(Prefix.parse('10.0.0.1/32'))).not.toBe(keyOf(Prefix.parse('10.0.0.0/31')));
    expect(prefixFromKey(keyOf(Prefix.parse('255.255.255.255/32'))).toString()).toBe('255.255.255.255/32');
  });

  it('keeps IPv6 prefixes up to /48 as exact numbers above every IPv4 key, longer ones as strings', () => {
    for (const text of ['::/0', '8000::/1', '2001:db8::/32', '2001:db8:fffe::/47', 'ffff:ffff:ffff::/48', '2001:db8:1::/48']) {
      const k = keyOf(Prefix.parse(text));
      expect(typeof k === 'number' && Number.isSafeInteger(k) && k > 2 ** 33).toBe(true);
      expect(familyOfKey(k)).toBe(6);
      expect(prefixFromKey(k).toString()).toBe(text);
    }
    expect(keyOf(Prefix.parse('2001:db8::/47'))).not.toBe(keyOf(Prefix.parse('2001:db8::/48')));
    expect(typeof keyOf(Prefix.parse('2001:db8:1:2::/64'))).toBe('string');
    expect(prefixFromKey(keyOf(Prefix.parse('2001:db8:1:8000::/49'))).toString()).toBe('2001:db8:1:8000::/49');
  });

  it('sorts keys canonically: a permutation, IPv4 of one length in address order, IPv6 last (property)', () => {
    const v4 = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(8, 24, 31, 32)).map(([v, l]) => Prefix.containing(Address.v4(v), l));
    const v6 = fc
      .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom(32, 48, 64))
      .map(([w, l]) => Prefix.containing(Address.v6(0x20010db8, w, 0, 0), l));
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(v4, v6), { selector: (p) => p.toString(), maxLength: 40 }), (ps) => {
        const keys = ps.map(keyOf);
        const sorted = sortKeys(keys.slice());
        expect(sorted.slice().sort()).toEqual(keys.slice().sort());
        const back = sorted.map(prefixFromKey);
        const firstV6 = back.findIndex((p) => p.family === 6);
        if (firstV6 >= 0) expect(back.slice(firstV6).every((p) => p.family === 6)).toBe(true);
        for (const len of [8, 24, 31, 32]) {
          const same = back.filter((p) => p.family === 4 && p.length === len).map((p) => p.w0);
          expect(same).toEqual(same.slice().sort((a, b) => a - b));
        }
      }),
    );
  });

  it('sorts a few keys (by insertion) and many (radix sort) into the same canonical order, as a copy or in place (property)', () => {
    const v4 = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([v, l]) => Prefix.containing(Address.v4(v), l));
    const v6 = fc
      .tuple(fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 4, maxLength: 4 }), fc.integer({ min: 0, max: 128 }))
      .map(([w, l]) => Prefix.containing(Address.v6(w[0], w[1], w[2], w[3]), l));
    // The reference: numbers by unsigned value (negative IPv4 keys are addresses from 128.0.0.0), strings after them.
    const unsigned = (k: number) => (k < 0 ? k + 2 ** 32 : k);
    const ref = (a: number | string, b: number | string) =>
      typeof a === 'number' ? (typeof b === 'number' ? unsigned(a) - unsigned(b) : -1) : typeof b === 'number' ? 1 : a < b ? -1 : a > b ? 1 : 0;
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(v4, v4, v6), { selector: (p) => p.toString(), maxLength: 200 }), (ps) => {
        const keys = ps.map(keyOf);
        const before = keys.slice();
        const want = keys.slice().sort(ref);
        expect(sortKeys(keys)).toEqual(want);
        expect(keys).toEqual(before); // the input is left as it was
        expect(sortKeysInPlace(keys)).toBe(keys);
        expect(keys).toEqual(want);
      }),
    );
  });

  it('radix-sorts the extreme IPv4 keys (0.0.0.0/0, 128.0.0.0/1, 255.255.255.254/31) among many', () => {
    const texts = ['255.255.255.254/31', '128.0.0.0/1', '0.0.0.0/0', '127.255.255.254/31', '0.0.0.0/31', '255.255.255.255/32', '2001:db8::/32'];
    const filler = Array.from({ length: 100 }, (_, i) => `10.${i}.0.0/16`);
    const keys = [...texts, ...filler].map((t) => keyOf(Prefix.parse(t)));
    // Unsigned order of the key: the address with its marker bit just below the length (0.0.0.0/0 is 2^31).
    const sorted = sortKeys(keys).map((k) => prefixFromKey(k).toString());
    expect(sorted.indexOf('127.255.255.254/31') + 1).toBe(sorted.indexOf('0.0.0.0/0'));
    expect(sorted.indexOf('0.0.0.0/0') + 1).toBe(sorted.indexOf('128.0.0.0/1'));
    expect(sorted[0]).toBe('0.0.0.0/31');
    expect(sorted.slice(-3)).toEqual(['255.255.255.254/31', '255.255.255.255/32', '2001:db8::/32']);
    expect(sorted.slice(1, 101)).toEqual(filler);
  });
});
