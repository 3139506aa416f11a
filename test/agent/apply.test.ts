/**
 * The agent carries the reconciler's operations out on a speaker
 * (src/agent/apply.ts): applying the operations of A→B to a speaker holding
 * A yields exactly B.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyOperations } from '../../src/agent/apply.js';
import { peerOptions, reconcile } from '../../src/kubernetes/reconcile.js';
import { FakeSpeaker } from './fake-speaker.js';
import { peer, plan, route } from './plans.js';

const ADDRS = ['192.0.2.1', '192.0.2.2', '192.0.2.3', '2001:db8::1', '2001:db8::2'];
const PREFIXES = ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/24', '198.18.0.0/16', '203.0.113.10/32', '2001:db8:1::/48', '2001:db8:1::5/128'];
const COMMS = ['65000:1', '65000:2', '64512:300'];

const arbRoutes = fc
  .uniqueArray(fc.record({ prefix: fc.constantFrom(...PREFIXES), comms: fc.subarray(COMMS) }), { selector: (r) => r.prefix, maxLength: PREFIXES.length })
  .map((rs) => rs.map((r) => route(r.prefix, r.comms)));
const arbPeers = fc
  .uniqueArray(
    fc.record({
      address: fc.constantFrom(...ADDRS),
      asn: fc.constantFrom(64512, 65000),
      port: fc.constantFrom(179, 1790),
      passive: fc.boolean(),
      gr: fc.boolean(),
      rr: fc.boolean(),
      refused: fc.boolean(),
      desc: fc.constantFrom('a', 'b'),
    }),
    { selector: (p) => p.address, maxLength: ADDRS.length },
  )
  .map((ps) =>
    ps.map((p) =>
      peer(p.address, {
        id: `Global_${p.desc}_${p.address}`,
        asn: p.asn,
        port: p.port,
        passive: p.passive,
        gracefulRestart: p.gr,
        routeReflectorClient: p.rr,
        refused: p.refused,
        refusedSettings: p.refused ? [{ field: 'spec.password', message: 'no MD5' }] : [],
      }),
    ),
  );
const arbPlan = fc.tuple(arbRoutes, arbPeers).map(([r, p]) => plan(r, p));

function speakerView(s: FakeSpeaker) {
  return {
    routes: [...s.routes.entries()].map(([p, r]) => [p, [...(r.attrs?.communities ?? []), ...(r.attrs?.exportCommunities ?? [])]]).sort(),
    peers: [...s.peers.values()].sort((x, y) => (x.address < y.address ? -1 : 1)),
  };
}

function planView(p: ReturnType<typeof plan>) {
  return {
    routes: p.routes.map((r) => [r.prefix.toString(), r.communities.map((c) => c.text)]).sort(),
    peers: p.peers
      .filter((x) => !x.refused)
      .map((p) => peerOptions(p))
      .sort((x, y) => (x.address < y.address ? -1 : 1)),
  };
}

describe('reconcile property', () => {
  it('applying the operations of A→B to a speaker holding A yields exactly B', async () => {
    await fc.assert(
      fc.asyncProperty(arbPlan, arbPlan, async (A, B) => {
        const s = new FakeSpeaker();
        expect(await applyOperations(s, reconcile(undefined, A))).toEqual([]);
        expect(speakerView(s)).toEqual(planView(A));
        const mark = s.calls.length;
        expect(await applyOperations(s, reconcile(A, B))).toEqual([]);
        expect(speakerView(s)).toEqual(planView(B));
        // Untouched peers see no call at all.
        const touched = new Set(
          s.calls.slice(mark).flatMap((c) => ('opts' in c && c.opts && 'address' in c.opts ? [c.opts.address] : 'address' in c ? [c.address] : [])),
        );
        for (const p of B.peers) {
          const old = A.peers.find((q) => q.address.equals(p.address));
          if (old && !old.refused && !p.refused && JSON.stringify(peerOptions(old)) === JSON.stringify(peerOptions(p)))
            expect(touched.has(p.address.toString())).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });
});
