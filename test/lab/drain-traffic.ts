/**
 * The drain lab (issue 29 part 4): packets lost while nodes leave and come
 * back, for tsbgp and for BIRD as Calico runs it. Used by
 * drain-traffic.test.ts (short form, CI) and bench/lab/drain.ts (the table).
 *
 *   client 203.0.113.2 ── r1 (FRR 8, AS 65000) ── lan ── node1 192.0.2.11 ┐
 *                         203.0.113.1 / 192.0.2.1        node2 192.0.2.12 ├ AS 64512, each with
 *                                                        node3 192.0.2.13 ┘ 198.51.100.10 on lo
 *
 * - Every node runs the daemon under test (`tsbgp agent` from manifests, or
 *   BIRD 2 configured as confd configures Calico's BIRD: calico-bird.ts)
 *   advertising the Service range 198.51.100.0/24 to r1 (for BIRD a static
 *   route, as confd renders serviceLoadBalancerIPs); r1 installs it with
 *   ECMP over the three nodes and hashes on ports
 *   (fib_multipath_hash_policy 1).
 * - r1 honours GRACEFUL_SHUTDOWN as RFC 8326 §4 recommends: a route-map
 *   `in` per neighbour sets LOCAL_PREF 0 on routes carrying 65535:0.
 * - Each node answers for the Service IP itself: a UDP echo bound to
 *   198.51.100.10 on its lo, tagging each answer with the node's name.
 * - The client sends one datagram every 10 ms, round robin over 32 source
 *   ports (so every node gets its share), each with a sequence number, and
 *   counts the ones never answered (drain-traffic-udp.ts): exact.
 * - A node's data path stops right after its daemon exits, as when the node
 *   shuts down: its link goes down (the echo stays, unreachable) until the
 *   node comes back, when the link comes up before the daemon starts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { stringify } from 'yaml';
import { run as cli } from '../agent/cli-helpers.js';
import type { StatusJson } from '../../src/agent/agent.js';
import { calicoBirdConfig, globalName } from './calico-bird.js';
import { clusterManifest } from './cluster-manifest.js';
import type { TrafficStats } from './drain-traffic-udp.js';
import { parseBirdProtocols, type KernelRoute, type Lab } from './netns.js';
import { run, sleep } from './shell.js';
import { bringUp, REPO } from './topology.js';

export const VIP = '198.51.100.10';
export const SERVICE_RANGE = '198.51.100.0/24';
const ROUTER = '192.0.2.1';
const ROUTER_AS = 65000;
const NODE_AS = 64512;
const CLIENT = '203.0.113.2';
const PORT = 9000;
/** The client's pace and how many source ports it spreads over. */
const INTERVAL_MS = 10;
const FLOWS = 32;
export const NODES = { node1: '192.0.2.11', node2: '192.0.2.12', node3: '192.0.2.13' } as const;
export type NodeName = keyof typeof NODES;
const NAMES = Object.keys(NODES) as NodeName[];

export type Daemon = 'tsbgp' | 'bird';
export const DAEMON_LABEL: Record<Daemon, string> = { tsbgp: 'tsbgp', bird: 'BIRD (Calico)' };

export type Scenario = 'drain' | 'rolling-restart' | 'upgrade' | 'kill-9';
export const SCENARIOS: readonly Scenario[] = ['drain', 'rolling-restart', 'upgrade', 'kill-9'];
export const SCENARIO_LABEL: Record<Scenario, string> = {
  drain: 'drain node1, then stop it (BIRD: stop)',
  'rolling-restart': 'rolling restart of every node',
  upgrade: 'upgrade node1 (stop, start the new version)',
  'kill-9': 'kill -9 node1 and restart it',
};

/** How tsbgp closes its sessions at the end of a drain (`tsbgp agent --drain-close`). */
export type DrainClose = 'hard-reset' | 'keep-stale';

