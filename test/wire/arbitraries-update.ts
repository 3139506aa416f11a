import fc from 'fast-check';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { CodecContext } from '../../src/wire/context.js';
import type { AsPathSegment, MpReach, MpUnreach, PathAttributes, RawAttribute, UpdateMessage } from '../../src/wire/types.js';

/**
 * fast-check arbitraries for UPDATE messages that the codec can carry
 * losslessly in a given context, so `decode(encode(m))` must equal `m`:
 * segments of 1..255 ASNs (longer ones are split on the wire), confederation
 * segments only at the front of the path and, on 2-byte-AS sessions, with
 * 2-byte members (RFC 6793 keeps them out of AS4_PATH); lists that are empty
 * on the wire left out; mandatory attributes present whenever NLRI is; path
 * ids present exactly when ADD-PATH is negotiated; sizes well inside 4096.
 */

const u32 = fc.integer({ min: 0, max: 0xffffffff });

export const prefixV4 = fc.tuple(u32, fc.integer({ min: 0, max: 32 })).map(([v, len]) => Prefix.containing(Address.v4(v), len));
export const prefixV6 = fc
  .tuple(u32, u32, u32, u32, fc.integer({ min: 0, max: 128 }))
  .map(([a, b, c, d, len]) => Prefix.containing(Address.v6(a, b, c, d), len));
export const addressV4 = u32.map((v) => Address.v4(v));
export const addressV6 = fc.tuple(u32, u32, u32, u32).map(([a, b, c, d]) => Address.v6(a, b, c, d));
const linkLocal = fc.tuple(u32, u32).map(([c, d]) => Address.v6(0xfe800000, 0, c, d));

const asn = fc.oneof(fc.integer({ min: 1, max: 0xffff }), fc.integer({ min: 0x10000, max: 0xffffffff }));
const asn2 = fc.integer({ min: 1, max: 0xffff });

export function asPathArb(asn4: boolean): fc.Arbitrary<AsPathSegment[]> {
  const member = asn4 ? asn : asn2;
  const confed = fc.record({ type: fc.constantFrom(3 as const, 4 as const), asns: fc.array(member, { minLength: 1, maxLength: 4 }) });
  const seg = fc.oneof(
    { weight: 4, arbitrary: fc.record({ type: fc.constant(2 as const), asns: fc.array(asn, { minLength: 1, maxLength: 10 }) }) },
    { weight: 1, arbitrary: fc.record({ type: fc.constant(1 as const), asns: fc.array(asn, { minLength: 1, maxLength: 5 }) }) },
  );
  return fc.tuple(fc.array(confed, { maxLength: 2 }), fc.array(seg, { maxLength: 4 })).map(([c, s]) => [...c, ...s]);
}

const KNOWN = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 15, 16, 17, 18, 32]);
const unknownCode = fc.integer({ min: 1, max: 255 }).filter((c) => !KNOWN.has(c));

export const unknownArb: fc.Arbitrary<RawAttribute[]> = fc
  .uniqueArray(fc.record({ flags: fc.constant(0xe0), code: unknownCode, value: fc.uint8Array({ maxLength: 300 }) }), {
    selector: (u) => u.code,
    minLength: 1,
    maxLength: 3,
  })
  .map((list) => [...list].sort((a, b) => a.code - b.code));

function ids(n: number): fc.Arbitrary<number[]> {
  return fc.array(u32, { minLength: n, maxLength: n });
}

function withIds<T extends object>(base: fc.Arbitrary<T>, count: (t: T) => number, on: boolean): fc.Arbitrary<T & { pathIds?: number[] }> {
  if (!on) return base;
  return base.chain((t) => ids(count(t)).map((pathIds) => ({ ...t, pathIds })));
}

export function mpReachArb(ctx: CodecContext): fc.Arbitrary<MpReach> {
  const v6 = withIds(
    fc.record({
      afi: fc.constant(2),
      safi: fc.constant(1),
      nextHops: fc.oneof(
        addressV6.map((a) => [a]),
        fc.tuple(addressV6, linkLocal).map(([g, l]) => [g, l]),
      ),
      nlri: fc.array(prefixV6, { maxLength: 30 }),
    }),
    (m) => m.nlri.length,
    ctx.addPathV6,
  );
  const v4 = withIds(
    fc.record({ afi: fc.constant(1), safi: fc.constant(1), nextHops: addressV4.map((a) => [a]), nlri: fc.array(prefixV4, { maxLength: 30 }) }),
    (m) => m.nlri.length,
    ctx.addPathV4,
  );
  const raw = fc.record({
    afi: fc.constant(25),
    safi: fc.constant(70),
    nextHops: fc.constant([]),
    nlri: fc.constant([]),
    raw: fc.uint8Array({ maxLength: 40 }),
  });
  return fc.oneof({ weight: 4, arbitrary: v6 }, { weight: 2, arbitrary: v4 }, { weight: 1, arbitrary: raw });
}

