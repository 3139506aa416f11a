/**
 * RFC 9494 long-lived graceful restart in the codec and the session layer:
 * the capability's bytes, negotiation, and the receiving speaker's timers
 * (Restart → long-lived stale → LongLivedStale), pure and on the simulated
 * clock.
 */
import { describe, expect, it } from 'vitest';
import { GR_NONE, grSessionDown, grSessionUp, grTimerExpired, retainsRoutes } from '../../src/session/graceful.js';
import { negotiate } from '../../src/session/negotiate.js';
import { buildOpen, NO_OMISSIONS, openCapabilities } from '../../src/session/open.js';
import { sessionConfig, validateSessionConfig, type SessionConfig } from '../../src/session/types.js';
import { decodeCapabilities, encodeCapabilities } from '../../src/wire/capabilities.js';
import type { Capability } from '../../src/wire/types.js';
import { cfg, peerOpen } from './fixtures.js';
import { Sim } from './sim.js';

const v4 = { afi: 1, safi: 1 };
const v6 = { afi: 2, safi: 1 };
const GR = { restartTime: 120, stalePathTime: 300, forwardingPreserved: [] };

describe('LLGR capability (code 71) bytes', () => {
  it('encodes AFI, SAFI, F bit and the 24-bit stale time per family, and decodes them back', () => {
    const cap: Capability = {
      kind: 'longLivedGracefulRestart',
      families: [
        { ...v4, forwardingPreserved: true, staleTime: 3600 },
        { ...v6, forwardingPreserved: false, staleTime: 0xffffff },
      ],
    };
    const bytes = encodeCapabilities([cap]);
    expect([...bytes]).toEqual([71, 14, 0, 1, 1, 0x80, 0x00, 0x0e, 0x10, 0, 2, 1, 0x00, 0xff, 0xff, 0xff]);
    expect(decodeCapabilities(bytes, 0, bytes.length)).toEqual([cap]);
  });

  it('a value that is not a whole number of 7-byte tuples is kept as unknown (the feature is not negotiated)', () => {
    const bytes = Uint8Array.of(71, 6, 0, 1, 1, 0x80, 0, 1);
    expect(decodeCapabilities(bytes, 0, bytes.length)).toEqual([{ kind: 'unknown', code: 71, value: Uint8Array.of(0, 1, 1, 0x80, 0, 1) }]);
  });

  it('refuses a stale time beyond 24 bits, naming it', () => {
    expect(() => encodeCapabilities([{ kind: 'longLivedGracefulRestart', families: [{ ...v4, forwardingPreserved: false, staleTime: 0x1000000 }] }])).toThrow(
      /long-lived stale time must be an integer in 0\.\.16777215/,
    );
  });
});

const llCfg = (staleTime: number, over: Partial<SessionConfig> = {}) =>
  cfg({ families: [v4, v6], gracefulRestart: GR, longLivedGracefulRestart: { staleTime, forwardingPreserved: [v4] }, ...over });

/** The peer's OPEN: GR with `restartTime`, LLGR with per-family stale times (none: no LLGR capability). */
function peer(restartTime: number, stale?: { v4?: number; v6?: number; f?: boolean }, withGr = true) {
  const caps: Capability[] = [
    { kind: 'multiprotocol', ...v4 },
    { kind: 'multiprotocol', ...v6 },
  ];
  if (withGr)
    caps.push({
      kind: 'gracefulRestart',
      restarting: false,
      notification: true,
      restartTime,
      families: [
        { ...v4, forwardingPreserved: true },
        { ...v6, forwardingPreserved: true },
      ],
    });
  if (stale) {
    const fams = [];
    if (stale.v4 !== undefined) fams.push({ ...v4, forwardingPreserved: stale.f ?? true, staleTime: stale.v4 });
    if (stale.v6 !== undefined) fams.push({ ...v6, forwardingPreserved: stale.f ?? true, staleTime: stale.v6 });
    caps.push({ kind: 'longLivedGracefulRestart', families: fams });
  }
  return peerOpen({ caps });
}

