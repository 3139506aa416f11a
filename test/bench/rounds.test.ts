import { describe, expect, it } from 'vitest';
import { cpuShare, NOISE_FLOOR, rotate, verdict } from '../../bench/rounds.js';

describe('bench/rounds: comparing figures across rounds', () => {
  it('rotates the order so each implementation goes first in turn', () => {
    expect([0, 1, 2, 3].map((n) => rotate(['tsbgp', 'bird', 'frr'], n))).toEqual([
      ['tsbgp', 'bird', 'frr'],
      ['bird', 'frr', 'tsbgp'],
      ['frr', 'tsbgp', 'bird'],
      ['tsbgp', 'bird', 'frr'],
    ]);
  });

  it('calls a figure faster or slower only when every round agrees and the median is past the floor', () => {
    expect(
      verdict(
        [
          [50, 100],
          [80, 100],
          [90, 120],
        ],
        true,
      ).text,
    ).toBe('tsbgp faster in 3 of 3 (ratio 0.75, 0.50–0.80)');
    expect(
      verdict(
        [
          [150, 100],
          [120, 100],
          [130, 100],
        ],
        true,
      ).text,
    ).toBe('tsbgp slower in 3 of 3 (ratio 1.30, 1.20–1.50)');
    expect(
      verdict(
        [
          [50, 100],
          [60, 100],
        ],
        false,
      ).text,
    ).toMatch(/^tsbgp less in 2 of 2/);
    expect(
      verdict(
        [
          [3, 1],
          [2, 1],
        ],
        false,
        'ours',
      ).text,
    ).toMatch(/^ours more in 2 of 2/);
    // The rounds disagree: the spread between rounds is bigger than the difference.
    expect(
      verdict(
        [
          [50, 100],
          [150, 100],
          [90, 100],
        ],
        true,
      ).text,
    ).toBe('within noise (ratio 0.90, 0.50–1.50)');
    // Every round a little lower, but by less than the floor at the median.
    const small = 1 - NOISE_FLOOR / 2;
    expect(
      verdict(
        [
          [small * 100, 100],
          [small * 100, 100],
        ],
        true,
      ).text,
    ).toMatch(/^within noise/);
  });

  it('gives no verdict from fewer than two rounds with both figures', () => {
    expect(verdict([], true).text).toBe('no round with both');
    expect(verdict([[1, 2]], true)).toEqual({ ratios: [0.5], text: 'one round: no verdict' });
    // A zero on their side (e.g. CPU under one 10 ms tick) is no ratio.
    expect(
      verdict(
        [
          [1, 0],
          [1, 2],
        ],
        false,
      ).text,
    ).toBe('one round: no verdict');
  });

  it('measures the CPU share over the last window only, once the samples span it', () => {
    const s: { t: number; c: number }[] = [];
    const push = (t: number, c: number) => (s.push({ t, c }), cpuShare(s, 1000));
    expect(push(0, 0)).toBeUndefined();
    expect(push(500, 400)).toBeUndefined();
    expect(push(1000, 800)).toBeCloseTo(0.8);
    // Busy first, then idle: the share falls as the busy samples leave the window.
    expect(push(1500, 810)).toBeCloseTo((810 - 400) / 1000);
    expect(push(2000, 815)).toBeCloseTo((815 - 800) / 1000);
    expect(push(2600, 815)).toBeCloseTo((815 - 810) / 1100);
    expect(s.length).toBeLessThanOrEqual(3);
  });
});
