/**
 * Migrating a Calico cluster from BIRD to tsbgp, node by node, in
 * namespaces (issue 28; the steps of docs/migrating-from-calico.md).
 *
 * Three nodes on one LAN (192.0.2.11-13, AS 64512, node-to-node mesh), one
 * IP pool 198.51.100.0/24 with a /26 block affine to each node, one pod per
 * node wired as Calico wires it (a veth whose node side has proxy ARP and a
 * /32 route of Felix's normal priority, metric 1024; the pod's default route
 * via 169.254.1.1 onlink). node1 and node3 run BIRD 2 configured as confd
 * renders a Calico node (calico-bird.ts), node2 runs `tsbgp agent --kernel
 * on` from manifests of the same cluster. The mesh has both mixed pairs:
 * node1 (BIRD, lower address: waits) with node2 (tsbgp, dials), node2
 * (tsbgp, lower: waits) with node3 (BIRD, dials).
 *
 * Checked: every session Established on both ends (birdc, `tsbgp status`),
 * each node's kernel table (`proto bird`) the same whichever daemon wrote
 * it, every pair of pods talks. Then, while pods on node1 and node2 ping the
 * pod on node3 every 0.1 s:
 * 1. Calico's own BIRD restarting (for comparison, not bounded): killed as
 *    calico-node stops, started again as calico-node starts it (`bird -R`).
 * 2. The migration: node3's BIRD stops the same way and `tsbgp agent
 *    --kernel on` starts there; it adopts BIRD's kernel routes and the
 *    others keep node3's routes (graceful restart): at most 2 pings lost of
 *    each 200 or more.
 * 3. The rollback: tsbgp stops (SIGTERM, as Kubernetes stops a pod), BIRD
 *    starts (`bird -R`): the same bound.
 *
 * How calico-node stops BIRD: the container's PID 1 is runsvdir
 * (node/filesystem/sbin/start_runit), which exits at once on SIGTERM
 * without signalling its services (runsvdir(8)); the kernel then kills
 * every other process of the container's pid namespace with SIGKILL. So
 * BIRD gets no chance to send a Cease: its sessions close (the peers keep
 * its routes as stale: graceful restart) and, with `persist`, its kernel
 * routes stay. The lab kills BIRD with SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as cli } from '../agent/cli-helpers.js';
import { calicoBirdConfig, meshName } from './calico-bird.js';
import { cleanupStale, Lab, parseBirdProtocols, type KernelRoute } from './netns.js';
import { requireLab } from './require.js';
import { run, sleep } from './shell.js';
import { loadTopology } from './topology.js';
import type { StatusJson } from '../../src/agent/agent.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const available = requireLab(['bridge', 'host'], { binaries: ['bird', 'birdc', 'ping', 'node'] });

const ASN = 64512;
const POOL = '198.51.100.0/24';
const NODES = {
  node1: { address: '192.0.2.11', block: '198.51.100.0/26', pod: '198.51.100.2' },
  node2: { address: '192.0.2.12', block: '198.51.100.64/26', pod: '198.51.100.66' },
  node3: { address: '192.0.2.13', block: '198.51.100.128/26', pod: '198.51.100.130' },
} as const;
type NodeName = keyof typeof NODES;
const NAMES = Object.keys(NODES) as NodeName[];
const podOf = (n: NodeName) => `pod${n.slice(-1)}`;
/** Felix's normal route priority (BGPConfiguration ipv4NormalRoutePriority): its workload routes' metric, and Calico v3.32's metric for mesh routes. */
const NORMAL = 1024;
/** At most this many pings lost of each run during a move (issue 28). */
const BOUND = 2;
/** Pings of each run, at least (one every 0.1 s). */
const PINGS = 200;