describe('LLGR in our OPEN and in negotiation', () => {
  it('advertises the configured stale time for every family, F bits only while restarting', () => {
    const caps = openCapabilities(buildOpen(llCfg(900), NO_OMISSIONS, false));
    expect(caps.find((c) => c.kind === 'longLivedGracefulRestart')).toEqual({
      kind: 'longLivedGracefulRestart',
      families: [
        { ...v4, forwardingPreserved: false, staleTime: 900 },
        { ...v6, forwardingPreserved: false, staleTime: 900 },
      ],
    });
    const restarting = openCapabilities(buildOpen(llCfg(900), NO_OMISSIONS, true)).find((c) => c.kind === 'longLivedGracefulRestart');
    expect(restarting).toMatchObject({ families: [{ forwardingPreserved: true }, { forwardingPreserved: false }] });
    expect(openCapabilities(buildOpen(cfg({ gracefulRestart: GR }), NO_OMISSIONS, false)).some((c) => c.kind === 'longLivedGracefulRestart')).toBe(false);
  });

  it('validates the stale time and refuses LLGR without graceful restart, naming the field', () => {
    expect(() => validateSessionConfig(llCfg(0))).toThrow(/longLivedGracefulRestart\.staleTime must be 1\.\.16777215/);
    expect(() => validateSessionConfig(llCfg(0x1000000))).toThrow(/longLivedGracefulRestart\.staleTime/);
    expect(() => validateSessionConfig(llCfg(60, { gracefulRestart: undefined }))).toThrow(/longLivedGracefulRestart needs gracefulRestart/);
  });

  it('negotiates LLGR only when both sides advertise it next to graceful restart', () => {
    const ours = buildOpen(llCfg(900), NO_OMISSIONS, false);
    expect(negotiate(ours, peer(60, { v4: 3600, v6: 60 })).longLived).toEqual({
      families: [
        { ...v4, forwardingPreserved: true, staleTime: 3600 },
        { ...v6, forwardingPreserved: true, staleTime: 60 },
      ],
    });
    expect(negotiate(ours, peer(60)).longLived).toBeUndefined();
    expect(negotiate(ours, peer(60, { v4: 3600 }, false)).longLived).toBeUndefined();
    const noLl = buildOpen(cfg({ families: [v4, v6], gracefulRestart: GR }), NO_OMISSIONS, false);
    expect(negotiate(noLl, peer(60, { v4: 3600 })).longLived).toBeUndefined();
  });
});

