import { describe, expect, it } from 'vitest';
import { createFsm, LARGE_HOLD_TIME, transition } from '../../src/session/fsm.js';
import type { FsmEvent, StateName } from '../../src/session/types.js';
import { cfg, drive, ev, PATHS, peerOpen, sends, sentNotification, timersStarted } from './fixtures.js';

const c = cfg();

interface Row {
  state: StateName;
  event: FsmEvent;
  to: StateName;
  /** NOTIFICATION [code, subcode] sent, or null for none. */
  notify: [number, number] | null;
  /** Other sent message types expected, in order (notification excluded). */
  sent?: string[];
  connect?: boolean;
  disconnect?: boolean;
  timers?: string[];
}

const T = (state: StateName, event: FsmEvent, to: StateName, notify: [number, number] | null, more: Omit<Row, 'state' | 'event' | 'to' | 'notify'> = {}): Row => ({ state, event, to, notify, ...more });
const e = (type: string) => ({ type }) as FsmEvent;

// RFC 4271 §8.2.2, one row per (state, event) the section names.
const table: Row[] = [
  // Idle
  T('Idle', e('ManualStart'), 'Connect', null, { connect: true, timers: ['ConnectRetry:120'] }),
  T('Idle', e('AutomaticStart'), 'Connect', null, { connect: true, timers: ['ConnectRetry:120'] }),
  T('Idle', e('ManualStart_with_PassiveTcpEstablishment'), 'Active', null, { connect: false, timers: ['ConnectRetry:120'] }),
  T('Idle', e('AutomaticStart_with_PassiveTcpEstablishment'), 'Active', null, { connect: false }),
  T('Idle', e('ManualStop'), 'Idle', null, { sent: [] }),
  T('Idle', e('TcpConnectionConfirmed'), 'Idle', null, { sent: [] }),
  T('Idle', ev.open(), 'Idle', null, { sent: [] }),
  T('Idle', e('KeepAliveMsg'), 'Idle', null, { sent: [] }),
  T('Idle', ev.update(), 'Idle', null, { sent: [] }),
  // Connect
  T('Connect', e('ManualStart'), 'Connect', null, { sent: [] }),
  T('Connect', e('ManualStop'), 'Idle', null, { disconnect: true, sent: [] }),
  T('Connect', e('ConnectRetryTimer_Expires'), 'Connect', null, { connect: true, disconnect: true, timers: ['ConnectRetry:120'] }),
  T('Connect', e('TcpConnection_Acknowledged'), 'OpenSent', null, { sent: ['open'], timers: [`Hold:${LARGE_HOLD_TIME}`] }),
  T('Connect', e('TcpConnectionConfirmed'), 'OpenSent', null, { sent: ['open'] }),
  T('Connect', e('TcpConnectionFails'), 'Active', null, { sent: [], timers: ['ConnectRetry:120'] }), // deviation: listen, see fsm.ts
  T('Connect', ev.headerErr(), 'Idle', [1, 2], { disconnect: true }),
  T('Connect', ev.openErr(), 'Idle', [2, 4]),
  T('Connect', ev.notif(6, 2), 'Idle', null, { sent: [] }),
  T('Connect', ev.verErr(), 'Idle', null),
  T('Connect', e('KeepAliveMsg'), 'Idle', null, { disconnect: true }),
  T('Connect', ev.open(), 'Idle', null, { disconnect: true }),
  T('Connect', e('HoldTimer_Expires'), 'Connect', null, { sent: [] }), // not running: ignored
  // Active
  T('Active', e('ManualStart'), 'Active', null, { sent: [] }),
  T('Active', e('ManualStop'), 'Idle', null, { sent: [] }),
  T('Active', e('ConnectRetryTimer_Expires'), 'Connect', null, { connect: true, timers: ['ConnectRetry:120'] }),
  T('Active', e('TcpConnectionConfirmed'), 'OpenSent', null, { sent: ['open'], timers: [`Hold:${LARGE_HOLD_TIME}`] }),
  T('Active', e('TcpConnectionFails'), 'Idle', null),
  T('Active', ev.headerErr(), 'Idle', null), // no connection to send on
  T('Active', ev.notif(6, 4), 'Idle', null),
  T('Active', e('KeepAliveMsg'), 'Idle', null),
  T('Active', ev.update(), 'Idle', null),
  // OpenSent
  T('OpenSent', e('ManualStart'), 'OpenSent', null, { sent: [] }),
  T('OpenSent', e('ManualStop'), 'Idle', [6, 2], { disconnect: true }),
  T('OpenSent', e('AutomaticStop'), 'Idle', [6, 4]),
  T('OpenSent', e('HoldTimer_Expires'), 'Idle', [4, 0], { disconnect: true }),
  T('OpenSent', e('TcpConnectionConfirmed'), 'OpenSent', null, { sent: [] }),
  T('OpenSent', e('TcpConnectionFails'), 'Active', null, { disconnect: true, timers: ['ConnectRetry:120'] }),
  T('OpenSent', ev.open(), 'OpenConfirm', null, { sent: ['keepalive'], timers: ['Keepalive:30', 'Hold:90'] }),
  T('OpenSent', ev.open(peerOpen({ holdTime: 9 })), 'OpenConfirm', null, { sent: ['keepalive'], timers: ['Keepalive:3', 'Hold:9'] }),
  T('OpenSent', ev.open(peerOpen({ version: 3 })), 'Idle', [2, 1]),
  T('OpenSent', ev.headerErr(), 'Idle', [1, 2]),
  T('OpenSent', ev.openErr(), 'Idle', [2, 4]),
  T('OpenSent', e('OpenCollisionDump'), 'Idle', [6, 7]),
  T('OpenSent', ev.verErr(), 'Idle', null, { disconnect: true }),
  T('OpenSent', ev.notif(6, 2), 'Idle', null, { disconnect: true }),
  T('OpenSent', e('KeepAliveMsg'), 'Idle', [5, 1]),
  T('OpenSent', ev.update(), 'Idle', [5, 1]),
  T('OpenSent', ev.refresh(), 'Idle', [5, 1]),
  T('OpenSent', e('ConnectRetryTimer_Expires'), 'OpenSent', null, { sent: [] }), // stopped on TCP up
  // OpenConfirm
  T('OpenConfirm', e('ManualStart'), 'OpenConfirm', null, { sent: [] }),
  T('OpenConfirm', e('ManualStop'), 'Idle', [6, 2]),
  T('OpenConfirm', e('AutomaticStop'), 'Idle', [6, 4]),
  T('OpenConfirm', e('HoldTimer_Expires'), 'Idle', [4, 0]),
  T('OpenConfirm', e('KeepaliveTimer_Expires'), 'OpenConfirm', null, { sent: ['keepalive'], timers: ['Keepalive:30'] }),
  T('OpenConfirm', e('TcpConnectionConfirmed'), 'OpenConfirm', null, { sent: [] }),
  T('OpenConfirm', e('TcpConnectionFails'), 'Idle', null, { disconnect: true }),
  T('OpenConfirm', ev.notif(6, 2), 'Idle', null),
  T('OpenConfirm', ev.verErr(), 'Idle', null),
  T('OpenConfirm', ev.headerErr(), 'Idle', [1, 2]),
  T('OpenConfirm', ev.openErr(), 'Idle', [2, 4]),
  T('OpenConfirm', e('OpenCollisionDump'), 'Idle', [6, 7]),
  T('OpenConfirm', e('KeepAliveMsg'), 'Established', null, { sent: [], timers: ['Hold:90'] }),
  T('OpenConfirm', ev.open(), 'Idle', [5, 2]),
  T('OpenConfirm', ev.update(), 'Idle', [5, 2]),
  // Established
  T('Established', e('ManualStart'), 'Established', null, { sent: [] }),
  T('Established', e('ManualStop'), 'Idle', [6, 2], { disconnect: true }),
  T('Established', e('AutomaticStop'), 'Idle', [6, 4]),
  T('Established', e('HoldTimer_Expires'), 'Idle', [4, 0]),
  T('Established', e('KeepaliveTimer_Expires'), 'Established', null, { sent: ['keepalive'], timers: ['Keepalive:30'] }),
  T('Established', e('TcpConnectionConfirmed'), 'Established', null, { sent: [] }),
  T('Established', e('TcpConnectionFails'), 'Idle', null, { disconnect: true }),
  T('Established', ev.notif(6, 2), 'Idle', null),
  T('Established', ev.verErr(), 'Idle', null),
  T('Established', e('KeepAliveMsg'), 'Established', null, { sent: [], timers: ['Hold:90'] }),
  T('Established', ev.update(), 'Established', null, { sent: [], timers: ['Hold:90'] }),
  T('Established', ev.refresh(), 'Established', null, { sent: [] }),
  T('Established', ev.updateErr(), 'Idle', [3, 1]),
  T('Established', ev.headerErr(), 'Idle', [1, 2]),
  T('Established', e('OpenCollisionDump'), 'Idle', [6, 7]),
  T('Established', ev.open(), 'Idle', [5, 3]),
];

