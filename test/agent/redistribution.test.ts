import { describe, expect, it } from 'vitest';
import { MAX_PASS_DELAY_MS, Redistribution } from '../../src/agent/redistribution.js';
import { Prefix } from '../../src/net/index.js';
import { peer, plan, rx, withPool } from './plans.js';

describe('Redistribution: the record of what is re-advertised and the pacing of passes', () => {
  /** A queue, timers and a clock the test drives by hand (virtual time). */
  function pacing() {
    const queue: (() => Promise<void>)[] = [];
    const timers: { at: number; fn: () => void }[] = [];
    let now = 0;
    return {
      queue,
      timers,
      pacing: {
        enqueue: (step: () => Promise<void>) => void queue.push(step),
        setTimer: (fn: () => void, ms: number) => void timers.push({ at: now + ms, fn }),
        now: () => now,
      },
      advance: (ms: number) => (now += ms),
      runQueue: async () => {
        while (queue.length > 0) await queue.shift()!();
      },
    };
  }

  it('one queued pass serves every request before it starts; a slow pass spaces the next (4x, at most 1 s); settled waits for a paced pass', async () => {
    const t = pacing();
    let passes = 0;
    let passMs = 0;
    const r = new Redistribution(t.pacing, async () => {
      passes++;
      t.advance(passMs);
    });
    r.request();
    r.request();
    r.request();
    expect([t.queue.length, t.timers.length]).toEqual([1, 0]);
    passMs = 100;
    await t.runQueue();
    expect(passes).toBe(1);
    // The last pass took 100 ms: the next waits 400 ms on a timer, outside the queue.
    r.request();
    r.request();
    expect([t.queue.length, t.timers.length, t.timers[0].at - t.pacing.now()]).toEqual([0, 1, 400]);
    let settled = false;
    const waiting = r.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    passMs = 10_000;
    t.timers.shift()!.fn();
    await t.runQueue();
    await waiting;
    expect([passes, settled]).toEqual([2, true]);
    r.request();
    expect(t.timers[0].at - t.pacing.now()).toBe(MAX_PASS_DELAY_MS);
  });

  it('requests from peers that are not local to the plan ask for nothing', () => {
    const t = pacing();
    const r = new Redistribution(t.pacing, async () => undefined);
    const p = plan([], [peer('127.0.0.1'), peer('192.0.2.20')]);
    r.request(p, '192.0.2.20');
    expect(t.queue).toHaveLength(0);
    r.request(p, '127.0.0.1');
    expect(t.queue).toHaveLength(1);
  });

  it('next() records what it originates and withdraws; forget() lets the plan take a prefix over', () => {
    const t = pacing();
    const r = new Redistribution(t.pacing, async () => undefined);
    const p = withPool(plan([], [peer('127.0.0.1')]));
    expect(r.next(p, [rx('127.0.0.1', '198.51.100.7/32', { communities: ['65000:1'] })]).originate.map((x) => x.prefix.toString())).toEqual([
      '198.51.100.7/32',
    ]);
    expect(r.list().map((x) => [x.prefix.toString(), x.from])).toEqual([['198.51.100.7/32', '127.0.0.1']]);
    expect(r.next(p, [rx('127.0.0.1', '198.51.100.7/32', { communities: ['65000:1'] })])).toEqual({ originate: [], withdraw: [] });
    expect(r.next(p, []).withdraw.map(String)).toEqual(['198.51.100.7/32']);
    expect(r.list()).toEqual([]);
    r.next(p, [rx('127.0.0.1', '198.51.100.8/32')]);
    r.forget(Prefix.parse('198.51.100.8/32'));
    expect(r.list()).toEqual([]);
  });
});
