/**
 * A peer that changes update group (export policy or settings) is sent only
 * the difference from what it already has. Whatever happens before a flush —
 * several moves, ROUTE-REFRESH, a session coming up, originations and
 * withdrawals — what the peer ends up holding must equal what a RIB built
 * from scratch in the final state would send it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endOfRib } from '../../src/rib/eor.js';
import type { ExportPolicy } from '../../src/rib/ports.js';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import type { Send } from '../../src/rib/update-group.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A, CTX, decodeFake, FakePacker, P } from './helpers.js';

const SESSION: SessionInfo = { ctx: CTX, families: [4, 6], routerId: '10.255.0.1' };
const PREFIXES = ['198.51.100.0/24', '198.51.100.0/25', '203.0.113.0/24', '192.0.2.0/26', '2001:db8:1::/48', '2001:db8:2::/64'];
const ATTRS: PathAttributes[] = [
  { origin: 0, asPath: [] },
  { origin: 0, asPath: [], med: 7 },
  { origin: 2, asPath: [], communities: [65000 * 65536 + 1] },
];

/** Export policies a peer moves between: none, two filters, and one that modifies. */
const POLICIES: (ExportPolicy | undefined)[] = [
  undefined,
  (r) => ({ verdict: r.prefix.length <= 24 ? 'accept' : 'reject', attrs: r.attrs }),
  (r) => ({ verdict: r.prefix.family === 6 ? 'reject' : 'accept', attrs: r.attrs }),
  (r) => ({ verdict: 'accept', attrs: { ...r.attrs, med: 42 } }),
];

const PEERS = ['10.0.0.1', '10.0.0.2'];

type Op =
  | { op: 'originate'; prefix: number; attrs: number }
  | { op: 'withdraw'; prefix: number }
  | { op: 'policy'; peer: number; policy: number }
  | { op: 'nextHopSelf'; peer: number; on: boolean }
  | { op: 'refresh'; peer: number; family: 4 | 6 | undefined }
  | { op: 'reset'; peer: number }
  | { op: 'flush' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('originate' as const), prefix: fc.nat(PREFIXES.length - 1), attrs: fc.nat(ATTRS.length - 1) }),
  fc.record({ op: fc.constant('withdraw' as const), prefix: fc.nat(PREFIXES.length - 1) }),
  fc.record({ op: fc.constant('policy' as const), peer: fc.nat(PEERS.length - 1), policy: fc.nat(POLICIES.length - 1) }),
  fc.record({ op: fc.constant('nextHopSelf' as const), peer: fc.nat(PEERS.length - 1), on: fc.boolean() }),
  fc.record({ op: fc.constant('refresh' as const), peer: fc.nat(PEERS.length - 1), family: fc.constantFrom(4 as const, 6 as const, undefined) }),
  fc.record({ op: fc.constant('reset' as const), peer: fc.nat(PEERS.length - 1) }),
  fc.constant({ op: 'flush' as const }),
);

function build() {
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
  const ids = PEERS.map((a) => rib.addPeer({ address: A(a), asn: 65000, localAddressV4: A('192.0.2.100'), localAddressV6: A('2001:db8::100') }));
  return { rib, ids };
}

/** A receiving peer: applies the FakePacker's readable messages to its Adj-RIB-In. */
class Receiver {
  readonly routes = new Map<string, string>();
  eors = 0;

  apply(messages: readonly Uint8Array[]): void {
    for (const m of messages) {
      if (isEor(m)) {
        this.eors++;
        continue;
      }
      const [kind, ...rest] = decodeFake(m).split(' ');
      if (kind === 'W') for (const p of rest) this.routes.delete(p);
      else if (kind === 'A') for (const p of rest.slice(2)) this.routes.set(p, `${rest[0]} ${rest[1]}`);
      else throw new Error(`unexpected message ${decodeFake(m)}`);
    }
  }
}

const isEor = (m: Uint8Array) => [4, 6].some((f) => m.length === endOfRib(f as 4 | 6).length && m.every((b, i) => b === endOfRib(f as 4 | 6)[i]));

function deliver(sends: Send[], ids: string[], receivers: Receiver[]): void {
  for (const s of sends) receivers[ids.indexOf(s.peerId)].apply(s.messages);
}

/** The final state from scratch: same originations and peer settings, sessions up, one dump. */
function fromScratch(origins: Map<number, number>, policy: number[], nhs: boolean[]): Map<string, string>[] {
  const { rib, ids } = build();
  for (const [p, a] of origins) rib.originate(P(PREFIXES[p]), ATTRS[a], 0);
  ids.forEach((id, i) => {
    rib.reconfigurePeer(id, { exportPolicy: POLICIES[policy[i]], nextHopSelf: nhs[i] }, 0);
    rib.peerUp(id, SESSION, 0);
  });
  const receivers = ids.map(() => new Receiver());
  deliver(rib.flushDue(1000), ids, receivers);
  return receivers.map((r) => r.routes);
}

