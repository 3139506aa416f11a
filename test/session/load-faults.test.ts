/**
 * Issue 14: session-layer holes under faults. The FSM rows are pure; the
 * refusal log runs on virtual time and on a real listener.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { LARGE_HOLD_TIME, transition } from '../../src/session/fsm.js';
import { Listener } from '../../src/session/listener.js';
import { RefusalLog } from '../../src/session/refusal-log.js';
import { cfg, drive, ev, PATHS, peerOpen } from './fixtures.js';

const c = cfg();

describe('hold time 0 in OpenConfirm (§5b)', () => {
  it('keeps the large hold timer until the peer KEEPALIVE, so a silent peer cannot hold OpenConfirm forever', () => {
    const oc = drive(c, [...PATHS.OpenSent, ev.open(peerOpen({ holdTime: 0 }))]);
    expect(oc.state).toBe('OpenConfirm');
    expect(oc.negotiated?.holdTime).toBe(0);
    expect(oc.timers.Hold).toBeDefined();
    expect(oc.timers.Keepalive).toBeUndefined();
    const r = transition(oc, { type: 'HoldTimer_Expires' }, LARGE_HOLD_TIME * 1000);
    expect(r.fsm.state).toBe('Idle');
    const sent = r.actions.flatMap((a) => (a.type === 'send' && a.message.type === 'notification' ? [[a.message.code, a.message.subcode]] : []));
    expect(sent).toEqual([[4, 0]]);
  });

  it('once Established with hold time 0, no timer runs', () => {
    const f = drive(c, [...PATHS.OpenSent, ev.open(peerOpen({ holdTime: 0 })), { type: 'KeepAliveMsg' }]);
    expect(f.state).toBe('Established');
    expect(f.timers).toEqual({});
  });
});

describe('send hold timer (RFC 9687) and automatic stop (max-prefix) in the FSM', () => {
  for (const state of ['OpenSent', 'OpenConfirm', 'Established'] as const) {
    it(`SendHoldTimer_Expires in ${state}: NOTIFICATION 8, connection dropped, Idle with an automatic restart`, () => {
      const f = drive(c, PATHS[state]);
      const r = transition(f, { type: 'SendHoldTimer_Expires' }, 1000);
      expect(r.fsm.state).toBe('Idle');
      const sent = r.actions.flatMap((a) => (a.type === 'send' && a.message.type === 'notification' ? [[a.message.code, a.message.subcode]] : []));
      expect(sent).toEqual([[8, 0]]);
      expect(r.actions.some((a) => a.type === 'disconnect')).toBe(true);
      expect(r.fsm.timers.IdleHold).toBeDefined();
      if (state === 'Established') expect(r.actions).toContainEqual({ type: 'sessionDown', reason: { kind: 'sendHoldTimerExpired' } });
    });
  }

  it('AutomaticStop carries the Cease subcode and data (6/1, RFC 4486) and restarts after the delay asked', () => {
    const f = drive(c, PATHS.Established);
    const data = new Uint8Array([0, 1, 1, 0, 0, 0x27, 0x10]);
    const r = transition(f, { type: 'AutomaticStop', subcode: 'MAXIMUM_PREFIXES', data, restartAfter: 60 }, 5000);
    expect(r.fsm.state).toBe('Idle');
    const n = r.actions.find((a) => a.type === 'send' && a.message.type === 'notification');
    expect(n && n.type === 'send' && n.message).toMatchObject({ code: 6, subcode: 1, data });
    expect(r.actions).toContainEqual({ type: 'startTimer', timer: 'IdleHold', seconds: 60 });
  });
});

describe('refused connections are logged throttled (§5a)', () => {
  it('logs the first few of a window, then one summary with the count and the busiest addresses (virtual time)', () => {
    let t = 0;
    const timers: { at: number; fn: () => void }[] = [];
    const lines: string[] = [];
    const log = new RefusalLog((l) => lines.push(l), {
      perWindow: 3,
      windowMs: 60_000,
      now: () => t,
      setTimeout: (fn, ms) => timers.push({ at: t + ms, fn }),
      clearTimeout: () => undefined,
    });
    for (let i = 0; i < 1000; i++) log.refused(`192.0.2.${i % 7}`, `closing connection from 192.0.2.${i % 7}`);
    expect(lines).toHaveLength(3);
    t = 60_000;
    for (const x of timers.splice(0)) if (x.at <= t) x.fn();
    expect(lines).toHaveLength(4);
    expect(lines[3]).toMatch(/^997 more connection\(s\) refused in the last 60 s from 7 address\(es\)/);
    // A new window logs again.
    log.refused('198.51.100.1', 'closing connection from 198.51.100.1');
    expect(lines).toHaveLength(5);
    expect(lines[4]).toBe('closing connection from 198.51.100.1');
  });

  it('a real listener refusing 60 connections from an unconfigured address writes a handful of lines, not 60', async () => {
    const lines: string[] = [];
    const l = new Listener({ addresses: ['127.0.0.1'], port: 0, log: (x) => lines.push(x) });
    l.addPeer('127.0.0.9', { accept: (s) => (s.destroy(), false) });
    await l.listen();
    const port = l.ports[0];
    for (let i = 0; i < 60; i++) {
      await new Promise<void>((resolve) => {
        const s = connect({ host: '127.0.0.1', port });
        s.on('close', () => resolve());
        s.on('error', () => undefined);
      });
    }
    await l.close();
    // 5 one by one, then the summary written at close.
    expect(lines.filter((x) => x.startsWith('closing connection from 127.0.0.1'))).toHaveLength(5);
    expect(lines.at(-1)).toMatch(/^55 more connection\(s\) refused in the last \d+ s from 1 address\(es\)/);
    expect(lines).toHaveLength(6);
  });
});
