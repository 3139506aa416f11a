import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bfdStep, createSession, detectionTime, jittered, nextDeadline, txInterval, type BfdSession } from '../../src/bfd/fsm.js';
import { Diag, type BfdPacket, type BfdStateName } from '../../src/bfd/packet.js';
import { bfdPacket, Link, ms, timers } from './sim.js';

const fixed = (v: number) => () => v;
const T = timers(300, 300, 3);

function pkt(over: Partial<BfdPacket>): BfdPacket {
  return bfdPacket({ myDiscr: 99, desiredMinTx: ms(300), requiredMinRx: ms(300), ...over });
}

function rx(s: BfdSession, p: Partial<BfdPacket>, now = 0) {
  return bfdStep(s, { type: 'rx', packet: pkt(p) }, now, fixed(0.5));
}

function inState(state: BfdStateName): BfdSession {
  let s = createSession(1, T);
  if (state === 'Down') return s;
  s = rx(s, { state: 'Down' }).session;
  if (state === 'Init') return s;
  return rx(s, { state: 'Up', yourDiscr: 1 }).session;
}

describe('BFD state machine (RFC 5880 §6.8.6 transitions)', () => {
  it.each<[BfdStateName, BfdStateName, BfdStateName, number]>([
    ['Down', 'Down', 'Init', Diag.NONE],
    ['Down', 'Init', 'Up', Diag.NONE],
    ['Down', 'Up', 'Down', Diag.NONE],
    ['Init', 'Down', 'Init', Diag.NONE],
    ['Init', 'Init', 'Up', Diag.NONE],
    ['Init', 'Up', 'Up', Diag.NONE],
    ['Up', 'Init', 'Up', Diag.NONE],
    ['Up', 'Up', 'Up', Diag.NONE],
    ['Up', 'Down', 'Down', Diag.NEIGHBOR_SIGNALED_SESSION_DOWN],
    ['Up', 'AdminDown', 'Down', Diag.NEIGHBOR_SIGNALED_SESSION_DOWN],
    ['Init', 'AdminDown', 'Down', Diag.NEIGHBOR_SIGNALED_SESSION_DOWN],
    ['Down', 'AdminDown', 'Down', Diag.NONE],
  ])('%s + remote %s → %s', (from, remote, to, diag) => {
    const s = inState(from);
    const r = rx(s, { state: remote, yourDiscr: remote === 'Down' || remote === 'AdminDown' ? 0 : 1 }, 10);
    expect(r.session.state).toBe(to);
    expect(r.session.localDiag).toBe(diag);
    const change = r.actions.find((a) => a.type === 'stateChange');
    if (from === to) expect(change).toBeUndefined();
    else expect(change).toMatchObject({ from, to, diag, remoteAdminDown: remote === 'AdminDown' });
  });

  it('a local state change is announced at once, in a packet carrying the new state', () => {
    const r = rx(createSession(1, T), { state: 'Down' }, 5);
    const sends = r.actions.filter((a) => a.type === 'send');
    expect(sends).toHaveLength(1);
    expect(sends[0]).toMatchObject({ packet: { state: 'Init', yourDiscr: 99, myDiscr: 1 } });
  });

  it('ignores everything but the remote fields while AdminDown', () => {
    let s = bfdStep(inState('Up'), { type: 'adminDown' }, 0, fixed(0.5)).session;
    expect(s.state).toBe('AdminDown');
    expect(s.localDiag).toBe(Diag.ADMINISTRATIVELY_DOWN);
    s = rx(s, { state: 'Init', yourDiscr: 1 }, 1).session;
    expect(s.state).toBe('AdminDown');
    expect(s.detectAt).toBeUndefined();
    s = bfdStep(s, { type: 'adminUp' }, 2, fixed(0.5)).session;
    expect(s.state).toBe('Down');
  });

  it.each([
    [{ auth: true }, /Authentication Present/],
    [{ yourDiscr: 5 }, /Your Discriminator 5 is not this session's/],
    [{ state: 'Up' as const, yourDiscr: 0 }, /zero in state Up/],
  ])('discards %o and changes nothing', (over, reason) => {
    const s = inState('Init');
    const r = rx(s, over, 50);
    expect(r.actions).toEqual([{ type: 'discard', reason: expect.stringMatching(reason) }]);
    expect(r.session).toEqual(s);
  });

  it('goes Down with diag 1 when the detection time passes without a packet, and forgets the remote', () => {
    const s = inState('Up');
    expect(detectionTime(s)).toBe(ms(900));
    expect(s.detectAt).toBe(900);
    const early = bfdStep(s, { type: 'timer' }, 899.9, fixed(0.5));
    expect(early.session.state).toBe('Up');
    const r = bfdStep(s, { type: 'timer' }, 900, fixed(0.5));
    expect(r.session.state).toBe('Down');
    expect(r.session.localDiag).toBe(Diag.CONTROL_DETECTION_TIME_EXPIRED);
    expect(r.session.lastDownDiag).toBe(Diag.CONTROL_DETECTION_TIME_EXPIRED);
    expect(r.session.remoteDiscr).toBe(0);
    expect(r.actions).toContainEqual({ type: 'stateChange', from: 'Up', to: 'Down', diag: 1, remoteAdminDown: false, remoteRestarted: false });
    expect(r.actions).toContainEqual({ type: 'send', packet: expect.objectContaining({ state: 'Down', yourDiscr: 0, diag: 1, desiredMinTx: ms(1000) }) });
  });

  it('detection time is the remote multiplier × max(our Required Min RX, their Desired Min TX)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 255 }), (ourRx, theirTx, theirMult) => {
        const s = createSession(1, timers(100, ourRx, 3));
        const r = rx(s, { state: 'Down', desiredMinTx: ms(theirTx), detectMult: theirMult }, 0);
        expect(detectionTime(r.session)).toBe(theirMult * ms(Math.max(ourRx, theirTx)));
        expect(r.session.detectAt).toBe((theirMult * ms(Math.max(ourRx, theirTx))) / 1000);
      }),
    );
  });

  it('sends at no less than one second while not Up, at the configured rate once Up (§6.8.3)', () => {
    const s = createSession(1, T);
    expect(s.desiredMinTx).toBe(ms(1000));
    expect(s.requiredMinRx).toBe(ms(300));
    const up = inState('Up');
    expect(up.desiredMinTx).toBe(ms(300));
    expect(txInterval(up)).toBe(ms(300));
    const slowConfigured = createSession(1, timers(2000, 300, 3));
    expect(slowConfigured.desiredMinTx).toBe(ms(2000));
  });

  it('the transmit interval is max(our Desired Min TX, their Required Min RX); zero RX stops periodic sends', () => {
    const up = inState('Up');
    const r = rx(up, { state: 'Up', yourDiscr: 1, requiredMinRx: ms(700) }, 1);
    expect(txInterval(r.session)).toBe(ms(700));
    const quiet = rx(up, { state: 'Up', yourDiscr: 1, requiredMinRx: 0 }, 1);
    expect(quiet.session.nextTx).toBeUndefined();
    expect(nextDeadline(quiet.session)).toBe(quiet.session.detectAt);
  });

  it('jitters to 75–100 % of the interval, 75–90 % with Detect Mult 1', () => {
    expect(jittered(ms(300), 3, fixed(0))).toBe(225);
    expect(jittered(ms(300), 3, fixed(0.9999999))).toBeCloseTo(300, 0);
    expect(jittered(ms(300), 1, fixed(0))).toBe(225);
    expect(jittered(ms(300), 1, fixed(0.9999999))).toBeCloseTo(270, 0);
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 255 }), (r, mult) => {
        const j = jittered(ms(1000), mult, () => r);
        expect(j).toBeGreaterThanOrEqual(750);
        expect(j).toBeLessThanOrEqual(mult === 1 ? 900 : 1000);
      }),
    );
  });

  it('answers a Poll with a Final at once, without the Poll bit', () => {
    const up = inState('Up');
    const r = rx(up, { state: 'Up', yourDiscr: 1, poll: true }, 3);
    const finals = r.actions.filter((a) => a.type === 'send' && a.packet.final);
    expect(finals).toHaveLength(1);
    expect(finals[0]).toMatchObject({ packet: { final: true, poll: false } });
  });

  it('a passive session sends nothing until the remote has spoken', () => {
    const s = createSession(1, { ...T, passive: true });
    const r = bfdStep(s, { type: 'timer' }, 0, fixed(0.5));
    expect(r.actions).toEqual([]);
    expect(nextDeadline(r.session)).toBeUndefined();
    const heard = rx(r.session, { state: 'Down' }, 10);
    expect(heard.actions.some((a) => a.type === 'send')).toBe(true);
    expect(heard.session.state).toBe('Init');
  });

  it('rejects timers outside the protocol ranges', () => {
    expect(() => createSession(1, timers(300, 300, 0))).toThrow(/detectMult must be 1..255/);
    expect(() => createSession(0, T)).toThrow(/local discriminator/);
    expect(() => bfdStep(inState('Up'), { type: 'configure', timers: { desiredMinTx: 0, requiredMinRx: 1, detectMult: 3 } }, 0, fixed(0))).toThrow(
      /desiredMinTx/,
    );
  });
});

