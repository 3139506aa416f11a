import { CeaseSubcode, ErrorCode, OpenSubcode, type BgpError, Notify, type Message, type NotificationMessage, type OpenMessage } from '../wire/index.js';
import { retainsRoutes } from './graceful.js';
import { negotiate, type Negotiated } from './negotiate.js';
import { buildOpen, checkOpen, NO_OMISSIONS, omissionsAfter, type Omissions } from './open.js';
import { withHardReset } from './graceful.js';
import type { DownReason, FsmAction, FsmEvent, FsmEventType, SessionConfig, StateName, TimerName } from './types.js';

/** RFC 4271 §8.2.2 "large value" for the hold timer until the peer's OPEN arrives. */
export const LARGE_HOLD_TIME = 240;

/** One connection's FSM. Immutable; `transition` returns a new one. */
export interface Fsm {
  readonly config: SessionConfig;
  readonly state: StateName;
  readonly connectRetryCounter: number;
  /**
   * Running timers and when they fire (ms, same clock as `now`), as last set
   * by a state's entry or a timer's own expiry. Once Established, the hold
   * timer also restarts at every message received (a `startTimer` action of
   * that step): that moves only its deadline, which the shell keeps, so the
   * FSM value is not rebuilt per message and `timers.Hold` there is the
   * deadline set on entry, not the current one (see `restart`).
   */
  readonly timers: Readonly<Partial<Record<TimerName, number>>>;
  /** A TCP connection exists (or an outgoing attempt is in flight). */
  readonly connected: boolean;
  /** Our OPEN, kept until the peer's arrives and is negotiated against it; neither OPEN is kept after (an idle session's memory). */
  readonly sentOpen?: OpenMessage;
  readonly negotiated?: Negotiated;
  readonly establishedAt?: number;
  /** Next IdleHold delay, seconds (doubles on each failure, see §8.1.1 damping). */
  readonly idleHoldTime: number;
  /** False after ManualStop: no automatic restart. */
  readonly autoRestart: boolean;
  readonly omissions: Omissions;
  /** We are the restarting speaker (RFC 4724 R bit in our OPEN). */
  readonly restarting: boolean;
}

export interface Transition {
  readonly fsm: Fsm;
  readonly actions: readonly FsmAction[];
}

export function createFsm(config: SessionConfig, opts: { restarting?: boolean; omissions?: Omissions } = {}): Fsm {
  return {
    config,
    state: 'Idle',
    connectRetryCounter: 0,
    timers: {},
    connected: false,
    idleHoldTime: config.idleHold.initial,
    autoRestart: true,
    omissions: opts.omissions ?? NO_OMISSIONS,
    restarting: opts.restarting ?? false,
  };
}

/** Builder threading the FSM value and the action list through one transition. */
class Step {
  readonly actions: FsmAction[] = [];
  constructor(
    public fsm: Fsm,
    readonly now: number,
  ) {}
  set(patch: Partial<Fsm>): this {
    this.fsm = { ...this.fsm, ...patch };
    return this;
  }
  start(timer: TimerName, seconds: number): this {
    if (seconds <= 0) return this.stop(timer);
    this.fsm = { ...this.fsm, timers: { ...this.fsm.timers, [timer]: this.now + seconds * 1000 } };
    this.actions.push({ type: 'startTimer', timer, seconds });
    return this;
  }
  /**
   * Restarts a timer that is running (the hold timer, at each message
   * received once Established) without rebuilding the FSM value: the action
   * tells the shell, which keeps the moving deadline. What is running does
   * not change, so neither does any transition's outcome; only the deadline
   * recorded in `timers` stays the one set when the timer was started.
   */
  restart(timer: TimerName, seconds: number): this {
    this.actions.push({ type: 'startTimer', timer, seconds });
    return this;
  }
  stop(timer: TimerName): this {
    if (this.fsm.timers[timer] === undefined) return this;
    const timers = { ...this.fsm.timers };
    delete timers[timer];
    this.fsm = { ...this.fsm, timers };
    this.actions.push({ type: 'stopTimer', timer });
    return this;
  }
  send(message: Message): this {
    this.actions.push({ type: 'send', message });
    return this;
  }
  emit(a: FsmAction): this {
    this.actions.push(a);
    return this;
  }
  goto(to: StateName): this {
    if (to !== this.fsm.state) this.actions.push({ type: 'stateChange', from: this.fsm.state, to });
    this.fsm = { ...this.fsm, state: to };
    return this;
  }
  done(): Transition {
    return { fsm: this.fsm, actions: this.actions };
  }
}

