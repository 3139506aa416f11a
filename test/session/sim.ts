/**
 * Simulation harness: a virtual clock and in-memory links carrying typed
 * messages between PeerSessions. No bytes, no sockets, no real time. Links
 * can be cut (both ends see the TCP connection fail), stalled (bytes stop
 * flowing but TCP stays up), or refuse new connections.
 */
import type { Scheduler } from '../../src/session/clock.js';
import { messageEvent } from '../../src/session/fsm.js';
import { capabilityTlv, openCapabilities, capabilityCode } from '../../src/session/open.js';
import { createPeerSession, peerTransition, type PeerAction, type PeerEvent, type PeerSession } from '../../src/session/session.js';
import type { FsmEvent, SessionConfig } from '../../src/session/types.js';
import type { Message } from '../../src/wire/types.js';

export class VirtualClock implements Scheduler {
  private t = 0;
  private seq = 0;
  private queue: { at: number; seq: number; fn: () => void; id: number }[] = [];

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = ++this.seq;
    this.queue.push({ at: this.t + Math.max(0, ms), seq: id, fn, id });
    this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.queue = this.queue.filter((e) => e.id !== handle);
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Runs everything due within `ms`, in time then FIFO order. */
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      const next = this.queue[0];
      if (!next || next.at > until) break;
      this.queue.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = until;
  }

  /** Advances in small steps until `pred` holds; returns whether it did within `maxMs`. */
  runUntil(pred: () => boolean, maxMs: number, stepMs = 10): boolean {
    for (let waited = 0; waited <= maxMs; waited += stepMs) {
      if (pred()) return true;
      this.advance(stepMs);
    }
    return pred();
  }
}

interface Endpoint {
  readonly node: string;
  readonly peer: string;
  conn: number;
}

interface Pipe {
  readonly a: Endpoint;
  readonly b: Endpoint;
  open: boolean;
  /** Messages held by a stall: destination and message. */
  held?: { to: Endpoint; message: Message }[];
}

export interface LinkFaults {
  /** New connections are refused. */
  down?: boolean;
  /** Messages are held back (TCP stays up, nothing lost); released in order when the stall ends. */
  stall?: boolean;
  /** Messages are silently lost (a broken middlebox; TCP itself never loses data). */
  drop?: boolean;
}

export interface LogEntry {
  readonly at: number;
  readonly node: string;
  readonly peer: string;
  readonly action: PeerAction;
}

/** Wraps a node's inbound OPEN handling, e.g. to play an old speaker. */
export type OpenFilter = (msg: Message & { type: 'open' }) => Message | undefined;

export class Sim {
  readonly clock = new VirtualClock();
  readonly sessions = new Map<string, PeerSession>();
  readonly log: LogEntry[] = [];
  readonly sent: { at: number; from: string; to: string; message: Message }[] = [];
  private timers = new Map<string, unknown>();
  private pipes = new Map<string, Pipe>();
  private faults = new Map<string, LinkFaults>();
  private openFilters = new Map<string, OpenFilter>();
  /** When set, a node's RIB sends End-of-RIB for these families as soon as a session comes up. */
  readonly eorOnUp = new Map<string, { afi: number; safi: number }[]>();
  latencyMs = 1;

  private key(node: string, peer: string): string {
    return `${node}>${peer}`;
  }

  /** Configures `node`'s session toward `peer`. */
  add(node: string, peer: string, config: SessionConfig, opts: { restarting?: boolean } = {}): void {
    this.sessions.set(this.key(node, peer), createPeerSession(config, opts));
  }

  session(node: string, peer: string): PeerSession {
    return this.sessions.get(this.key(node, peer))!;
  }

  state(node: string, peer: string): string {
    return this.session(node, peer)
      .conns.map((c) => c.fsm.state)
      .join('+');
  }

  setFaults(a: string, b: string, f: LinkFaults): void {
    this.faults.set([a, b].sort().join('|'), f);
    if (f.stall) return;
    // The stall is over: what TCP buffered arrives, in order.
    for (const p of new Set(this.pipes.values())) {
      if (!p.held || [p.a.node, p.b.node].sort().join('|') !== [a, b].sort().join('|')) continue;
      const held = p.held;
      p.held = undefined;
      for (const h of held) this.later(() => this.receive(h.to, h.message, p));
    }
  }

  private faultsOf(a: string, b: string): LinkFaults {
    return this.faults.get([a, b].sort().join('|')) ?? {};
  }

  /** Makes `node` answer an inbound OPEN by `filter` (return a NOTIFICATION to refuse it). */
  filterOpens(node: string, filter: OpenFilter): void {
    this.openFilters.set(node, filter);
  }

