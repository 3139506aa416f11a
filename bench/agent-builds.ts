/**
 * What bench/agent-idle.ts and bench/agent-scale.ts share: which agent
 * builds to run (`--entry LABEL=PATH`, `--entry-flags LABEL="FLAGS"`, or this
 * tree's dist/, rebuilt when src/ is newer) and reading a process's memory
 * from /proc.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface AgentEntry {
  readonly label: string;
  /** The compiled CLI (dist/src/agent/main.js of some build). */
  readonly path: string;
  /** Node flags for this entry's agent only (a V8 flag weighed side by side). */
  readonly flags: string[];
}

/**
 * The builds named by `--entry LABEL=PATH` (repeatable; `--entry-flags
 * LABEL="--max-semi-space-size=2 ..."` gives one of them flags of its own).
 * `thisTree` is true when none was named: then this tree's compiled agent is
 * measured, built first when a source file is newer than it.
 */
export function agentEntries(argv: readonly string[] = process.argv): { entries: AgentEntry[]; thisTree: boolean } {
  const entries: { label: string; path: string; flags: string[] }[] = [];
  const flagsFor = new Map<string, string[]>();
  argv.forEach((a, i) => {
    if (a !== '--entry' && a !== '--entry-flags') return;
    const v = argv[i + 1] ?? '';
    const eq = v.indexOf('=');
    if (eq < 1) throw new Error(`${a} wants LABEL=${a === '--entry' ? 'PATH' : 'FLAGS'}, got ${JSON.stringify(v)}`);
    if (a === '--entry-flags')
      flagsFor.set(
        v.slice(0, eq),
        v
          .slice(eq + 1)
          .split(/\s+/)
          .filter(Boolean),
      );
    else entries.push({ label: v.slice(0, eq), path: resolve(v.slice(eq + 1)), flags: [] });
  });
  for (const l of flagsFor.keys()) if (!entries.some((e) => e.label === l)) throw new Error(`--entry-flags ${l}=…: no --entry ${l}=PATH`);
  for (const e of entries) e.flags = flagsFor.get(e.label) ?? [];
  if (entries.length > 0) return { entries, thisTree: false };
  const main = resolve('dist/src/agent/main.js');
  // Measure what `tsbgp` runs: the compiled agent, fresh.
  if (!existsSync(main) || newestMtime('src') > statSync(main).mtimeMs) {
    console.log('dist/ is missing or older than src/: npm run build');
    const b = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
    if (b.status !== 0) throw new Error(`npm run build failed (exit ${b.status})`);
  }
  return { entries: [{ label: 'this tree', path: main, flags: [] }], thisTree: true };
}

function newestMtime(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** A `/proc/PID/status` field in kB (VmRSS, VmHWM). */
export function statusKb(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]);
}
