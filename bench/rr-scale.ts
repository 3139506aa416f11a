/**
 * Calico at scale: a cluster of N nodes (1,000) with R in-cluster route
 * reflectors (3), set up as Calico's documentation prescribes (mesh off, the
 * reflectors labelled route-reflector=true with one cluster ID, one BGPPeer
 * nodeSelector all(), peerSelector route-reflector == 'true'), over real TCP
 * on 127.0.x.y. Each reflector is a tsbgp speaker in its own process,
 * configured from the planner's plan for that node (src/kubernetes plan() →
 * src/agent/reconcile.ts peerOptions: the reverse peerings to every client,
 * the other reflectors as non-clients, its cluster ID, its pod block). The
 * N − R clients are tsbgp speakers, many per process (bench/speaker-farm.ts),
 * each peered with every reflector and originating its pod block.
 *
 *   node --expose-gc --import tsx bench/rr-scale.ts [--quick] [--nodes 1000] [--reflectors 3] [--probes 50]
 *
 * Measures: all sessions up; from the first block originated until every
 * client holds every other node's block from every reflector; one new /32
 * from a client until every other client holds it (p50/p99 of the probes);
 * each reflector's RSS and CPU, per client; then the same probes with one
 * reflector killed (SIGKILL) and every client's blocks still held.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { peerOptions } from '../src/agent/reconcile.js';
import { plan, stateOf, validateObject, type Resource } from '../src/kubernetes/index.js';
import { BgpSpeaker } from '../src/speaker.js';
import { epochMs, sleep, until } from './clock.js';
import { emit, median, percentile } from './report.js';
import { startFarm, type Farm } from './speaker-farm.js';

const ASN = 63400;
const PORT = 17900;
const CLUSTER_ID = '244.0.0.1';

const reflectorAddress = (i: number) => `127.0.2.${i + 1}`;
/** Client k (0-based) of the cluster: 127.0.3.1 onwards, 250 per /24. */
const clientAddress = (k: number) => `127.0.${3 + Math.floor(k / 250)}.${(k % 250) + 1}`;
/** Node j's pod block: a /26 in 198.18.0.0/16 (1,024 of them). */
const block = (j: number) => `198.18.${(j * 64) >> 8}.${(j * 64) & 255}/26`;

/** The cluster's resources, as the agent would read them (validated like manifests). */
export function clusterResources(nodes: number, reflectors: number): Resource[] {
  const raw: unknown[] = [
    { apiVersion: 'projectcalico.org/v3', kind: 'BGPConfiguration', metadata: { name: 'default' }, spec: { logSeverityScreen: 'Info', nodeToNodeMeshEnabled: false, asNumber: ASN, listenPort: PORT } },
    { apiVersion: 'projectcalico.org/v3', kind: 'BGPPeer', metadata: { name: 'peer-with-route-reflectors' }, spec: { nodeSelector: 'all()', peerSelector: "route-reflector == 'true'" } },
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
    raw.push({ apiVersion: 'crd.projectcalico.org/v1', kind: 'BlockAffinity', metadata: { name: `${name}-block` }, spec: { node: name, cidr: block(j), state: 'confirmed', deleted: 'false' } });
  }
  return raw.map((r) => {
    const v = validateObject(r, 'rr-scale');
    if (!v.ok) throw new Error(`rr-scale: ${JSON.stringify(v.issue)}`);
    return v.resource;
  });
}

// ------------------------------------------------------------ a reflector process

type RCmd = { cmd: 'start'; index: number; nodes: number; reflectors: number } | { cmd: 'usage' } | { cmd: 'watch'; range: string };
type RReply = { type: 'ready'; peers: number; clients: number } | { type: 'usage'; rss: number; heap: number; cpuMs: number } | { type: 'watching' } | { type: 'error'; message: string };