describe('BFD Poll/Final (RFC 5880 §6.5, §6.8.3)', () => {
  it('going Up starts a poll, and the Final ends it', () => {
    const up = inState('Up');
    expect(up.poll).toBeDefined();
    const r = rx(up, { state: 'Up', yourDiscr: 1, final: true }, 5);
    expect(r.session.poll).toBeUndefined();
  });

  it('an increased TX interval waits for the Final; a reduced one applies at once', () => {
    let s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true, requiredMinRx: ms(10) }, 1).session;
    expect(txInterval(s)).toBe(ms(300));
    s = bfdStep(s, { type: 'configure', timers: timers(1000, 300, 3) }, 2, fixed(0.5)).session;
    expect(s.desiredMinTx).toBe(ms(1000));
    expect(s.poll).toBeDefined();
    expect(txInterval(s)).toBe(ms(300));
    s = rx(s, { state: 'Up', yourDiscr: 1, final: true, requiredMinRx: ms(10) }, 3).session;
    expect(s.poll).toBeUndefined();
    expect(txInterval(s)).toBe(ms(1000));
    s = bfdStep(s, { type: 'configure', timers: timers(100, 300, 3) }, 4, fixed(0.5)).session;
    expect(txInterval(s)).toBe(ms(100));
  });

  it('a reduced RX interval keeps the old detection time until the Final', () => {
    let s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true, desiredMinTx: ms(50) }, 1).session;
    expect(detectionTime(s)).toBe(ms(900));
    s = bfdStep(s, { type: 'configure', timers: timers(300, 100, 3) }, 2, fixed(0.5)).session;
    expect(s.requiredMinRx).toBe(ms(100));
    expect(detectionTime(s)).toBe(ms(900));
    s = rx(s, { state: 'Up', yourDiscr: 1, final: true, desiredMinTx: ms(50) }, 3).session;
    expect(detectionTime(s)).toBe(ms(300));
  });

  it('a change during a poll polls once more after its Final', () => {
    let s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true }, 1).session;
    s = bfdStep(s, { type: 'configure', timers: timers(400, 300, 3) }, 2, fixed(0.5)).session;
    s = bfdStep(s, { type: 'configure', timers: timers(500, 300, 3) }, 3, fixed(0.5)).session;
    expect(s.poll).toEqual({ again: true });
    s = rx(s, { state: 'Up', yourDiscr: 1, final: true }, 4).session;
    expect(s.poll).toEqual({ again: false });
    expect(txInterval(s)).toBe(ms(300));
    s = rx(s, { state: 'Up', yourDiscr: 1, final: true }, 5).session;
    expect(s.poll).toBeUndefined();
    expect(txInterval(s)).toBe(ms(500));
  });
});