  /** Drops every connection between a and b: both ends see TcpConnectionFails. */
  cut(a: string, b: string): void {
    for (const p of new Set(this.pipes.values())) {
      const ends = [p.a.node, p.b.node].sort().join('|');
      if (p.open && ends === [a, b].sort().join('|')) this.closePipe(p, true);
    }
  }

  /** Replaces a node's session (a restart), forgetting its connections and timers. */
  restart(node: string, peer: string, config: SessionConfig, opts: { restarting?: boolean } = {}): void {
    for (const [k, h] of this.timers)
      if (k.startsWith(`${node}>${peer}#`)) {
        this.clock.clearTimeout(h);
        this.timers.delete(k);
      }
    for (const p of new Set(this.pipes.values())) {
      const mine = (e: Endpoint) => e.node === node && e.peer === peer;
      if (p.open && (mine(p.a) || mine(p.b))) {
        p.open = false;
        this.unbind(p);
        const other = mine(p.a) ? p.b : p.a;
        this.later(() => this.fsm(other, { type: 'TcpConnectionFails' }, p));
      }
    }
    this.add(node, peer, config, opts);
  }

  step(node: string, peer: string, ev: PeerEvent): PeerAction[] {
    const k = this.key(node, peer);
    const s = this.sessions.get(k)!;
    const r = peerTransition(s, ev, this.clock.now());
    this.sessions.set(k, r.session);
    for (const a of r.actions) {
      this.log.push({ at: this.clock.now(), node, peer, action: a });
      this.apply(node, peer, a);
    }
    return [...r.actions];
  }

  start(node: string, peer: string): void {
    this.step(node, peer, { type: 'start' });
  }

  private later(fn: () => void): void {
    this.clock.setTimeout(fn, this.latencyMs);
  }

  private epKey(e: Endpoint): string {
    return `${e.node}>${e.peer}@${e.conn}`;
  }

  private unbind(p: Pipe): void {
    for (const e of [p.a, p.b]) if (this.pipes.get(this.epKey(e)) === p) this.pipes.delete(this.epKey(e));
  }

  private closePipe(p: Pipe, bothSee: boolean, from?: Endpoint): void {
    if (!p.open) return;
    p.open = false;
    this.unbind(p);
    for (const e of [p.a, p.b]) {
      if (!bothSee && e === from) continue;
      this.later(() => this.fsm(e, { type: 'TcpConnectionFails' }, p));
    }
  }

  /** Delivers an FSM event to an endpoint if it is still attached to `p`. */
  private fsm(e: Endpoint, ev: FsmEvent, p: Pipe): void {
    if (p.open && this.pipes.get(this.epKey(e)) !== p) return;
    if (!p.open && ev.type !== 'TcpConnectionFails') return;
    if (!p.open) {
      // Only the end still believing in this connection hears of its failure.
      const s = this.session(e.node, e.peer);
      if (!s.conns.some((c) => c.id === e.conn && c.fsm.connected)) return;
    }
    this.step(e.node, e.peer, { type: 'conn', conn: e.conn, event: ev });
  }

  private timerKey(node: string, peer: string, conn: number | 'peer', timer: string): string {
    return `${node}>${peer}#${conn}#${timer}`;
  }

  private setTimer(key: string, seconds: number, fire: () => void): void {
    const old = this.timers.get(key);
    if (old !== undefined) this.clock.clearTimeout(old);
    this.timers.set(
      key,
      this.clock.setTimeout(() => {
        this.timers.delete(key);
        fire();
      }, seconds * 1000),
    );
  }

  private clearTimer(key: string): void {
    const h = this.timers.get(key);
    if (h !== undefined) this.clock.clearTimeout(h);
    this.timers.delete(key);
  }

