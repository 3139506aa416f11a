// The in-process benchmarks (bench/<suite>.ts) and their arguments for a
// full run and for --quick: what bench/run.ts runs one after another and
// bench/compare-builds.ts runs across builds.
export const SUITES: Record<string, { full: string[]; quick: string[] }> = {
  codec: { full: [], quick: ['--quick'] },
  trie: { full: [], quick: ['--quick'] },
  rib: { full: [], quick: ['--quick'] },
  policy: { full: [], quick: ['--quick'] },
  receive: { full: [], quick: ['--quick'] },
  'kubernetes-planner': { full: ['10000'], quick: ['500'] },
  'speaker-originate': { full: ['50000', '5'], quick: ['10000', '1'] },
  'route-reflector': { full: [], quick: ['--quick'] },
  'rr-scale': { full: [], quick: ['--quick', '--impl', 'tsbgp'] },
  'agent-reconcile': { full: [], quick: ['--quick'] },
  memory: { full: [], quick: ['--quick'] },
  'metrics-scrape': { full: ['1000000'], quick: ['50000'] },
  'agent-idle': { full: [], quick: ['--quick'] },
};

/** How bench/run.ts starts a suite's process (after `node`). */
export const NODE_ARGS = ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx'];
