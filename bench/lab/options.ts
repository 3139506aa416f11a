/**
 * What every lab scenario shares: run options (full or --quick), the table
 * layout (scenario, tsbgp, each daemon, tsbgp's ratio to each), and the
 * memory-per-route rows (issue scenario 7) each scenario contributes.
 */
import type { Cell } from '../report.js';
import { machine, ratio } from '../report.js';
import { DaemonLimit, KINDS, LABEL, type Kind } from './routers.js';

export interface LabOptions {
  readonly quick: boolean;
  /** Measured runs (medians), after `warmup` unmeasured ones. */
  readonly runs: number;
  readonly warmup: number;
  readonly pollMs: number;
  /** Daemon kinds to run (default all four). */
  readonly kinds: readonly Kind[];
  readonly log: (s: string) => void;
  /** --trace: log the receiver's count at every poll. */
  readonly trace: boolean;
  /** What failed (a daemon in a scenario): the rest still runs, the run exits non-zero. */
  readonly failures: string[];
  /** What a daemon was measured unable to do (a DaemonLimit): shown under the table, not a failure. */
  readonly limits: string[];
}

export function labOptions(argv: readonly string[]): LabOptions {
  const quick = argv.includes('--quick');
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const kinds = (value('--kinds')?.split(',') ?? [...KINDS]) as Kind[];
  for (const k of kinds) if (!KINDS.includes(k)) throw new Error(`--kinds: unknown kind "${k}" (known: ${KINDS.join(', ')})`);
  return {
    quick,
    runs: Number(value('--runs') ?? (quick ? 1 : 5)),
    warmup: Number(value('--warmup') ?? (quick ? 0 : 1)),
    pollMs: Number(value('--poll-ms') ?? 200),
    kinds,
    log: (s) => console.log(s),
    trace: argv.includes('--trace'),
    failures: [],
    limits: [],
  };
}

const OTHERS = KINDS.filter((k) => k !== 'tsbgp');

export const COLUMNS = ['scenario', ...KINDS.map((k) => LABEL[k]), ...OTHERS.map((k) => `tsbgp / ${LABEL[k]}`)];

/** One row: the figure per kind (missing: n/a) and tsbgp's ratio to each daemon (lower is better for tsbgp). */
export function kindRow(label: string, v: Partial<Record<Kind, number>>): Cell[] {
  return [label, ...KINDS.map((k) => v[k] ?? NaN), ...OTHERS.map((k) => ratio(v.tsbgp, v[k]))];
}

export function commonNotes(o: LabOptions, suite?: string): string[] {
  return [
    ...o.limits.filter((l) => !suite || l.startsWith(suite)).map((l) => `n/a — ${l}.`),
    `${o.quick ? 'Quick smoke run (tiny tables, not figures to quote)' : `Medians of ${o.runs} runs after ${o.warmup} warm-up`}; completion polled every ${o.pollMs} ms; one daemon at a time; ${machine()}.`,
  ];
}

/** Bytes per route for the memory table (scenario 7), from this scenario's runs. */
export interface MemoryRow {
  readonly label: string;
  readonly values: Partial<Record<Kind, number>>;
}

/** One figure per kind from per-kind results (kinds that failed or give no figure are left out). */
export function byKind<S>(results: Partial<Record<Kind, S>>, f: (s: S) => number | undefined): Partial<Record<Kind, number>> {
  const out: Partial<Record<Kind, number>> = {};
  for (const [k, s] of Object.entries(results) as [Kind, S][]) {
    const x = f(s);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

export const fmtCount = (n: number): string => n.toLocaleString('en-US');

/** Runs one daemon's part of a scenario; a failure is logged and recorded, and the scenario goes on. */
export async function attempt(o: LabOptions, what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof DaemonLimit) {
      o.limits.push(`${what}: ${e.message}`);
      o.log(`LIMIT ${what}: ${e.message}`);
      return;
    }
    o.failures.push(`${what}: ${(e as Error).message}`);
    o.log(`FAILED ${what}: ${(e as Error).stack ?? String(e)}`);
  }
}