function manifests(): string {
  const calico = 'projectcalico.org/v3';
  const docs: object[] = [
    { apiVersion: calico, kind: 'BGPConfiguration', metadata: { name: 'default' }, spec: { asNumber: ASN, nodeToNodeMeshEnabled: true } },
    {
      apiVersion: calico,
      kind: 'IPPool',
      metadata: { name: 'default-ipv4-ippool' },
      spec: { cidr: POOL, blockSize: 26, ipipMode: 'Never', vxlanMode: 'Never', natOutgoing: true },
    },
    ...NAMES.map((n) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: n, annotations: { 'projectcalico.org/IPv4Address': `${NODES[n].address}/24` } },
      status: { addresses: [{ type: 'InternalIP', address: NODES[n].address }] },
    })),
    ...NAMES.map((n) => ({
      apiVersion: 'crd.projectcalico.org/v1',
      kind: 'BlockAffinity',
      metadata: { name: `${n}-${NODES[n].block.replace(/[./]/g, '-')}` },
      spec: { node: n, cidr: NODES[n].block, state: 'confirmed' },
    })),
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

function topology(): string {
  const nodes: Record<string, object> = { lan: { kind: 'bridge' } };
  const links: object[] = [];
  const addresses: Record<string, string[]> = {};
  NAMES.forEach((n, i) => {
    const { address, pod } = NODES[n];
    const cali = `cali${podOf(n)}`;
    nodes[n] = {
      kind: 'host',
      exec: [
        // As Felix: proxy ARP on the pod's veth and a /32 route to the pod at the normal priority.
        `echo 1 > /proc/sys/net/ipv4/conf/${cali}/proxy_arp`,
        `ip route add ${pod}/32 dev ${cali} metric ${NORMAL}`,
        // proxy ARP answers for 169.254.1.1 only if the node has a route to it out of another interface
        'ip route add 169.254.1.1/32 dev eth1',
      ],
    };
    nodes[podOf(n)] = { kind: 'host', exec: ['ip route add 169.254.1.1 dev eth1 scope link', 'ip route add default via 169.254.1.1 dev eth1 onlink'] };
    links.push({ endpoints: [`${n}:eth1`, `lan:p${i + 1}`] }, { endpoints: [`${podOf(n)}:eth1`, `${n}:${cali}`] });
    addresses[`${n}:eth1`] = [`${address}/24`];
    addresses[`${podOf(n)}:eth1`] = [`${pod}/32`];
  });
  return stringify({ name: 'migration', topology: { nodes, links }, 'x-tsbgp': { addresses } });
}

type Daemon = 'bird' | 'tsbgp';

/** The pings of one pod to another, `ping -i 0.1`, until stop(). */
class Pinger {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private buf = '';
  private out = '';
  readonly replied = new Set<number>();
  /** The highest sequence number ping said anything about (a reply, or no answer yet). */
  highest = 0;

