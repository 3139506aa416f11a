/**
 * Comparing benchmark figures across rounds (bench/rr-scale.ts --rounds):
 * the order of the implementations rotated per round, a verdict per figure
 * from the ratios measured side by side within each round, and the quiet
 * rule's CPU share over a sliding window. Pure: numbers in, numbers and
 * text out.
 */
import { median } from './report.js';

/** A difference under this share of the median ratio is noise whatever the rounds say (CPU ticks of 10 ms, timer slack). */
export const NOISE_FLOOR = 0.05;

/** Round `n` (0-based) runs the implementations in this order: each one first in turn. */
export const rotate = <T>(xs: readonly T[], n: number): T[] => xs.map((_, i) => xs[(i + n) % xs.length]);

/**
 * Ours against theirs on one figure where lower is better, from pairs
 * measured side by side in the same round. Lower in every round and by more
 * than NOISE_FLOOR at the median ratio: "faster" (a time) or "less" (CPU,
 * memory); higher likewise: "slower" or "more"; otherwise "within noise":
 * the rounds disagree (the difference is smaller than the spread between
 * rounds) or it is under the floor. Fewer than two pairs give no verdict.
 */
export function verdict(pairs: readonly (readonly [ours: number, theirs: number])[], time: boolean, name = 'tsbgp'): { ratios: number[]; text: string } {
  const ratios = pairs.filter(([, b]) => b > 0).map(([a, b]) => a / b);
  if (ratios.length < 2) return { ratios, text: ratios.length === 0 ? 'no round with both' : 'one round: no verdict' };
  const [lower, higher] = time ? ['faster', 'slower'] : ['less', 'more'];
  const lo = Math.min(...ratios);
  const hi = Math.max(...ratios);
  const m = median(ratios);
  const detail = `ratio ${m.toFixed(2)}, ${lo.toFixed(2)}–${hi.toFixed(2)}`;
  if (hi < 1 && m < 1 - NOISE_FLOOR) return { ratios, text: `${name} ${lower} in ${ratios.length} of ${ratios.length} (${detail})` };
  if (lo > 1 && m > 1 + NOISE_FLOOR) return { ratios, text: `${name} ${higher} in ${ratios.length} of ${ratios.length} (${detail})` };
  return { ratios, text: `within noise (${detail})` };
}

/**
 * The share of one core used over the last `windowMs`, from samples of
 * cumulative CPU time (`c`, ms) at wall-clock times (`t`, ms) in order;
 * undefined until the samples span the window. Drops samples older than
 * needed (the array is changed in place).
 */
export function cpuShare(samples: { t: number; c: number }[], windowMs: number): number | undefined {
  const last = samples[samples.length - 1];
  if (last === undefined) return undefined;
  while (samples.length > 2 && last.t - samples[1].t >= windowMs) samples.shift();
  const first = samples[0];
  if (last.t - first.t < windowMs) return undefined;
  return (last.c - first.c) / (last.t - first.t);
}
