/**
 * The speaker's kernel glue without a kernel: the pure part of the lab row
 * `tsbgp-bgp` (bench/lab/kernel-bgp.ts) in one process. Two eBGP peers (the
 * same neighbour AS) each send N IPv4 /32s in UPDATEs of 800 prefixes; the
 * Rib (multipath, as BgpSpeaker builds it with the `kernel` option) feeds
 * SpeakerKernel exactly as BgpSpeaker wires it, whose KernelFib is never
 * started: its pure core is planned by hand once per event-loop turn and
 * every operation reported applied. Then both peers withdraw everything.
 *
 *   node --expose-gc --import tsx bench/kernel-glue.ts [--routes N] [--runs K] [--turn U] [--lag L]
 *
 * --turn: UPDATEs taken from each peer per event-loop turn (default 4: a
 * read of 16 KB per socket); --lag: how many UPDATEs the second peer is
 * behind the first (default 2). Prints the medians (install, withdraw, ms)
 * and the operations planned (writes per prefix).
 */
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { Rib } from '../src/rib/rib.js';
import { PolicyRegistry } from '../src/speaker/policies.js';
import { SpeakerKernel, type KernelOptions } from '../src/speaker/kernel.js';
import type { PathAttributes, UpdateMessage } from '../src/wire/types.js';
import { median } from './report.js';

const argOf = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const N = Number(argOf('--routes') ?? 100_000);
const RUNS = Number(argOf('--runs') ?? 5);
const TURN = Number(argOf('--turn') ?? 4);
const LAG = Number(argOf('--lag') ?? 2);
const PER = 800;
const gc = (globalThis as { gc?: () => void }).gc;

const PEERS = ['192.0.2.7', '192.0.2.8'];
const turn = () => new Promise<void>((r) => setImmediate(r));

function updates(peer: string, withdraw: boolean): UpdateMessage[] {
  const attributes: PathAttributes = { origin: 0, asPath: [{ type: 2, asns: [64512] }], nextHop: Address.parse(peer) };
  const out: UpdateMessage[] = [];
  const base = Address.parse('198.18.0.0').w0;
  for (let i = 0; i < N; i += PER) {
    const ps: Prefix[] = [];
    for (let j = i; j < Math.min(N, i + PER); j++) ps.push(Prefix.v4(base + j, 32));
    out.push(withdraw ? { type: 'update', withdrawn: ps, attributes: {}, nlri: [] } : { type: 'update', withdrawn: [], attributes, nlri: ps });
  }
  return out;
}

async function once(): Promise<{ add: number; del: number; addOps: number; delOps: number }> {
  const speaker = { asn: 64500, scheduler: { now: () => 0, setTimeout: () => 0, clearTimeout: () => {} }, restartTime: 120, forEach: () => {} };
  const sk = new SpeakerKernel({} as KernelOptions, new PolicyRegistry(), speaker as never, () => {});
  const rib = new Rib({ localAsn: 64500, routerId: '192.0.2.1', multipath: { maxPaths: 16, relaxNeighborAs: false }, ...sk.ribHooks() });
  speaker.forEach = ((fn: Parameters<Rib['forEachMultipath']>[0]) => rib.forEachMultipath(fn)) as never;
  for (const p of PEERS) rib.addPeer({ address: Address.parse(p), asn: 64512 });
  const core = sk.fib.core;
  core.setConnected([{ prefix: '192.0.2.0/24', dev: 'd0' }]);
  core.kernelTable([]);
  core.endRestart();
  core.plan();
  const feeds = PEERS.map((p) => ({ add: updates(p, false), del: updates(p, true) }));
  const run = async (which: 'add' | 'del'): Promise<{ ms: number; ops: number }> => {
    gc?.();
    const t0 = performance.now();
    let ops = 0;
    const total = feeds[0][which].length;
    for (let a = 0; a < total + LAG; a += TURN) {
      for (let i = a; i < Math.min(a + TURN, total); i++) rib.ingest(PEERS[0], feeds[0][which][i], 0);
      for (let i = Math.max(0, a - LAG); i < Math.min(a + TURN - LAG, total); i++) rib.ingest(PEERS[1], feeds[1][which][i], 0);
      await turn();
      for (const op of core.plan()) {
        core.applied(op);
        ops++;
      }
    }
    await turn();
    for (const op of core.plan()) {
      core.applied(op);
      ops++;
    }
    return { ms: performance.now() - t0, ops };
  };
  const add = await run('add');
  if (core.counts.installed !== N) throw new Error(`installed ${core.counts.installed}, expected ${N}`);
  const two = [...core.installedRoutes()].filter((r) => r.nexthops.length === 2).length;
  if (two !== N) throw new Error(`${two} routes with two next hops, expected ${N}`);
  const del = await run('del');
  if (core.counts.installed !== 0) throw new Error(`installed ${core.counts.installed} after withdrawing, expected 0`);
  return { add: add.ms, del: del.ms, addOps: add.ops, delOps: del.ops };
}

const rs = [];
for (let i = 0; i < RUNS; i++) rs.push(await once());
const f = (x: number) => x.toFixed(0);
console.log(JSON.stringify({ routes: N, turn: TURN, lag: LAG, runs: RUNS, install: rs.map((r) => f(r.add)), withdraw: rs.map((r) => f(r.del)) }));
console.log(
  `install ${f(median(rs.map((r) => r.add)))} ms (${(rs[0].addOps / N).toFixed(2)} writes per prefix), withdraw ${f(median(rs.map((r) => r.del)))} ms (${(rs[0].delOps / N).toFixed(2)} writes per prefix); medians of ${RUNS}`,
);
