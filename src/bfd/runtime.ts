/**
 * The BFD sessions of one process, driven by a scheduler and a transport:
 * demultiplexes received packets (RFC 5880 §6.8.6: Your Discriminator, else
 * the source address, RFC 5881 §3), keeps one timer per session at the FSM's
 * next deadline, and reports state changes. Runs wherever the transport's
 * sockets live (the BFD worker thread, or inline); the decisions are fsm.ts's.
 */
import type { Scheduler } from '../session/index.js';
import { bfdStep, createSession, detectionTime, nextDeadline, txInterval, validateTimers, type BfdEvent, type BfdSession, type BfdTimers } from './fsm.js';
import { decodePacket, describeDiag, encodePacket, type BfdStateName } from './packet.js';

/** One session as status shows it. Times in ms. */
export interface BfdSessionStatus {
  readonly peer: string;
  readonly local?: string;
  readonly state: BfdStateName;
  readonly remoteState: BfdStateName;
  /** When `state` was entered (epoch ms). */
  readonly since: number;
  readonly localDiscr: number;
  readonly remoteDiscr: number;
  /** What we configured. */
  readonly desired: { readonly minTxMs: number; readonly minRxMs: number; readonly multiplier: number; readonly passive: boolean };
  /** Negotiated: our transmit interval and the time after which we declare the remote dead (0 until heard). */
  readonly txIntervalMs: number;
  readonly detectionTimeMs: number;
  readonly remoteMultiplier: number;
  /** Our diagnostic for the last time the session left Up/Init (code 0: never). */
  readonly lastDiag: { readonly code: number; readonly text: string };
  readonly remoteDiag: { readonly code: number; readonly text: string };
  readonly counters: { readonly stateChanges: number; readonly upTransitions: number; readonly downTransitions: number; readonly packetsIn: number; readonly packetsOut: number; readonly discarded: number };
}

export interface BfdChange {
  readonly status: BfdSessionStatus;
  /** Present on a state change. */
  readonly from?: BfdStateName;
  /** The remote said AdminDown (RFC 5882 §3.2: not a path failure, clients keep their sessions). */
  readonly remoteAdminDown?: boolean;
}

export interface BfdSessionSpec {
  readonly peer: string;
  /** Our source address; default: the kernel's choice. */
  readonly local?: string;
  /** Destination UDP port (default the transport's, 3784). */
  readonly port?: number;
  readonly timers: BfdTimers;
}

/** Where packets go and come from. `send` must not throw. */
export interface BfdTransport {
  open(peer: string, local: string | undefined, port: number | undefined): void;
  send(peer: string, bytes: Uint8Array): void;
  close(peer: string): void;
}

interface Entry {
  spec: BfdSessionSpec;
  session: BfdSession;
  since: number;
  timer: unknown;
  timerAt: number | undefined;
  counters: { stateChanges: number; upTransitions: number; downTransitions: number; packetsIn: number; packetsOut: number; discarded: number };
}

/** Canonical text of an address as a session key: IPv4-mapped IPv6 becomes IPv4, IPv6 lower-case. */
export function addressKey(a: string): string {
  const s = a.toLowerCase();
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  return m ? m[1] : s.replace(/%.*$/, '');
}

export class BfdRuntime {
  private readonly byPeer = new Map<string, Entry>();
  private readonly byDiscr = new Map<number, Entry>();
  /** Packets dropped before reaching a session (bad, or for no session). */
  discardedUnmatched = 0;
  lastDiscard: string | undefined;

  constructor(
    private readonly transport: BfdTransport,
    private readonly scheduler: Scheduler,
    private readonly onChange: (c: BfdChange) => void,
    private readonly random: () => number = Math.random,
    private readonly wallClock: () => number = Date.now,
  ) {}

  add(spec: BfdSessionSpec): void {
    const peer = addressKey(spec.peer);
    if (this.byPeer.has(peer)) throw new Error(`BFD session to ${peer} already exists`);
    const bad = validateTimers(spec.timers);
    if (bad !== undefined) throw new RangeError(`BFD session to ${peer}: ${bad}`);
    this.transport.open(peer, spec.local, spec.port);
    const e: Entry = {
      spec: { ...spec, peer },
      session: createSession(this.newDiscr(), spec.timers),
      since: this.wallClock(),
      timer: undefined,
      timerAt: undefined,
      counters: { stateChanges: 0, upTransitions: 0, downTransitions: 0, packetsIn: 0, packetsOut: 0, discarded: 0 },
    };
    this.byPeer.set(peer, e);
    this.byDiscr.set(e.session.localDiscr, e);
    this.onChange({ status: this.statusOf(e) });
    this.feed(e, { type: 'timer' });
  }

  /** New timers go through Poll/Final (no flap); a new local address reopens the socket. */
  update(spec: BfdSessionSpec): void {
    const peer = addressKey(spec.peer);
    const e = this.byPeer.get(peer);
    if (!e) return this.add(spec);
    if (e.spec.local !== spec.local || e.spec.port !== spec.port) {
      this.transport.close(peer);
      this.transport.open(peer, spec.local, spec.port);
    }
    e.spec = { ...spec, peer };
    this.feed(e, { type: 'configure', timers: spec.timers });
  }

