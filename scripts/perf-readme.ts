/**
 * Rebuilds the performance tables of docs/performance.md (between
 * `<!-- perf:begin -->` and `<!-- perf:end -->`; the README keeps only a
 * summary that links there) from the tables the benchmarks recorded:
 * bench/results/bench.jsonl (`npm run bench`) and bench/results/lab.jsonl
 * (`npm run bench:lab`). Quick smoke tables are skipped; of a table recorded
 * more than once (same suite and title) the last one counts. Nothing in the
 * section is typed by hand.
 *
 *   npm run perf:readme                 # rewrite docs/performance.md
 *   npm run perf:readme -- --check      # exit 1 if docs/performance.md is not up to date
 *
 * A missing or unreadable results file is reported and left out; with no
 * table at all the document is not touched and the exit code is 1.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdown, type BenchTable } from '../bench/report.js';

export const BEGIN = '<!-- perf:begin -->';
export const END = '<!-- perf:end -->';
/** The document holding the generated tables, relative to the repository root. */
export const TARGET = 'docs/performance.md';

/** A table as recorded by bench/report.ts `emit`. */
export interface RecordedTable extends BenchTable {
  readonly machine?: string;
  readonly at?: string;
  readonly command?: string;
  /** The process that recorded it (bench/report.ts): one run of a suite. */
  readonly run?: string;
}

export interface Source {
  /** Path shown in the section, e.g. bench/results/bench.jsonl. */
  readonly file: string;
  /** The command that produces it. */
  readonly command: string;
  /** What it covers, as a heading. */
  readonly heading: string;
  /** The file's text, or undefined when it does not exist. */
  readonly text: string | undefined;
}

/** The in-process suites in the order of the scenarios; others follow in file order. */
const ORDER = ['codec', 'trie', 'policy', 'rib', 'receive', 'speaker-originate', 'kubernetes-planner', 'route-reflector', 'agent-reconcile', 'memory'];

/** JSON lines → tables; a line that is not a table is reported by number and skipped. */
export function parseResults(text: string, file: string): { tables: RecordedTable[]; problems: string[] } {
  const tables: RecordedTable[] = [];
  const problems: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      problems.push(`${file}:${i + 1}: not JSON (${(e as Error).message})`);
      return;
    }
    const t = v as Partial<RecordedTable>;
    if (
      typeof t !== 'object' ||
      t === null ||
      typeof t.suite !== 'string' ||
      typeof t.title !== 'string' ||
      !Array.isArray(t.columns) ||
      !Array.isArray(t.rows)
    ) {
      problems.push(`${file}:${i + 1}: not a benchmark table (needs suite, title, columns, rows)`);
      return;
    }
    tables.push(t as RecordedTable);
  });
  return { tables, problems };
}

/**
 * Full-run tables only: of each suite, the tables of its last run (the run
 * of its last table; a table of another title from an earlier run is gone),
 * the last of each title; suites in scenario order, tables in file order.
 */
export function latestTables(tables: readonly RecordedTable[]): RecordedTable[] {
  const full = tables.filter((t) => !t.quick);
  const lastRun = new Map<string, string | undefined>();
  for (const t of full) lastRun.set(t.suite, t.run);
  const last = new Map<string, { t: RecordedTable; i: number }>();
  full.forEach((t, i) => {
    const run = lastRun.get(t.suite);
    if (run !== undefined && t.run !== run) return;
    const key = `${t.suite}\u0000${t.title}`;
    last.set(key, { t, i: last.get(key)?.i ?? i });
  });
  const rank = (suite: string) => (ORDER.includes(suite) ? ORDER.indexOf(suite) : ORDER.length);
  return [...last.values()].sort((a, b) => rank(a.t.suite) - rank(b.t.suite) || a.i - b.i).map((e) => e.t);
}

/** When and where the tables were measured: "2026-12-03 06:40 – 06:43 UTC, on <machine>". */
function provenance(tables: readonly RecordedTable[]): string {
  const ats = tables
    .map((t) => t.at)
    .filter((x): x is string => typeof x === 'string')
    .sort();
  const machines = [...new Set(tables.map((t) => t.machine).filter((m): m is string => typeof m === 'string'))];
  const minute = (iso: string) => iso.slice(0, 16).replace('T', ' ');
  let when = 'at an unrecorded time';
  if (ats.length > 0) {
    const [a, b] = [minute(ats[0]), minute(ats.at(-1)!)];
    when = a === b ? `${a} UTC` : a.slice(0, 10) === b.slice(0, 10) ? `${a} – ${b.slice(11)} UTC` : `${a} – ${b} UTC`;
  }
  return `${when}, on ${machines.length === 0 ? 'an unrecorded machine' : machines.join('; ')}`;
}

