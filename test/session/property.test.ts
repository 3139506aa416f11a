import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createFsm, transition } from '../../src/session/fsm.js';
import { createPeerSession, peerTransition, type PeerAction, type PeerEvent } from '../../src/session/session.js';
import type { FsmEvent } from '../../src/session/types.js';
import { cfg, ev, peerOpen } from './fixtures.js';

const simple = [
  'ManualStart',
  'ManualStop',
  'AutomaticStart',
  'AutomaticStart_with_PassiveTcpEstablishment',
  'AutomaticStop',
  'ConnectRetryTimer_Expires',
  'HoldTimer_Expires',
  'KeepaliveTimer_Expires',
  'DelayOpenTimer_Expires',
  'IdleHoldTimer_Expires',
  'TcpConnection_Valid',
  'TcpConnection_Acknowledged',
  'TcpConnectionConfirmed',
  'TcpConnectionFails',
  'OpenCollisionDump',
  'KeepAliveMsg',
] as const;

const openArb = fc
  .record({
    holdTime: fc.constantFrom(0, 1, 3, 9, 90),
    version: fc.constantFrom(4, 4, 4, 3),
    bgpId: fc.constantFrom('10.0.0.2', '10.0.0.0', '0.0.0.0', '10.0.0.1'),
  })
  .map((o) => ev.open(peerOpen(o)));

const eventArb: fc.Arbitrary<FsmEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...simple).map((type) => ({ type }) as FsmEvent) },
  { weight: 3, arbitrary: openArb },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ev.update(),
      ev.refresh(),
      ev.notif(6, 2),
      ev.notif(2, 7, Uint8Array.of(6, 0)),
      ev.notif(2, 4),
      ev.verErr(),
      ev.headerErr(),
      ev.openErr(),
      ev.updateErr(),
    ),
  },
);

