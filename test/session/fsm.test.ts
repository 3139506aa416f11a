import { describe, expect, it } from 'vitest';
import { createFsm, LARGE_HOLD_TIME, transition } from '../../src/session/fsm.js';
import type { FsmEvent, StateName } from '../../src/session/types.js';
import { cfg, drive, ev, PATHS, peerOpen, sends } from './fixtures.js';
import { renderActions } from './fsm-render.js';

const c = cfg();
/**
 * One row per (state, event) of RFC 4271 §8.2.2: the state reached and the
 * complete list of actions, in order (test/session/fsm-render.ts prints
 * them), so an extra, missing or reordered action fails the row.
 */
interface Row {
  state: StateName;
  event: FsmEvent;
  to: StateName;
  actions: string[];
}

const row = (state: StateName, event: FsmEvent, to: StateName, actions: string[]): Row => ({ state, event, to, actions });
const e = (type: string) => ({ type }) as FsmEvent;

/** What a session holds in a state: a connection (none in Active until TCP is up) and the timers running. */
interface Holds {
  conn: boolean;
  timers: string[];
}
const HOLDS: Record<Exclude<StateName, 'Idle'>, Holds> = {
  Connect: { conn: true, timers: ['ConnectRetry'] },
  Active: { conn: false, timers: ['ConnectRetry'] },
  OpenSent: { conn: true, timers: ['Hold'] },
  OpenConfirm: { conn: true, timers: ['Hold', 'Keepalive'] },
  Established: { conn: true, timers: ['Hold', 'Keepalive'] },
};

/**
 * A row falling to Idle, the tail every such row of §8.2.2 shares, in order:
 * the NOTIFICATION `sent` (code/subcode) if any, the connection closed, the
 * running timers stopped (not the one that `expired`), the state change, the
 * report (`sessionDown` from Established, `attemptFailed` before) with its
 * `reason`, and the damping timer, except after ManualStop.
 */
function fall(state: Exclude<StateName, 'Idle'>, event: FsmEvent, reason: string, o: { sent?: string; expired?: string; holds?: Holds } = {}): Row {
  const h = o.holds ?? HOLDS[state];
  return row(state, event, 'Idle', [
    ...(o.sent !== undefined ? [`send NOTIFICATION ${o.sent}`] : []),
    ...(h.conn ? ['disconnect'] : []),
    ...h.timers.filter((t) => t !== o.expired).map((t) => `stop ${t}`),
    `state ${state}→Idle`,
    `${state === 'Established' ? 'sessionDown' : 'attemptFailed'} ${reason}`,
    ...(reason === 'manualStop' ? [] : ['start IdleHold 5s']),
  ]);
}