describe('RFC 4271 §8.2.2 transition table', () => {
  it.each(table.map((r) => [`${r.state} + ${r.event.type} → ${r.to}`, r] as const))('%s', (_name, r) => {
    const f = drive(c, PATHS[r.state]);
    expect(f.state).toBe(r.state);
    const t = transition(f, r.event, 1000);
    expect(t.fsm.state).toBe(r.to);
    expect(sentNotification(t.actions) ?? null).toEqual(r.notify);
    const other = sends(t.actions).filter((m) => m.type !== 'notification').map((m) => m.type);
    if (r.sent) expect(other).toEqual(r.sent);
    if (r.connect !== undefined) expect(t.actions.some((a) => a.type === 'connect')).toBe(r.connect);
    if (r.disconnect !== undefined) expect(t.actions.some((a) => a.type === 'disconnect')).toBe(r.disconnect);
    if (r.timers) for (const tm of r.timers) expect(timersStarted(t.actions)).toContain(tm);
    if (r.to === 'Idle' && r.state !== 'Idle') {
      expect(Object.keys(t.fsm.timers).filter((k) => k !== 'IdleHold')).toEqual([]);
    }
  });
});

// The DelayOpen rows of §8.2.2 (Connect and Active with the DelayOpenTimer running).
const delayed = cfg({ delayOpenTime: 5 });
const DELAY_PATHS: Record<string, FsmEvent[]> = {
  Connect: [{ type: 'ManualStart' }, { type: 'TcpConnection_Acknowledged' }],
  Active: [{ type: 'ManualStart_with_PassiveTcpEstablishment' }, { type: 'TcpConnectionConfirmed' }],
};
const delayTable: Row[] = [
  T('Connect', e('DelayOpenTimer_Expires'), 'OpenSent', null, { sent: ['open'], timers: ['Hold:240'] }),
  T('Connect', ev.open(), 'OpenConfirm', null, { sent: ['open', 'keepalive'], timers: ['Keepalive:30', 'Hold:90'] }),
  T('Connect', ev.verErr(), 'Idle', null, { disconnect: true }),
  T('Connect', e('TcpConnectionFails'), 'Active', null, { timers: ['ConnectRetry:120'] }),
  T('Connect', e('ManualStop'), 'Idle', [6, 2], { disconnect: true }),
  T('Connect', ev.open(peerOpen({ holdTime: 2 })), 'Idle', [2, 6]),
  T('Active', e('DelayOpenTimer_Expires'), 'OpenSent', null, { sent: ['open'], timers: ['Hold:240'] }),
  T('Active', ev.open(), 'OpenConfirm', null, { sent: ['open', 'keepalive'] }),
  T('Active', ev.open(peerOpen({ bgpId: '0.0.0.0' })), 'Idle', [2, 3]),
  T('Active', ev.headerErr(), 'Idle', [1, 2], { disconnect: true }),
  T('Active', e('TcpConnectionFails'), 'Idle', null, { disconnect: true }),
  T('Active', e('ManualStop'), 'Idle', [6, 2]),
  T('Active', e('ConnectRetryTimer_Expires'), 'Active', null, { sent: [] }), // stopped when TCP came up
];

