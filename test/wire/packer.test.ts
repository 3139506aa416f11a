import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { maxMessageSize, DEFAULT_CONTEXT, type CodecContext } from '../../src/wire/context.js';
import { ARENA_CHUNK, PackArena, packUpdates, packWithdrawals } from '../../src/wire/packer.js';
import type { PathAttributes, UpdateMessage } from '../../src/wire/types.js';
import { decodeUpdate, encodeUpdateBody } from '../../src/wire/update.js';
import { ALL_CONTEXTS, addressV6, pathAttributesArb, prefixV4, prefixV6 } from './arbitraries-update.js';

/** Checks framing and returns the decoded messages. */
function unpack(msgs: Uint8Array[], ctx: CodecContext): UpdateMessage[] {
  return msgs.map((m) => {
    expect(m.length).toBeLessThanOrEqual(maxMessageSize(ctx));
    expect(Array.from(m.subarray(0, 16))).toEqual(new Array(16).fill(0xff));
    expect((m[16] << 8) | m[17]).toBe(m.length);
    expect(m[18]).toBe(2);
    const d = decodeUpdate(m.subarray(19), ctx);
    expect(d.issues).toBeUndefined();
    return d;
  });
}

/** Independent greedy count: message sizes from the RFC layout, not from the packer. */
function greedyCount(sizes: number[], fixed: number, mpBase: number, limit: number): number {
  let count = 0;
  let body = -1;
  for (const s of sizes) {
    const total = (b: number) => (mpBase < 0 ? fixed + b : fixed + mpBase + b + (mpBase + b > 255 ? 4 : 3));
    if (body >= 0 && total(body + s) <= limit) body += s;
    else {
      count++;
      body = s;
    }
  }
  return count;
}

function attributeBlockLength(attrs: PathAttributes, ctx: CodecContext): number {
  return encodeUpdateBody({ type: 'update', withdrawn: [], nlri: [], attributes: attrs }, ctx).length - 4;
}

const plainAttrs = (ctx: CodecContext) =>
  pathAttributesArb(ctx).map((a) => {
    const { mpReach: _r, mpUnreach: _u, ...rest } = a;
    return { origin: 0 as const, asPath: [], ...rest, nextHop: a.nextHop ?? Address.v4(0xc0000201) } satisfies PathAttributes;
  });

const prefixMix = fc
  .tuple(fc.array(prefixV4, { maxLength: 1500 }), fc.array(prefixV6, { maxLength: 600 }))
  .chain(([a, b]) => fc.shuffledSubarray([...a, ...b], { minLength: a.length + b.length }));

