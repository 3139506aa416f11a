/**
 * The BFD sessions of one process, driven by a scheduler and a transport:
 * demultiplexes received packets (RFC 5880 §6.8.6: Your Discriminator, else
 * the source address, RFC 5881 §3), keeps one timer per session at the FSM's
 * next deadline, and reports state changes. Runs wherever the transport's
 * sockets live (the BFD worker thread, or inline); the decisions are fsm.ts's.
 */
import type { Scheduler } from '../session/index.js';
import {
  bfdStep,
  createSession,
  detectionTime,
  nextDeadline,
  txInterval,
  validateTimers,
  type BfdAction,
  type BfdEvent,
  type BfdSession,
  type BfdTimers,
} from './fsm.js';
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
  /** The last time the session left Up, kept until the next one (absent: never). */
  readonly lastDown?: BfdDownRecord;
  readonly counters: BfdCounters;
}

export interface BfdCounters {
  readonly stateChanges: number;
  readonly upTransitions: number;
  readonly downTransitions: number;
  readonly packetsIn: number;
  readonly packetsOut: number;
  readonly discarded: number;
  /** The latest this session's timer fired after its deadline, ms (the thread was busy or starved). */
  readonly maxTimerLateMs: number;
}

/** One Up → Down/AdminDown transition as it happened. Times are epoch ms. */
export interface BfdDownRecord {
  /** When the session left Up. */
  readonly at: number;
  /** When it had come Up. */
  readonly upSince: number;
  readonly to: BfdStateName;
  /** Our diagnostic (why we went down). */
  readonly diag: { readonly code: number; readonly text: string };
  /** The remote's state and diagnostic as of its last packet. */
  readonly remoteState: BfdStateName;
  readonly remoteDiag: { readonly code: number; readonly text: string };
  /** When the last packet from the remote arrived (before the one that took us down, if one did); undefined: none. */
  readonly lastPacketAt?: number;
  /** The detection time in force, ms. */
  readonly detectionTimeMs: number;
  /** Not a failure of the path: the remote said AdminDown, or restarted its session (fsm.ts). */
  readonly remoteAdminDown: boolean;
  readonly remoteRestarted: boolean;
}

export interface BfdChange {
  readonly status: BfdSessionStatus;
  /** Present on a state change. */
  readonly from?: BfdStateName;
  /** The remote said AdminDown (RFC 5882 §3.2: not a path failure, clients keep their sessions). */
  readonly remoteAdminDown?: boolean;
  /** The remote's control plane restarted its session (fsm.ts `remoteRestarted`): not a path failure either. */
  readonly remoteRestarted?: boolean;
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
  /** The scheduler's time of the last packet accepted from the remote (and of the one before it). */
  lastRxAt: number | undefined;
  prevRxAt: number | undefined;
  lastDown: BfdDownRecord | undefined;
  counters: { -readonly [K in keyof BfdCounters]: BfdCounters[K] };
}

