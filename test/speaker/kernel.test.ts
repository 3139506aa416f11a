/**
 * SpeakerKernel (src/speaker/kernel.ts): Loc-RIB changes → desired kernel
 * routes. Without a kernel export policy, routes with the same ECMP set
 * share one remembered DesiredRoute (keyed by the paths' interned attribute
 * sets and sources, the family and the deciding rule); with a policy every
 * route is computed. These tests hold the remembered routes to the computed
 * ones, over a simulated kernel.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import type { KernelRule } from '../../src/kernel/rules.js';
import type { Path, PeerSource } from '../../src/rib/path.js';
import { PolicyRegistry } from '../../src/speaker/policies.js';
import { SpeakerKernel, type KernelOptions } from '../../src/speaker/kernel.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { converge, SimKernel } from '../kernel/sim.js';

const source = (a: string): PeerSource => ({ kind: 'peer', id: a, address: Address.parse(a), asn: 64512, type: 'ebgp', routerIdNum: 0, rrClient: false });
// The last is on no connected network: a link-local next hop from it has no interface.
const SOURCES = ['192.0.2.11', '192.0.2.12', '2001:db8::12', '2001:db8:ff::1'].map(source);
/** Attribute sets as the Rib interns them: one object per set, shared by every path with it. */
const SETS: { attrs: PathAttributes }[] = [
  { attrs: { nextHop: Address.parse('192.0.2.11') } },
  { attrs: { nextHop: Address.parse('192.0.2.12'), localPref: 2147483647 - 1024 } },
  { attrs: { nextHop: Address.parse('198.51.100.9') } }, // on no connected network: waits for a lookup
  { attrs: { mpReach: { afi: 2, safi: 1, nextHops: [Address.parse('2001:db8::12'), Address.parse('fe80::12')], nlri: [] } } },
  { attrs: { mpReach: { afi: 2, safi: 1, nextHops: [Address.parse('fe80::13')], nlri: [] } } },
  { attrs: { nextHop: Address.parse('192.0.2.13'), mpReach: { afi: 2, safi: 1, nextHops: [Address.parse('2001:db8::13')], nlri: [] } } }, // one next hop per family
  { attrs: {} }, // no next hop
];
const PREFIXES = [
  '198.19.64.0/26',
  '198.19.0.64/26',
  '10.96.0.0/16',
  '203.0.113.0/24',
  '198.51.100.0/24',
  '198.19.64.7/32',
  '2001:db8:1::/64',
  '2001:db8:2::/64',
].map((p) => Prefix.parse(p));
const RULES: KernelRule[] = [
  { prefix: '10.96.0.0/12', action: 'reject', why: 'service CIDR' },
  { prefix: '198.19.64.0/18', action: 'accept', tunnel: { dev: 'tunl0', unlessWithin: ['192.0.2.0/25'] }, why: 'IPIP CrossSubnet' },
  { prefix: '198.19.0.0/18', action: 'accept', tunnel: { dev: 'tunl0' }, why: 'IPIP Always' },
];
const path = (set: number, src: number, pathId = 0): Path => ({ source: SOURCES[src], attrs: SETS[set], pathId }) as unknown as Path;
const LOCAL = { source: { kind: 'local' }, attrs: SETS[0], pathId: 0 } as unknown as Path;

function wiring(opts: Partial<KernelOptions>, policies = new PolicyRegistry()): { sk: SpeakerKernel; k: SimKernel; settle: () => void } {
  const speaker = { asn: 64500, scheduler: { setTimeout: () => 0, clearTimeout: () => {} }, restartTime: 120, forEach: () => {} };
  const sk = new SpeakerKernel({ adopt: false, ...opts } as KernelOptions, policies, speaker as never, () => {});
  const k = new SimKernel();
  k.links.add('tunl0');
  const core = sk.fib.core;
  core.setConnected(
    [
      { prefix: '192.0.2.0/24', dev: 'eth0' },
      { prefix: '2001:db8::/64', dev: 'eth0' },
    ],
    k.links,
  );
  core.kernelTable([]);
  return { sk, k, settle: () => void converge(core, k) };
}

/** The same wiring with a kernel export policy that accepts everything as it is: every route computed, none remembered. */
function computing(opts: Partial<KernelOptions>): ReturnType<typeof wiring> {
  const policies = new PolicyRegistry();
  policies.define({ policies: { all: { statements: [{ actions: { result: 'accept' } }] } } });
  return wiring({ ...opts, exportPolicies: ['all'] }, policies);
}

