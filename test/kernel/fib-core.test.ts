import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { FibCore, orderOps } from '../../src/kernel/fib-core.js';
import type { DesiredRoute, KernelOp, KernelRoute } from '../../src/kernel/types.js';
import { converge, sameTable, SimKernel } from './sim.js';

const CONNECTED = [
  { prefix: '192.0.2.0/24', dev: 'eth0' },
  { prefix: '198.51.100.0/25', dev: 'eth1' },
  { prefix: '2001:db8:ffff::/64', dev: 'eth0' },
];

function fresh(opts: ConstructorParameters<typeof FibCore>[0] = {}, dump: KernelRoute[] = []): { core: FibCore; k: SimKernel } {
  const core = new FibCore(opts);
  const k = new SimKernel();
  for (const r of dump) k.table.set(SimKernel.key(r), r);
  core.setConnected(CONNECTED, k.links);
  core.kernelTable(k.routes());
  return { core, k };
}

const via = (...addresses: string[]): DesiredRoute => ({ kind: 'unicast', gateways: addresses.map((address) => ({ address })) });

describe('FibCore', () => {
  it('installs a route via a connected next hop once, then has nothing to do', () => {
    const { core, k } = fresh({ restarting: false });
    core.setRoute('203.0.113.0/24', via('192.0.2.7'));
    const ops = converge(core, k);
    expect(ops).toEqual([{ op: 'replace', route: { prefix: '203.0.113.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] } }]);
    core.setRoute('203.0.113.0/24', via('192.0.2.7'));
    expect(core.plan()).toEqual([]);
    expect(core.counts).toEqual({ desired: 1, installed: 1, refused: 0, stale: 0 });
  });

  it('merges an ECMP set up to the configured width, in a canonical order', () => {
    const { core, k } = fresh({ restarting: false, ecmp: 2 });
    core.setRoute('203.0.113.0/24', via('192.0.2.9', '198.51.100.3', '192.0.2.8'));
    converge(core, k);
    const [r] = k.routes();
    expect(r.nexthops).toEqual([
      { via: '192.0.2.9', dev: 'eth0' },
      { via: '198.51.100.3', dev: 'eth1' },
    ]);
    // the same set in another order is the same route
    core.setRoute('203.0.113.0/24', via('198.51.100.3', '192.0.2.9'));
    expect(core.plan()).toEqual([]);
  });

  it('writes blackholes and lets a static route win over routing for the same prefix', () => {
    const { core, k } = fresh({ restarting: false });
    core.setRoute('203.0.113.0/26', via('192.0.2.7'));
    core.setStatics(
      new Map<string, DesiredRoute>([
        ['203.0.113.0/26', { kind: 'blackhole' }],
        ['2001:db8:1::/48', { kind: 'blackhole' }],
      ]),
    );
    converge(core, k);
    expect(k.routes().map((r) => [r.prefix, r.type, r.metric])).toEqual([
      ['203.0.113.0/26', 'blackhole', 0],
      ['2001:db8:1::/48', 'blackhole', 1024],
    ]);
    core.setStatics(new Map());
    converge(core, k);
    expect(k.routes().map((r) => [r.prefix, r.type])).toEqual([['203.0.113.0/26', 'unicast']]);
  });

  it('refuses a next hop on no connected network without recursion, naming it', () => {
    const { core, k } = fresh({ restarting: false, recursive: false });
    core.setRoute('203.0.113.0/24', via('203.0.113.1'));
    core.setRoute('198.18.0.0/24', via('192.0.2.7'));
    converge(core, k);
    expect(k.routes().map((r) => r.prefix)).toEqual(['198.18.0.0/24']);
    expect(core.refusal('203.0.113.0/24')).toEqual({
      prefix: '203.0.113.0/24',
      by: 'resolve',
      reason: 'next hop 203.0.113.1 is on no connected network (recursive resolution is off)',
    });
  });

  it("resolves recursively through the kernel lookup (the covering route's gateway), and refuses with the kernel's reason", () => {
    const { core, k } = fresh({ restarting: false });
    core.setRoute('203.0.113.0/24', via('198.18.5.5'));
    core.setRoute('198.18.64.0/24', via('198.19.0.1'));
    expect(core.plan()).toEqual([]); // waiting for the lookups
    expect(core.neededLookups().sort()).toEqual(['198.18.5.5', '198.19.0.1']);
    core.setLookup('198.18.5.5', { ok: true, via: '192.0.2.1', dev: 'eth0' });
    core.setLookup('198.19.0.1', { ok: false, reason: 'RTNETLINK answers: Network is unreachable' });
    converge(core, k);
    expect(k.routes()).toEqual([{ prefix: '203.0.113.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.1', dev: 'eth0' }] }]);
    expect(core.refusal('198.18.64.0/24')?.reason).toBe(
      'next hop 198.19.0.1 is on no connected network and the kernel cannot reach it: RTNETLINK answers: Network is unreachable',
    );
    expect(core.neededLookups()).toEqual([]);
  });

  it("gives an IPv6 link-local next hop its interface, from the gateway or from the peer's connected network", () => {
    const { core, k } = fresh({ restarting: false });
    core.setRoute('2001:db8:1::/48', { kind: 'unicast', gateways: [{ address: 'fe80::1', peer: '2001:db8:ffff::2' }] });
    core.setRoute('2001:db8:2::/48', { kind: 'unicast', gateways: [{ address: 'fe80::2', dev: 'eth1' }] });
    core.setRoute('2001:db8:3::/48', { kind: 'unicast', gateways: [{ address: 'fe80::3' }] });
    converge(core, k);
    expect(k.routes().map((r) => [r.prefix, r.nexthops])).toEqual([
      ['2001:db8:1::/48', [{ via: 'fe80::1', dev: 'eth0' }]],
      ['2001:db8:2::/48', [{ via: 'fe80::2', dev: 'eth1' }]],
    ]);
    expect(core.refusal('2001:db8:3::/48')?.reason).toMatch(/link-local next hop fe80::3 needs its interface/);
  });

  it("reports a route the kernel refuses with the kernel's reason and applies the rest", () => {
    const { core, k } = fresh({ restarting: false });
    core.setConnected(CONNECTED); // interfaces unknown to the core: the kernel decides
    core.setRoute('203.0.113.0/24', { kind: 'unicast', gateways: [{ address: '192.0.2.50', dev: 'tunl0', onlink: true }] });
    core.setRoute('198.18.0.0/24', via('192.0.2.7'));
    converge(core, k);
    expect(k.routes().map((r) => r.prefix)).toEqual(['198.18.0.0/24']);
    expect(core.refusal('203.0.113.0/24')).toEqual({ prefix: '203.0.113.0/24', by: 'kernel', reason: 'Cannot find device "tunl0"' });
    // once tunl0 exists and the prefix is looked at again, it goes in
    k.links.add('tunl0');
    core.setConnected(CONNECTED, k.links);
    converge(core, k);
    expect(
      k
        .routes()
        .map((r) => r.prefix)
        .sort(),
    ).toEqual(['198.18.0.0/24', '203.0.113.0/24']);
    expect(core.refusals()).toEqual([]);
  });

  it('puts back a route someone deleted, and replaces one someone changed', () => {
    const { core, k } = fresh({ restarting: false });
    core.setRoute('203.0.113.0/24', via('192.0.2.7'));
    converge(core, k);
    const r = k.routes()[0];
    k.table.clear();
    core.kernelDeleted(r.prefix, r.metric);
    expect(converge(core, k).map((o) => o.op)).toEqual(['replace']);
    const changed = { ...r, nexthops: [{ via: '192.0.2.99', dev: 'eth0' }] };
    k.table.set(SimKernel.key(changed), changed);
    core.kernelAdded(changed);
    converge(core, k);
    expect(k.routes()).toEqual([r]);
  });

  it('adopts routes found at start, keeps them through the restart, then removes those not learned again', () => {
    const old: KernelRoute[] = [
      { prefix: '203.0.113.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] },
      { prefix: '198.18.0.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.8', dev: 'eth0' }] },
      { prefix: '198.18.1.0/24', type: 'blackhole', metric: 0, nexthops: [] },
    ];
    const { core, k } = fresh({}, old);
    expect(core.counts.stale).toBe(3);
    expect(converge(core, k)).toEqual([]); // nothing learned yet: nothing touched
    core.setRoute('203.0.113.0/24', via('192.0.2.7')); // learned again, same
    core.setRoute('198.18.0.0/24', via('192.0.2.9')); // learned again, changed
    const during = converge(core, k);
    expect(during).toEqual([{ op: 'replace', route: { prefix: '198.18.0.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.9', dev: 'eth0' }] } }]);
    core.setRoute('203.0.113.0/24', undefined); // learned again, then withdrawn during the restart: that is news, it goes
    expect(converge(core, k).map((o) => [o.op, o.route.prefix])).toEqual([['delete', '203.0.113.0/24']]);
    core.setRoute('198.18.2.0/24', undefined); // never learned: nothing to do, the adopted blackhole stays
    expect(converge(core, k)).toEqual([]);
    expect(
      k
        .routes()
        .map((r) => r.prefix)
        .sort(),
    ).toEqual(['198.18.0.0/24', '198.18.1.0/24']);
    core.endRestart();
    expect(converge(core, k).map((o) => [o.op, o.route.prefix])).toEqual([['delete', '198.18.1.0/24']]);
    expect(k.routes().map((r) => r.prefix)).toEqual(['198.18.0.0/24']);
  });

  it('removes a route of ours with another metric (the metric setting changed)', () => {
    const { core, k } = fresh({ restarting: false, metricV4: 1024 }, [
      { prefix: '203.0.113.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] },
    ]);
    core.setRoute('203.0.113.0/24', via('192.0.2.7'));
    converge(core, k);
    expect(k.routes()).toEqual([{ prefix: '203.0.113.0/24', type: 'unicast', metric: 1024, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] }]);
  });

  it('writes every replace first, then the deletes, most specific prefix first', () => {
    const { core, k } = fresh({ restarting: false });
    const nested = ['198.18.0.0/15', '198.18.0.0/16', '198.19.0.0/16', '198.18.0.0/24', '198.18.0.1/32', '2001:db8::/32', '2001:db8::/64'];
    for (const p of nested) core.setRoute(p, via(p.includes(':') ? '2001:db8:ffff::7' : '192.0.2.7'));
    converge(core, k);
    for (const p of nested) core.setRoute(p, undefined);
    core.setRoute('203.0.113.0/24', via('192.0.2.8'));
    const ops = core.plan();
    expect(ops.map((o) => `${o.op} ${o.route.prefix}`)).toEqual([
      'replace 203.0.113.0/24',
      'delete 2001:db8::/64',
      'delete 198.18.0.1/32',
      'delete 2001:db8::/32',
      'delete 198.18.0.0/24',
      'delete 198.18.0.0/16',
      'delete 198.19.0.0/16',
      'delete 198.18.0.0/15',
    ]);
    for (const op of ops) core.applied(op);
    expect(orderOps([])).toEqual([]);
  });

  it('validates its options', () => {
    expect(() => new FibCore({ ecmp: 0 })).toThrow('kernel ecmp must be 1..256 next hops, got 0');
    expect(() => new FibCore({ metricV4: -1 })).toThrow('kernel metricV4 must be 0..4294967295, got -1');
  });

  // ------------------------------------------------------------ property: a simulated kernel across restarts

  const PREFIXES = ['203.0.113.0/24', '203.0.113.0/25', '198.18.0.0/24', '198.18.1.0/24', '2001:db8:1::/48', '2001:db8:2::/64'];
  const GW4 = ['192.0.2.1', '192.0.2.2', '198.51.100.1', '203.0.113.200'];
  const GW6 = ['2001:db8:ffff::1', '2001:db8:ffff::2', 'fe80::1'];
  const desiredArb = (p: string) =>
    fc.oneof(
      fc.constant<DesiredRoute | undefined>(undefined),
      fc.constant<DesiredRoute>({ kind: 'blackhole' }),
      fc.subarray(p.includes(':') ? GW6 : GW4, { minLength: 1 }).map((g): DesiredRoute => ({ kind: 'unicast', gateways: g.map((address) => ({ address })) })),
    );
  const step = fc.oneof(
    fc.constantFrom(...PREFIXES).chain((p) => desiredArb(p).map((d) => ({ t: 'set' as const, p, d }))),
    fc.constantFrom(...PREFIXES).map((p) => ({ t: 'foreignDelete' as const, p })),
    fc.constant({ t: 'resync' as const }),
    fc.constant({ t: 'restart' as const }),
    fc.constant({ t: 'endRestart' as const }),
  );

  /** The kernel route routing wants for `d`, resolved by hand (the oracle). */
  function expected(p: string, d: DesiredRoute | undefined): KernelRoute | undefined {
    const metric = p.includes(':') ? 1024 : 0;
    if (d === undefined) return undefined;
    if (d.kind === 'blackhole') return { prefix: p, type: 'blackhole', metric, nexthops: [] };
    const hops = d.gateways
      .map((g) => g.address)
      .filter((a) => a !== '203.0.113.200' && a !== 'fe80::1')
      .map((a) => ({ via: a, dev: a.startsWith('198.51.100.') ? 'eth1' : 'eth0' }));
    if (hops.length === 0) return undefined;
    return { prefix: p, type: 'unicast', metric, nexthops: hops.sort((x, y) => (`${x.via}|${x.dev}|0` < `${y.via}|${y.dev}|0` ? -1 : 1)) };
  }

  it('property: whatever happens, the kernel ends up holding exactly what is desired once no restart is running, and stale routes survive a restart until it ends', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const k = new SimKernel();
        let want = new Map<string, DesiredRoute | undefined>();
        const boot = (restarting: boolean) => {
          const c = new FibCore({ restarting, recursive: false });
          c.setConnected(CONNECTED, k.links);
          c.kernelTable(k.routes());
          return c;
        };
        let core = boot(false);
        let restarting = false;
        let adopted = new Map<string, KernelRoute>();
        for (const s of steps) {
          if (s.t === 'set') {
            want.set(s.p, s.d);
            // learned again: routing's from now on (a withdrawal of a never re-learned route changes nothing)
            if (s.d !== undefined) adopted.delete(s.p);
            core.setRoute(s.p, s.d);
          } else if (s.t === 'foreignDelete') {
            adopted.delete(s.p);
            for (const r of k.routes())
              if (r.prefix === s.p) {
                k.table.delete(SimKernel.key(r));
                core.kernelDeleted(r.prefix, r.metric);
              }
          } else if (s.t === 'resync') core.kernelTable(k.routes());
          else if (s.t === 'restart') {
            // a crash: the new process knows nothing of what routing wanted
            adopted = new Map(k.routes().map((r) => [r.prefix, r]));
            core = boot(true);
            want = new Map();
            restarting = true;
          } else {
            core.endRestart();
            restarting = false;
            adopted = new Map();
          }
          converge(core, k);
          expect(core.pending).toBe(false);
          // during a restart, an adopted route nobody touched since is still there, unchanged
          if (restarting)
            for (const r of adopted.values())
              expect(
                sameTable(
                  k.routes().filter((x) => x.prefix === r.prefix),
                  [r],
                ),
              ).toBe(true);
          // every desired route that resolves is in the kernel
          for (const [p, d] of want) {
            const e = expected(p, d);
            if (e !== undefined)
              expect(
                sameTable(
                  k.routes().filter((r) => r.prefix === p),
                  [e],
                ),
              ).toBe(true);
          }
          for (const r of k.routes()) {
            const e = expected(r.prefix, want.get(r.prefix));
            if (e !== undefined) continue;
            // a route nobody wants is only there as an adopted one during a restart (or a put-back of a deleted one)
            expect(restarting && adopted.has(r.prefix)).toBe(true);
          }
        }
        core.endRestart();
        converge(core, k);
        const final = [...want].map(([p, d]) => expected(p, d)).filter((r): r is KernelRoute => r !== undefined);
        expect(sameTable(k.routes(), final)).toBe(true);
        // nothing is kept for a prefix nobody wants and that is not in the kernel
        const held = new Set([...[...want].filter(([, d]) => d !== undefined).map(([p]) => p), ...k.routes().map((r) => r.prefix)]);
        expect(core.known).toBe(held.size);
      }),
      { numRuns: 300 },
    );
  });
});

