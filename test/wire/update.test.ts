import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT, type CodecContext } from '../../src/wire/context.js';
import { BgpError } from '../../src/wire/errors.js';
import { decodeUpdate, encodeUpdateBody, endOfRib, isEndOfRib } from '../../src/wire/update.js';
import type { UpdateMessage } from '../../src/wire/types.js';
import { ALL_CONTEXTS, ctxName, updateMessageArb } from './arbitraries-update.js';
import { plainUpdate } from '../../src/wire/received.js';

const P = (t: string) => Prefix.parse(t);
const A = (t: string) => Address.parse(t);

describe('UPDATE round trip', () => {
  for (const ctx of ALL_CONTEXTS) {
    it(`decode(encode(m)) equals m (${ctxName(ctx)})`, () => {
      fc.assert(
        fc.property(updateMessageArb(ctx), (m) => {
          const body = encodeUpdateBody(m, ctx);
          expect(plainUpdate(decodeUpdate(body, ctx))).toEqual(m);
        }),
        { numRuns: 60 },
      );
    });
  }

  it('encodes canonically: MP_* first, then ascending codes, extended length only above 255', () => {
    const m: UpdateMessage = {
      type: 'update',
      withdrawn: [],
      nlri: [],
      attributes: {
        largeCommunities: [{ global: 1, local1: 2, local2: 3 }],
        med: 5,
        origin: 0,
        asPath: [],
        unknown: [{ flags: 0xc0, code: 99, value: new Uint8Array(300) }],
        mpReach: { afi: 2, safi: 1, nextHops: [A('2001:db8::1')], nlri: [P('2001:db8::/32')] },
      },
    };
    const body = encodeUpdateBody(m, DEFAULT_CONTEXT);
    const codes: number[] = [];
    const flags: number[] = [];
    let o = 4;
    const end = 4 + ((body[2] << 8) | body[3]);
    while (o < end) {
      flags.push(body[o]);
      codes.push(body[o + 1]);
      const ext = (body[o] & 0x10) !== 0;
      o += (ext ? 4 : 3) + (ext ? (body[o + 2] << 8) | body[o + 3] : body[o + 2]);
    }
    expect(o).toBe(end);
    expect(codes).toEqual([14, 1, 2, 4, 32, 99]);
    expect(flags).toEqual([0x80, 0x40, 0x40, 0x80, 0xc0, 0xf0]); // unknown: Partial set, extended length (300 bytes)
  });

  it('splits AS_PATH segments longer than 255 ASNs', () => {
    const asns = Array.from({ length: 600 }, (_, i) => 64512 + i);
    const m: UpdateMessage = { type: 'update', withdrawn: [], nlri: [], attributes: { asPath: [{ type: 2, asns }] } };
    const d = decodeUpdate(encodeUpdateBody(m, DEFAULT_CONTEXT), DEFAULT_CONTEXT);
    expect(d.attributes.asPath!.map((s) => s.asns.length)).toEqual([255, 255, 90]);
    expect(d.attributes.asPath!.flatMap((s) => s.asns)).toEqual(asns);
  });

  it('masks host bits beyond the prefix length', () => {
    // withdrawn: 10.0.255.0 as a /20 with stray bits set
    const body = Uint8Array.of(0, 4, 20, 10, 0, 255, 0, 0);
    const d = decodeUpdate(body, DEFAULT_CONTEXT);
    expect(d.withdrawn.map(String)).toEqual(['10.0.240.0/20']);
  });
});

