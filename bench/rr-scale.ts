/**
 * Calico at scale: a cluster of N nodes (1,000) with R in-cluster route
 * reflectors (3), set up as Calico's documentation prescribes (mesh off, the
 * reflectors labelled route-reflector=true with one cluster ID, one BGPPeer
 * nodeSelector all(), peerSelector route-reflector == 'true'), over real TCP
 * on 127.0.x.y. Each reflector is a tsbgp speaker in its own process,
 * configured from the planner's plan for that node (src/kubernetes plan() →
 * src/kubernetes/reconcile.ts peerOptions: the reverse peerings to every client,
 * the other reflectors as non-clients, its cluster ID, its pod block). The
 * N − R clients are tsbgp speakers, many per process (bench/speaker-farm.ts),
 * each peered with every reflector and originating its pod block.
 *
 *   node --expose-gc --import tsx bench/rr-scale.ts [--quick] [--nodes 1000] [--reflectors 3] [--probes 50] [--impl tsbgp,bird] [--before DIR --impl tsbgp-before,tsbgp]
 *
 * `--impl` picks who plays the reflectors, one scenario each with fresh
 * clients, side by side in one table: tsbgp, bird (BIRD 2), frr (FRR's bgpd
 * without zebra, run as user frr), and tsbgp-before: the reflectors of
 * another checkout (`--before DIR`, e.g. a worktree of main) with this
 * checkout's clients, to compare two builds of the reflector in one run.
 *
 * Addresses: as root the run re-executes itself inside a namespace of its own
 * (`tsbgp-<pid>-rrscale`, never linked to the host, deleted at the end) where
 * 198.19.0.0/16 is local (an AnyIP route on lo): reflectors 198.19.2.x,
 * clients 198.19.3.1 onwards. FRR needs that: bgpd treats any 127/8 next hop
 * as a martian and answers a client's first UPDATE with NOTIFICATION 3/8
 * (Invalid NEXT_HOP), which is why its sessions never stayed up on 127/8 (its
 * log says "Martian nexthop 127.0.3.1"; FRR 8.4 has no switch for it). Not as
 * root, tsbgp and BIRD run on 127.0.x.y as before, and FRR is refused.
 *
 * Measures: all sessions up; from the first block originated until every
 * client holds every other node's block from every reflector; one new /32
 * from a client until every other client holds it (p50/p99 of the probes);
 * each reflector's RSS and CPU, per client; then the same probes with one
 * reflector killed (SIGKILL) and every client's blocks still held.
 */
import { fork, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peerOptions } from '../src/kubernetes/reconcile.js';
import { plan, stateOf, validateObject, type Resource } from '../src/kubernetes/index.js';
import { BgpSpeaker } from '../src/speaker/speaker.js';
import { epochMs, sleep, until } from './clock.js';
import { emit, median, percentile } from './report.js';
import { cpuShare, NOISE_FLOOR, rotate, verdict } from './rounds.js';
import { compileBench, deployedNodeFlags } from './compile.js';
import { startFarm, type Farm, type FarmStart } from './speaker-farm.js';

const ASN = 63400;
const PORT = 17900;
const CLUSTER_ID = '244.0.0.1';

/** The pid of the outer run (the namespace's and FRR pathspaces' names carry it). */
const RUN_ID = process.env.RR_SCALE_RUN ?? String(process.pid);
/** The first two octets of every address: 198.19 inside the run's own namespace, 127.0 outside it. */
const NET = process.argv.includes('--in-netns') ? '198.19' : '127.0';
const reflectorAddress = (i: number) => `${NET}.2.${i + 1}`;
/** Client k (0-based) of the cluster: NET.3.1 onwards, 250 per /24. */
const clientAddress = (k: number) => `${NET}.${3 + Math.floor(k / 250)}.${(k % 250) + 1}`;
/** Node j's pod block: a /26 in 198.18.0.0/16 (1,024 of them). */
const block = (j: number) => `198.18.${(j * 64) >> 8}.${(j * 64) & 255}/26`;

/** The cluster's resources, as the agent would read them (validated like manifests). */
export function clusterResources(nodes: number, reflectors: number): Resource[] {
  const raw: unknown[] = [
    {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPConfiguration',
      metadata: { name: 'default' },
      spec: { logSeverityScreen: 'Info', nodeToNodeMeshEnabled: false, asNumber: ASN, listenPort: PORT },
    },
    {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPPeer',
      metadata: { name: 'peer-with-route-reflectors' },
      spec: { nodeSelector: 'all()', peerSelector: "route-reflector == 'true'" },
    },
    { apiVersion: 'projectcalico.org/v3', kind: 'IPPool', metadata: { name: 'pods' }, spec: { cidr: '198.18.0.0/16', blockSize: 26 } },
  ];
  for (let j = 0; j < nodes; j++) {
    const rr = j < reflectors;
    const name = rr ? `rr${j + 1}` : `node${j - reflectors + 1}`;
    const ip = rr ? reflectorAddress(j) : clientAddress(j - reflectors);
    raw.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: rr ? { 'route-reflector': 'true' } : {}, annotations: rr ? { 'projectcalico.org/RouteReflectorClusterID': CLUSTER_ID } : {} },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
    raw.push({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'BlockAffinity',
      metadata: { name: `${name}-block` },
      spec: { node: name, cidr: block(j), state: 'confirmed', deleted: 'false' },
    });
  }
  return raw.map((r) => {
    const v = validateObject(r, 'rr-scale');
    if (!v.ok) throw new Error(`rr-scale: ${JSON.stringify(v.issue)}`);
    return v.resource;
  });
}

// ------------------------------------------------------------ a reflector process

type RCmd = { cmd: 'start'; index: number; nodes: number; reflectors: number; coalesceMs?: number } | { cmd: 'usage' } | { cmd: 'watch'; range: string };
type RReply =
  | { type: 'ready'; peers: number; clients: number }
  | { type: 'usage'; rss: number; heap: number; cpuMs: number; groups: number }
  | { type: 'watching' }
  | { type: 'error'; message: string };