describe('FibCore bookkeeping kept as it goes (status is O(1))', () => {
  it('counts.desired is the number of prefixes wanted by routing or statics, whatever the order of changes', () => {
    const prefixes = ['198.18.0.0/24', '198.18.1.0/24', '198.18.2.0/24', '203.0.113.0/26'];
    const step = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), p: fc.constantFrom(...prefixes), on: fc.boolean() }),
      fc.record({ kind: fc.constant('statics' as const), ps: fc.subarray(prefixes) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const core = new FibCore({ restarting: false });
        const bgp = new Set<string>();
        let statics = new Set<string>();
        for (const s of steps) {
          if (s.kind === 'set') {
            core.setRoute(s.p, s.on ? via('192.0.2.7') : undefined);
            if (s.on) bgp.add(s.p);
            else bgp.delete(s.p);
          } else {
            core.setStatics(new Map(s.ps.map((p) => [p, { kind: 'blackhole' as const }])));
            statics = new Set(s.ps);
          }
          expect(core.counts.desired).toBe(new Set([...bgp, ...statics]).size);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a prefix left waiting for a lookup is still asked about by the next neededLookups, and only it', () => {
    const core = new FibCore({ restarting: false });
    core.setConnected([{ prefix: '192.0.2.0/24', dev: 'eth0' }]);
    core.kernelTable([]);
    core.setRoute('203.0.113.0/24', via('198.18.5.5'));
    core.setRoute('198.18.64.0/24', via('192.0.2.7'));
    const first = core.plan();
    expect(first.map((o) => o.route.prefix)).toEqual(['198.18.64.0/24']); // the other waits
    for (const op of first) core.applied(op);
    core.setRoute('198.18.65.0/24', via('192.0.2.8'));
    expect(core.neededLookups()).toEqual(['198.18.5.5']);
    core.setLookup('198.18.5.5', { ok: true, via: '192.0.2.1', dev: 'eth0' });
    expect(core.neededLookups()).toEqual([]);
    expect(
      core
        .plan()
        .map((o) => o.route.prefix)
        .sort(),
    ).toEqual(['198.18.65.0/24', '203.0.113.0/24']);
  });
});