describe('RFC 6793 on a 2-byte-AS session', () => {
  const ctx: CodecContext = LEGACY_CONTEXT;
  it('sends AS_TRANS plus AS4_PATH / AS4_AGGREGATOR for wide ASNs and rebuilds the path', () => {
    const m: UpdateMessage = {
      type: 'update',
      withdrawn: [],
      nlri: [P('192.0.2.0/24')],
      attributes: {
        origin: 0,
        asPath: [{ type: 2, asns: [65001, 4200000000, 65002] }],
        nextHop: A('192.0.2.1'),
        aggregator: { asn: 4200000001, address: A('10.0.0.1') },
      },
    };
    const body = encodeUpdateBody(m, ctx);
    expect(plainUpdate(decodeUpdate(body, ctx))).toEqual(m);
    const hex = Buffer.from(body).toString('hex');
    expect(hex).toContain('4002080203fde95ba0fdea'); // AS_PATH: SEQ of 3 two-byte ASNs, AS_TRANS in the middle
    expect(hex).toContain('c007065ba00a000001'); // AGGREGATOR: AS_TRANS, 10.0.0.1
    expect(hex).toContain('c0110e02030000fde9fa56ea000000fdea'); // AS4_PATH: the real path in 4-byte form
    expect(hex).toContain('c01208fa56ea010a000001'); // AS4_AGGREGATOR
  });

  it('ignores AS4_PATH when AS_PATH is shorter (§4.2.3) and prepends the extra leading ASNs otherwise', () => {
    // AS_PATH: SEQ [1, 23456, 3]; AS4_PATH: SEQ [4200000000, 3] → [1, 4200000000, 3]
    const asPath = [0x40, 2, 8, 2, 3, 0, 1, 0x5b, 0xa0, 0, 3];
    const as4 = [0xc0, 17, 10, 2, 2, 0xfa, 0x56, 0xea, 0x00, 0, 0, 0, 3];
    const attrs = [...asPath, ...as4];
    const body = Uint8Array.of(0, 0, 0, attrs.length, ...attrs);
    expect(decodeUpdate(body, ctx).attributes.asPath).toEqual([{ type: 2, asns: [1, 4200000000, 3] }]);
    // AS4_PATH longer than AS_PATH: ignored
    const as4long = [0xc0, 17, 18, 2, 4, 0, 0, 0, 9, 0, 0, 0, 9, 0, 0, 0, 9, 0, 0, 0, 9];
    const attrs2 = [...asPath, ...as4long];
    expect(decodeUpdate(Uint8Array.of(0, 0, 0, attrs2.length, ...attrs2), ctx).attributes.asPath).toEqual([{ type: 2, asns: [1, 23456, 3] }]);
  });

  it('drops AS4_AGGREGATOR and AS4_PATH when AGGREGATOR is not AS_TRANS', () => {
    const agg = [0xc0, 7, 6, 0, 7, 10, 0, 0, 1];
    const as4agg = [0xc0, 18, 8, 0xfa, 0x56, 0xea, 0x01, 10, 0, 0, 1];
    const asPath = [0x40, 2, 4, 2, 1, 0x5b, 0xa0];
    const as4 = [0xc0, 17, 6, 2, 1, 0xfa, 0x56, 0xea, 0x00];
    const attrs = [...asPath, ...agg, ...as4, ...as4agg];
    const d = decodeUpdate(Uint8Array.of(0, 0, 0, attrs.length, ...attrs), ctx);
    expect(d.attributes.aggregator?.asn).toBe(7);
    expect(d.attributes.asPath).toEqual([{ type: 2, asns: [23456] }]);
  });

  it('discards received AS4_PATH / AS4_AGGREGATOR on a 4-byte-AS session', () => {
    const as4 = [0xc0, 17, 6, 2, 1, 0, 0, 0, 9];
    const as4agg = [0xc0, 18, 8, 0, 0, 0, 9, 10, 0, 0, 1];
    const asPath = [0x40, 2, 6, 2, 1, 0, 0, 0, 7];
    const attrs = [...asPath, ...as4, ...as4agg];
    const d = decodeUpdate(Uint8Array.of(0, 0, 0, attrs.length, ...attrs), DEFAULT_CONTEXT);
    expect(d.attributes).toEqual({ asPath: [{ type: 2, asns: [7] }] });
    expect(d.issues).toBeUndefined();
  });
});

describe('End-of-RIB', () => {
  it('IPv4 is the empty UPDATE, IPv6 an empty MP_UNREACH for 2/1', () => {
    expect(Buffer.from(encodeUpdateBody(endOfRib(1), DEFAULT_CONTEXT)).toString('hex')).toBe('00000000');
    expect(Buffer.from(encodeUpdateBody(endOfRib(2), DEFAULT_CONTEXT)).toString('hex')).toBe('00000006800f03000201');
    for (const ctx of ALL_CONTEXTS) {
      expect(isEndOfRib(decodeUpdate(encodeUpdateBody(endOfRib(1), ctx), ctx))).toEqual({ afi: 1, safi: 1 });
      expect(isEndOfRib(decodeUpdate(encodeUpdateBody(endOfRib(2), ctx), ctx))).toEqual({ afi: 2, safi: 1 });
    }
  });

  it('is not claimed for messages carrying anything else', () => {
    expect(isEndOfRib({ type: 'update', withdrawn: [P('10.0.0.0/8')], attributes: {}, nlri: [] })).toBeNull();
    expect(isEndOfRib({ type: 'update', withdrawn: [], attributes: { origin: 0 }, nlri: [] })).toBeNull();
    expect(isEndOfRib({ type: 'update', withdrawn: [], attributes: { mpUnreach: { afi: 2, safi: 1, withdrawn: [P('2001:db8::/32')] } }, nlri: [] })).toBeNull();
    expect(isEndOfRib({ type: 'update', withdrawn: [], attributes: { mpUnreach: { afi: 2, safi: 1, withdrawn: [] }, origin: 0 }, nlri: [] })).toBeNull();
  });
});