export function mpUnreachArb(ctx: CodecContext): fc.Arbitrary<MpUnreach> {
  const v6 = withIds(
    fc.record({ afi: fc.constant(2), safi: fc.constant(1), withdrawn: fc.array(prefixV6, { maxLength: 30 }) }),
    (m) => m.withdrawn.length,
    ctx.addPathV6,
  );
  const v4 = withIds(
    fc.record({ afi: fc.constant(1), safi: fc.constant(1), withdrawn: fc.array(prefixV4, { maxLength: 30 }) }),
    (m) => m.withdrawn.length,
    ctx.addPathV4,
  );
  const raw = fc.record({ afi: fc.constant(25), safi: fc.constant(70), withdrawn: fc.constant([]), raw: fc.uint8Array({ maxLength: 40 }) });
  return fc.oneof({ weight: 4, arbitrary: v6 }, { weight: 2, arbitrary: v4 }, { weight: 1, arbitrary: raw });
}

export function pathAttributesArb(ctx: CodecContext): fc.Arbitrary<PathAttributes> {
  return fc.record(
    {
      origin: fc.constantFrom(0 as const, 1 as const, 2 as const),
      asPath: asPathArb(ctx.asn4),
      nextHop: addressV4,
      med: u32,
      localPref: u32,
      atomicAggregate: fc.constant(true),
      aggregator: fc.record({ asn, address: addressV4 }),
      communities: fc.array(u32, { minLength: 1, maxLength: 10 }),
      originatorId: addressV4,
      clusterList: fc.array(addressV4, { minLength: 1, maxLength: 10 }),
      mpReach: mpReachArb(ctx),
      mpUnreach: mpUnreachArb(ctx),
      extendedCommunities: fc.array(fc.bigInt({ min: 0n, max: 0xffffffffffffffffn }), { minLength: 1, maxLength: 10 }),
      largeCommunities: fc.array(fc.record({ global: u32, local1: u32, local2: u32 }), { minLength: 1, maxLength: 10 }),
      unknown: unknownArb,
    },
    { requiredKeys: [] },
  );
}

/** Arbitrary UPDATE messages valid for `ctx` (mandatory attributes filled in when NLRI is present). */
export function updateMessageArb(ctx: CodecContext): fc.Arbitrary<UpdateMessage> {
  const list = (n: number) => fc.array(prefixV4, { maxLength: n });
  return fc
    .tuple(list(30), list(30), pathAttributesArb(ctx), fc.tuple(fc.constantFrom(0 as const, 1 as const, 2 as const), asPathArb(ctx.asn4), addressV4))
    .chain(([withdrawn, nlri, attributes, [origin, asPath, nextHop]]) => {
      let a: PathAttributes = attributes;
      const reach = a.mpReach !== undefined && (a.mpReach.nlri.length > 0 || a.mpReach.raw !== undefined);
      if (nlri.length > 0 || reach) a = { origin: a.origin ?? origin, asPath: a.asPath ?? asPath, ...a };
      if (nlri.length > 0 && a.nextHop === undefined) a = { ...a, nextHop };
      const base = { type: 'update' as const, withdrawn, attributes: a, nlri };
      if (!ctx.addPathV4) return fc.constant<UpdateMessage>(base);
      return fc.tuple(ids(withdrawn.length), ids(nlri.length)).map(([w, n]): UpdateMessage => ({ ...base, withdrawnPathIds: w, nlriPathIds: n }));
    });
}

/** All 16 combinations of the context flags. */
export const ALL_CONTEXTS: readonly CodecContext[] = (() => {
  const out: CodecContext[] = [];
  for (let i = 0; i < 16; i++) out.push({ asn4: (i & 1) !== 0, extendedMessage: (i & 2) !== 0, addPathV4: (i & 4) !== 0, addPathV6: (i & 8) !== 0 });
  return out;
})();

export function ctxName(c: CodecContext): string {
  return `asn4=${c.asn4} ext=${c.extendedMessage} addPathV4=${c.addPathV4} addPathV6=${c.addPathV6}`;
}
