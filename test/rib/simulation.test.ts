/**
 * Three routing cores over in-memory links with a virtual clock: each RIB's
 * flushed UPDATE bytes (the real packer) are decoded (the real codec) and
 * ingested by the RIB at the other end. No sockets, no timers: the routing
 * behaviour alone — propagation, loop refusal, withdrawal, policy changes.
 */
import { describe, expect, it } from 'vitest';
import { compilePolicy, evaluate } from '../../src/policy/engine.js';
import type { PolicyConfigDef } from '../../src/policy/definitions.js';
import type { ExportPolicy, ImportPolicy } from '../../src/rib/ports.js';
import { Rib } from '../../src/rib/rib.js';
import { DEFAULT_CONTEXT } from '../../src/wire/context.js';
import { decodeMessage } from '../../src/wire/message.js';
import { isEndOfRib } from '../../src/wire/update.js';
import { A, P } from './helpers.js';

interface Node {
  readonly name: string;
  readonly address: string;
  readonly asn: number;
  readonly rib: Rib;
}

/** Speakers joined by links; `run` moves time forward and carries every flushed message across. */
class Net {
  now = 0;
  readonly nodes = new Map<string, Node>();
  /** Messages carried per direction "from>to", End-of-RIB excluded. */
  readonly carried = new Map<string, { withdrawn: string[]; announced: string[] }[]>();
  sessionsUp = 0;

  add(name: string, address: string, asn: number, clusterId?: string): Node {
    const n = { name, address, asn, rib: new Rib({ localAsn: asn, routerId: address, clusterId }) };
    this.nodes.set(name, n);
    return n;
  }

  /** Configures both ends, then brings the session up (each end joins its update group and dumps). */
  link(a: string, b: string, opts: { [end: string]: { rrClient?: boolean; exportPolicy?: ExportPolicy } } = {}): void {
    const [x, y] = [this.nodes.get(a)!, this.nodes.get(b)!];
    for (const [me, other] of [
      [x, y],
      [y, x],
    ]) {
      me.rib.addPeer({ address: A(other.address), asn: other.asn, localAddressV4: A(me.address), ...opts[me.name] });
    }
    for (const [me, other] of [
      [x, y],
      [y, x],
    ])
      me.rib.peerUp(other.address, { ctx: DEFAULT_CONTEXT, families: [4], routerId: other.address }, this.now);
    this.sessionsUp++;
  }

  /** Advances the clock until every RIB is quiet, delivering what each flush produces. */
  run(): void {
    for (let rounds = 0; rounds < 100; rounds++) {
      const deadlines = [...this.nodes.values()].map((n) => n.rib.nextDeadline()).filter((d): d is number => d !== undefined);
      if (deadlines.length === 0) return;
      this.now = Math.max(this.now, Math.min(...deadlines));
      for (const from of this.nodes.values()) {
        for (const send of from.rib.flushDue(this.now)) {
          const to = [...this.nodes.values()].find((n) => n.address === send.peerId)!;
          for (const bytes of send.messages) this.deliver(from, to, bytes);
        }
      }
    }
    throw new Error('the network did not settle');
  }

  private deliver(from: Node, to: Node, bytes: Uint8Array): void {
    const m = decodeMessage(bytes[18], bytes.subarray(19), DEFAULT_CONTEXT);
    if (m.type !== 'update') throw new Error(`unexpected ${m.type}`);
    if (isEndOfRib(m)) return;
    const key = `${from.name}>${to.name}`;
    if (!this.carried.has(key)) this.carried.set(key, []);
    this.carried.get(key)!.push({ withdrawn: m.withdrawn.map(String), announced: m.nlri.map(String) });
    to.rib.ingest(from.address, m, this.now);
  }

  node(name: string): Node {
    return this.nodes.get(name)!;
  }
}

/** A policy evaluator from plain definitions, via the policy engine. */
function policy(def: PolicyConfigDef, direction: 'import' | 'export', names: string[]): ExportPolicy & ImportPolicy {
  const chain = compilePolicy(def).chain({ direction, policies: names });
  return (route, ctx) => {
    const r = evaluate(chain, route, ctx);
    return { verdict: r.verdict, attrs: r.attrs };
  };
}