describe('FSM invariants over random event sequences', () => {
  it('no send from Idle; Idle runs no connection timer; hold runs in OpenSent and OpenConfirm, and in Established when hold > 0; timer actions mirror the state', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(fc.tuple(eventArb, fc.integer({ min: 0, max: 5000 })), { maxLength: 60 }), (delay, steps) => {
        let f = createFsm(cfg({ delayOpenTime: delay ? 2 : 0 }));
        let now = 0;
        const mirror = new Set<string>();
        for (const [e, dt] of steps) {
          now += dt;
          const before = f;
          const t = transition(f, e, now);
          f = t.fsm;
          if (before.state === 'Idle') expect(t.actions.filter((a) => a.type === 'send')).toEqual([]);
          // A timer that fired is no longer running, so the shell's mirror drops it too.
          const fired = e.type.endsWith('Timer_Expires') ? e.type.replace('Timer_Expires', '') : undefined;
          if (fired && before.timers[fired as keyof typeof before.timers] !== undefined) mirror.delete(fired);
          for (const a of t.actions) {
            if (a.type === 'startTimer') mirror.add(a.timer);
            if (a.type === 'stopTimer') mirror.delete(a.timer);
          }
          expect([...mirror].sort()).toEqual(Object.keys(f.timers).sort());
          if (f.state === 'Idle') {
            expect(Object.keys(f.timers).filter((k) => k !== 'IdleHold')).toEqual([]);
            expect(f.connected).toBe(false);
          }
          if (f.state === 'OpenSent' || f.state === 'OpenConfirm' || f.state === 'Established') {
            const hold = f.negotiated?.holdTime ?? 240;
            // Hold time 0 negotiated: OpenConfirm still waits for the peer's KEEPALIVE at most the
            // large hold time (240 s, issue 14), Established runs no hold timer.
            if (hold > 0 || f.state !== 'Established') expect(f.timers.Hold).toBeDefined();
            else expect(f.timers.Hold).toBeUndefined();
          }
          if (f.state === 'Established' || f.state === 'OpenConfirm') expect(f.negotiated).toBeDefined();
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('PeerSession invariants', () => {
  it('at most two connections, at most one past OpenSent, and connection ids stay unique', () => {
    const connEv = fc.tuple(fc.integer({ min: 1, max: 6 }), eventArb).map(([conn, event]): PeerEvent => ({ type: 'conn', conn, event }));
    const peerEv: fc.Arbitrary<PeerEvent> = fc.oneof(
      { weight: 6, arbitrary: connEv },
      { weight: 2, arbitrary: fc.constant<PeerEvent>({ type: 'incoming' }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<PeerEvent>({ type: 'start' }, { type: 'stop' }, { type: 'automaticStop' }, { type: 'peerTimer', timer: 'Restart' }),
      },
    );
    fc.assert(
      fc.property(fc.array(peerEv, { maxLength: 80 }), (events) => {
        let s = createPeerSession(cfg({ gracefulRestart: { restartTime: 60, stalePathTime: 120, forwardingPreserved: [] } }));
        let now = 0;
        for (const e of events) {
          now += 100;
          const r = peerTransition(s, e, now);
          s = r.session;
          expect(s.conns.length).toBeGreaterThanOrEqual(1);
          expect(s.conns.length).toBeLessThanOrEqual(2);
          expect(new Set(s.conns.map((c) => c.id)).size).toBe(s.conns.length);
          expect(s.conns.filter((c) => c.fsm.state === 'OpenConfirm' || c.fsm.state === 'Established').length).toBeLessThanOrEqual(1);
          for (const a of r.actions)
            if (a.type === 'send' && 'conn' in a) {
              // Sends only go to connections that exist (or were just released by this step).
              expect(a.conn).toBeLessThan(s.nextId);
            }
        }
      }),
      { numRuns: 400 },
    );
  });
});

/**
 * The hold timer as the shell runs it: timers kept by deadline from the
 * step's `startTimer` / `stopTimer` actions, fired in deadline order, with
 * messages arriving at random gaps. Whatever the FSM records, the session
 * must end with Hold Timer Expired (NOTIFICATION 4/0) exactly when a gap
 * since the last message reaches the negotiated hold time (the smaller of
 * the two proposals; never with 0), and a message received once Established
 * must leave the FSM value as it was (the restart is an action, not a new
 * value).
 */
describe('hold timer over random message gaps (RFC 4271 §4.2, §8)', () => {
  const holdArb = fc.constantFrom(0, 3, 9, 90);
  const msgArb = fc.constantFrom<FsmEvent>({ type: 'KeepAliveMsg' }, ev.update(), ev.refresh());
  it('expires exactly at the last message plus the negotiated hold time, and a message does not rebuild the FSM', () => {
    fc.assert(
      fc.property(holdArb, holdArb, fc.array(fc.tuple(msgArb, fc.integer({ min: 0, max: 100_000 })), { minLength: 1, maxLength: 40 }), (ours, theirs, msgs) => {
        const hold = ours === 0 || theirs === 0 ? 0 : Math.min(ours, theirs);
        let s = createPeerSession(cfg({ holdTime: ours }));
        let now = 0;
        const timers = new Map<string, number>();
        const out: PeerAction[] = [];
        let downAt: number | undefined;
        const step = (e: PeerEvent): PeerAction[] => {
          const r = peerTransition(s, e, now);
          s = r.session;
          for (const a of r.actions) {
            if (a.type === 'startTimer') timers.set(a.timer, now + a.seconds * 1000);
            if (a.type === 'stopTimer') timers.delete(a.timer);
            if (a.type === 'sessionDown') downAt ??= now;
          }
          out.push(...r.actions);
          return [...r.actions];
        };
        const conn = (event: FsmEvent): PeerAction[] => step({ type: 'conn', conn: 1, event });
        /** Fires every timer due by `until`, earliest first (what the shell's scheduler does). */
        const runTimers = (until: number): void => {
          for (;;) {
            const due = [...timers].filter(([, at]) => at <= until).sort((a, b) => a[1] - b[1])[0];
            if (due === undefined) return;
            timers.delete(due[0]);
            now = due[1];
            conn({ type: `${due[0]}Timer_Expires` } as FsmEvent);
          }
        };
        step({ type: 'start' });
        conn({ type: 'TcpConnection_Acknowledged' });
        conn(ev.open(peerOpen({ holdTime: theirs })));
        conn({ type: 'KeepAliveMsg' });
        expect(s.conns[0].fsm.state).toBe('Established');
        expect(s.conns[0].fsm.negotiated?.holdTime).toBe(hold);
        let heard = now;
        let expected: number | undefined;
        for (const [m, gap] of msgs) {
          if (hold > 0 && gap >= hold * 1000) {
            expected = heard + hold * 1000;
            runTimers(now + gap);
            break;
          }
          runTimers(now + gap);
          now = heard + gap;
          const before = s.conns[0].fsm;
          const actions = conn(m);
          expect(s.conns[0].fsm).toBe(before);
          expect(actions.filter((a) => a.type === 'startTimer')).toEqual(hold > 0 ? [{ type: 'startTimer', timer: 'Hold', seconds: hold, conn: 1 }] : []);
          heard = now;
        }
        const down = out.find((a) => a.type === 'sessionDown');
        if (expected === undefined) {
          expect(down).toBeUndefined();
          expect(s.conns[0].fsm.state).toBe('Established');
        } else {
          expect(down).toEqual({ type: 'sessionDown', reason: { kind: 'holdTimerExpired' }, conn: 1 });
          expect(downAt).toBe(expected);
          expect(out).toContainEqual({ type: 'send', conn: 1, message: { type: 'notification', code: 4, subcode: 0, data: new Uint8Array(0) } });
        }
      }),
      { numRuns: 400 },
    );
  });
});
