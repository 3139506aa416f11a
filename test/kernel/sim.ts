/** A simulated kernel table for the FIB core's tests: applies operations, refuses what a real kernel would. */
import { FibCore } from '../../src/kernel/fib-core.js';
import { sameRoute } from '../../src/kernel/next-hops.js';
import type { KernelOp, KernelRoute } from '../../src/kernel/types.js';

export class SimKernel {
  readonly table = new Map<string, KernelRoute>();
  /** Interfaces that exist. */
  links = new Set(['eth0', 'eth1']);
  log: string[] = [];

  static key(r: { prefix: string; metric: number }): string {
    return `${r.prefix}|${r.metric}`;
  }

  /** Applies one operation; returns the kernel's error text, if it refuses. */
  apply(op: KernelOp): string | undefined {
    const k = SimKernel.key(op.route);
    if (op.op === 'delete') {
      if (!this.table.has(k)) return 'RTNETLINK answers: No such process';
      this.table.delete(k);
      return undefined;
    }
    for (const h of op.route.nexthops) if (h.dev !== undefined && !this.links.has(h.dev)) return `Cannot find device "${h.dev}"`;
    this.table.set(k, op.route);
    return undefined;
  }

  routes(): KernelRoute[] {
    return [...this.table.values()];
  }
}

/** Plans and applies until nothing is left to do (at most `rounds` times); returns every operation. */
export function converge(core: FibCore, k: SimKernel, rounds = 3): KernelOp[] {
  const all: KernelOp[] = [];
  for (let i = 0; i < rounds && core.pending; i++) {
    for (const op of core.plan()) {
      all.push(op);
      core.applied(op, k.apply(op));
    }
  }
  return all;
}

export function sameTable(a: Iterable<KernelRoute>, b: Iterable<KernelRoute>): boolean {
  const m = new Map([...a].map((r) => [SimKernel.key(r), r]));
  const n = [...b];
  return (
    m.size === n.length &&
    n.every((r) => {
      const o = m.get(SimKernel.key(r));
      return o !== undefined && sameRoute(o, r);
    })
  );
}