const table: Row[] = [
  // Idle
  row('Idle', e('ManualStart'), 'Connect', ['start ConnectRetry 120s', 'connect', 'state Idle→Connect']),
  row('Idle', e('AutomaticStart'), 'Connect', ['start ConnectRetry 120s', 'connect', 'state Idle→Connect']),
  row('Idle', e('ManualStart_with_PassiveTcpEstablishment'), 'Active', ['start ConnectRetry 120s', 'state Idle→Active']),
  row('Idle', e('AutomaticStart_with_PassiveTcpEstablishment'), 'Active', ['start ConnectRetry 120s', 'state Idle→Active']),
  row('Idle', e('ManualStop'), 'Idle', []),
  row('Idle', e('TcpConnectionConfirmed'), 'Idle', []),
  row('Idle', ev.open(), 'Idle', []),
  row('Idle', e('KeepAliveMsg'), 'Idle', []),
  row('Idle', ev.update(), 'Idle', []),
  // Connect
  row('Connect', e('ManualStart'), 'Connect', []),
  fall('Connect', e('ManualStop'), 'manualStop'),
  row('Connect', e('ConnectRetryTimer_Expires'), 'Connect', ['disconnect', 'start ConnectRetry 120s', 'connect']),
  row('Connect', e('TcpConnection_Acknowledged'), 'OpenSent', ['stop ConnectRetry', 'send OPEN', 'start Hold 240s', 'state Connect→OpenSent']),
  row('Connect', e('TcpConnectionConfirmed'), 'OpenSent', ['stop ConnectRetry', 'send OPEN', 'start Hold 240s', 'state Connect→OpenSent']),
  row('Connect', e('TcpConnectionFails'), 'Active', ['start ConnectRetry 120s', 'attemptFailed tcpFailed', 'state Connect→Active']), // deviation: listen, see fsm.ts
  fall('Connect', ev.headerErr(), 'notificationSent', { sent: '1/2' }),
  fall('Connect', ev.openErr(), 'notificationSent', { sent: '2/4' }),
  fall('Connect', ev.notif(6, 2), 'notificationReceived'),
  fall('Connect', ev.verErr(), 'notificationReceived'),
  fall('Connect', e('KeepAliveMsg'), 'unexpected'),
  fall('Connect', ev.open(), 'unexpected'),
  row('Connect', e('HoldTimer_Expires'), 'Connect', []), // not running: ignored
  // Active
  row('Active', e('ManualStart'), 'Active', []),
  fall('Active', e('ManualStop'), 'manualStop'),
  row('Active', e('ConnectRetryTimer_Expires'), 'Connect', ['start ConnectRetry 120s', 'connect', 'state Active→Connect']),
  row('Active', e('TcpConnectionConfirmed'), 'OpenSent', ['stop ConnectRetry', 'send OPEN', 'start Hold 240s', 'state Active→OpenSent']),
  fall('Active', e('TcpConnectionFails'), 'tcpFailed'),
  fall('Active', ev.headerErr(), 'notificationSent'), // no connection to send on
  fall('Active', ev.notif(6, 4), 'notificationReceived'),
  fall('Active', e('KeepAliveMsg'), 'unexpected'),
  fall('Active', ev.update(), 'unexpected'),
  // OpenSent
  row('OpenSent', e('ManualStart'), 'OpenSent', []),
  fall('OpenSent', e('ManualStop'), 'manualStop', { sent: '6/2' }),
  fall('OpenSent', e('AutomaticStop'), 'notificationSent', { sent: '6/4' }),
  fall('OpenSent', e('HoldTimer_Expires'), 'holdTimerExpired', { sent: '4/0', expired: 'Hold' }),
  row('OpenSent', e('TcpConnectionConfirmed'), 'OpenSent', []),
  row('OpenSent', e('TcpConnectionFails'), 'Active', [
    'disconnect',
    'stop Hold',
    'start ConnectRetry 120s',
    'attemptFailed tcpFailed',
    'state OpenSent→Active',
  ]),
  row('OpenSent', ev.open(), 'OpenConfirm', ['negotiated', 'send KEEPALIVE', 'start Keepalive 30s', 'start Hold 90s', 'state OpenSent→OpenConfirm']),
  row('OpenSent', ev.open(peerOpen({ holdTime: 9 })), 'OpenConfirm', [
    'negotiated',
    'send KEEPALIVE',
    'start Keepalive 3s',
    'start Hold 9s',
    'state OpenSent→OpenConfirm',
  ]),
  fall('OpenSent', ev.open(peerOpen({ holdTime: 2 })), 'notificationSent', { sent: '2/6' }),
  fall('OpenSent', ev.headerErr(), 'notificationSent', { sent: '1/2' }),
  fall('OpenSent', ev.openErr(), 'notificationSent', { sent: '2/4' }),
  fall('OpenSent', e('OpenCollisionDump'), 'collision', { sent: '6/7' }),
  fall('OpenSent', ev.verErr(), 'notificationReceived'),
  fall('OpenSent', ev.notif(6, 2), 'notificationReceived'),
  fall('OpenSent', e('KeepAliveMsg'), 'notificationSent', { sent: '5/1' }),
  fall('OpenSent', ev.update(), 'notificationSent', { sent: '5/1' }),
  fall('OpenSent', ev.refresh(), 'notificationSent', { sent: '5/1' }),
  row('OpenSent', e('ConnectRetryTimer_Expires'), 'OpenSent', []), // stopped on TCP up
  // OpenConfirm
  row('OpenConfirm', e('ManualStart'), 'OpenConfirm', []),
  fall('OpenConfirm', e('ManualStop'), 'manualStop', { sent: '6/2' }),
  fall('OpenConfirm', e('AutomaticStop'), 'notificationSent', { sent: '6/4' }),
  fall('OpenConfirm', e('HoldTimer_Expires'), 'holdTimerExpired', { sent: '4/0', expired: 'Hold' }),
  row('OpenConfirm', e('KeepaliveTimer_Expires'), 'OpenConfirm', ['send KEEPALIVE', 'start Keepalive 30s']),
  row('OpenConfirm', e('TcpConnectionConfirmed'), 'OpenConfirm', []),
  fall('OpenConfirm', e('TcpConnectionFails'), 'tcpFailed'),
  fall('OpenConfirm', ev.notif(6, 2), 'notificationReceived'),
  fall('OpenConfirm', ev.verErr(), 'notificationReceived'),
  fall('OpenConfirm', ev.headerErr(), 'notificationSent', { sent: '1/2' }),
  fall('OpenConfirm', ev.openErr(), 'notificationSent', { sent: '2/4' }),
  fall('OpenConfirm', e('OpenCollisionDump'), 'collision', { sent: '6/7' }),
  row('OpenConfirm', e('KeepAliveMsg'), 'Established', ['start Hold 90s', 'state OpenConfirm→Established', 'sessionUp']),
  fall('OpenConfirm', ev.open(), 'notificationSent', { sent: '5/2' }),
  fall('OpenConfirm', ev.update(), 'notificationSent', { sent: '5/2' }),
  // Established
  row('Established', e('ManualStart'), 'Established', []),
  fall('Established', e('ManualStop'), 'manualStop', { sent: '6/2' }),
  fall('Established', e('AutomaticStop'), 'notificationSent', { sent: '6/4' }),
  fall('Established', e('HoldTimer_Expires'), 'holdTimerExpired', { sent: '4/0', expired: 'Hold' }),
  row('Established', e('KeepaliveTimer_Expires'), 'Established', ['send KEEPALIVE', 'start Keepalive 30s']),
  row('Established', e('TcpConnectionConfirmed'), 'Established', []),
  fall('Established', e('TcpConnectionFails'), 'tcpFailed'),
  fall('Established', ev.notif(6, 2), 'notificationReceived'),
  fall('Established', ev.verErr(), 'notificationReceived'),
  row('Established', e('KeepAliveMsg'), 'Established', ['start Hold 90s']),
  row('Established', ev.update(), 'Established', ['start Hold 90s', 'update']),
  row('Established', ev.refresh(), 'Established', ['start Hold 90s', 'routeRefresh']),
  fall('Established', ev.updateErr(), 'notificationSent', { sent: '3/1' }),
  fall('Established', ev.headerErr(), 'notificationSent', { sent: '1/2' }),
  fall('Established', e('OpenCollisionDump'), 'collision', { sent: '6/7' }),
  fall('Established', ev.open(), 'notificationSent', { sent: '5/3' }),
];

