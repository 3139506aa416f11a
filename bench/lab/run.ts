/**
 * The namespace benchmarks against BIRD, FRR and GoBGP, one scenario and
 * one daemon at a time (needs root; installs the daemons as .ci/run does):
 *
 *   npm run bench:lab                       # full: scenarios 3, 4, 4b, medians of 5 after a warm-up
 *   npm run bench:lab -- --quick            # smoke: tiny tables, one run each (CI)
 *   npm run bench:lab -- receive --kinds tsbgp,bird --runs 3
 *   npm run bench:lab -- drain              # issue 29 part 4, packets lost as nodes leave: only when named,
 *                                           # into bench/results/drain.jsonl (docs/drain-lab.md)
 *
 * Tables go to stdout and, as JSON lines, to bench/results/lab.jsonl
 * (lab-quick.jsonl with --quick; or $BENCH_OUT).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireLab } from '../../test/lab/require.js';
import { emit } from '../report.js';
import { commonNotes, COLUMNS, kindRow, labOptions, type LabOptions, type MemoryRow } from './options.js';
import { drain } from './drain.js';
import { originate } from './originate.js';
import { propagate } from './propagate.js';
import { receive } from './receive.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCENARIOS: Record<string, (o: LabOptions) => Promise<MemoryRow[]>> = { originate, propagate, receive, drain };
/** Run only when named (`npm run bench:lab -- drain`), not in the default set. */
const NAMED_ONLY = new Set(['drain']);

const argv = process.argv.slice(2);
const o = labOptions(argv);
const flagsWithValue = new Set(['--kinds', '--runs', '--warmup', '--poll-ms', '--sizes']);
const only = argv.filter((a, i) => !a.startsWith('--') && !flagsWithValue.has(argv[i - 1]));
for (const s of only) if (!SCENARIOS[s]) throw new Error(`unknown scenario "${s}" (known: ${Object.keys(SCENARIOS).join(', ')})`);

if (process.getuid?.() === 0) {
  const r = spawnSync('bash', [join(ROOT, 'scripts', 'install-daemons.sh')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`scripts/install-daemons.sh failed (exit ${r.status})`);
}
// root, namespaces and every daemon: a failure here (CI=true) or a clear message elsewhere
if (!requireLab(['bird', 'frr', 'gobgp']).ok) process.exit(process.env.CI ? 1 : 0);

const drainOnly = only.length > 0 && only.every((s) => NAMED_ONLY.has(s));
process.env.BENCH_OUT ??= join(ROOT, 'bench', 'results', drainOnly ? 'drain.jsonl' : o.quick ? 'lab-quick.jsonl' : 'lab.jsonl');
mkdirSync(dirname(process.env.BENCH_OUT), { recursive: true });
if (only.length === 0) writeFileSync(process.env.BENCH_OUT, '');

const t0 = Date.now();
console.log(
  `# tsbgp lab benchmarks${o.quick ? ' (quick)' : ''}: ${(only.length ? only : Object.keys(SCENARIOS).filter((s) => !NAMED_ONLY.has(s))).join(', ')}; kinds ${o.kinds.join(', ')}`,
);
const memory: MemoryRow[] = [];
for (const [name, run] of Object.entries(SCENARIOS)) {
  if (only.length ? !only.includes(name) : NAMED_ONLY.has(name)) continue;
  console.log(`\n## ${name}`);
  memory.push(...(await run(o)));
}
if (memory.length) {
  emit({
    suite: 'lab/memory',
    title: 'Memory per route, from the lab runs above',
    columns: COLUMNS,
    rows: memory.map((m) => kindRow(m.label, m.values)),
    notes: [
      "Resident set from /proc/PID/status of the daemon's own processes (FRR: zebra + bgpd), heap from V8 after a full GC (tsbgp only).",
      ...commonNotes(o),
    ],
  });
}
for (const f of o.failures) console.error(`failed: ${f}`);
console.log(`\nlab benchmarks done in ${((Date.now() - t0) / 1000).toFixed(0)} s; tables in ${process.env.BENCH_OUT}`);
process.exit(o.failures.length ? 1 : 0);
