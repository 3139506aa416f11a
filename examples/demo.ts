/**
 * The Calico lab "advertise Kubernetes services over BGP", on loopback, in
 * one process: three tsbgp node agents (worker1, worker2, master1) and a
 * fourth tsbgp speaker standing in for the upstream router host1. After
 * each lab step the router's table is printed like `ip route`.
 *
 *   npm run demo        (no root, no cluster, no daemon)
 *
 * The shipped manifests (examples/yaobank) use the lab's 192.0.2.x node
 * addresses; the demo works on a temporary copy with loopback addresses
 * (127.0.0.10-12, router 127.0.0.20) and one free high port, so it runs as
 * any user. Control sockets live in the same temporary folder.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runAgent, type Agent } from '../src/agent/agent.js';
import { createLogger } from '../src/agent/log.js';
import type { Prefix } from '../src/net/index.js';
import { BgpSpeaker } from '../src/speaker/speaker.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..');
const ROUTER = '127.0.0.20';
const NODES = [
  { name: 'worker1', lab: '192.0.2.10', ip: '127.0.0.10' },
  { name: 'worker2', lab: '192.0.2.11', ip: '127.0.0.11' },
  { name: 'master1', lab: '192.0.2.12', ip: '127.0.0.12' },
] as const;
const nameOf = new Map<string, string>(NODES.map((n) => [n.ip, n.name]));

/** A port free on the loopback addresses we use (every agent and the router listen on it, each on its own address). */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, NODES[0].ip, () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const ok = await Promise.all(
      [...NODES.map((n) => n.ip), ROUTER].map(
        (host) =>
          new Promise<boolean>((resolve) => {
            const s = createServer();
            s.once('error', () => resolve(false));
            s.listen(port, host, () => s.close(() => resolve(true)));
          }),
      ),
    );
    if (ok.every(Boolean)) return port;
  }
}

/** The lab's addresses → loopback; the BGPConfiguration gets the port and binds to the node IP. */
function localize(text: string, port: number): string {
  let out = text;
  for (const n of NODES) out = out.replaceAll(n.lab, n.ip);
  out = out.replaceAll('peerIP: 192.0.2.20', `peerIP: "${ROUTER}:${port}"`).replaceAll('192.0.2.20', ROUTER);
  // Every BGPConfiguration in the example carries `asNumber: 64512`.
  out = out.replace(/^(\s*)asNumber: 64512$/gm, `$1asNumber: 64512\n$1listenPort: ${port}\n$1bindMode: NodeIP`);
  return out;
}

function copyLocalized(src: string, dst: string, port: number): void {
  mkdirSync(dst, { recursive: true });
  for (const f of readdirSync(src)) writeFileSync(join(dst, f), localize(readFileSync(join(src, f), 'utf8'), port));
}

/** The router's table as `ip route` prints it: every received path's next hop (all are eBGP paths of equal length, so ECMP). */
function routeTable(router: BgpSpeaker): string {
  const byPrefix = new Map<string, { prefix: Prefix; hops: Set<string> }>();
  for (const r of router.received()) {
    const e = byPrefix.get(r.prefix.toString()) ?? { prefix: r.prefix, hops: new Set<string>() };
    if (r.nextHop) e.hops.add(r.nextHop);
    byPrefix.set(r.prefix.toString(), e);
  }
  const lines: string[] = [];
  for (const e of [...byPrefix.values()].sort((a, b) => a.prefix.compare(b.prefix))) {
    const hops = [...e.hops].sort();
    if (hops.length === 1) lines.push(`${e.prefix} via ${hops[0]} proto bgp  # ${nameOf.get(hops[0]) ?? '?'}`);
    else {
      lines.push(`${e.prefix} proto bgp`);
      for (const h of hops) lines.push(`\tnexthop via ${h} weight 1  # ${nameOf.get(h) ?? '?'}`);
    }
  }
  return lines.join('\n');
}

/** What the agents say they advertise to the router, as prefix → next hops. */
function expectedByAgents(agents: Map<string, Agent>): string {
  const out: string[] = [];
  for (const [, a] of agents) {
    const peer = a.routes(ROUTER).peers[0];
    for (const r of peer?.advertised ?? []) out.push(`${r.prefix} ${r.nextHop}`);
  }
  return out.sort().join('\n');
}

function tableKey(router: BgpSpeaker): string {
  return router
    .received()
    .map((r) => `${r.prefix} ${r.nextHop}`)
    .sort()
    .join('\n');
}

