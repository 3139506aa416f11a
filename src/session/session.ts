import { type AfiSafi, type NotificationMessage, type OpenMessage, type CeaseSubcode, endOfRib, isEndOfRib } from '../wire/index.js';
import { createFsm, transition, type Fsm } from './fsm.js';
import { GR_NONE, grEndOfRib, grSessionDown, grSessionUp, grTimerExpired, type GrAction, type GrState } from './graceful.js';
import { parseBgpId, peerAsOf } from './open.js';
import { validateSessionConfig, type FsmAction, type FsmEvent, type PeerTimerName, type SessionConfig, type TimerName } from './types.js';

/** One TCP connection's FSM. `initiator` says who opened the TCP connection (for §6.8). */
export interface ConnSlot {
  readonly id: number;
  readonly initiator: 'local' | 'remote';
  readonly fsm: Fsm;
}

/**
 * A peer as RFC 4271 §6.8 sees it: up to two connections while a collision is
 * unresolved, else one. The first slot is the primary: it owns connect-retry
 * and automatic restart. Graceful-restart state lives here because it spans
 * connections.
 */
export interface PeerSession {
  readonly config: SessionConfig;
  readonly conns: readonly ConnSlot[];
  readonly nextId: number;
  readonly gr: GrState;
  /** We restarted and have not yet had a session up since (RFC 4724 R bit). */
  readonly restarting: boolean;
}

export type PeerEvent =
  | { readonly type: 'start'; readonly passive?: boolean }
  | { readonly type: 'stop'; readonly notification?: NotificationMessage }
  | { readonly type: 'automaticStop'; readonly subcode?: keyof typeof CeaseSubcode; readonly data?: Uint8Array; readonly restartAfter?: number }
  | { readonly type: 'conn'; readonly conn: number; readonly event: FsmEvent }
  /** The listener hands us an inbound TCP connection. */
  | { readonly type: 'incoming' }
  | { readonly type: 'peerTimer'; readonly timer: PeerTimerName }
  /** The RIB finished the initial dump of a family (RFC 4724 End-of-RIB). */
  | { readonly type: 'sendEndOfRib'; readonly family: AfiSafi };

export type PeerAction =
  | (FsmAction & { readonly conn: number })
  | GrAction
  /** Bind the inbound socket to this connection id. */
  | { readonly type: 'accept'; readonly conn: number }
  | { readonly type: 'refuse'; readonly reason: string }
  /** Forget connection `conn`: its timers and socket. */
  | { readonly type: 'release'; readonly conn: number }
  /** The peer finished its initial dump of a family. */
  | { readonly type: 'endOfRib'; readonly conn: number; readonly family: AfiSafi };

export interface PeerStep {
  readonly session: PeerSession;
  readonly actions: readonly PeerAction[];
}

/** Throws SessionConfigError naming the field when `config` is unusable. */
export function createPeerSession(config: SessionConfig, opts: { restarting?: boolean } = {}): PeerSession {
  validateSessionConfig(config);
  const restarting = opts.restarting ?? false;
  return { config, conns: [{ id: 1, initiator: 'local', fsm: createFsm(config, { restarting }) }], nextId: 2, gr: GR_NONE, restarting };
}

/** The connection that is up, if any. */
export function establishedConn(s: PeerSession): ConnSlot | undefined {
  return s.conns.find((c) => c.fsm.state === 'Established');
}

class PeerStepper {
  readonly actions: PeerAction[] = [];
  constructor(
    public s: PeerSession,
    readonly now: number,
  ) {}

  slot(id: number): ConnSlot | undefined {
    return this.s.conns.find((c) => c.id === id);
  }

  replace(slot: ConnSlot): void {
    this.s = { ...this.s, conns: this.s.conns.map((c) => (c.id === slot.id ? slot : c)) };
  }

  /** Feeds one event to one connection FSM and interprets what comes out. */
  feed(id: number, ev: FsmEvent): void {
    const slot = this.slot(id);
    if (!slot) return;
    const before = slot.fsm;
    const t = transition(before, ev, this.now);
    let initiator = slot.initiator;
    for (const a of t.actions) if (a.type === 'connect') initiator = 'local';
    // A message received once Established leaves the FSM value as it was (the hold restart is an action only).
    if (t.fsm !== before || initiator !== slot.initiator) this.replace({ ...slot, initiator, fsm: t.fsm });
    for (const a of t.actions) this.interpret(id, before, a);
    this.reap(id);
  }

  private interpret(id: number, before: Fsm, a: FsmAction): void {
    switch (a.type) {
      // The two actions of every UPDATE received (hold timer restart, the
      // update) as literals: a spread of the action union is a generic copy,
      // and was the largest self time of the per-message step.
      case 'startTimer':
        this.actions.push({ type: 'startTimer', timer: a.timer, seconds: a.seconds, conn: id });
        return;
      case 'sessionDown': {
        this.actions.push({ ...a, conn: id });
        this.gr(grSessionDown(this.s.gr, before.negotiated, a.reason, this.now));
        return;
      }
      case 'sessionUp': {
        this.actions.push({ ...a, conn: id });
        this.s = { ...this.s, restarting: false };
        this.gr(grSessionUp(this.s.gr, a.negotiated, this.s.config.gracefulRestart?.stalePathTime ?? 360));
        return;
      }
      case 'update': {
        const family = isEndOfRib(a.message);
        if (family) {
          this.actions.push({ type: 'endOfRib', conn: id, family });
          this.gr(grEndOfRib(this.s.gr, family));
          return;
        }
        this.actions.push({ type: 'update', message: a.message, conn: id });
        return;
      }
      default:
        this.actions.push({ ...a, conn: id });
    }
  }

