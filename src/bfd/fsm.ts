/**
 * One BFD session (RFC 5880, asynchronous mode, no echo, no demand, no
 * authentication) as a pure transition function: `bfdStep(session, event,
 * now, random) → { session, actions }`. Time (`now`, ms) and randomness (for
 * jitter, §6.8.7) are passed in; the shell arms one timer at
 * `nextDeadline(session)` and feeds `{ type: 'timer' }` when it fires.
 *
 * Intervals are microseconds, as on the wire; times are milliseconds.
 */
import { Diag, type BfdPacket, type BfdStateName } from './packet.js';

/** What the operator configures for one session. */
export interface BfdTimers {
  /** Desired Min TX Interval, µs (used once Up; at least 1 s before, §6.8.3). */
  readonly desiredMinTx: number;
  /** Required Min RX Interval, µs. */
  readonly requiredMinRx: number;
  /** Detect Mult, 1..255. */
  readonly detectMult: number;
  /** Passive role (§6.1): send nothing until the remote has spoken. */
  readonly passive?: boolean;
}

/** §6.8.3: while not Up, Desired Min TX is at least one second. */
export const SLOW_TX_US = 1_000_000;

export interface BfdSession {
  readonly timers: BfdTimers;
  readonly state: BfdStateName;
  readonly remoteState: BfdStateName;
  readonly localDiscr: number;
  readonly remoteDiscr: number;
  /** bfd.LocalDiag: what our packets carry. */
  readonly localDiag: number;
  /** The diagnostic of our last transition out of Up (or Init); 0 if never. */
  readonly lastDownDiag: number;
  readonly remoteDiag: number;
  /** Desired Min TX and Required Min RX as we advertise them now, µs. */
  readonly desiredMinTx: number;
  readonly requiredMinRx: number;
  /**
   * The values used while a Poll Sequence runs (§6.8.3): an increased TX
   * interval and a reduced RX interval take effect only at its Final.
   */
  readonly txBase: number;
  readonly rxBase: number;
  /** A Poll Sequence is in progress; `again`: the values changed during it, poll once more. */
  readonly poll?: { readonly again: boolean };
  readonly remoteMinRx: number;
  readonly remoteDesiredMinTx: number;
  /**
   * While the remote runs a Poll Sequence that lowered its Desired Min TX:
   * the value it had before, which the detection time keeps using until the
   * remote's poll is over (its first packet without P). A remote may keep
   * sending at its old interval until our Final reaches it (§6.8.3; FRR's
   * bfdd does, and advertises its fast interval in a Poll on going Up while
   * still sending every second).
   */
  readonly remotePollTx?: number;
  readonly remoteDetectMult: number;
  /** Next periodic transmission, ms. */
  readonly nextTx?: number;
  /** Detection deadline, ms. */
  readonly detectAt?: number;
}

export type BfdEvent =
  | { readonly type: 'rx'; readonly packet: BfdPacket }
  | { readonly type: 'timer' }
  | { readonly type: 'configure'; readonly timers: BfdTimers }
  | { readonly type: 'adminDown' }
  | { readonly type: 'adminUp' };

export type BfdAction =
  | { readonly type: 'send'; readonly packet: BfdPacket }
  | {
      readonly type: 'stateChange';
      readonly from: BfdStateName;
      readonly to: BfdStateName;
      readonly diag: number;
      /** The remote signalled AdminDown: RFC 5882 §3.2, not a failure of the path. */
      readonly remoteAdminDown: boolean;
      /**
       * Up → Down because the remote's control plane restarted its session, not
       * because the path failed: a new session of the remote (another My
       * Discriminator, Your Discriminator 0) says Down, or the remote says Down
       * with diagnostic 3 "Neighbor Signaled Session Down" although we did not
       * (every packet of ours since we went Up said Up). FRR's bfdd does both
       * when bgpd re-registers a session: the old one says Down with diag 3 as
       * it is freed, the new one starts in Down. The packet proves the path
       * alive, so clients keep their sessions, as for AdminDown.
       */
      readonly remoteRestarted: boolean;
    }
  /** The negotiated TX interval or detection time changed (status). */
  | { readonly type: 'timersChanged' }
  | { readonly type: 'discard'; readonly reason: string };

