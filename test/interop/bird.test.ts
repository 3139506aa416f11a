/**
 * tsbgp against BIRD 2 (topology tsbgp-bird.clab.yml): five sessions (eBGP
 * and iBGP with 4-byte ASNs, eBGP with a 2-byte ASN, IPv4 and IPv6), routes
 * both ways, route refresh both ways, graceful restart, administrative
 * shutdown, link down, and 100,000 prefixes.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale, parseBirdRoutes } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { birdStatic, DAEMON_V4, DAEMON_V6, daemonRange, daemonRoutes } from './daemon-routes.js';
import { expectedAtTs, session, SESSIONS, sorted, topologyWith, TS_PREFIXES, until } from './harness.js';
import { birdNegotiated, birdViews, parseBirdSession } from './readers.js';
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

const available = requireLab(['bird', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

describe.skipIf(!available.ok)('tsbgp against BIRD', () => {
  const run = new InteropRun();
  let logFile = '';

  beforeAll(async () => {
    cleanupStale();
    // BIRD's log goes next to the generated config, so the shutdown test can read BIRD's own words
    const t = topologyWith('tsbgp-bird.clab.yml', 'd1', (base, dir) => `${base}\nlog "${dir}/bird.log" all;\n${birdStatic()}`);
    logFile = `${t.dir}/bird.log`;
    await run.up(t.topo, t.cleanup);
  });
  afterAll(() => run.down());

  const proto = (name: string): string => run.lab.mustExec('d1', ['birdc', 'show', 'protocols', 'all', name]);
  const importUpdates = (name: string): number => Number(/Import updates:\s+(\d+)/.exec(proto(name))?.[1] ?? NaN);
  const daemon: Daemon = {
    name: 'BIRD',
    sessions: SESSIONS,
    states: () => (s) => parseBirdSession(proto(s.name)).state,
    established: 'Established',
    // BIRD's routes learned from tsbgp (one per session and prefix); one query for the whole table
    learned: () =>
      birdViews(run.lab.birdRoutes('d1').filter((r) => SESSIONS.some((s) => s.name === r.protocol))).map(({ protocol, ...r }) => ({ ...r, session: protocol })),
    kernelProto: 'bird',
  };

  it('BIRD loads the config: five sessions to tsbgp, 2048 IPv4 and 1024 IPv6 routes to announce', async () => {
    const protos = run.lab.birdProtocols('d1');
    expect(
      protos
        .filter((p) => p.proto === 'BGP')
        .map((p) => p.name)
        .sort(),
    ).toEqual(['e2', 'e4', 'e6', 'i4', 'i6']);
    const count = (p: string): number =>
      Number(/(\d+) of \d+ routes/.exec(run.lab.mustExec('d1', ['birdc', 'show', 'route', 'protocol', p, 'count']))?.[1] ?? NaN);
    expect(count('gen4')).toBe(DAEMON_V4.count);
    expect(count('gen6')).toBe(DAEMON_V6.count);
    // nothing to talk to yet: the sessions wait (Active/Connect/Idle), none is Established
    for (const s of SESSIONS) expect(parseBirdSession(proto(s.name)).state).not.toBe('Established');
  });

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('brings up all five sessions; BIRD and tsbgp agree on the negotiated capabilities', async () => {
      await capabilitiesAgree(run, daemon, (s) => birdNegotiated(proto(s.name)));
    });

    it("puts tsbgp's routes in BIRD's RIB with exactly tsbgp's attributes, and in the kernel", async () => {
      // BIRD gives every imported eBGP route its default local preference (100); only iBGP carries ours
      await tsRoutesAtDaemon(run, daemon);
    });

    it("holds in tsbgp's Adj-RIB-In exactly what BIRD exports on each session", async () => {
      await adjRibInMatches(run, SESSIONS, async (s) => {
        const want = daemonRoutes(daemonRange(s.family)).map((r) => expectedAtTs(s, r));
        // BIRD's own view of the same export (its Adj-RIB-Out before next hop and AS path are set)
        await until(
          () => {
            const exported = parseBirdRoutes(run.lab.mustExec('d1', ['birdc', 'show', 'route', 'export', s.name, 'all']));
            expect(sorted(exported.map((r) => r.prefix))).toEqual(sorted(want.map((r) => r.prefix)));
          },
          30_000,
          250,
        );
        return want;
      });
    });

    it('route refresh: tsbgp asks and BIRD re-sends; BIRD asks (reload in) and tsbgp re-sends', async () => {
      const s = session('e4');
      await tsAsksRefresh(run, s);
      await daemonAsksRefresh(run, s, () => {
        const before = importUpdates(s.name);
        run.lab.mustExec('d1', ['birdc', 'reload', 'in', s.name]);
        return () => expect(importUpdates(s.name)).toBeGreaterThanOrEqual(before + TS_PREFIXES('ipv4').length);
      });
      expectTsPrefixesOn(daemon, [s]);
    });

    it("a withdrawal removes tsbgp's route from BIRD's RIB and kernel", async () => {
      await withdrawal(run, daemon);
    });

    it('graceful restart: kill -9 and restart; the kernel never loses a route, then BIRD takes the new set after End-of-RIB', async () => {
      await gracefulRestart(run, daemon);
    });

    it("administrative shutdown reaches BIRD as Cease with tsbgp's RFC 9003 message", async () => {
      await adminShutdown(run, daemon);
      // BIRD 2.0.12 shows "Last error: Received: Administrative shutdown" and logs the message text with it
      expect(parseBirdSession(proto('e4')).lastError).toMatch(/Received: Administrative shutdown/);
      expect(readFileSync(logFile, 'utf8')).toContain(SHUTDOWN_MESSAGE);
    });

    it("link down: both ends drop the sessions within the hold time, and BIRD removes tsbgp's routes from the kernel", async () => {
      await linkDown(run, daemon);
    });

    it('scale: 100,000 IPv4 prefixes from tsbgp all arrive in BIRD', async () => {
      await scale(run, daemon, {
        count: () => Number(/(\d+) of \d+ routes/.exec(run.lab.mustExec('d1', ['birdc', 'show', 'route', 'protocol', 'e4', 'count']))?.[1] ?? 0),
        routes: (p) => birdViews(parseBirdRoutes(run.lab.mustExec('d1', ['birdc', 'show', 'route', p, 'all']))),
      });
    }, 180_000);
  });
});