describe('LLGR receiving speaker, pure', () => {
  const ours = buildOpen(llCfg(900), NO_OMISSIONS, false);

  it('after the Restart timer, families with a stale time go long-lived stale; the others are purged', () => {
    const n = negotiate(ours, peer(60, { v4: 3600 }));
    const down = grSessionDown(GR_NONE, n, { kind: 'tcpFailed' }, 1_000);
    expect(down.actions).toEqual([
      { type: 'markStale', families: [v4, v6] },
      { type: 'startPeerTimer', timer: 'Restart', seconds: 60 },
    ]);
    // The LongLivedStale timer is not the one running yet.
    expect(grTimerExpired(down.gr, 'LongLivedStale', 61_000).actions).toEqual([]);
    const ll = grTimerExpired(down.gr, 'Restart', 61_000);
    expect(ll.actions).toEqual([
      { type: 'purgeStale', families: [v6] },
      { type: 'longLivedStale', families: [v4] },
      { type: 'startPeerTimer', timer: 'LongLivedStale', seconds: 3600 },
    ]);
    expect(ll.gr).toMatchObject({ phase: 'waitingRestart', stale: [v4], longLived: [{ ...v4, until: 3_661_000 }] });
    // A second Restart expiry (a stray timer) changes nothing.
    expect(grTimerExpired(ll.gr, 'Restart', 62_000).actions).toEqual([]);
    expect(grTimerExpired(ll.gr, 'LongLivedStale', 3_660_999).actions).toEqual([]);
    expect(grTimerExpired(ll.gr, 'LongLivedStale', 3_661_000)).toEqual({ gr: GR_NONE, actions: [{ type: 'purgeStale', families: [v4] }] });
  });

  it('a restart time of 0 with LLGR keeps routes and makes them long-lived stale at once', () => {
    const n = negotiate(ours, peer(0, { v4: 100, v6: 50 }));
    expect(retainsRoutes(n, { kind: 'holdTimerExpired' })).toBe(true);
    const down = grSessionDown(GR_NONE, n, { kind: 'holdTimerExpired' }, 0);
    expect(down.actions).toEqual([
      { type: 'markStale', families: [v4, v6] },
      { type: 'longLivedStale', families: [v4, v6] },
      { type: 'startPeerTimer', timer: 'LongLivedStale', seconds: 50 },
    ]);
    // Per-family deadlines: v6 first, then the timer is re-armed for v4.
    const first = grTimerExpired(down.gr, 'LongLivedStale', 50_000);
    expect(first.actions).toEqual([
      { type: 'purgeStale', families: [v6] },
      { type: 'startPeerTimer', timer: 'LongLivedStale', seconds: 50 },
    ]);
    expect(grTimerExpired(first.gr, 'LongLivedStale', 100_000)).toEqual({ gr: GR_NONE, actions: [{ type: 'purgeStale', families: [v4] }] });
  });

  it('a long-lived stale time of 0 or no LLGR: plain graceful restart', () => {
    const n = negotiate(ours, peer(0, { v4: 0 }));
    expect(grSessionDown(GR_NONE, n, { kind: 'tcpFailed' }).actions).toEqual([{ type: 'flushRoutes' }]);
  });

  it('Hard Reset and operator stops still flush, LLGR or not (RFC 8538)', () => {
    const n = negotiate(ours, peer(60, { v4: 3600, v6: 3600 }));
    expect(grSessionDown(GR_NONE, n, { kind: 'notificationReceived', code: 6, subcode: 9 }).actions).toEqual([{ type: 'flushRoutes' }]);
    expect(grSessionDown(GR_NONE, n, { kind: 'manualStop' }).actions).toEqual([{ type: 'flushRoutes' }]);
    // A Cease other than Hard Reset keeps them (N bit on both sides).
    expect(grSessionDown(GR_NONE, n, { kind: 'notificationReceived', code: 6, subcode: 4 }).actions[0]).toEqual({ type: 'markStale', families: [v4, v6] });
  });

  it('the peer returning during long-lived stale: timers stop, the F bit of its new LLGR capability decides what waits for End-of-RIB', () => {
    const n = negotiate(ours, peer(60, { v4: 3600, v6: 3600 }));
    const down = grSessionDown(GR_NONE, n, { kind: 'tcpFailed' }, 0);
    const ll = grTimerExpired(down.gr, 'Restart', 60_000);
    // Back with F set for neither family in LLGR, though set in GR: both purged.
    const upNoF = grSessionUp(ll.gr, negotiate(ours, peer(60, { v4: 3600, v6: 3600, f: false })), 300);
    expect(upNoF.actions).toEqual([
      { type: 'stopPeerTimer', timer: 'LongLivedStale' },
      { type: 'purgeStale', families: [v4, v6] },
    ]);
    expect(upNoF.gr).toEqual(GR_NONE);
    const up = grSessionUp(ll.gr, negotiate(ours, peer(60, { v4: 3600, v6: 3600 })), 300);
    expect(up.actions).toEqual([
      { type: 'stopPeerTimer', timer: 'LongLivedStale' },
      { type: 'startPeerTimer', timer: 'StalePath', seconds: 300 },
    ]);
    expect(up.gr).toEqual({ phase: 'waitingEor', stale: [v4, v6] });
  });
});