export interface DrainLabOptions {
  readonly daemon: Daemon;
  /** tsbgp's --drain-time, seconds. */
  readonly drainSeconds: number;
  /** How long a node stays down (data path off) between its daemon's exit and its return, in the restart scenarios. */
  readonly downSeconds: number;
  /** tsbgp's --drain-close; unset: the agent's default. */
  readonly drainClose?: DrainClose;
  readonly log?: (s: string) => void;
}

export interface ScenarioResult {
  readonly daemon: Daemon;
  readonly scenario: Scenario;
  readonly drainClose?: DrainClose;
  readonly sent: number;
  readonly lost: number;
  readonly lostSeqs: readonly number[];
  /** Answers per node before the scenario began (every node carries its share). */
  readonly before: Record<string, number>;
  readonly seconds: number;
}

interface Running {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/** The r1 config: eBGP with the three nodes, ECMP, GRACEFUL_SHUTDOWN honoured, nothing sent back. */
function frrConfig(): string {
  const lines = [
    'frr defaults traditional',
    'hostname r1',
    '!',
    'bgp community-list standard GSHUT permit graceful-shutdown',
    'route-map FROM-NODES permit 10',
    ' match community GSHUT',
    ' set local-preference 0',
    'exit',
    'route-map FROM-NODES permit 20',
    'exit',
    'route-map NOTHING deny 10',
    'exit',
    '!',
    `router bgp ${ROUTER_AS}`,
    ` bgp router-id ${ROUTER}`,
    ' no bgp ebgp-requires-policy',
    ' no bgp network import-check',
    ...Object.values(NODES).flatMap((a) => [` neighbor ${a} remote-as ${NODE_AS}`, ` neighbor ${a} timers connect 1`]),
    ' address-family ipv4 unicast',
    '  maximum-paths 8',
    ...Object.values(NODES).flatMap((a) => [`  neighbor ${a} route-map FROM-NODES in`, `  neighbor ${a} route-map NOTHING out`]),
    ' exit-address-family',
    'exit',
    '!',
  ];
  return lines.join('\n') + '\n';
}

/** The cluster every agent reads: three nodes, r1 as a global BGPPeer, a LoadBalancer Service in the advertised range. */
function manifests(): string {
  return clusterManifest({
    nodes: NODES,
    bgp: { asNumber: NODE_AS, nodeToNodeMeshEnabled: false, serviceLoadBalancerIPs: [{ cidr: SERVICE_RANGE }] },
    peers: { r1: { peerIP: ROUTER, asNumber: ROUTER_AS } },
    services: [{ name: 'echo', vip: VIP, policy: 'Cluster' }],
  });
}

function topology(dir: string): string {
  const nodes: Record<string, object> = {
    lan: { kind: 'bridge' },
    r1: { kind: 'frr', 'startup-config': join(dir, 'frr.conf'), exec: ['sysctl -qw net.ipv4.fib_multipath_hash_policy=1'] },
    client: { kind: 'host', exec: ['ip route add default via 203.0.113.1'] },
  };
  const links: object[] = [{ endpoints: ['r1:eth1', 'lan:p0'] }, { endpoints: ['client:eth1', 'r1:eth2'] }];
  const addresses: Record<string, string[]> = { 'r1:eth1': [`${ROUTER}/24`], 'r1:eth2': ['203.0.113.1/24'], 'client:eth1': [`${CLIENT}/24`] };
  NAMES.forEach((n, i) => {
    nodes[n] = { kind: 'host', exec: ['ip route add 203.0.113.0/24 via 192.0.2.1'] };
    links.push({ endpoints: [`${n}:eth1`, `lan:p${i + 1}`] });
    addresses[`${n}:eth1`] = [`${NODES[n]}/24`];
    addresses[`${n}:lo`] = [`${VIP}/32`];
  });
  return stringify({ name: 'drain', topology: { nodes, links }, 'x-tsbgp': { addresses } });
}

/** The client's sender: start, `stats`, `stop`. */
class Traffic {
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private waiting: ((l: string) => void) | undefined;
  private readonly exited: Promise<void>;