const CONNECTION_TIMERS: readonly TimerName[] = ['ConnectRetry', 'Hold', 'Keepalive', 'DelayOpen', 'IdleHold'];

interface IdleOpts {
  readonly reason: DownReason;
  readonly notify?: NotificationMessage;
  /** Count the failure toward damping (false for ManualStop and version fallback). */
  readonly failure: boolean;
  readonly manual?: boolean;
  /** Seconds before the automatic restart, instead of the damping delay. */
  readonly restartAfter?: number;
}

/**
 * The common "release resources, drop TCP, go Idle" of §8.2.2. Every timer is
 * stopped; the automatic restart is the IdleHold timer, whose delay doubles
 * with each failure and resets once a session has stayed up `stableAfter`.
 * (Where the RFC restarts ConnectRetry on the way to Idle we use IdleHold
 * instead, so Idle never has a connection timer running.)
 */
function toIdle(st: Step, o: IdleOpts): Transition {
  const f = st.fsm;
  const wasEstablished = f.state === 'Established';
  let notify = o.notify;
  let reason = o.reason;
  // RFC 8538: on an N-bit session the Ceases that must flush go as Hard Reset.
  if (notify && wasEstablished && f.negotiated?.gracefulNotification) {
    notify = withHardReset(notify);
    if (reason.kind === 'notificationSent') reason = { ...reason, code: notify.code, subcode: notify.subcode };
  }
  if (notify && f.connected) st.send(notify);
  if (f.connected) st.emit({ type: 'disconnect' });
  for (const t of CONNECTION_TIMERS) st.stop(t);
  st.goto('Idle');
  st.emit(wasEstablished ? { type: 'sessionDown', reason } : { type: 'attemptFailed', reason });
  const idle = f.config.idleHold;
  let delay = f.idleHoldTime;
  if (f.establishedAt !== undefined && st.now - f.establishedAt >= idle.stableAfter * 1000) delay = idle.initial;
  st.set({
    connected: false,
    sentOpen: undefined,
    negotiated: undefined,
    establishedAt: undefined,
    connectRetryCounter: o.manual ? 0 : o.failure ? f.connectRetryCounter + 1 : f.connectRetryCounter,
  });
  // RFC 4724: a peer whose routes we keep as stale (graceful restart negotiated, the session lost without a
  // NOTIFICATION) is restarting, not flapping. Be ready for it at once, out of Idle (which refuses its connection)
  // and without feeding the damping: a doubled IdleHold kept a restarted Calico node out for 20 s. (Not after a
  // collision: the peer's new connection is already there, and this one goes.)
  const peerRestarting = wasEstablished && o.reason.kind !== 'collision' && retainsRoutes(f.negotiated, o.reason);
  if (o.manual) {
    st.set({ autoRestart: false, idleHoldTime: idle.initial });
  } else if (f.autoRestart && o.restartAfter !== undefined) {
    st.start('IdleHold', o.restartAfter);
  } else if (f.autoRestart && peerRestarting) {
    return start(st, false);
  } else if (f.autoRestart) {
    st.start('IdleHold', delay);
    st.set({ idleHoldTime: o.failure ? Math.min(idle.max, Math.max(delay, 1) * 2) : delay });
  }
  return st.done();
}

function fail(st: Step, reason: DownReason, notify?: NotificationMessage): Transition {
  return toIdle(st, { reason, notify, failure: true });
}

function notifyFail(st: Step, n: NotificationMessage, message: string): Transition {
  return fail(st, { kind: 'notificationSent', code: n.code, subcode: n.subcode, message }, n);
}