describe("the remote's Poll Sequence (RFC 5880 §6.8.3, issue 32)", () => {
  /** Up on the remote's Init, as against FRR: its Init advertised its slow 1 s. */
  function upOnInit(): BfdSession {
    let s = rx(createSession(1, T), { state: 'Down', desiredMinTx: ms(1000), requiredMinRx: ms(1000) }, 0).session;
    s = rx(s, { state: 'Init', yourDiscr: 1, desiredMinTx: ms(1000), requiredMinRx: ms(1000) }, 100).session;
    expect(s.state).toBe('Up');
    expect(detectionTime(s)).toBe(ms(3000));
    return s;
  }

  it('a lower Desired Min TX in a Poll counts for detection only after the poll: the remote may send slowly until our Final reaches it', () => {
    let s = upOnInit();
    // FRR goes Up and polls with 300 ms while its packets still leave every second
    const r = rx(s, { state: 'Up', yourDiscr: 1, poll: true, desiredMinTx: ms(300), requiredMinRx: ms(300) }, 1000);
    s = r.session;
    expect(r.actions).toContainEqual({ type: 'send', packet: expect.objectContaining({ final: true, poll: false }) });
    expect(detectionTime(s)).toBe(ms(3000));
    expect(s.remotePollTx).toBe(ms(1000));
    // our Final is slow to reach it: two more slow polls, ~1 s apart, no down between them
    for (const at of [1990, 2980]) {
      expect(bfdStep(s, { type: 'timer' }, at - 1, fixed(0.5)).session.state).toBe('Up');
      s = rx(s, { state: 'Up', yourDiscr: 1, poll: true, desiredMinTx: ms(300), requiredMinRx: ms(300) }, at).session;
      expect(s.state).toBe('Up');
      expect(s.detectAt).toBe(at + 3000);
    }
    // its first packet without P: the poll is over, 3 × 300 from here
    s = rx(s, { state: 'Up', yourDiscr: 1, desiredMinTx: ms(300), requiredMinRx: ms(300) }, 3200).session;
    expect(s.remotePollTx).toBeUndefined();
    expect(detectionTime(s)).toBe(ms(900));
    expect(s.detectAt).toBe(4100);
  });

  it('a higher Desired Min TX in a Poll counts at once (a longer detection time is always safe)', () => {
    let s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true }, 1).session;
    expect(detectionTime(s)).toBe(ms(900));
    s = rx(s, { state: 'Up', yourDiscr: 1, poll: true, desiredMinTx: ms(700) }, 2).session;
    expect(s.remotePollTx).toBeUndefined();
    expect(detectionTime(s)).toBe(ms(2100));
    // then lowered again in the next poll (FRR: 700 → 300): 2100 until that poll is over
    s = rx(s, { state: 'Up', yourDiscr: 1, desiredMinTx: ms(700) }, 3).session;
    s = rx(s, { state: 'Up', yourDiscr: 1, poll: true, desiredMinTx: ms(300) }, 4).session;
    expect(detectionTime(s)).toBe(ms(2100));
    s = rx(s, { state: 'Up', yourDiscr: 1, desiredMinTx: ms(300) }, 5).session;
    expect(detectionTime(s)).toBe(ms(900));
  });

  it('the held interval is forgotten with the remote when the detection time passes', () => {
    let s = upOnInit();
    s = rx(s, { state: 'Up', yourDiscr: 1, poll: true, desiredMinTx: ms(300) }, 1000).session;
    s = bfdStep(s, { type: 'timer' }, 4000, fixed(0.5)).session;
    expect(s.state).toBe('Down');
    expect(s.remotePollTx).toBeUndefined();
    expect(detectionTime(s)).toBe(0);
  });
});

