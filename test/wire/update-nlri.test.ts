import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { BgpError } from '../../src/wire/errors.js';
import { decodeV4Prefixes, decodeV6Prefixes, prefixesSize, writePrefixes } from '../../src/wire/nlri.js';
import { prefixV4, prefixV6 } from './arbitraries-update.js';

const SITE = { what: 'test field', subcode: 'INVALID_NETWORK_FIELD' as const };

function roundTrip(list: Prefix[], family: 4 | 6, addPath: boolean, ids: number[]) {
  const buf = new Uint8Array(prefixesSize(list, addPath));
  expect(writePrefixes(buf, 0, list, family, addPath, ids)).toBe(buf.length);
  const out: Prefix[] = [];
  const gotIds: number[] | null = addPath ? [] : null;
  (family === 4 ? decodeV4Prefixes : decodeV6Prefixes)(buf, 0, buf.length, addPath, out, gotIds, SITE);
  return { out, gotIds };
}

describe('NLRI prefixes', () => {
  it('round-trip for every length, with and without path ids', () => {
    for (const [arb, family] of [
      [prefixV4, 4],
      [prefixV6, 6],
    ] as const) {
      fc.assert(
        fc.property(fc.array(arb, { maxLength: 40 }), fc.boolean(), (list, addPath) => {
          const ids = list.map((_, i) => (i * 2654435761) >>> 0);
          const { out, gotIds } = roundTrip(list, family, addPath, ids);
          expect(out).toEqual(list);
          if (addPath) expect(gotIds).toEqual(ids);
        }),
      );
    }
  });

  it('masks host bits: any trailing bits decode to the containing prefix', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 128 }), fc.uint8Array({ minLength: 16, maxLength: 16 }), (len, bytes) => {
        const n = Math.ceil(len / 8);
        const wire = Uint8Array.of(len, ...bytes.subarray(0, n));
        const out: Prefix[] = [];
        decodeV6Prefixes(wire, 0, wire.length, false, out, null, SITE);
        expect(out[0].equals(Prefix.containing(Address.fromBytes(6, bytes), len))).toBe(true);
        if (len <= 32) {
          const out4: Prefix[] = [];
          decodeV4Prefixes(wire, 0, wire.length, false, out4, null, SITE);
          expect(out4[0].equals(Prefix.containing(Address.fromBytes(4, bytes), len))).toBe(true);
        }
      }),
    );
  });

  it('rejects over-long lengths and overruns with the site subcode, naming the field', () => {
    const cases: [Uint8Array, 4 | 6, boolean, RegExp][] = [
      [Uint8Array.of(33, 1, 2, 3, 4, 5), 4, false, /test field: IPv4 prefix length 33 is above 32/],
      [Uint8Array.of(129), 6, false, /IPv6 prefix length 129 is above 128/],
      [Uint8Array.of(24, 10, 0), 4, false, /needs 3 bytes but only 2 remain/],
      [Uint8Array.of(0, 0, 0), 4, true, /path identifier and length truncated/],
      [Uint8Array.of(0, 0, 0, 1, 64, 0x20), 6, true, /needs 8 bytes/],
    ];
    for (const [wire, family, addPath, why] of cases) {
      const run = () => (family === 4 ? decodeV4Prefixes : decodeV6Prefixes)(wire, 0, wire.length, addPath, [], addPath ? [] : null, SITE);
      expect(run).toThrow(BgpError);
      expect(run).toThrow(why);
    }
  });

  it('refuses to write a prefix of the other family', () => {
    expect(() => writePrefixes(new Uint8Array(32), 0, [Prefix.parse('2001:db8::/32')], 4, false, undefined)).toThrow(/IPv4 prefix list/);
    expect(() => writePrefixes(new Uint8Array(32), 0, [Prefix.parse('10.0.0.0/8')], 6, true, undefined)).toThrow(/IPv6 prefix list/);
  });
});
