import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Result of a finished command. */
export interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; never throws for a non-zero exit (callers decide). */
export function run(cmd: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): RunResult {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    env: opts.env ?? process.env,
    input: opts.input,
    timeout: opts.timeoutMs ?? 30_000,
  });
  return { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? (r.error ? String(r.error) : '') };
}

/** Runs a command and throws with its stderr when it fails. */
export function must(cmd: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): string {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** `ip …` that must succeed. */
export function ip(...args: string[]): string {
  return must('ip', args);
}

/** Runs a command inside a network namespace. */
export function nsRun(ns: string, argv: readonly string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): RunResult {
  return run('ip', ['netns', 'exec', ns, ...argv], opts);
}

/** Existing namespace names (`ip netns list` prints "name (id: N)"). */
export function listNamespaces(): string[] {
  const out = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter((n): n is string => !!n);
}

/** True if a process with this pid exists and is not a zombie (signal 0 probes without killing). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // "pid (comm) S …": a killed process stays a zombie until its parent reaps it
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Pids of processes whose network namespace is `ns` (`ip netns pids`). */
export function nsPids(ns: string): number[] {
  const r = run('ip', ['netns', 'pids', ns]);
  if (r.status !== 0) return [];
  return r.stdout
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/** Kills every process in a namespace (TERM, then KILL after a grace period) and deletes it. */
export function destroyNamespace(ns: string, graceMs = 2000): void {
  for (const pid of nsPids(ns)) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  const deadline = Date.now() + graceMs;
  while (nsPids(ns).length > 0 && Date.now() < deadline) sleepSync(50);
  for (const pid of nsPids(ns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  run('ip', ['netns', 'del', ns]);
}

/**
 * A scratch namespace for the kernel FIB tests: loopback up and a veth pair
 * (v0, v1) inside it, both up, with `address` on v0 — so its network is
 * connected and next hops on it resolve.
 */
export function vethNamespace(ns: string, address = '192.0.2.1/24'): void {
  ip('netns', 'add', ns);
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  ip('-n', ns, 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
  ip('-n', ns, 'link', 'set', 'v0', 'up');
  ip('-n', ns, 'link', 'set', 'v1', 'up');
  ip('-n', ns, 'addr', 'add', address, 'dev', 'v0');
}

/**
 * The routes of one protocol (default 12, tsbgp's and BIRD's) in a
 * namespace's table (default main), as prefix → its gateways sorted, or
 * 'blackhole'.
 */
export function protocolRoutes(ns: string, opts: { readonly table?: string; readonly proto?: string } = {}): Record<string, string[] | 'blackhole'> {
  interface Row {
    dst: string;
    type?: string;
    gateway?: string;
    nexthops?: { gateway: string }[];
  }
  const rows = JSON.parse(
    ip('-n', ns, '-j', 'route', 'show', ...(opts.table !== undefined ? ['table', opts.table] : []), 'proto', opts.proto ?? '12') || '[]',
  ) as Row[];
  return Object.fromEntries(rows.map((r) => [r.dst, r.type === 'blackhole' ? 'blackhole' : (r.nexthops?.map((h) => h.gateway) ?? [r.gateway ?? '?']).sort()]));
}

/** Blocking sleep for teardown paths that must run synchronously (exit handlers). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
