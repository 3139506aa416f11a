import { describe, expect, it } from 'vitest';
import { observedScheduler, UpdateProbe, updateSentSince } from '../../src/agent/update-probe.js';
import type { PeerState, PeerStatus, SpeakerScheduler } from '../../src/speaker/types.js';

const peer = (address: string, state: PeerState, updatesOut: number): PeerStatus => ({
  address,
  port: 179,
  asn: 65000,
  state,
  since: new Date(0),
  counters: { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut, prefixesReceived: 0, prefixesAccepted: 0, prefixesAdvertised: 0 },
});

describe('update probe', () => {
  it('observedScheduler calls `after` once each callback ran, also when it threw; clearTimeout cancels both', () => {
    const timers = new Map<number, () => void>();
    let n = 0;
    const base: SpeakerScheduler = { now: () => 42, setTimeout: (fn) => (timers.set(++n, fn), n), clearTimeout: (h) => void timers.delete(h as number) };
    const seen: string[] = [];
    const s = observedScheduler(base, () => seen.push('after'));
    s.setTimeout(() => seen.push('a'), 5);
    const h = s.setTimeout(() => seen.push('never'), 5);
    s.setTimeout(() => {
      throw new Error('boom');
    }, 5);
    s.clearTimeout(h);
    expect(s.now()).toBe(42);
    const [a, c] = [...timers.values()];
    a();
    expect(() => c()).toThrow('boom');
    expect(seen).toEqual(['a', 'after', 'after']);
  });

  it('an UPDATE counts from peers established at arm time only', () => {
    const base = new Map([['192.0.2.1', 3]]);
    expect(updateSentSince(base, [peer('192.0.2.1', 'Established', 3), peer('192.0.2.2', 'Established', 9)])).toBe(false);
    expect(updateSentSince(base, [peer('192.0.2.1', 'Established', 4)])).toBe(true);
  });

  it('arms only with a session up; reports sent, or abandoned after the timeout', () => {
    let status = [peer('192.0.2.1', 'Active', 0)];
    let t = 0;
    const p = new UpdateProbe(
      () => status,
      () => t,
      1000,
    );
    expect(p.arm()).toBe(false);
    expect(p.check()).toBe('idle');
    status = [peer('192.0.2.1', 'Established', 5)];
    expect(p.arm()).toBe(true);
    expect(p.check()).toBe('waiting');
    status = [peer('192.0.2.1', 'Established', 6)];
    expect(p.check()).toBe('sent');
    expect(p.armed).toBe(false);
    expect(p.arm()).toBe(true);
    t = 1001;
    expect(p.check()).toBe('abandoned');
    expect(p.armed).toBe(false);
  });
});
