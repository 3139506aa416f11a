/**
 * tsbgp against FRR 8 (topology tsbgp-frr.clab.yml): the same five sessions
 * and checks as bird.test.ts, read through vtysh's JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { DAEMON_V4, DAEMON_V6, daemonRange, daemonRoutes, frrNetworks } from './daemon-routes.js';
import { D_ASN, expectedAtTs, familyOf, session, sessionAt, SESSIONS, sorted, topologyWith, TS_ROUTES, until, type Session } from './harness.js';
import { frrNegotiated, frrView, type FrrDetailPath, type FrrNeighbor } from './readers.js';
import {
  adjRibInMatches,
  adminShutdown,
  capabilitiesAgree,
  daemonAsksRefresh,
  expectTsPrefixesOn,
  gracefulRestart,
  InteropRun,
  linkDown,
  scale,
  SHUTDOWN_MESSAGE,
  tsAsksRefresh,
  tsRoutesAtDaemon,
  withdrawal,
  type Daemon,
} from './scenarios.js';
import { requireSpeaker } from './speaker-client.js';

const available = requireLab(['frr', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

describe.skipIf(!available.ok)('tsbgp against FRR', () => {
  const run = new InteropRun();

  beforeAll(async () => {
    cleanupStale();
    const t = topologyWith('tsbgp-frr.clab.yml', 'd1', (base) => `${base}\n${frrNetworks(D_ASN)}`);
    await run.up(t.topo, t.cleanup);
  });
  afterAll(() => run.down());

  const vtysh = (cmd: string): string => run.lab.mustExec('d1', ['vtysh', '-c', cmd]);
  const neighbors = (): Record<string, FrrNeighbor> => JSON.parse(vtysh('show bgp neighbor json')) as Record<string, FrrNeighbor>;
  const neighborIn = (ns: Record<string, FrrNeighbor>, s: Session): FrrNeighbor => {
    const n = ns[s.ts];
    if (!n) throw new Error(`FRR has no neighbor ${s.ts}`);
    return n;
  };
  const neighbor = (s: Session): FrrNeighbor => neighborIn(neighbors(), s);
  const stats = (s: Session): Record<string, number> => (neighbor(s).messageStats ?? {}) as Record<string, number>;
  const daemon: Daemon = {
    name: 'FRR',
    sessions: SESSIONS,
    states: () => {
      const ns = neighbors();
      return (s) => neighborIn(ns, s).bgpState;
    },
    established: 'Established',
    // FRR's paths for tsbgp's prefixes, one query per prefix
    learned: (prefixes = TS_ROUTES.map((r) => r.prefix)) =>
      prefixes.flatMap((p) => {
        const j = JSON.parse(vtysh(`show bgp ${familyOf(p)} unicast ${p} json`)) as { paths?: FrrDetailPath[] };
        return (j.paths ?? []).map((x) => {
          const { peer, ...v } = frrView(p, x);
          return { ...v, session: sessionAt(peer) };
        });
      }),
    kernelProto: 'bgp',
  };

  it('FRR loads the config: five neighbors for tsbgp, 2048 IPv4 and 1024 IPv6 networks to announce', () => {
    const ns = neighbors();
    expect(sorted(Object.keys(ns))).toEqual(sorted(SESSIONS.map((s) => s.ts)));
    for (const s of SESSIONS) expect(ns[s.ts].bgpState).not.toBe('Established');
    const count = (f: string): number => Object.keys((JSON.parse(vtysh(`show bgp ${f} unicast json`)) as { routes?: object }).routes ?? {}).length;
    expect(count('ipv4')).toBe(DAEMON_V4.count);
    expect(count('ipv6')).toBe(DAEMON_V6.count);
    expect(ns['198.51.100.3'].localAs).toBe(65002);
  });

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('brings up all five sessions; FRR and tsbgp agree on the negotiated capabilities', async () => {
      await capabilitiesAgree(run, daemon, (s) => frrNegotiated(neighbor(s)));
    });

    it("puts tsbgp's routes in FRR's RIB with exactly tsbgp's attributes, and in the kernel", async () => {
      // FRR shows its default local preference on eBGP paths too; only iBGP carries ours
      await tsRoutesAtDaemon(run, daemon);
    });

    it("holds in tsbgp's Adj-RIB-In exactly what FRR advertises on each session", async () => {
      await adjRibInMatches(run, SESSIONS, async (s) => {
        const routes = new Map(daemonRoutes(daemonRange(s.family)).map((r) => [r.prefix, r]));
        // FRR fills a neighbor's Adj-RIB-Out a moment after the session is up (its update groups
        // run on a timer), so wait for the whole set before taking it as the reference
        const adv = await until(
          () => {
            const a =
              (
                JSON.parse(vtysh(`show bgp ${s.family} unicast neighbors ${s.ts} advertised-routes json`)) as {
                  advertisedRoutes?: Record<string, { metric?: number; path?: string }>;
                }
              ).advertisedRoutes ?? {};
            expect(sorted(Object.keys(a))).toEqual(sorted(routes.keys()));
            return a;
          },
          30_000,
          250,
        );
        // FRR's advertised-routes shows the path before its own AS goes on; with local-as … replace-as that AS is 65002
        return Object.entries(adv).map(([prefix, a]) => ({ ...expectedAtTs(s, routes.get(prefix)!), med: a.metric }));
      });
    });

    it('route refresh: tsbgp asks and FRR re-sends; FRR asks (clear soft in) and tsbgp re-sends', async () => {
      const s = session('e4');
      await tsAsksRefresh(run, s, () => {
        const before = stats(s);
        return () => expect(stats(s).routeRefreshRecv).toBeGreaterThan(before.routeRefreshRecv ?? 0);
      });
      await daemonAsksRefresh(run, s, () => {
        const mid = stats(s);
        vtysh(`clear bgp ipv4 unicast ${s.ts} soft in`);
        return () => {
          expect(stats(s).routeRefreshSent).toBeGreaterThan(mid.routeRefreshSent ?? 0);
          expect(stats(s).updatesRecv).toBeGreaterThan(mid.updatesRecv ?? 0);
        };
      });
      expectTsPrefixesOn(daemon, [s]);
    });

    it('drain (RFC 8326): FRR sees every route with graceful-shutdown, LOCAL_PREF 0 over iBGP, without a session reset; undrain reverts', async () => {
      const p = TS_ROUTES.find((r) => familyOf(r.prefix) === 'ipv4')!.prefix;
      const ups = (s: Session) => Number(neighbor(s).connectionsEstablished ?? 0);
      const before = SESSIONS.map(ups);
      await run.ts.drain();
      await until(
        () => {
          const paths = daemon.learned([p]);
          const e4 = paths.find((x) => x.session === 'e4');
          const i4 = paths.find((x) => x.session === 'i4');
          expect(e4?.communities).toContain('graceful-shutdown');
          expect(i4?.communities).toContain('graceful-shutdown');
          expect(i4?.localPref).toBe(0);
        },
        15_000,
        200,
      );
      expect(SESSIONS.map(ups)).toEqual(before);
      await run.ts.drain(true);
      await until(
        () => {
          for (const x of daemon.learned([p])) expect(x.communities).not.toContain('graceful-shutdown');
        },
        15_000,
        200,
      );
      expect(SESSIONS.map(ups)).toEqual(before);
    });

    it("a withdrawal removes tsbgp's route from FRR's RIB and kernel", async () => {
      await withdrawal(run, daemon);
    });

    it('graceful restart: kill -9 and restart; the kernel never loses a route, then FRR takes the new set after End-of-RIB', async () => {
      await gracefulRestart(run, daemon);
    });

    it("administrative shutdown reaches FRR as Cease with tsbgp's RFC 9003 message", async () => {
      await adminShutdown(run, daemon);
      const n = neighbor(session('e4'));
      expect(String(n.lastNotificationReason ?? n.lastResetDueTo)).toMatch(/Cease\/Administrative Shutdown/i);
      // FRR keeps the received shutdown communication with the neighbor
      expect(`${JSON.stringify(n)}\n${vtysh('show bgp neighbors 198.51.100.1')}`).toContain(SHUTDOWN_MESSAGE);
    });

    it("link down: both ends drop the sessions within the hold time, and FRR removes tsbgp's routes from the kernel", async () => {
      await linkDown(run, daemon);
    });

    it('scale: 100,000 IPv4 prefixes from tsbgp all arrive in FRR', async () => {
      await scale(run, daemon, {
        count: () => {
          const j = JSON.parse(vtysh('show bgp ipv4 unicast summary json')) as { peers?: Record<string, { pfxRcd?: number }> };
          return j.peers?.['198.51.100.1']?.pfxRcd ?? 0;
        },
        routes: (p) => daemon.learned([p]),
      });
    }, 180_000);
  });
});