/** AutomaticStop (§8.1.2 event 8, e.g. a prefix limit): Cease with the event's subcode and data. */
function automaticStop(st: Step, ev: Extract<FsmEvent, { type: 'AutomaticStop' }>): Transition {
  const n = Notify.cease(ev.subcode ?? 'ADMINISTRATIVE_RESET', ev.data);
  return toIdle(st, {
    reason: { kind: 'notificationSent', code: n.code, subcode: n.subcode, message: 'automatic stop' },
    notify: n,
    failure: true,
    restartAfter: ev.restartAfter,
  });
}

/** RFC 9687 §4: the peer has not read what we sent for the send hold time. */
function sendHoldExpired(st: Step): Transition {
  return toIdle(st, {
    reason: { kind: 'sendHoldTimerExpired' },
    notify: { type: 'notification', code: ErrorCode.SEND_HOLD_TIMER_EXPIRED, subcode: 0, data: new Uint8Array(0) },
    failure: true,
  });
}

function errorFail(st: Step, err: BgpError): Transition {
  return notifyFail(st, Notify.of(err), err.message);
}

function fsmError(st: Step, ev: FsmEventType): Transition {
  const sub =
    st.fsm.state === 'OpenSent'
      ? 'UNEXPECTED_IN_OPENSENT'
      : st.fsm.state === 'OpenConfirm'
        ? 'UNEXPECTED_IN_OPENCONFIRM'
        : st.fsm.state === 'Established'
          ? 'UNEXPECTED_IN_ESTABLISHED'
          : 'UNSPECIFIED';
  return notifyFail(st, Notify.fsm(sub), `unexpected ${ev} in ${st.fsm.state}`);
}

function start(st: Step, passive: boolean): Transition {
  st.stop('IdleHold').set({ connectRetryCounter: 0, autoRestart: true });
  st.start('ConnectRetry', st.fsm.config.connectRetryTime);
  if (passive || st.fsm.config.passive) return st.goto('Active').done();
  st.set({ connected: true }).emit({ type: 'connect' });
  return st.goto('Connect').done();
}

function sendOpen(st: Step): Step {
  const open = buildOpen(st.fsm.config, st.fsm.omissions, st.fsm.restarting);
  st.set({ sentOpen: open }).send(open);
  return st.start('Hold', LARGE_HOLD_TIME);
}

/** TCP up in Connect or Active: OPEN now, or after DelayOpen. */
function tcpUp(st: Step): Transition {
  st.set({ connected: true }).stop('ConnectRetry');
  const delay = st.fsm.config.delayOpenTime ?? 0;
  if (delay > 0) return st.start('DelayOpen', delay).done();
  return sendOpen(st).goto('OpenSent').done();
}

/** Peer's OPEN accepted: KEEPALIVE, negotiated timers, OpenConfirm. */
function acceptOpen(st: Step, open: OpenMessage, sendOurOpen: boolean): Transition {
  const err = checkOpen(open, st.fsm.config);
  if (err) return errorFail(st, err);
  st.stop('ConnectRetry').stop('DelayOpen');
  if (sendOurOpen) {
    const ours = buildOpen(st.fsm.config, st.fsm.omissions, st.fsm.restarting);
    st.set({ sentOpen: ours }).send(ours);
  }
  const n = negotiate(st.fsm.sentOpen!, open, st.fsm.config.keepaliveTime);
  st.set({ sentOpen: undefined, negotiated: n });
  st.emit({ type: 'negotiated', negotiated: n });
  st.send({ type: 'keepalive' });
  if (n.holdTime > 0) {
    st.start('Keepalive', n.keepaliveTime).start('Hold', n.holdTime);
  } else {
    // Hold time 0 means no timer once Established; until the peer's
    // KEEPALIVE, OpenConfirm is bounded like OpenSent (the large hold time,
    // 4 minutes), or a peer that never sends it would hold the slot forever.
    st.stop('Keepalive').start('Hold', LARGE_HOLD_TIME);
  }
  return st.goto('OpenConfirm').done();
}

