/**
 * Benchmark programs compiled to plain JavaScript, as a deployment runs
 * tsbgp (the image runs tsc's output with plain node): tsc without a type
 * check (`npm run typecheck` does that) writes each entry and what it
 * imports under dist/<out>. Through the tsx loader a process carries ~30 MB
 * more RSS (the loader, source maps, and a property store on every closure
 * from esbuild's keep-names helper: ~6 KB more heap per idle session at a
 * route reflector, bench/idle-sessions.ts), which is not tsbgp's.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const done = new Map<string, string[]>();

/**
 * Compiles `entries` (paths inside `root`, default this checkout) into
 * `root`/dist/`out` once per process; returns the compiled path of each.
 */
export function compileBench(entries: readonly string[], out: string, root = ROOT): string[] {
  const key = JSON.stringify([root, out, entries]);
  const hit = done.get(key);
  if (hit) return hit;
  const outDir = join(root, 'dist', out);
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    '--noCheck',
    '--skipLibCheck',
    '--outDir',
    outDir,
    '--rootDir',
    root,
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--types',
    'node',
    ...entries,
  ];
  const r = spawnSync(process.execPath, [tsc, ...args], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) throw new Error(`compiling ${entries.map((e) => relative(root, e)).join(', ')} failed: ${r.stdout}${r.stderr}`);
  const js = entries.map((e) => join(outDir, relative(root, e)).replace(/\.ts$/, '.js'));
  done.set(key, js);
  return js;
}

/**
 * The node flags the deployment gives the agent (deploy/daemonset.yaml's
 * NODE_OPTIONS), so that the benchmarks run tsbgp as it is deployed; a
 * benchmark's own flags (TSBGP_NODE_ARGS) come after them and win.
 */
export function deployedNodeFlags(root = ROOT): string[] {
  const file = join(root, 'deploy', 'daemonset.yaml');
  if (!existsSync(file)) return [];
  const ds = parse(readFileSync(file, 'utf8')) as { spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } } };
  const v = ds.spec.template.spec.containers[0].env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
  return v?.split(' ').filter(Boolean) ?? [];
}
