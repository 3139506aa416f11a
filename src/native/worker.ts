/**
 * Starting a shell's worker thread from its module, the same way whether
 * the code runs built (dist/…/x.js) or from source (tests, tsx: x.ts).
 * Shell only: the BFD socket thread and the kernel's rtnetlink listener.
 */
import { Worker } from 'node:worker_threads';

/**
 * A Worker running the module `base` (without extension) next to the caller
 * (`callerUrl`: the caller's `import.meta.url`). From source the thread
 * registers the TypeScript loader before importing the module:
 * `execArgv: ['--import', 'tsx']` does not reach a worker's entry on Node 20.
 */
export function startModuleWorker(callerUrl: string, base: string, workerData: unknown, name: string): Worker {
  const fromSource = callerUrl.endsWith('.ts');
  const entry = new URL(`./${base}${fromSource ? '.ts' : '.js'}`, callerUrl);
  return fromSource
    ? new Worker(`import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true, workerData, name })
    : new Worker(entry, { workerData, name });
}