  constructor(ns: string) {
    this.child = spawn(
      'ip',
      [
        'netns',
        'exec',
        ns,
        'node',
        '--import',
        'tsx',
        join(REPO, 'test', 'lab', 'drain-traffic-udp.ts'),
        'send',
        VIP,
        String(PORT),
        String(INTERVAL_MS),
        String(FLOWS),
      ],
      { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
    createInterface({ input: this.child.stdout! }).on('line', (l) => {
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        w(l);
      } else this.lines.push(l);
    });
  }

  private ask(cmd: 'stats' | 'stop', timeoutMs = 30_000): Promise<TrafficStats> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`traffic sender: no answer to "${cmd}" within ${timeoutMs} ms`)), timeoutMs);
      this.waiting = (l) => {
        clearTimeout(t);
        resolve(JSON.parse(l) as TrafficStats);
      };
      this.child.stdin!.write(`${cmd}\n`);
    });
  }

  stats(): Promise<TrafficStats> {
    return this.ask('stats');
  }

  async stop(): Promise<TrafficStats> {
    const s = await this.ask('stop');
    await this.exited;
    return s;
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

export class DrainLab {
  private readonly daemons = new Map<NodeName, Running>();
  private readonly echoes: ChildProcess[] = [];

  private constructor(
    readonly lab: Lab,
    private readonly dir: string,
    readonly opts: DrainLabOptions,
  ) {}

  private log(s: string): void {
    this.opts.log?.(s);
  }

  /** Brings the lab up with every node's daemon running and r1's ECMP over all three. */
  static async up(opts: DrainLabOptions): Promise<DrainLab> {
    const dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-drain-`));
    writeFileSync(join(dir, 'frr.conf'), frrConfig());
    writeFileSync(join(dir, 'manifests'), manifests());
    writeFileSync(join(dir, 'lab.clab.yml'), topology(dir));
    let lab: Lab | undefined;
    try {
      lab = await bringUp(join(dir, 'lab.clab.yml'), { runId: `d${process.pid}` });
      const d = new DrainLab(lab, dir, opts);
      for (const n of NAMES) {
        writeFileSync(
          join(lab.node(n).work, 'bird.conf'),
          calicoBirdConfig({
            address: NODES[n],
            asn: NODE_AS,
            peers: [],
            blocks: [],
            pools: [],
            globalPeers: [{ address: ROUTER, asn: ROUTER_AS }],
            staticRoutes: [SERVICE_RANGE],
          }),
        );
        d.echoes.push(d.spawnIn(n, 'echo', ['node', '--import', 'tsx', join(REPO, 'test', 'lab', 'drain-traffic-udp.ts'), 'echo', n, VIP, String(PORT)]).child);
      }
      for (const n of NAMES) await d.start(n);
      for (const n of NAMES) await d.backInEcmp(n);
      return d;
    } catch (e) {
      if (lab) (e as Error).message += `\n${diagnose(lab)}`;
      lab?.teardown();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  async teardown(): Promise<void> {
    for (const [, r] of this.daemons) {
      r.child.kill('SIGKILL');
      await r.exited;
    }
    this.daemons.clear();
    for (const e of this.echoes) e.kill('SIGKILL');
    this.lab.teardown();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private spawnIn(n: string, logName: string, argv: string[]): Running {
    const fd = openSync(join(this.lab.node(n).work, `${logName}.log`), 'a');
    const child = spawn('ip', ['netns', 'exec', this.lab.ns(n), ...argv], { stdio: ['ignore', fd, fd], cwd: REPO });
    closeSync(fd);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    return { child, exited };
  }

  private sock(n: NodeName): string {
    return join(this.lab.node(n).work, this.opts.daemon === 'bird' ? 'bird.ctl' : 'tsbgp.sock');
  }

  /** Starts the node's daemon: `tsbgp agent`, or BIRD as calico-node starts it (`bird -R`, in the foreground so its pid is the child's). */
  async start(n: NodeName): Promise<void> {
    const work = this.lab.node(n).work;
    if (this.opts.daemon === 'bird') {
      this.daemons.set(n, this.spawnIn(n, 'bird', ['bird', '-f', '-R', '-c', join(work, 'bird.conf'), '-s', this.sock(n), '-P', join(work, 'bird.pid')]));
      await until(`${n}: birdc answers`, 20_000, async () => run('birdc', ['-s', this.sock(n), 'show', 'status']).status === 0);
    } else {
      const argv = ['node', '--import', 'tsx', join(REPO, 'src', 'agent', 'main.ts'), 'agent', '--node', n, '--control', this.sock(n)];
      argv.push('--log-level', 'info', '--drain-time', String(this.opts.drainSeconds));
      if (this.opts.drainClose) argv.push('--drain-close', this.opts.drainClose);
      argv.push(join(this.dir, 'manifests'));
      this.daemons.set(n, this.spawnIn(n, 'tsbgp', argv));
    }
  }

  /** Stops the node's daemon with `signal` and waits for it to exit (tsbgp on SIGTERM: after its drain). */
  async stop(n: NodeName, signal: NodeJS.Signals): Promise<void> {
    const r = this.daemons.get(n);
    if (!r) throw new Error(`${n}: no daemon running`);
    r.child.kill(signal);
    const limit = (this.opts.daemon === 'tsbgp' ? this.opts.drainSeconds : 0) * 1000 + 60_000;
    const t = setTimeout(() => r.child.kill('SIGKILL'), limit);
    await r.exited;
    clearTimeout(t);
    this.daemons.delete(n);
    if (signal !== 'SIGKILL' && r.child.signalCode === 'SIGKILL') throw new Error(`${n}: ${this.opts.daemon} did not exit within ${limit} ms of ${signal}`);
  }

  /** The node's data path: its link (down: the node is gone; up: back, with its route to the client). */
  dataPath(n: NodeName, on: boolean): void {
    if (on) {
      this.lab.mustExec(n, ['ip', 'link', 'set', 'eth1', 'up']);
      this.lab.mustExec(n, ['ip', 'route', 'replace', '203.0.113.0/24', 'via', ROUTER]);
    } else this.lab.mustExec(n, ['ip', 'link', 'set', 'eth1', 'down']);
  }

  /** r1's next hops for the Service range, as installed in its kernel. */
  ecmp(): string[] {
    const routes = JSON.parse(this.lab.mustExec('r1', ['ip', '-j', 'route', 'show', SERVICE_RANGE, 'proto', 'bgp']) || '[]') as KernelRoute[];
    const r = routes[0];
    if (!r) return [];
    return (r.nexthops ? r.nexthops.map((h) => h.gateway ?? '?') : [r.gateway ?? '?']).sort();
  }

  /** Waits until the node's session with r1 is up and its path is one of r1's ECMP next hops (after a restart: not stale any more). */
  async backInEcmp(n: NodeName, ms = 90_000): Promise<void> {
    await until(`${n} back in r1's ECMP`, ms, async () => {
      const nb = this.lab.frrNeighbors('r1')[NODES[n]];
      if (nb?.bgpState !== 'Established') return false;
      if (!this.ecmp().includes(NODES[n])) return false;
      // r1 keeps a restarting node's path as stale until its End-of-RIB
      const rib = this.lab.frrRib('r1')[SERVICE_RANGE] ?? [];
      return rib.some((p) => (p as { nexthops?: { ip: string }[] }).nexthops?.[0]?.ip === NODES[n] && (p as { stale?: boolean }).stale !== true);
    });
  }

  /** The daemon's own view of its session with r1, for logs. */
  async session(n: NodeName): Promise<string> {
    if (this.opts.daemon === 'bird') {
      const r = run('birdc', ['-s', this.sock(n), 'show', 'protocols', 'all', globalName(ROUTER)]);
      return parseBirdProtocols(r.stdout)[0]?.details['BGP state'] ?? 'absent';
    }
    const r = await cli(['status', '--json', '--control', this.sock(n)]);
    return r.code === 0 ? ((JSON.parse(r.stdout) as StatusJson).peers[0]?.state ?? 'absent') : 'absent';
  }

  /** A node leaves (its daemon stopped by `signal`, then its data path), stays down `downMs`, and comes back. */
  private async cycle(n: NodeName, signal: NodeJS.Signals, downMs: number): Promise<void> {
    const t0 = Date.now();
    await this.stop(n, signal);
    this.dataPath(n, false);
    this.log(`  ${n}: ${this.opts.daemon} exited ${((Date.now() - t0) / 1000).toFixed(1)} s after ${signal}; data path off`);
    if (downMs > 0) await sleep(downMs);
    this.dataPath(n, true);
    await this.start(n);
    await this.backInEcmp(n);
    this.log(`  ${n}: back in r1's ECMP ${((Date.now() - t0) / 1000).toFixed(1)} s after ${signal}`);
  }

  /** Runs one scenario under traffic and counts the datagrams lost. */
  async scenario(s: Scenario): Promise<ScenarioResult> {
    const traffic = new Traffic(this.lab.ns('client'));
    try {
      // Every node answers its share before anything happens.
      let before: TrafficStats | undefined;
      await until('every node answering', 30_000, async () => {
        before = await traffic.stats();
        return NAMES.every((n) => (before!.byNode[n] ?? 0) > 0);
      });
      const t0 = Date.now();
      this.log(`${DAEMON_LABEL[this.opts.daemon]}: ${SCENARIO_LABEL[s]}`);
      const down = this.opts.downSeconds * 1000;
      switch (s) {
        case 'rolling-restart':
          for (const n of NAMES) await this.cycle(n, 'SIGTERM', down);
          break;
        case 'upgrade':
          await this.cycle('node1', 'SIGTERM', 0);
          break;
        case 'kill-9':
          await this.cycle('node1', 'SIGKILL', down);
          break;
        case 'drain':
          if (this.opts.daemon === 'tsbgp') {
            // The operator: `tsbgp drain`, waits out the drain time the agent reports, then stops the node.
            const r = await cli(['drain', '--json', '--control', this.sock('node1')]);
            if (r.code !== 0) throw new Error(`tsbgp drain failed: ${r.stderr}`);
            await until('the drain time to pass', this.opts.drainSeconds * 1000 + 30_000, async () => {
              const st = await cli(['status', '--json', '--control', this.sock('node1')]);
              return (JSON.parse(st.stdout) as StatusJson).draining?.remainingSeconds === 0;
            });
            this.log(`  node1: drained; r1's next hops now ${this.ecmp().join(', ')}`);
          }
          await this.cycle('node1', 'SIGTERM', down);
          break;
      }
      // a late effect (stale routes flushed, a session reset) would show in this second
      await sleep(1000);
      const out = await traffic.stop();
      const result: ScenarioResult = {
        daemon: this.opts.daemon,
        scenario: s,
        ...(this.opts.drainClose ? { drainClose: this.opts.drainClose } : {}),
        sent: out.sent,
        lost: out.lost,
        lostSeqs: out.lostSeqs,
        before: before!.byNode,
        seconds: (Date.now() - t0) / 1000,
      };
      this.log(`  lost ${out.lost} of ${out.sent}${out.lost ? ` (seq ${out.lostSeqs.slice(0, 10).join(',')}${out.lost > 10 ? ',…' : ''})` : ''}`);
      return result;
    } catch (e) {
      traffic.kill();
      (e as Error).message += `\n${diagnose(this.lab)}`;
      throw e;
    }
  }
}

/** What r1 and each node's daemon say, for a failure's message. */
function diagnose(lab: Lab): string {
  const out = [`r1: ${lab.exec('r1', ['vtysh', '-c', 'show bgp summary']).stdout.trim()}`];
  for (const n of NAMES) {
    const work = lab.node(n).work;
    for (const f of ['tsbgp.log', 'bird.log']) {
      const r = run('tail', ['-n', '15', join(work, f)]);
      if (r.status === 0 && r.stdout.trim()) out.push(`${n}/${f}:\n${r.stdout.trim()}`);
    }
  }
  return out.join('\n');
}

/** Polls an async check every 100 ms until it holds, or throws after `ms`. */
async function until(what: string, ms: number, test: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}
