/**
 * tsbgp against GoBGP 3 (topology tsbgp-gobgp.clab.yml): the five sessions,
 * routes both ways (GoBGP's loaded from an MRT dump), route refresh, graceful
 * restart (GoBGP installs nothing in the kernel, so its RIB is followed),
 * administrative shutdown and link down.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale, GOBGP_PORT, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { sleep } from '../lab/shell.js';
import { DAEMON_V4, DAEMON_V6, daemonRoutes } from './daemon-routes.js';
import { until, expectedAtDaemon, familyOf, HOLD_TIME, session, SESSIONS, sorted, TOPOLOGIES, TS_PREFIXES, TS_ROUTES, tsConfig, tsNegotiated, viewOfTs, type Session } from './harness.js';
import { mrtDump } from './mrt.js';
import { gobgpNegotiated, gobgpView, type GobgpNeighborFull, type GobgpPath } from './readers.js';
import { requireSpeaker, SpeakerProcess } from './speaker-client.js';
import { loadTopology } from '../lab/topology.js';

const available = requireLab(['gobgp', 'tsbgp']);


const withSpeaker = available.ok && requireSpeaker();

/**
 * Follows `gobgp -j monitor global rib --current -a FAMILY` in a namespace: the current table
 * first, then one JSON line per best-path change (`withdrawal: true` when no path is left).
 * Records every moment an expected prefix was absent.
 */
class RibMonitor {
  private readonly child: ChildProcess;
  private readonly present = new Set<string>();
  private buf = '';
  events = 0;
  readonly losses: { at: number; missing: string[] }[] = [];

  constructor(ns: string, family: 'ipv4' | 'ipv6', private readonly expected: readonly string[]) {
    this.child = spawn('ip', ['netns', 'exec', ns, 'gobgp', '-p', String(GOBGP_PORT), '-j', 'monitor', 'global', 'rib', '--current', '-a', family], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString('utf8');
      const lines = this.buf.split('\n');
      this.buf = lines.pop()!;
      for (const line of lines) this.line(line);
    });
  }

  /** The current table has come in with every expected prefix. */
  get ready(): boolean {
    return this.expected.every((p) => this.present.has(p));
  }

  private line(line: string): void {
    if (!line.trim()) return;
    const paths = ([] as GobgpPath[]).concat(JSON.parse(line) as GobgpPath | GobgpPath[]);
    const wasReady = this.ready;
    for (const p of paths) {
      this.events++;
      if ((p as { withdrawal?: boolean }).withdrawal) this.present.delete(p.nlri.prefix);
      else this.present.add(p.nlri.prefix);
    }
    const missing = this.expected.filter((x) => !this.present.has(x));
    if (wasReady && missing.length) this.losses.push({ at: Date.now(), missing });
  }

  async stop(): Promise<{ events: number; losses: { at: number; missing: string[] }[] }> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
    return { events: this.events, losses: this.losses };
  }
}

