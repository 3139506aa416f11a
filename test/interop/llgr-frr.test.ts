/**
 * Issue 29 parts 2 and 3 against FRR 8.4 (topology tsbgp-frr.clab.yml, two of
 * its sessions): RFC 9494 long-lived graceful restart in both roles, and the
 * RFC 8538 N bit both ways.
 *
 * - LLGR on e4 and e2 (the same routes both ways; e4's paths win on peer
 *   address): traffic on e4 is cut with nft (no NOTIFICATION, no FIN: both
 *   ends see their hold timer run out). Each side keeps the other's routes as
 *   stale for the restart time, then as long-lived stale with LLGR_STALE,
 *   least preferred (e2's paths win), for the stale time, then drops them.
 * - RFC 8538 on i4 (no LLGR there): a Cease other than Hard Reset keeps the
 *   routes as stale, a Hard Reset drops them; tsbgp → FRR (stop graceful /
 *   stop) and FRR → tsbgp (`clear bgp` with and without
 *   `bgp hard-administrative-reset`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStale } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { DAEMON_V4, frrNetworks } from './daemon-routes.js';
import { D_ASN, HOLD_TIME, session, topologyWith, TS_PREFIXES, tsConfig, until } from './harness.js';
import { InteropRun, tsLongLivedStale } from './scenarios.js';
import { requireSpeaker } from './speaker-client.js';

const available = requireLab(['frr', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

/** FRR's restart time and long-lived stale time (seconds), and tsbgp's for e4. */
const RESTART = 15;
const LL_STALE = 20;
const e4 = session('e4');
const e2 = session('e2');
const i4 = session('i4');

interface FrrPath {
  peer?: { peerId?: string };
  stale?: boolean;
  community?: { string?: string };
  bestpath?: { overall?: boolean };
}

