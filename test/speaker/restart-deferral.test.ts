/**
 * RFC 4724 §4.1, the restarting side: a speaker started with `restarting`
 * sends nothing — no partial initial dump — until its graceful-restart peers
 * have sent End-of-RIB, or the selection deferral timer expires. The
 * restarting speaker runs on a virtual clock; its peers are real speakers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BgpSpeaker, type SpeakerOptions } from '../../src/index.js';
import { eventually, established, FAST, peerStatus, routeOf, running, speaker, stopAll, VirtualClock } from './helpers.js';

afterEach(stopAll);

const V4 = { families: ['ipv4' as const] };

async function restarting(clock: VirtualClock, extra: Partial<SpeakerOptions> = {}) {
  const logs: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const a = new BgpSpeaker({
    asn: 65000,
    routerId: '127.0.0.1',
    listen: { addresses: ['127.0.0.1'], port: 0 },
    restarting: true,
    scheduler: clock,
    coalesceMs: 2,
    log: (level, msg, fields) => logs.push({ level, msg, fields }),
    ...extra,
  });
  running.push(a);
  a.definePolicy('all', { statements: [{ actions: { result: 'accept' } }] });
  a.originate('10.81.0.0/16');
  return { a, logs };
}

/** Advances the virtual clock in small steps (real time passing too) until `fn` holds. */
async function advanceUntil<T>(clock: VirtualClock, what: string, fn: () => T | undefined | false, stepMs = 5): Promise<{ value: T; advanced: number }> {
  const start = clock.t;
  const value = await eventually(what, () => {
    clock.advance(stepMs);
    return fn();
  });
  return { value, advanced: clock.t - start };
}

/**
 * Advances A's virtual clock by `ms` (more than a keepalive interval) and waits for A's KEEPALIVE at B:
 * A's messages arrive in order, so whatever A sent B before it is in by then (no waiting on the real clock).
 */
async function keepaliveAfter(clock: VirtualClock, b: BgpSpeaker, ms: number): Promise<void> {
  const before = peerStatus(b, '127.0.0.1').counters.messagesIn;
  clock.advance(ms);
  await eventually('a KEEPALIVE from A at B', () => peerStatus(b, '127.0.0.1').counters.messagesIn > before);
}

describe('restarting speaker: selection deferral', () => {
  it('holds its advertisements until every graceful-restart peer has sent End-of-RIB, then sends one complete dump', async () => {
    const clock = new VirtualClock();
    const { a, logs } = await restarting(clock, { selectionDeferralTime: 60 });
    const b = await speaker('127.0.0.2', { asn: 65001 });
    // C is configured from the start but comes up later (A waits for it, passively).
    a.addPeer({ ...FAST, ...V4, address: '127.0.0.2', port: b.port, asn: 65001, localAddress: '127.0.0.1', exportPolicies: ['all'] });
    a.addPeer({ ...FAST, ...V4, address: '127.0.0.3', asn: 65002, passive: true, exportPolicies: ['all'] });
    await a.start();
    b.addPeer({ ...FAST, ...V4, address: '127.0.0.1', port: a.port, asn: 65000, localAddress: '127.0.0.2' });
    b.originate('10.80.0.0/16');
    await established(b, '127.0.0.1');
    await eventually("B's route at A", () => routeOf(a, '10.80.0.0/16'));
    // B's End-of-RIB is in, but C has not spoken: nothing goes to B, however long the window. A's KEEPALIVE
    // (hold time 9 s: one within 3 s of virtual time) reaches B after anything A sent before it.
    await keepaliveAfter(clock, b, 4_000);
    expect(peerStatus(b, '127.0.0.1').counters.updatesIn).toBe(0);
    expect(peerStatus(a, '127.0.0.2').counters.updatesOut).toBe(0);

    const c = await speaker('127.0.0.3', { asn: 65002 });
    c.originate('10.82.0.0/16');
    c.addPeer({ ...FAST, ...V4, address: '127.0.0.1', port: a.port, asn: 65000, localAddress: '127.0.0.3' });
    await established(c, '127.0.0.1');
    // C's End-of-RIB ends the deferral long before the 60 s timer; B's first UPDATEs carry C's route too.
    const { advanced } = await advanceUntil(clock, 'the dump at B', () => routeOf(b, '10.81.0.0/16') && routeOf(b, '10.82.0.0/16'));
    expect(advanced).toBeLessThan(60_000);
    expect(routeOf(b, '10.82.0.0/16')).toMatchObject({ asPath: [65000, 65002] });
    expect(routeOf(c, '10.81.0.0/16')).toMatchObject({ asPath: [65000] });
    expect(logs.find((l) => l.msg.includes('advertising routes now'))).toMatchObject({
      level: 'info',
      msg: 'restart: advertising routes now: End-of-RIB received from every peer with graceful restart',
    });
    // After the deferral, changes flow as usual.
    a.withdraw('10.81.0.0/16');
    await advanceUntil(clock, 'withdrawal at B', () => routeOf(b, '10.81.0.0/16') === undefined);
  });

  it('the selection deferral timer bounds the wait for a peer that never comes', async () => {
    const clock = new VirtualClock();
    const { a, logs } = await restarting(clock, { selectionDeferralTime: 5 });
    const b = await speaker('127.0.0.2', { asn: 65001 });
    a.addPeer({ ...FAST, ...V4, address: '127.0.0.2', port: b.port, asn: 65001, localAddress: '127.0.0.1' });
    a.addPeer({ ...FAST, ...V4, address: '127.0.0.3', asn: 65002, passive: true });
    await a.start();
    b.addPeer({ ...FAST, ...V4, address: '127.0.0.1', port: a.port, asn: 65000, localAddress: '127.0.0.2' });
    await established(b, '127.0.0.1');
    await established(a, '127.0.0.2');
    await keepaliveAfter(clock, b, 4_000); // within the 5 s timer: A has sent B nothing but KEEPALIVEs
    expect(routeOf(b, '10.81.0.0/16')).toBeUndefined();
    expect(peerStatus(b, '127.0.0.1').counters.updatesIn).toBe(0);
    clock.advance(1_000); // the timer
    await advanceUntil(clock, 'route at B after the timer', () => routeOf(b, '10.81.0.0/16'));
    expect(logs.find((l) => l.msg.includes('advertising routes now'))).toMatchObject({
      level: 'warning',
      msg: 'restart: advertising routes now: selection deferral timer (5 s) expired',
      fields: { stillWaitingFor: ['127.0.0.3'] },
    });
  });

  it('does not wait for a peer without graceful restart', async () => {
    const clock = new VirtualClock();
    const { a } = await restarting(clock);
    const b = await speaker('127.0.0.2', { asn: 65001 });
    a.addPeer({ ...FAST, ...V4, address: '127.0.0.2', port: b.port, asn: 65001, localAddress: '127.0.0.1' });
    await a.start();
    // B sends no graceful-restart capability (and so, in principle, may never send End-of-RIB).
    b.addPeer({ ...FAST, ...V4, address: '127.0.0.1', port: a.port, asn: 65000, localAddress: '127.0.0.2', gracefulRestart: false });
    await established(b, '127.0.0.1');
    const { advanced } = await advanceUntil(clock, 'route at B', () => routeOf(b, '10.81.0.0/16'));
    expect(advanced).toBeLessThan(120_000);
  });
});