describe('packUpdates', () => {
  it('packs into the fewest messages that decode back to exactly the input', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL_CONTEXTS).chain((ctx) => fc.tuple(fc.constant(ctx), plainAttrs(ctx))),
        prefixMix,
        fc.oneof(
          addressV6.map((a) => [a]),
          fc.tuple(addressV6, addressV6).map(([a, b]) => [a, b]),
        ),
        fc.boolean(),
        ([ctx, attrs], prefixes, nextHopV6, withIds) => {
          const pathIds = withIds ? prefixes.map((_, i) => (i * 7919) >>> 0) : undefined;
          const msgs = packUpdates(attrs, prefixes, ctx, { nextHopV6, pathIds });
          const decoded = unpack(msgs, ctx);
          const v4 = prefixes.filter((p) => p.family === 4);
          const v6 = prefixes.filter((p) => p.family === 6);
          const got4: Prefix[] = [];
          const got6: Prefix[] = [];
          const ids4: number[] = [];
          const ids6: number[] = [];
          for (const d of decoded) {
            expect(d.withdrawn).toEqual([]);
            got4.push(...d.nlri);
            ids4.push(...(d.nlriPathIds ?? []));
            const { mpReach, ...rest } = d.attributes;
            if (mpReach !== undefined) {
              expect(d.nlri).toEqual([]);
              expect(mpReach.nextHops).toEqual(nextHopV6);
              got6.push(...mpReach.nlri);
              ids6.push(...(mpReach.pathIds ?? []));
              expect(rest).toEqual({ ...attrs, nextHop: undefined });
            } else expect(rest).toEqual(attrs);
          }
          expect(got4).toEqual(v4);
          expect(got6).toEqual(v6);
          const idOf = (p: Prefix) => (pathIds ? pathIds[prefixes.indexOf(p)] : 0);
          if (ctx.addPathV4) expect(ids4).toEqual(v4.map(idOf));
          if (ctx.addPathV6) expect(ids6).toEqual(v6.map(idOf));

          const limit = maxMessageSize(ctx);
          const size = (p: Prefix, addPath: boolean) => (addPath ? 5 : 1) + Math.ceil(p.length / 8);
          const a4 = attributeBlockLength(attrs, ctx);
          const a6 = attributeBlockLength({ ...attrs, nextHop: undefined }, ctx);
          const expected =
            greedyCount(
              v4.map((p) => size(p, ctx.addPathV4)),
              19 + 4 + a4,
              -1,
              limit,
            ) +
            greedyCount(
              v6.map((p) => size(p, ctx.addPathV6)),
              19 + 4 + a6,
              5 + 16 * nextHopV6.length,
              limit,
            );
          expect(msgs.length).toBe(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('fills 4096-byte messages: 3000 /24s with a small attribute set take 3 messages', () => {
    const prefixes = Array.from({ length: 3000 }, (_, i) => prefixV4Of(i));
    const attrs: PathAttributes = { origin: 0, asPath: [{ type: 2, asns: [65000] }], nextHop: Address.v4(0x0a000001) };
    const msgs = packUpdates(attrs, prefixes, DEFAULT_CONTEXT);
    // Header 19 + two lengths 4 + attributes 20 (ORIGIN 4, AS_PATH 9, NEXT_HOP 7) = 43; 4053 bytes left hold 1013 four-byte /24s.
    expect(msgs.map((m) => m.length)).toEqual([43 + 4 * 1013, 43 + 4 * 1013, 43 + 4 * 974]);
  });

  it('holds the buffer bound with the largest prefixes (ADD-PATH /32 and /128), at both size limits', () => {
    for (const extendedMessage of [false, true]) {
      const ctx = { ...DEFAULT_CONTEXT, extendedMessage, addPathV4: true, addPathV6: true };
      const prefixes = [
        ...Array.from({ length: 6000 }, (_, i) => Prefix.v4(i, 32)),
        ...Array.from({ length: 3000 }, (_, i) => Prefix.v6(0x20010db8, 0, 0, i, 128)),
      ];
      const attrs: PathAttributes = { origin: 0, asPath: [], nextHop: Address.v4(1) };
      const decoded = unpack(packUpdates(attrs, prefixes, ctx, { nextHopV6: [Address.parse('2001:db8::1')] }), ctx);
      expect(decoded.flatMap((d) => [...d.nlri, ...(d.attributes.mpReach?.nlri ?? [])])).toEqual(prefixes);
      const w = unpack(packWithdrawals(prefixes, ctx), ctx);
      expect(w.flatMap((d) => [...d.withdrawn, ...(d.attributes.mpUnreach?.withdrawn ?? [])])).toEqual(prefixes);
    }
  });

  it('writes the same bytes into an arena, each call after the last, back to back (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL_CONTEXTS).chain((ctx) => fc.tuple(fc.constant(ctx), fc.array(plainAttrs(ctx), { minLength: 1, maxLength: 6 }))),
        fc.array(prefixMix, { minLength: 6, maxLength: 6 }),
        addressV6,
        ([ctx, sets], mixes, nh) => {
          const arena = new PackArena(2048);
          const alone: Uint8Array[] = [];
          const shared: Uint8Array[] = [];
          const w = mixes[5];
          if (w.length > 0) {
            alone.push(...packWithdrawals(w, ctx));
            shared.push(...packWithdrawals(w, ctx, { arena }));
          }
          sets.forEach((attrs, i) => {
            if (mixes[i].length === 0) return;
            alone.push(...packUpdates(attrs, mixes[i], ctx, { nextHopV6: [nh] }));
            shared.push(...packUpdates(attrs, mixes[i], ctx, { nextHopV6: [nh], arena }));
          });
          expect(shared.map((m) => Buffer.from(m).toString('hex'))).toEqual(alone.map((m) => Buffer.from(m).toString('hex')));
          // Within a buffer, each message starts where the one before ended; a new buffer starts at 0.
          for (let i = 1; i < shared.length; i++) {
            const [a, b] = [shared[i - 1], shared[i]];
            expect(b.byteOffset).toBe(b.buffer === a.buffer ? a.byteOffset + a.length : 0);
          }
        },
      ),
    );
  });

  it('fills an arena chunk before taking another: 2,000 small calls share a few 64 KiB buffers', () => {
    const arena = new PackArena();
    const attrs: PathAttributes = { origin: 0, asPath: [{ type: 2, asns: [65000] }], nextHop: Address.v4(0x0a000001) };
    const msgs = Array.from({ length: 2000 }, (_, i) => packUpdates(attrs, [prefixV4Of(i)], DEFAULT_CONTEXT, { arena })).flat();
    const buffers = new Set(msgs.map((m) => m.buffer));
    const bytes = msgs.reduce((n, m) => n + m.length, 0);
    expect(buffers.size).toBeLessThanOrEqual(Math.ceil(bytes / ARENA_CHUNK) + 1);
  });

  it('says what is missing', () => {
    const v6 = prefixV6Of(1);
    expect(() => packUpdates({ origin: 0, asPath: [] }, [v6], DEFAULT_CONTEXT)).toThrow(/nextHopV6/);
    expect(() => packUpdates({ origin: 0, asPath: [] }, [prefixV4Of(1)], DEFAULT_CONTEXT)).toThrow(/attrs.nextHop/);
    expect(() => packUpdates({ origin: 0, asPath: [] }, [v6], DEFAULT_CONTEXT, { nextHopV6: [Address.v4(1)] })).toThrow(/not IPv6/);
    expect(() =>
      packUpdates(
        { origin: 0, asPath: [], nextHop: Address.v4(1), unknown: [{ flags: 0xc0, code: 99, value: new Uint8Array(4090) }] },
        [prefixV4Of(1)],
        DEFAULT_CONTEXT,
      ),
    ).toThrow(/no room/);
    expect(packUpdates({ origin: 0, asPath: [] }, [], DEFAULT_CONTEXT)).toEqual([]);
  });
});