describe('LLGR on the simulated clock', () => {
  const ids: Record<string, string> = { a: '10.0.0.1', b: '10.0.0.2' };
  const asns: Record<string, number> = { a: 65001, b: 65002 };
  const conf = (me: string, other: string, staleTime: number) =>
    sessionConfig({
      localAs: asns[me],
      localId: ids[me],
      peerAs: asns[other],
      idleHold: { initial: 1, max: 8, stableAfter: 30 },
      gracefulRestart: { restartTime: 30, stalePathTime: 300, forwardingPreserved: [v4] },
      longLivedGracefulRestart: { staleTime },
    });
  const up = (sim: Sim) => sim.state('a', 'b') === 'Established' && sim.state('b', 'a') === 'Established';

  it('a peer gone for good: stale for its restart time, then long-lived stale for its stale time, then purged', () => {
    const sim = new Sim();
    sim.add('a', 'b', conf('a', 'b', 3600));
    sim.add('b', 'a', conf('b', 'a', 600));
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim), 5000)).toBe(true);
    sim.setFaults('a', 'b', { down: true });
    sim.cut('a', 'b');
    const t0 = sim.clock.now();
    expect(sim.clock.runUntil(() => sim.actions('a', 'b', 'markStale').length > 0, 1000)).toBe(true);
    // Long-lived stale once b's restart time (30 s) is over, not before.
    expect(sim.clock.runUntil(() => sim.actions('a', 'b', 'longLivedStale').length > 0, 40_000, 100)).toBe(true);
    const at = sim.log.find((l) => l.node === 'a' && l.action.type === 'longLivedStale')!.at;
    expect(at - t0).toBeGreaterThanOrEqual(30_000);
    expect(at - t0).toBeLessThan(31_000);
    expect(sim.actions('a', 'b', 'purgeStale')).toEqual([]);
    // b asked for 600 s (a's own 3600 s is what b may keep of a's routes).
    expect(sim.actions('a', 'b', 'startPeerTimer')).toContainEqual({ type: 'startPeerTimer', timer: 'LongLivedStale', seconds: 600 });
    expect(sim.clock.runUntil(() => sim.actions('a', 'b', 'purgeStale').length > 0, 700_000, 1000)).toBe(true);
    const purged = sim.log.find((l) => l.node === 'a' && l.action.type === 'purgeStale')!.at;
    expect(purged - at).toBe(600_000);
    expect(sim.actions('a', 'b', 'purgeStale')).toEqual([{ type: 'purgeStale', families: [v4] }]);
    expect(sim.session('a', 'b').gr.phase).toBe('none');
  });

  it('a peer that comes back during long-lived stale: its End-of-RIB ends it', () => {
    const sim = new Sim();
    sim.add('a', 'b', conf('a', 'b', 3600));
    sim.add('b', 'a', conf('b', 'a', 600));
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim), 5000)).toBe(true);
    sim.setFaults('a', 'b', { down: true });
    sim.restart('b', 'a', conf('b', 'a', 600), { restarting: true });
    sim.eorOnUp.set('b', [v4]);
    expect(sim.clock.runUntil(() => sim.actions('a', 'b', 'longLivedStale').length > 0, 40_000, 100)).toBe(true);
    sim.clock.advance(100_000);
    sim.setFaults('a', 'b', {});
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim), 60_000, 100)).toBe(true);
    expect(sim.clock.runUntil(() => sim.actions('a', 'b', 'purgeStale').length > 0, 1000)).toBe(true);
    expect(sim.actions('a', 'b', 'stopPeerTimer')).toContainEqual({ type: 'stopPeerTimer', timer: 'LongLivedStale' });
    expect(sim.session('a', 'b').gr.phase).toBe('none');
    // Nothing fires later: the LongLivedStale timer was stopped.
    const n = sim.actions('a', 'b', 'purgeStale').length;
    sim.clock.advance(700_000);
    expect(sim.actions('a', 'b', 'purgeStale')).toHaveLength(n);
  });
});
