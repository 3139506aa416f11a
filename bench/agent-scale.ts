/**
 * Agent memory at scale (issue 18): the real `tsbgp agent` process (the
 * compiled CLI, as bin/tsbgp.js runs it) with N Services and their
 * EndpointSlices, from manifest files or through the Kubernetes API (the test
 * API server, test/kubernetes/fake-apiserver.ts, in a process of its own,
 * bench/api-server.ts), peering with a receiver in another process
 * (bench/wire-peer.ts). Once the receiver holds every planned route (the
 * first advertisement) and nothing more arrives for a second, VmRSS is read
 * from /proc/PID/status (median of 5 readings, 200 ms apart); VmHWM is the
 * peak on the way. Nothing forces a GC: this is what the node sees.
 *
 *   node --import tsx bench/agent-scale.ts [--quick] [--runs N] [--cases files:10000,api:10000,files:100000]
 *     [--entry LABEL=PATH/dist/src/agent/main.js]... [--snapshot DIR]
 *
 * --entry-flags LABEL="FLAGS" gives one entry's agent node flags of its own
 * (a V8 flag weighed side by side: the same build with and without it).
 * --entry compares builds side by side in one run, runs interleaved (an
 * older commit's dist/ built in a folder of its own); without it this
 * tree's dist/ is measured (rebuilt when src/ is newer). --snapshot writes a
 * heap snapshot of each agent after the readings (node
 * --heapsnapshot-signal), for bench/heap-summary.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { agentEntries, statusKb } from './agent-builds.js';
import { startApiServer, type ApiServerProcess } from './api-server.js';
import { sleep, until } from './clock.js';
import { clusterObjects, list, serviceList } from './cluster-fixture.js';
import { emit, median } from './report.js';
import { startWirePeer, type WirePeer } from './wire-peer.js';

const quick = process.argv.includes('--quick');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('--runs') ?? (quick ? 1 : 3));
type SourceKind = 'files' | 'api';
const CASES: { source: SourceKind; n: number }[] = (arg('--cases') ?? (quick ? 'files:1000,api:1000' : 'files:10000,api:10000,files:100000'))
  .split(',')
  .map((c) => {
    const [source, n] = c.split(':');
    if ((source !== 'files' && source !== 'api') || !/^\d+$/.test(n ?? ''))
      throw new Error(`--cases wants files:N or api:N, comma-separated; got ${JSON.stringify(c)}`);
    return { source, n: Number(n) };
  });
/** --node-flags "--trace-gc ...": flags for the agent's node (profiling); --agent-log FILE: its stdout and stderr appended there. */
const nodeFlagsArg = (arg('--node-flags') ?? '').split(/\s+/).filter(Boolean);
const agentLog = arg('--agent-log');
const snapshotDir = arg('--snapshot') === undefined ? undefined : resolve(arg('--snapshot')!);
/** Goals (issue 18), MB. */
const goalFor = (n: number) => (n >= 100_000 ? 400 : n >= 10_000 ? 120 : undefined);
const ROUTER = '127.0.0.2';
const PER_FILE = 1000;

const { entries } = agentEntries();

const mb = (kb: number) => (kb * 1024) / 1e6;
/** The process's CPU time so far (user + system, s), from /proc/PID/stat (clock ticks of 1/100 s on Linux). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) in parentheses: utime is the 14th field, stime the 15th.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

interface Run {
  rssMb: number;
  hwmMb: number;
  /** From the start of the process to the last route at the receiver. */
  fullMs: number;
  /** The agent's CPU time (user + system) up to the RSS reading. */
  cpuS: number;
  routes: number;
}

/** The cluster for N Services, where the agent reads it: manifest files, or the test API server. */
interface Cluster {
  args: string[];
  close(): Promise<void>;
}

async function filesCluster(dir: string, n: number, peer: WirePeer): Promise<Cluster> {
  const base = join(dir, 'manifests');
  await mkdir(base);
  await writeFile(join(base, 'cluster.json'), list(clusterObjects({ routerAddress: ROUTER, routerPort: peer.port, routerAsn: 65000, asn: 64512 })));
  for (let f = 0; f * PER_FILE < n; f++)
    await writeFile(join(base, `services-${String(f).padStart(4, '0')}.json`), serviceList(f * PER_FILE, Math.min(n, (f + 1) * PER_FILE), new Set()));
  return { args: ['--manifests', base], close: async () => undefined };
}

async function apiCluster(_dir: string, n: number, peer: WirePeer): Promise<Cluster> {
  const server: ApiServerProcess = await startApiServer(clusterObjects({ routerAddress: ROUTER, routerPort: peer.port, routerAsn: 65000, asn: 64512 }), n, []);
  return { args: ['--kubeconfig', server.kubeconfig], close: () => server.stop() };
}

