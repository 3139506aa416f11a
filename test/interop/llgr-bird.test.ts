/**
 * Issue 29 parts 2 and 3 against BIRD 2.0.12 (topology tsbgp-bird.clab.yml,
 * sessions e4 and e2, which carry the same routes both ways; e4's paths win
 * on peer address / router ID otherwise):
 *
 * - tsbgp receiving: traffic on e4 is cut with nft; tsbgp's hold timer runs
 *   out and it keeps BIRD's routes as stale for BIRD's restart time, then as
 *   long-lived stale with LLGR_STALE, least preferred (e2's path wins), for
 *   BIRD's long-lived stale time, then drops them.
 * - BIRD receiving: tsbgp is killed (TCP closed, no NOTIFICATION); BIRD keeps
 *   our routes as stale, then long-lived stale with (65535,6), then drops them.
 * - RFC 8538: BIRD 2.0.12 does not implement it (no N bit), so a Cease from
 *   BIRD ends the session for good and tsbgp drops its routes at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale, parseBirdRoutes } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { birdStatic, DAEMON_V4 } from './daemon-routes.js';
import { HOLD_TIME, session, topologyWith, TS_PREFIXES, tsConfig, until } from './harness.js';
import { InteropRun, tsLongLivedStale } from './scenarios.js';
import { requireSpeaker } from './speaker-client.js';

const available = requireLab(['bird', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

/** Restart time and long-lived stale time (seconds) of both sides. */
const RESTART = 15;
const LL_STALE = 20;
const e4 = session('e4');
const e2 = session('e2');
const SESSIONS = ['e4', 'e2'] as const;
const LLGR_STALE = '(65535,6)';