export interface BfdRuntimeOptions {
  /** Where state changes are logged (one line each, with both sides' state and diagnostic). */
  readonly log?: (level: 'info' | 'warning', msg: string) => void;
  /**
   * Runs a detection-time expiry: the shell passes `setImmediate`, so that a
   * timer that fires after a stall of the thread runs only after the packets
   * that arrived during the stall were read (Node.js runs expired timers
   * before it polls the sockets); default: at once.
   */
  readonly defer?: (f: () => void) => void;
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
    private readonly opts: BfdRuntimeOptions = {},
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
      lastRxAt: undefined,
      prevRxAt: undefined,
      lastDown: undefined,
      counters: { stateChanges: 0, upTransitions: 0, downTransitions: 0, packetsIn: 0, packetsOut: 0, discarded: 0, maxTimerLateMs: 0 },
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
    e.prevRxAt = e.lastRxAt;
    e.lastRxAt = this.scheduler.now();
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
    const before = e.session;
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
        case 'stateChange': {
          const wall = this.wallClock();
          const upSince = e.since;
          e.since = wall;
          e.counters.stateChanges++;
          if (a.to === 'Up') e.counters.upTransitions++;
          if (a.from === 'Up') {
            e.counters.downTransitions++;
            // the packet that took us down (if one did) is not "the last one heard before"
            const heard = ev.type === 'rx' ? e.prevRxAt : e.lastRxAt;
            e.lastDown = {
              at: wall,
              upSince,
              to: a.to,
              diag: { code: a.diag, text: describeDiag(a.diag) },
              // a detection expiry forgets the remote: what it said last is the session's before the step
              remoteState: ev.type === 'rx' ? r.session.remoteState : before.remoteState,
              remoteDiag: { code: (ev.type === 'rx' ? r.session : before).remoteDiag, text: describeDiag((ev.type === 'rx' ? r.session : before).remoteDiag) },
              ...(heard !== undefined ? { lastPacketAt: wall - (this.scheduler.now() - heard) } : {}),
              detectionTimeMs: detectionTime(before) / 1000,
              remoteAdminDown: a.remoteAdminDown,
              remoteRestarted: a.remoteRestarted,
            };
          }
          this.logChange(e, before, a, ev);
          // One report per step: the latest state, from the first `from`.
          change = {
            from: change?.from ?? a.from,
            remoteAdminDown: a.remoteAdminDown || (change?.remoteAdminDown ?? false),
            remoteRestarted: a.remoteRestarted || (change?.remoteRestarted ?? false),
            status: this.statusOf(e),
          };
          break;
        }
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
    e.timer = this.scheduler.setTimeout(
      () => {
        e.timer = undefined;
        e.timerAt = undefined;
        if (this.byPeer.get(e.spec.peer) !== e) return;
        const now = this.scheduler.now();
        e.counters.maxTimerLateMs = Math.max(e.counters.maxTimerLateMs, Math.round(now - at));
        const detect = e.session.detectAt;
        if (detect === undefined || now < detect || !this.opts.defer) return this.feed(e, { type: 'timer' });
        // The detection time seems to have passed: read what arrived meanwhile first.
        this.opts.defer(() => {
          if (this.byPeer.get(e.spec.peer) === e) this.feed(e, { type: 'timer' });
        });
      },
      Math.max(0, at - this.scheduler.now()),
    );
  }

  /** One line per state change: both sides' state and diagnostic, and how long ago the remote was last heard. */
  private logChange(e: Entry, before: BfdSession, a: Extract<BfdAction, { type: 'stateChange' }>, ev: BfdEvent): void {
    const log = this.opts.log;
    if (!log) return;
    const { from, to, diag } = a;
    const now = this.scheduler.now();
    const heard = ev.type === 'rx' ? e.prevRxAt : e.lastRxAt;
    const ago = heard === undefined ? 'nothing received before' : `previous packet received ${Math.round(now - heard)} ms before`;
    const remote =
      ev.type === 'rx'
        ? `remote says ${ev.packet.state} (diag ${ev.packet.diag} ${describeDiag(ev.packet.diag)}` +
          `${ev.packet.poll ? ', Poll' : ''}${ev.packet.final ? ', Final' : ''})`
        : `remote last said ${before.remoteState} (diag ${before.remoteDiag} ${describeDiag(before.remoteDiag)})`;
    const cause = ev.type === 'rx' ? 'on a packet' : ev.type === 'timer' ? 'on the timer' : `on ${ev.type}`;
    const level = from === 'Up' && to !== 'AdminDown' && !a.remoteAdminDown && !a.remoteRestarted ? 'warning' : 'info';
    const note = a.remoteRestarted ? ' (the remote restarted its session: not a path failure)' : a.remoteAdminDown ? ' (the remote is AdminDown)' : '';
    const newDiscr = e.session.remoteDiscr !== before.remoteDiscr && e.session.remoteDiscr !== 0 ? ` → ${e.session.remoteDiscr}` : '';
    const timers = `detection time ${detectionTime(before) / 1000} ms, tx interval ${txInterval(e.session) / 1000} ms`;
    log(
      level,
      `BFD ${e.spec.peer}: ${from} → ${to}${note} ${cause}, our diag ${diag} ${describeDiag(diag)}; ${remote}; ${ago}; ` +
        `${timers}; discriminators ${e.session.localDiscr}/${before.remoteDiscr}${newDiscr}`,
    );
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
      ...(e.lastDown ? { lastDown: e.lastDown } : {}),
      counters: { ...e.counters },
    };
  }
}