describe('the remote restarting its session (issue 32)', () => {
  it('a Down from a new discriminator (Your Discriminator 0) while Up takes us Down, flagged as the remote restarting its session', () => {
    const s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true, myDiscr: 99 }, 1).session;
    const r = rx(s, { state: 'Down', yourDiscr: 0, myDiscr: 1234 }, 2);
    expect(r.session.state).toBe('Down');
    expect(r.session.remoteDiscr).toBe(1234);
    expect(r.actions).toContainEqual({
      type: 'stateChange',
      from: 'Up',
      to: 'Down',
      diag: Diag.NEIGHBOR_SIGNALED_SESSION_DOWN,
      remoteAdminDown: false,
      remoteRestarted: true,
    });
    // and it comes back up with the new session as usual
    const back = rx(r.session, { state: 'Init', yourDiscr: 1, myDiscr: 1234 }, 3).session;
    expect(back.state).toBe('Up');
  });

  it("a Down from the same session saying we signalled Down (diag 3), which we did not while Up, is flagged too (FRR's bfdd freeing the session)", () => {
    const s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true, myDiscr: 99 }, 1).session;
    const r = rx(s, { state: 'Down', yourDiscr: 1, myDiscr: 99, diag: Diag.NEIGHBOR_SIGNALED_SESSION_DOWN }, 2);
    expect(r.actions).toContainEqual({
      type: 'stateChange',
      from: 'Up',
      to: 'Down',
      diag: Diag.NEIGHBOR_SIGNALED_SESSION_DOWN,
      remoteAdminDown: false,
      remoteRestarted: true,
    });
  });

  it('a Down from the same session with any other diagnostic is a real down (not flagged)', () => {
    const s = rx(inState('Up'), { state: 'Up', yourDiscr: 1, final: true, myDiscr: 99 }, 1).session;
    for (const yourDiscr of [0, 1]) {
      for (const diag of [Diag.NONE, Diag.CONTROL_DETECTION_TIME_EXPIRED, 5]) {
        const r = rx(s, { state: 'Down', yourDiscr, myDiscr: 99, diag }, 2);
        expect(r.actions).toContainEqual({
          type: 'stateChange',
          from: 'Up',
          to: 'Down',
          diag: Diag.NEIGHBOR_SIGNALED_SESSION_DOWN,
          remoteAdminDown: false,
          remoteRestarted: false,
        });
      }
    }
  });
});

