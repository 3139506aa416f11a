/**
 * tsbgp in a lab node for the benchmarks: test/interop/speaker-node.ts (the
 * library BgpSpeaker driven over stdio) plus what the benchmarks need:
 * the full table generated in the process from its seed (bench/lab/table.ts)
 * and originated before the sessions start, and an accept-all export policy
 * for the device-under-test role (eBGP export of learned routes needs one,
 * RFC 8212).
 *
 *   ip netns exec NS node --import tsx bench/lab/tsbgp-node.ts CONFIG.json
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { Prefix } from '../../src/net/prefix.js';
import type { RouteAttributes } from '../../src/speaker/types.js';
import type { NodeConfig } from '../../test/interop/speaker-protocol.js';
import { fatal, runSpeakerNode } from '../../test/interop/speaker-node.js';
import { fullTable, type TableSpec } from './table.js';
import type { AttrSet } from '../../test/interop/daemon-routes.js';

/** The benchmark's part of CONFIG.json. */
export interface BenchNodeConfig extends NodeConfig {
  readonly bench: {
    /** Originate this table before start(). */
    readonly table?: TableSpec;
    /** Define policy "all" (accept everything) for exportPolicies. */
    readonly acceptAll?: boolean;
  };
}

export const ACCEPT_ALL = 'all';

const toRouteAttributes = (a: AttrSet): RouteAttributes => ({
  origin: a.origin,
  ...(a.med !== undefined ? { med: a.med } : {}),
  ...(a.asPath?.length ? { asPath: a.asPath } : {}),
  communities: a.communities,
  largeCommunities: a.largeCommunities,
});

const main = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;

/** The main thread's event-loop delay (what a BFD speaker on that thread would suffer). */
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();

/**
 * What the process held at its largest RSS since the last `memPeak` (sampled
 * every 10 ms, no collection forced): V8 heap committed and used, per space
 * committed, and memory outside the heap (typed arrays, buffers). Says
 * whether a peak is live data, garbage not yet collected, or pages V8 keeps.
 */
interface MemPeak {
  rss: number;
  heapCommitted: number;
  heapUsed: number;
  external: number;
  spaces: Record<string, number>;
}
let memPeak: MemPeak | undefined;
const sampleMemory = (): void => {
  const rss = process.memoryUsage.rss();
  if (memPeak !== undefined && rss <= memPeak.rss) return;
  const h = getHeapStatistics();
  const spaces: Record<string, number> = {};
  for (const sp of getHeapSpaceStatistics()) spaces[sp.space_name] = sp.physical_space_size;
  memPeak = { rss, heapCommitted: h.total_physical_size, heapUsed: h.used_heap_size, external: h.external_memory, spaces };
};
setInterval(sampleMemory, 10).unref();

if (main)
  runSpeakerNode(process.argv[2], {
    setup(sp, cfg) {
      const b = (cfg as BenchNodeConfig).bench;
      if (b.acceptAll) sp.definePolicy!(ACCEPT_ALL, { statements: [{ actions: { result: 'accept' } }] });
    },
    beforeStart(sp, cfg) {
      const spec = (cfg as BenchNodeConfig).bench.table;
      if (!spec) return;
      const t = fullTable(spec);
      const attrs = t.sets.map(toRouteAttributes);
      for (let i = 0; i < t.v4.addr.length; i++) sp.originate(Prefix.v4(t.v4.addr[i], t.v4.len[i]), attrs[t.v4.set[i]]);
      for (let i = 0; i < t.v6.hi.length; i++) sp.originate(Prefix.v6(t.v6.hi[i], t.v6.lo[i], 0, 0, t.v6.len[i]), attrs[t.v6.set[i]]);
      // the generator's garbage is not the speaker's: collect it before anything is measured
      (globalThis as { gc?: () => void }).gc?.();
    },
    commands: {
      /** Event-loop delay since the last call, ms: max, p99, mean; then reset. */
      loopDelay: () => {
        const r = { maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6, meanMs: loop.mean / 1e6 };
        loop.reset();
        return r;
      },
      /** The kernel side's status (KernelFib: enabled, writer, route counts), when the speaker has the kernel option. */
      kernel: (sp) => (sp as { kernelStatus?: () => unknown }).kernelStatus?.() ?? null,
      /** The process at its largest RSS since the last call (see MemPeak); then reset. */
      memPeak: () => {
        sampleMemory();
        const r = memPeak;
        memPeak = undefined;
        return r ?? null;
      },
      /** V8 heap in use after a full collection (the node runs with --expose-gc). */
      heap: () => {
        (globalThis as { gc?: () => void }).gc?.();
        return process.memoryUsage().heapUsed;
      },
    },
  }).catch(fatal);
