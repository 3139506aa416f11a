/**
 * What the Kubernetes API client costs the agent by being loaded: RSS of a
 * fresh `node` process after importing one module (1.5 s after the import,
 * so the startup garbage is mostly gone), median over runs, interleaved.
 *
 *   node --import tsx bench/kube-client-import.ts [--quick] [--runs N]
 *
 * Rows: a bare process; `@kubernetes/client-node` (the client the agent used
 * before, a dev dependency kept for this comparison); this tree's thin client
 * (dist/src/agent/sources/kube-client.js: kubeconfig, https, list and watch;
 * it imports the backoff from api-known.js, which brings the validators) and
 * the whole API source (kube-source.js: the client, the source, the
 * validators, the Secret watch and the Event recorder). Then the same on top
 * of the agent's CLI (cli.js, what every agent loads, manifests included):
 * what the API source adds to an agent, before and after. Needs `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { emit, median } from './report.js';

const quick = process.argv.includes('--quick');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : quick ? 3 : 7;

const dist = (f: string) => pathToFileURL(resolve('dist/src/agent', f)).href;
const CLIENT_NODE = '@kubernetes/client-node';
const rows: { label: string; specs: string[] }[] = [
  { label: 'bare node', specs: [] },
  { label: '@kubernetes/client-node 1.4 (before)', specs: [CLIENT_NODE] },
  { label: 'kube-client.js, the thin client (after)', specs: [dist('sources/kube-client.js')] },
  { label: 'kube-source.js, the whole API source (after)', specs: [dist('sources/kube-source.js')] },
  { label: 'the agent CLI (cli.js)', specs: [dist('cli.js')] },
  { label: 'cli.js + @kubernetes/client-node (before)', specs: [dist('cli.js'), CLIENT_NODE] },
  { label: 'cli.js + kube-source.js (after)', specs: [dist('cli.js'), dist('sources/kube-source.js')] },
];
if (!existsSync('dist/src/agent/sources/kube-client.js')) throw new Error('dist/ has no kube-client.js: npm run build first');

/** RSS and heap used (MB) of a fresh process that imported `specs`, one after the other. */
function measure(specs: string[]): { rss: number; heap: number } {
  const code = `(async () => { for (const s of ${JSON.stringify(specs)}) await import(s); })().then(() => setTimeout(() => { const m = process.memoryUsage(); console.log(JSON.stringify({ rss: m.rss / 1048576, heap: m.heapUsed / 1048576 })); }, 1500));`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`import ${specs.join(' + ')}: exit ${r.status}: ${r.stderr.trim().slice(0, 300)}`);
  return JSON.parse(r.stdout) as { rss: number; heap: number };
}

const samples = rows.map(() => [] as { rss: number; heap: number }[]);
for (let run = 0; run < RUNS; run++) rows.forEach((row, i) => samples[i].push(measure(row.specs)));

const bare = median(samples[0].map((s) => s.rss));
emit({
  suite: 'kube-client-import',
  title: 'Kubernetes API client: RSS of a fresh process after importing it',
  columns: ['module imported', 'RSS (MB)', 'min-max', 'over bare node (MB)', 'heap used (MB)'],
  rows: rows.map((row, i) => {
    const rss = samples[i].map((s) => s.rss);
    const m = median(rss);
    return [
      row.label,
      m.toFixed(1),
      `${Math.min(...rss).toFixed(1)}-${Math.max(...rss).toFixed(1)}`,
      i === 0 ? '' : `+${(m - bare).toFixed(1)}`,
      median(samples[i].map((s) => s.heap)).toFixed(1),
    ];
  }),
  notes: [`Median of ${RUNS} fresh processes per row, interleaved; RSS read 1.5 s after the import (process.memoryUsage()).`],
});