describe('RFC 4271 §8.2.2 with DelayOpen', () => {
  it.each(delayTable.map((r) => [`${r.state} (DelayOpen running) + ${r.event.type} → ${r.to}`, r] as const))('%s', (_name, r) => {
    const f = drive(delayed, DELAY_PATHS[r.state]);
    expect(f.state).toBe(r.state);
    expect(f.timers.DelayOpen).toBeDefined();
    const t = transition(f, r.event, 1000);
    expect(t.fsm.state).toBe(r.to);
    expect(sentNotification(t.actions) ?? null).toEqual(r.notify);
    const other = sends(t.actions).filter((m) => m.type !== 'notification').map((m) => m.type);
    if (r.sent) expect(other).toEqual(r.sent);
    if (r.disconnect !== undefined) expect(t.actions.some((a) => a.type === 'disconnect')).toBe(r.disconnect);
    if (r.timers) for (const tm of r.timers) expect(timersStarted(t.actions)).toContain(tm);
    if (r.to !== 'Connect' && r.to !== 'Active') expect(t.fsm.timers.DelayOpen).toBeUndefined();
  });
});

describe('FSM details', () => {
  it('reports session up with the negotiation and down with the reason', () => {
    const f = drive(c, PATHS.OpenConfirm);
    const up = transition(f, { type: 'KeepAliveMsg' }, 0);
    const a = up.actions.find((x) => x.type === 'sessionUp');
    expect(a && a.type === 'sessionUp' && a.negotiated.peerAs).toBe(65002);
    const down = transition(up.fsm, { type: 'HoldTimer_Expires' }, 1000);
    expect(down.actions.find((x) => x.type === 'sessionDown')).toEqual({ type: 'sessionDown', reason: { kind: 'holdTimerExpired' } });
  });

  it('delivers UPDATEs and route refresh only in Established', () => {
    const f = drive(c, PATHS.Established);
    expect(transition(f, ev.update(), 0).actions.some((a) => a.type === 'update')).toBe(true);
    expect(transition(f, ev.refresh(), 0).actions.some((a) => a.type === 'routeRefresh')).toBe(true);
    const noRr = drive(c, [...PATHS.OpenSent, ev.open(peerOpen({ caps: [{ kind: 'fourOctetAs', asn: 65002 }] })), { type: 'KeepAliveMsg' }]);
    expect(noRr.state).toBe('Established');
    expect(transition(noRr, ev.refresh(), 0).actions.some((a) => a.type === 'routeRefresh')).toBe(false);
  });

  it('hold time 0 runs neither hold nor keepalive timers', () => {
    const f = drive(c, [...PATHS.OpenSent, ev.open(peerOpen({ holdTime: 0 })), { type: 'KeepAliveMsg' }]);
    expect(f.state).toBe('Established');
    expect(f.timers).toEqual({});
    expect(f.negotiated?.holdTime).toBe(0);
  });

  it('uses a configured keepalive when it fits the hold time', () => {
    const f = drive(cfg({ keepaliveTime: 10 }), PATHS.OpenConfirm);
    expect(f.negotiated?.keepaliveTime).toBe(10);
  });

  it('DelayOpen waits before sending OPEN, and answers an early OPEN with OPEN + KEEPALIVE', () => {
    const d = cfg({ delayOpenTime: 5 });
    const connected = drive(d, [{ type: 'ManualStart' }, { type: 'TcpConnection_Acknowledged' }]);
    expect(connected.state).toBe('Connect');
    expect(connected.timers.DelayOpen).toBe(5000);
    const fired = transition(connected, { type: 'DelayOpenTimer_Expires' }, 5000);
    expect(fired.fsm.state).toBe('OpenSent');
    expect(sends(fired.actions).map((m) => m.type)).toEqual(['open']);
    const early = transition(connected, ev.open(), 100);
    expect(early.fsm.state).toBe('OpenConfirm');
    expect(sends(early.actions).map((m) => m.type)).toEqual(['open', 'keepalive']);
    const fails = transition(connected, { type: 'TcpConnectionFails' }, 100);
    expect(fails.fsm.state).toBe('Active');
  });

  it('ignores a timer expiry when that timer is not running', () => {
    const f = drive(c, PATHS.Established);
    const stopped = { ...f, timers: {} };
    const t = transition(stopped, { type: 'HoldTimer_Expires' }, 0);
    expect(t.fsm.state).toBe('Established');
    expect(t.actions).toEqual([]);
  });

  it('ManualStop disables automatic restart; other failures schedule IdleHold', () => {
    const stopped = transition(drive(c, PATHS.Established), { type: 'ManualStop' }, 0).fsm;
    expect(stopped.timers.IdleHold).toBeUndefined();
    expect(transition(stopped, { type: 'AutomaticStart' }, 0).fsm.state).toBe('Connect');
    const failed = transition(drive(c, PATHS.Established), { type: 'TcpConnectionFails' }, 0).fsm;
    expect(failed.timers.IdleHold).toBe(5000);
    // An automatic start waits out the damping timer…
    expect(transition(failed, { type: 'AutomaticStart' }, 0).fsm.state).toBe('Idle');
    // …and its expiry restarts the connection.
    expect(transition(failed, { type: 'IdleHoldTimer_Expires' }, 5000).fsm.state).toBe('Connect');
  });

  it('IdleHold doubles for a flapping peer up to the bound and resets after a stable session', () => {
    const k = cfg({ idleHold: { initial: 2, max: 16, stableAfter: 60 } });
    let f = createFsm(k);
    let now = 0;
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      f = transition(f, { type: 'ManualStart' }, now).fsm;
      f = transition(f, { type: 'TcpConnection_Acknowledged' }, now).fsm;
      f = transition(f, { type: 'HoldTimer_Expires' }, now).fsm;
      delays.push((f.timers.IdleHold! - now) / 1000);
      now += 1000;
    }
    expect(delays).toEqual([2, 4, 8, 16, 16, 16]);
    // A session that stays up past stableAfter resets the backoff.
    for (const e2 of PATHS.Established) f = transition(f, e2, now).fsm;
    expect(f.state).toBe('Established');
    now += 61_000;
    f = transition(f, { type: 'TcpConnectionFails' }, now).fsm;
    expect((f.timers.IdleHold! - now) / 1000).toBe(2);
  });

  it('a Cease from the peer does not feed the damping backoff; an error notification does', () => {
    const k = cfg({ idleHold: { initial: 2, max: 16, stableAfter: 60 } });
    const delaysAfter = (m: { code: number; subcode: number }): number[] => {
      let f = createFsm(k);
      let now = 0;
      const out: number[] = [];
      for (let i = 0; i < 4; i++) {
        f = transition(f, { type: 'ManualStart' }, now).fsm;
        for (const e of PATHS.Established.slice(1)) f = transition(f, e, now).fsm;
        expect(f.state).toBe('Established');
        f = transition(f, { type: 'NotifMsg', message: { type: 'notification', code: m.code, subcode: m.subcode, data: new Uint8Array(0) } }, now).fsm;
        out.push((f.timers.IdleHold! - now) / 1000);
        now += 1000;
      }
      return out;
    };
    // administrative shutdown, administrative reset: the peer's choice, the delay stays put
    expect(delaysAfter({ code: 6, subcode: 2 })).toEqual([2, 2, 2, 2]);
    expect(delaysAfter({ code: 6, subcode: 4 })).toEqual([2, 2, 2, 2]);
    // an UPDATE error from the peer: a flapping session, backed off
    expect(delaysAfter({ code: 3, subcode: 1 })).toEqual([2, 4, 8, 16]);
  });

  it('counts connect-retry failures and clears them on ManualStop', () => {
    let f = drive(c, PATHS.OpenSent);
    f = transition(f, { type: 'HoldTimer_Expires' }, 0).fsm;
    expect(f.connectRetryCounter).toBe(1);
    f = transition(transition(f, { type: 'IdleHoldTimer_Expires' }, 5000).fsm, { type: 'ManualStop' }, 5000).fsm;
    expect(f.connectRetryCounter).toBe(0);
  });

  it('passive config never connects out', () => {
    const p = cfg({ passive: true });
    const f = transition(createFsm(p), { type: 'ManualStart' }, 0);
    expect(f.fsm.state).toBe('Active');
    expect(f.actions.some((a) => a.type === 'connect')).toBe(false);
    const retry = transition(f.fsm, { type: 'ConnectRetryTimer_Expires' }, 120_000);
    expect(retry.fsm.state).toBe('Active');
    expect(retry.actions.some((a) => a.type === 'connect')).toBe(false);
  });
});