/**
 * A NOTIFICATION from the peer: remember refused capabilities for the next try.
 * A Cease (other than collision resolution) is the peer ending the session on
 * purpose — administrative shutdown or reset, de-configuration, a prefix limit —
 * not an oscillation: it does not feed the damping backoff. (It did: a peer
 * disabled and re-enabled a few times found us refusing it for up to
 * idleHold.max, 120 s, while we waited out the doubled IdleHold.)
 */
function peerNotification(st: Step, m: NotificationMessage, failure: boolean): Transition {
  st.set({ omissions: omissionsAfter(st.fsm.omissions, m.code, m.subcode, m.data) });
  const ceased = m.code === ErrorCode.CEASE && m.subcode !== CeaseSubcode.CONNECTION_COLLISION_RESOLUTION;
  return toIdle(st, { reason: { kind: 'notificationReceived', code: m.code, subcode: m.subcode }, failure: failure && !ceased });
}

const isTimerEvent = (t: FsmEventType): TimerName | undefined =>
  t === 'ConnectRetryTimer_Expires'
    ? 'ConnectRetry'
    : t === 'HoldTimer_Expires'
      ? 'Hold'
      : t === 'KeepaliveTimer_Expires'
        ? 'Keepalive'
        : t === 'DelayOpenTimer_Expires'
          ? 'DelayOpen'
          : t === 'IdleHoldTimer_Expires'
            ? 'IdleHold'
            : undefined;

/**
 * The RFC 4271 §8.2.2 transition function. Pure: `now` (ms) only stamps
 * timer deadlines and the damping clock. Expiry of a timer that is not
 * running (a late callback) changes nothing.
 */
export function transition(fsm: Fsm, ev: FsmEvent, now: number): Transition {
  const timer = isTimerEvent(ev.type);
  if (timer) {
    if (fsm.timers[timer] === undefined) return { fsm, actions: [] };
    // It fired: it is no longer running.
    const timers = { ...fsm.timers };
    delete timers[timer];
    fsm = { ...fsm, timers };
  }
  const st = new Step(fsm, now);
  switch (fsm.state) {
    case 'Idle':
      return idle(st, ev);
    case 'Connect':
      return connectOrActive(st, ev);
    case 'Active':
      return connectOrActive(st, ev);
    case 'OpenSent':
      return openSent(st, ev);
    case 'OpenConfirm':
      return openConfirm(st, ev);
    case 'Established':
      return established(st, ev);
  }
}

function idle(st: Step, ev: FsmEvent): Transition {
  switch (ev.type) {
    case 'ManualStart':
      // An operator start is a fresh start: forget capabilities the peer once refused.
      st.set({ omissions: NO_OMISSIONS });
      return start(st, false);
    case 'ManualStart_with_PassiveTcpEstablishment':
    case 'AutomaticStart_with_PassiveTcpEstablishment':
      if (ev.type.startsWith('Automatic') && st.fsm.timers.IdleHold !== undefined) return st.done();
      return start(st, true);
    case 'AutomaticStart':
      // Damping: while IdleHold runs, automatic starts wait for it.
      if (st.fsm.timers.IdleHold !== undefined) return st.done();
      return start(st, false);
    case 'IdleHoldTimer_Expires':
      return start(st, false);
    default:
      return st.done(); // §8.2.2: everything else is ignored in Idle
  }
}