  /** Says AdminDown once (so the remote's clients keep their sessions, RFC 5882 §3.2) and forgets the session. */
  remove(peerAddress: string): void {
    const peer = addressKey(peerAddress);
    const e = this.byPeer.get(peer);
    if (!e) return;
    this.feed(e, { type: 'adminDown' });
    this.clearTimer(e);
    this.byPeer.delete(peer);
    this.byDiscr.delete(e.session.localDiscr);
    this.transport.close(peer);
  }

  stop(): void {
    for (const peer of [...this.byPeer.keys()]) this.remove(peer);
  }

  status(): BfdSessionStatus[] {
    return [...this.byPeer.values()].map((e) => this.statusOf(e));
  }

  /** A datagram from `from` (its source address). Never throws. */
  receive(bytes: Uint8Array, from: string): void {
    const d = decodePacket(bytes);
    if (!d.ok) return this.drop(`from ${from}: ${d.reason}`);
    const p = d.packet;
    const e = p.yourDiscr !== 0 ? this.byDiscr.get(p.yourDiscr) : this.byPeer.get(addressKey(from));
    if (!e) return this.drop(`from ${from}: no session ${p.yourDiscr !== 0 ? `with discriminator ${p.yourDiscr}` : 'for this address'}`);
    if (e.spec.peer !== addressKey(from)) {
      e.counters.discarded++;
      return this.drop(`from ${from}: discriminator ${p.yourDiscr} belongs to the session with ${e.spec.peer}`);
    }
    e.counters.packetsIn++;
    this.feed(e, { type: 'rx', packet: p });
  }

  private drop(reason: string): void {
    this.discardedUnmatched++;
    this.lastDiscard = reason;
  }

  private newDiscr(): number {
    for (;;) {
      const d = (Math.floor(this.random() * 0xfffffffe) + 1) >>> 0;
      if (d !== 0 && !this.byDiscr.has(d)) return d;
    }
  }

  private feed(e: Entry, ev: BfdEvent): void {
    let r;
    try {
      r = bfdStep(e.session, ev, this.scheduler.now(), this.random);
    } catch (err) {
      // Only `configure` with bad timers throws, and add/update validate first.
      this.lastDiscard = `session ${e.spec.peer}: ${(err as Error).message}`;
      return;
    }
    e.session = r.session;
    let change: BfdChange | undefined;
    for (const a of r.actions) {
      switch (a.type) {
        case 'send':
          e.counters.packetsOut++;
          this.transport.send(e.spec.peer, encodePacket(a.packet));
          break;
        case 'discard':
          e.counters.discarded++;
          this.lastDiscard = `from ${e.spec.peer}: ${a.reason}`;
          break;
        case 'stateChange':
          e.since = this.wallClock();
          e.counters.stateChanges++;
          if (a.to === 'Up') e.counters.upTransitions++;
          if (a.from === 'Up') e.counters.downTransitions++;
          // One report per step: the latest state, from the first `from`.
          change = { from: change?.from ?? a.from, remoteAdminDown: a.remoteAdminDown || (change?.remoteAdminDown ?? false), status: this.statusOf(e) };
          break;
        case 'timersChanged':
          change ??= { status: this.statusOf(e) };
          break;
      }
    }
    this.arm(e);
    if (change) this.onChange({ ...change, status: this.statusOf(e) });
  }

  private arm(e: Entry): void {
    const at = nextDeadline(e.session);
    if (at === e.timerAt) return;
    this.clearTimer(e);
    if (at === undefined) return;
    e.timerAt = at;
    e.timer = this.scheduler.setTimeout(() => {
      e.timer = undefined;
      e.timerAt = undefined;
      if (this.byPeer.get(e.spec.peer) === e) this.feed(e, { type: 'timer' });
    }, Math.max(0, at - this.scheduler.now()));
  }

  private clearTimer(e: Entry): void {
    if (e.timer !== undefined) this.scheduler.clearTimeout(e.timer);
    e.timer = undefined;
    e.timerAt = undefined;
  }

  private statusOf(e: Entry): BfdSessionStatus {
    const s = e.session;
    const t = e.spec.timers;
    return {
      peer: e.spec.peer,
      ...(e.spec.local !== undefined ? { local: e.spec.local } : {}),
      state: s.state,
      remoteState: s.remoteState,
      since: e.since,
      localDiscr: s.localDiscr,
      remoteDiscr: s.remoteDiscr,
      desired: { minTxMs: t.desiredMinTx / 1000, minRxMs: t.requiredMinRx / 1000, multiplier: t.detectMult, passive: t.passive ?? false },
      txIntervalMs: txInterval(s) / 1000,
      detectionTimeMs: detectionTime(s) / 1000,
      remoteMultiplier: s.remoteDetectMult,
      lastDiag: { code: s.lastDownDiag, text: describeDiag(s.lastDownDiag) },
      remoteDiag: { code: s.remoteDiag, text: describeDiag(s.remoteDiag) },
      counters: { ...e.counters },
    };
  }
}
