/**
 * Scenario 7, memory: what a tsbgp speaker holds per session and per
 * advertised route. Each case runs in a fresh process (so RSS starts clean):
 * a speaker with S sessions to receivers in another process
 * (bench/wire-peer.ts, raw BGP readers) originates N /24s; heap and RSS are
 * taken after a full GC with nothing, with the S sessions up, and once every
 * receiver has all N routes.
 *
 *   node --expose-gc --import tsx bench/memory.ts [--quick]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BgpSpeaker } from '../src/speaker/speaker.js';
import { sleep, until } from './clock.js';
import { emit, median } from './report.js';
import { startWirePeer } from './wire-peer.js';

const quick = process.argv.includes('--quick');
const ROUTES = quick ? 10_000 : 100_000;
const CASES = quick ? [4] : [1, 100];
const RUNS = quick ? 1 : 3;
const ASN = 64512;
const gc = (globalThis as { gc?: () => void }).gc;

interface Sample {
  heap: number;
  rss: number;
}
interface CaseResult {
  sessions: number;
  routes: number;
  base: Sample;
  one: Sample;
  up: Sample;
  full: Sample;
  sendMs: number;
}

async function sample(): Promise<Sample> {
  await sleep(50);
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

/** One case, in this process: S sessions, N routes. */
async function runCase(sessions: number, routes: number): Promise<CaseResult> {
  const addresses = Array.from({ length: sessions }, (_, i) => `127.0.4.${i + 1}`);
  const sink = await startWirePeer(addresses, ASN);
  const sp = new BgpSpeaker({ asn: ASN, routerId: '127.0.5.1', listen: false });
  try {
    const base = await sample();
    const add = (i: number) =>
      sp.addPeer({ address: addresses[i], port: sink.ports[i], asn: ASN, localAddress: '127.0.5.1', families: ['ipv4'], connectRetryTime: 1 });
    const allUp = (n: number) => until(`${n} sessions up`, () => sink.up() === n && sp.status().every((s) => s.state === 'Established'), 30_000, 10);
    // The first session carries one-time costs (code, the first socket); the others show what one more costs.
    add(0);
    await sp.start();
    await allUp(1);
    await sleep(100);
    const one = await sample();
    for (let i = 1; i < sessions; i++) add(i);
    await allUp(sessions);
    await sleep(100);
    const up = await sample();
    const t0 = performance.now();
    for (let k = 0; k < routes; k++) sp.originate(`${10 + (k >> 16)}.${(k >> 8) & 255}.${k & 255}.0/24`, {});
    await until(`${routes} routes at each receiver`, () => addresses.every((_, s) => sink.announced(0, s) >= routes), 120_000, 10);
    const sendMs = performance.now() - t0;
    const full = await sample();
    return { sessions, routes, base, one, up, full, sendMs };
  } finally {
    await sp.stop();
    await sink.stop();
  }
}

const caseArg = process.argv.indexOf('--case');
if (caseArg >= 0) {
  const r = await runCase(Number(process.argv[caseArg + 1]), Number(process.argv[caseArg + 2]));
  process.stdout.write(`${JSON.stringify(r)}\n`);
  process.exit(0);
}

const results: CaseResult[][] = [];
for (const sessions of CASES) {
  const runs: CaseResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    const p = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--case', String(sessions), String(ROUTES)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (p.status !== 0) throw new Error(`memory case ${sessions} sessions failed (exit ${p.status})`);
    runs.push(JSON.parse(p.stdout.trim().split('\n').at(-1)!) as CaseResult);
  }
  results.push(runs);
  const m = (f: (c: CaseResult) => number) => median(runs.map(f));
  console.log(
    `${sessions} session(s), ${ROUTES} routes: heap ${(m((c) => c.full.heap) / 1e6).toFixed(1)} MB, RSS ${(m((c) => c.full.rss) / 1e6).toFixed(1)} MB, sent in ${m((c) => c.sendMs).toFixed(0)} ms`,
  );
}

const kb = (x: number) => Math.round(x / 100) / 10;
const rows = results.map((runs) => {
  const m = (f: (c: CaseResult) => number) => median(runs.map(f));
  const c = runs[0];
  return [
    `${c.sessions} session${c.sessions > 1 ? 's' : ''}, ${c.routes.toLocaleString('en-US')} routes`,
    kb(m((x) => (x.sessions > 1 ? (x.up.heap - x.one.heap) / (x.sessions - 1) : x.one.heap - x.base.heap))),
    kb(m((x) => (x.sessions > 1 ? (x.up.rss - x.one.rss) / (x.sessions - 1) : x.one.rss - x.base.rss))),
    Math.round(m((x) => (x.full.heap - x.up.heap) / x.routes)),
    Math.round(m((x) => (x.full.rss - x.up.rss) / x.routes)),
    Math.round(m((x) => x.full.rss) / 1e5) / 10,
    Math.round(m((x) => x.sendMs)),
  ];
});
emit({
  suite: 'memory',
  title: 'Memory: a speaker originating routes to its peers',
  columns: [
    'case',
    'heap per session (KB)',
    'RSS per session (KB)',
    'heap per advertised route (B)',
    'RSS per advertised route (B)',
    'process RSS (MB)',
    'until every peer has them (ms)',
  ],
  rows,
  notes: [
    `Median of ${RUNS} runs, each in a fresh process; heap is V8 heap plus external memory (typed arrays, buffers) after a full GC. Per session: with one session, what the first costs (one-time costs included); with more, what each further session costs. A route is a /24 with one shared attribute set, originated by this speaker; the receivers (raw BGP readers in another process, one TCP session each, iBGP) are not counted. Per route covers the RIB and the Adj-RIB-Out shared by the peers' update group.`,
  ],
});