  constructor(
    ns: string,
    readonly label: string,
    target: string,
  ) {
    // -O: "no answer yet for icmp_seq=N" for each ping still unanswered when the next goes out.
    this.child = spawn('ip', ['netns', 'exec', ns, 'ping', '-n', '-O', '-i', '0.1', '-W', '1', target], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.exited = new Promise((r) => this.child.once('exit', () => r()));
    this.child.stdout!.on('data', (d: Buffer) => {
      this.out += d.toString('utf8');
      this.buf += d.toString('utf8');
      const lines = this.buf.split('\n');
      this.buf = lines.pop()!;
      for (const l of lines) {
        const m = /icmp_seq=(\d+)/.exec(l);
        if (!m) continue;
        const seq = Number(m[1]);
        this.highest = Math.max(this.highest, seq);
        if (/^\d+ bytes from /.test(l)) this.replied.add(seq);
      }
    });
  }

  /** Stops ping (SIGINT: it prints its summary) and counts the pings lost, leaving out the last one sent (its answer may have been on the way). */
  async stop(): Promise<{ label: string; sent: number; lost: number; lostSeqs: number[] }> {
    this.child.kill('SIGINT');
    await this.exited;
    const m = /(\d+) packets transmitted, (\d+) received/.exec(this.out);
    if (!m) throw new Error(`${this.label}: no summary from ping:\n${this.out.slice(-500)}`);
    const counted = Number(m[1]) - 1;
    const lostSeqs: number[] = [];
    for (let s = 1; s <= counted; s++) if (!this.replied.has(s)) lostSeqs.push(s);
    return { label: this.label, sent: counted, lost: lostSeqs.length, lostSeqs };
  }
}

describe.skipIf(!available.ok)('migrating a Calico node from BIRD to tsbgp and back, pods pinging across it', () => {
  let lab: Lab;
  let dir: string;
  const daemons = new Map<NodeName, { kind: Daemon; child: ChildProcess; exited: Promise<void> }>();
  const losses: string[] = [];

  const work = (n: NodeName) => lab.node(n).work;
  const birdSock = (n: NodeName) => join(work(n), 'bird.ctl');
  const tsSock = (n: NodeName) => join(work(n), 'tsbgp.sock');

  function spawnIn(n: NodeName, kind: Daemon, argv: string[]): void {
    const fd = openSync(join(work(n), `${kind}.log`), 'a');
    const child = spawn('ip', ['netns', 'exec', lab.ns(n), ...argv], { stdio: ['ignore', fd, fd], cwd: repo });
    closeSync(fd);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    daemons.set(n, { kind, child, exited });
  }

  /** BIRD as calico-node runs it (`bird -R`: graceful restart recovery at every start), in the foreground so that its pid is the child's. */
  async function startBird(n: NodeName): Promise<void> {
    const conf = join(work(n), 'bird.conf');
    spawnIn(n, 'bird', ['bird', '-f', '-R', '-c', conf, '-s', birdSock(n), '-P', join(work(n), 'bird.pid')]);
    await until(`${n}: birdc answers`, 15_000, () => run('birdc', ['-s', birdSock(n), 'show', 'status']).status === 0);
  }

  function startTsbgp(n: NodeName): void {
    spawnIn(n, 'tsbgp', [
      'node',
      '--import',
      'tsx',
      join(repo, 'src', 'agent', 'main.ts'),
      'agent',
      '--node',
      n,
      '--control',
      tsSock(n),
      '--log-level',
      'info',
      '--kernel',
      'on',
      // The node stays up while its BGP daemon changes: graceful restart keeps its routes on the
      // other nodes (an RFC 8326 drain would move traffic off a node that is not leaving, then
      // withdraw its pod blocks): docs/migrating-from-calico.md.
      '--drain-time',
      '0',
      join(dir, 'manifests'),
    ]);
  }

  /**
   * BIRD as calico-node stops (SIGKILL, see the top), tsbgp as Kubernetes
   * stops a pod (SIGTERM; it closes its sessions without a NOTIFICATION).
   * `birdSignal` SIGTERM: BIRD's own orderly stop instead (`sv restart bird`
   * inside calico-node), which sends each peer a Cease.
   */
  async function stop(n: NodeName, birdSignal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const d = daemons.get(n)!;
    d.child.kill(d.kind === 'bird' ? birdSignal : 'SIGTERM');
    const t = setTimeout(() => d.child.kill('SIGKILL'), 20_000);
    await d.exited;
    clearTimeout(t);
    expect(d.kind === 'bird' || d.child.signalCode === null, `${n}: tsbgp exited by itself on SIGTERM`).toBe(true);
    daemons.delete(n);
  }

  /** Peer address → session state, as the node's daemon reports it. */
  async function sessions(n: NodeName): Promise<Record<string, string>> {
    const d = daemons.get(n);
    if (!d) return {};
    if (d.kind === 'bird') {
      const r = run('birdc', ['-s', birdSock(n), 'show', 'protocols', 'all']);
      if (r.status !== 0) return {};
      const protos = parseBirdProtocols(r.stdout);
      return Object.fromEntries(
        NAMES.filter((p) => p !== n).map((p) => [
          NODES[p].address,
          protos.find((x) => x.name === meshName(NODES[p].address))?.details['BGP state'] ?? 'absent',
        ]),
      );
    }
    const s = await tsStatus(n);
    return s ? Object.fromEntries(s.peers.map((p) => [p.address, p.state])) : {};
  }

  async function tsStatus(n: NodeName): Promise<StatusJson | undefined> {
    const r = await cli(['status', '--json', '--control', tsSock(n)]);
    return r.code === 0 && r.stdout.trim() ? (JSON.parse(r.stdout) as StatusJson) : undefined;
  }

  const allUp = (n: NodeName) => Object.fromEntries(NAMES.filter((p) => p !== n).map((p) => [NODES[p].address, 'Established']));

  /** The node's routes of protocol 12 ("bird"): prefix → "blackhole" or "via GW", with the metric. */
  function kernelTable(n: NodeName): Record<string, string> {
    const routes = JSON.parse(lab.mustExec(n, ['ip', '-j', 'route', 'show', 'proto', 'bird']) || '[]') as (KernelRoute & { type?: string; metric?: number })[];
    return Object.fromEntries(
      routes.map((r) => [r.dst.includes('/') ? r.dst : `${r.dst}/32`, `${r.type === 'blackhole' ? 'blackhole' : `via ${r.gateway}`} metric ${r.metric ?? 0}`]),
    );
  }
  /** What Calico's BIRD puts there: the node's block blackholed (no metric), the others' via their node at the normal priority. */
  const expectedTable = (n: NodeName) =>
    Object.fromEntries(NAMES.map((p) => [NODES[p].block, p === n ? 'blackhole metric 0' : `via ${NODES[p].address} metric ${NORMAL}`]));

  /** Every session up on every node, both ends; every kernel table as Calico's; the restarts over (BIRD's recovery, tsbgp's adopted routes). Throws what is not there yet, in one line. */
  async function converged(): Promise<void> {
    const want = (what: string, actual: unknown, expected: unknown) => {
      if (!isDeepStrictEqual(actual, expected)) throw new Error(`${what}: ${JSON.stringify(actual)}`);
    };
    for (const n of NAMES) {
      const d = daemons.get(n)!;
      want(`${n} (${d.kind}) sessions`, await sessions(n), allUp(n));
      want(`${n} kernel table`, kernelTable(n), expectedTable(n));
      if (d.kind === 'bird')
        want(`${n}: BIRD's graceful restart recovery`, /recovery/i.test(run('birdc', ['-s', birdSock(n), 'show', 'status']).stdout), false);
      else {
        const k = (await tsStatus(n))?.kernel;
        want(`${n}: tsbgp's kernel routes`, k && { enabled: k.enabled, restarting: k.restarting, stale: k.stale, refusedCount: k.refusedCount }, {
          enabled: true,
          restarting: false,
          stale: 0,
          refusedCount: 0,
        });
      }
    }
  }

  const ping = (from: NodeName, to: NodeName) => lab.exec(podOf(from), ['ping', '-n', '-c', '1', '-W', '2', NODES[to].pod]).status === 0;
  function everyPairTalks(): void {
    for (const a of NAMES) for (const b of NAMES) if (a !== b) expect(ping(a, b), `${podOf(a)} → ${podOf(b)}`).toBe(true);
  }

  /**
   * Runs `change` on node3 while the pods on node1 and node2 ping node3's pod
   * every 0.1 s; pings on until the cluster has converged again and each run
   * has sent at least PINGS. Returns what each run lost.
   */
  async function underPings(what: string, change: () => Promise<void>) {
    const pingers = (['node1', 'node2'] as const).map((n) => new Pinger(lab.ns(podOf(n)), `${podOf(n)} (${daemons.get(n)!.kind}) → pod3`, NODES.node3.pod));
    try {
      await until(`${what}: the first answers`, 10_000, () => pingers.every((p) => p.replied.size > 0));
      const t0 = Date.now();
      await change();
      const lastWait = await untilAsync(`${what}: converged`, 90_000, converged);
      const took = Date.now() - t0;
      // at least PINGS each, and 2 s more past convergence (a late flush of stale routes would show)
      const after = Math.max(...pingers.map((p) => p.highest)) + 20;
      await until(`${what}: ${PINGS} pings`, 120_000, () => pingers.every((p) => p.highest >= Math.max(PINGS + 1, after)));
      const out = [];
      for (const p of pingers) out.push(await p.stop());
      const line = `${what}: converged in ${(took / 1000).toFixed(1)} s (last to settle: ${lastWait ?? 'nothing'}); ${out.map((o) => `${o.label} lost ${o.lost} of ${o.sent}${o.lost ? ` (icmp_seq ${o.lostSeqs.join(',')})` : ''}`).join('; ')}`;
      losses.push(line);
      console.log(line);
      return out;
    } finally {
      for (const p of pingers) await p.stop().catch(() => undefined);
    }
  }

  beforeAll(async () => {
    cleanupStale();
    dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-migration-`));
    writeFileSync(join(dir, 'manifests'), manifests());
    writeFileSync(join(dir, 'lab.clab.yml'), topology());
    lab = await Lab.up(loadTopology(join(dir, 'lab.clab.yml')), { ephemeral: true });
    for (const n of NAMES) {
      writeFileSync(
        join(work(n), 'bird.conf'),
        calicoBirdConfig({
          address: NODES[n].address,
          asn: ASN,
          peers: NAMES.filter((p) => p !== n).map((p) => NODES[p].address),
          blocks: [NODES[n].block],
          pools: [POOL],
          normalRoutePriority: NORMAL,
        }),
      );
    }
    await startBird('node1');
    startTsbgp('node2');
    await startBird('node3');
  }, 60_000);

  afterAll(async () => {
    for (const [n, d] of daemons) {
      d.child.kill('SIGKILL');
      await d.exited;
      daemons.delete(n);
    }
    // TSBGP_MIGRATION_LOGS=DIR keeps each node's daemon logs (bird.log, tsbgp.log) for a look afterwards.
    const keep = process.env.TSBGP_MIGRATION_LOGS;
    if (keep && lab) for (const n of NAMES) cpSync(work(n), join(keep, n), { recursive: true, filter: (f) => !/\.(ctl|sock)$/.test(f) });
    lab?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (losses.length) console.log(`migration lab, pings lost:\n  ${losses.join('\n  ')}`);
  });

  it('BIRD as confd renders it and tsbgp form the mesh (the lower address waits, both kinds of mixed pair): every session up, the kernel tables as Calico’s, every pair of pods talks', async () => {
    // both mixed pairs, and the passive side in the BIRD configs as confd puts it
    const passive = (n: NodeName) =>
      readFileSync(join(work(n), 'bird.conf'), 'utf8')
        .split(/^protocol bgp /m)
        .slice(1)
        .filter((p) => p.includes('passive on;'))
        .map((p) => p.split(' ')[0]);
    expect(passive('node1')).toEqual(['Mesh_192_0_2_12', 'Mesh_192_0_2_13']);
    expect(passive('node3')).toEqual([]);
    await untilAsync('the mesh', 90_000, converged);
    everyPairTalks();
    // tsbgp's pod routes never leave the node (inside its block, Felix's normal priority: calico_aggr rejects them)
    expect(kernelTable('node1')['198.51.100.66/32']).toBeUndefined();
    // ADD-PATH (confd's bgp_template: add paths on): tsbgp offers it both ways, as BIRD does, on both mixed pairs.
    for (const b of ['node1', 'node3'] as const) {
      const shown = run('birdc', ['-s', birdSock(b), 'show', 'protocols', 'all', meshName(NODES.node2.address)]).stdout;
      expect(addPathOffered(shown, 'Neighbor capabilities'), `${b}: node2's ADD-PATH as BIRD saw it`).toEqual({ rx: ['ipv4'], tx: ['ipv4'] });
      expect(addPathOffered(shown, 'Local capabilities'), `${b}: BIRD's own ADD-PATH`).toEqual({ rx: ['ipv4'], tx: ['ipv4'] });
    }
    const st = await tsStatus('node2');
    expect(
      Object.fromEntries((st?.peers ?? []).map((p) => [p.address, (p.detail?.negotiated?.capabilities ?? []).filter((c) => c.startsWith('ADD-PATH'))])),
      "node2's negotiated ADD-PATH",
    ).toEqual({ [NODES.node1.address]: ['ADD-PATH ipv4 send/receive'], [NODES.node3.address]: ['ADD-PATH ipv4 send/receive'] });
  }, 100_000);

  it('for comparison: Calico’s own BIRD restarting on node3 (killed as calico-node stops, `bird -R` as it starts)', async () => {
    const out = await underPings('Calico BIRD restart on node3', async () => {
      await stop('node3');
      await startBird('node3');
    });
    for (const o of out) expect(o.sent).toBeGreaterThanOrEqual(PINGS);
    everyPairTalks();
  }, 150_000);

  it('for comparison: BIRD’s own orderly stop on node3 (SIGTERM: a Cease to each peer, which then drops node3’s routes) and `bird -R`', async () => {
    const out = await underPings('BIRD SIGTERM + restart on node3', async () => {
      await stop('node3', 'SIGTERM');
      await startBird('node3');
    });
    // the peers withdrew node3's block until BIRD was back: pings were lost
    expect(out.some((o) => o.lost > 0)).toBe(true);
    everyPairTalks();
  }, 150_000);

  it(`migration: node3 from BIRD to tsbgp, at most ${BOUND} of ${PINGS} pings lost from each pod`, async () => {
    const out = await underPings('node3 BIRD → tsbgp', async () => {
      await stop('node3');
      startTsbgp('node3');
    });
    for (const o of out) {
      expect(o.sent).toBeGreaterThanOrEqual(PINGS);
      expect(o.lost, `${o.label}: icmp_seq lost ${o.lostSeqs.join(',')}`).toBeLessThanOrEqual(BOUND);
    }
    everyPairTalks();
    // what tsbgp programs is what BIRD programmed, route for route (converged() compared every table)
    expect(kernelTable('node3')).toEqual(expectedTable('node3'));
  }, 150_000);

  it(`rollback: node3 from tsbgp back to BIRD, at most ${BOUND} of ${PINGS} pings lost from each pod`, async () => {
    const out = await underPings('node3 tsbgp → BIRD (rollback)', async () => {
      await stop('node3');
      await startBird('node3');
    });
    for (const o of out) {
      expect(o.sent).toBeGreaterThanOrEqual(PINGS);
      expect(o.lost, `${o.label}: icmp_seq lost ${o.lostSeqs.join(',')}`).toBeLessThanOrEqual(BOUND);
    }
    everyPairTalks();
  }, 150_000);
});

