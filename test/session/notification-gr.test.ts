/**
 * RFC 8538: graceful restart across a NOTIFICATION. With the N bit on both
 * sides a NOTIFICATION other than Hard Reset keeps routes as stale; the
 * Ceases that must flush go as Hard Reset (6/9 carrying the original).
 * Pure functions, then two sessions on the simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { GR_NONE, grSessionDown, hardResetInner, isHardReset, retainsRoutes, withHardReset } from '../../src/session/graceful.js';
import { negotiate } from '../../src/session/negotiate.js';
import { buildOpen, NO_OMISSIONS } from '../../src/session/open.js';
import { sessionConfig, type SessionConfig } from '../../src/session/types.js';
import { Notify, shutdownNotification } from '../../src/wire/notification.js';
import type { Capability } from '../../src/wire/types.js';
import { cfg, peerOpen } from './fixtures.js';
import { Sim } from './sim.js';

const v4 = { afi: 1, safi: 1 };
const grCfg = (notification?: boolean) => ({
  restartTime: 120,
  stalePathTime: 300,
  forwardingPreserved: [],
  ...(notification !== undefined ? { notification } : {}),
});
function negotiated(ourN: boolean, peerN: boolean) {
  const ours = buildOpen(cfg({ families: [v4], gracefulRestart: grCfg(ourN) }), NO_OMISSIONS, false);
  const caps: Capability[] = [
    { kind: 'multiprotocol', ...v4 },
    { kind: 'gracefulRestart', restarting: false, notification: peerN, restartTime: 90, families: [{ ...v4, forwardingPreserved: true }] },
  ];
  return negotiate(ours, peerOpen({ caps }));
}

describe('RFC 8538, pure', () => {
  it('negotiates the N bit only when both sides set it', () => {
    expect(negotiated(true, true).gracefulNotification).toBe(true);
    expect(negotiated(true, false).gracefulNotification).toBe(false);
    expect(negotiated(false, true).gracefulNotification).toBe(false);
  });

  it('keeps routes across a NOTIFICATION other than Hard Reset, only with N on both sides', () => {
    const both = negotiated(true, true);
    const one = negotiated(true, false);
    for (const reason of [
      { kind: 'notificationReceived', code: 6, subcode: 4 },
      { kind: 'notificationReceived', code: 4, subcode: 0 },
      { kind: 'notificationSent', code: 3, subcode: 1, message: 'bad update' },
      { kind: 'notificationReceived', code: 6, subcode: 2 },
      { kind: 'sendHoldTimerExpired' },
    ] as const) {
      expect(retainsRoutes(both, reason), JSON.stringify(reason)).toBe(true);
      expect(retainsRoutes(one, reason), JSON.stringify(reason)).toBe(false);
    }
    expect(retainsRoutes(both, { kind: 'notificationReceived', code: 6, subcode: 9 })).toBe(false);
    expect(retainsRoutes(both, { kind: 'notificationSent', code: 6, subcode: 9, message: 'x' })).toBe(false);
    expect(retainsRoutes(both, { kind: 'manualStop' })).toBe(false);
    // RFC 4724 cases still hold without N.
    expect(retainsRoutes(one, { kind: 'holdTimerExpired' })).toBe(true);
    expect(grSessionDown(GR_NONE, both, { kind: 'notificationReceived', code: 6, subcode: 4 }).actions).toEqual([
      { type: 'markStale', families: [v4] },
      { type: 'startPeerTimer', timer: 'Restart', seconds: 90 },
    ]);
  });

  it('wraps prefix limit, shutdown and de-configuration in Hard Reset, the rest not', () => {
    const shut = shutdownNotification(2, 'maintenance');
    const hard = withHardReset(shut);
    expect([hard.code, hard.subcode]).toEqual([6, 9]);
    expect(isHardReset(hard.code, hard.subcode)).toBe(true);
    expect(hardResetInner(hard)).toEqual({ type: 'notification', code: 6, subcode: 2, data: shut.data });
    expect(withHardReset(Notify.cease('MAXIMUM_PREFIXES')).subcode).toBe(9);
    expect(withHardReset(Notify.cease('PEER_DECONFIGURED')).subcode).toBe(9);
    expect(withHardReset(Notify.cease('BFD_DOWN')).subcode).toBe(9);
    for (const sub of ['ADMINISTRATIVE_RESET', 'OTHER_CONFIGURATION_CHANGE', 'CONNECTION_COLLISION_RESOLUTION', 'OUT_OF_RESOURCES'] as const) {
      const n = Notify.cease(sub);
      expect(withHardReset(n), sub).toBe(n);
    }
    expect(withHardReset(Notify.holdTimerExpired()).code).toBe(4);
    expect(hardResetInner(shut)).toBeUndefined();
  });
});

const ids: Record<string, string> = { a: '192.0.2.1', b: '192.0.2.2' };
const asns: Record<string, number> = { a: 65001, b: 65002 };
const conf = (me: string, peer: string, notification?: boolean): SessionConfig =>
  sessionConfig({
    localAs: asns[me],
    localId: ids[me],
    peerAs: asns[peer],
    idleHold: { initial: 1, max: 8, stableAfter: 30 },
    gracefulRestart: grCfg(notification),
  });

function established(aN?: boolean, bN?: boolean): Sim {
  const sim = new Sim();
  sim.add('a', 'b', conf('a', 'b', aN));
  sim.add('b', 'a', conf('b', 'a', bN));
  sim.start('a', 'b');
  sim.start('b', 'a');
  expect(sim.clock.runUntil(() => sim.state('a', 'b') === 'Established' && sim.state('b', 'a') === 'Established', 5000)).toBe(true);
  sim.clock.advance(100);
  upAt.set(sim, sim.sent.length);
  return sim;
}

/** What `node` sent after the sessions came up (the collision's Cease 6/7 before that is routine). */
const notificationsFrom = (sim: Sim, node: string) =>
  sim.sent
    .slice(upAt.get(sim))
    .filter((s) => s.from === node && s.message.type === 'notification')
    .map((s) => s.message);