describe('FibCore slots (one per prefix) and the operations it hands out', () => {
  it('forgets a prefix once nothing is left of it: withdrawn and deleted, refused and withdrawn, a static removed, a foreign delete of nothing', () => {
    const { core, k } = fresh({ restarting: false, recursive: false });
    for (let i = 0; i < 50; i++) core.setRoute(`198.18.0.${i}/32`, via('192.0.2.7'));
    core.setRoute('203.0.113.0/24', via('203.0.113.1')); // refused: on no connected network
    core.setStatics(new Map([['198.19.0.0/26', { kind: 'blackhole' as const }]]));
    converge(core, k);
    expect(core.known).toBe(52);
    expect(core.counts).toEqual({ desired: 52, installed: 51, refused: 1, stale: 0 });
    for (let i = 0; i < 50; i++) core.setRoute(`198.18.0.${i}/32`, undefined);
    core.setRoute('203.0.113.0/24', undefined);
    core.setStatics(new Map());
    core.kernelDeleted('198.18.9.9/32', 0); // someone else's delete of a route we never had
    expect(core.known).toBe(53); // kept until planned
    converge(core, k);
    expect(k.routes()).toEqual([]);
    expect(core.known).toBe(0);
    expect([...core.entries()]).toEqual([]);
    expect(core.counts).toEqual({ desired: 0, installed: 0, refused: 0, stale: 0 });
    // and a prefix wanted again after it was forgotten is planned afresh
    core.setRoute('198.18.0.1/32', via('192.0.2.8'));
    expect(converge(core, k).map((o) => `${o.op} ${o.route.prefix}`)).toEqual(['replace 198.18.0.1/32']);
    expect(core.known).toBe(1);
  });

  it("an operation it hands out equals the plain KernelOp; applied() takes plain operations, and another core's, by prefix", () => {
    const { core, k } = fresh({ restarting: false });
    core.setRoute('198.18.0.0/24', via('192.0.2.7'));
    const [op] = core.plan();
    const plain: KernelOp = { op: 'replace', route: { prefix: '198.18.0.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] } };
    expect(op).toEqual(plain);
    expect(Object.keys(op)).toEqual(['op', 'route']);
    // not applied: a plain operation with the same content does the same
    core.applied(plain, k.apply(plain));
    expect(core.installedFor('198.18.0.0/24')).toEqual([plain.route]);
    // an operation planned by another core counts here by its prefix
    const other = fresh({ restarting: false }).core;
    other.setRoute('198.18.1.0/24', via('192.0.2.8'));
    const [theirs] = other.plan();
    core.applied(theirs, k.apply(theirs));
    expect(core.installedFor('198.18.1.0/24')).toEqual([theirs.route]);
    expect(other.installedFor('198.18.1.0/24')).toEqual([]);
    expect(core.counts.installed).toBe(2);
    // not wanted here: the next look at every prefix (connected networks changed) deletes it
    core.setConnected(CONNECTED, k.links);
    expect(converge(core, k).map((o) => `${o.op} ${o.route.prefix}`)).toEqual(['delete 198.18.1.0/24']);
  });

  it("routes resolve by their gateways: equal gateways in other objects alike, other gateways (and other families' metrics) each their own", () => {
    const { core, k } = fresh({ restarting: false, recursive: false });
    const seven = () => via('192.0.2.7');
    const both = via('192.0.2.8', '203.0.113.9'); // one member on no connected network: left out, noted
    const cases: [string, DesiredRoute][] = [
      ['198.18.0.0/24', seven()],
      ['198.18.1.0/24', seven()],
      ['198.18.2.0/24', both],
      ['198.18.3.0/24', seven()],
      ['198.18.4.0/24', via('203.0.113.9')],
      ['198.18.5.0/24', both],
      ['198.18.6.0/24', { kind: 'unicast', gateways: [{ address: '192.0.2.7' }], metric: 5 }],
      ['2001:db8:1::/48', via('2001:db8:ffff::7')],
      ['2001:db8:2::/48', { kind: 'unicast', gateways: [{ address: '2001:db8:ffff::7' }] }],
      ['198.18.7.0/24', { kind: 'unicast', gateways: [{ address: '192.0.2.7', dev: 'eth1' }] }],
    ];
    for (const [p, d] of cases) core.setRoute(p, d);
    converge(core, k);
    const got = new Map(k.routes().map((r) => [r.prefix, `${r.metric} ${r.nexthops.map((h) => `${h.via}@${h.dev}`).join(',')}`]));
    expect(Object.fromEntries(got)).toEqual({
      '198.18.0.0/24': '0 192.0.2.7@eth0',
      '198.18.1.0/24': '0 192.0.2.7@eth0',
      '198.18.2.0/24': '0 192.0.2.8@eth0',
      '198.18.3.0/24': '0 192.0.2.7@eth0',
      '198.18.5.0/24': '0 192.0.2.8@eth0',
      '198.18.6.0/24': '5 192.0.2.7@eth0',
      '198.18.7.0/24': '0 192.0.2.7@eth1',
      '2001:db8:1::/48': '1024 2001:db8:ffff::7@eth0',
      '2001:db8:2::/48': '1024 2001:db8:ffff::7@eth0',
    });
    expect(core.refusal('198.18.4.0/24')?.reason).toBe('next hop 203.0.113.9 is on no connected network (recursive resolution is off)');
    expect(core.note('198.18.2.0/24')).toBe('next hop(s) left out: next hop 203.0.113.9 is on no connected network (recursive resolution is off)');
    expect(core.note('198.18.5.0/24')).toBe(core.note('198.18.2.0/24'));
    expect(core.note('198.18.3.0/24')).toBeUndefined();
  });
});

describe('FibCore: setRoute written down and taken to its slot as the plan reaches it', () => {
  it('property: plans taken piece by piece, with route changes (the same prefix again too), foreign deletes, status reads and early stops between pieces, end with the kernel holding what is desired', () => {
    const PFX = ['198.18.0.0/24', '198.18.1.0/24', '198.18.2.0/24', '198.18.0.7/32', '2001:db8:1::/48', '2001:db8:2::/64'];
    const GWS4 = ['192.0.2.1', '192.0.2.2', '198.51.100.1'];
    const GWS6 = ['2001:db8:ffff::1', '2001:db8:ffff::2'];
    const desired = (p: string) =>
      fc.oneof(
        fc.constant<DesiredRoute | undefined>(undefined),
        fc.constant<DesiredRoute>({ kind: 'blackhole' }),
        fc
          .subarray(p.includes(':') ? GWS6 : GWS4, { minLength: 1 })
          .map((g): DesiredRoute => ({ kind: 'unicast', gateways: g.map((address) => ({ address })) })),
      );
    const step = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...PFX).chain((p) => desired(p).map((d) => ({ t: 'set' as const, p, d }))) },
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }).map((size) => ({ t: 'piece' as const, size })) },
      { weight: 1, arbitrary: fc.constant({ t: 'stop' as const }) },
      { weight: 1, arbitrary: fc.constantFrom(...PFX).map((p) => ({ t: 'foreignDelete' as const, p })) },
      { weight: 1, arbitrary: fc.constant({ t: 'status' as const }) },
    );
    const metric = (p: string) => (p.includes(':') ? 1024 : 0);
    const expectedRoute = (p: string, d: DesiredRoute | undefined): KernelRoute | undefined => {
      if (d === undefined) return undefined;
      if (d.kind === 'blackhole') return { prefix: p, type: 'blackhole', metric: metric(p), nexthops: [] };
      const hops = d.gateways.map((g) => ({ via: g.address, dev: g.address.startsWith('198.51.100.') ? 'eth1' : 'eth0' }));
      return { prefix: p, type: 'unicast', metric: metric(p), nexthops: hops.sort((x, y) => (`${x.via}|${x.dev}|0` < `${y.via}|${y.dev}|0` ? -1 : 1)) };
    };
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const { core, k } = fresh({ restarting: false, recursive: false });
        const want = new Map<string, DesiredRoute>();
        let gen: Generator<KernelOp[], void, undefined> | undefined;
        for (const s of steps) {
          if (s.t === 'set') {
            if (s.d === undefined) want.delete(s.p);
            else want.set(s.p, s.d);
            core.setRoute(s.p, s.d);
          } else if (s.t === 'piece') {
            gen ??= core.planPieces(s.size);
            const r = gen.next();
            if (r.done) gen = undefined;
            else for (const op of r.value) core.applied(op, k.apply(op));
          } else if (s.t === 'stop') {
            gen?.return(undefined);
            gen = undefined;
          } else if (s.t === 'foreignDelete') {
            for (const r of k.routes())
              if (r.prefix === s.p) {
                k.table.delete(SimKernel.key(r));
                core.kernelDeleted(r.prefix, r.metric);
              }
          } else expect(core.counts.desired).toBe(want.size);
        }
        if (gen !== undefined) for (const piece of gen) for (const op of piece) core.applied(op, k.apply(op));
        converge(core, k);
        expect(core.pending).toBe(false);
        expect(core.counts.desired).toBe(want.size);
        const final = [...want].map(([p, d]) => expectedRoute(p, d)!);
        expect(sameTable(k.routes(), final)).toBe(true);
        expect(core.counts.installed).toBe(final.length);
        expect(core.known).toBe(want.size);
      }),
      { numRuns: 500 },
    );
  });

  it('a million-route burst costs the caller nothing but the log: setRoute reaches no slot until a plan or a read', () => {
    const { core, k } = fresh({ restarting: false });
    expect(core.plan()).toEqual([]); // the first plan after the dump looks at everything
    for (let i = 0; i < 300; i++) core.setRoute(`198.18.${i >> 8}.${i & 255}/32`, via('192.0.2.7'));
    expect(core.pending).toBe(true);
    // the first piece has taken only what it planned to slots
    const gen = core.planPieces(100);
    const first = gen.next().value as KernelOp[];
    expect(first).toHaveLength(100);
    for (const op of first) core.applied(op, k.apply(op));
    // a read between pieces takes the rest to slots, for the next plan; this plan ends with what it had
    expect(core.counts.desired).toBe(300);
    expect([...gen].flat()).toHaveLength(0);
    const rest = core.plan();
    expect(rest).toHaveLength(200);
    for (const op of rest) core.applied(op, k.apply(op));
    expect(k.routes()).toHaveLength(300);
    expect(core.pending).toBe(false);
  });
});