const view = (w: ReturnType<typeof wiring>) => PREFIXES.map((p) => ({ p: p.toString(), ...w.sk.route(p) }));

describe('SpeakerKernel: one desired route per ECMP set', () => {
  it('prefixes with the same ECMP set share the remembered route only where the family and the deciding rule agree (property, against computing each)', () => {
    const mp = fc.array(
      fc.record({ set: fc.integer({ min: 0, max: SETS.length - 1 }), src: fc.integer({ min: 0, max: SOURCES.length - 1 }), local: fc.boolean() }),
      { maxLength: 2 },
    );
    const change = fc.record({ prefix: fc.integer({ min: 0, max: PREFIXES.length - 1 }), mp });
    fc.assert(
      fc.property(fc.array(change, { minLength: 1, maxLength: 40 }), fc.boolean(), (changes, metricFromLocalPref) => {
        const opts: Partial<KernelOptions> = { rules: RULES, metricFromLocalPref };
        const a = wiring(opts);
        const b = computing(opts);
        for (const c of changes) {
          const paths = c.mp.map((x) => (x.local ? LOCAL : path(x.set, x.src)));
          a.sk.onLocChange(PREFIXES[c.prefix], paths);
          b.sk.onLocChange(PREFIXES[c.prefix], paths);
          // After every change, not only at the end: a remembered route handed to the wrong prefix would show.
          expect(
            a.sk
              .routes()
              .map((e) => e.prefix)
              .sort(),
          ).toEqual(
            b.sk
              .routes()
              .map((e) => e.prefix)
              .sort(),
          );
        }
        a.settle();
        b.settle();
        expect(view(a)).toEqual(view(b));
        expect([...a.k.table.entries()].sort()).toEqual([...b.k.table.entries()].sort());
      }),
      { numRuns: 300 },
    );
  });

  it('the same set over a tunnel rule, a reject rule and no rule: three routes; one set across 1,000 prefixes: one object', () => {
    const w = wiring({ rules: RULES });
    const mp = [path(0, 0), path(1, 1)];
    const single = [path(2, 0)];
    for (const p of ['198.19.64.0/26', '10.96.0.0/16', '203.0.113.0/24', '198.19.0.64/26']) w.sk.onLocChange(Prefix.parse(p), single);
    w.sk.fib.core.setLookup('198.51.100.9', { ok: true, via: '192.0.2.1', dev: 'eth0' });
    w.settle();
    expect(
      w.k
        .routes()
        .map((r) => `${r.prefix} ${r.nexthops.map((h) => `${h.via} ${h.dev}${h.onlink ? ' onlink' : ''}`).join(', ')}`)
        .sort(),
    ).toEqual([
      '198.19.0.64/26 198.51.100.9 tunl0 onlink', // IPIP Always
      '198.19.64.0/26 198.51.100.9 tunl0 onlink', // CrossSubnet: the next hop is outside 192.0.2.0/25
      '203.0.113.0/24 192.0.2.1 eth0', // no rule: recursive through the kernel's answer
    ]);
    expect(w.sk.route(Prefix.parse('10.96.0.0/16')).installed).toEqual([]);
    // Many prefixes with one ECMP set: the FIB is handed one DesiredRoute for all of them.
    const wanted = new Set<unknown>();
    const core = w.sk.fib.core;
    const setRoute = core.setRoute.bind(core);
    core.setRoute = (p, d) => {
      wanted.add(d);
      setRoute(p, d);
    };
    for (let i = 0; i < 1000; i++) w.sk.onLocChange(Prefix.v4(Address.parse('203.0.113.0').w0 + (i % 256), 32 - (i >> 8)), mp);
    expect(wanted.size).toBe(1);
    // A second, equal set (other path objects, the same attribute sets and sources) is the same route.
    w.sk.onLocChange(Prefix.parse('198.51.100.0/24'), [path(0, 0, 0), path(1, 1, 0)]);
    expect(wanted.size).toBe(1);
    // The same attribute sets from other peers, or in another order, are not.
    w.sk.onLocChange(Prefix.parse('198.51.100.0/24'), [path(0, 1), path(1, 0)]);
    w.sk.onLocChange(Prefix.parse('198.51.100.0/24'), [path(1, 1), path(0, 0)]);
    expect(wanted.size).toBe(3);
  });

  it("an ECMP set is its paths' attribute sets and their peers: a link-local next hop resolves through the peer it came from", () => {
    const w = wiring({});
    const a = Prefix.parse('2001:db8:1::/64');
    const b = Prefix.parse('2001:db8:2::/64');
    // The same two attribute sets; the second path from a peer on eth0's network, then from one on no connected network.
    w.sk.onLocChange(a, [path(3, 2), path(4, 2)]);
    w.sk.onLocChange(b, [path(3, 2), path(4, 3)]);
    w.settle();
    expect(
      w.k
        .routes()
        .map((r) => `${r.prefix} ${r.nexthops.map((h) => `${h.via} ${h.dev}`).join(', ')}`)
        .sort(),
    ).toEqual(['2001:db8:1::/64 2001:db8::12 eth0, fe80::13 eth0', '2001:db8:2::/64 2001:db8::12 eth0']);
    expect(w.sk.route(b).note).toMatch(/fe80::13 needs its interface \(the peer 2001:db8:ff::1 is on no connected network\)/);
  });

  it('new rules re-evaluate every route: nothing remembered under the old rules is handed out', () => {
    const { sk, k, settle } = learnedFrom(
      new Map([
        ['198.19.64.0/26', [path(2, 0)]],
        ['203.0.113.0/24', [path(2, 0)]],
      ]),
    );
    sk.reevaluate();
    settle();
    expect(table(k)).toEqual(['198.19.64.0/26 192.0.2.1 eth0', '203.0.113.0/24 192.0.2.1 eth0']);
    sk.setRules(RULES);
    settle();
    expect(table(k)).toEqual(['198.19.64.0/26 198.51.100.9 tunl0 onlink', '203.0.113.0/24 192.0.2.1 eth0']);
    sk.setRules([{ prefix: '198.19.64.0/18', action: 'reject' }]);
    settle();
    expect(table(k)).toEqual(['203.0.113.0/24 192.0.2.1 eth0']);
    sk.setRules([]);
    settle();
    expect(table(k)).toEqual(['198.19.64.0/26 192.0.2.1 eth0', '203.0.113.0/24 192.0.2.1 eth0']);
  });

  it('with an export policy the verdict is per prefix: one ECMP set, one prefix rejected, and back when the policy changes', () => {
    const policies = new PolicyRegistry();
    const define = (reject: string) =>
      policies.define({
        sets: { prefix: { out: [reject] } },
        policies: { kernel: { statements: [{ conditions: { prefixSet: { set: 'out' } }, actions: { result: 'reject' } }, { actions: { result: 'accept' } }] } },
      });
    define('198.19.64.0/26');
    const { sk, k, settle } = learnedFrom(
      new Map([
        ['198.19.64.0/26', [path(2, 0)]],
        ['203.0.113.0/24', [path(2, 0)]],
      ]),
      policies,
      { exportPolicies: ['kernel'] },
    );
    sk.reevaluate();
    settle();
    expect(table(k)).toEqual(['203.0.113.0/24 192.0.2.1 eth0']);
    define('192.0.2.0/24');
    sk.reevaluate();
    settle();
    expect(table(k)).toEqual(['198.19.64.0/26 192.0.2.1 eth0', '203.0.113.0/24 192.0.2.1 eth0']);
  });
});