describe.skipIf(!available.ok)('LLGR and RFC 8538 with FRR', () => {
  const run = new InteropRun();

  beforeAll(async () => {
    cleanupStale();
    const t = topologyWith('tsbgp-frr.clab.yml', 'd1', (base) => {
      const gr = ' bgp graceful-restart restart-time 120';
      if (!base.includes(gr)) throw new Error('frr.conf no longer sets the restart time this test replaces');
      return `${base.replace(gr, ` bgp graceful-restart restart-time ${RESTART}\n bgp graceful-restart notification\n bgp long-lived-graceful-restart stale-time ${LL_STALE}`)}\n${frrNetworks(D_ASN)}`;
    });
    await run.up(t.topo, t.cleanup);
  });
  afterAll(() => run.down());

  const vtysh = (...cmds: string[]): string => run.lab.mustExec('d1', ['vtysh', ...cmds.flatMap((c) => ['-c', c])]);
  const frrPaths = (prefix: string): FrrPath[] => (JSON.parse(vtysh(`show bgp ipv4 unicast ${prefix} json`)) as { paths?: FrrPath[] }).paths ?? [];
  const fromTs = (prefix: string, s = e4) => frrPaths(prefix).find((p) => p.peer?.peerId === s.ts);
  const comms = (p: FrrPath | undefined) => (p?.community?.string ?? '').split(/\s+/).filter(Boolean);
  const nft = (script: string) => run.lab.mustExec('ts1', ['sh', '-c', `nft -f - <<'EOF'\n${script}\nEOF`]);
  const TS_V4 = TS_PREFIXES('ipv4');
  const D_FIRST = DAEMON_V4.start + `/${DAEMON_V4.length}`;

  /** tsbgp with LLGR (restart 15 s, stale 20 s) on e4 and e2; with plain graceful restart (60 s) and the N bit on i4. */
  const llgr = ['e4', 'e2'] as const;
  const config = (sessions: readonly ('e4' | 'e2' | 'i4')[]) => {
    const c = tsConfig({ sessions });
    return {
      ...c,
      peers: c.peers.map((p) => (p.address !== i4.d ? { ...p, gracefulRestart: { restartTime: RESTART, longLivedStaleTime: LL_STALE } } : p)),
    };
  };
  const up = async (sessions: readonly ('e4' | 'e2' | 'i4')[]) => {
    for (const s of sessions.map(session)) {
      await run.ts.waitEstablished(s.d);
      await until(async () => expect((await run.ts.received(s.d)).filter((r) => !r.stale)).toHaveLength(DAEMON_V4.count), 30_000, 250);
      await until(() => expect(fromTs(TS_V4[0], s)?.stale ?? false).toBe(false), 30_000, 250);
      await until(() => expect(fromTs(TS_V4[0], s)).toBeDefined(), 30_000, 250);
    }
  };

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('negotiates LLGR with FRR, with its stale time, and the N bit', async () => {
      await run.restartTs(config(llgr), { tag: 'llgr' });
      await up(llgr);
      for (const s of [e4, e2]) {
        const st = await run.ts.peer(s.d);
        expect(st.negotiated?.gracefulRestart).toEqual({ restartTime: RESTART, notification: true, longLived: [{ family: 'ipv4', staleTime: LL_STALE }] });
      }
      const n = JSON.parse(vtysh(`show bgp neighbor ${e4.ts} json`)) as Record<string, { neighborCapabilities?: Record<string, unknown> }>;
      expect(Object.keys(n[e4.ts].neighborCapabilities ?? {})).toEqual(expect.arrayContaining(['longLivedGracefulRestart']));
    });

    it('traffic cut on e4: both sides keep the routes stale, then long-lived stale with LLGR_STALE and least preferred, then drop them', async () => {
      // Before: FRR's e4 path to our route, and our e4 path to FRR's, are plain; ours to FRR's is the best path (e2's loses on peer address).
      const best0 = (await run.ts.received()).find((r) => r.prefix.toString() === D_FIRST && r.peer === e4.d);
      expect(best0).toMatchObject({ best: true, stale: false });
      expect(comms(fromTs(TS_V4[0]))).not.toContain('llgr-stale');
      const t0 = Date.now();
      nft(`table inet llgr_cut {
  chain in { type filter hook input priority 0; ip saddr ${e4.d} ip daddr ${e4.ts} drop; }
  chain out { type filter hook output priority 0; ip saddr ${e4.ts} ip daddr ${e4.d} drop; }
}`);
      try {
        // tsbgp, receiving: stale after its hold timer, then long-lived stale after FRR's restart time.
        const stale = await until(
          async () => {
            const r = (await run.ts.received(e4.d)).find((x) => x.prefix.toString() === D_FIRST);
            expect(r?.stale).toBe(true);
            return r!;
          },
          (HOLD_TIME + 5) * 1000,
          250,
        );
        expect(stale.communities).not.toContain('llgr-stale');
        const tStale = Date.now();
        // Least preferred: the e2 path (which loses to e4's otherwise) is now best.
        await tsLongLivedStale(run, e4, e2, D_FIRST, DAEMON_V4.count, (RESTART + 10) * 1000);
        const tLl = Date.now();
        // FRR, receiving: our routes on e4 carry LLGR_STALE after our restart time, and are not its best path.
        const frrLl = await until(
          () => {
            const p = fromTs(TS_V4[0]);
            expect(comms(p)).toContain('llgr-stale');
            return p!;
          },
          (RESTART + 10) * 1000,
          500,
        );
        expect(frrLl.bestpath?.overall ?? false).toBe(false);
        console.log(`LLGR with FRR: stale after ${tStale - t0} ms, long-lived stale after ${tLl - t0} ms (hold ${HOLD_TIME} s + restart ${RESTART} s)`);
        // Gone at the end of the long-lived stale time, on both sides.
        await until(
          async () => {
            expect(await run.ts.received(e4.d)).toEqual([]);
            expect(fromTs(TS_V4[0])).toBeUndefined();
          },
          (LL_STALE + 10) * 1000,
          500,
        );
        const tGone = Date.now();
        console.log(`LLGR with FRR: routes dropped ${tGone - tLl} ms after they went long-lived stale (stale time ${LL_STALE} s)`);
        expect(tGone - tLl).toBeGreaterThanOrEqual((LL_STALE - 2) * 1000);
      } finally {
        nft('delete table inet llgr_cut');
      }
      await up(llgr);
    });

    /** Blocks new TCP connections on i4 (the one up stays), so a session that ends stays down while we look. */
    const blockReconnect = () =>
      nft(`table inet llgr_syn {
  chain in { type filter hook input priority 0; ip saddr ${i4.d} ip daddr ${i4.ts} tcp flags & (syn | ack) == syn drop; }
  chain out { type filter hook output priority 0; ip saddr ${i4.ts} ip daddr ${i4.d} tcp flags & (syn | ack) == syn drop; }
}`);
    const unblock = () => nft('delete table inet llgr_syn');

    it('RFC 8538, FRR → tsbgp: clear bgp sends Hard Reset and tsbgp drops the routes; without hard-administrative-reset they stay as stale', async () => {
      await run.restartTs(config(['i4']), { tag: 'rfc8538' });
      await up(['i4']);
      expect((await run.ts.peer(i4.d)).negotiated?.gracefulRestart).toEqual({ restartTime: RESTART, notification: true });
      blockReconnect();
      try {
        vtysh(`clear bgp ipv4 unicast ${i4.ts}`);
        await until(async () => expect(await run.ts.received(i4.d)).toEqual([]), 10_000, 200);
        const st = await run.ts.peer(i4.d);
        expect(st.lastError).toMatchObject({ direction: 'received', hardReset: true });
      } finally {
        unblock();
      }
      await up(['i4']);
      vtysh('configure terminal', `router bgp ${D_ASN}`, 'no bgp hard-administrative-reset');
      blockReconnect();
      try {
        vtysh(`clear bgp ipv4 unicast ${i4.ts}`);
        await until(
          async () => {
            const rs = await run.ts.received(i4.d);
            expect(rs).toHaveLength(DAEMON_V4.count);
            expect(rs.every((r) => r.stale)).toBe(true);
          },
          10_000,
          200,
        );
        expect((await run.ts.peer(i4.d)).lastError).toMatchObject({ direction: 'received', code: 6, subcode: 4 });
      } finally {
        unblock();
        vtysh('configure terminal', `router bgp ${D_ASN}`, 'bgp hard-administrative-reset');
      }
    });

    it('RFC 8538, tsbgp → FRR: a graceful stop (Cease 6/4) leaves our routes stale at FRR; a plain stop (Hard Reset) drops them', async () => {
      await up(['i4']);
      await run.ts.stop({ graceful: true });
      await until(() => expect(fromTs(TS_V4[0], i4)?.stale).toBe(true), 10_000, 200);
      await run.restartTs(config(['i4']), { tag: 'rfc8538-again' });
      await up(['i4']);
      await run.ts.stop({ message: 'tsbgp interop: going away' });
      // FRR would keep them 60 s (our restart time on i4) after anything but a Hard Reset.
      await until(() => expect(fromTs(TS_V4[0], i4)).toBeUndefined(), 10_000, 200);
    });
  });
});