  gr(step: { gr: GrState; actions: readonly GrAction[] }): void {
    this.s = { ...this.s, gr: step.gr };
    this.actions.push(...step.actions);
  }

  /** An Idle connection next to another one is dropped; the survivor becomes primary. */
  private reap(id: number): void {
    if (this.s.conns.length < 2) return;
    const slot = this.slot(id);
    if (!slot) return;
    // Idle, or back in Active without a connection: nothing left to resolve on it.
    const spent = slot.fsm.state === 'Idle' || (slot.fsm.state === 'Active' && !slot.fsm.connected);
    if (!spent) return;
    for (const timer of Object.keys(slot.fsm.timers) as TimerName[]) this.actions.push({ type: 'stopTimer', timer, conn: id });
    this.actions.push({ type: 'release', conn: id });
    const survivor = this.s.conns.find((c) => c.id !== id)!;
    // Refusals learnt on the dropped connection still apply to the next OPEN.
    const omissions = slot.fsm.omissions.codes.length || slot.fsm.omissions.allOptional ? slot.fsm.omissions : survivor.fsm.omissions;
    this.s = { ...this.s, conns: [{ ...survivor, fsm: { ...survivor.fsm, omissions } }] };
  }

  /** §6.8: an OPEN arrived on `id`; settle any collision before the FSM sees it. */
  open(id: number, open: OpenMessage): void {
    const x = this.slot(id)!;
    const other = this.s.conns.find((c) => c.id !== id);
    if (other && other.fsm.state === 'Established') {
      if (other.fsm.negotiated?.gracefulRestart) {
        // RFC 4724: a new connection from a GR peer means it restarted; the old session is gone.
        this.feed(other.id, { type: 'OpenCollisionDump' });
        this.feed(id, { type: 'BGPOpen', message: open });
      } else {
        this.feed(id, { type: 'OpenCollisionDump' });
      }
      return;
    }
    if (other && other.fsm.state === 'OpenConfirm') {
      const keep = collisionWinner(this.s.config, open);
      const loser = x.initiator === keep ? other : x;
      if (x.initiator === other.initiator) {
        this.feed(id, { type: 'OpenCollisionDump' });
        return;
      }
      this.feed(loser.id, { type: 'OpenCollisionDump' });
      if (loser.id !== id) this.feed(id, { type: 'BGPOpen', message: open });
      return;
    }
    this.feed(id, { type: 'BGPOpen', message: open });
  }

  incoming(): void {
    const primary = this.s.conns[0];
    if (primary.fsm.state === 'Idle') {
      this.actions.push({ type: 'refuse', reason: 'peer is idle' });
      return;
    }
    if (primary.fsm.state === 'Active' && !primary.fsm.connected) {
      this.actions.push({ type: 'accept', conn: primary.id });
      this.replace({ ...primary, initiator: 'remote' });
      this.feed(primary.id, { type: 'TcpConnectionConfirmed' });
      return;
    }
    if (this.s.conns.length >= 2) {
      this.actions.push({ type: 'refuse', reason: 'already two connections to this peer' });
      return;
    }
    const id = this.s.nextId;
    const fsm: Fsm = { ...createFsm(this.s.config, { restarting: this.s.restarting, omissions: primary.fsm.omissions }), state: 'Active' };
    this.s = { ...this.s, nextId: id + 1, conns: [...this.s.conns, { id, initiator: 'remote', fsm }] };
    this.actions.push({ type: 'accept', conn: id });
    this.feed(id, { type: 'TcpConnectionConfirmed' });
  }
}

/**
 * §6.8: the connection opened by the speaker with the higher BGP identifier
 * stays (RFC 6286: on equal identifiers, the higher AS). Returns its initiator.
 */
export function collisionWinner(cfg: SessionConfig, peerOpen: OpenMessage): 'local' | 'remote' {
  const ours = parseBgpId(cfg.localId) ?? 0;
  const theirs = parseBgpId(peerOpen.bgpId) ?? 0;
  if (ours !== theirs) return ours > theirs ? 'local' : 'remote';
  return cfg.localAs >= peerAsOf(peerOpen) ? 'local' : 'remote';
}

/** The pure peer step: one event in, the new session and the actions out. */
export function peerTransition(s: PeerSession, ev: PeerEvent, now: number): PeerStep {
  const p = new PeerStepper(s, now);
  switch (ev.type) {
    case 'start':
      p.feed(s.conns[0].id, { type: ev.passive ? 'ManualStart_with_PassiveTcpEstablishment' : 'ManualStart' });
      break;
    case 'stop':
      for (const c of [...s.conns].reverse()) p.feed(c.id, { type: 'ManualStop', notification: ev.notification });
      break;
    case 'automaticStop':
      for (const c of [...s.conns].reverse()) p.feed(c.id, { type: 'AutomaticStop', subcode: ev.subcode, data: ev.data, restartAfter: ev.restartAfter });
      break;
    case 'conn':
      if (ev.event.type === 'BGPOpen' && p.slot(ev.conn)) p.open(ev.conn, ev.event.message);
      else p.feed(ev.conn, ev.event);
      break;
    case 'incoming':
      p.incoming();
      break;
    case 'peerTimer':
      p.gr(grTimerExpired(s.gr, ev.timer, now));
      break;
    case 'sendEndOfRib': {
      const up = establishedConn(s);
      if (up) p.actions.push({ type: 'send', conn: up.id, message: endOfRib(ev.family.afi, ev.family.safi) });
      break;
    }
  }
  return { session: p.s, actions: p.actions };
}
