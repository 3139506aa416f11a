import { afterEach, describe, expect, it } from 'vitest';
import type { SpeakerScheduler } from '../../src/index.js';
import { eventually, established, link, routeOf, sleep, speaker, stopAll } from './helpers.js';

/** Timers fire only when the test advances the clock. */
class VirtualClock implements SpeakerScheduler {
  t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.timers.delete(h as number);
  };
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].fn();
    }
    this.t = end;
  }
  get pending(): number {
    return this.timers.size;
  }
}

afterEach(stopAll);

describe('injected scheduler', () => {
  it('UPDATEs wait for the coalescing window on the injected clock', async () => {
    const clock = new VirtualClock();
    const a = await speaker('127.0.0.1', { asn: 65000, scheduler: clock, coalesceMs: 100, maxDelayMs: 1000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    clock.advance(200); // the initial dump and End-of-RIB
    a.originate('10.70.0.0/16');
    await sleep(100);
    expect(routeOf(b, '10.70.0.0/16')).toBeUndefined();
    clock.advance(99);
    await sleep(50);
    expect(routeOf(b, '10.70.0.0/16')).toBeUndefined();
    clock.advance(1);
    await eventually('route after the window', () => routeOf(b, '10.70.0.0/16'));
    await a.stop();
    // stop() leaves no flush or session timer behind on the injected clock.
    expect(clock.pending).toBe(0);
  });
});
