/**
 * Redistribution's record and pacing: what is re-advertised now, and when
 * to look again. Which routes are re-advertised, and the operations of a
 * pass, are the pure part in src/kubernetes/redistribute.ts. `Redistribution`
 * does no I/O itself: the agent gives it a queue, a timer and a clock, and
 * carries each pass's operations out on the speaker.
 */
import { desiredRedistribution, localPeers, redistributionOps, type LearnedRoute, type Plan, type Redistributed } from '../kubernetes/index.js';
import type { Prefix } from '../net/index.js';
import type { ReceivedRoute } from '../speaker/index.js';

/** What `Redistribution` needs from its shell to pace passes. */
export interface PassPacing {
  /** Runs a step after the agent's other work (reconciles, other passes). */
  readonly enqueue: (step: () => Promise<void>) => void;
  /** Calls `fn` after `ms` milliseconds (without keeping the process alive). */
  readonly setTimer: (fn: () => void, ms: number) => void;
  /** Milliseconds, monotonic. */
  readonly now: () => number;
}

/** The longest wait before a requested pass. */
export const MAX_PASS_DELAY_MS = 1000;

/**
 * The routes re-advertised from local peers, and when to look again.
 * A received route asks for a pass (`request`); one queued pass serves every
 * request made before it starts, and while local peers stream a large table
 * the passes are spaced by four times the last one's duration (at most 1 s),
 * so a million routes are not a million passes.
 */
export class Redistribution {
  private readonly routes = new Map<string, Redistributed>();
  private queued = false;
  private lastPassMs = 0;
  /** Resolves when the requested pass has run (undefined when none is waiting). */
  private pending: Promise<void> | undefined;

  constructor(
    private readonly pacing: PassPacing,
    private readonly pass: () => Promise<void>,
  ) {}

  /** Asks for a pass; `peer` (the sender of a route) is ignored unless it is one of `plan`'s local peers. */
  request(plan?: Plan, peer?: string): void {
    if (peer !== undefined && plan && !localPeers(plan).has(peer)) return;
    if (this.queued) return;
    this.queued = true;
    let ran!: () => void;
    const pending = (this.pending = new Promise<void>((r) => (ran = r)));
    const run = () =>
      this.pacing.enqueue(async () => {
        this.queued = false;
        const t0 = this.pacing.now();
        try {
          await this.pass();
        } finally {
          this.lastPassMs = this.pacing.now() - t0;
          if (this.pending === pending) this.pending = undefined;
          ran();
        }
      });
    const delay = Math.min(MAX_PASS_DELAY_MS, 4 * this.lastPassMs);
    if (delay < 1) run();
    else this.pacing.setTimer(run, delay);
  }

  /** Resolves once no requested pass is waiting (a paced pass waits on a timer, outside the agent's queue). */
  async settled(): Promise<void> {
    while (this.pending) await this.pending;
  }

  /** One pass: the operations that bring what is re-advertised to what `received` calls for under `plan`; recorded as done. */
  next(plan: Plan, received: readonly ReceivedRoute[], learned: readonly LearnedRoute[] = []): { originate: Redistributed[]; withdraw: Prefix[] } {
    const desired = desiredRedistribution(plan, received, learned);
    const ops = redistributionOps(this.routes, desired, plan);
    // What each route is now (a kernel route's interface or protocol may change without a new advertisement).
    this.routes.clear();
    for (const r of desired) this.routes.set(r.prefix.toString(), r);
    return { originate: ops.originate, withdraw: ops.withdraw };
  }

  /** The plan now originates `prefix` itself: it is no longer a re-advertised route. */
  forget(prefix: Prefix): void {
    this.routes.delete(prefix.toString());
  }

  /** What is re-advertised, in prefix order. */
  list(): Redistributed[] {
    return [...this.routes.values()].sort((a, b) => a.prefix.compare(b.prefix));
  }
}
