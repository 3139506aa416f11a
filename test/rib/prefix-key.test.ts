import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { familyOfKey, keyOf, prefixFromKey } from '../../src/rib/prefix-key.js';

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
});