export interface BfdStepResult {
  readonly session: BfdSession;
  readonly actions: readonly BfdAction[];
}

export function validateTimers(t: BfdTimers): string | undefined {
  const us = (v: number) => Number.isInteger(v) && v >= 1 && v <= 0xffffffff;
  if (!us(t.desiredMinTx)) return `desiredMinTx must be 1..4294967295 µs, got ${t.desiredMinTx}`;
  if (!(Number.isInteger(t.requiredMinRx) && t.requiredMinRx >= 0 && t.requiredMinRx <= 0xffffffff))
    return `requiredMinRx must be 0..4294967295 µs, got ${t.requiredMinRx}`;
  if (!(Number.isInteger(t.detectMult) && t.detectMult >= 1 && t.detectMult <= 255)) return `detectMult must be 1..255, got ${t.detectMult}`;
  return undefined;
}

export function createSession(localDiscr: number, timers: BfdTimers): BfdSession {
  if (!(Number.isInteger(localDiscr) && localDiscr >= 1 && localDiscr <= 0xffffffff))
    throw new RangeError(`local discriminator must be 1..4294967295, got ${localDiscr}`);
  const bad = validateTimers(timers);
  if (bad !== undefined) throw new RangeError(bad);
  const adv = advertised(timers, 'Down');
  return {
    timers,
    state: 'Down',
    remoteState: 'Down',
    localDiscr,
    remoteDiscr: 0,
    localDiag: Diag.NONE,
    lastDownDiag: Diag.NONE,
    remoteDiag: Diag.NONE,
    desiredMinTx: adv.desiredMinTx,
    requiredMinRx: adv.requiredMinRx,
    txBase: adv.desiredMinTx,
    rxBase: adv.requiredMinRx,
    remoteMinRx: 1,
    remoteDesiredMinTx: 0,
    remoteDetectMult: 0,
  };
}

function advertised(t: BfdTimers, state: BfdStateName): { desiredMinTx: number; requiredMinRx: number } {
  return { desiredMinTx: state === 'Up' ? t.desiredMinTx : Math.max(t.desiredMinTx, SLOW_TX_US), requiredMinRx: t.requiredMinRx };
}

/** §6.8.2/§6.8.7: the interval between our periodic packets, µs (0: we must not send periodically). */
export function txInterval(s: BfdSession): number {
  return s.remoteMinRx === 0 ? 0 : Math.max(s.txBase, s.remoteMinRx);
}

/** §6.8.4, asynchronous mode: remote Detect Mult × max(our Required Min RX, their Desired Min TX), µs. */
export function detectionTime(s: BfdSession): number {
  return s.remoteDetectMult * Math.max(s.rxBase, s.remoteDesiredMinTx, s.remotePollTx ?? 0);
}

/** When the shell must call back with `{ type: 'timer' }`, ms. */
export function nextDeadline(s: BfdSession): number | undefined {
  if (s.nextTx === undefined) return s.detectAt;
  if (s.detectAt === undefined) return s.nextTx;
  return Math.min(s.nextTx, s.detectAt);
}

/** §6.8.7: 75–100 % of the interval, 75–90 % when Detect Mult is 1. */
export function jittered(intervalUs: number, detectMult: number, random: () => number): number {
  const r = Math.min(Math.max(random(), 0), 0.999999);
  const f = detectMult === 1 ? 0.75 + 0.15 * r : 0.75 + 0.25 * r;
  return (intervalUs * f) / 1000;
}

class Step {
  s: { -readonly [K in keyof BfdSession]: BfdSession[K] };
  readonly actions: BfdAction[] = [];
  private readonly before: { tx: number; detect: number };

  constructor(
    s: BfdSession,
    readonly now: number,
    readonly random: () => number,
  ) {
    this.s = { ...s };
    this.before = { tx: txInterval(s), detect: detectionTime(s) };
  }