function runReflector(): void {
  const send = (r: RReply) => void process.send?.(r);
  let speaker: BgpSpeaker | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on(
    'message',
    (c: RCmd) =>
      void (async () => {
        if (c.cmd === 'start') {
          const p = plan(stateOf(clusterResources(c.nodes, c.reflectors)), `rr${c.index + 1}`);
          if (p.errors.length > 0) throw new Error(p.errors.map((e) => e.message).join('; '));
          speaker = new BgpSpeaker({
            asn: p.node.asn,
            routerId: p.node.ipv4!.toString(),
            clusterId: p.node.routeReflectorClusterId,
            coalesceMs: c.coalesceMs,
            listen: { addresses: [p.node.ipv4!.toString()], port: p.listen.port },
          });
          // The farm's clients dial and do not listen: the reflector waits for them (the plan has it dial, as the lower IP).
          for (const peer of p.peers) speaker.addPeer({ ...peerOptions(peer), passive: peer.remoteNode?.startsWith('node') ?? false, connectRetryTime: 1 });
          for (const r of p.routes) speaker.originate(r.prefix, {});
          await speaker.start();
          return send({ type: 'ready', peers: p.peers.length, clients: p.peers.filter((x) => x.routeReflectorClient).length });
        }
        if (c.cmd === 'usage') {
          gc?.();
          const m = process.memoryUsage();
          const u = process.cpuUsage();
          // The RIB's update groups (private to the speaker; read here to show that all clients share one).
          const groups = (speaker as unknown as { rib?: { groupCount: number } } | undefined)?.rib?.groupCount ?? -1;
          return send({ type: 'usage', rss: m.rss, heap: m.heapUsed + m.external, cpuMs: (u.user + u.system) / 1000, groups });
        }
      })().catch((e: Error) => send({ type: 'error', message: e.message })),
  );
  const quit = () => void (speaker?.stop() ?? Promise.resolve()).finally(() => process.exit(0));
  process.on('disconnect', quit);
  process.on('SIGTERM', quit);
}

/** One reflector, whoever plays it: started, measured (RSS and CPU of its process), killed. */
interface Reflector {
  readonly address: string;
  /** Its process (to read its CPU time from /proc without asking it). */
  pid(): number;
  start(): Promise<{ clients: number }>;
  /** RSS of its process (tsbgp: after a full GC); for tsbgp also the number of update groups in its RIB. */
  usage(): Promise<{ rss: number; groups?: number }>;
  /** User+system CPU of its process so far (ms), from /proc: no message to it, no GC. */
  cpuMs(): number;
  kill(): void;
  stop(): Promise<void>;
  /** What the reflector itself says when the clients do not converge (FRR: `show bgp summary`, and `show bgp neighbors` of the first `short` client), or undefined. */
  diagnose?(short: readonly string[]): string | undefined;
}

