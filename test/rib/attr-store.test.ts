import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttrStore, attrsEqual, hashAttrs } from '../../src/rib/attr-store.js';
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
    const y = s.acquire({ origin: 0, mpReach: { afi: 2, safi: 1, nextHops: [nh], nlri: [P('2001:db8:2::/48')] }, mpUnreach: { afi: 2, safi: 1, withdrawn: [] } });
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
        asPath: fc.array(fc.record({ type: fc.constantFrom(1 as const, 2 as const), asns: fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }) }), { maxLength: 2 }),
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
});
