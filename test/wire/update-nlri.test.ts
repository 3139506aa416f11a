import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { keyOf, prefixFromKey, type PrefixKey } from '../../src/net/prefix-key.js';
import { BgpError } from '../../src/wire/errors.js';
import { decodeV4Keys, decodeV6Keys, prefixesSize, writePrefixes, type NlriSite } from '../../src/wire/nlri.js';
import { prefixV4, prefixV6 } from './arbitraries-update.js';
import { referenceV4, referenceV6 } from './nlri-reference.js';

const SITE = { what: 'test field', subcode: 'INVALID_NETWORK_FIELD' as const };

function decodeKeys(family: 4 | 6, buf: Uint8Array, addPath: boolean, site: NlriSite = SITE): { keys: PrefixKey[]; ids: number[] | null } {
  const keys: PrefixKey[] = [];
  const ids: number[] | null = addPath ? [] : null;
  (family === 4 ? decodeV4Keys : decodeV6Keys)(buf, 0, buf.length, addPath, keys, ids, site);
  return { keys, ids };
}

function decodeReference(family: 4 | 6, buf: Uint8Array, addPath: boolean, site: NlriSite = SITE): { prefixes: Prefix[]; ids: number[] | null } {
  const prefixes: Prefix[] = [];
  const ids: number[] | null = addPath ? [] : null;
  (family === 4 ? referenceV4 : referenceV6)(buf, 0, buf.length, addPath, prefixes, ids, site);
  return { prefixes, ids };
}

/** The outcome of a decode: its value, or the error's code, subcode, message and data. */
function outcome<T>(fn: () => T): { ok: T } | { error: [number, number, string, number[]] } {
  try {
    return { ok: fn() };
  } catch (e) {
    if (!(e instanceof BgpError)) throw e;
    return { error: [e.code, e.subcode, e.message, [...e.data]] };
  }
}

/** A prefix list on the wire with any host bits after each prefix (they must be masked off), and path ids when `addPath`. */
function wireList(family: 4 | 6, addPath: boolean) {
  const max = family === 4 ? 32 : 128;
  const entry = fc.record({
    len: fc.integer({ min: 0, max }),
    bytes: fc.uint8Array({ minLength: 16, maxLength: 16 }),
    id: fc.integer({ min: 0, max: 0xffffffff }),
  });
  return fc.array(entry, { maxLength: 30 }).map((entries) => {
    const out: number[] = [];
    for (const e of entries) {
      if (addPath) out.push(e.id >>> 24, (e.id >>> 16) & 0xff, (e.id >>> 8) & 0xff, e.id & 0xff);
      out.push(e.len, ...e.bytes.subarray(0, (e.len + 7) >>> 3));
    }
    return { wire: Uint8Array.from(out), entries };
  });
}

describe('NLRI decoded into prefix keys', () => {
  it('round-trip for every length, with and without path ids', () => {
    for (const [arb, family] of [
      [prefixV4, 4],
      [prefixV6, 6],
    ] as const) {
      fc.assert(
        fc.property(fc.array(arb, { maxLength: 40 }), fc.boolean(), (list, addPath) => {
          const ids = list.map((_, i) => (i * 2654435761) >>> 0);
          const buf = new Uint8Array(prefixesSize(list, addPath));
          expect(writePrefixes(buf, 0, list, family, addPath, ids)).toBe(buf.length);
          const got = decodeKeys(family, buf, addPath);
          expect(got.keys).toEqual(list.map(keyOf));
          expect(got.keys.map(prefixFromKey)).toEqual(list);
          if (addPath) expect(got.ids).toEqual(ids);
        }),
      );
    }
  });

  it('agrees with the Prefix decoder on valid NLRI: IPv4 /0–/32, IPv6 /0–/128, host bits set, ADD-PATH ids (property)', () => {
    for (const family of [4, 6] as const)
      for (const addPath of [false, true])
        fc.assert(
          fc.property(wireList(family, addPath), ({ wire, entries }) => {
            const got = decodeKeys(family, wire, addPath);
            const ref = decodeReference(family, wire, addPath);
            expect(got.keys).toHaveLength(entries.length);
            expect(got.keys).toEqual(ref.prefixes.map(keyOf));
            expect(got.keys.map((k) => prefixFromKey(k).toString())).toEqual(ref.prefixes.map(String));
            expect(got.ids).toEqual(ref.ids);
            if (addPath) expect(got.ids).toEqual(entries.map((e) => e.id));
            for (let i = 0; i < entries.length; i++) {
              const e = entries[i];
              expect(prefixFromKey(got.keys[i]).equals(Prefix.containing(Address.fromBytes(family, e.bytes), e.len))).toBe(true);
            }
          }),
          { numRuns: 150 },
        );
  });

  it('gives the same result or the same error as the Prefix decoder for any bytes (property)', () => {
    const site: NlriSite = { what: 'MP_REACH_NLRI', subcode: 'OPTIONAL_ATTRIBUTE_ERROR', buf: Uint8Array.of(0x80, 14, 3, 1, 2, 3), from: 0, to: 6 };
    // Mostly malformed: random bytes, and valid lists cut short or with one length byte raised.
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc
        .tuple(fc.constantFrom(4 as const, 6 as const), fc.boolean())
        .chain(([f, ap]) => fc.tuple(wireList(f, ap), fc.nat(), fc.integer({ min: 0, max: 255 })))
        .map(([{ wire }, cut, v]) => {
          const w = wire.slice(0, wire.length === 0 ? 0 : cut % (wire.length + 1));
          if (w.length > 0 && v > 200) w[cut % w.length] = v;
          return w;
        }),
    );
    fc.assert(
      fc.property(bytes, fc.constantFrom(4 as const, 6 as const), fc.boolean(), fc.boolean(), (wire, family, addPath, withData) => {
        const s = withData ? site : SITE;
        const got = outcome(() => decodeKeys(family, wire, addPath, s));
        const ref = outcome(() => decodeReference(family, wire, addPath, s));
        if ('error' in ref) expect(got).toEqual(ref);
        else {
          expect('ok' in got).toBe(true);
          if ('ok' in got) {
            expect(got.ok.keys).toEqual(ref.ok.prefixes.map(keyOf));
            expect(got.ok.ids).toEqual(ref.ok.ids);
          }
        }
      }),
      { numRuns: 1000 },
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
      const run = () => decodeKeys(family, wire, addPath);
      expect(run).toThrow(BgpError);
      expect(run).toThrow(why);
    }
  });

  it('refuses to write a prefix of the other family', () => {
    expect(() => writePrefixes(new Uint8Array(32), 0, [Prefix.parse('2001:db8::/32')], 4, false, undefined)).toThrow(/IPv4 prefix list/);
    expect(() => writePrefixes(new Uint8Array(32), 0, [Prefix.parse('10.0.0.0/8')], 6, true, undefined)).toThrow(/IPv6 prefix list/);
  });
});
