/**
 * tsbgp against FRR 8 (topology tsbgp-frr.clab.yml): the same five sessions
 * and checks as bird.test.ts, read through vtysh's JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { sleep } from '../lab/shell.js';
import { ATTR_SETS, DAEMON_V4, DAEMON_V6, daemonRoutes, frrNetworks } from './daemon-routes.js';
import {
  until, KernelMonitor, D_ASN, expectedAtDaemon, familyOf, HOLD_TIME, SCALE_RANGE, session, SESSIONS, sorted, topologyWith, TS_PREFIXES, TS_ROUTES, tsConfig, tsNegotiated, viewOfTs,
  type Session,
} from './harness.js';
import { frrNegotiated, frrView, type FrrDetailPath, type FrrNeighbor } from './readers.js';
import { requireSpeaker, SpeakerProcess } from './speaker-client.js';

const available = requireLab(['frr', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

describe.skipIf(!available.ok)('tsbgp against FRR', () => {
  let lab: Lab;
  let cleanup = (): void => {};
  let ts: SpeakerProcess | undefined;
  /** A fresh speaker process; an earlier one still running (a failed test) is killed first, or it would hold port 179. */
  const restartTs = async (...args: Parameters<typeof SpeakerProcess.start> extends [unknown, unknown, ...infer R] ? R : never): Promise<SpeakerProcess> => {
    await ts?.kill9();
    return SpeakerProcess.start(lab, 'ts1', ...args);
  };

  beforeAll(async () => {
    cleanupStale();
    const t = topologyWith('tsbgp-frr.clab.yml', 'd1', (base) => `${base}\n${frrNetworks(D_ASN)}`);
    cleanup = t.cleanup;
    lab = await Lab.up(t.topo, { ephemeral: true });
  });
  afterAll(async () => {
    await ts?.kill9().catch(() => undefined);
    lab?.teardown();
    cleanup();
  });

  const vtysh = (cmd: string): string => lab.mustExec('d1', ['vtysh', '-c', cmd]);
  const neighbors = (): Record<string, FrrNeighbor> => JSON.parse(vtysh('show bgp neighbor json')) as Record<string, FrrNeighbor>;
  const neighbor = (s: Session): FrrNeighbor => {
    const n = neighbors()[s.ts];
    if (!n) throw new Error(`FRR has no neighbor ${s.ts}`);
    return n;
  };
  const stats = (s: Session): Record<string, number> => (neighbor(s).messageStats ?? {}) as Record<string, number>;
  /** FRR's paths for tsbgp's prefixes, per session (peer address). */
  const fromTs = (prefixes: readonly string[] = TS_ROUTES.map((r) => r.prefix)) =>
    prefixes.flatMap((p) => {
      const j = JSON.parse(vtysh(`show bgp ${familyOf(p)} unicast ${p} json`)) as { paths?: FrrDetailPath[] };
      return (j.paths ?? []).map((x) => frrView(p, x));
    });
  const kernel = (): Set<string> => new Set([...lab.kernelRoutes('d1', 4), ...lab.kernelRoutes('d1', 6)].filter((r) => r.protocol === 'bgp').map((r) => r.dst));
  const allEstablished = async (names: readonly Session['name'][] = SESSIONS.map((s) => s.name)): Promise<void> => {
    await until(() => {
      const ns = neighbors();
      for (const s of SESSIONS.filter((x) => names.includes(x.name))) expect({ s: s.name, state: ns[s.ts]?.bgpState }).toEqual({ s: s.name, state: 'Established' });
    }, 60_000, 250);
    for (const s of SESSIONS.filter((x) => names.includes(x.name))) await ts!.waitEstablished(s.d, 30_000);
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
      ts = await restartTs(tsConfig());
      await allEstablished();
      for (const s of SESSIONS) {
        const { established, ...theirs } = frrNegotiated(neighbor(s));
        const mine = tsNegotiated(await ts.peer(s.d), s);
        expect(established).toBe(true);
        expect({ session: s.name, ...theirs }).toEqual({ session: s.name, ...mine });
        expect({ session: s.name, hold: mine.holdTime, asn4: mine.asn4, families: mine.families }).toEqual({ session: s.name, hold: HOLD_TIME, asn4: true, families: [s.family] });
      }
    });

    it("puts tsbgp's routes in FRR's RIB with exactly tsbgp's attributes, and in the kernel", async () => {
      await until(() => {
        const routes = fromTs();
        for (const s of SESSIONS) {
          for (const r of TS_ROUTES.filter((x) => familyOf(x.prefix) === s.family)) {
            const { peer, ...got } = routes.find((x) => x.peer === s.ts && x.prefix === r.prefix) ?? ({} as never);
            void peer;
            // FRR shows its default local preference on eBGP paths too; only iBGP carries ours
            const { localPref, ...rest } = got;
            expect({ session: s.name, ...rest, ...(s.ibgp ? { localPref } : {}) }).toEqual({ session: s.name, ...expectedAtDaemon(r, s) });
          }
        }
        expect(routes).toHaveLength(TS_PREFIXES('ipv4').length * 3 + TS_PREFIXES('ipv6').length * 2);
      }, 30_000);
      await until(() => expect(sorted(kernel())).toEqual(sorted(TS_ROUTES.map((r) => r.prefix))), 15_000);
    });

    it("holds in tsbgp's Adj-RIB-In exactly what FRR advertises on each session", async () => {
      for (const s of SESSIONS) {
        const sets = new Map(daemonRoutes(s.family === 'ipv4' ? DAEMON_V4 : DAEMON_V6).map((r) => [r.prefix, ATTR_SETS[r.set]]));
        // FRR fills a neighbor's Adj-RIB-Out a moment after the session is up (its update groups
        // run on a timer), so wait for the whole set before taking it as the reference
        const adv = await until(() => {
          const a = (JSON.parse(vtysh(`show bgp ${s.family} unicast neighbors ${s.ts} advertised-routes json`)) as { advertisedRoutes?: Record<string, { metric?: number; path?: string }> }).advertisedRoutes ?? {};
          expect(sorted(Object.keys(a))).toEqual(sorted(sets.keys()));
          return a;
        }, 30_000, 250);
        const want = Object.entries(adv).map(([prefix, a]) => {
          const set = sets.get(prefix)!;
          // FRR's advertised-routes shows the path before its own AS goes on; with local-as … replace-as that AS is 65002
          return viewOfTs({ prefix, asPath: s.ibgp ? [] : [s.daemonAsn], nextHop: s.d, med: a.metric, localPref: s.ibgp ? 100 : undefined, communities: set.communities, largeCommunities: set.largeCommunities });
        });
        await until(async () => {
          const got = (await ts!.received(s.d)).map(viewOfTs);
          expect(got.length).toBe(want.length);
          const byPrefix = new Map(got.map((r) => [r.prefix, r]));
          for (const w of want) expect(byPrefix.get(w.prefix)).toEqual(w);
        }, 30_000);
      }
    });

    it('route refresh: tsbgp asks and FRR re-sends; FRR asks (clear soft in) and tsbgp re-sends', async () => {
      const s = session('e4');
      const before = (await ts!.peer(s.d)).counters;
      const frrBefore = stats(s);
      await ts!.routeRefresh(s.d, 'ipv4');
      await until(async () => {
        expect(stats(s).routeRefreshRecv).toBeGreaterThan(frrBefore.routeRefreshRecv ?? 0);
        expect((await ts!.peer(s.d)).counters.updatesIn).toBeGreaterThan(before.updatesIn);
      }, 15_000, 200);
      expect((await ts!.received(s.d)).length).toBe(DAEMON_V4.count);

      const mid = stats(s);
      const tsOut = (await ts!.peer(s.d)).counters.updatesOut;
      vtysh(`clear bgp ipv4 unicast ${s.ts} soft in`);
      await until(async () => {
        expect(stats(s).routeRefreshSent).toBeGreaterThan(mid.routeRefreshSent ?? 0);
        expect(stats(s).updatesRecv).toBeGreaterThan(mid.updatesRecv ?? 0);
        expect((await ts!.peer(s.d)).counters.updatesOut).toBeGreaterThan(tsOut);
      }, 15_000, 200);
      expect(sorted(fromTs(TS_PREFIXES('ipv4')).filter((r) => r.peer === s.ts).map((r) => r.prefix))).toEqual(sorted(TS_PREFIXES('ipv4')));
    });

    it("a withdrawal removes tsbgp's route from FRR's RIB and kernel", async () => {
      const gone = ['203.0.113.16/28', '2001:db8:101::/48'];
      await ts!.withdraw(gone);
      await until(() => {
        expect(fromTs(gone)).toEqual([]);
        expect([...kernel()].filter((p) => gone.includes(p))).toEqual([]);
      }, 15_000, 200);
      await ts!.originate(TS_ROUTES.filter((r) => gone.includes(r.prefix)));
      await until(() => expect(sorted(kernel())).toEqual(sorted(TS_ROUTES.map((r) => r.prefix))), 15_000, 200);
    });

    it('graceful restart: kill -9 and restart; the kernel never loses a route, then FRR takes the new set after End-of-RIB', async () => {
      const kept = TS_ROUTES.filter((r) => r.prefix !== '203.0.113.16/28');
      const next = kept.map((r) => (r.prefix === '203.0.113.32/28' ? { ...r, attrs: { ...r.attrs, med: 5 } } : r));
      const watch = new KernelMonitor(lab.ns('d1'), kept.map((r) => r.prefix), kernel(), 'bgp');
      expect(watch.complete).toBe(true);
      // let `ip monitor` subscribe before anything changes
      await sleep(300);
      await ts!.kill9();
      const t0 = Date.now();
      await until(() => expect(neighbor(session('e4')).bgpState).not.toBe('Established'), 15_000, 100);
      ts = await restartTs(tsConfig({ routes: next, restarting: true }), { tag: 'speaker-restarted' });
      await allEstablished();
      await until(() => {
        const e4 = fromTs(TS_PREFIXES('ipv4')).filter((r) => r.peer === '198.51.100.1');
        expect(e4.map((r) => r.prefix).sort()).toEqual(['203.0.113.0/28', '203.0.113.32/28']);
        expect(e4.find((r) => r.prefix === '203.0.113.32/28')?.med).toBe(5);
        expect(kernel().has('203.0.113.16/28')).toBe(false);
      }, 30_000, 200);
      const w = await watch.stop();
      console.log(`FRR graceful restart: back in ${Date.now() - t0} ms; ${w.events} kernel route events followed, ${w.losses.length} with a route missing`);
      // the monitor was listening: it saw the dropped route go (after End-of-RIB), and only that one
      expect(w.deleted).toEqual(['203.0.113.16/28']);
      expect(w.losses).toEqual([]);
    });

    it("administrative shutdown reaches FRR as Cease with tsbgp's RFC 9003 message", async () => {
      const message = 'tsbgp interop: maintenance 42';
      await ts!.stop({ message });
      await until(() => {
        for (const s of SESSIONS) expect(neighbor(s).bgpState).not.toBe('Established');
      }, 10_000, 200);
      const n = neighbor(session('e4'));
      expect(String(n.lastNotificationReason ?? n.lastResetDueTo)).toMatch(/Cease\/Administrative Shutdown/i);
      // FRR keeps the received shutdown communication with the neighbor
      expect(`${JSON.stringify(n)}\n${vtysh('show bgp neighbors 198.51.100.1')}`).toContain(message);
    });

    it("link down: both ends drop the sessions within the hold time, and FRR removes tsbgp's routes from the kernel", async () => {
      // without graceful restart, so the routes go at once (with it, FRR would rightly keep them for the restart time)
      ts = await restartTs(tsConfig({ gracefulRestart: false }), { tag: 'speaker-nogr' });
      await allEstablished();
      await until(() => expect(kernel().size).toBe(TS_ROUTES.length), 15_000, 200);
      const t0 = Date.now();
      lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'down']);
      try {
        await until(async () => {
          const st = await ts!.status();
          expect(st.filter((p) => p.state === 'Established').map((p) => p.address)).toEqual([]);
          for (const s of SESSIONS) expect(neighbor(s).bgpState).not.toBe('Established');
          expect(kernel().size).toBe(0);
        }, (HOLD_TIME + 3) * 1000, 200);
        const took = Date.now() - t0;
        console.log(`FRR link down: both ends down and kernel clean after ${took} ms (hold time ${HOLD_TIME} s)`);
        // the hold timer runs from the last KEEPALIVE, so 9 s plus scheduling slack
        expect(took).toBeLessThanOrEqual((HOLD_TIME + 2) * 1000);
      } finally {
        lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'up']);
      }
      await allEstablished();
      await ts!.stop();
    });

    it('scale: 100,000 IPv4 prefixes from tsbgp all arrive in FRR', async () => {
      ts = await restartTs(tsConfig({ sessions: ['e4'], routes: [], ranges: [{ range: SCALE_RANGE, attrs: { med: 1, communities: ['65001:100'] } }], verbose: false }), { tag: 'speaker-scale' });
      const pfx = (): number => {
        const j = JSON.parse(vtysh('show bgp ipv4 unicast summary json')) as { peers?: Record<string, { pfxRcd?: number }> };
        return j.peers?.['198.51.100.1']?.pfxRcd ?? 0;
      };
      await until(() => expect(neighbor(session('e4')).bgpState).toBe('Established'), 60_000, 100);
      const up = Date.now();
      let n = 0;
      while ((n = pfx()) < SCALE_RANGE.count && Date.now() - up < 120_000) await sleep(100);
      const ms = Date.now() - up;
      console.log(`FRR scale: ${n} of ${SCALE_RANGE.count} prefixes in FRR's RIB ${ms} ms after the session came up`);
      expect(n).toBe(SCALE_RANGE.count);
      const last = fromTs(['198.19.134.159/32']);
      expect(last.map((r) => ({ p: r.prefix, med: r.med, c: r.communities }))).toEqual([{ p: '198.19.134.159/32', med: 1, c: ['65001:100'] }]);
    }, 180_000);
  });
});