function tsbgpReflector(
  index: number,
  nodes: number,
  reflectors: number,
  root = fileURLToPath(new URL('..', import.meta.url)),
  coalesceMs?: number,
): Reflector {
  // Plain JavaScript, as the agent runs (bench/compile.ts): under the tsx loader a reflector carried ~35 MB more.
  const [script] = compileBench([join(root, 'bench', 'rr-scale.ts')], 'rr-scale', root);
  const child = fork(script, ['--reflector', ...process.argv.filter((a) => a === '--in-netns')], {
    // RR_SCALE_CPU_PROF=<folder>: a V8 CPU profile of each tsbgp reflector (written when it stops).
    // The node flags of that checkout's deployment (deploy/daemonset.yaml), then TSBGP_NODE_ARGS.
    execArgv: [
      '--expose-gc',
      ...deployedNodeFlags(root),
      ...(process.env.RR_SCALE_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.RR_SCALE_CPU_PROF] : []),
      ...(process.env.TSBGP_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<string, ((r: RReply) => void)[]>();
  let failure: string | undefined;
  child.on('message', (r: RReply) => {
    if (r.type === 'error') failure = r.message;
    waiting.get(r.type)?.shift()?.(r);
  });
  const ask = <T extends RReply['type']>(cmd: RCmd, reply: T) =>
    new Promise<Extract<RReply, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reflector ${index + 1}: no ${reply} within 120 s${failure ? ` (${failure})` : ''}`)), 120_000);
      const q = waiting.get(reply) ?? [];
      q.push((r) => (clearTimeout(timer), resolve(r as Extract<RReply, { type: T }>)));
      waiting.set(reply, q);
      child.send(cmd);
    });
  return {
    address: reflectorAddress(index),
    pid: () => child.pid!,
    start: async () => ({ clients: (await ask({ cmd: 'start', index, nodes, reflectors, coalesceMs }, 'ready')).clients }),
    usage: async () => await ask({ cmd: 'usage' }, 'usage'),
    cpuMs: () => procUsage(child.pid!).cpuMs,
    kill: () => void child.kill('SIGKILL'),
    stop: async () => void child.kill('SIGTERM'),
  };
}

/** RSS and user+system CPU of a process, from /proc. */
function procUsage(pid: number): { rss: number; cpuMs: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
  return { rss, cpuMs: (ticks * 1000) / 100 };
}

/** Kills every daemon this run started, also when the run is interrupted. */
const daemons = new Set<() => void>();
const killDaemons = () => {
  for (const k of daemons) k();
  daemons.clear();
};
process.on('exit', killDaemons);
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => (killDaemons(), process.exit(130)));

/** FRR's pathspace (a folder under /var/run/frr) of reflector `index` in this run: named so the lab's stale cleanup knows it. */
const frrPathspace = (index: number) => `tsbgp-${RUN_ID}-rrscale${index + 1}`;

/** A daemon reflector (BIRD 2 or FRR's bgpd) on the reflector's address, configured as Calico would configure BIRD for it. */
function daemonReflector(kind: 'bird' | 'frr', index: number, reflectors: number, dir: string): Reflector {
  const address = reflectorAddress(index);
  const others = Array.from({ length: reflectors }, (_, i) => reflectorAddress(i)).filter((a) => a !== address);
  const work = join(dir, `${kind}-rr${index + 1}`);
  mkdirSync(work, { recursive: true });
  const pidFile = join(work, `${kind}.pid`);
  let pid = 0;
  // Clients are NET.3.1 onwards: two dynamic ranges cover NET.3.0/24 and NET.4.0/22.
  const ranges = [`${NET}.3.0/24`, `${NET}.4.0/22`];
  if (kind === 'bird') {
    const conf = [
      `router id ${address};`,
      'protocol device {}',
      `protocol static { ipv4; route ${block(index)} blackhole; }`,
      `template bgp rrbase { local ${address} port ${PORT} as ${ASN}; strict bind yes; connect retry time 1; graceful restart on; rr cluster id ${CLUSTER_ID}; ipv4 { import all; export all; }; }`,
      ...ranges.map((r, i) => `protocol bgp clients${i} from rrbase { neighbor range ${r} as ${ASN}; dynamic name "c${i}_"; rr client; passive on; }`),
      ...others.map((o, i) => `protocol bgp rr${i} from rrbase { neighbor ${o} port ${PORT} as ${ASN}; }`),
    ].join('\n');
    writeFileSync(join(work, 'bird.conf'), conf + '\n');
    const r = spawnSync('bird', ['-c', join(work, 'bird.conf'), '-s', join(work, 'bird.ctl'), '-P', pidFile], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bird: ${r.stderr}`);
  } else {
    const conf = [
      'frr defaults traditional',
      `hostname rr${index + 1}`,
      `log file ${join(work, 'bgpd.log')} informational`,
      ...(process.env.RR_SCALE_FRR_DEBUG ? ['debug bgp neighbor-events'] : []),
      `router bgp ${ASN}`,
      ` bgp router-id ${address}`,
      ' bgp log-neighbor-changes',
      ` bgp cluster-id ${CLUSTER_ID}`,
      ' no bgp default ipv4-unicast',
      ' no bgp network import-check',
      ' bgp graceful-restart',
      ' bgp listen limit 5000',
      ' neighbor clients peer-group',
      ` neighbor clients remote-as ${ASN}`,
      ...ranges.map((r) => ` bgp listen range ${r} peer-group clients`),
      ...others.flatMap((o) => [` neighbor ${o} remote-as ${ASN}`, ` neighbor ${o} port ${PORT}`, ` neighbor ${o} update-source ${address}`]),
      ' address-family ipv4 unicast',
      `  network ${block(index)}`,
      '  neighbor clients activate',
      '  neighbor clients route-reflector-client',
      ...others.map((o) => `  neighbor ${o} activate`),
      ' exit-address-family',
    ].join('\n');
    writeFileSync(join(work, 'frr.conf'), conf + '\n');
    spawnSync('chown', ['-R', 'frr:frr', work]);
    const r = spawnSync(
      '/usr/lib/frr/bgpd',
      [
        '-d',
        '-Z',
        '-N',
        frrPathspace(index),
        '-f',
        join(work, 'frr.conf'),
        '-i',
        pidFile,
        '-l',
        address,
        '-p',
        String(PORT),
        '--vty_socket',
        work,
        '-A',
        '127.0.0.1',
        '-P',
        '0',
      ],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`bgpd: ${r.stderr || r.stdout}`);
  }
  const readPid = () => (pid ||= Number(readFileSync(pidFile, 'utf8').trim()));
  daemons.add(() => {
    try {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
    } catch {
      // gone already
    }
  });
  return {
    address,
    pid: readPid,
    start: async () => {
      await until(`${kind} rr${index + 1} pid file`, () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 10_000, 20);
      readPid();
      return { clients: -1 };
    },
    usage: async () => procUsage(readPid()),
    cpuMs: () => procUsage(readPid()).cpuMs,
    kill: () => void process.kill(readPid(), 'SIGKILL'),
    diagnose: (short) => {
      if (kind !== 'frr') return undefined;
      const r = spawnSync('vtysh', ['--vty_socket', work, '-d', 'bgpd', '-c', 'show bgp ipv4 unicast summary', '-c', 'show bgp update-groups statistics'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
      writeFileSync(join(work, 'diagnose.txt'), out);
      if (short.length > 0) {
        const n = spawnSync(
          'vtysh',
          ['--vty_socket', work, '-d', 'bgpd', '-c', `show bgp neighbors ${short[0]}`, '-c', `show bgp neighbors ${short[0]} advertised-routes`],
          { encoding: 'utf8', timeout: 30_000 },
        );
        // The TCP connections between that client and this reflector, with their owners (the run's own namespace).
        const filter = `( src ${short[0]} and dst ${address} ) or ( src ${address} and dst ${short[0]} )`;
        const ss = spawnSync('ss', ['-tnpH', filter], { encoding: 'utf8' });
        const text = `${n.stdout ?? ''}${n.stderr ?? ''}\n--- ss -tnp ${filter}\n${ss.stdout ?? ''}${ss.stderr ?? ''}`;
        writeFileSync(join(work, 'diagnose-short.txt'), text);
        console.error(
          `rr-scale frr rr${index + 1} on short client ${short[0]}: ${text
            .split('\n')
            .filter((l) => /BGP state|Update group|Last reset|Prefix|Outq|Inq|Total number|Established|Sent|Rcvd/.test(l))
            .slice(0, 30)
            .map((l) => l.trim())
            .join(' | ')}`,
        );
      }
      const lines = out.split('\n');
      // The summary's header, then the neighbours' lines grouped by their PfxSnt (last-but-one column) and state/PfxRcd.
      const neighbours = lines.filter((l) => /^\*?\d+\.\d+\.\d+\.\d+\s/.test(l));
      const bySent = new Map<string, number>();
      for (const l of neighbours) {
        const f = l.trim().split(/\s+/);
        const key = `State/PfxRcd ${f[9]} PfxSnt ${f[10]}`;
        bySent.set(key, (bySent.get(key) ?? 0) + 1);
      }
      return `${kind} rr${index + 1}: ${neighbours.length} neighbours; ${[...bySent].map(([k, n]) => `${n}× ${k}`).join(', ')}; header: ${lines.slice(0, 12).join(' | ')} (all in ${join(work, 'diagnose.txt')})`;
    },
    stop: async () => {
      try {
        process.kill(readPid(), 'SIGTERM');
      } catch {
        // already gone (killed by the scenario)
      }
      if (kind === 'frr') rmSync(join('/var/run/frr', frrPathspace(index)), { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------ the run

type Impl = 'tsbgp' | 'tsbgp-before' | 'bird' | 'frr';

/** `--before DIR`: another checkout of tsbgp (e.g. main) whose bench/rr-scale.ts plays the reflectors as `tsbgp-before`, with this checkout's clients. */
const BEFORE = (() => {
  const i = process.argv.indexOf('--before');
  return i > 0 ? process.argv[i + 1] : undefined;
})();

/**
 * The quiet rule: the probes start once the client farm and the reflectors
 * together have used less than QUIET_SHARE of one core over the last
 * QUIET_WINDOW_MS (user+system CPU of their processes, from /proc, read every
 * 100 ms), or after QUIET_MAX_MS regardless (the result says which). Idle,
 * 997 clients and 3 reflectors use about 1 % (keepalives); converging, they
 * use both cores. CPU time, unlike wall clock, is not inflated by other work
 * on the machine, so the rule holds under load.
 */
const QUIET_WINDOW_MS = 1000;
const QUIET_SHARE = 0.05;
const QUIET_MAX_MS = 60_000;

interface Quiet {
  /** Waited for the rule (ms). */
  readonly ms: number;
  /** Whether the rule was met (else QUIET_MAX_MS ran out). */
  readonly quiet: boolean;
  /** CPU share of one core over the last window when the wait ended. */
  readonly share: number;
}

async function waitQuiet(cpuMs: () => number): Promise<Quiet> {
  const t0 = performance.now();
  const samples: { t: number; c: number }[] = [];
  for (;;) {
    const t = performance.now();
    samples.push({ t, c: cpuMs() });
    const share = cpuShare(samples, QUIET_WINDOW_MS);
    if (share !== undefined && (share < QUIET_SHARE || t - t0 > QUIET_MAX_MS)) return { ms: t - t0, quiet: share < QUIET_SHARE, share };
    await sleep(100);
  }
}

interface Result {
  upMs: number;
  convergeMs: number;
  reach: number[];
  rss: number;
  /** Largest growth of a reflector's RSS from before any client to converged. */
  rssGrowth: number;
  cpuUpMs: number;
  cpuConvergeMs: number;
  cpuProbesMs: number;
  /** The remaining reflectors' CPU during the probes with one killed, largest. */
  cpuKilledProbesMs: number;
  /** User+system CPU of all the client farm processes together, per phase (the same clients serve every implementation). */
  farmCpuUpMs: number;
  farmCpuConvergeMs: number;
  farmCpuProbesMs: number;
  /** The farm's CPU during the probes with all reflectors only (after the quiet wait and the settling). */
  farmCpuProbesOnlyMs?: number;
  /** Per probe with all reflectors: when the first other client held it, and when half of them did (ms after it was originated). */
  reachFirst?: number[];
  reachHalf?: number[];
  /** How the clients' sessions came up, all farm processes together (TCP connections opened, sessions dialled more than once, the longest event-loop stall). */
  farmStart: FarmStart;
  /** The wait for the quiet rule before the probes with all reflectors, and before those with one killed. */
  quiet: Quiet;
  quietKilled: Quiet;
  /** Update groups in each tsbgp reflector, converged (undefined for the daemons). */
  groups: (number | undefined)[];
  afterKillMs: number;
  /** Until every client had seen its session to the killed reflector go down (the probes start after it). */
  lossSeenMs: number;
  reachKilled: number[];
}

interface Options {
  nodes: number;
  reflectors: number;
  probes: number;
  perProcess: number;
  /** The clients' connect-retry time (s). */
  connectRetry: number;
  /** The tsbgp reflectors' coalescing window (ms; undefined: the speaker's default). */
  reflectorCoalesceMs?: number;
  /** A fixed wait after the quiet rule, before each series of probes, the same for every implementation (ms). */
  settleMs: number;
  dir: string;
}

/** One run of the scenario with the reflector role played by `impl`, fresh clients. */
async function scenario(impl: Impl, o: Options): Promise<Result> {
  const { nodes: NODES, reflectors: R, probes: PROBES, perProcess: PER_PROCESS } = o;
  const CLIENTS = NODES - R;
  const reflectors = Array.from({ length: R }, (_, i) =>
    impl === 'tsbgp'
      ? tsbgpReflector(i, NODES, R, undefined, o.reflectorCoalesceMs)
      : impl === 'tsbgp-before'
        ? tsbgpReflector(i, NODES, R, BEFORE!)
        : daemonReflector(impl, i, R, o.dir),
  );
  const farms: Farm[] = [];
  const clients = Array.from({ length: CLIENTS }, (_, k) => clientAddress(k));
  try {
    const step = (what: string) => console.error(`rr-scale ${impl}: ${what}`);
    const ready = await Promise.all(reflectors.map((r) => r.start()));
    step('reflectors started');
    for (const [i, r] of ready.entries())
      if (impl.startsWith('tsbgp') && r.clients !== CLIENTS) throw new Error(`reflector ${i + 1} planned ${r.clients} clients, expected ${CLIENTS}`);
    // Memory (tsbgp: after a full GC in the reflector) only before any client and once converged; CPU per phase from /proc,
    // read before any GC, so that no measurement adds a GC to a phase or leaves its aftermath in the probes.
    const idle = await Promise.all(reflectors.map((r) => r.usage()));
    const cpuIdle = reflectors.map((r) => r.cpuMs());
    for (let p = 0; p * PER_PROCESS < CLIENTS; p++) farms.push(startFarm(clients.slice(p * PER_PROCESS, (p + 1) * PER_PROCESS)));
    const targets = reflectors.map((r) => ({ address: r.address, port: PORT }));
    const farmCpu = () => farms.reduce((sum, f) => sum + procUsage(f.pid).cpuMs, 0);
    const farmIdle = farmCpu();

    const t0 = performance.now();
    const started = await Promise.all(farms.map((f) => f.start(ASN, targets, o.connectRetry)));
    const upMs = performance.now() - t0;
    const farmStart: FarmStart = {
      dials: started.reduce((a, s) => a + s.dials, 0),
      redialled: started.reduce((a, s) => a + s.redialled, 0),
      redialledClients: started.flatMap((s) => s.redialledClients),
      maxLoopStallMs: Math.max(...started.map((s) => s.maxLoopStallMs)),
    };
    step(
      `sessions up in ${Math.round(upMs)} ms; ${farmStart.dials} TCP connections for ${CLIENTS * R} sessions, ${farmStart.redialled} sessions dialled more than once` +
        `${farmStart.redialled ? ` (clients ${farmStart.redialledClients.slice(0, 20).join(' ')}${farmStart.redialledClients.length > 20 ? ' …' : ''})` : ''}; longest farm event-loop stall ${Math.round(farmStart.maxLoopStallMs)} ms`,
    );
    const cpuUp = reflectors.map((r) => r.cpuMs());
    const farmUp = farmCpu();

    // Every client originates its block; done when every client holds the other N − 1 from every reflector.
    const t1 = performance.now();
    await Promise.all(
      farms.map(async (f, p) => {
        for (let c = 0; c < f.clients.length; c++) await f.originate(c, [block(R + p * PER_PROCESS + c)]);
      }),
    );
    try {
      await Promise.all(farms.map((f) => f.sync(NODES - 1)));
    } catch (e) {
      const short =
        /short clients: ([^;]*)/
          .exec((e as Error).message)?.[1]
          .split(' ')
          .filter((a) => /^\d/.test(a)) ?? [];
      for (const r of reflectors) {
        const d = r.diagnose?.(short);
        if (d) console.error(`rr-scale ${impl}: not converged: ${d}`);
      }
      throw e;
    }
    const convergeMs = performance.now() - t1;
    step(`converged in ${Math.round(convergeMs)} ms`);
    const cpuConverged = reflectors.map((r) => r.cpuMs());
    const converged = await Promise.all(reflectors.map((r) => r.usage()));
    const farmConverged = farmCpu();
    // Every client process collects convergence's garbage now (a full GC), the same for every implementation, so that
    // the probes measure propagation through a settled cluster rather than when V8 chose to collect it.
    await Promise.all(farms.map((f) => f.memory()));

    const arrivals = new Map<string, number[]>();
    // Per probe and farm process, the last arrival there (which process finishes last, if the reflectors' write order favours some).
    const lastByFarm = new Map<string, number[]>();
    await Promise.all(
      farms.map((f, p) =>
        f.watch('203.0.113.', (prefix, _c, t) => {
          arrivals.get(prefix)?.push(t);
          const l = lastByFarm.get(prefix);
          if (l !== undefined) l[p] = Math.max(l[p], t);
        }),
      ),
    );
    const firsts: number[] = [];
    const halves: number[] = [];
    const probe = async (k: number): Promise<number> => {
      const prefix = `203.0.113.${k + 1}/32`;
      arrivals.set(prefix, []);
      lastByFarm.set(
        prefix,
        farms.map(() => 0),
      );
      const f = farms[k % farms.length];
      const t = await f.originate(k % f.clients.length, [prefix]);
      await until(`${prefix} at ${CLIENTS - 1} clients`, () => arrivals.get(prefix)!.length >= CLIENTS - 1, 30_000, 1);
      await sleep(20);
      const got = arrivals
        .get(prefix)!
        .map((x) => x - t)
        .sort((a, b) => a - b);
      if (process.env.RR_SCALE_FARM_ORDER)
        console.error(
          `rr-scale probe ${k}: last arrival per farm process (ms): ${lastByFarm
            .get(prefix)!
            .map((x) => Math.round(x - t))
            .join(' ')}`,
        );
      firsts.push(got[0]);
      halves.push(got[Math.floor(got.length / 2)]);
      return got[got.length - 1];
    };
    // The probes measure propagation through a settled cluster, not the clients' tail of converging.
    const allCpu = (rs: readonly Reflector[]) => () => farmCpu() + rs.reduce((sum, r) => sum + procUsage(r.pid()).cpuMs, 0);
    const quiet = await waitQuiet(allCpu(reflectors));
    step(
      `quiet after ${Math.round(quiet.ms)} ms (${(quiet.share * 100).toFixed(1)} % of a core over the last second${quiet.quiet ? '' : ', NOT below the rule'})${o.settleMs ? `; settling ${o.settleMs / 1e3} s more` : ''}`,
    );
    await sleep(o.settleMs);
    const beforeProbes = reflectors.map((r) => r.cpuMs());
    const farmBeforeProbes = farmCpu();
    const reach: number[] = [];
    for (let k = 0; k < PROBES + 2; k++) {
      const ms = await probe(k);
      if (k >= 2) reach.push(ms);
    }
    step(`probes with ${R} reflectors, in order (ms): ${reach.map((x) => Math.round(x)).join(' ')}`);
    const probed = reflectors.map((r) => r.cpuMs());
    const farmProbed = farmCpu();
    const reachFirst = firsts.slice(2);
    const reachHalf = halves.slice(2);
    step(
      `↳ first other client / half of them held it (ms): ${reachFirst.map((x, i) => `${Math.round(x)}/${Math.round(reachHalf[i])}`).join(' ')}; farm CPU for these probes ${farmProbed - farmBeforeProbes} ms`,
    );

    // One reflector killed: the clients keep every block (from the others) and new routes still reach all.
    reflectors[R - 1].kill();
    const tk = performance.now();
    const remaining = reflectors.slice(0, R - 1);
    await Promise.all(
      farms.map((f) =>
        f.sync(
          NODES - 1,
          remaining.map((r) => r.address),
        ),
      ),
    );
    const afterKillMs = performance.now() - tk;
    // Probes measure the cluster with two reflectors, not the clients' handling of the loss: wait until every
    // client has seen its session to the dead reflector go down and the cluster is quiet, and leave out two warm-up probes as above.
    await Promise.all(
      farms.map((f) =>
        f.sync(
          NODES - 1,
          remaining.map((r) => r.address),
          [reflectors[R - 1].address],
        ),
      ),
    );
    const lossSeenMs = performance.now() - tk;
    const quietKilled = await waitQuiet(allCpu(remaining));
    await sleep(o.settleMs);
    const beforeKilledProbes = remaining.map((r) => r.cpuMs());
    const killedAll: number[] = [];
    for (let k = PROBES + 2; k < 2 * PROBES + 4; k++) killedAll.push(await probe(k));
    const reachKilled = killedAll.slice(2);
    const killedProbed = remaining.map((r) => r.cpuMs());
    step(
      `one reflector killed: blocks checked after ${Math.round(afterKillMs)} ms, every client saw the loss after ${Math.round(lossSeenMs)} ms, quiet ${Math.round(quietKilled.ms)} ms later; probes in order, 2 warm-up first (ms): ${killedAll.map((x) => Math.round(x)).join(' ')}`,
    );

    const worst = (xs: number[]) => Math.max(...xs);
    return {
      upMs,
      convergeMs,
      reach,
      rss: worst(converged.map((u) => u.rss)),
      rssGrowth: worst(converged.map((u, i) => u.rss - idle[i].rss)),
      cpuUpMs: worst(cpuUp.map((c, i) => c - cpuIdle[i])),
      cpuConvergeMs: worst(cpuConverged.map((c, i) => c - cpuUp[i])),
      cpuProbesMs: worst(probed.map((c, i) => c - beforeProbes[i])),
      cpuKilledProbesMs: worst(killedProbed.map((c, i) => c - beforeKilledProbes[i])),
      farmCpuUpMs: farmUp - farmIdle,
      farmCpuConvergeMs: farmConverged - farmUp,
      farmCpuProbesMs: farmProbed - farmConverged,
      farmCpuProbesOnlyMs: farmProbed - farmBeforeProbes,
      reachFirst,
      reachHalf,
      farmStart,
      quiet,
      quietKilled,
      groups: converged.map((u) => u.groups),
      afterKillMs,
      lossSeenMs,
      reachKilled,
    };
  } finally {
    await Promise.all(farms.map((f) => f.stop()));
    await Promise.all(reflectors.map((r) => r.stop()));
    await sleep(500);
  }
}

/** One round: every implementation once, in `order`, with the machine's load average (as `uptime` shows it) at its start and end. */
export interface Round {
  readonly round: number;
  readonly order: readonly Impl[];
  readonly startedAt: string;
  readonly loadStart: readonly number[];
  readonly loadEnd: readonly number[];
  readonly results: Partial<Record<Impl, Result | { error: string }>>;
  readonly setup: {
    nodes: number;
    reflectors: number;
    probes: number;
    perProcess: number;
    connectRetry: number;
    reflectorCoalesceMs?: number;
    settleMs?: number;
  };
}

const ok = (r: Result | { error: string } | undefined): r is Result => r !== undefined && !('error' in r);

/** A figure of the summary: lower is better for every one of them. */
interface Figure {
  readonly label: string;
  readonly of: (r: Result) => number;
  readonly digits: number;
  /** Context, not a comparison of the reflectors (no verdict). */
  readonly context?: boolean;
  /** A wall-clock time (the verdict says faster/slower) rather than an amount of CPU or memory (less/more). */
  readonly time?: boolean;
}

const FIGURES: readonly Figure[] = [
  { label: 'every session up (s)', time: true, of: (r) => r.upMs / 1e3, digits: 1 },
  { label: 'every client holding every block (s)', time: true, of: (r) => r.convergeMs / 1e3, digits: 1 },
  { label: 'new /32 to all clients, p50 (ms)', time: true, of: (r) => median(r.reach), digits: 0 },
  { label: 'new /32 to all clients, p99 (ms; goal ≤ 1000)', time: true, of: (r) => percentile(r.reach, 99), digits: 0 },
  { label: 'new /32 to all clients, median of the first 10 probes (ms)', time: true, of: (r) => median(r.reach.slice(0, 10)), digits: 0 },
  { label: 'new /32 to all clients, median of the last 10 probes (ms)', time: true, of: (r) => median(r.reach.slice(-10)), digits: 0 },
  { label: 'new /32: first other client holding it, p50 (ms)', time: true, of: (r) => (r.reachFirst ? median(r.reachFirst) : NaN), digits: 0 },
  { label: 'new /32: half of the other clients holding it, p50 (ms)', time: true, of: (r) => (r.reachHalf ? median(r.reachHalf) : NaN), digits: 0 },
  { label: 'one reflector killed: new /32, p50 (ms)', time: true, of: (r) => median(r.reachKilled), digits: 0 },
  { label: 'one reflector killed: new /32, p99 (ms; goal ≤ 1000)', time: true, of: (r) => percentile(r.reachKilled, 99), digits: 0 },
  { label: 'reflector RSS, largest (MB; goal ≤ 300)', of: (r) => r.rss / 1e6, digits: 0 },
  { label: 'reflector CPU to bring its sessions up (s)', of: (r) => r.cpuUpMs / 1e3, digits: 2 },
  { label: 'reflector CPU to converge (s)', of: (r) => r.cpuConvergeMs / 1e3, digits: 2 },
  { label: 'reflector CPU for the probes, all reflectors (s)', of: (r) => r.cpuProbesMs / 1e3, digits: 2 },
  { label: 'reflector CPU for the probes, one killed (s)', of: (r) => r.cpuKilledProbesMs / 1e3, digits: 2 },
  { label: 'client farm CPU to bring the sessions up (s)', of: (r) => r.farmCpuUpMs / 1e3, digits: 1, context: true },
  { label: 'client farm CPU to converge (s)', of: (r) => r.farmCpuConvergeMs / 1e3, digits: 1, context: true },
  { label: 'client farm CPU during the probes with all reflectors (s)', of: (r) => (r.farmCpuProbesOnlyMs ?? NaN) / 1e3, digits: 1, context: true },
  { label: 'wait for the quiet rule after converging (s)', time: true, of: (r) => r.quiet.ms / 1e3, digits: 1, context: true },
];

/** tsbgp against `other` on one figure, from the rounds where both finished (bench/rounds.ts verdict). */
function versus(rounds: readonly Round[], f: Figure, other: Impl): string {
  const pairs: [number, number][] = [];
  for (const r of rounds) {
    const a = r.results.tsbgp;
    const b = r.results[other];
    if (ok(a) && ok(b) && Number.isFinite(f.of(a)) && Number.isFinite(f.of(b))) pairs.push([f.of(a), f.of(b)]);
  }
  const v = verdict(pairs, f.time ?? false).text;
  return f.context ? `(context) ${v}` : v;
}

const NAMES: Record<Impl, string> = { tsbgp: 'tsbgp', 'tsbgp-before': `tsbgp (${BEFORE})`, bird: 'BIRD 2', frr: 'FRR' };

/** The table of one round, every measure of every implementation. */
function roundTable(round: Round): void {
  const { nodes: NODES, reflectors: R, probes: PROBES, perProcess: PER_PROCESS } = round.setup;
  const CLIENTS = NODES - R;
  const impls = [...round.order].sort((a, b) => Object.keys(NAMES).indexOf(a) - Object.keys(NAMES).indexOf(b));
  const round1 = (x: number) => Math.round(x * 10) / 10;
  const row = (label: string, f: (r: Result) => number | string, goal = ''): (string | number)[] => {
    return [
      label,
      ...impls.map((i) => {
        const r = round.results[i];
        return ok(r) ? f(r) : `failed: ${r?.error.slice(0, 200) ?? 'not run'}`;
      }),
      goal,
    ];
  };
  const quiet = (q: Quiet) => `${round1(q.ms / 1e3)} s${q.quiet ? '' : ` (not quiet: ${(q.share * 100).toFixed(1)} %)`}`;
  emit({
    suite: 'rr-scale',
    title: `Calico at scale: ${NODES.toLocaleString('en-US')} nodes, ${R} route reflectors (documented setup), ${CLIENTS.toLocaleString('en-US')} clients — round ${round.round + 1}, order ${round.order.join(', ')}, load ${round.loadStart.map((x) => x.toFixed(2)).join(' ')} → ${round.loadEnd.map((x) => x.toFixed(2)).join(' ')}`,
    columns: ['measure', ...impls.map((i) => `${NAMES[i]} as reflectors`), 'goal'],
    rows: [
      row(`every session up: ${CLIENTS} clients × ${R} reflectors (ms)`, (r) => Math.round(r.upMs)),
      row(
        `↳ TCP connections the clients opened / sessions dialled more than once / longest farm event-loop stall (ms), connect retry ${round.setup.connectRetry} s`,
        (r) => `${r.farmStart.dials} / ${r.farmStart.redialled} / ${Math.round(r.farmStart.maxLoopStallMs)}`,
      ),
      row(`every client holding every other node's block from every reflector (${NODES - 1} each) (ms)`, (r) => Math.round(r.convergeMs)),
      row(
        `wait until clients and reflectors use < ${QUIET_SHARE * 100} % of a core over ${QUIET_WINDOW_MS} ms (the probes start ${round.setup.settleMs ? `${round.setup.settleMs / 1e3} s after it, for every implementation` : 'then'})`,
        (r) => quiet(r.quiet),
      ),
      row(`one new /32 from a client → held by all ${CLIENTS - 1} other clients, p50 of ${PROBES} (ms)`, (r) => round1(median(r.reach))),
      row('↳ same, p99 (ms)', (r) => round1(percentile(r.reach, 99)), '≤ 1000'),
      row('↳ median of the first 10 / of the last 10 probes (ms)', (r) => `${round1(median(r.reach.slice(0, 10)))} / ${round1(median(r.reach.slice(-10)))}`),
      row('reflector RSS, largest of the reflectors, converged (MB)', (r) => round1(r.rss / 1e6), '≤ 300'),
      row('↳ growth from no client to converged, per client (KB)', (r) => round1(r.rssGrowth / CLIENTS / 1e3)),
      row('reflector CPU to bring its sessions up, largest (ms)', (r) => Math.round(r.cpuUpMs)),
      row('reflector CPU to converge, largest (ms; per client)', (r) => `${Math.round(r.cpuConvergeMs)}; ${round1(r.cpuConvergeMs / CLIENTS)}`),
      row(`reflector CPU during the ${PROBES + 2} probes, largest (ms)`, (r) => Math.round(r.cpuProbesMs)),
      row(
        `client farm CPU (all ${CLIENTS} clients, ${Math.ceil(CLIENTS / PER_PROCESS)} processes): sessions up / converge / quiet wait and probes (ms)`,
        (r) => `${Math.round(r.farmCpuUpMs)} / ${Math.round(r.farmCpuConvergeMs)} / ${Math.round(r.farmCpuProbesMs)}`,
      ),
      row(`update groups in each reflector's RIB, converged (${CLIENTS} clients + ${R - 1} other reflectors)`, (r) =>
        r.groups.every((g) => g === undefined) ? 'n/a' : r.groups.join(' / '),
      ),
      row(`one reflector killed: every client still holds all ${NODES - 1} blocks from each remaining reflector (checked, ms after the kill)`, (r) =>
        Math.round(r.afterKillMs),
      ),
      row(
        '↳ every client has seen its session to the killed reflector go down (ms after the kill); then the quiet wait',
        (r) => `${Math.round(r.lossSeenMs)}; ${quiet(r.quietKilled)}`,
      ),
      row(
        `↳ one new /32 → all ${CLIENTS - 1} other clients with ${R - 1} reflectors, p50 / p99 of ${PROBES} (ms)`,
        (r) => `${round1(median(r.reachKilled))} / ${round1(percentile(r.reachKilled, 99))}`,
        '≤ 1000',
      ),
      row(`↳ CPU of a remaining reflector during those ${PROBES + 2} probes, largest (ms)`, (r) => Math.round(r.cpuKilledProbesMs)),
    ],
    notes: [
      `tsbgp reflectors: tsbgp speakers, one process each, peers and routes from plan() of the documented setup (reverse peerings: each reflector plans its ${CLIENTS} clients itself). BIRD 2.0 and FRR 8.4 (bgpd without zebra) reflectors: configured as Calico configures BIRD for a reflector (rr client, rr cluster id ${CLUSTER_ID}, graceful restart, import/export all), clients accepted from dynamic neighbor ranges. Clients: tsbgp speakers, ${PER_PROCESS} per process, each peered with every reflector (connect retry ${round.setup.connectRetry} s), originating one /26.${round.setup.reflectorCoalesceMs !== undefined ? ` tsbgp reflectors' coalescing window ${round.setup.reflectorCoalesceMs} ms (--reflector-coalesce-ms).` : ''} All on ${NET === '127.0' ? '127.0.x.y' : "198.19.x.y (local in a namespace of the run's own)"} over real TCP, one machine (${cpus().length} cores, shared). RSS is the reflector process's (tsbgp: after a GC); CPU is user+system of the reflector process. Load: the 1/5/15-minute load averages at the round's start and end.`,
    ],
  });
}

/** Across rounds: per figure and implementation the median and range, and tsbgp's verdict against each daemon. */
function summaryTable(rounds: readonly Round[]): void {
  const impls = [...new Set(rounds.flatMap((r) => r.order))].sort((a, b) => Object.keys(NAMES).indexOf(a) - Object.keys(NAMES).indexOf(b));
  const others = impls.filter((i) => i !== 'tsbgp');
  const s = rounds[0].setup;
  const cell = (i: Impl, f: Figure): string => {
    // Only the rounds that ran this implementation count (saved sets may be combined: `--impl tsbgp,bird` rounds with `tsbgp,bird,frr` ones).
    const ran = rounds.filter((r) => r.order.includes(i));
    const done = ran.map((r) => r.results[i]).filter(ok);
    const failed = ran.length - done.length;
    // A figure rounds saved by an older version of this benchmark did not record is left out of them.
    const xs = done.map(f.of).filter(Number.isFinite);
    if (xs.length === 0) return failed ? `failed in ${failed} of ${ran.length}` : 'not recorded';
    const fx = (x: number) => x.toFixed(f.digits);
    const missing = done.length - xs.length;
    return `${fx(median(xs))} (${fx(Math.min(...xs))}–${fx(Math.max(...xs))})${failed ? `, failed in ${failed} of ${ran.length}` : ''}${missing ? `, not recorded in ${missing}` : ''}${ran.length < rounds.length ? `, ${ran.length} of ${rounds.length} rounds` : ''}`;
  };
  emit({
    suite: 'rr-scale',
    title: `Calico at scale: ${s.nodes.toLocaleString('en-US')} nodes, ${s.reflectors} route reflectors, ${rounds.length} rounds (median and range)`,
    columns: ['measure', ...impls.map((i) => NAMES[i]), ...(impls.includes('tsbgp') ? others.map((o) => `tsbgp vs ${NAMES[o]}`) : [])],
    rows: FIGURES.map((f) => [f.label, ...impls.map((i) => cell(i, f)), ...(impls.includes('tsbgp') ? others.map((o) => versus(rounds, f, o)) : [])]),
    notes: [
      `Rounds: ${rounds.map((r) => `${r.round + 1}: ${r.order.join(' → ')}, ${r.startedAt}, load ${r.loadStart[0].toFixed(1)} → ${r.loadEnd[0].toFixed(1)}`).join('; ')}.`,
      `Each round runs every implementation once with fresh clients, the order rotated from round to round. Verdict: the ratio tsbgp / other within each round; "tsbgp faster" (or "less" CPU or memory) when it is below 1 in every round and its median below ${1 - NOISE_FLOOR}, "slower" ("more") when above 1 in every round and its median above ${1 + NOISE_FLOOR}, else "within noise" (the rounds disagree, i.e. the difference is smaller than the spread between rounds, or it is under ${NOISE_FLOOR * 100} %). Lower is better for every figure. Context rows describe the clients and the wait, not the reflectors.`,
    ],
  });
}

async function main(): Promise<void> {
  const arg = (name: string, dflt: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : dflt;
  };
  const summary = arg('summary', '');
  if (summary) {
    // --summary FILE: the rounds saved by earlier runs (--save FILE), e.g. one locked run per round.
    const rounds = readFileSync(summary, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Round);
    if (rounds.length === 0) throw new Error(`--summary ${summary}: no rounds in the file`);
    for (const r of rounds) roundTable(r);
    if (rounds.length > 1) summaryTable(rounds);
    return;
  }
  const quick = process.argv.includes('--quick');
  const NODES = Number(arg('nodes', quick ? '60' : '1000'));
  const R = Number(arg('reflectors', '3'));
  const PROBES = Number(arg('probes', quick ? '10' : '50'));
  const PER_PROCESS = Number(arg('per-process', quick ? '20' : '125'));
  const ROUNDS = Number(arg('rounds', '1'));
  const FIRST = Number(arg('first-round', '1')) - 1;
  const CONNECT_RETRY = Number(arg('connect-retry', '5'));
  // --settle-s N: after the quiet rule, wait N s more before each series of probes, the same for every implementation
  // (a daemon that stays busy after converging otherwise probes a more settled cluster than one that goes quiet at once).
  const SETTLE_S = Number(arg('settle-s', quick ? '0' : '20'));
  if (!(SETTLE_S >= 0 && SETTLE_S <= 600)) throw new Error(`--settle-s wants seconds from 0 to 600 (got ${arg('settle-s', '')})`);
  // --reflector-coalesce-ms N: the tsbgp reflectors' coalescing window (BgpSpeaker coalesceMs; default its own, 5 ms).
  const COALESCE = process.argv.includes('--reflector-coalesce-ms') ? Number(arg('reflector-coalesce-ms', '')) : undefined;
  if (COALESCE !== undefined && !(COALESCE >= 0)) throw new Error(`--reflector-coalesce-ms wants milliseconds ≥ 0 (got ${arg('reflector-coalesce-ms', '')})`);
  const save = arg('save', '');
  const impls = arg('impl', NET === '127.0' ? 'tsbgp,bird' : 'tsbgp,bird,frr').split(',') as Impl[];
  for (const i of impls)
    if (!['tsbgp', 'tsbgp-before', 'bird', 'frr'].includes(i)) throw new Error(`--impl: unknown reflector ${i} (tsbgp, tsbgp-before, bird, frr)`);
  if (impls.includes('tsbgp-before') && !(BEFORE && existsSync(join(BEFORE, 'bench/rr-scale.ts'))))
    throw new Error('--impl tsbgp-before wants --before DIR, a checkout of tsbgp with bench/rr-scale.ts');
  if (impls.includes('frr') && NET === '127.0')
    throw new Error('--impl frr needs root: FRR refuses 127/8 next hops, so the run needs its own namespace with 198.19.0.0/16 (see the header)');
  if (NODES > 1024 || PROBES > 120 || R < 2) throw new Error('rr-scale: at most 1,024 nodes (one /26 each in a /16), 120 probes, at least 2 reflectors');
  if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1 && Number.isInteger(FIRST) && FIRST >= 0))
    throw new Error(`--rounds wants a whole number ≥ 1 (got ${arg('rounds', '1')}), --first-round one ≥ 1 (got ${arg('first-round', '1')})`);
  if (!(CONNECT_RETRY > 0)) throw new Error(`--connect-retry wants seconds > 0 (got ${arg('connect-retry', '5')})`);
  const dir = mkdtempSync(join(tmpdir(), 'tsbgp-rr-scale-'));
  chmodSync(dir, 0o755); // FRR's bgpd runs as user frr and writes its pid file below
  const setup = {
    nodes: NODES,
    reflectors: R,
    probes: PROBES,
    perProcess: PER_PROCESS,
    connectRetry: CONNECT_RETRY,
    settleMs: SETTLE_S * 1000,
    ...(COALESCE !== undefined ? { reflectorCoalesceMs: COALESCE } : {}),
  };
  const rounds: Round[] = [];
  try {
    for (let n = FIRST; n < FIRST + ROUNDS; n++) {
      const order = rotate(impls, n);
      const startedAt = new Date().toISOString();
      const loadStart = loadavg();
      console.error(`rr-scale round ${n + 1}: ${order.join(', ')}, load ${loadStart.map((x) => x.toFixed(2)).join(' ')}`);
      const results: Round['results'] = {};
      for (const impl of order) {
        try {
          const r = await scenario(impl, { ...setup, dir });
          results[impl] = r;
          console.log(
            `${impl}: up ${r.upMs.toFixed(0)} ms, converged ${r.convergeMs.toFixed(0)} ms, /32 p99 ${percentile(r.reach, 99).toFixed(1)} ms, killed-one p99 ${percentile(r.reachKilled, 99).toFixed(1)} ms, RSS ${(r.rss / 1e6).toFixed(1)} MB`,
          );
          // Everything measured, in case a later scenario does not finish (the tables come at the end).
          console.error(
            `rr-scale ${impl} result: ${JSON.stringify({ ...r, reach: undefined, reachKilled: undefined, reachP50: median(r.reach), reachP99: percentile(r.reach, 99), killedP50: median(r.reachKilled), killedP99: percentile(r.reachKilled, 99) })}`,
          );
        } catch (e) {
          // One implementation failing (e.g. clients that never converge) is a result of the round, not the end of the run.
          results[impl] = { error: (e as Error).message };
          console.error(`rr-scale ${impl} FAILED: ${(e as Error).message}`);
          process.exitCode = 1;
        }
      }
      const round: Round = { round: n, order, startedAt, loadStart, loadEnd: loadavg(), results, setup };
      console.error(`rr-scale round ${n + 1} done, load ${round.loadEnd.map((x) => x.toFixed(2)).join(' ')}`);
      if (save) appendFileSync(save, JSON.stringify(round) + '\n');
      rounds.push(round);
      roundTable(round);
    }
  } finally {
    if (process.env.RR_SCALE_KEEP) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  if (rounds.length > 1) summaryTable(rounds);
}

/**
 * As root: runs this benchmark again inside a namespace of its own where
 * 198.19.0.0/16 is local, and deletes the namespace afterwards (also when the
 * run fails or is interrupted). Returns the inner run's exit code.
 */
function inNamespace(): number {
  const ns = `tsbgp-${process.pid}-rrscale`;
  const ip = (...args: string[]) => {
    const r = spawnSync('ip', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr.trim()}`);
  };
  const teardown = () => {
    const pids = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone already
      }
    }
    spawnSync('ip', ['netns', 'del', ns]);
    for (let i = 0; i < 8; i++) rmSync(join('/var/run/frr', `tsbgp-${process.pid}-rrscale${i + 1}`), { recursive: true, force: true });
  };
  process.on('exit', teardown);
  ip('netns', 'add', ns);
  ip('-n', ns, 'link', 'set', 'lo', 'up');
  ip('-n', ns, 'route', 'add', 'local', '198.19.0.0/16', 'dev', 'lo');
  const r = spawnSync(
    'ip',
    ['netns', 'exec', ns, process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2), '--in-netns'],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        RR_SCALE_RUN: String(process.pid),
        BENCH_COMMAND: process.env.BENCH_COMMAND ?? ['node --expose-gc --import tsx bench/rr-scale.ts', ...process.argv.slice(2)].join(' '),
      },
    },
  );
  return r.status ?? 1;
}

if (process.argv.includes('--reflector')) runReflector();
else if (!process.argv.includes('--in-netns') && process.getuid?.() === 0) process.exitCode = inNamespace();
else await main();