describe('RFC 4271 §8.2.2 transition table', () => {
  it('OpenSent waits the large hold time the RFC suggests (4 minutes)', () => {
    expect(LARGE_HOLD_TIME).toBe(240);
  });

  it.each(table.map((r) => [`${r.state} + ${r.event.type} → ${r.to}`, r] as const))('%s', (_name, r) => {
    const f = drive(c, PATHS[r.state]);
    expect(f.state).toBe(r.state);
    const t = transition(f, r.event, 1000);
    expect({ state: t.fsm.state, actions: renderActions(t.actions) }).toEqual({ state: r.to, actions: r.actions });
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
/** With DelayOpen running, TCP is up in Connect and Active alike, and DelayOpen is the one timer running. */
const delaying: Holds = { conn: true, timers: ['DelayOpen'] };
const delayTable: Row[] = [
  row('Connect', e('DelayOpenTimer_Expires'), 'OpenSent', ['send OPEN', 'start Hold 240s', 'state Connect→OpenSent']),
  row('Connect', ev.open(), 'OpenConfirm', [
    'stop DelayOpen',
    'send OPEN',
    'negotiated',
    'send KEEPALIVE',
    'start Keepalive 30s',
    'start Hold 90s',
    'state Connect→OpenConfirm',
  ]),
  fall('Connect', ev.verErr(), 'notificationReceived', { holds: delaying }),
  row('Connect', e('TcpConnectionFails'), 'Active', ['start ConnectRetry 120s', 'stop DelayOpen', 'attemptFailed tcpFailed', 'state Connect→Active']),
  fall('Connect', e('ManualStop'), 'manualStop', { sent: '6/2', holds: delaying }),
  fall('Connect', ev.open(peerOpen({ holdTime: 2 })), 'notificationSent', { sent: '2/6', holds: delaying }),
  row('Active', e('DelayOpenTimer_Expires'), 'OpenSent', ['send OPEN', 'start Hold 240s', 'state Active→OpenSent']),
  row('Active', ev.open(), 'OpenConfirm', [
    'stop DelayOpen',
    'send OPEN',
    'negotiated',
    'send KEEPALIVE',
    'start Keepalive 30s',
    'start Hold 90s',
    'state Active→OpenConfirm',
  ]),
  fall('Active', ev.open(peerOpen({ bgpId: '0.0.0.0' })), 'notificationSent', { sent: '2/3', holds: delaying }),
  fall('Active', ev.headerErr(), 'notificationSent', { sent: '1/2', holds: delaying }),
  fall('Active', e('TcpConnectionFails'), 'tcpFailed', { holds: delaying }),
  fall('Active', e('ManualStop'), 'manualStop', { sent: '6/2', holds: delaying }),
  row('Active', e('ConnectRetryTimer_Expires'), 'Active', []), // stopped when TCP came up
];

describe('RFC 4271 §8.2.2 with DelayOpen', () => {
  it.each(delayTable.map((r) => [`${r.state} (DelayOpen running) + ${r.event.type} → ${r.to}`, r] as const))('%s', (_name, r) => {
    const f = drive(delayed, DELAY_PATHS[r.state]);
    expect(f.state).toBe(r.state);
    expect(f.timers.DelayOpen).toBeDefined();
    const t = transition(f, r.event, 1000);
    expect({ state: t.fsm.state, actions: renderActions(t.actions) }).toEqual({ state: r.to, actions: r.actions });
    if (r.to !== 'Connect' && r.to !== 'Active') expect(t.fsm.timers.DelayOpen).toBeUndefined();
  });
});

describe('FSM details', () => {
  /** Damping from 2 s, up to 16 s, reset after a minute up. */
  const damping = { initial: 2, max: 16, stableAfter: 60 };

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
    const k = cfg({ idleHold: damping });
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
    const k = cfg({ idleHold: damping });
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

  it('a graceful-restart peer lost without a NOTIFICATION is restarting, not flapping: out of Idle at once, no damping', () => {
    const k = cfg({ idleHold: damping, gracefulRestart: { restartTime: 120, stalePathTime: 360, forwardingPreserved: [] } });
    const grOpen = peerOpen({
      caps: [
        { kind: 'multiprotocol', afi: 1, safi: 1 },
        { kind: 'fourOctetAs', asn: 65002 },
        { kind: 'gracefulRestart', restarting: false, notification: false, restartTime: 120, families: [{ afi: 1, safi: 1, forwardingPreserved: true }] },
      ],
    });
    const up = (f: ReturnType<typeof createFsm>, now: number) => {
      for (const e2 of [{ type: 'TcpConnection_Acknowledged' }, ev.open(grOpen), { type: 'KeepAliveMsg' }] as FsmEvent[]) f = transition(f, e2, now).fsm;
      expect(f.state).toBe('Established');
      expect(f.negotiated?.gracefulRestart).toBeDefined();
      return f;
    };
    // A Calico node killed and started again, three times within a minute: each time the session is tried again at
    // once, with no IdleHold (Idle refuses the peer's connection; the damping made it 2, 4, 8 s here, 5, 10, 20 s with
    // the defaults).
    let f = transition(createFsm(k), { type: 'ManualStart' }, 0).fsm;
    for (let i = 0, now = 0; i < 3; i++, now += 1000) {
      f = up(f, now);
      const down = transition(f, { type: 'TcpConnectionFails' }, now);
      f = down.fsm;
      expect(renderActions(down.actions)).toEqual([
        'disconnect',
        'stop Hold',
        'stop Keepalive',
        'state Established→Idle',
        'sessionDown tcpFailed',
        'start ConnectRetry 120s',
        'connect',
        'state Idle→Connect',
      ]);
      expect(f.timers.IdleHold).toBeUndefined();
    }
    expect(f.idleHoldTime).toBe(2);
    // Configured passive: waiting in Active, which accepts the peer's connection.
    const passive = transition(up(transition(createFsm({ ...k, passive: true }), { type: 'ManualStart' }, 0).fsm, 0), { type: 'TcpConnectionFails' }, 0).fsm;
    expect(passive.state).toBe('Active');
    // A NOTIFICATION ends graceful restart (the routes go): the damping applies as before.
    f = up(f, 5000);
    f = transition(f, ev.notif(3, 1), 5000).fsm;
    expect((f.timers.IdleHold! - 5000) / 1000).toBe(2);
    // Without graceful restart negotiated, a TCP loss is damped as before.
    const plain = transition(drive(cfg({ idleHold: damping }), PATHS.Established), { type: 'TcpConnectionFails' }, 0).fsm;
    expect(plain.timers.IdleHold).toBe(2000);
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
