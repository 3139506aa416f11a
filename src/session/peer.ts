import { connect as netConnect, type Socket } from 'node:net';
import {
  type CeaseSubcode,
  type BgpError,
  type AfiSafi,
  type Message,
  type NotificationMessage,
  type RouteRefreshMessage,
  type UpdateMessage,
  Notify,
} from '../wire/index.js';
import { realScheduler, type Scheduler } from './clock.js';
import { BgpConnection, type Codec, type ConnectionHandlers, type MessageStats, type UpdateRun } from './connection.js';
import { errorEvent, messageEvent } from './fsm.js';
import type { GrAction } from './graceful.js';
import type { Negotiated } from './negotiate.js';
import { createPeerSession, establishedConn, peerTransition, type PeerAction, type PeerEvent, type PeerSession } from './session.js';
import { connectSecured, needsSocketOptions } from './sockopt.js';
import { assertTransportSupported, type TransportOptions } from './transport.js';
import type { DownReason, FsmEvent, SessionConfig, StateName, TimerName } from './types.js';

/** Node's setTimeout bound. */
const MAX_TIMER_MS = 0x7fffffff;

export interface DialOptions {
  readonly host: string;
  readonly port: number;
  readonly localAddress?: string;
  readonly localPort?: number;
}

/** Hooks for the layers above; the session decides nothing about routes. */
export interface PeerHooks {
  onUpdate?(msg: UpdateMessage): void;
  onRouteRefresh?(msg: RouteRefreshMessage): void;
  onEndOfRib?(family: AfiSafi): void;
  /** Graceful restart asks the RIB to mark, purge or flush this peer's routes. */
  onRib?(action: Exclude<GrAction, { type: 'startPeerTimer' | 'stopPeerTimer' }>): void;
  onUp?(negotiated: Negotiated): void;
  onDown?(reason: DownReason): void;
  onStateChange?(from: StateName, to: StateName): void;
  /** The established connection can take more UPDATEs. */
  onDrain?(): void;
  /** A NOTIFICATION went out (ours, or the codec's answer to bad input) or came in. */
  onNotification?(direction: 'sent' | 'received', msg: NotificationMessage): void;
  /** Our outgoing connection failed before it was established (ECONNREFUSED, EADDRNOTAVAIL on bind…). */
  onConnectError?(err: Error): void;
  /** A connection that never reached Established ended (the failure of one attempt; the session was not up). */
  onAttemptFailed?(reason: DownReason): void;
  log?(line: string): void;
}

export interface PeerOptions extends TransportOptions {
  readonly session: SessionConfig;
  readonly remoteAddress: string;
  readonly remotePort?: number;
  readonly localAddress?: string;
  readonly localPort?: number;
  /** We are restarting (RFC 4724 R bit in our OPEN). */
  readonly restarting?: boolean;
  /**
   * RFC 9687 send hold time, seconds: a connection whose socket takes none
   * of our bytes for this long is closed with NOTIFICATION 8 (Send Hold
   * Timer Expired). Default max(480, 2 × the negotiated hold time); 0 turns it off.
   */
  readonly sendHoldTime?: number;
  readonly scheduler?: Scheduler;
  /**
   * Opens the outgoing TCP connection; `net.connect` unless a test injects
   * one, or, with a password or TTL options, a socket that has them before
   * its SYN (`sockopt.connectSecured`).
   */
  readonly dial?: (o: DialOptions) => Socket;
  readonly codec?: Codec;
  readonly hooks?: PeerHooks;
}

const TIMER_EVENT: Record<TimerName, FsmEvent['type']> = {
  ConnectRetry: 'ConnectRetryTimer_Expires',
  Hold: 'HoldTimer_Expires',
  Keepalive: 'KeepaliveTimer_Expires',
  DelayOpen: 'DelayOpenTimer_Expires',
  IdleHold: 'IdleHoldTimer_Expires',
};

/** A connection timer's key in `Peer.timers` and the event it fires. */
interface TimerRef {
  readonly key: string;
  readonly ev: PeerEvent;
}