/** The section between the markers (without them). */
export function renderSection(sources: readonly Source[], generator: string): { section: string; problems: string[]; tables: number } {
  const problems: string[] = [];
  const parts: string[] = [
    `Generated by \`${generator}\` from the benchmarks' recorded tables; do not edit by hand. Each ratio is tsbgp / the other, in the unit of its row: for times and memory (s, ms, MB, bytes) below 1 means tsbgp is faster or smaller; for rates (per second: the lookup and check tables) above 1 means tsbgp is faster. Quick smoke runs are not shown.`,
  ];
  let count = 0;
  for (const s of sources) {
    parts.push(`### ${s.heading}`);
    if (s.text === undefined) {
      problems.push(`${s.file} not found: run \`${s.command}\` to measure these; left out`);
      parts.push(`Not measured: \`${s.file}\` was not there when this section was generated (\`${s.command}\` writes it).`);
      continue;
    }
    const parsed = parseResults(s.text, s.file);
    problems.push(...parsed.problems);
    const tables = latestTables(parsed.tables);
    if (tables.length === 0) {
      problems.push(`${s.file} holds no full-run table: run \`${s.command}\``);
      parts.push(`Not measured: \`${s.file}\` holds no full-run table (\`${s.command}\` writes them).`);
      continue;
    }
    count += tables.length;
    parts.push(`Command: \`${s.command}\`. Measured ${provenance(tables)}. Source: \`${s.file}\`.`);
    for (const t of tables) {
      parts.push(markdown(t, 4));
      // Tables from the runner need no command of their own; others (a suite run by hand) say how they were made.
      if (t.command && !t.command.startsWith(s.command)) parts.push(`Made with \`${t.command}\`.`);
    }
  }
  return { section: parts.join('\n\n'), problems, tables: count };
}

/** The document's text with the section between the markers replaced. */
export function replaceSection(readme: string, section: string): string {
  const b = readme.indexOf(BEGIN);
  const e = readme.indexOf(END);
  if (b < 0 || e < 0 || e < b) throw new Error(`no ${BEGIN} … ${END} section`);
  return `${readme.slice(0, b + BEGIN.length)}\n${section}\n${readme.slice(e)}`;
}

export interface RunOptions {
  readonly root: string;
  readonly check?: boolean;
  readonly log?: (line: string) => void;
}

/** The shell: reads the results and docs/performance.md, writes it (or checks it). Returns the exit code. */
export function perfReadme(opts: RunOptions): number {
  const log = opts.log ?? ((l: string) => console.error(l));
  const read = (rel: string) => {
    const p = join(opts.root, rel);
    return existsSync(p) ? readFileSync(p, 'utf8') : undefined;
  };
  const sources: Source[] = [
    { file: 'bench/results/bench.jsonl', command: 'npm run bench', heading: 'In process (`npm run bench`)', text: read('bench/results/bench.jsonl') },
    {
      file: 'bench/results/lab.jsonl',
      command: 'npm run bench:lab',
      heading: 'Against BIRD, FRR and GoBGP in network namespaces (`npm run bench:lab`, as root)',
      text: read('bench/results/lab.jsonl'),
    },
  ];
  const { section, problems, tables } = renderSection(sources, 'npm run perf:readme');
  for (const p of problems) log(`perf-readme: ${p}`);
  if (tables === 0) {
    log(`perf-readme: no benchmark tables found; ${TARGET} left as it is`);
    return 1;
  }
  const readmePath = join(opts.root, TARGET);
  const readme = readFileSync(readmePath, 'utf8');
  let next: string;
  try {
    next = replaceSection(readme, section);
  } catch (e) {
    log(`perf-readme: ${TARGET}: ${(e as Error).message}`);
    return 1;
  }
  if (opts.check) {
    if (next !== readme) {
      log(`perf-readme: ${TARGET} is out of date: run \`npm run perf:readme\``);
      return 1;
    }
    return 0;
  }
  if (next !== readme) writeFileSync(readmePath, next);
  log(`perf-readme: ${TARGET}: ${tables} table(s)${next === readme ? ', unchanged' : ''}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exit(perfReadme({ root: join(fileURLToPath(import.meta.url), '..', '..'), check: process.argv.includes('--check') }));
}
