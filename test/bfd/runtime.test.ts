/**
 * BfdRuntime on a virtual clock that can stall the way a starved thread
 * does: time jumps, then one turn of Node.js's loop runs in its order —
 * expired timers, then the sockets (datagrams that arrived during the stall),
 * then `setImmediate` callbacks (`defer`). Issue 32: a detection timer that
 * fires after a stall must not win against packets waiting in the socket.
 */
import { describe, expect, it } from 'vitest';
import type { Scheduler } from '../../src/session/clock.js';
import { encodePacket, type BfdPacket } from '../../src/bfd/packet.js';
import { BfdRuntime, type BfdChange, type BfdRuntimeOptions } from '../../src/bfd/runtime.js';
import { bfdPacket, ms, timers } from './sim.js';

class StallClock implements Scheduler {
  t = 0;
  /** setImmediate's queue: run after the sockets in each loop turn. */
  readonly immediates: (() => void)[] = [];
  private seq = 0;
  private timers: { at: number; id: number; fn: () => void }[] = [];
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, delay: number): number {
    const id = ++this.seq;
    this.timers.push({ at: this.t + Math.max(0, delay), id, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== h);
  }
  /** The timers phase of one loop turn: every timer due now, in deadline order. */
  runDue(): void {
    for (;;) {
      const due = this.timers.filter((x) => x.at <= this.t).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) return;
      this.timers = this.timers.filter((x) => x !== due);
      due.fn();
    }
  }
  /** A quiet loop: timers at their deadlines until `until` (no datagrams), each turn's immediates after them. */
  runTo(until: number): void {
    for (;;) {
      const next = this.timers.reduce((m, x) => Math.min(m, x.at), Infinity);
      if (next > until) break;
      this.t = Math.max(this.t, next);
      this.runDue();
      for (const f of this.immediates.splice(0)) f();
    }
    this.t = until;
  }
}

const PEER = '192.0.2.7';

function setup(opts: { defer?: boolean } = {}) {
  const clock = new StallClock();
  const immediates = clock.immediates;
  const logs: { level: string; msg: string }[] = [];
  const changes: BfdChange[] = [];
  const sent: Uint8Array[] = [];
  const o: BfdRuntimeOptions = {
    log: (level, msg) => logs.push({ level, msg }),
    ...(opts.defer !== false ? { defer: (f: () => void) => immediates.push(f) } : {}),
  };
  let wall = 1_000_000;
  const rt = new BfdRuntime(
    { open() {}, send: (_p, b) => sent.push(b), close() {} },
    clock,
    (c) => changes.push(c),
    () => 0.5,
    () => wall + clock.t,
    o,
  );
  rt.add({ peer: PEER, timers: timers(300, 300, 3) });
  const remote = (p: Partial<BfdPacket>): Uint8Array =>
    encodePacket(bfdPacket({ state: 'Up', myDiscr: 77, yourDiscr: rt.status()[0].localDiscr, desiredMinTx: ms(300), requiredMinRx: ms(300), ...p }));
  const up = (): void => {
    rt.receive(remote({ state: 'Down', yourDiscr: 0 }), PEER);
    rt.receive(remote({ state: 'Up', final: true }), PEER);
    expect(rt.status()[0]).toMatchObject({ state: 'Up', detectionTimeMs: 900 });
  };
  /** One loop turn after the thread was off the CPU for `ms`: timers, then the datagrams that waited, then immediates. */
  const stall = (ms: number, arrived: Uint8Array[]): void => {
    clock.t += ms;
    clock.runDue();
    for (const b of arrived) rt.receive(b, PEER);
    for (const f of immediates.splice(0)) f();
  };
  return {
    clock,
    rt,
    logs,
    changes,
    sent,
    remote,
    up,
    stall,
    setWall: (w: number) => {
      wall = w;
    },
  };
}