function connectOrActive(st: Step, ev: FsmEvent): Transition {
  const f = st.fsm;
  const delayOpenRunning = f.timers.DelayOpen !== undefined;
  switch (ev.type) {
    case 'ManualStart':
    case 'AutomaticStart':
    case 'ManualStart_with_PassiveTcpEstablishment':
    case 'AutomaticStart_with_PassiveTcpEstablishment':
    case 'TcpConnection_Valid':
    case 'SendHoldTimer_Expires': // nothing was sent on this connection yet
      return st.done();
    case 'ManualStop': {
      const notify = delayOpenRunning ? (ev.notification ?? Notify.cease('ADMINISTRATIVE_SHUTDOWN')) : undefined;
      return toIdle(st, { reason: { kind: 'manualStop' }, notify, failure: false, manual: true });
    }
    case 'ConnectRetryTimer_Expires':
      // Drop whatever attempt is in flight and try again.
      if (f.connected) st.emit({ type: 'disconnect' });
      st.stop('DelayOpen').start('ConnectRetry', f.config.connectRetryTime);
      if (f.config.passive) return st.set({ connected: false }).goto('Active').done();
      st.set({ connected: true }).emit({ type: 'connect' });
      return st.goto('Connect').done();
    case 'DelayOpenTimer_Expires':
      st.stop('ConnectRetry');
      return sendOpen(st).goto('OpenSent').done();
    case 'TcpConnection_Acknowledged':
    case 'TcpConnectionConfirmed':
      return tcpUp(st);
    case 'TcpConnectionFails':
      if (f.state === 'Connect') {
        // §8.2.2 sends Connect to Idle here unless DelayOpen runs; like most
        // implementations we go to Active and listen until ConnectRetry, so
        // two peers that both dial never lock each other out from Idle.
        st.set({ connected: false }).start('ConnectRetry', f.config.connectRetryTime).stop('DelayOpen');
        st.emit({ type: 'attemptFailed', reason: { kind: 'tcpFailed' } });
        return st.goto('Active').done();
      }
      return toIdle(st, { reason: { kind: 'tcpFailed' }, failure: true });
    case 'BGPOpen':
      if (delayOpenRunning) return acceptOpen(st, ev.message, true);
      return fail(st, { kind: 'unexpected', event: ev.type });
    case 'BGPHeaderErr':
    case 'BGPOpenMsgErr':
      return errorFail(st, ev.error);
    case 'NotifMsgVerErr':
      if (delayOpenRunning) return peerNotification(st, ev.message, false);
      return peerNotification(st, ev.message, true);
    case 'NotifMsg':
      return peerNotification(st, ev.message, true);
    default:
      return fail(st, { kind: 'unexpected', event: ev.type });
  }
}

/**
 * What OpenSent, OpenConfirm and Established do alike once a connection is
 * up (§8.2.2): starts and new connections ignored, stops, hold timer expiry,
 * header and OPEN errors, collision dumps. Undefined for the rest.
 */
function connectedCommon(st: Step, ev: FsmEvent): Transition | undefined {
  switch (ev.type) {
    case 'ManualStart':
    case 'AutomaticStart':
    case 'ManualStart_with_PassiveTcpEstablishment':
    case 'AutomaticStart_with_PassiveTcpEstablishment':
    case 'TcpConnection_Valid':
    case 'TcpConnection_Acknowledged':
    case 'TcpConnectionConfirmed':
      return st.done();
    case 'ManualStop':
      return toIdle(st, { reason: { kind: 'manualStop' }, notify: ev.notification ?? Notify.cease('ADMINISTRATIVE_SHUTDOWN'), failure: false, manual: true });
    case 'AutomaticStop':
      return automaticStop(st, ev);
    case 'SendHoldTimer_Expires':
      return sendHoldExpired(st);
    case 'HoldTimer_Expires':
      return toIdle(st, { reason: { kind: 'holdTimerExpired' }, notify: Notify.holdTimerExpired(), failure: true });
    case 'BGPHeaderErr':
    case 'BGPOpenMsgErr':
      return errorFail(st, ev.error);
    case 'OpenCollisionDump':
      return toIdle(st, { reason: { kind: 'collision' }, notify: Notify.cease('CONNECTION_COLLISION_RESOLUTION'), failure: true });
    default:
      return undefined;
  }
}

/** What OpenSent and OpenConfirm do alike (§8.2.2); undefined for the events each handles its own way. */
function openPhase(st: Step, ev: FsmEvent): Transition | undefined {
  switch (ev.type) {
    case 'NotifMsgVerErr':
      return peerNotification(st, ev.message, false);
    case 'NotifMsg':
      // Never answer a NOTIFICATION with one.
      return peerNotification(st, ev.message, true);
    default:
      return connectedCommon(st, ev);
  }
}

