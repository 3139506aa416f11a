/**
 * tsbgp against BIRD 2 (topology tsbgp-bird.clab.yml): five sessions (eBGP
 * and iBGP with 4-byte ASNs, eBGP with a 2-byte ASN, IPv4 and IPv6), routes
 * both ways, route refresh both ways, graceful restart, administrative
 * shutdown, link down, and 100,000 prefixes.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale, Lab, parseBirdRoutes } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { sleep } from '../lab/shell.js';
import { birdStatic, DAEMON_V4, DAEMON_V6, daemonRoutes, ATTR_SETS } from './daemon-routes.js';
import {
  until, KernelMonitor, expectedAtDaemon, SCALE_RANGE, session, SESSIONS, sorted, topologyWith, TS_PREFIXES, TS_ROUTES, tsConfig, tsNegotiated, viewOfTs, HOLD_TIME,
  type Session,
} from './harness.js';
import { birdNegotiated, birdViews, parseBirdSession } from './readers.js';
import { requireSpeaker, SpeakerProcess } from './speaker-client.js';

const available = requireLab(['bird', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

describe.skipIf(!available.ok)('tsbgp against BIRD', () => {
  let lab: Lab;
  let cleanup = (): void => {};
  let ts: SpeakerProcess | undefined;
  /** A fresh speaker process; an earlier one still running (a failed test) is killed first, or it would hold port 179. */
  const restartTs = async (...args: Parameters<typeof SpeakerProcess.start> extends [unknown, unknown, ...infer R] ? R : never): Promise<SpeakerProcess> => {
    await ts?.kill9();
    return SpeakerProcess.start(lab, 'ts1', ...args);
  };
  let logFile = '';

  beforeAll(async () => {
    cleanupStale();
    // BIRD's log goes next to the generated config, so the shutdown test can read BIRD's own words
    const t = topologyWith('tsbgp-bird.clab.yml', 'd1', (base, dir) => `${base}\nlog "${dir}/bird.log" all;\n${birdStatic()}`);
    logFile = `${t.dir}/bird.log`;
    cleanup = t.cleanup;
    lab = await Lab.up(t.topo, { ephemeral: true });
  });
  afterAll(async () => {
    await ts?.kill9().catch(() => undefined);
    lab?.teardown();
    cleanup();
  });

  const proto = (name: string): string => lab.mustExec('d1', ['birdc', 'show', 'protocols', 'all', name]);
  /** BIRD's routes learned from tsbgp (one per session and prefix). */
  const fromTs = () => birdViews(lab.birdRoutes('d1').filter((r) => SESSIONS.some((s) => s.name === r.protocol)));
  const kernel = (): Set<string> => new Set([...lab.kernelRoutes('d1', 4), ...lab.kernelRoutes('d1', 6)].filter((r) => r.protocol === 'bird').map((r) => r.dst));
  const importUpdates = (name: string): number => Number(/Import updates:\s+(\d+)/.exec(proto(name))?.[1] ?? NaN);
  const allEstablished = async (): Promise<void> => {
    await until(() => {
      for (const s of SESSIONS) expect({ s: s.name, state: parseBirdSession(proto(s.name)).state }).toEqual({ s: s.name, state: 'Established' });
    }, 60_000, 250);
    for (const s of SESSIONS) await ts!.waitEstablished(s.d, 30_000);
  };

  it('BIRD loads the config: five sessions to tsbgp, 2048 IPv4 and 1024 IPv6 routes to announce', async () => {
    const protos = lab.birdProtocols('d1');
    expect(protos.filter((p) => p.proto === 'BGP').map((p) => p.name).sort()).toEqual(['e2', 'e4', 'e6', 'i4', 'i6']);
    const count = (p: string): number => Number(/(\d+) of \d+ routes/.exec(lab.mustExec('d1', ['birdc', 'show', 'route', 'protocol', p, 'count']))?.[1] ?? NaN);
    expect(count('gen4')).toBe(DAEMON_V4.count);
    expect(count('gen6')).toBe(DAEMON_V6.count);
    // nothing to talk to yet: the sessions wait (Active/Connect/Idle), none is Established
    for (const s of SESSIONS) expect(parseBirdSession(proto(s.name)).state).not.toBe('Established');
  });

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('brings up all five sessions; BIRD and tsbgp agree on the negotiated capabilities', async () => {
      ts = await restartTs(tsConfig());
      await allEstablished();
      for (const s of SESSIONS) {
        const bird = birdNegotiated(proto(s.name));
        const mine = tsNegotiated(await ts.peer(s.d), s);
        const { established, ...theirs } = bird;
        expect(established).toBe(true);
        expect({ session: s.name, ...theirs }).toEqual({ session: s.name, ...mine });
        // what we configured, so a mistake on both sides cannot agree by accident
        expect({ session: s.name, hold: mine.holdTime, asn4: mine.asn4, families: mine.families, peerAsn: bird.peerAsn }).toEqual({ session: s.name, hold: HOLD_TIME, asn4: true, families: [s.family], peerAsn: s.tsAsn });
      }
    });

    it("puts tsbgp's routes in BIRD's RIB with exactly tsbgp's attributes, and in the kernel", async () => {
      const check = (s: Session, routes: ReturnType<typeof fromTs>): void => {
        for (const r of TS_ROUTES.filter((x) => (x.prefix.includes(':') ? 'ipv6' : 'ipv4') === s.family)) {
          const got = routes.find((x) => x.protocol === s.name && x.prefix === r.prefix);
          const want = expectedAtDaemon(r, s);
          // BIRD gives every imported eBGP route its default local preference (100); only iBGP carries ours
          const { protocol, localPref, ...rest } = got ?? ({ localPref: undefined } as never);
          expect({ session: s.name, ...rest, ...(s.ibgp ? { localPref } : {}) }).toEqual({ session: s.name, ...want });
          void protocol;
        }
      };
      await until(() => {
        const routes = fromTs();
        for (const s of SESSIONS) check(s, routes);
        expect(routes).toHaveLength(TS_PREFIXES('ipv4').length * 3 + TS_PREFIXES('ipv6').length * 2);
      }, 30_000);
      await until(() => expect(sorted(kernel())).toEqual(sorted(TS_ROUTES.map((r) => r.prefix))), 15_000);
    });

    it("holds in tsbgp's Adj-RIB-In exactly what BIRD exports on each session", async () => {
      for (const s of SESSIONS) {
        const range = s.family === 'ipv4' ? DAEMON_V4 : DAEMON_V6;
        const want = daemonRoutes(range).map((r) => {
          const a = ATTR_SETS[r.set];
          return viewOfTs({ prefix: r.prefix, asPath: s.ibgp ? [] : [s.daemonAsn], nextHop: s.d, med: a.med, localPref: s.ibgp ? 100 : undefined, communities: a.communities, largeCommunities: a.largeCommunities });
        });
        // BIRD's own view of the same export (its Adj-RIB-Out before next hop and AS path are set)
        await until(() => {
          const exported = parseBirdRoutes(lab.mustExec('d1', ['birdc', 'show', 'route', 'export', s.name, 'all']));
          expect(sorted(exported.map((r) => r.prefix))).toEqual(sorted(want.map((r) => r.prefix)));
        }, 30_000, 250);
        await until(async () => {
          const got = (await ts!.received(s.d)).map(viewOfTs);
          expect(got.length).toBe(want.length);
          const byPrefix = new Map(got.map((r) => [r.prefix, r]));
          for (const w of want) expect(byPrefix.get(w.prefix)).toEqual(w);
        }, 30_000);
      }
    });

    it('route refresh: tsbgp asks and BIRD re-sends; BIRD asks (reload in) and tsbgp re-sends', async () => {
      const s = session('e4');
      const before = (await ts!.peer(s.d)).counters;
      await ts!.routeRefresh(s.d, 'ipv4');
      await until(async () => expect((await ts!.peer(s.d)).counters.updatesIn).toBeGreaterThan(before.updatesIn), 15_000, 200);
      expect((await ts!.received(s.d)).length).toBe(DAEMON_V4.count);

      const birdBefore = importUpdates(s.name);
      const tsOut = (await ts!.peer(s.d)).counters.updatesOut;
      lab.mustExec('d1', ['birdc', 'reload', 'in', s.name]);
      await until(async () => {
        expect(importUpdates(s.name)).toBeGreaterThanOrEqual(birdBefore + TS_PREFIXES('ipv4').length);
        expect((await ts!.peer(s.d)).counters.updatesOut).toBeGreaterThan(tsOut);
      }, 15_000, 200);
      expect(fromTs().filter((r) => r.protocol === s.name).map((r) => r.prefix).sort()).toEqual(TS_PREFIXES('ipv4').sort());
    });

    it("a withdrawal removes tsbgp's route from BIRD's RIB and kernel", async () => {
      const gone = ['203.0.113.16/28', '2001:db8:101::/48'];
      await ts!.withdraw(gone);
      await until(() => {
        expect(fromTs().filter((r) => gone.includes(r.prefix))).toEqual([]);
        expect([...kernel()].filter((p) => gone.includes(p))).toEqual([]);
      }, 15_000, 200);
      await ts!.originate(TS_ROUTES.filter((r) => gone.includes(r.prefix)));
      await until(() => expect(sorted(kernel())).toEqual(sorted(TS_ROUTES.map((r) => r.prefix))), 15_000, 200);
    });

    it('graceful restart: kill -9 and restart; the kernel never loses a route, then BIRD takes the new set after End-of-RIB', async () => {
      // the restarted speaker drops 203.0.113.16/28 and changes the MED of 203.0.113.32/28
      const kept = TS_ROUTES.filter((r) => r.prefix !== '203.0.113.16/28');
      const next = kept.map((r) => (r.prefix === '203.0.113.32/28' ? { ...r, attrs: { ...r.attrs, med: 5 } } : r));
      const watch = new KernelMonitor(lab.ns('d1'), kept.map((r) => r.prefix), kernel(), 'bird');
      expect(watch.complete).toBe(true);
      // let `ip monitor` subscribe before anything changes
      await sleep(300);
      await ts!.kill9();
      const t0 = Date.now();
      // BIRD notices the dead connection (RST) and keeps the routes as stale
      await until(() => expect(parseBirdSession(proto('e4')).state).not.toBe('Established'), 15_000, 100);
      ts = await restartTs(tsConfig({ routes: next, restarting: true }), { tag: 'speaker-restarted' });
      await allEstablished();
      await until(() => {
        const e4 = fromTs().filter((r) => r.protocol === 'e4');
        expect(e4.map((r) => r.prefix).sort()).toEqual(['203.0.113.0/28', '203.0.113.32/28']);
        expect(e4.find((r) => r.prefix === '203.0.113.32/28')?.med).toBe(5);
        expect(kernel().has('203.0.113.16/28')).toBe(false);
      }, 30_000, 200);
      const w = await watch.stop();
      console.log(`BIRD graceful restart: back in ${Date.now() - t0} ms; ${w.events} kernel route events followed, ${w.losses.length} with a route missing`);
      // the monitor was listening: it saw the dropped route go (after End-of-RIB), and only that one
      expect(w.deleted).toEqual(['203.0.113.16/28']);
      expect(w.losses).toEqual([]);
    });

    it("administrative shutdown reaches BIRD as Cease with tsbgp's RFC 9003 message", async () => {
      const message = 'tsbgp interop: maintenance 42';
      await ts!.stop({ message });
      await until(() => {
        for (const s of SESSIONS) expect(parseBirdSession(proto(s.name)).state).not.toBe('Established');
      }, 10_000, 200);
      const text = proto('e4');
      // BIRD 2.0.12 shows "Last error: Received: Administrative shutdown" and logs the message text with it
      expect(parseBirdSession(text).lastError).toMatch(/Received: Administrative shutdown/);
      expect(readFileSync(logFile, 'utf8')).toContain(message);
    });

    it("link down: both ends drop the sessions within the hold time, and BIRD removes tsbgp's routes from the kernel", async () => {
      // without graceful restart, so the routes go at once (with it, BIRD would rightly keep them for the restart time)
      ts = await restartTs(tsConfig({ gracefulRestart: false }), { tag: 'speaker-nogr' });
      await allEstablished();
      await until(() => expect(kernel().size).toBe(TS_ROUTES.length), 15_000, 200);
      const t0 = Date.now();
      lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'down']);
      try {
        await until(async () => {
          const st = await ts!.status();
          expect(st.filter((p) => p.state === 'Established').map((p) => p.address)).toEqual([]);
          for (const s of SESSIONS) expect(parseBirdSession(proto(s.name)).state).not.toBe('Established');
          expect(kernel().size).toBe(0);
        }, (HOLD_TIME + 3) * 1000, 200);
        const took = Date.now() - t0;
        console.log(`BIRD link down: both ends down and kernel clean after ${took} ms (hold time ${HOLD_TIME} s)`);
        // the hold timer runs from the last KEEPALIVE, so 9 s plus scheduling slack
        expect(took).toBeLessThanOrEqual((HOLD_TIME + 2) * 1000);
      } finally {
        lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'up']);
      }
      await allEstablished();
      await ts!.stop();
    });

    it('scale: 100,000 IPv4 prefixes from tsbgp all arrive in BIRD', async () => {
      ts = await restartTs(tsConfig({ sessions: ['e4'], routes: [], ranges: [{ range: SCALE_RANGE, attrs: { med: 1, communities: ['65001:100'] } }], verbose: false }), { tag: 'speaker-scale' });
      const count = (): number => Number(/(\d+) of \d+ routes/.exec(lab.mustExec('d1', ['birdc', 'show', 'route', 'protocol', 'e4', 'count']))?.[1] ?? 0);
      await until(() => expect(parseBirdSession(proto('e4')).state).toBe('Established'), 60_000, 100);
      const up = Date.now();
      let n = 0;
      while ((n = count()) < SCALE_RANGE.count && Date.now() - up < 120_000) await sleep(100);
      const ms = Date.now() - up;
      console.log(`BIRD scale: ${n} of ${SCALE_RANGE.count} prefixes in BIRD's RIB ${ms} ms after the session came up`);
      expect(n).toBe(SCALE_RANGE.count);
      const sample = birdViews(parseBirdRoutes(lab.mustExec('d1', ['birdc', 'show', 'route', '198.19.134.159/32', 'all'])));
      expect(sample.map((r) => ({ p: r.prefix, med: r.med, c: r.communities }))).toEqual([{ p: '198.19.134.159/32', med: 1, c: ['65001:100'] }]);
    }, 180_000);
  });
});
