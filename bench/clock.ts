// A timestamp comparable across processes on one machine: milliseconds since
// the epoch with sub-millisecond resolution (Date.now() has only whole ms).
// Benchmarks that time a route from one process to another use it on both sides.
import { performance } from 'node:perf_hooks';

export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every `everyMs` until it returns true; throws naming `what` after `timeoutMs`. */
export async function until(what: string, fn: () => boolean, timeoutMs: number, everyMs = 2): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