/** A SpeakerKernel over a simulated kernel whose speaker's Loc-RIB holds `learned` (for reevaluate). */
function learnedFrom(learned: Map<string, readonly Path[]>, policies = new PolicyRegistry(), opts: Partial<KernelOptions> = {}) {
  const speaker = {
    asn: 64500,
    scheduler: { setTimeout: () => 0, clearTimeout: () => {} },
    restartTime: 120,
    forEach: (fn: (p: Prefix, mp: readonly Path[]) => void) => learned.forEach((mp, p) => fn(Prefix.parse(p), mp)),
  };
  const sk = new SpeakerKernel({ adopt: false, ...opts } as KernelOptions, policies, speaker as never, () => {});
  const k = new SimKernel();
  k.links.add('tunl0');
  sk.fib.core.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }], k.links);
  sk.fib.core.kernelTable([]);
  sk.fib.core.setLookup('198.51.100.9', { ok: true, via: '192.0.2.1', dev: 'eth0' });
  return { sk, k, settle: () => void converge(sk.fib.core, k) };
}

const table = (k: SimKernel) =>
  k
    .routes()
    .map((r) => `${r.prefix} ${r.nexthops.map((h) => `${h.via} ${h.dev}${h.onlink ? ' onlink' : ''}`).join(', ')}`)
    .sort();