function openSent(st: Step, ev: FsmEvent): Transition {
  switch (ev.type) {
    case 'TcpConnectionFails':
      // §8.2.2: back to Active to wait for the peer.
      st.emit({ type: 'disconnect' }).set({ connected: false, sentOpen: undefined }).stop('Hold');
      st.start('ConnectRetry', st.fsm.config.connectRetryTime);
      st.emit({ type: 'attemptFailed', reason: { kind: 'tcpFailed' } });
      return st.goto('Active').done();
    case 'BGPOpen':
      return acceptOpen(st, ev.message, false);
    default:
      return openPhase(st, ev) ?? fsmError(st, ev.type);
  }
}

function openConfirm(st: Step, ev: FsmEvent): Transition {
  switch (ev.type) {
    case 'KeepaliveTimer_Expires':
      return st.send({ type: 'keepalive' }).start('Keepalive', st.fsm.negotiated!.keepaliveTime).done();
    case 'TcpConnectionFails':
      return fail(st, { kind: 'tcpFailed' });
    case 'KeepAliveMsg': {
      const n = st.fsm.negotiated!;
      if (n.holdTime > 0) st.start('Hold', n.holdTime);
      else st.stop('Hold');
      st.set({ establishedAt: st.now, restarting: false });
      st.goto('Established');
      return st.emit({ type: 'sessionUp', negotiated: n }).done();
    }
    default:
      return openPhase(st, ev) ?? fsmError(st, ev.type);
  }
}

function established(st: Step, ev: FsmEvent): Transition {
  const n = st.fsm.negotiated!;
  // Hold time > 0: entering Established started Hold, and only its expiry (which leaves) stops it.
  const heard = () => {
    if (n.holdTime > 0) st.restart('Hold', n.holdTime);
  };
  switch (ev.type) {
    case 'KeepaliveTimer_Expires':
      return st.send({ type: 'keepalive' }).start('Keepalive', n.keepaliveTime).done();
    case 'TcpConnectionFails':
      return fail(st, { kind: 'tcpFailed' });
    case 'NotifMsgVerErr':
    case 'NotifMsg':
      return peerNotification(st, ev.message, true);
    case 'KeepAliveMsg':
      heard();
      return st.done();
    case 'UpdateMsg':
      heard();
      return st.emit({ type: 'update', message: ev.message }).done();
    case 'RouteRefresh':
      heard();
      // RFC 2918: only meaningful if both sides advertised it.
      if (!n.routeRefresh) return st.done();
      return st.emit({ type: 'routeRefresh', message: ev.message }).done();
    case 'UpdateMsgErr':
      return errorFail(st, ev.error);
    default:
      return connectedCommon(st, ev) ?? fsmError(st, ev.type);
  }
}

/** Maps a decoded NOTIFICATION to its §8.1 event. */
function notificationEvent(message: NotificationMessage): FsmEvent {
  return message.code === ErrorCode.OPEN_MESSAGE && message.subcode === OpenSubcode.UNSUPPORTED_VERSION
    ? { type: 'NotifMsgVerErr', message }
    : { type: 'NotifMsg', message };
}

/** Maps a decoded message to its §8.1 event. */
export function messageEvent(m: Message): FsmEvent {
  switch (m.type) {
    case 'open':
      return { type: 'BGPOpen', message: m };
    case 'keepalive':
      return { type: 'KeepAliveMsg' };
    case 'update':
      return { type: 'UpdateMsg', message: m };
    case 'notification':
      return notificationEvent(m);
    case 'routeRefresh':
      return { type: 'RouteRefresh', message: m };
  }
}

/** Maps a codec error to its §8.1 event by NOTIFICATION code. */
export function errorEvent(error: BgpError): FsmEvent {
  if (error.code === ErrorCode.MESSAGE_HEADER) return { type: 'BGPHeaderErr', error };
  if (error.code === ErrorCode.OPEN_MESSAGE) return { type: 'BGPOpenMsgErr', error };
  return { type: 'UpdateMsgErr', error };
}
