import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { ImportPolicy } from '../../src/rib/ports.js';
import { Rib } from '../../src/rib/rib.js';
import type { CodecContext } from '../../src/wire/context.js';
import { plainUpdate } from '../../src/wire/received.js';
import { decodeUpdate, encodeUpdateBody } from '../../src/wire/update.js';
import type { UpdateMessage } from '../../src/wire/types.js';
import { ALL_CONTEXTS, ctxName, updateMessageArb } from '../wire/arbitraries-update.js';
import { ebgpAttrs, FakePacker, update } from './helpers.js';

/**
 * Rib.ingest reads a decoded UPDATE's prefix keys (nlriKeys, withdrawnKeys,
 * MP_REACH / MP_UNREACH keys) and builds no Prefix; a message built by hand
 * has only the Prefix lists. Both must leave the same tables.
 */

const PEER = Address.parse('10.0.0.1');

function rib(policy: ImportPolicy | undefined): { rib: Rib; peer: string } {
  const r = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
  const peer = r.addPeer({ address: PEER, asn: 65001, importPolicy: policy });
  return { rib: r, peer };
}

/** Everything ingest leaves behind, as text: both Adj-RIB-In views and the Loc-RIB. */
function tables(r: Rib, peer: string): unknown {
  const view = (which: 'pre' | 'post') => r.adjRibIn(peer, which).map((v) => [v.prefix.toString(), v.pathId, v.attrs, v.stale]);
  const loc: [string, unknown][] = [];
  r.forEachMultipath((p, mp) => loc.push([p.toString(), mp.map((x) => [x.pathId, x.attrs.attrs])]));
  return { pre: view('pre'), post: view('post'), loc: loc.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)) };
}

/** Rejects prefixes longer than /20 and tags the rest: reads each route's prefix. */
const byLength: ImportPolicy = (route) =>
  route.prefix.length > 20 ? { verdict: 'reject', attrs: route.attrs } : { verdict: 'accept', attrs: { ...route.attrs, med: 5 } };

describe('Rib.ingest from prefix keys', () => {
  afterEach(() => vi.restoreAllMocks());

  for (const ctx of ALL_CONTEXTS.filter((c) => c.asn4 && !c.extendedMessage)) {
    it(`leaves the same tables as the same UPDATEs built by hand (property, ${ctxName(ctx)})`, () => {
      fc.assert(
        fc.property(fc.array(updateMessageArb(ctx as CodecContext), { minLength: 1, maxLength: 6 }), fc.boolean(), (msgs: UpdateMessage[], withPolicy) => {
          const policy = withPolicy ? byLength : undefined;
          const a = rib(policy);
          const b = rib(policy);
          for (const m of msgs) {
            const decoded = decodeUpdate(encodeUpdateBody(m, ctx), ctx);
            expect(decoded.nlriKeys).toBeDefined();
            const plain = plainUpdate(decoded);
            expect(plain.nlriKeys).toBeUndefined();
            a.rib.ingest(a.peer, decoded, 0);
            b.rib.ingest(b.peer, plain, 0);
          }
          expect(tables(a.rib, a.peer)).toEqual(tables(b.rib, b.peer));
        }),
        { numRuns: 40 },
      );
    });
  }

  it('builds no Prefix for a decoded UPDATE without an import policy, nor for a policy that does not read the prefix', () => {
    const ctx: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };
    const prefixes = Array.from({ length: 200 }, (_, i) => `10.${i}.0.0/16`);
    const wire = encodeUpdateBody(update(ebgpAttrs([65001], '10.0.0.1'), prefixes), ctx);
    const v6 = encodeUpdateBody(
      {
        type: 'update',
        withdrawn: [],
        nlri: [],
        attributes: {
          origin: 0,
          asPath: [{ type: 2, asns: [65001] }],
          mpReach: { afi: 2, safi: 1, nextHops: [Address.parse('2001:db8::1')], nlri: [Prefix.parse('2001:db8:1::/48'), Prefix.parse('2001:db8:1:2::/64')] },
        },
      },
      ctx,
    );
    const withdraw = encodeUpdateBody(update({}, [], prefixes.slice(0, 50)), ctx);
    const count = (policy: ImportPolicy | undefined): number => {
      const r = rib(policy);
      const msgs = [decodeUpdate(wire, ctx), decodeUpdate(v6, ctx), decodeUpdate(withdraw, ctx)];
      const v4 = vi.spyOn(Prefix, 'v4');
      const v6s = vi.spyOn(Prefix, 'v6');
      for (const m of msgs) r.rib.ingest(r.peer, m, 0);
      const made = v4.mock.calls.length + v6s.mock.calls.length;
      vi.restoreAllMocks();
      expect(r.rib.locRibSize).toBe(150 + 2);
      return made;
    };
    expect(count(undefined)).toBe(0);
    expect(count((route) => ({ verdict: 'accept', attrs: { ...route.attrs, med: 1 } }))).toBe(0);
    // A policy reading the prefix gets one, built on demand: one per route imported.
    expect(count((route) => ({ verdict: route.prefix.length > 0 ? 'accept' : 'reject', attrs: route.attrs }))).toBe(202);
  });
});
