import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttrStore, attrsEqual, hashAttrs } from '../../src/rib/attr-store.js';
import { Address } from '../../src/net/address.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A, P } from './helpers.js';

const base = (): PathAttributes => ({ origin: 0, asPath: [{ type: 2, asns: [65001, 65002] }], nextHop: A('192.0.2.1'), communities: [1, 2], med: 5 });

describe('AttrStore', () => {
  it('maps equal attribute sets to one frozen shared object', () => {
    const s = new AttrStore();
    const x = s.acquire(base());
    const y = s.acquire(base());
    expect(y).toBe(x);
    expect(x.refs).toBe(2);
    expect(s.size).toBe(1);
    expect(Object.isFrozen(x.attrs)).toBe(true);
    expect(Object.isFrozen(x.attrs.asPath![0].asns)).toBe(true);
    expect(() => (x.attrs.communities as number[]).push(3)).toThrow();
  });

  it('treats community order as significant and distinguishes every field', () => {
    const s = new AttrStore();
    const x = s.acquire(base());
    expect(s.acquire({ ...base(), communities: [2, 1] })).not.toBe(x);
    expect(s.acquire({ ...base(), med: 6 })).not.toBe(x);
    expect(s.acquire({ ...base(), nextHop: A('192.0.2.2') })).not.toBe(x);
    expect(s.acquire({ ...base(), asPath: [{ type: 1, asns: [65001, 65002] }] })).not.toBe(x);
    expect(s.acquire({ ...base(), largeCommunities: [{ global: 1, local1: 2, local2: 3 }] })).not.toBe(x);
    expect(s.acquire({ ...base(), extendedCommunities: [5n] })).not.toBe(x);
    expect(s.size).toBe(7);
  });

  it('drops MP_REACH NLRI and MP_UNREACH but keeps MP_REACH next hops', () => {
    const s = new AttrStore();
    const nh = A('2001:db8::1');
    const x = s.acquire({ origin: 0, mpReach: { afi: 2, safi: 1, nextHops: [nh], nlri: [P('2001:db8:1::/48')] } });
    const y = s.acquire({
      origin: 0,
      mpReach: { afi: 2, safi: 1, nextHops: [nh], nlri: [P('2001:db8:2::/48')] },
      mpUnreach: { afi: 2, safi: 1, withdrawn: [] },
    });
    expect(y).toBe(x);
    expect(x.attrs.mpReach!.nlri).toEqual([]);
    expect(x.attrs.mpUnreach).toBeUndefined();
    expect(s.acquire({ origin: 0, mpReach: { afi: 2, safi: 1, nextHops: [A('2001:db8::2')], nlri: [] } })).not.toBe(x);
  });

  it('removes a set when its last reference goes, and refuses over-release', () => {
    const s = new AttrStore();
    const x = s.acquire(base());
    s.retain(x);
    s.release(x);
    expect(s.size).toBe(1);
    s.release(x);
    expect(s.size).toBe(0);
    expect(() => s.release(x)).toThrow(/released more often/);
    const again = s.acquire(base());
    expect(again).not.toBe(x);
    expect(again.refs).toBe(1);
    // Re-interning the frozen object of a live set is a lookup.
    expect(s.acquire(again.attrs)).toBe(again);
  });

  it('keeps an encoded-bytes slot per encoding context', () => {
    const s = new AttrStore();
    const x = s.acquire(base());
    expect(x.encodedFor('asn4')).toBeUndefined();
    x.setEncoded('asn4', Uint8Array.of(1, 2));
    x.setEncoded('asn2', Uint8Array.of(3));
    expect(Array.from(x.encodedFor('asn4')!)).toEqual([1, 2]);
    expect(Array.from(x.encodedFor('asn2')!)).toEqual([3]);
  });

  it('hashes and compares consistently (property)', () => {
    const attrsArb = fc.record(
      {
        origin: fc.constantFrom(0 as const, 1 as const, 2 as const),
        asPath: fc.array(fc.record({ type: fc.constantFrom(1 as const, 2 as const), asns: fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }) }), {
          maxLength: 2,
        }),
        med: fc.integer({ min: 0, max: 3 }),
        communities: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(attrsArb, attrsArb, (a, b) => {
        const s = new AttrStore();
        const x = s.acquire(a as PathAttributes);
        const y = s.acquire(b as PathAttributes);
        const eq = attrsEqual(x.attrs, y.attrs);
        expect(x === y).toBe(eq);
        if (eq) expect(hashAttrs(x.attrs)).toBe(hashAttrs(y.attrs));
        expect(JSON.stringify(x.attrs) === JSON.stringify(y.attrs)).toBe(eq);
      }),
    );
  });
  it('compares every field as its canonical form does (property, all attributes)', () => {
    const addr = fc.constantFrom('192.0.2.1', '192.0.2.2', '2001:db8::1').map((t) => Address.parse(t));
    // few values per leaf, so that two sets often differ in one place only
    const small = fc.integer({ min: 0, max: 1 });
    const attrsArb = fc.record(
      {
        origin: fc.constantFrom(0 as const, 1 as const, 2 as const),
        asPath: fc.array(fc.record({ type: fc.constantFrom(1 as const, 2 as const), asns: fc.array(small, { maxLength: 2 }) }), { maxLength: 2 }),
        nextHop: addr,
        med: small,
        localPref: small,
        atomicAggregate: fc.boolean(),
        aggregator: fc.record({ asn: small, address: addr }),
        communities: fc.array(small, { maxLength: 2 }),
        originatorId: addr,
        clusterList: fc.array(addr, { maxLength: 2 }),
        mpReach: fc.record({ afi: fc.constant(2), safi: fc.constant(1), nextHops: fc.array(addr, { maxLength: 2 }), nlri: fc.constant([]) }),
        extendedCommunities: fc.array(fc.constantFrom(0n, 1n, 1n << 40n), { maxLength: 2 }),
        largeCommunities: fc.array(fc.record({ global: small, local1: small, local2: small }), { minLength: 1, maxLength: 1 }),
        unknown: fc.array(
          fc.record({ flags: fc.constantFrom(0xc0, 0xe0), code: fc.constantFrom(99, 100), value: fc.uint8Array({ max: 1, minLength: 1, maxLength: 2 }) }),
          { minLength: 1, maxLength: 1 },
        ),
      },
      { requiredKeys: [] },
    );
    const FIELDS = [
      'origin',
      'asPath',
      'nextHop',
      'med',
      'localPref',
      'atomicAggregate',
      'aggregator',
      'communities',
      'originatorId',
      'clusterList',
      'mpReach',
      'extendedCommunities',
      'largeCommunities',
      'unknown',
    ];
    const deepCopy = (v: unknown): unknown =>
      v instanceof Address
        ? Address.parse(v.toString())
        : v instanceof Uint8Array
          ? v.slice()
          : Array.isArray(v)
            ? v.map(deepCopy)
            : v !== null && typeof v === 'object'
              ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deepCopy(x)]))
              : v;
    const canon = (a: PathAttributes) =>
      JSON.stringify(a, (_k, v: unknown) =>
        typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Array.from(v) : v instanceof Address ? v.toString() : v,
      );
    fc.assert(
      fc.property(attrsArb, attrsArb, fc.constantFrom('other', 'copy', ...FIELDS), (a, b, how) => {
        const s = new AttrStore();
        const x = s.acquire(a as PathAttributes);
        // another set; a deep copy (equal by value, not by identity); or a copy with one field taken from the other set
        let other: Record<string, unknown> = b;
        if (how !== 'other') {
          other = deepCopy(a) as Record<string, unknown>;
          if (how !== 'copy') other[how] = deepCopy((b as Record<string, unknown>)[how]);
        }
        const y = s.acquire(other as PathAttributes);
        const want = canon(x.attrs) === canon(y.attrs);
        expect(attrsEqual(x.attrs, y.attrs)).toBe(want);
        expect(x === y).toBe(want);
        if (want) expect(hashAttrs(x.attrs)).toBe(hashAttrs(y.attrs));
      }),
      { numRuns: 1000 },
    );
  });
});
