/**
 * Two builds' in-process benchmarks side by side in one run: each suite
 * (bench/suites.ts) runs in each build's own checkout, alternately
 * (round 1 before→after, round 2 after→before, …), so that both see the
 * same machine; then every figure the suites emit is compared as the median
 * of the rounds, with the spread.
 *
 *   git worktree add /tmp/before 7e345b5 && (cd /tmp/before && npm ci)
 *   flock "$LOCK" node --import tsx bench/compare-builds.ts --before /tmp/before [--after .] [--rounds 3] [--full] [--figures REGEX] [suite ...]
 *
 * Defaults: --quick sizes (--full for the full ones), 3 rounds, the
 * in-process suites both checkouts have (agent-idle and the lab aside: they
 * compare builds in their own ways). A figure counts as beyond noise when
 * the two builds' ranges over the rounds do not overlap and the medians
 * differ by more than 5%. Figures equal in every run (counts, sizes) are
 * left out of the table and counted in its notes; --figures keeps only the
 * columns whose header matches (e.g. 'ms|CPU' to leave out rates derived
 * from the same timing).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { emit, median, type BenchTable, type Cell } from './report.js';
import { NODE_ARGS, SUITES } from './suites.js';

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`${name} wants a value`);
  argv.splice(i, 2);
  return v;
};
const beforeDir = flag('--before');
if (!beforeDir) throw new Error('usage: compare-builds.ts --before DIR [--after DIR] [--rounds N] [--full] [--figures REGEX] [suite ...]');
const builds = [
  { label: 'before', dir: resolve(beforeDir) },
  { label: 'after', dir: resolve(flag('--after') ?? '.') },
];
const rounds = Number(flag('--rounds') ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds wants a whole number ≥ 1, got ${rounds}`);
const figure = new RegExp(flag('--figures') ?? '');
const full = argv.includes('--full');
const named = argv.filter((a) => !a.startsWith('--'));
for (const s of named) if (!SUITES[s]) throw new Error(`unknown suite ${JSON.stringify(s)} (suites: ${Object.keys(SUITES).join(', ')})`);
for (const b of builds) if (!existsSync(join(b.dir, 'node_modules', 'tsx'))) throw new Error(`${b.dir}: no node_modules/tsx (run npm ci there first)`);

const DEFAULT_OUT = new Set(['agent-idle', 'agent-scale']);
const suites = (named.length > 0 ? named : Object.keys(SUITES).filter((s) => !DEFAULT_OUT.has(s))).filter((s) => {
  const missing = builds.filter((b) => !existsSync(join(b.dir, 'bench', `${s}.ts`)));
  if (missing.length > 0) console.log(`(${s}: left out, not in ${missing.map((b) => b.label).join(' and ')})`);
  return missing.length === 0;
});

interface Emitted {
  suite: string;
  title: string;
  columns: string[];
  rows: Cell[][];
}
/** key (suite | table | row | column) → build label → one value per round. */
const figures = new Map<string, Map<string, number[]>>();
const order: string[] = [];
const tmp = mkdtempSync(join(tmpdir(), 'tsbgp-compare-'));
const started = Date.now();

try {
  for (const suite of suites) {
    for (let r = 0; r < rounds; r++) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        const out = join(tmp, `${b.label}-${suite}-${r}.jsonl`);
        const args = [...NODE_ARGS, `bench/${suite}.ts`, ...(full ? SUITES[suite].full : SUITES[suite].quick)];
        const t0 = Date.now();
        const p = spawnSync(process.execPath, args, {
          cwd: b.dir,
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, BENCH_OUT: out, BENCH_QUICK: full ? '0' : '1' },
        });
        console.log(`${suite} round ${r + 1} ${b.label}: ${((Date.now() - t0) / 1000).toFixed(1)} s${p.status === 0 ? '' : ` FAILED (exit ${p.status})`}`);
        if (p.status !== 0 || !existsSync(out)) continue;
        const seen = new Map<string, number>();
        for (const line of readFileSync(out, 'utf8').split('\n').filter(Boolean)) {
          const t = JSON.parse(line) as Emitted;
          t.rows.forEach((row, ri) => {
            // A row is named by its first cell; a table whose first column is a figure, by its place.
            const base = `${suite} | ${t.title} | ${typeof row[0] === 'string' ? row[0] : `row ${ri + 1}`}`;
            // The same row twice in one run (a table repeated): number them.
            const n = seen.get(base) ?? 0;
            seen.set(base, n + 1);
            const rowKey = n === 0 ? base : `${base} #${n + 1}`;
            row.forEach((c, i) => {
              if ((i === 0 && typeof row[0] === 'string') || typeof c !== 'number' || !Number.isFinite(c) || !figure.test(t.columns[i])) return;
              const key = `${rowKey} | ${t.columns[i]}`;
              let byBuild = figures.get(key);
              if (!byBuild) (figures.set(key, (byBuild = new Map())), order.push(key));
              let xs = byBuild.get(b.label);
              if (!xs) byBuild.set(b.label, (xs = []));
              xs.push(c);
            });
          });
        }
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const rows: Cell[][] = [];
let constant = 0;
let beyond = 0;
for (const key of order) {
  const [before = [], after = []] = builds.map((b) => figures.get(key)!.get(b.label) ?? []);
  if (before.length === 0 || after.length === 0) continue;
  const all = [...before, ...after];
  if (all.every((x) => x === all[0])) {
    constant++;
    continue;
  }
  const [mb, ma] = [median(before), median(after)];
  const apart = Math.max(...before) < Math.min(...after) || Math.max(...after) < Math.min(...before);
  const far = mb !== 0 && Math.abs(ma / mb - 1) > 0.05;
  if (apart && far) beyond++;
  const [suite, table, row, column] = key.split(' | ');
  const span = (xs: number[]) => `${Number(Math.min(...xs).toPrecision(3))}–${Number(Math.max(...xs).toPrecision(3))}`;
  rows.push([
    suite,
    table,
    row,
    column,
    mb,
    ma,
    mb === 0 ? 'n/a' : `${(ma / mb).toFixed(2)}×`,
    span(before),
    span(after),
    apart && far ? `beyond noise (after ${ma > mb ? 'higher' : 'lower'})` : 'noise',
  ]);
}

const table: BenchTable = {
  suite: 'compare-builds',
  title: `Benchmarks of two builds side by side (${full ? 'full' : 'quick'} sizes)`,
  columns: ['suite', 'table', 'row', 'figure', 'before (median)', 'after (median)', 'after / before', 'before range', 'after range', 'verdict'],
  rows,
  notes: [
    `before: ${builds[0].dir}; after: ${builds[1].dir}. ${rounds} rounds, each suite run alternately in both builds (odd rounds before first, even rounds after first); ${((Date.now() - started) / 60000).toFixed(1)} min in all.`,
    `Beyond noise: the builds' ranges over the rounds do not overlap and the medians differ by more than 5%; ${beyond} of ${rows.length} figures are. ${constant} figures equal in every run (counts, sizes) are left out. Whether higher is better depends on the figure (ms: lower is better; per second: higher).`,
  ],
};
emit(table);
