import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { ParseError } from '../../src/net/errors.js';
import { mergeAs4Path, pathCount } from '../../src/wire/attributes/aspath.js';
import { DESCRIPTORS, ENCODE_ORDER } from '../../src/wire/attributes/descriptors.js';
import { AttrType, WellKnownCommunity } from '../../src/wire/constants.js';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT } from '../../src/wire/context.js';
import { decodeUpdate, encodeUpdateBody } from '../../src/wire/update.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { plainUpdate } from '../../src/wire/received.js';

const attrBytes = (a: PathAttributes, ctx = DEFAULT_CONTEXT) =>
  Buffer.from(encodeUpdateBody({ type: 'update', withdrawn: [], nlri: [], attributes: a }, ctx).subarray(4)).toString('hex');

describe('attribute descriptors', () => {
  it('has one descriptor per supported code, with the RFC flag bits', () => {
    const flags = Object.fromEntries(ENCODE_ORDER.map((d) => [d.name, d.flags]));
    expect(flags).toEqual({
      ORIGIN: 0x40,
      AS_PATH: 0x40,
      NEXT_HOP: 0x40,
      MULTI_EXIT_DISC: 0x80,
      LOCAL_PREF: 0x40,
      ATOMIC_AGGREGATE: 0x40,
      AGGREGATOR: 0xc0,
      COMMUNITIES: 0xc0,
      ORIGINATOR_ID: 0x80,
      CLUSTER_LIST: 0x80,
      MP_REACH_NLRI: 0x80,
      MP_UNREACH_NLRI: 0x80,
      EXTENDED_COMMUNITIES: 0xc0,
      AS4_PATH: 0xc0,
      AS4_AGGREGATOR: 0xc0,
      LARGE_COMMUNITIES: 0xc0,
    });
    for (const [name, code] of Object.entries(AttrType)) expect(DESCRIPTORS[code]?.name).toBe(name);
  });

  it('encodes MP_REACH_NLRI and MP_UNREACH_NLRI first, then ascending type code (RFC 7606 §5.1); the table by code is that list', () => {
    const codes = ENCODE_ORDER.map((d) => d.code);
    expect(codes.slice(0, 2)).toEqual([AttrType.MP_REACH_NLRI, AttrType.MP_UNREACH_NLRI]);
    expect(codes.slice(2)).toEqual([...codes.slice(2)].sort((a, b) => a - b));
    expect(DESCRIPTORS.filter((d) => d !== undefined)).toHaveLength(ENCODE_ORDER.length);
    for (const d of ENCODE_ORDER) expect(DESCRIPTORS[d.code]).toBe(d);
  });

  it('encodes each attribute to the RFC byte layout', () => {
    expect(attrBytes({ origin: 2 })).toBe('40010102');
    expect(attrBytes({ asPath: [{ type: 2, asns: [65000, 4200000000] }] })).toBe('40020a02020000fde8fa56ea00');
    expect(attrBytes({ asPath: [{ type: 1, asns: [1, 2] }] }, LEGACY_CONTEXT)).toBe('400206010200010002');
    expect(attrBytes({ nextHop: Address.parse('192.0.2.1') })).toBe('400304c0000201');
    expect(attrBytes({ med: 100 })).toBe('80040400000064');
    expect(attrBytes({ localPref: 200 })).toBe('400504000000c8');
    expect(attrBytes({ atomicAggregate: true })).toBe('400600');
    expect(attrBytes({ aggregator: { asn: 65001, address: Address.parse('10.0.0.1') } })).toBe('c007080000fde90a000001');
    expect(attrBytes({ aggregator: { asn: 65001, address: Address.parse('10.0.0.1') } }, LEGACY_CONTEXT)).toBe('c00706fde90a000001');
    expect(attrBytes({ communities: [WellKnownCommunity.NO_EXPORT, 0xfde80064] })).toBe('c00808ffffff01fde80064');
    expect(attrBytes({ originatorId: Address.parse('10.0.0.9') })).toBe('8009040a000009');
    expect(attrBytes({ clusterList: [Address.parse('10.0.0.1'), Address.parse('10.0.0.2')] })).toBe('800a080a0000010a000002');
    expect(attrBytes({ extendedCommunities: [0x0002fde800000064n] })).toBe('c010080002fde800000064');
    expect(attrBytes({ largeCommunities: [{ global: 65000, local1: 1, local2: 2 }] })).toBe('c0200c0000fde80000000100000002');
    expect(attrBytes({ mpUnreach: { afi: 2, safi: 1, withdrawn: [] } })).toBe('800f03000201');
    expect(attrBytes({ mpReach: { afi: 2, safi: 1, nextHops: [Address.parse('2001:db8::1'), Address.parse('fe80::1')], nlri: [] } })).toBe(
      '800e2500020120' + '20010db8000000000000000000000001' + 'fe800000000000000000000000000001' + '00',
    );
    expect(attrBytes({ mpReach: { afi: 1, safi: 1, nextHops: [Address.parse('192.0.2.1')], nlri: [] } })).toBe('800e0900010104c000020100');
    // The all-empty lists are left out: a zero-length COMMUNITIES etc. is malformed on the wire.
    expect(attrBytes({ communities: [], clusterList: [], extendedCommunities: [], largeCommunities: [] })).toBe('');
  });

  it('decodes IPv4 NLRI carried in MP_REACH_NLRI and IPv6 next hops of 16 and 32 bytes', () => {
    for (const nextHops of [[Address.parse('2001:db8::1')], [Address.parse('2001:db8::1'), Address.parse('fe80::1')]]) {
      const a: PathAttributes = { origin: 0, asPath: [], mpReach: { afi: 2, safi: 1, nextHops, nlri: [] } };
      expect(
        plainUpdate(decodeUpdate(encodeUpdateBody({ type: 'update', withdrawn: [], nlri: [], attributes: a }, DEFAULT_CONTEXT), DEFAULT_CONTEXT)).attributes,
      ).toEqual(a);
    }
  });
});

describe('RFC 6793 path merge', () => {
  it('counts sequences by ASN, sets as one, confederation segments as none', () => {
    expect(
      pathCount([
        { type: 2, asns: [1, 2, 3] },
        { type: 1, asns: [4, 5] },
        { type: 3, asns: [6] },
      ]),
    ).toBe(4);
  });

  it('prepends the leading ASNs that AS4_PATH lacks and keeps leading confederation segments', () => {
    const as2 = [
      { type: 3 as const, asns: [65100] },
      { type: 2 as const, asns: [10, 23456, 23456, 30] },
    ];
    const as4 = [{ type: 2 as const, asns: [4200000000, 4200000001, 30] }];
    expect(mergeAs4Path(as2, as4)).toEqual([
      { type: 3, asns: [65100] },
      { type: 2, asns: [10, 4200000000, 4200000001, 30] },
    ]);
  });

  it('is the identity when the counts match and AS4_PATH carries the same path', () => {
    const seg = fc.record({
      type: fc.constantFrom(1 as const, 2 as const),
      asns: fc.array(fc.integer({ min: 1, max: 0xffffffff }), { minLength: 1, maxLength: 8 }),
    });
    fc.assert(
      fc.property(fc.array(seg, { maxLength: 5 }), (path) => {
        const as2 = path.map((s) => ({ type: s.type, asns: s.asns.map((a) => (a > 0xffff ? 23456 : a)) }));
        expect(mergeAs4Path(as2, path)).toEqual(path);
      }),
    );
  });
});
