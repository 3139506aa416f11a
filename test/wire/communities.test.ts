/**
 * The one text form of communities (src/wire/communities.ts), which the
 * codec, the policy engine, the Calico validator, the agent and the
 * speaker all use: names, numbers, extended types, round trips.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/net/errors.js';
import {
  communityName,
  communityPair,
  formatCommunity,
  formatExtendedCommunity,
  formatLargeCommunity,
  parseCommunity,
  parseCommunityLiteral,
  parseExtendedCommunity,
  parseLargeCommunity,
  isNonTransitive,
  linkBandwidth,
  linkBandwidthOf,
} from '../../src/wire/communities.js';
import { WellKnownCommunity } from '../../src/wire/constants.js';

describe('community text', () => {
  it('names well-known communities and formats the rest as AS:value', () => {
    expect(formatCommunity(WellKnownCommunity.NO_EXPORT)).toBe('no-export');
    expect(formatCommunity(WellKnownCommunity.BLACKHOLE)).toBe('blackhole');
    expect(formatCommunity(0xfde80064)).toBe('65000:100');
    expect(communityName(0xfde80064)).toBeUndefined();
    expect(parseCommunity('65000:100')).toBe(0xfde80064);
    expect(parseCommunity('NO-ADVERTISE')).toBe(WellKnownCommunity.NO_ADVERTISE);
    expect(parseCommunity('local-as')).toBe(WellKnownCommunity.NO_EXPORT_SUBCONFED);
  });

  it('round-trips every community through text', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (v) => {
        expect(parseCommunity(formatCommunity(v))).toBe(v);
      }),
    );
    fc.assert(
      fc.property(fc.record({ global: fc.nat(0xffffffff), local1: fc.nat(0xffffffff), local2: fc.nat(0xffffffff) }), (c) => {
        expect(parseLargeCommunity(formatLargeCommunity(c))).toEqual(c);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 0xffffffffffffffffn }), (v) => {
        expect(parseExtendedCommunity(formatExtendedCommunity(v))).toBe(v);
      }),
    );
    // The named types (0x00–0x02 with route-target / route-origin subtypes), which random values rarely hit.
    const named = fc
      .tuple(fc.constantFrom(0, 1, 2), fc.constantFrom(2, 3), fc.bigInt({ min: 0n, max: 0xffffffffffffn }), fc.boolean())
      .map(([type, sub, rest, small]) => (BigInt(type) << 56n) | (BigInt(sub) << 48n) | (small ? rest & 0xffffffffn : rest));
    fc.assert(
      fc.property(named, (v) => {
        expect(parseExtendedCommunity(formatExtendedCommunity(v))).toBe(v);
      }),
    );
  });

  it('formats and parses extended communities by type', () => {
    expect(formatExtendedCommunity(0x0002fde800000064n)).toBe('rt:65000:100');
    expect(parseExtendedCommunity('rt:65000:100')).toBe(0x0002fde800000064n);
    expect(formatExtendedCommunity(parseExtendedCommunity('soo:192.0.2.1:7'))).toBe('soo:192.0.2.1:7');
    expect(parseExtendedCommunity('rt:4200000000:5')).toBe(0x0202fa56ea000005n);
    expect(formatExtendedCommunity(0x0202fa56ea000005n)).toBe('rt:4200000000:5');
    expect(formatExtendedCommunity(0x8006000000000000n)).toBe('0x8006000000000000');
  });

  it.each([
    ['65536:1', 'community', parseCommunity],
    ['1:2:3', 'community', parseCommunity],
    ['no-such-name', 'community', parseCommunity],
    ['1:2', 'large community', parseLargeCommunity],
    ['1:2:4294967296', 'large community', parseLargeCommunity],
    ['rt:1', 'extended community', parseExtendedCommunity],
    ['rt:4200000000:70000', 'four-octet', parseExtendedCommunity],
  ] as const)('rejects %j, naming the %s', (text, what, parse) => {
    expect(() => parse(text)).toThrow(ParseError);
    expect(() => parse(text)).toThrow(what);
  });
});

describe('community text as policies and Calico write it', () => {
  it('reads asn:value and well-known names in any case; numbers may have leading zeros (as Calico and GoBGP read them)', () => {
    expect(parseCommunity('65000:100')).toBe(65000 * 65536 + 100);
    expect(parseCommunity('NO-EXPORT')).toBe(0xffffff01);
    expect(parseCommunity('blackhole')).toBe(0xffff029a);
    expect(parseCommunity('065000:0100')).toBe(65000 * 65536 + 100);
    expect(formatCommunity(parseCommunity('65535:65535'))).toBe('65535:65535');
  });

  it.each(['65536:1', '1:65536', '1', '1:2:3', 'a:b', '-1:2', '', '1:2.5'])('rejects %j as a standard community', (t) => {
    expect(() => parseCommunity(t)).toThrow(ParseError);
  });

  it('large and extended: every part checked, with its name', () => {
    expect(parseLargeCommunity('4200000000:1:2')).toEqual({ global: 4200000000, local1: 1, local2: 2 });
    expect(() => parseLargeCommunity('4294967296:1:2')).toThrow('global administrator');
    expect(parseExtendedCommunity('rt:65000:100')).toBe(0x0002fde800000064n);
    expect(parseExtendedCommunity('soo:65000:100')).toBe(0x0003fde800000064n);
    expect(parseExtendedCommunity('rt:192.0.2.1:7')).toBe(0x0102c00002010007n);
    expect(parseExtendedCommunity('rt:4200000000:7')).toBe(0x0202fa56ea000007n);
    expect(parseExtendedCommunity('0x0002fde800000064')).toBe(0x0002fde800000064n);
    expect(() => parseExtendedCommunity('rt:65000')).toThrow('extended community');
    expect(() => parseExtendedCommunity('rt:4200000000:70000')).toThrow('local value');
  });

  it('Calico literals: the number of parts picks standard or large; a name is left to the caller', () => {
    expect(parseCommunityLiteral('64512:100')).toEqual({ type: 'standard', value: 64512 * 65536 + 100 });
    expect(parseCommunityLiteral('64512:7:9')).toEqual({ type: 'large', value: { global: 64512, local1: 7, local2: 9 } });
    expect(parseCommunityLiteral('65535:65281')).toEqual({ type: 'standard', value: WellKnownCommunity.NO_EXPORT });
    expect(parseCommunityLiteral('no-export')).toBeUndefined();
    expect(parseCommunityLiteral('big')).toBeUndefined();
    expect(() => parseCommunityLiteral('1:2:3:4')).toThrow(ParseError);
    expect(() => parseCommunityLiteral('70000:1')).toThrow('above 65535');
    expect(() => parseCommunityLiteral('1:2:4294967296')).toThrow('above 4294967295');
  });

  it('communityPair prints numbers even for well-known values (what policy regular expressions see)', () => {
    expect(communityPair(WellKnownCommunity.NO_EXPORT)).toBe('65535:65281');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (v) => {
        expect(parseCommunity(communityPair(v))).toBe(v);
        expect(parseCommunityLiteral(communityPair(v))).toEqual({ type: 'standard', value: v });
      }),
    );
    fc.assert(
      fc.property(fc.record({ global: fc.nat(0xffffffff), local1: fc.nat(0xffffffff), local2: fc.nat(0xffffffff) }), (c) => {
        expect(parseCommunityLiteral(formatLargeCommunity(c))).toEqual({ type: 'large', value: c });
      }),
    );
  });
});

describe('link bandwidth (draft-ietf-idr-link-bandwidth, RFC 10005)', () => {
  it('reads and writes "lb:AS:BYTES_PER_SECOND" as type 0x40 subtype 0x04 with an IEEE single', () => {
    // 64512 = 0xfc00; 375000 bytes/s = 0x48b71b00 as a float32.
    expect(parseExtendedCommunity('lb:64512:375000')).toBe(0x4004fc0048b71b00n);
    expect(formatExtendedCommunity(0x4004fc0048b71b00n)).toBe('lb:64512:375000');
    expect(linkBandwidth(64512, 375000)).toBe(0x4004fc0048b71b00n);
    expect(linkBandwidthOf(0x4004fc0048b71b00n)).toEqual({ asn: 64512, bytesPerSecond: 375000, transitive: false });
    expect(isNonTransitive(0x4004fc0048b71b00n)).toBe(true);
    // The transitive form FRR sends by default.
    expect(parseExtendedCommunity('lb-transitive:23456:12500000')).toBe(linkBandwidth(23456, 12.5e6, true));
    expect(formatExtendedCommunity(linkBandwidth(23456, 12.5e6, true))).toBe('lb-transitive:23456:12500000');
    expect(isNonTransitive(linkBandwidth(1, 1, true))).toBe(false);
    expect(linkBandwidthOf(parseExtendedCommunity('rt:65000:100'))).toBeUndefined();
    // Values a float32 cannot hold exactly round to the nearest one; exponents read.
    expect(linkBandwidthOf(parseExtendedCommunity('lb:1:1.5e9'))!.bytesPerSecond).toBe(1.5e9);
    expect(linkBandwidthOf(parseExtendedCommunity('lb:1:16777217'))!.bytesPerSecond).toBe(16777216);
  });

  it('names what is wrong', () => {
    expect(() => parseExtendedCommunity('lb:70000:1')).toThrow(/link bandwidth AS.*70000 is above 65535/);
    expect(() => parseExtendedCommunity('lb:1:-5')).toThrow(/link bandwidth.*not a non-negative decimal/);
    expect(() => parseExtendedCommunity('lb:1:1e39')).toThrow(/does not fit an IEEE single/);
    expect(() => parseExtendedCommunity('lb:1')).toThrow(ParseError);
    expect(() => linkBandwidth(65536, 1)).toThrow(/0\.\.65535/);
    expect(() => linkBandwidth(1, Number.NaN)).toThrow(/non-negative/);
  });

  it('round-trips every link bandwidth value; NaN, infinities and negatives stay in hex', () => {
    const lbs = fc
      .tuple(fc.constantFrom(0x40n, 0x00n), fc.nat(0xffff), fc.nat(0xffffffff))
      .map(([t, as, bits]) => (t << 56n) | (4n << 48n) | (BigInt(as) << 32n) | BigInt(bits));
    fc.assert(
      fc.property(lbs, (v) => {
        const text = formatExtendedCommunity(v);
        expect(parseExtendedCommunity(text)).toBe(v);
        const bw = linkBandwidthOf(v)!.bytesPerSecond;
        expect(text.startsWith('0x')).toBe(!(Number.isFinite(bw) && bw >= 0 && !Object.is(bw, -0)));
      }),
    );
  });
});