/** Waits until the router holds exactly what the agents advertise to it, and that stays so for a moment. */
async function converge(agents: Map<string, Agent>, router: BgpSpeaker, timeoutMs = 30000): Promise<boolean> {
  for (const a of agents.values()) await a.settled();
  const deadline = Date.now() + timeoutMs;
  let stableSince = 0;
  while (Date.now() < deadline) {
    const want = expectedByAgents(agents);
    const have = tableKey(router);
    // Every session up: the router's and the node-to-node mesh.
    const upAll = [...agents.values()].every((a) => {
      const peers = a.status().peers;
      return peers.length === NODES.length && peers.every((p) => p.state === 'Established');
    });
    if (upAll && want !== '' && want === have) {
      if (stableSince === 0) stableSince = Date.now();
      else if (Date.now() - stableSince >= 300) return true;
    } else stableSince = 0;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const STEPS = [
  { file: undefined, title: 'step 0: the cluster as installed — each node advertises its pod blocks' },
  { file: '01-service-cluster-ips.yaml', title: 'step 1: serviceClusterIPs 198.18.0.0/16 — the range via all three nodes (ECMP)' },
  { file: '02-customer-local.yaml', title: 'step 2: externalTrafficPolicy: Local on yaobank/customer — its /32 via worker1 only (the node with its pod)' },
  { file: '03-service-external-ips.yaml', title: 'step 3: serviceExternalIPs 203.0.113.0/24 — the external range via all three nodes' },
  { file: '04-customer-external-ip.yaml', title: 'step 4: external IP 203.0.113.10 on yaobank/customer — the /32 via worker1 only' },
] as const;

async function tsbgp(args: string[]): Promise<string> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(repo, 'src/agent/main.ts'), ...args], { cwd: repo });
  return stdout + stderr;
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'tsbgp-demo-'));
  const agents = new Map<string, Agent>();
  let router: BgpSpeaker | undefined;
  let failed = false;
  try {
    const port = await freePort();
    const base = join(dir, 'manifests', 'base');
    // One layer per lab step (a later layer replaces the same resource of an earlier one), empty until the step.
    const stepDirs = STEPS.slice(1).map((_, i) => join(dir, 'manifests', `step${i + 1}`));
    copyLocalized(join(here, 'yaobank', 'base'), base, port);
    copyLocalized(join(here, 'yaobank', 'steps'), join(dir, 'lab-steps'), port);
    for (const d of stepDirs) mkdirSync(d);
    console.log(`# tsbgp demo: the Calico YAO Bank lab on loopback (port ${port}, files in ${dir})`);
    console.log(`# nodes: ${NODES.map((n) => `${n.name} ${n.ip}`).join(', ')} (AS 64512); router host1 ${ROUTER} (AS 65000)`);

    router = new BgpSpeaker({ asn: 65000, routerId: ROUTER, listen: { addresses: [ROUTER], port } });
    await router.start();
    for (const n of NODES)
      router.addPeer({ address: n.ip, port, asn: 64512, localAddress: ROUTER, families: ['ipv4'], connectRetryTime: 1, idleHoldTime: 1, description: n.name });

    const logFile = join(dir, 'agents.log');
    for (const n of NODES) {
      const logger = createLogger({ level: 'info', write: (line) => writeFileSync(logFile, `{"node":"${n.name}",${line.slice(1)}`, { flag: 'a' }) });
      const agent = await runAgent({
        node: n.name,
        manifests: [base, ...stepDirs],
        control: join(dir, `${n.name}.sock`),
        logger,
        speakerFactory: (opts) => new BgpSpeaker(opts),
        signals: false,
        debounceMs: 50,
      });
      agents.set(n.name, agent);
    }

    for (const [i, step] of STEPS.entries()) {
      if (step.file) cpSync(join(dir, 'lab-steps', step.file), join(stepDirs[i - 1], step.file));
      const ok = await converge(agents, router);
      console.log(`\n== ${step.title}`);
      console.log(`host1$ ip route  (routes learned over BGP)`);
      console.log(routeTable(router));
      if (!ok) {
        failed = true;
        console.log(`!! step ${i}: the router's table did not match what the agents advertise within 30 s`);
      }
    }

    const w1 = join(dir, 'worker1.sock');
    console.log(`\n== worker1$ tsbgp status`);
    console.log((await tsbgp(['status', '--control', w1])).trimEnd());
    console.log(`\n== worker2$ tsbgp status`);
    console.log((await tsbgp(['status', '--control', join(dir, 'worker2.sock')])).trimEnd());
    console.log(`\n== worker1$ tsbgp explain yaobank/customer`);
    console.log((await tsbgp(['explain', 'yaobank/customer', '--control', w1])).trimEnd());
    console.log(`\n== worker2$ tsbgp explain 203.0.113.10/32`);
    console.log((await tsbgp(['explain', '203.0.113.10/32', '--control', join(dir, 'worker2.sock')])).trimEnd());
  } catch (e) {
    failed = true;
    console.error(`demo failed: ${(e as Error).stack ?? e}`);
  } finally {
    for (const a of agents.values()) await a.stop();
    await router?.stop({ message: 'demo finished' });
    if (process.env.TSBGP_DEMO_KEEP) console.log(`# kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  console.log(failed ? '\n# demo FAILED' : '\n# demo finished');
  return failed ? 1 : 0;
}

process.exitCode = await main();