describe.skipIf(!available.ok)('LLGR and RFC 8538 with BIRD', () => {
  const run = new InteropRun();

  beforeAll(async () => {
    cleanupStale();
    const t = topologyWith('tsbgp-bird.clab.yml', 'd1', (base) => {
      const off = '  long lived graceful restart off;';
      if (!base.includes(off)) throw new Error('bird.conf no longer has the LLGR line this test replaces');
      const on = `  graceful restart time ${RESTART};\n  long lived graceful restart on;\n  long lived stale time ${LL_STALE};`;
      return `${base.replace(off, on)}\n${birdStatic()}`;
    });
    await run.up(t.topo, t.cleanup);
  });
  afterAll(() => run.down());

  const birdc = (...args: string[]) => run.lab.mustExec('d1', ['birdc', ...args]);
  /** BIRD's routes for one prefix, one per protocol. */
  const birdRoutes = (prefix: string) => {
    // birdc exits 1 with "Network not found" once no protocol has a route for it
    const r = run.lab.exec('d1', ['birdc', 'show', 'route', 'all', prefix]);
    if (r.status !== 0 && !/Network not found/.test(r.stdout)) throw new Error(`birdc show route all ${prefix}: ${r.stdout}${r.stderr}`);
    return parseBirdRoutes(r.stdout);
  };
  const fromTs = (prefix: string, proto = 'e4') => birdRoutes(prefix).find((r) => r.protocol === proto);
  const nft = (script: string) => run.lab.mustExec('ts1', ['sh', '-c', `nft -f - <<'EOF'\n${script}\nEOF`]);
  const TS_V4 = TS_PREFIXES('ipv4')[0];
  const D_FIRST = `${DAEMON_V4.start}/${DAEMON_V4.length}`;

  const config = () => {
    const c = tsConfig({ sessions: SESSIONS });
    return { ...c, peers: c.peers.map((p) => ({ ...p, gracefulRestart: { restartTime: RESTART, longLivedStaleTime: LL_STALE } })) };
  };
  const up = async () => {
    for (const s of SESSIONS.map(session)) {
      await run.ts.waitEstablished(s.d);
      await until(async () => expect((await run.ts.received(s.d)).filter((r) => !r.stale)).toHaveLength(DAEMON_V4.count), 30_000, 250);
      await until(() => expect(fromTs(TS_V4, s.name)?.attrs['BGP.community'] ?? '').not.toContain(LLGR_STALE), 30_000, 250);
      await until(() => expect(fromTs(TS_V4, s.name)).toBeDefined(), 30_000, 250);
    }
  };

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('negotiates LLGR with BIRD, with its stale time; BIRD sets no N bit', async () => {
      await run.restartTs(config(), { tag: 'llgr' });
      await up();
      for (const s of SESSIONS.map(session))
        expect((await run.ts.peer(s.d)).negotiated?.gracefulRestart).toEqual({
          restartTime: RESTART,
          notification: false,
          longLived: [{ family: 'ipv4', staleTime: LL_STALE }],
        });
      expect(birdc('show', 'protocols', 'all', 'e4')).toMatch(/Long-lived graceful restart/);
    });

    it("tsbgp receiving: BIRD's routes on a cut session go stale, then long-lived stale (LLGR_STALE, least preferred), then go", async () => {
      const before = (await run.ts.received(e4.d)).find((r) => r.prefix.toString() === D_FIRST);
      expect(before).toMatchObject({ best: true, stale: false });
      const t0 = Date.now();
      nft(`table inet llgr_cut {
  chain in { type filter hook input priority 0; ip saddr ${e4.d} ip daddr ${e4.ts} drop; }
  chain out { type filter hook output priority 0; ip saddr ${e4.ts} ip daddr ${e4.d} drop; }
}`);
      try {
        await until(
          async () => expect((await run.ts.received(e4.d)).find((r) => r.prefix.toString() === D_FIRST)?.stale).toBe(true),
          (HOLD_TIME + 5) * 1000,
          250,
        );
        await tsLongLivedStale(run, e4, e2, D_FIRST, DAEMON_V4.count, (RESTART + 10) * 1000);
        const tLl = Date.now();
        await until(async () => expect(await run.ts.received(e4.d)).toEqual([]), (LL_STALE + 10) * 1000, 500);
        const tGone = Date.now();
        console.log(`LLGR, BIRD's routes at tsbgp: long-lived stale after ${tLl - t0} ms, dropped ${tGone - tLl} ms later (stale time ${LL_STALE} s)`);
        expect(tGone - tLl).toBeGreaterThanOrEqual((LL_STALE - 2) * 1000);
      } finally {
        nft('delete table inet llgr_cut');
      }
      await up();
    });

    it('BIRD receiving: tsbgp killed (no NOTIFICATION); BIRD keeps our routes stale, then long-lived stale with (65535,6), then drops them', async () => {
      await up();
      const t0 = Date.now();
      await run.ts.kill9();
      // Graceful restart: the routes stay (they would go at once without it).
      expect(fromTs(TS_V4)).toBeDefined();
      const ll = await until(
        () => {
          const r = fromTs(TS_V4);
          expect(r?.attrs['BGP.community']).toContain(LLGR_STALE);
          return r!;
        },
        (RESTART + 15) * 1000,
        500,
      );
      const tLl = Date.now();
      expect(ll.protocol).toBe('e4');
      // Both sessions' paths are long-lived stale now (BIRD has no fresh path to prefer); neither goes before the stale time.
      expect(fromTs(TS_V4, 'e2')?.attrs['BGP.community']).toContain(LLGR_STALE);
      await until(() => expect(fromTs(TS_V4)).toBeUndefined(), (LL_STALE + 10) * 1000, 500);
      const tGone = Date.now();
      console.log(`LLGR, tsbgp's routes at BIRD: long-lived stale after ${tLl - t0} ms (restart ${RESTART} s), dropped ${tGone - tLl} ms later`);
      expect(tGone - tLl).toBeGreaterThanOrEqual((LL_STALE - 2) * 1000);
    });

    it('RFC 8538: BIRD sets no N bit, so its Cease ends the session for good and tsbgp drops its routes at once', async () => {
      await run.restartTs(config(), { tag: 'llgr-again' });
      await up();
      birdc('disable', 'e2');
      try {
        await until(async () => expect(await run.ts.received(e2.d)).toEqual([]), 5_000, 200);
        expect((await run.ts.peer(e2.d)).lastError).toMatchObject({ direction: 'received', code: 6 });
      } finally {
        birdc('enable', 'e2');
      }
    });
  });
});
