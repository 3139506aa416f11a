// Runs every in-process benchmark in its own Node process, one after another
// (never in parallel: the figures are medians on a shared 2-core machine).
// `npm run bench` for the full set, `npm run bench -- --quick` for a smoke run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { NODE_ARGS, SUITES } from './suites.js';

const quick = process.argv.includes('--quick');
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const suites = Object.keys(SUITES).filter((s) => only.length === 0 || only.includes(s));

console.log(`# tsbgp benchmarks ${quick ? '(quick)' : ''}`);
console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${new Date().toISOString()}`,
);
// Every suite appends its tables here (bench/report.ts); perf-readme reads it.
const out = process.env.BENCH_OUT ?? `bench/results/${quick ? 'quick' : 'bench'}.jsonl`;
mkdirSync('bench/results', { recursive: true });
if (only.length === 0) writeFileSync(out, '');
let failed = 0;
const started = performance.now();
for (const suite of suites) {
  const file = `bench/${suite}.ts`;
  if (!existsSync(file)) {
    console.error(`missing benchmark ${file}`);
    failed++;
    continue;
  }
  console.log(`\n## ${suite}`);
  const args = [...NODE_ARGS, file, ...(quick ? SUITES[suite].quick : SUITES[suite].full)];
  const t0 = performance.now();
  // The command recorded with each table (scripts/perf-readme.ts prints it).
  const command = `npm run bench -- ${quick ? '--quick ' : ''}${suite}`;
  const r = spawnSync(process.execPath, args, {
    stdio: 'inherit',
    env: { ...process.env, BENCH_OUT: out, BENCH_COMMAND: command, BENCH_QUICK: quick ? '1' : '0' },
  });
  console.log(`(${suite}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  if (r.status !== 0) {
    console.error(`benchmark ${suite} failed (exit ${r.status})`);
    failed++;
  }
}
console.log(`\nall benchmarks: ${((performance.now() - started) / 1000).toFixed(1)} s; tables recorded in ${out}`);
process.exit(failed ? 1 : 0);
