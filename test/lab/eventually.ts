import { sleep } from './shell.js';

/** Retries `check` (which throws or rejects, e.g. a failing expect) until it passes or `ms` run out; rethrows the last failure. */
export async function eventually<T>(check: () => T | Promise<T>, ms = 60_000, everyMs = 500): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await sleep(everyMs);
  }
}