function runReflector(): void {
  const send = (r: RReply) => void process.send?.(r);
  let speaker: BgpSpeaker | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (c: RCmd) =>
    void (async () => {
      if (c.cmd === 'start') {
        const p = plan(stateOf(clusterResources(c.nodes, c.reflectors)), `rr${c.index + 1}`);
        if (p.errors.length > 0) throw new Error(p.errors.map((e) => e.message).join('; '));
        speaker = new BgpSpeaker({ asn: p.node.asn, routerId: p.node.ipv4!.toString(), clusterId: p.node.routeReflectorClusterId, listen: { addresses: [p.node.ipv4!.toString()], port: p.listen.port } });
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
        return send({ type: 'usage', rss: m.rss, heap: m.heapUsed + m.external, cpuMs: (u.user + u.system) / 1000 });
      }
    })().catch((e: Error) => send({ type: 'error', message: e.message })),
  );
  process.on('disconnect', () => void speaker?.stop().finally(() => process.exit(0)));
}

interface Reflector {
  readonly address: string;
  readonly child: ChildProcess;
  ask<T extends RReply['type']>(cmd: RCmd, reply: T): Promise<Extract<RReply, { type: T }>>;
}

function startReflector(index: number, nodes: number, reflectors: number): Reflector {
  const child = fork(fileURLToPath(import.meta.url), ['--reflector'], { execArgv: ['--expose-gc', '--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
  return { address: reflectorAddress(index), child, ask };
}

// ------------------------------------------------------------ the run

async function main(): Promise<void> {
  const arg = (name: string, dflt: number) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : dflt;
  };
  const quick = process.argv.includes('--quick');
  const NODES = arg('nodes', quick ? 60 : 1000);
  const R = arg('reflectors', 3);
  const PROBES = arg('probes', quick ? 10 : 50);
  const PER_PROCESS = arg('per-process', quick ? 20 : 125);
  const CLIENTS = NODES - R;
  if (NODES > 1024 || PROBES > 120) throw new Error('rr-scale: at most 1,024 nodes (one /26 each in a /16) and 120 probes');

  const reflectors = Array.from({ length: R }, (_, i) => startReflector(i, NODES, R));
  const farms: Farm[] = [];
  const clients = Array.from({ length: CLIENTS }, (_, k) => clientAddress(k));
  try {
    const ready = await Promise.all(reflectors.map((r, i) => r.ask({ cmd: 'start', index: i, nodes: NODES, reflectors: R }, 'ready')));
    for (const [i, r] of ready.entries()) if (r.clients !== CLIENTS) throw new Error(`reflector ${i + 1} planned ${r.clients} clients, expected ${CLIENTS}`);
    const idle = await Promise.all(reflectors.map((r) => r.ask({ cmd: 'usage' }, 'usage')));
    for (let p = 0; p * PER_PROCESS < CLIENTS; p++) farms.push(startFarm(clients.slice(p * PER_PROCESS, (p + 1) * PER_PROCESS)));
    const targets = reflectors.map((r) => ({ address: r.address, port: PORT }));

    const t0 = performance.now();
    await Promise.all(farms.map((f) => f.start(ASN, targets)));
    const upMs = performance.now() - t0;
    const up = await Promise.all(reflectors.map((r) => r.ask({ cmd: 'usage' }, 'usage')));

    // Every client originates its block; done when every client holds the other N − 1 from every reflector.
    const t1 = performance.now();
    await Promise.all(farms.map(async (f, p) => {
      for (let c = 0; c < f.clients.length; c++) await f.originate(c, [block(R + p * PER_PROCESS + c)]);
    }));
    await Promise.all(farms.map((f) => f.sync(NODES - 1)));
    const convergeMs = performance.now() - t1;
    const converged = await Promise.all(reflectors.map((r) => r.ask({ cmd: 'usage' }, 'usage')));

    const arrivals = new Map<string, number[]>();
    await Promise.all(farms.map((f) => f.watch('203.0.113.', (prefix, _c, t) => arrivals.get(prefix)?.push(t))));
    const probe = async (k: number, expect: number): Promise<number> => {
      const prefix = `203.0.113.${k + 1}/32`;
      arrivals.set(prefix, []);
      const f = farms[k % farms.length];
      const t = await f.originate(k % f.clients.length, [prefix]);
      await until(`${prefix} at ${expect} clients`, () => arrivals.get(prefix)!.length >= expect, 30_000, 1);
      await sleep(20);
      return Math.max(...arrivals.get(prefix)!.map((x) => x - t));
    };
    const reach: number[] = [];
    for (let k = 0; k < PROBES + 2; k++) {
      const ms = await probe(k, CLIENTS - 1);
      if (k >= 2) reach.push(ms);
    }
    const probed = await Promise.all(reflectors.map((r) => r.ask({ cmd: 'usage' }, 'usage')));

    // One reflector killed: the clients keep every block (from the others) and new routes still reach all.
    const victim = reflectors[R - 1];
    victim.child.kill('SIGKILL');
    const tk = performance.now();
    await Promise.all(farms.map((f) => f.sync(NODES - 1, reflectors.slice(0, R - 1).map((r) => r.address))));
    const afterKillHoldMs = performance.now() - tk;
    const reachKilled: number[] = [];
    for (let k = PROBES + 2; k < 2 * PROBES + 2; k++) reachKilled.push(await probe(k, CLIENTS - 1));

    const round = (x: number) => Math.round(x * 10) / 10;
    const mb = (x: number) => Math.round(x / 1e5) / 10;
    const worst = <T>(xs: T[], f: (x: T) => number) => Math.max(...xs.map(f));
    const rssPerClient = worst(converged, (u) => u.rss) / CLIENTS;
    const cpuConverge = worst(converged.map((u, i) => u.cpuMs - up[i].cpuMs), (x) => x);
    const cpuUp = worst(up.map((u, i) => u.cpuMs - idle[i].cpuMs), (x) => x);
    console.log(`${NODES} nodes (${R} reflectors, ${CLIENTS} clients in ${farms.length} processes): up ${upMs.toFixed(0)} ms, converged ${convergeMs.toFixed(0)} ms, /32 p99 ${percentile(reach, 99).toFixed(1)} ms, killed-one p99 ${percentile(reachKilled, 99).toFixed(1)} ms`);
    emit({
      suite: 'rr-scale',
      title: `Calico at scale: ${NODES.toLocaleString('en-US')} nodes, ${R} tsbgp route reflectors (documented setup), ${CLIENTS.toLocaleString('en-US')} clients`,
      columns: ['measure', 'tsbgp', 'goal'],
      rows: [
        [`every session up: ${CLIENTS} clients × ${R} reflectors (ms)`, Math.round(upMs), ''],
        [`every client holding every other node's block from every reflector (${NODES - 1} each) (ms)`, Math.round(convergeMs), ''],
        [`one new /32 from a client → held by all ${CLIENTS - 1} other clients, p50 of ${PROBES} (ms)`, round(median(reach)), ''],
        ['↳ same, p99 (ms)', round(percentile(reach, 99)), '≤ 1000'],
        ['reflector RSS, largest of the reflectors, converged (MB)', mb(worst(converged, (u) => u.rss)), '≤ 300'],
        ['↳ per client (KB)', Math.round(rssPerClient / 100) / 10, ''],
        ['reflector CPU to bring the sessions up, largest (ms; per client)', `${Math.round(cpuUp)}; ${round(cpuUp / CLIENTS)}`, ''],
        ['reflector CPU to converge, largest (ms; per client)', `${Math.round(cpuConverge)}; ${round(cpuConverge / CLIENTS)}`, ''],
        [`reflector CPU during the ${PROBES + 2} probes, largest (ms)`, Math.round(worst(probed.map((u, i) => u.cpuMs - converged[i].cpuMs), (x) => x)), ''],
        [`one reflector killed: every client still holds all ${NODES - 1} blocks from each remaining reflector (checked, ms after the kill)`, Math.round(afterKillHoldMs), ''],
        [`↳ one new /32 → all ${CLIENTS - 1} other clients with ${R - 1} reflectors, p50 / p99 of ${PROBES} (ms)`, `${round(median(reachKilled))} / ${round(percentile(reachKilled, 99))}`, '≤ 1000'],
      ],
      notes: [
        `Reflectors: tsbgp speakers, one process each, peers and routes from plan() of the documented setup (reverse peerings: each reflector plans its ${CLIENTS} clients itself). Clients: tsbgp speakers, ${PER_PROCESS} per process, each peered with every reflector, originating one /26. All on 127.0.x.y over real TCP, one machine (${cpus().length} cores, shared). RSS is the reflector process's after a GC; CPU is user+system of the reflector process.`,
      ],
    });
  } finally {
    await Promise.all(farms.map((f) => f.stop()));
    for (const r of reflectors) r.child.kill('SIGTERM');
  }
}

if (process.argv.includes('--reflector')) runReflector();
else await main();