const ACCEPT = policy({ policies: { all: { statements: [{ actions: { result: 'accept' } }] } } }, 'export', ['all']);
const ORIGIN = { origin: 0 as const, asPath: [] };

const asPathOf = (n: Node, prefix: string) => n.rib.best(P(prefix))?.attrs.attrs.asPath?.flatMap((s) => s.asns);
const nextHopOf = (n: Node, prefix: string) => n.rib.best(P(prefix))?.attrs.attrs.nextHop?.toString();

describe('three routing cores over in-memory links', () => {
  it('eBGP chain: routes propagate with our AS prepended and next hop self, withdrawals follow, loops never come back', () => {
    const net = new Net();
    const [a, b, c] = [net.add('A', '192.0.2.1', 65001), net.add('B', '192.0.2.2', 65002), net.add('C', '192.0.2.3', 65003)];
    net.link('A', 'B', { A: { exportPolicy: ACCEPT }, B: { exportPolicy: ACCEPT } });
    net.link('B', 'C', { B: { exportPolicy: ACCEPT }, C: { exportPolicy: ACCEPT } });
    // Close the triangle: A's route could come back to A through C.
    net.link('C', 'A', { C: { exportPolicy: ACCEPT }, A: { exportPolicy: ACCEPT } });
    a.rib.originate(P('198.51.100.0/24'), ORIGIN, net.now);
    net.run();
    expect(asPathOf(b, '198.51.100.0/24')).toEqual([65001]);
    expect(asPathOf(c, '198.51.100.0/24')).toEqual([65001]); // direct beats via B
    expect(c.rib.candidates(P('198.51.100.0/24')).map((p) => p.attrs.attrs.asPath!.flatMap((s) => s.asns))).toContainEqual([65002, 65001]);
    expect(nextHopOf(c, '198.51.100.0/24')).toBe('192.0.2.1');
    // A never holds its own route from a neighbour, in any form.
    expect(a.rib.adjRibIn('192.0.2.2', 'pre').map((r) => r.prefix.toString())).not.toContain('198.51.100.0/24');
    expect(a.rib.adjRibIn('192.0.2.3', 'pre').map((r) => r.prefix.toString())).not.toContain('198.51.100.0/24');
    expect(a.rib.candidates(P('198.51.100.0/24'))).toHaveLength(1);

    // Cut the direct A–C path: C falls back to the route through B.
    a.rib.peerDown('192.0.2.3', net.now);
    c.rib.peerDown('192.0.2.1', net.now);
    net.run();
    expect(asPathOf(c, '198.51.100.0/24')).toEqual([65002, 65001]);
    expect(nextHopOf(c, '198.51.100.0/24')).toBe('192.0.2.2');

    a.rib.withdraw(P('198.51.100.0/24'), net.now);
    net.run();
    for (const n of [a, b, c]) expect(n.rib.best(P('198.51.100.0/24'))).toBeUndefined();
  });

  it('RFC 8212: a learned route goes to an eBGP peer only through an accepting export policy', () => {
    const net = new Net();
    const [a, , c] = [net.add('A', '192.0.2.1', 65001), net.add('B', '192.0.2.2', 65002), net.add('C', '192.0.2.3', 65003)];
    // What the speaker does: toward eBGP an empty chain, whose default rejects learned routes.
    const none = policy({ policies: {} }, 'export', []);
    net.link('A', 'B', { A: { exportPolicy: none }, B: { exportPolicy: none } });
    net.link('B', 'C', { B: { exportPolicy: none }, C: { exportPolicy: none } });
    a.rib.originate(P('198.51.100.0/24'), ORIGIN, net.now);
    net.node('B').rib.originate(P('203.0.113.0/24'), ORIGIN, net.now);
    net.run();
    expect(c.rib.best(P('203.0.113.0/24'))).toBeDefined(); // B's own route
    expect(c.rib.best(P('198.51.100.0/24'))).toBeUndefined(); // learned from A
    net.node('B').rib.setExportPolicy('192.0.2.3', ACCEPT, net.now);
    net.run();
    expect(asPathOf(c, '198.51.100.0/24')).toEqual([65002, 65001]);
  });

  it('iBGP with a route reflector: reflection with ORIGINATOR_ID and CLUSTER_LIST, the originator refuses its own route, withdrawals propagate', () => {
    const net = new Net();
    const [x, r, y] = [net.add('X', '192.0.2.1', 65000), net.add('R', '192.0.2.2', 65000, '192.0.2.254'), net.add('Y', '192.0.2.3', 65000)];
    net.link('X', 'R', { R: { rrClient: true } });
    net.link('R', 'Y', { R: { rrClient: true } });
    x.rib.originate(P('198.51.100.0/24'), { ...ORIGIN, localPref: 300 }, net.now);
    net.run();
    const atY = y.rib.best(P('198.51.100.0/24'))!.attrs.attrs;
    expect(atY.originatorId?.toString()).toBe('192.0.2.1');
    expect(atY.clusterList?.map(String)).toEqual(['192.0.2.254']);
    expect(atY.localPref).toBe(300);
    expect(atY.nextHop?.toString()).toBe('192.0.2.1'); // reflected routes keep their next hop
    // R reflects to every client, X included; X refuses the route carrying its own ORIGINATOR_ID.
    expect(x.rib.adjRibIn('192.0.2.2', 'pre').map((v) => v.prefix.toString())).toEqual(['198.51.100.0/24']);
    expect(x.rib.adjRibIn('192.0.2.2', 'post')).toEqual([]);
    expect(x.rib.best(P('198.51.100.0/24'))!.source.kind).toBe('local');

    x.rib.withdraw(P('198.51.100.0/24'), net.now);
    net.run();
    expect(r.rib.best(P('198.51.100.0/24'))).toBeUndefined();
    expect(y.rib.best(P('198.51.100.0/24'))).toBeUndefined();
    expect(x.rib.adjRibIn('192.0.2.2', 'pre')).toEqual([]);
  });

  it('a policy change is re-evaluated in place: only the difference crosses the link, no session reset', () => {
    const net = new Net();
    const [a, b, c] = [net.add('A', '192.0.2.1', 65001), net.add('B', '192.0.2.2', 65002), net.add('C', '192.0.2.3', 65003)];
    net.link('A', 'B', { B: { exportPolicy: ACCEPT } });
    net.link('B', 'C', { B: { exportPolicy: ACCEPT } });
    a.rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24'), P('192.0.2.128/25')], ORIGIN, net.now);
    net.run();
    expect(c.rib.locRibSize).toBe(3);
    const sessions = net.sessionsUp;
    const before = net.carried.get('B>C')!.length;

    // B's export toward C now drops the /25 and tags the rest.
    const tagged = policy(
      {
        sets: { prefix: { short: ['0.0.0.0/0 le 24'] } },
        policies: { out: { statements: [{ conditions: { prefixSet: { set: 'short' } }, actions: { community: { add: ['65002:1'] }, result: 'accept' } }] } },
      },
      'export',
      ['out'],
    );
    b.rib.setExportPolicy('192.0.2.3', tagged, net.now);
    net.run();
    expect(c.rib.best(P('192.0.2.128/25'))).toBeUndefined();
    expect(c.rib.best(P('198.51.100.0/24'))!.attrs.attrs.communities).toEqual([65002 * 65536 + 1]);
    const sent = net.carried.get('B>C')!.slice(before);
    expect(sent.flatMap((m) => m.withdrawn)).toEqual(['192.0.2.128/25']);
    expect(sent.flatMap((m) => m.announced).sort()).toEqual(['198.51.100.0/24', '203.0.113.0/24']);

    // An import policy change at C re-runs import from its Adj-RIB-In: nothing crosses the link at all.
    const carriedBefore = [...net.carried.values()].reduce((n, l) => n + l.length, 0);
    const rejectTagged = policy(
      {
        sets: { community: { t: ['65002:1'] } },
        policies: { in: { statements: [{ conditions: { communitySet: { set: 't' } }, actions: { result: 'reject' } }] } },
      },
      'import',
      ['in'],
    );
    c.rib.setImportPolicy('192.0.2.2', rejectTagged, net.now);
    net.run();
    expect(c.rib.locRibSize).toBe(0);
    c.rib.setImportPolicy('192.0.2.2', undefined, net.now);
    net.run();
    expect(c.rib.locRibSize).toBe(2);
    expect([...net.carried.values()].reduce((n, l) => n + l.length, 0)).toBe(carriedBefore);
    expect(net.sessionsUp).toBe(sessions);
  });
});
