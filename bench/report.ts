// Shared output of every benchmark: a table printed as Markdown for people,
// and appended as one JSON line to $BENCH_OUT for scripts/perf-readme.ts,
// which generates docs/performance.md's tables from the last run.
// No figure is typed by hand: tables are built from measured values only.
import { appendFileSync } from 'node:fs';
import os from 'node:os';
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';

export type Cell = string | number;

export interface BenchTable {
  /** Suite that produced the table (file name under bench/ or bench/lab/). */
  suite: string;
  /** Scenario heading, e.g. "Originate a full table to a BIRD receiver". */
  title: string;
  /** Column headers, e.g. ["scenario", "tsbgp", "BIRD", "tsbgp / BIRD"]. */
  columns: string[];
  rows: Cell[][];
  /** Free text shown under the table: goal, what bounds it, units. */
  notes?: string[];
  /** True when produced by a --quick smoke run (not fit for the README). */
  quick?: boolean;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile (p in 0..100) of the samples. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** a / b as "1.23×" (or "n/a" when either side is missing). */
export function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return 'n/a';
  return `${(a / b).toFixed(2)}×`;
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'cpu';
  return `node ${process.version}, ${cpu} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}`;
}

function fmt(c: Cell | null | undefined): string {
  // A NaN or a missing figure comes back from JSON as null.
  if (c === null || c === undefined) return 'n/a';
  if (typeof c === 'number') {
    if (!Number.isFinite(c)) return 'n/a';
    if (Number.isInteger(c)) return String(c);
    // Three significant digits below 100 (4.8, 0.0568, 12.7), whole numbers above.
    return Math.abs(c) >= 100 ? c.toFixed(0) : String(Number(c.toPrecision(3)));
  }
  return c;
}

/** The table as Markdown, under a heading of `level` (3: `###`). */
export function markdown(t: BenchTable, level = 3): string {
  const lines = [`${'#'.repeat(level)} ${t.title}`, '', `| ${t.columns.join(' | ')} |`, `|${t.columns.map(() => '---').join('|')}|`];
  for (const r of t.rows) lines.push(`| ${r.map(fmt).join(' | ')} |`);
  for (const n of t.notes ?? []) lines.push('', n);
  return lines.join('\n');
}

/** Tables from one process share it, so that a reader can take a suite's last run as a whole. */
const RUN = `${process.pid}-${Math.round(performance.timeOrigin)}`;

/** Print the table and record it in $BENCH_OUT (JSON lines) when set. */
export function emit(t: BenchTable): void {
  const table = { ...t, quick: t.quick ?? (process.argv.includes('--quick') || process.env.BENCH_QUICK === '1') };
  console.log(`\n${markdown(table)}\n`);
  const out = process.env.BENCH_OUT;
  // The command that reproduces the table: set by the runners, else this process's own.
  const command = process.env.BENCH_COMMAND ?? ['node --import tsx', relative(process.cwd(), process.argv[1] ?? ''), ...process.argv.slice(2)].join(' ');
  if (out) appendFileSync(out, JSON.stringify({ ...table, machine: machine(), at: new Date().toISOString(), command, run: RUN }) + '\n');
}