describe('encoder input errors', () => {
  it('rejects IPv6 in the classic fields, oversize messages and bad values with a clear Error', () => {
    const base: UpdateMessage = { type: 'update', withdrawn: [], attributes: {}, nlri: [] };
    expect(() => encodeUpdateBody({ ...base, nlri: [P('2001:db8::/32')] }, DEFAULT_CONTEXT)).toThrow(/IPv4 prefix list/);
    const many = Array.from({ length: 1200 }, (_, i) => Prefix.v4((i << 8) >>> 0, 24));
    expect(() => encodeUpdateBody({ ...base, withdrawn: many }, DEFAULT_CONTEXT)).toThrow(/exceeds the 4096-byte limit/);
    expect(() => encodeUpdateBody({ ...base, withdrawn: many }, { ...DEFAULT_CONTEXT, extendedMessage: true })).not.toThrow();
    expect(() => encodeUpdateBody({ ...base, attributes: { med: -1 } }, DEFAULT_CONTEXT)).toThrow(/MULTI_EXIT_DISC/);
    expect(() => encodeUpdateBody({ ...base, attributes: { nextHop: A('2001:db8::1') } }, DEFAULT_CONTEXT)).toThrow(/NEXT_HOP must be an IPv4/);
    expect(() => encodeUpdateBody({ ...base, attributes: { unknown: [{ flags: 0xc0, code: 8, value: new Uint8Array(4) }] } }, DEFAULT_CONTEXT)).toThrow(
      /has a codec/,
    );
  });
});

describe('decoded values own their bytes', () => {
  it('copies unknown attributes and raw MP values out of a Buffer instead of aliasing it', () => {
    const m: UpdateMessage = {
      type: 'update',
      withdrawn: [],
      nlri: [],
      attributes: {
        origin: 0,
        asPath: [],
        unknown: [{ flags: 0xe0, code: 99, value: Uint8Array.of(1, 2, 3) }],
        mpReach: { afi: 25, safi: 70, nextHops: [], nlri: [], raw: Uint8Array.of(4, 5) },
      },
    };
    const wire = Buffer.from(encodeUpdateBody(m, DEFAULT_CONTEXT));
    const d = decodeUpdate(wire, DEFAULT_CONTEXT);
    wire.fill(0);
    expect(d.attributes.unknown![0].value).toEqual(Uint8Array.of(1, 2, 3));
    expect(d.attributes.mpReach!.raw).toEqual(Uint8Array.of(4, 5));
    expect(Buffer.isBuffer(d.attributes.unknown![0].value)).toBe(false);
  });
});

describe('decoding is total', () => {
  const check = (bytes: Uint8Array, ctx: CodecContext) => {
    try {
      const m = decodeUpdate(bytes, ctx);
      expect(m.type).toBe('update');
    } catch (err) {
      expect(err).toBeInstanceOf(BgpError);
      const e = err as BgpError;
      expect(e.code).toBe(3);
      expect(e.subcode).toBeGreaterThanOrEqual(1);
      expect(e.subcode).toBeLessThanOrEqual(11);
    }
  };

  it('random bytes give an UpdateMessage or a BgpError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.constantFrom(...ALL_CONTEXTS), (bytes, ctx) => check(bytes, ctx)),
      { numRuns: 3000 },
    );
  });

  it('whatever decodes cleanly re-encodes, and a second round trip changes nothing', () => {
    const mutation = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 });
    let clean = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL_CONTEXTS).chain((ctx) => fc.tuple(fc.constant(ctx), updateMessageArb(ctx))),
        mutation,
        ([ctx, m], muts) => {
          const bytes = encodeUpdateBody(m, ctx).slice();
          for (const [at, v] of muts) if (bytes.length > 0) bytes[at % bytes.length] = v;
          let m1: UpdateMessage;
          try {
            m1 = decodeUpdate(bytes, ctx);
          } catch (err) {
            expect(err).toBeInstanceOf(BgpError);
            return;
          }
          if (m1.issues !== undefined) return;
          clean++;
          // The first pass may normalize (Partial bit on unknown attributes, path merge); after that it is a fixed point.
          const m2 = decodeUpdate(encodeUpdateBody(m1, ctx), ctx);
          expect(decodeUpdate(encodeUpdateBody(m2, ctx), ctx)).toEqual(m2);
        },
      ),
      { numRuns: 800 },
    );
    expect(clean).toBeGreaterThan(50);
  });

  it('mutated valid messages give an UpdateMessage or a BgpError', () => {
    const mutation = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL_CONTEXTS).chain((ctx) => fc.tuple(fc.constant(ctx), updateMessageArb(ctx))),
        mutation,
        fc.nat(),
        fc.constantFrom(...ALL_CONTEXTS),
        ([ctx, m], muts, cut, readCtx) => {
          const bytes = encodeUpdateBody(m, ctx).slice();
          for (const [at, v] of muts) if (bytes.length > 0) bytes[at % bytes.length] = v;
          check(bytes, readCtx);
          check(bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length), readCtx);
        },
      ),
      { numRuns: 1500 },
    );
  });
});