function run(ops: Op[], upAt: number[]) {
  const { rib, ids } = build();
  const receivers = ids.map(() => new Receiver());
  const origins = new Map<number, number>();
  const policy = ids.map(() => 0);
  const nhs = ids.map(() => false);
  let now = 0;
  ops.forEach((o, i) => {
    ids.forEach((id, p) => upAt[p] === i && rib.peerUp(id, SESSION, now));
    now += 1;
    switch (o.op) {
      case 'originate':
        rib.originate(P(PREFIXES[o.prefix]), ATTRS[o.attrs], now);
        origins.set(o.prefix, o.attrs);
        break;
      case 'withdraw':
        rib.withdraw(P(PREFIXES[o.prefix]), now);
        origins.delete(o.prefix);
        break;
      case 'policy':
        rib.setExportPolicy(ids[o.peer], POLICIES[o.policy], now);
        policy[o.peer] = o.policy;
        break;
      case 'nextHopSelf':
        rib.reconfigurePeer(ids[o.peer], { nextHopSelf: o.on }, now);
        nhs[o.peer] = o.on;
        break;
      case 'refresh':
        rib.routeRefresh(ids[o.peer], now, o.family);
        break;
      case 'reset': // the session restarts: the peer starts from nothing
        if (upAt[o.peer] > i) break;
        rib.peerDown(ids[o.peer], now);
        receivers[o.peer] = new Receiver();
        rib.peerUp(ids[o.peer], SESSION, now);
        break;
      case 'flush':
        now += 100;
        deliver(rib.flushDue(now), ids, receivers);
    }
  });
  ids.forEach((id, p) => upAt[p] >= ops.length && rib.peerUp(id, SESSION, now));
  now += 1;
  deliver(rib.flushDue(now + 1000), ids, receivers);
  return { rib, ids, receivers, origins, policy, nhs };
}

describe('update-group moves before a flush', () => {
  it('a peer moved twice before the window closes still gets the withdrawals of its first group', () => {
    const { rib, ids } = build();
    const [a, b] = ids;
    const receivers = ids.map(() => new Receiver());
    rib.originateMany([P('198.51.100.0/24'), P('198.51.100.0/25')], ATTRS[0], 0);
    rib.peerUp(a, SESSION, 0);
    rib.peerUp(b, SESSION, 0);
    deliver(rib.flushDue(10), ids, receivers);
    expect([...receivers[0].routes.keys()].sort()).toEqual(['198.51.100.0/24', '198.51.100.0/25']);
    // Only /24 and shorter, then: also IPv6 refused. Neither flush in between.
    rib.setExportPolicy(a, POLICIES[1], 20);
    rib.setExportPolicy(a, POLICIES[2], 21);
    rib.setExportPolicy(a, POLICIES[1], 22);
    deliver(rib.flushDue(100), ids, receivers);
    expect([...receivers[0].routes.keys()]).toEqual(['198.51.100.0/24']);
    expect([...receivers[1].routes.keys()].sort()).toEqual(['198.51.100.0/24', '198.51.100.0/25']);
  });

  it('a withdrawal in the same window as a ROUTE-REFRESH is still sent', () => {
    const { rib, ids } = build();
    const receivers = ids.map(() => new Receiver());
    rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24')], ATTRS[0], 0);
    rib.peerUp(ids[0], SESSION, 0);
    deliver(rib.flushDue(10), ids, receivers);
    rib.routeRefresh(ids[0], 20);
    rib.withdraw(P('203.0.113.0/24'), 21);
    deliver(rib.flushDue(100), ids, receivers);
    expect([...receivers[0].routes.keys()]).toEqual(['198.51.100.0/24']);
  });

  it('a peer that moves group before its first dump still gets the table and End-of-RIB', () => {
    const { rib, ids } = build();
    const receivers = ids.map(() => new Receiver());
    rib.originateMany([P('198.51.100.0/24'), P('2001:db8:1::/48')], ATTRS[0], 0);
    rib.peerUp(ids[0], SESSION, 0);
    rib.peerUp(ids[1], SESSION, 0);
    rib.setExportPolicy(ids[0], POLICIES[3], 1);
    deliver(rib.flushDue(100), ids, receivers);
    expect([...receivers[0].routes.keys()].sort()).toEqual(['198.51.100.0/24', '2001:db8:1::/48']);
    expect([...receivers[0].routes.values()].every((v) => v.includes('"med":42'))).toBe(true);
    expect(receivers[0].eors).toBe(2);
  });

  it('any sequence of moves, refreshes and route changes leaves each peer with the from-scratch Adj-RIB-Out (property)', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), fc.array(fc.nat(32), { minLength: PEERS.length, maxLength: PEERS.length }), (ops, upAt) => {
        const r = run(ops, upAt);
        const want = fromScratch(r.origins, r.policy, r.nhs);
        r.receivers.forEach((rcv, i) => {
          expect(new Map([...rcv.routes].sort())).toEqual(new Map([...want[i]].sort()));
          expect(rcv.eors).toBe(2); // exactly one End-of-RIB per family, whatever moved when
          // And the RIB's own view of what the peer holds agrees.
          expect(r.rib.adjRibOut(r.ids[i])?.size ?? 0).toBe(want[i].size);
        });
      }),
      { numRuns: 300 },
    );
  });
});