  private apply(node: string, peer: string, a: PeerAction): void {
    switch (a.type) {
      case 'connect': {
        const ep: Endpoint = { node, peer, conn: a.conn };
        const old = this.pipes.get(this.epKey(ep));
        if (old) this.closePipe(old, false, old.a.node === node ? old.a : old.b);
        this.later(() => this.dial(ep));
        return;
      }
      case 'disconnect': {
        const p = this.pipes.get(this.epKey({ node, peer, conn: a.conn }));
        if (p) this.closePipe(p, false, p.a.node === node ? p.a : p.b);
        return;
      }
      case 'send': {
        const p = this.pipes.get(this.epKey({ node, peer, conn: a.conn }));
        if (!p || !p.open) return;
        this.sent.push({ at: this.clock.now(), from: node, to: peer, message: a.message });
        const faults = this.faultsOf(node, peer);
        if (faults.drop) return;
        const to = p.a.node === node ? p.b : p.a;
        if (faults.stall || p.held) {
          (p.held ??= []).push({ to, message: a.message });
          return;
        }
        this.later(() => this.receive(to, a.message, p));
        return;
      }
      case 'startTimer':
        this.setTimer(this.timerKey(node, peer, a.conn, a.timer), a.seconds, () =>
          this.step(node, peer, { type: 'conn', conn: a.conn, event: { type: `${a.timer}Timer_Expires` } as FsmEvent }),
        );
        return;
      case 'stopTimer':
        this.clearTimer(this.timerKey(node, peer, a.conn, a.timer));
        return;
      case 'release':
        for (const k of [...this.timers.keys()]) if (k.startsWith(`${node}>${peer}#${a.conn}#`)) this.clearTimer(k);
        return;
      case 'startPeerTimer':
        this.setTimer(this.timerKey(node, peer, 'peer', a.timer), a.seconds, () => this.step(node, peer, { type: 'peerTimer', timer: a.timer }));
        return;
      case 'stopPeerTimer':
        this.clearTimer(this.timerKey(node, peer, 'peer', a.timer));
        return;
      case 'sessionUp': {
        const fams = this.eorOnUp.get(node);
        if (fams)
          this.later(() => {
            for (const family of fams) this.step(node, peer, { type: 'sendEndOfRib', family });
          });
        return;
      }
      default:
        return;
    }
  }

  /** The far end sees an inbound connection; it accepts or refuses. */
  private dial(from: Endpoint): void {
    // The dialling FSM may have moved on (retry, stop) meanwhile.
    const s = this.session(from.node, from.peer);
    const slot = s.conns.find((c) => c.id === from.conn);
    if (!slot || slot.fsm.state !== 'Connect') return;
    const failed: Pipe = { a: from, b: from, open: false };
    if (this.faultsOf(from.node, from.peer).down || !this.sessions.has(this.key(from.peer, from.node))) {
      this.later(() => this.fsm(from, { type: 'TcpConnectionFails' }, failed));
      return;
    }
    const to: Endpoint = { node: from.peer, peer: from.node, conn: 0 };
    const p: Pipe = { a: from, b: to, open: true };
    this.pipes.set(this.epKey(from), p);
    const k = this.key(to.node, to.peer);
    const r = peerTransition(this.sessions.get(k)!, { type: 'incoming' }, this.clock.now());
    const accept = r.actions.find((x) => x.type === 'accept');
    if (!accept || accept.type !== 'accept') {
      this.pipes.delete(this.epKey(from));
      p.open = false;
      for (const a of r.actions) this.log.push({ at: this.clock.now(), node: to.node, peer: to.peer, action: a });
      this.sessions.set(k, r.session);
      this.later(() => this.fsm(from, { type: 'TcpConnectionFails' }, p));
      return;
    }
    to.conn = accept.conn;
    this.pipes.set(this.epKey(to), p);
    // The dialler learns its SYN was answered before any byte arrives.
    this.later(() => this.fsm(from, { type: 'TcpConnection_Acknowledged' }, p));
    this.sessions.set(k, r.session);
    for (const a of r.actions) {
      this.log.push({ at: this.clock.now(), node: to.node, peer: to.peer, action: a });
      this.apply(to.node, to.peer, a);
    }
  }

  private receive(e: Endpoint, m: Message, p: Pipe): void {
    if (m.type === 'open') {
      const filter = this.openFilters.get(e.node);
      const answer = filter?.(m);
      if (answer) {
        if (!p.open || this.pipes.get(this.epKey(e)) !== p) return;
        // Play a speaker that refuses the OPEN outright, below our FSM.
        const from = p.a === e ? p.b : p.a;
        // Our own FSM at this end hears nothing more on this connection.
        this.pipes.delete(this.epKey(e));
        this.sent.push({ at: this.clock.now(), from: e.node, to: e.peer, message: answer });
        this.later(() => this.receive(from, answer, p));
        this.later(() => this.closePipe(p, true));
        return;
      }
    }
    this.fsm(e, messageEvent(m), p);
  }

  /** Actions of a kind logged at `node` toward `peer`. */
  actions<T extends PeerAction['type']>(node: string, peer: string, type: T): (PeerAction & { type: T })[] {
    return this.log.filter((l) => l.node === node && l.peer === peer && l.action.type === type).map((l) => l.action as PeerAction & { type: T });
  }
}

/** An old speaker: refuses an OPEN carrying any capability code in `codes` with NOTIFICATION 2/7 naming them. */
export function refuseCapabilities(codes: number[]): OpenFilter {
  return (open) => {
    const bad = openCapabilities(open).filter((c) => codes.includes(capabilityCode(c)));
    if (bad.length === 0) return undefined;
    const data = Uint8Array.from(bad.flatMap((c) => [...capabilityTlv(c)]));
    return { type: 'notification', code: 2, subcode: 7, data };
  };
}
