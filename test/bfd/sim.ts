/**
 * Two BFD sessions joined by a simulated link, in virtual time: each side's
 * timer fires at `nextDeadline`, packets arrive after `delay` ms unless the
 * link is cut or a seeded coin drops them. Packets go through the real codec.
 */
import { bfdStep, createSession, nextDeadline, type BfdAction, type BfdSession, type BfdTimers } from '../../src/bfd/fsm.js';
import { decodePacket, encodePacket, type BfdPacket } from '../../src/bfd/packet.js';
import { mulberry32 } from '../prng.js';

export interface Side {
  session: BfdSession;
  readonly log: { at: number; action: BfdAction }[];
  readonly sent: { at: number; poll: boolean; final: boolean }[];
}

interface Arrival {
  at: number;
  to: 0 | 1;
  bytes: Uint8Array;
}

export class Link {
  now = 0;
  readonly sides: [Side, Side];
  delay: number;
  loss: number;
  cut = false;
  private arrivals: Arrival[] = [];
  private readonly rand: () => number;

  constructor(a: BfdTimers, b: BfdTimers, opts: { delay?: number; loss?: number; seed?: number } = {}) {
    this.sides = [
      { session: createSession(0x1111, a), log: [], sent: [] },
      { session: createSession(0x2222, b), log: [], sent: [] },
    ];
    this.delay = opts.delay ?? 1;
    this.loss = opts.loss ?? 0;
    this.rand = mulberry32(opts.seed ?? 1);
    this.feed(0, { type: 'timer' });
    this.feed(1, { type: 'timer' });
  }

  feed(i: 0 | 1, ev: Parameters<typeof bfdStep>[1]): void {
    const side = this.sides[i];
    const r = bfdStep(side.session, ev, this.now, this.rand);
    side.session = r.session;
    for (const a of r.actions) {
      side.log.push({ at: this.now, action: a });
      if (a.type !== 'send') continue;
      side.sent.push({ at: this.now, poll: a.packet.poll, final: a.packet.final });
      if (this.cut || this.rand() < this.loss) continue;
      this.arrivals.push({ at: this.now + this.delay, to: i === 0 ? 1 : 0, bytes: encodePacket(a.packet) });
    }
  }

  /** Runs every event up to `until` (ms, virtual) in time order. */
  runUntil(until: number): void {
    for (;;) {
      const d0 = nextDeadline(this.sides[0].session) ?? Infinity;
      const d1 = nextDeadline(this.sides[1].session) ?? Infinity;
      const arr = this.arrivals.reduce((m, x) => Math.min(m, x.at), Infinity);
      const t = Math.min(d0, d1, arr);
      if (t > until) break;
      this.now = Math.max(this.now, t);
      if (arr === t) {
        const idx = this.arrivals.findIndex((x) => x.at === t);
        const [x] = this.arrivals.splice(idx, 1);
        const dec = decodePacket(x.bytes);
        if (!dec.ok) throw new Error(`sim: own packet failed to decode: ${dec.reason}`);
        this.feed(x.to, { type: 'rx', packet: dec.packet });
      } else this.feed(d0 === t ? 0 : 1, { type: 'timer' });
    }
    this.now = until;
  }

  /** Runs until `pred` holds (checked after every event), or throws at `limit`. */
  runWhile(pred: () => boolean, limit: number): number {
    const start = this.now;
    while (pred()) {
      if (this.now - start > limit) throw new Error(`sim: condition still true after ${limit} ms`);
      const d0 = nextDeadline(this.sides[0].session) ?? Infinity;
      const d1 = nextDeadline(this.sides[1].session) ?? Infinity;
      const arr = this.arrivals.reduce((m, x) => Math.min(m, x.at), Infinity);
      const t = Math.min(d0, d1, arr);
      if (t === Infinity) throw new Error('sim: nothing left to happen');
      this.runUntil(t);
    }
    return this.now - start;
  }

  stateChanges(i: 0 | 1): { at: number; from: string; to: string; diag: number }[] {
    return this.sides[i].log.flatMap((l) => (l.action.type === 'stateChange' ? [{ at: l.at, from: l.action.from, to: l.action.to, diag: l.action.diag }] : []));
  }

  bothUp(): boolean {
    return this.sides[0].session.state === 'Up' && this.sides[1].session.state === 'Up';
  }
}

export const ms = (n: number): number => n * 1000;
export const timers = (tx: number, rx: number, mult: number, passive = false): BfdTimers => ({
  desiredMinTx: ms(tx),
  requiredMinRx: ms(rx),
  detectMult: mult,
  passive,
});

/** A BFD control packet as tests build them: Down, no flags, detect multiplier 3, 1 s intervals, Your Discriminator 0; `over` on top. */
export function bfdPacket(over: Partial<BfdPacket> = {}): BfdPacket {
  return {
    diag: 0,
    state: 'Down',
    poll: false,
    final: false,
    cpi: false,
    auth: false,
    demand: false,
    multipoint: false,
    detectMult: 3,
    myDiscr: 1,
    yourDiscr: 0,
    desiredMinTx: 1_000_000,
    requiredMinRx: 1_000_000,
    requiredMinEchoRx: 0,
    ...over,
  };
}
