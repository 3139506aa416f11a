import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, routeOf, sleep, speaker, stopAll, VirtualClock } from './helpers.js';

afterEach(stopAll);

describe('injected scheduler', () => {
  it('UPDATEs wait for the coalescing window on the injected clock, but for a change after a quiet window', async () => {
    const clock = new VirtualClock();
    const a = await speaker('127.0.0.1', { asn: 65000, scheduler: clock, coalesceMs: 100, maxDelayMs: 1000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    clock.advance(200); // the initial dump and End-of-RIB
    // Nothing changed for 200 ms: this change goes out at the next flush, without the window.
    a.originate('10.70.0.0/16');
    clock.advance(0);
    await eventually('an isolated change at once', () => routeOf(b, '10.70.0.0/16'));
    // One right after it coalesces: it waits the 100 ms quiet window.
    // The two real waits below stay on purpose: what they check is that no real-time timer (a setTimeout
    // that bypassed the injected scheduler) sends this UPDATE, and only real time can make such a timer fire.
    // No virtual clock or event can stand in for them; a loaded machine only makes them check less, never fail.
    a.originate('10.71.0.0/16');
    await sleep(100);
    expect(routeOf(b, '10.71.0.0/16')).toBeUndefined();
    clock.advance(99);
    await sleep(50);
    expect(routeOf(b, '10.71.0.0/16')).toBeUndefined();
    clock.advance(1);
    await eventually('route after the window', () => routeOf(b, '10.71.0.0/16'));
    await a.stop();
    // stop() leaves no flush or session timer behind on the injected clock.
    expect(clock.pending).toBe(0);
  });
});