describe.skipIf(!available.ok)('tsbgp against GoBGP', () => {
  let lab: Lab;
  let ts: SpeakerProcess | undefined;
  /** A fresh speaker process; an earlier one still running (a failed test) is killed first, or it would hold port 179. */
  const restartTs = async (...args: Parameters<typeof SpeakerProcess.start> extends [unknown, unknown, ...infer R] ? R : never): Promise<SpeakerProcess> => {
    await ts?.kill9();
    return SpeakerProcess.start(lab, 'ts1', ...args);
  };

  const gobgp = (...args: string[]): string => lab.mustExec('d1', ['gobgp', ...args]);
  const neighbor = (s: Session): GobgpNeighborFull => JSON.parse(gobgp('-j', 'neighbor', s.ts)) as GobgpNeighborFull;
  const established = (s: Session): boolean => gobgpNegotiated(neighbor(s)).established;
  const ribCount = (f: 'ipv4' | 'ipv6'): number => Number(/Destination: (\d+)/.exec(gobgp('global', 'rib', 'summary', '-a', f))?.[1] ?? NaN);
  /** GoBGP's paths for tsbgp's prefixes (global RIB, every source). */
  const fromTs = (): ReturnType<typeof gobgpView>[] =>
    (['ipv4', 'ipv6'] as const).flatMap((f) => {
      const cover = f === 'ipv4' ? '203.0.113.0/24' : '2001:db8:100::/40';
      const rib = JSON.parse(gobgp('-j', 'global', 'rib', '-a', f, cover, 'longer-prefixes') || '{}') as Record<string, GobgpPath[]>;
      return Object.values(rib).flat().map(gobgpView);
    });
  const present = (): Set<string> => new Set(fromTs().map((r) => r.prefix));
  const allEstablished = async (): Promise<void> => {
    await until(() => {
      for (const s of SESSIONS) expect({ s: s.name, up: established(s) }).toEqual({ s: s.name, up: true });
    }, 60_000, 250);
    for (const s of SESSIONS) await ts!.waitEstablished(s.d, 30_000);
  };

  beforeAll(async () => {
    cleanupStale();
    lab = await Lab.up(loadTopology(join(TOPOLOGIES, 'tsbgp-gobgp.clab.yml')), { ephemeral: true });
    const file = join(lab.node('d1').work, 'routes.mrt');
    // next hop 0.0.0.0 / :: is GoBGP's "self": it sends the session's local address
    writeFileSync(file, mrtDump({ routerId: '198.51.100.11', peerAsn: 4200000002, v4: DAEMON_V4, v6: DAEMON_V6, nextHop4: '0.0.0.0', nextHop6: '::' }));
    gobgp('mrt', 'inject', 'global', file);
  });
  afterAll(async () => {
    await ts?.kill9().catch(() => undefined);
    lab?.teardown();
  });

  it('GoBGP loads the config and the MRT dump: five neighbors for tsbgp, 2048 IPv4 and 1024 IPv6 routes', async () => {
    const ns = JSON.parse(gobgp('-j', 'neighbor')) as GobgpNeighborFull[];
    expect(sorted(ns.map((n) => n.conf.neighbor_address))).toEqual(sorted(SESSIONS.map((s) => s.ts)));
    await until(() => {
      expect(ribCount('ipv4')).toBe(DAEMON_V4.count);
      expect(ribCount('ipv6')).toBe(DAEMON_V6.count);
    }, 10_000, 200);
    const one = JSON.parse(gobgp('-j', 'global', 'rib', '-a', 'ipv4', '198.19.192.8/30')) as Record<string, GobgpPath[]>;
    expect(gobgpView(one['198.19.192.8/30'][0])).toMatchObject({ origin: 'egp', med: 20, communities: ['65010:2', '65010:3'], largeCommunities: ['4200000002:1:2'] });
    for (const n of ns) expect(gobgpNegotiated(n).established).toBe(false);
  });

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('link down: both ends drop the sessions within the hold time, and GoBGP drops the routes', async () => {
      // First, before any session with graceful restart: after one, GoBGP 3.10 kept treating the
      // peer as restart-capable on later sessions whose OPEN had no GR capability, and kept our
      // routes as stale when the hold timer expired (seen in this lab when this test ran last).
      ts = await restartTs(tsConfig({ gracefulRestart: false }), { tag: 'speaker-nogr' });
      await allEstablished();
      await until(() => expect(present().size).toBe(TS_ROUTES.length), 15_000, 200);
      const t0 = Date.now();
      lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'down']);
      try {
        await until(async () => {
          const st = await ts!.status();
          expect(st.filter((p) => p.state === 'Established').map((p) => p.address)).toEqual([]);
          for (const s of SESSIONS) expect(established(s)).toBe(false);
          expect(fromTs().map((r) => `${r.prefix} from ${r.neighbor}${r.stale ? ' (stale)' : ''}`)).toEqual([]);
        }, (HOLD_TIME + 3) * 1000, 200);
        const took = Date.now() - t0;
        console.log(`GoBGP link down: both ends down and routes gone after ${took} ms (hold time ${HOLD_TIME} s)`);
        // the hold timer runs from the last KEEPALIVE, so 9 s plus scheduling slack
        expect(took).toBeLessThanOrEqual((HOLD_TIME + 2) * 1000);
      } finally {
        lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'up']);
      }
      await allEstablished();
      await ts!.stop();
    });
    it('brings up all five sessions; GoBGP and tsbgp agree on the negotiated capabilities', async () => {
      ts = await restartTs(tsConfig());
      await allEstablished();
      for (const s of SESSIONS) {
        const { established: up, peerAsn, ...theirs } = gobgpNegotiated(neighbor(s));
        const { peerAsn: mineAsn, ...mine } = tsNegotiated(await ts.peer(s.d), s);
        expect(up).toBe(true);
        expect({ session: s.name, ...theirs }).toEqual({ session: s.name, ...mine });
        expect({ session: s.name, peerAsn, hold: mine.holdTime, asn4: mine.asn4, families: mine.families }).toEqual({ session: s.name, peerAsn: mineAsn, hold: HOLD_TIME, asn4: true, families: [s.family] });
      }
    });

    it("puts tsbgp's routes in GoBGP's RIB with exactly tsbgp's attributes", async () => {
      await until(() => {
        const routes = fromTs();
        for (const s of SESSIONS) {
          for (const r of TS_ROUTES.filter((x) => familyOf(x.prefix) === s.family)) {
            const got = routes.find((x) => x.neighbor === s.ts && x.prefix === r.prefix);
            const { neighbor: _n, stale: _s, localPref, ...rest } = got ?? ({} as never);
            expect({ session: s.name, ...rest, ...(s.ibgp ? { localPref } : {}) }).toEqual({ session: s.name, ...expectedAtDaemon(r, s) });
          }
        }
        expect(routes).toHaveLength(TS_PREFIXES('ipv4').length * 3 + TS_PREFIXES('ipv6').length * 2);
      }, 30_000);
    });

    it("holds in tsbgp's Adj-RIB-In exactly what GoBGP's Adj-RIB-Out shows on each session", async () => {
      for (const s of SESSIONS) {
        const want = await until(() => {
          const out = JSON.parse(gobgp('-j', 'neighbor', s.ts, 'adj-out', '-a', s.family)) as Record<string, GobgpPath[]>;
          const w = Object.values(out).flat().map((p) => {
            const { origin: _o, neighbor: _n, stale: _s, ...v } = gobgpView(p);
            return viewOfTs(v);
          });
          expect(sorted(w.map((x) => x.prefix))).toEqual(sorted(daemonRoutes(s.family === 'ipv4' ? DAEMON_V4 : DAEMON_V6).map((r) => r.prefix)));
          return w;
        }, 30_000, 250);
        await until(async () => {
          const got = (await ts!.received(s.d)).map(viewOfTs);
          expect(got.length).toBe(want.length);
          const byPrefix = new Map(got.map((r) => [r.prefix, r]));
          for (const w of want) expect(byPrefix.get(w.prefix)).toEqual(w);
        }, 30_000);
      }
    });

    it("route refresh: tsbgp asks and GoBGP re-sends; GoBGP's softresetin sends none (it keeps its own Adj-RIB-In)", async () => {
      const s = session('e4');
      const msgs = (): { sent: Record<string, number>; received: Record<string, number> } => (neighbor(s).state as { messages: { sent: Record<string, number>; received: Record<string, number> } }).messages;
      const before = (await ts!.peer(s.d)).counters;
      const g0 = msgs();
      await ts!.routeRefresh(s.d, 'ipv4');
      await until(async () => {
        expect(msgs().received.refresh ?? 0).toBeGreaterThan(g0.received.refresh ?? 0);
        expect((await ts!.peer(s.d)).counters.updatesIn).toBeGreaterThan(before.updatesIn);
      }, 15_000, 200);
      expect((await ts!.received(s.d)).length).toBe(DAEMON_V4.count);

      // The other direction cannot be driven: GoBGP 3.10 keeps every received path, and
      // `gobgp neighbor X softresetin` re-runs import policy over that stored Adj-RIB-In without
      // sending a ROUTE-REFRESH (its "Route Refresh" sent counter stays 0; seen in this lab).
      // So only check that tsbgp's routes are still all there afterwards.
      const g1 = msgs();
      gobgp('neighbor', s.ts, 'softresetin', '-a', 'ipv4');
      await sleep(500);
      expect(msgs().sent.refresh ?? 0).toBe(g1.sent.refresh ?? 0);
      expect(sorted(fromTs().filter((r) => r.neighbor === s.ts).map((r) => r.prefix))).toEqual(sorted(TS_PREFIXES('ipv4')));
    });

    it("a withdrawal removes tsbgp's route from GoBGP's RIB", async () => {
      const gone = ['203.0.113.16/28', '2001:db8:101::/48'];
      await ts!.withdraw(gone);
      await until(() => expect([...present()].filter((p) => gone.includes(p))).toEqual([]), 15_000, 200);
      await ts!.originate(TS_ROUTES.filter((r) => gone.includes(r.prefix)));
      await until(() => expect(sorted(present())).toEqual(sorted(TS_ROUTES.map((r) => r.prefix))), 15_000, 200);
    });

    it('graceful restart: kill -9 and restart; the RIB never loses a route, then GoBGP takes the new set after End-of-RIB', async () => {
      const kept = TS_ROUTES.filter((r) => r.prefix !== '203.0.113.16/28');
      const next = kept.map((r) => (r.prefix === '203.0.113.32/28' ? { ...r, attrs: { ...r.attrs, med: 5 } } : r));
      // GoBGP has no kernel routes, so its RIB is watched. Polling it with `gobgp` runs left gaps of
      // up to ~180 ms on this loaded machine (each run starts a Go binary), so instead follow
      // `gobgp monitor global rib --current`: the whole table, then every best-path change as it
      // happens, which sees any loss however short.
      const monitors = (['ipv4', 'ipv6'] as const).map((f) => new RibMonitor(lab.ns('d1'), f, kept.map((r) => r.prefix).filter((p) => familyOf(p) === f)));
      await until(() => expect(monitors.map((m) => m.ready)).toEqual([true, true]), 10_000, 50);
      await ts!.kill9();
      const t0 = Date.now();
      await until(() => expect(established(session('e4'))).toBe(false), 15_000, 100);
      ts = await restartTs(tsConfig({ routes: next, restarting: true }), { tag: 'speaker-restarted' });
      await allEstablished();
      await until(() => {
        const e4 = fromTs().filter((r) => r.neighbor === '198.51.100.1');
        expect(e4.map((r) => r.prefix).sort()).toEqual(['203.0.113.0/28', '203.0.113.32/28']);
        expect(e4.find((r) => r.prefix === '203.0.113.32/28')?.med).toBe(5);
        expect(e4.some((r) => r.stale)).toBe(false);
        expect(present().has('203.0.113.16/28')).toBe(false);
      }, 30_000, 200);
      const results = await Promise.all(monitors.map((m) => m.stop()));
      console.log(`GoBGP graceful restart: back in ${Date.now() - t0} ms; ${results.map((r) => r.events).join(' + ')} RIB events seen, ${results.flatMap((r) => r.losses).length} losing a route`);
      expect(results.map((r) => r.events).every((n) => n > 0)).toBe(true);
      expect(results.flatMap((r) => r.losses)).toEqual([]);
    });

    it("administrative shutdown reaches GoBGP as Cease with tsbgp's RFC 9003 message", async () => {
      const message = 'tsbgp interop: maintenance 42';
      await ts!.stop({ message });
      await until(() => {
        for (const s of SESSIONS) expect(established(s)).toBe(false);
      }, 10_000, 200);
      // GoBGP logs each received NOTIFICATION with its code, subcode and the decoded communication
      const log = readFileSync(join(lab.node('d1').work, 'gobgpd.log'), 'utf8').split('\n').filter((l) => l.includes('198.51.100.1') && /notification/i.test(l));
      expect(log.join('\n')).toContain(message);
    });

  });
});