describe('FibCore.planPieces (a plan handed out in pieces, written while the rest is planned)', () => {
  /** A core with routes installed at /24../32 and metric moves pending, so that a plan has replaces and deletes of several lengths. */
  function busy(): { core: FibCore; k: SimKernel } {
    const { core, k } = fresh({ restarting: false });
    for (let i = 0; i < 40; i++) core.setRoute(`198.18.${i}.0/24`, via('192.0.2.7'));
    for (let i = 0; i < 40; i++) core.setRoute(`198.18.0.${i}/32`, via('192.0.2.8'));
    converge(core, k);
    // Withdraw half (deletes of two lengths, interleaved), change some (replaces), move one to another metric (a replace and a delete).
    for (let i = 0; i < 40; i += 2) core.setRoute(`198.18.${i}.0/24`, undefined);
    for (let i = 1; i < 40; i += 2) core.setRoute(`198.18.0.${i}/32`, undefined);
    for (let i = 0; i < 40; i += 4) core.setRoute(`198.18.0.${i}/32`, via('192.0.2.9'));
    core.setRoute('198.18.1.0/24', { kind: 'unicast', gateways: [{ address: '192.0.2.7' }], metric: 77 });
    for (let i = 0; i < 20; i++) core.setRoute(`203.0.113.${i}/32`, via('192.0.2.7', '198.51.100.3'));
    return { core, k };
  }

  it('hands out exactly what plan() returns, in the same order: replaces in pieces of at most `size`, then the deletes', () => {
    for (const size of [1, 3, 7, 1000]) {
      const a = busy().core;
      const b = busy().core;
      const whole = a.plan();
      const pieces = [...b.planPieces(size)];
      expect(pieces.flat()).toEqual(whole);
      const deletes = whole.filter((o) => o.op === 'delete');
      expect(deletes.length).toBeGreaterThan(20);
      expect(pieces.at(-1)).toEqual(deletes);
      for (const p of pieces.slice(0, -1)) {
        expect(p.length).toBeGreaterThan(0);
        expect(p.length).toBeLessThanOrEqual(size);
        expect(p.every((o) => o.op === 'replace')).toBe(true);
      }
      expect(a.pending).toBe(false);
      expect(b.pending).toBe(false);
    }
  });

  it('a change to a prefix already planned, made between pieces, is planned next time', () => {
    const { core, k } = fresh({ restarting: false });
    for (let i = 0; i < 10; i++) core.setRoute(`198.18.0.${i}/32`, via('192.0.2.7'));
    const gen = core.planPieces(2);
    const first = gen.next().value as KernelOp[];
    expect(first.map((o) => o.route.prefix)).toEqual(['198.18.0.0/32', '198.18.0.1/32']);
    for (const op of first) core.applied(op, k.apply(op));
    core.setRoute('198.18.0.0/32', via('192.0.2.8'));
    const rest = [...gen].flat();
    expect(rest).toHaveLength(8);
    for (const op of rest) core.applied(op, k.apply(op));
    expect(core.pending).toBe(true);
    expect(core.plan()).toEqual([
      { op: 'replace', route: { prefix: '198.18.0.0/32', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.8', dev: 'eth0' }] } },
    ]);
  });

  it('stopped early, the prefixes not handed out (and deletes planned but not handed out) stay to be planned', () => {
    const { core, k } = busy();
    const whole = busy().core.plan();
    const gen = core.planPieces(4);
    const first = gen.next().value as KernelOp[];
    expect(first).toHaveLength(4);
    gen.return(undefined);
    expect(core.pending).toBe(true);
    for (const op of first) core.applied(op, k.apply(op));
    // What is left is the rest of the whole plan, replaces and deletes.
    const rest = core.plan();
    const key = (o: KernelOp) => `${o.op} ${o.route.prefix} ${o.route.metric}`;
    expect(rest.map(key).sort()).toEqual(whole.slice(4).map(key).sort());
    for (const op of rest) core.applied(op, k.apply(op));
    expect(core.pending).toBe(false);
    expect(core.plan()).toEqual([]);
  });

  it('refuses a piece size below 1', () => {
    const { core } = fresh({ restarting: false });
    expect(() => core.planPieces(0).next()).toThrow(RangeError);
  });
});