  packet(final: boolean): BfdPacket {
    const s = this.s;
    return {
      diag: s.localDiag,
      state: s.state,
      poll: s.poll !== undefined && !final,
      final,
      cpi: false,
      auth: false,
      demand: false,
      multipoint: false,
      detectMult: s.timers.detectMult,
      myDiscr: s.localDiscr,
      yourDiscr: s.remoteDiscr,
      desiredMinTx: s.desiredMinTx,
      requiredMinRx: s.requiredMinRx,
      requiredMinEchoRx: 0,
    };
  }

  /** Periodic transmission allowed (§6.8.7): not passive before the remote spoke, and the remote wants packets. */
  canTransmit(): boolean {
    const s = this.s;
    if (s.timers.passive && s.remoteDiscr === 0) return false;
    return txInterval(s) > 0;
  }

  send(final = false): void {
    this.actions.push({ type: 'send', packet: this.packet(final) });
  }

  /** A periodic (or state-change) packet now; the next one a jittered interval later. */
  sendNow(): void {
    if (!this.canTransmit()) return;
    this.send(false);
    this.s.nextTx = this.now + jittered(txInterval(this.s), this.s.timers.detectMult, this.random);
  }

  setState(to: BfdStateName, diag: number, remote: { adminDown?: boolean; restarted?: boolean } = {}): void {
    const from = this.s.state;
    if (from === to) return;
    this.s.state = to;
    this.s.localDiag = diag;
    if (to === 'Down' || to === 'AdminDown') this.s.lastDownDiag = diag;
    if (to !== 'Up') this.s.poll = undefined;
    this.actions.push({ type: 'stateChange', from, to, diag, remoteAdminDown: remote.adminDown ?? false, remoteRestarted: remote.restarted ?? false });
    this.retime();
  }

  /**
   * The advertised intervals follow the timers and the state (§6.8.3). While
   * Up a change starts a Poll Sequence, and an increased TX / reduced RX wait
   * for its Final; otherwise they apply at once.
   */
  retime(): void {
    const s = this.s;
    const adv = advertised(s.timers, s.state);
    const changed = adv.desiredMinTx !== s.desiredMinTx || adv.requiredMinRx !== s.requiredMinRx;
    s.desiredMinTx = adv.desiredMinTx;
    s.requiredMinRx = adv.requiredMinRx;
    if (s.state !== 'Up') {
      s.txBase = s.desiredMinTx;
      s.rxBase = s.requiredMinRx;
      return;
    }
    if (!changed) return;
    if (s.desiredMinTx < s.txBase) s.txBase = s.desiredMinTx;
    if (s.requiredMinRx > s.rxBase) s.rxBase = s.requiredMinRx;
    s.poll = s.poll === undefined ? { again: false } : { again: true };
  }

  endPoll(): void {
    const s = this.s;
    if (s.poll === undefined) return;
    if (s.poll.again) {
      s.poll = { again: false };
      return;
    }
    s.poll = undefined;
    s.txBase = s.desiredMinTx;
    s.rxBase = s.requiredMinRx;
  }

  finish(): BfdStepResult {
    const s = this.s;
    if (!this.canTransmit()) s.nextTx = undefined;
    else if (s.nextTx === undefined || s.nextTx <= this.now) this.sendNow();
    else {
      // A shorter interval (the remote lowered its RX, we went Up) applies now, not after the old one.
      const soonest = this.now + txInterval(s) / 1000;
      if (soonest < s.nextTx) s.nextTx = this.now + jittered(txInterval(s), s.timers.detectMult, this.random);
    }
    if (txInterval(s) !== this.before.tx || detectionTime(s) !== this.before.detect) this.actions.push({ type: 'timersChanged' });
    return { session: s, actions: this.actions };
  }
}