function timerRefOf(conn: number, timer: TimerName): TimerRef {
  return Object.freeze({ key: `${conn}:${timer}`, ev: Object.freeze({ type: 'conn', conn, event: Object.freeze({ type: TIMER_EVENT[timer] } as FsmEvent) }) });
}

/**
 * Timer refs of connection ids up to this are made once for every peer (each
 * peer numbers its connections from 1, so a reflector's hundreds of idle
 * sessions would otherwise hold hundreds of copies); a peer that has
 * reconnected past it keeps its own (`Peer.timerRefs`).
 */
const SHARED_TIMER_REF_IDS = 64;
const SHARED_TIMER_REFS: Partial<Record<TimerName, TimerRef>>[] = [];

/**
 * The imperative shell around one peer's PeerSession: real sockets, timers
 * from the injected scheduler, hooks out. Events are queued so that an action
 * causing another event (a synchronous socket error, say) is handled after
 * the current step, never inside it.
 */
export class Peer {
  private session: PeerSession;
  private readonly scheduler: Scheduler;
  private readonly conns = new Map<number, BgpConnection>();
  /**
   * Running timers by key. `fireAt` is when the armed handle fires, `deadline`
   * when the timer is due: restarting a timer to a later deadline (the hold
   * timer, at every message received) only moves `deadline`, and the handle,
   * when it fires early, re-arms for the rest. A full table is a million
   * restarts, and a clearTimeout/setTimeout pair each is measurable.
   */
  private readonly timers = new Map<string, { handle: unknown; fireAt: number; deadline: number; ev: PeerEvent }>();
  private readonly queue: PeerEvent[] = [];
  /**
   * Per connection and timer: its key in `timers` and the event it fires.
   * The hold timer restarts at every message received, so a table is a
   * million restarts; building the key string and the event each time
   * showed in the receive profile. A list, not a Map: a peer has one or
   * two connections, and an idle session should cost little. Only for
   * connection ids past SHARED_TIMER_REF_IDS; below, they are shared.
   */
  private timerRefs?: { readonly conn: number; readonly refs: Partial<Record<TimerName, TimerRef>> }[];
  private running = false;
  /** The time of the step whose actions are being applied: the timers it starts count from it (one clock read per message received). */
  private stepAt = 0;
  private disposed = false;
  /** Sockets opened or accepted and not yet closed (one or two: a list, where a Set costs an idle session ~150 bytes). */
  private sockets: Socket[] = [];
  /**
   * Send hold watch per blocked connection: since when no write progressed,
   * and the progress count seen then. Made on the first block: an idle
   * session (a reflector's hundreds of clients) never needs one.
   */
  private sendHold?: Map<number, { handle: unknown; since: number; progress: number }>;
  private readonly hooks: PeerHooks;
  /** Messages in and out over every connection this peer has had. */
  readonly stats: MessageStats = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 };
  /** When the peer last answered (its OPEN reached us: OpenConfirm or Established), or when this shell was made. */
  private heardAt: number;

  constructor(readonly options: PeerOptions) {
    assertTransportSupported(options, options.remoteAddress);
    this.session = createPeerSession(options.session, { restarting: options.restarting });
    this.scheduler = options.scheduler ?? realScheduler;
    this.hooks = options.hooks ?? {};
    this.heardAt = this.scheduler.now();
  }

  /** Scheduler time since the peer last answered (or since this shell was made); 0 while it is answering. */
  get silentFor(): number {
    const s = this.state;
    return s === 'OpenConfirm' || s === 'Established' ? 0 : this.scheduler.now() - this.heardAt;
  }

  get state(): StateName {
    return establishedConn(this.session)?.fsm.state ?? this.session.conns[0].fsm.state;
  }

  get snapshot(): PeerSession {
    return this.session;
  }

  get negotiated(): Negotiated | undefined {
    return establishedConn(this.session)?.fsm.negotiated;
  }

  /** Bytes of ours the established connection's peer has not taken yet (our queue plus the socket's buffer). */
  get queuedBytes(): number {
    const up = establishedConn(this.session);
    return up ? (this.conns.get(up.id)?.queuedBytes ?? 0) : 0;
  }

  /**
   * AutomaticStop (RFC 4271 event 8): Cease with `subcode` and `data` to the
   * peer, then reconnect after `restartAfter` seconds (e.g. a max-prefix limit).
   */
  automaticStop(subcode: keyof typeof CeaseSubcode, data?: Uint8Array, restartAfter?: number): void {
    this.dispatch({ type: 'automaticStop', subcode, data, restartAfter });
  }

  /** The established connection can take an UPDATE without queueing. */
  get writable(): boolean {
    const up = establishedConn(this.session);
    return up ? (this.conns.get(up.id)?.writable ?? false) : false;
  }

  start(passive = false): void {
    this.dispatch({ type: 'start', passive });
  }

  /** ManualStop; `notification` replaces the default Cease 6/2. */
  stop(notification?: NotificationMessage): void {
    this.dispatch({ type: 'stop', notification });
  }

  /**
   * Drops every connection without a NOTIFICATION and cancels every timer;
   * the peer is unusable afterwards. A peer that negotiated graceful restart
   * sees a TCP failure and keeps our routes as stale.
   */
  dispose(): void {
    this.disposed = true;
    this.queue.length = 0;
    for (const k of [...this.timers.keys()]) this.clearTimer(k);
    for (const id of [...(this.sendHold?.keys() ?? [])]) this.stopSendHold(id);
    for (const c of this.conns.values()) c.destroy();
    this.conns.clear();
    for (const sock of this.sockets) sock.destroy();
  }

  /** Resolves once every socket this peer opened or accepted has closed (or after `timeoutMs`). */
  async closed(timeoutMs = 2000): Promise<void> {
    const pending = [...this.sockets];
    if (pending.length === 0) return;
    await Promise.race([
      Promise.all(
        pending.map(
          (x) =>
            new Promise<void>((resolve) => {
              if (!this.sockets.includes(x)) resolve();
              else x.once('close', () => resolve());
            }),
        ),
      ),
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, timeoutMs);
        t.unref?.();
      }),
    ]);
  }

  /** Local and remote address of the established connection. */
  get endpoints(): { localAddress: string; localPort: number; remoteAddress: string; remotePort: number } | undefined {
    const up = establishedConn(this.session);
    const sock = up ? this.conns.get(up.id)?.socket : undefined;
    if (!sock || !sock.localAddress || !sock.remoteAddress) return undefined;
    return { localAddress: sock.localAddress, localPort: sock.localPort ?? 0, remoteAddress: sock.remoteAddress, remotePort: sock.remotePort ?? 0 };
  }

  /** Sends runs of whole pre-encoded UPDATEs (`joinUpdates`) on the established session; false if there is none. */
  sendUpdateRuns(runs: readonly UpdateRun[]): boolean {
    const up = establishedConn(this.session);
    const c = up ? this.conns.get(up.id) : undefined;
    return c?.sendUpdateRuns(runs) ?? false;
  }

  /** Sends an UPDATE (or ROUTE-REFRESH) on the established session; false if there is none. */
  send(msg: UpdateMessage | RouteRefreshMessage): boolean {
    const up = establishedConn(this.session);
    if (!up) return false;
    return this.conns.get(up.id)?.send(msg) ?? false;
  }

  sendEndOfRib(family: AfiSafi): void {
    this.dispatch({ type: 'sendEndOfRib', family });
  }

  /** An inbound connection from the listener. Returns false (and closes it) when refused. */
  accept(socket: Socket): boolean {
    if (this.disposed) {
      socket.destroy();
      return false;
    }
    const r = peerTransition(this.session, { type: 'incoming' }, (this.stepAt = this.scheduler.now()));
    const accept = r.actions.find((a) => a.type === 'accept');
    if (!accept || accept.type !== 'accept') {
      this.session = r.session;
      const refuse = r.actions.find((a) => a.type === 'refuse');
      this.log(`refused connection from ${socket.remoteAddress}: ${refuse && refuse.type === 'refuse' ? refuse.reason : 'no slot'}`);
      socket.destroy();
      return false;
    }
    this.bind(accept.conn, socket);
    this.session = r.session;
    this.running = true;
    try {
      for (const a of r.actions) this.apply(a);
    } finally {
      this.running = false;
    }
    this.drain();
    return true;
  }

  private log(line: string): void {
    this.hooks.log?.(`[${this.options.remoteAddress}] ${line}`);
  }

  private dispatch(ev: PeerEvent): void {
    if (this.disposed) return;
    if (!this.running && this.queue.length === 0) {
      // Nothing queued (every message received, in practice): step at once.
      this.running = true;
      try {
        this.step(ev);
      } finally {
        this.running = false;
      }
      if (this.queue.length > 0) this.drain();
      return;
    }
    this.queue.push(ev);
    this.drain();
  }

  private step(ev: PeerEvent): void {
    const r = peerTransition(this.session, ev, (this.stepAt = this.scheduler.now()));
    this.session = r.session;
    for (const a of r.actions) this.apply(a);
  }

  private drain(): void {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        this.step(this.queue.shift()!);
      }
    } finally {
      this.running = false;
    }
  }

  private connEvent(id: number, c: BgpConnection, event: FsmEvent): void {
    // Late events from a socket we already replaced are noise.
    if (this.conns.get(id) !== c) return;
    this.dispatch({ type: 'conn', conn: id, event });
  }

  /**
   * One connection's handlers: the peer, the connection's id and the
   * connection, the work in methods on the prototype, where five closures
   * (and a once-listener for the socket's close) cost an idle session ~0.5 KB.
   * A class expression in the class body, so that it reaches the shell's
   * private members.
   */
  private static readonly ConnHandlers = class implements ConnectionHandlers {
    c: BgpConnection | undefined;
    constructor(
      private readonly peer: Peer,
      private readonly id: number,
      private readonly socket: Socket,
    ) {}
    /** This connection is still the one bound to its id (not one already replaced). */
    private get current(): boolean {
      return this.c !== undefined && this.peer.conns.get(this.id) === this.c;
    }
    onMessage(m: Message): void {
      if (m.type === 'notification' && this.current) this.peer.hooks.onNotification?.('received', m);
      this.peer.connEvent(this.id, this.c!, messageEvent(m));
    }
    onError(err: BgpError): void {
      if (this.current) this.peer.hooks.onNotification?.('sent', Notify.of(err));
      this.peer.connEvent(this.id, this.c!, errorEvent(err));
    }
    onClose(): void {
      this.peer.sockets = this.peer.sockets.filter((x) => x !== this.socket);
      if (!this.current) return;
      this.peer.conns.delete(this.id);
      this.peer.dispatch({ type: 'conn', conn: this.id, event: { type: 'TcpConnectionFails' } });
    }
    onDrain(): void {
      this.peer.stopSendHold(this.id);
      if (establishedConn(this.peer.session)?.id === this.id) this.peer.hooks.onDrain?.();
    }
    onBlocked(): void {
      if (this.current) this.peer.watchSendHold(this.id, this.c!);
    }
  };

  private bind(id: number, socket: Socket, outgoing = false): BgpConnection {
    this.conns.get(id)?.destroy();
    // Exact size (a push, or a spread, reserves 17 slots): one or two sockets, for the session's life.
    this.sockets = this.sockets.length === 0 ? [socket] : this.sockets.concat(socket);
    let acknowledged = !outgoing;
    const handlers = new Peer.ConnHandlers(this, id, socket);
    const c: BgpConnection = new BgpConnection(socket, handlers, { codec: this.options.codec, stats: this.stats });
    handlers.c = c;
    if (outgoing) {
      socket.once('connect', () => {
        acknowledged = true;
        this.connEvent(id, c, { type: 'TcpConnection_Acknowledged' });
      });
      socket.once('error', (e) => {
        if (acknowledged) return;
        this.log(`connect failed: ${e.message}`);
        this.hooks.onConnectError?.(e);
      });
    }
    this.conns.set(id, c);
    return c;
  }

  /** RFC 9687: max(8 minutes, 2 × hold time) unless configured. */
  private sendHoldSeconds(id: number): number {
    if (this.options.sendHoldTime !== undefined) return this.options.sendHoldTime;
    const hold = this.session.conns.find((x) => x.id === id)?.fsm.negotiated?.holdTime ?? this.options.session.holdTime;
    return Math.max(480, 2 * hold);
  }

  /**
   * The socket of connection `id` stopped taking bytes: check, a few times
   * per send hold time, whether the kernel took any of our writes since; a
   * connection without progress for the whole send hold time gets
   * SendHoldTimer_Expires. Stops when the queue drains or the connection goes.
   */
  private watchSendHold(id: number, c: BgpConnection): void {
    const limit = this.sendHoldSeconds(id) * 1000;
    const watches = (this.sendHold ??= new Map());
    if (limit <= 0 || watches.has(id)) return;
    const w = { handle: undefined as unknown, since: this.scheduler.now(), progress: c.progress };
    const check = (): void => {
      if (watches.get(id) !== w) return;
      const now = this.scheduler.now();
      if (this.conns.get(id) !== c || !c.isOpen || c.queuedBytes === 0) {
        watches.delete(id);
        return;
      }
      if (c.progress !== w.progress) {
        w.progress = c.progress;
        w.since = now;
      }
      const idle = now - w.since;
      if (idle >= limit) {
        watches.delete(id);
        this.log(`connection ${id}: nothing written for ${Math.round(idle / 1000)} s with ${c.queuedBytes} bytes queued: send hold timer expired`);
        this.connEvent(id, c, { type: 'SendHoldTimer_Expires' });
        return;
      }
      w.handle = this.scheduler.setTimeout(check, Math.max(1, Math.min(limit / 4, limit - idle)));
    };
    watches.set(id, w);
    w.handle = this.scheduler.setTimeout(check, Math.max(1, limit / 4));
  }

  private stopSendHold(id: number): void {
    const w = this.sendHold?.get(id);
    if (w === undefined) return;
    this.scheduler.clearTimeout(w.handle);
    this.sendHold!.delete(id);
  }

  private timerRef(conn: number, timer: TimerName): TimerRef {
    if (conn <= SHARED_TIMER_REF_IDS) return ((SHARED_TIMER_REFS[conn] ??= {})[timer] ??= timerRefOf(conn, timer));
    const list = (this.timerRefs ??= []);
    let refs = list.find((r) => r.conn === conn)?.refs;
    if (refs === undefined) list.push({ conn, refs: (refs = {}) });
    return (refs[timer] ??= timerRefOf(conn, timer));
  }

  private setTimer(key: string, seconds: number, ev: PeerEvent): void {
    const deadline = this.stepAt + seconds * 1000;
    const t = this.timers.get(key);
    if (t !== undefined && t.fireAt <= deadline) {
      t.deadline = deadline;
      t.ev = ev;
      return;
    }
    if (t !== undefined) this.scheduler.clearTimeout(t.handle);
    this.arm(key, deadline, ev);
  }

  private arm(key: string, deadline: number, ev: PeerEvent): void {
    const fireAt = deadline;
    const t = { handle: undefined as unknown, fireAt, deadline, ev };
    t.handle = this.scheduler.setTimeout(
      () => {
        if (this.timers.get(key) !== t) return;
        const rest = t.deadline - this.scheduler.now();
        if (rest > 0) {
          // Restarted meanwhile: wait for the rest.
          this.arm(key, t.deadline, t.ev);
          return;
        }
        this.timers.delete(key);
        this.dispatch(t.ev);
      },
      // setTimeout takes at most 2^31-1 ms (a longer delay fires at once); a long-lived stale time of up to 2^24 s re-arms for the rest.
      Math.min(MAX_TIMER_MS, Math.max(0, fireAt - this.scheduler.now())),
    );
    this.timers.set(key, t);
  }

  private clearTimer(key: string): void {
    const t = this.timers.get(key);
    if (t !== undefined) this.scheduler.clearTimeout(t.handle);
    this.timers.delete(key);
  }

  private apply(a: PeerAction): void {
    switch (a.type) {
      case 'connect': {
        const o = this.options;
        const dial =
          o.dial ??
          (needsSocketOptions(o)
            ? (d: DialOptions) => connectSecured({ ...d, password: o.password, ttlSecurity: o.ttlSecurity, multihopTtl: o.multihopTtl })
            : (d: DialOptions) => netConnect(d));
        let socket: Socket;
        try {
          socket = dial({ host: o.remoteAddress, port: o.remotePort ?? 179, localAddress: o.localAddress, localPort: o.localPort });
        } catch (e) {
          // The socket could not be made (a socket option refused): a failed attempt, retried as any.
          this.log(`connect failed: ${(e as Error).message}`);
          this.dispatch({ type: 'conn', conn: a.conn, event: { type: 'TcpConnectionFails' } });
          return;
        }
        this.bind(a.conn, socket, true);
        return;
      }
      case 'disconnect': {
        const c = this.conns.get(a.conn);
        this.conns.delete(a.conn);
        c?.close();
        return;
      }
      case 'release': {
        for (const k of [...this.timers.keys()]) if (k.startsWith(`${a.conn}:`)) this.clearTimer(k);
        this.timerRefs = this.timerRefs?.filter((r) => r.conn !== a.conn);
        this.stopSendHold(a.conn);
        const c = this.conns.get(a.conn);
        this.conns.delete(a.conn);
        c?.close();
        return;
      }
      case 'send': {
        const c = this.conns.get(a.conn);
        if (a.message.type === 'notification' && c?.isOpen) this.hooks.onNotification?.('sent', a.message);
        try {
          c?.send(a.message);
        } catch (e) {
          // An unencodable message is our bug; drop the connection rather than the process.
          this.log(`cannot send ${a.message.type}: ${String(e)}`);
          c?.destroy();
        }
        return;
      }
      case 'startTimer': {
        const t = this.timerRef(a.conn, a.timer);
        this.setTimer(t.key, a.seconds, t.ev);
        return;
      }
      case 'stopTimer':
        this.clearTimer(this.timerRef(a.conn, a.timer).key);
        return;
      case 'startPeerTimer':
        this.setTimer(`peer:${a.timer}`, a.seconds, { type: 'peerTimer', timer: a.timer });
        return;
      case 'stopPeerTimer':
        this.clearTimer(`peer:${a.timer}`);
        return;
      case 'negotiated':
        this.conns.get(a.conn)?.setContexts(a.negotiated.decode, a.negotiated.encode);
        return;
      case 'stateChange':
        this.log(`connection ${a.conn}: ${a.from} → ${a.to}`);
        if (a.to === 'OpenConfirm' || a.to === 'Established' || a.from === 'OpenConfirm' || a.from === 'Established') this.heardAt = this.scheduler.now();
        this.hooks.onStateChange?.(a.from, a.to);
        return;
      case 'sessionUp':
        this.log(`session up (AS ${a.negotiated.peerAs}, hold ${a.negotiated.holdTime} s)`);
        this.hooks.onUp?.(a.negotiated);
        return;
      case 'sessionDown':
        this.log(`session down: ${describeReason(a.reason)}`);
        this.hooks.onDown?.(a.reason);
        return;
      case 'attemptFailed':
        this.log(`connection ${a.conn} attempt failed: ${describeReason(a.reason)}`);
        this.hooks.onAttemptFailed?.(a.reason);
        return;
      case 'update':
        this.hooks.onUpdate?.(a.message);
        return;
      case 'routeRefresh':
        this.hooks.onRouteRefresh?.(a.message);
        return;
      case 'endOfRib':
        this.hooks.onEndOfRib?.(a.family);
        return;
      case 'markStale':
      case 'longLivedStale':
      case 'purgeStale':
      case 'flushRoutes':
        this.hooks.onRib?.(a);
        return;
      case 'accept':
      case 'refuse':
        return;
    }
  }
}

export function describeReason(r: DownReason): string {
  switch (r.kind) {
    case 'notificationReceived':
      return `NOTIFICATION ${r.code}/${r.subcode} received`;
    case 'notificationSent':
      return `NOTIFICATION ${r.code}/${r.subcode} sent (${r.message})`;
    case 'sendHoldTimerExpired':
      return 'send hold timer expired (the peer stopped reading)';
    case 'unexpected':
      return `unexpected ${r.event}`;
    default:
      return r.kind;
  }
}