/** The ADD-PATH families of one capability section (`Local capabilities`, `Neighbor capabilities`) of `birdc show protocols all P`. */
function addPathOffered(text: string, section: string): { rx: string[]; tx: string[] } | null {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === section);
  if (start < 0) return null;
  const indent = (l: string) => l.length - l.trimStart().length;
  const body: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.trim() === '' || indent(l) <= indent(lines[start])) break;
    body.push(l.trim());
  }
  const at = body.indexOf('ADD-PATH');
  if (at < 0) return null;
  const families = (key: string) =>
    (body.slice(at + 1, at + 3).find((l) => l.startsWith(`${key}:`)) ?? `${key}:`)
      .slice(key.length + 1)
      .trim()
      .split(/\s+/)
      .filter(Boolean);
  return { rx: families('RX'), tx: families('TX') };
}

async function until(what: string, ms: number, test: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** Retries an async check (throwing while it fails) until it passes or `ms` run out; rethrows the last failure. Returns the last failure's first line (what settled last), or null. */
async function untilAsync(what: string, ms: number, check: () => Promise<void>): Promise<string | null> {
  const deadline = Date.now() + ms;
  let last: string | null = null;
  for (;;) {
    try {
      await check();
      return last;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}: ${(e as Error).message}`);
      last = (e as Error).message.split('\n')[0];
    }
    await sleep(250);
  }
}