export function bfdStep(session: BfdSession, ev: BfdEvent, now: number, random: () => number): BfdStepResult {
  const st = new Step(session, now, random);
  const s = st.s;
  switch (ev.type) {
    case 'timer': {
      if (s.detectAt !== undefined && now >= s.detectAt) {
        s.detectAt = undefined;
        // §6.8.1: the remote discriminator is forgotten when the detection time passes.
        s.remoteDiscr = 0;
        s.remoteMinRx = 1;
        s.remoteDesiredMinTx = 0;
        s.remotePollTx = undefined;
        s.remoteDetectMult = 0;
        s.remoteState = 'Down';
        if (s.state === 'Init' || s.state === 'Up') {
          st.setState('Down', Diag.CONTROL_DETECTION_TIME_EXPIRED);
          st.sendNow();
        }
      }
      return st.finish();
    }
    case 'configure': {
      const bad = validateTimers(ev.timers);
      if (bad !== undefined) throw new RangeError(bad);
      s.timers = ev.timers;
      st.retime();
      return st.finish();
    }
    case 'adminDown': {
      if (s.state !== 'AdminDown') {
        st.setState('AdminDown', Diag.ADMINISTRATIVELY_DOWN);
        s.detectAt = undefined;
        st.sendNow();
      }
      return st.finish();
    }
    case 'adminUp': {
      if (s.state === 'AdminDown') st.setState('Down', Diag.NONE);
      return st.finish();
    }
    case 'rx':
      return receive(st, ev.packet);
  }
}

/** RFC 5880 §6.8.6 from "If the A bit is set" on (the session-free checks are decodePacket's). */
function receive(st: Step, p: BfdPacket): BfdStepResult {
  const s = st.s;
  if (p.auth) return discard(st, 'Authentication Present (A) bit set, but this session uses no authentication');
  if (p.yourDiscr !== 0 && p.yourDiscr !== s.localDiscr) return discard(st, `Your Discriminator ${p.yourDiscr} is not this session's (${s.localDiscr})`);
  if (p.yourDiscr === 0 && p.state !== 'Down' && p.state !== 'AdminDown') return discard(st, `Your Discriminator is zero in state ${p.state}`);
  // (only read when we are Up and it says Down: see `remoteRestarted`)
  const restarted = (s.remoteDiscr !== 0 && p.myDiscr !== s.remoteDiscr && p.yourDiscr === 0) || p.diag === Diag.NEIGHBOR_SIGNALED_SESSION_DOWN;
  s.remoteDiscr = p.myDiscr;
  s.remoteState = p.state;
  s.remoteDiag = p.diag;
  s.remoteMinRx = p.requiredMinRx;
  // A lower Desired Min TX in a Poll counts for detection only once the remote's poll is over.
  const held = Math.max(s.remotePollTx ?? 0, s.remoteDesiredMinTx);
  s.remotePollTx = p.poll && p.desiredMinTx < held ? held : undefined;
  s.remoteDesiredMinTx = p.desiredMinTx;
  s.remoteDetectMult = p.detectMult;
  if (p.final) st.endPoll();
  if (s.state === 'AdminDown') return st.finish();
  s.detectAt = st.now + detectionTime(s) / 1000;
  const before = s.state;
  if (p.state === 'AdminDown') {
    if (s.state !== 'Down') st.setState('Down', Diag.NEIGHBOR_SIGNALED_SESSION_DOWN, { adminDown: true });
  } else if (s.state === 'Down') {
    if (p.state === 'Down') st.setState('Init', Diag.NONE);
    else if (p.state === 'Init') st.setState('Up', Diag.NONE);
  } else if (s.state === 'Init') {
    if (p.state === 'Init' || p.state === 'Up') st.setState('Up', Diag.NONE);
  } else if (p.state === 'Down') {
    st.setState('Down', Diag.NEIGHBOR_SIGNALED_SESSION_DOWN, { restarted });
  }
  // Our state change may have moved the RX interval used (a poll ended, or none runs any more).
  s.detectAt = st.now + detectionTime(s) / 1000;
  if (p.poll) st.send(true);
  if (s.state !== before) st.sendNow();
  return st.finish();
}

/** A discarded packet changes nothing (the checks come before any change). */
function discard(st: Step, reason: string): BfdStepResult {
  return { session: st.s, actions: [{ type: 'discard', reason }] };
}