describe('BfdRuntime: detection after a stall of its thread (issue 32)', () => {
  it('reads the packets that arrived during a stall before the late detection timer decides', () => {
    const x = setup();
    x.up();
    x.clock.runTo(250);
    x.rt.receive(x.remote({}), PEER);
    // off the CPU for 1.5 s while the remote kept sending every 300 ms
    x.stall(1500, [x.remote({}), x.remote({}), x.remote({})]);
    const s = x.rt.status()[0];
    expect(s.state).toBe('Up');
    expect(s.counters.downTransitions).toBe(0);
    expect(s.counters.maxTimerLateMs).toBeGreaterThan(500);
  });

  it('without the deferral the same stall is a false down (what the worker did before)', () => {
    const x = setup({ defer: false });
    x.up();
    x.clock.runTo(250);
    x.rt.receive(x.remote({}), PEER);
    x.stall(1500, [x.remote({}), x.remote({}), x.remote({})]);
    expect(x.rt.status()[0].counters.downTransitions).toBe(1);
  });

  it('a stall with nothing waiting still ends in a down, once', () => {
    const x = setup();
    x.up();
    x.stall(1500, []);
    const s = x.rt.status()[0];
    expect(s.state).toBe('Down');
    expect(s.lastDiag.code).toBe(1);
    expect(s.counters.downTransitions).toBe(1);
  });
});

describe('BfdRuntime: state changes logged, the last down kept (issue 32)', () => {
  it("logs each change with both sides' state and diagnostic and the time since the previous packet; status keeps the down", () => {
    const x = setup();
    x.up();
    expect(x.logs.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^BFD 192\.0\.2\.7: Down → Init on a packet, our diag 0 No Diagnostic; remote says Down \(diag 0 No Diagnostic\); nothing received before;/,
      ),
      expect.stringMatching(
        /^BFD 192\.0\.2\.7: Init → Up on a packet, our diag 0 No Diagnostic; remote says Up \(diag 0 No Diagnostic, Final\); previous packet received 0 ms before;/,
      ),
    ]);
    x.clock.runTo(400);
    x.rt.receive(x.remote({}), PEER);
    x.clock.runTo(1400);
    const down = x.logs.at(-1)!;
    expect(down.level).toBe('warning');
    expect(down.msg).toMatch(
      /^BFD 192\.0\.2\.7: Up → Down on the timer, our diag 1 Control Detection Time Expired; remote last said Up \(diag 0 No Diagnostic\); previous packet received 900 ms before; detection time 900 ms, tx interval 1000 ms; discriminators \d+\/77$/,
    );
    const s = x.rt.status()[0];
    expect(s.lastDown).toEqual({
      at: 1_000_000 + 1300,
      upSince: 1_000_000,
      to: 'Down',
      diag: { code: 1, text: 'Control Detection Time Expired' },
      remoteState: 'Up',
      remoteDiag: { code: 0, text: 'No Diagnostic' },
      lastPacketAt: 1_000_000 + 400,
      detectionTimeMs: 900,
      remoteAdminDown: false,
      remoteRestarted: false,
    });
    // kept while the session comes back up
    x.rt.receive(x.remote({ state: 'Init', yourDiscr: s.localDiscr }), PEER);
    expect(x.rt.status()[0].state).toBe('Up');
    expect(x.rt.status()[0].lastDown?.at).toBe(1_000_000 + 1300);
  });

  it('a Down from a new session of the remote is logged as the remote restarting its session and reported as not a path failure', () => {
    const x = setup();
    x.up();
    x.clock.runTo(200);
    x.rt.receive(x.remote({ state: 'Down', yourDiscr: 0, myDiscr: 4242 }), PEER);
    const c = x.changes.at(-1)!;
    expect(c).toMatchObject({ from: 'Up', remoteRestarted: true, remoteAdminDown: false, status: { state: 'Down', remoteDiscr: 4242 } });
    expect(c.status.lastDown).toMatchObject({ diag: { code: 3 }, remoteState: 'Down', remoteRestarted: true, lastPacketAt: 1_000_000 });
    const line = x.logs.at(-1)!;
    expect(line.level).toBe('info');
    expect(line.msg).toMatch(
      /Up → Down \(the remote restarted its session: not a path failure\) on a packet, our diag 3 Neighbor Signaled Session Down; remote says Down .*previous packet received 200 ms before;.*discriminators \d+\/77 → 4242$/,
    );
  });
});