async function once(entry: string, entryFlags: readonly string[], source: SourceKind, n: number, i: number, snapshotName?: string): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), `tsbgp-scale-${process.pid}-`));
  const peer = await startWirePeer(ROUTER, 65000);
  let cluster: Cluster | undefined;
  let child: ChildProcess | undefined;
  try {
    cluster = await (source === 'files' ? filesCluster : apiCluster)(dir, n, peer);
    // Even Services have a ready endpoint on this node: their /32 is advertised.
    const routes = Math.ceil(n / 2);
    const port = 20_000 + ((process.pid * 7 + i * 13) % 30_000);
    const t0 = performance.now();
    const nodeFlags = [...entryFlags, ...nodeFlagsArg, ...(snapshotName ? ['--heapsnapshot-signal=SIGUSR2'] : [])];
    child = spawn(
      process.execPath,
      [
        ...nodeFlags,
        entry,
        'agent',
        '--node',
        'worker1',
        ...cluster.args,
        '--listen-port',
        String(port),
        '--control',
        join(dir, 'control.sock'),
        '--log-level',
        'warn',
        '--drain-time',
        '0',
      ],
      { stdio: ['ignore', agentLog ? 'pipe' : 'ignore', 'pipe'], cwd: dir },
    );
    if (agentLog) child.stdout!.on('data', (d: Buffer) => appendFileSync(agentLog, d));
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
      if (agentLog) appendFileSync(agentLog, d);
    });
    let exited: string | undefined;
    child.on('exit', (code, sig) => (exited = `exited (${code ?? sig}): ${stderr.trim()}`));
    const alive = () => {
      if (exited) throw new Error(`agent ${exited}`);
      return false;
    };
    await until(`${routes} routes at the receiver`, () => peer.announced() >= routes || alive(), 600_000, 20);
    const fullMs = peer.arrivals.at(-1)!.t - (performance.timeOrigin + t0);
    // Quiet for a second: the first advertisement is over.
    for (let seen = -1; seen !== peer.arrivals.length;) {
      seen = peer.arrivals.length;
      await sleep(1000);
      alive();
    }
    const rss: number[] = [];
    for (let k = 0; k < 5; k++) {
      alive();
      rss.push(statusKb(child.pid!, 'VmRSS'));
      await sleep(200);
    }
    const run = { rssMb: mb(median(rss)), hwmMb: mb(statusKb(child.pid!, 'VmHWM')), fullMs, cpuS: cpuSeconds(child.pid!), routes: peer.announced() };
    if (snapshotName && snapshotDir) {
      child.kill('SIGUSR2');
      // Node writes the snapshot into the agent's folder: done when its size holds still.
      let file: string | undefined;
      for (let k = 0, last = -1; k < 600 && !file; k++) {
        await sleep(1000);
        alive();
        const f = (await readdir(dir)).find((x) => x.endsWith('.heapsnapshot'));
        const size = f ? statSync(join(dir, f)).size : -1;
        if (f && size > 0 && size === last) file = f;
        last = size;
      }
      if (file) {
        await mkdir(snapshotDir, { recursive: true });
        await rename(join(dir, file), join(snapshotDir, `${snapshotName}.heapsnapshot`));
      }
    }
    return run;
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await until('the agent exits', () => child!.exitCode !== null || child!.signalCode !== null, 10_000, 20).catch(() => child!.kill('SIGKILL'));
    }
    await cluster?.close();
    await peer.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const results = new Map<string, Run[]>();
for (const c of CASES) {
  for (let i = 0; i < RUNS; i++) {
    for (const e of entries) {
      const key = `${e.label}|${c.source}:${c.n}`;
      const snap = snapshotDir && i === 0 ? `${e.label}-${c.source}-${c.n}`.replace(/[^\w.-]/g, '_') : undefined;
      const r = await once(e.path, e.flags, c.source, c.n, i, snap);
      console.log(
        `${e.label}, ${c.n} Services (${c.source}): RSS ${r.rssMb.toFixed(1)} MB, peak ${r.hwmMb.toFixed(1)} MB, first advertisement ${(r.fullMs / 1000).toFixed(1)} s, CPU ${r.cpuS.toFixed(2)} s`,
      );
      results.set(key, [...(results.get(key) ?? []), r]);
    }
  }
}

const rows = CASES.flatMap((c) =>
  entries.map((e) => {
    const rs = results.get(`${e.label}|${c.source}:${c.n}`)!;
    return [
      `${c.n.toLocaleString('en-US')} Services, ${c.source === 'files' ? 'manifest files' : 'Kubernetes API'}`,
      e.label,
      Math.round(median(rs.map((r) => r.rssMb)) * 10) / 10,
      Math.round(median(rs.map((r) => r.hwmMb)) * 10) / 10,
      Math.round(median(rs.map((r) => r.fullMs))),
      Math.round(median(rs.map((r) => r.cpuS)) * 100) / 100,
      goalFor(c.n) ?? '',
    ];
  }),
);
emit({
  suite: 'agent-scale',
  title: 'Agent memory at scale: RSS after the first advertisement',
  columns: ['cluster', 'build', 'RSS (MB, median)', 'peak RSS, VmHWM (MB)', 'start to last route (ms)', 'agent CPU, user + system (s)', 'goal (MB)'],
  rows,
  notes: [
    `\`tsbgp agent --node worker1 --manifests DIR\` or \`--kubeconfig FILE\` (the compiled CLI: ${entries.map((e) => `${e.label}: ${[...e.flags, e.path].join(' ')}`).join('; ')}), a fresh process per run, ${RUNS} run${RUNS === 1 ? '' : 's'} per case${entries.length > 1 ? ', interleaved across builds' : ''}. N Services of type LoadBalancer (eTP Local) with one EndpointSlice each, half with a ready endpoint on the node (N/2 /32s advertised); files hold 1,000 Services each; the API is the test API server in its own process. RSS: median of 5 VmRSS readings, 200 ms apart, once the receiver holds every route and a second passed without an UPDATE. Agent CPU: user + system time from /proc/PID/stat at that reading (start-up, load, plan, advertisement, the quiet second). MB = 10^6 bytes.`,
  ],
});