describe('two BFD sessions over a simulated link (virtual time)', () => {
  it('come up, stay up, notice a cut within the detection time, and come back', () => {
    const link = new Link(T, T, { delay: 2 });
    link.runWhile(() => !link.bothUp(), 5000);
    expect(link.now).toBeLessThan(2100);
    link.runUntil(link.now + 60_000);
    expect(link.bothUp()).toBe(true);
    expect(link.stateChanges(0).filter((c) => c.to === 'Down')).toEqual([]);
    // Steady state: periodic packets 225..300 ms apart, polls finished.
    const late = link.sides[0].sent.filter((x) => x.at > 10_000 && !x.final);
    const gaps = late.slice(1).map((x, i) => x.at - late[i].at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(225);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(300);
    expect(link.sides[0].session.poll).toBeUndefined();

    const cutAt = link.now;
    link.cut = true;
    const took = link.runWhile(() => link.sides[0].session.state === 'Up' || link.sides[1].session.state === 'Up', 5000);
    // Detection 900 ms after the last packet arrived: sent at most 300 ms before the cut, 2 ms on the way.
    expect(took).toBeLessThanOrEqual(900 + 2);
    expect(took).toBeGreaterThan(900 - 300 - 2);
    for (const i of [0, 1] as const) expect(link.stateChanges(i).at(-1)).toMatchObject({ to: 'Down', diag: Diag.CONTROL_DETECTION_TIME_EXPIRED });
    expect(link.now - cutAt).toBeLessThan(1200);

    link.cut = false;
    link.runWhile(() => !link.bothUp(), 5000);
    expect(link.bothUp()).toBe(true);
  });

  it('negotiates each way: the slower side sets the pace and the detection time', () => {
    const link = new Link(timers(100, 100, 3), timers(500, 500, 5), { delay: 1 });
    link.runWhile(() => !link.bothUp(), 5000);
    link.runUntil(link.now + 5000);
    const [a, b] = link.sides.map((x) => x.session);
    expect(txInterval(a)).toBe(ms(500));
    expect(txInterval(b)).toBe(ms(500));
    expect(detectionTime(a)).toBe(5 * ms(500));
    expect(detectionTime(b)).toBe(3 * ms(500));
  });

  it('changing intervals while Up goes through Poll/Final without a flap', () => {
    const link = new Link(T, T, { delay: 3 });
    link.runWhile(() => !link.bothUp(), 5000);
    link.runUntil(link.now + 3000);
    link.feed(0, { type: 'configure', timers: timers(1000, 1000, 3) });
    expect(link.sides[0].session.poll).toBeDefined();
    link.runUntil(link.now + 5000);
    expect(link.sides[0].session.poll).toBeUndefined();
    expect(txInterval(link.sides[1].session)).toBe(ms(1000));
    expect(detectionTime(link.sides[1].session)).toBe(ms(3000));
    link.feed(1, { type: 'configure', timers: timers(50, 50, 5) });
    link.runUntil(link.now + 5000);
    expect(detectionTime(link.sides[0].session)).toBe(5 * ms(1000));
    expect(link.sides[0].sent.some((x) => x.final)).toBe(true);
    expect(link.sides[1].sent.some((x) => x.poll)).toBe(true);
    expect(link.bothUp()).toBe(true);
    for (const i of [0, 1] as const) expect(link.stateChanges(i).filter((c) => c.to === 'Down')).toEqual([]);
  });

  it('property: any timers, delay below the interval and random timer changes: up, and never down while the link lives', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 1000 }),
        fc.integer({ min: 50, max: 1000 }),
        fc.integer({ min: 2, max: 10 }),
        fc.integer({ min: 50, max: 1000 }),
        fc.integer({ min: 50, max: 1000 }),
        fc.integer({ min: 2, max: 10 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer(),
        fc.array(
          fc.record({
            side: fc.constantFrom<0 | 1>(0, 1),
            tx: fc.integer({ min: 50, max: 1000 }),
            rx: fc.integer({ min: 50, max: 1000 }),
            mult: fc.integer({ min: 2, max: 10 }),
          }),
          { maxLength: 6 },
        ),
        (atx, arx, am, btx, brx, bm, delay, seed, changes) => {
          const link = new Link(timers(atx, arx, am), timers(btx, brx, bm), { delay, seed });
          link.runWhile(() => !link.bothUp(), 10_000);
          for (const c of changes) {
            link.feed(c.side, { type: 'configure', timers: timers(c.tx, c.rx, c.mult) });
            link.runUntil(link.now + 2500);
          }
          link.runUntil(link.now + 10_000);
          expect(link.bothUp()).toBe(true);
          for (const i of [0, 1] as const) {
            expect(link.stateChanges(i).filter((x) => x.to === 'Down')).toEqual([]);
            expect(link.sides[i].session.poll).toBeUndefined();
          }
          // And a cut is noticed within the detection time in force.
          const det = Math.max(detectionTime(link.sides[0].session), detectionTime(link.sides[1].session)) / 1000;
          link.cut = true;
          const took = link.runWhile(() => link.sides[0].session.state === 'Up' || link.sides[1].session.state === 'Up', 60_000);
          // (a packet sent just before the cut still arrives `delay` later)
          expect(took).toBeLessThanOrEqual(det + delay);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: with 10 % loss and detect multiplier 5 the sessions still come up', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const link = new Link(timers(100, 100, 5), timers(100, 100, 5), { delay: 2, loss: 0.1, seed });
        link.runWhile(() => !link.bothUp(), 30_000);
        expect(link.bothUp()).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('property: any sequence of received packets and timer ticks keeps a consistent session and never throws', () => {
    const arbPkt = fc.record({
      state: fc.constantFrom<BfdStateName>('AdminDown', 'Down', 'Init', 'Up'),
      poll: fc.boolean(),
      final: fc.boolean(),
      auth: fc.boolean(),
      detectMult: fc.integer({ min: 1, max: 255 }),
      yourDiscr: fc.constantFrom(0, 1, 2),
      desiredMinTx: fc.integer({ min: 0, max: 5_000_000 }),
      requiredMinRx: fc.integer({ min: 0, max: 5_000_000 }),
    });
    const arbEv = fc.oneof(
      arbPkt.map((p) => ({ kind: 'rx' as const, p })),
      fc.constant({ kind: 'timer' as const }),
      fc.constant({ kind: 'adminDown' as const }),
      fc.constant({ kind: 'adminUp' as const }),
      fc
        .record({ tx: fc.integer({ min: 1, max: 3000 }), rx: fc.integer({ min: 0, max: 3000 }), mult: fc.integer({ min: 1, max: 255 }) })
        .map((t) => ({ kind: 'configure' as const, t })),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(arbEv, fc.integer({ min: 0, max: 2000 })), { maxLength: 60 }), (evs) => {
        let s = createSession(1, T);
        let now = 0;
        for (const [e, dt] of evs) {
          now += dt;
          // As the shell does: every deadline up to now fires first.
          for (let d = nextDeadline(s); d !== undefined && d <= now; d = nextDeadline(s)) s = bfdStep(s, { type: 'timer' }, d, fixed(0.3)).session;
          const ev =
            e.kind === 'rx'
              ? { type: 'rx' as const, packet: pkt(e.p) }
              : e.kind === 'configure'
                ? { type: 'configure' as const, timers: timers(e.t.tx, e.t.rx, e.t.mult) }
                : { type: e.kind };
          const r = bfdStep(s, ev, now, fixed(0.3));
          s = r.session;
          for (const a of r.actions) {
            if (a.type !== 'send') continue;
            expect(a.packet.poll && a.packet.final).toBe(false);
            expect(a.packet.state).toBe(s.state);
            if (s.state !== 'Up') expect(a.packet.desiredMinTx).toBeGreaterThanOrEqual(ms(1000));
          }
          if (s.state !== 'Up') expect(s.poll).toBeUndefined();
          const d = nextDeadline(s);
          if (d !== undefined) expect(d).toBeGreaterThanOrEqual(now);
        }
      }),
      { numRuns: 300 },
    );
  });
});