function prefixV4Of(i: number): Prefix {
  return Prefix.v4((i << 8) >>> 0, 24);
}
function prefixV6Of(i: number): Prefix {
  return Prefix.v6(0x20010000 | (i & 0xffff), 0, 0, 0, 32);
}

describe('packWithdrawals', () => {
  it('packs withdrawals into the fewest messages that decode back to exactly the input', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ALL_CONTEXTS), prefixMix, fc.boolean(), (ctx, prefixes, withIds) => {
        const pathIds = withIds ? prefixes.map((_, i) => i + 1) : undefined;
        const msgs = packWithdrawals(prefixes, ctx, { pathIds });
        const decoded = unpack(msgs, ctx);
        const got4: Prefix[] = [];
        const got6: Prefix[] = [];
        for (const d of decoded) {
          expect(d.nlri).toEqual([]);
          got4.push(...d.withdrawn);
          if (d.attributes.mpUnreach !== undefined) {
            expect(d.withdrawn).toEqual([]);
            expect(Object.keys(d.attributes)).toEqual(['mpUnreach']);
            got6.push(...d.attributes.mpUnreach.withdrawn);
          } else expect(d.attributes).toEqual({});
        }
        const v4 = prefixes.filter((p) => p.family === 4);
        const v6 = prefixes.filter((p) => p.family === 6);
        expect(got4).toEqual(v4);
        expect(got6).toEqual(v6);
        const limit = maxMessageSize(ctx);
        const size = (p: Prefix, addPath: boolean) => (addPath ? 5 : 1) + Math.ceil(p.length / 8);
        const expected =
          greedyCount(
            v4.map((p) => size(p, ctx.addPathV4)),
            19 + 4,
            -1,
            limit,
          ) +
          greedyCount(
            v6.map((p) => size(p, ctx.addPathV6)),
            19 + 4,
            3,
            limit,
          );
        expect(msgs.length).toBe(expected);
      }),
      { numRuns: 150 },
    );
  });
});

describe('packer IPv6 prefix bytes', () => {
  it('writes every IPv6 length 0..128 exactly (round trip through decodeUpdate)', () => {
    const prefixes = Array.from({ length: 129 }, (_, len) => Prefix.containing(Address.v6(0xa5a5a5a5, 0xffffffff, 0x5a5a5a5a, 0xc3c3c3c3), len));
    const nextHopV6 = [Address.parse('2001:db8::1')];
    const msgs = packUpdates({ origin: 0, asPath: [] }, prefixes, DEFAULT_CONTEXT, { nextHopV6 });
    const got = msgs.flatMap((m) => decodeUpdate(m.subarray(19), DEFAULT_CONTEXT).attributes.mpReach?.nlri ?? []);
    expect(got.map(String)).toEqual(prefixes.map(String));
  });
});