const upAt = new WeakMap<Sim, number>();

/**
 * `node` stops its session with `ev`; the NOTIFICATION it sends reaches the
 * peer before the connection's close (as on TCP; the simulator's links drop
 * what is in flight when one end closes, so it is handed over here).
 */
function stopWith(sim: Sim, node: string, peer: string, ev: Parameters<Sim['step']>[2]): void {
  const before = sim.sent.length;
  sim.step(node, peer, ev);
  const conn = sim.session(peer, node).conns.find((c) => c.fsm.state === 'Established')!.id;
  for (const s of sim.sent.slice(before)) {
    if (s.from === node && s.message.type === 'notification') sim.step(peer, node, { type: 'conn', conn, event: { type: 'NotifMsg', message: s.message } });
  }
}

/** One stop between two established sessions: who stops and how, what goes on the wire, and what each side does with the routes. */
interface StopCase {
  name: string;
  /** The N bit of a and b (undefined: the GR default). */
  n?: [boolean, boolean];
  /** The side that stops; the other is its peer. */
  by: 'a' | 'b';
  stop: Parameters<Sim['step']>[2];
  /** The NOTIFICATION it sends, and for a Hard Reset the one inside. */
  sent: { code: number; subcode: number };
  inner?: { code: number; subcode: number };
  /** The peer keeps the routes as stale (RFC 8538), else flushes them. */
  peerKeeps: boolean;
  /** The stopping side flushes its own routes from the peer as well (a prefix limit). */
  stopperFlushes?: boolean;
}

const stopCases: StopCase[] = [
  {
    name: 'an Administrative Reset keeps the routes as stale at the peer',
    by: 'b',
    stop: { type: 'stop', notification: Notify.cease('ADMINISTRATIVE_RESET') },
    sent: { code: 6, subcode: 4 },
    peerKeeps: true,
  },
  {
    name: 'an Administrative Shutdown goes as Hard Reset, and the peer flushes',
    by: 'b',
    stop: { type: 'stop', notification: shutdownNotification(2, 'bye') },
    sent: { code: 6, subcode: 9 },
    inner: { code: 6, subcode: 2 },
    peerKeeps: false,
  },
  {
    name: 'a prefix limit (automatic stop, Cease 6/1) goes as Hard Reset',
    by: 'b',
    stop: { type: 'automaticStop', subcode: 'MAXIMUM_PREFIXES' },
    sent: { code: 6, subcode: 9 },
    peerKeeps: false,
    stopperFlushes: true,
  },
  {
    name: 'without the N bit on one side: the Cease goes as it is, and the routes are flushed (RFC 4724)',
    n: [true, false],
    by: 'b',
    stop: { type: 'stop', notification: Notify.cease('ADMINISTRATIVE_RESET') },
    sent: { code: 6, subcode: 4 },
    peerKeeps: false,
  },
  {
    name: 'without the N bit on one side, a prefix limit goes as Cease 6/1, not Hard Reset',
    n: [true, false],
    by: 'a',
    stop: { type: 'automaticStop', subcode: 'MAXIMUM_PREFIXES' },
    sent: { code: 6, subcode: 1 },
    peerKeeps: false,
    stopperFlushes: true,
  },
];

describe('RFC 8538 between two sessions (virtual time)', () => {
  it.each(stopCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const peer = c.by === 'a' ? 'b' : 'a';
    const sim = established(...(c.n ?? []));
    stopWith(sim, c.by, peer, c.stop);
    sim.clock.advance(100);
    const sent = notificationsFrom(sim, c.by);
    expect(sent).toMatchObject([c.sent]);
    if (c.inner) expect(hardResetInner(sent[0] as never)).toMatchObject(c.inner);
    expect(sim.actions(peer, c.by, 'sessionDown').map((a) => a.reason)).toEqual([{ kind: 'notificationReceived', ...c.sent }]);
    expect(sim.actions(peer, c.by, 'markStale')).toEqual(c.peerKeeps ? [{ type: 'markStale', families: [v4] }] : []);
    expect(sim.actions(peer, c.by, 'flushRoutes')).toHaveLength(c.peerKeeps ? 0 : 1);
    if (c.stopperFlushes) expect(sim.actions(c.by, peer, 'flushRoutes')).toHaveLength(1);
  });
});
