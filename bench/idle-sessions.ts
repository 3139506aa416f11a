/**
 * What an idle session costs a route reflector: this process is the
 * reflector (a BgpSpeaker, every client a passive route-reflector client),
 * N tsbgp clients in a few child processes (bench/speaker-farm.ts) connect
 * over real TCP on 127.0.x.y and originate nothing. Memory (after a full GC)
 * is read with no peer, with the N peers configured, and with every session
 * Established and idle; the per-session figures are the differences divided
 * by N. `--snapshot FILE` also writes a heap snapshot of the reflector with
 * the sessions up (sum it with bench/heap-summary.ts).
 *
 *   node --import tsx bench/idle-sessions.ts [--clients 400] [--processes 4] [--snapshot FILE]
 *
 * The reflector runs as plain JavaScript, as the agent does: started from
 * the .ts file, the program compiles itself (bench/compile.ts) and runs the
 * result with --expose-gc and TSBGP_NODE_ARGS (node flags to compare, e.g.
 * --max-semi-space-size=2).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { BgpSpeaker } from '../src/speaker/speaker.js';
import { sleep, until } from './clock.js';
import { compileBench, deployedNodeFlags } from './compile.js';
import { emit } from './report.js';
import { startFarm, type Farm } from './speaker-farm.js';

const self = fileURLToPath(import.meta.url);
if (self.endsWith('.ts')) {
  const [js] = compileBench([self], 'bench-js');
  const flags = [...deployedNodeFlags(), ...(process.env.TSBGP_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const r = spawnSync(process.execPath, ['--expose-gc', ...flags, js, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_COMMAND: process.env.BENCH_COMMAND ?? ['node --import tsx bench/idle-sessions.ts', ...process.argv.slice(2)].join(' ') },
  });
  process.exit(r.status ?? 1);
}

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const CLIENTS = Number(arg('clients', '400'));
const PROCESSES = Number(arg('processes', '4'));
const SNAPSHOT = process.argv.includes('--snapshot') ? arg('snapshot', '') : undefined;
const ASN = 65000;
const RR = '127.0.2.1';
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (node --import tsx bench/idle-sessions.ts does)');
if (!(CLIENTS > 0 && CLIENTS % PROCESSES === 0)) throw new Error(`--clients (${CLIENTS}) must be a positive multiple of --processes (${PROCESSES})`);

/** Client k: 127.0.3.1 onwards, 250 per /24. */
const clientAddress = (k: number) => `127.0.${3 + Math.floor(k / 250)}.${(k % 250) + 1}`;

interface Mem {
  heap: number;
  /** V8 heap committed (used and free pages): RSS a collection does not give back. */
  heapTotal: number;
  external: number;
  rss: number;
}
async function memory(): Promise<Mem> {
  // settle: timers and sockets that were just touched, then two full collections
  await sleep(200);
  gc!();
  gc!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, heapTotal: m.heapTotal, external: m.external + m.arrayBuffers, rss: m.rss };
}

const rr = new BgpSpeaker({ asn: ASN, routerId: RR, clusterId: RR, listen: { addresses: [RR], port: 0 } });
await rr.start();
const farms: Farm[] = [];
try {
  const empty = await memory();
  const clients = Array.from({ length: CLIENTS }, (_, i) => clientAddress(i));
  for (const c of clients) rr.addPeer({ address: c, asn: ASN, passive: true, routeReflectorClient: true, families: ['ipv4'] });
  const configured = await memory();
  const share = CLIENTS / PROCESSES;
  for (let p = 0; p < PROCESSES; p++) farms.push(startFarm(clients.slice(p * share, (p + 1) * share)));
  await Promise.all(farms.map((f) => f.start(ASN, { address: RR, port: rr.port! })));
  await until('every session Established at the reflector', () => rr.status().every((s) => s.state === 'Established'), 120_000, 10);
  // a few keepalive rounds would not change the steady state: wait for End-of-RIB exchanges to settle
  await sleep(1000);
  const up = await memory();
  if (SNAPSHOT) console.log(`heap snapshot: ${writeHeapSnapshot(SNAPSHOT)}`);
  const per = (a: Mem, b: Mem, k: keyof Mem) => Math.round((b[k] - a[k]) / CLIENTS);
  const mb = (x: number) => Math.round(x / 1e5) / 10;
  emit({
    suite: 'idle-sessions',
    title: `Idle sessions at a route reflector: ${CLIENTS} iBGP clients, no routes`,
    columns: ['measure', 'V8 heap used', 'V8 heap committed', 'external (buffers, typed arrays)', 'RSS'],
    rows: [
      ['reflector, no peer (MB)', mb(empty.heap), mb(empty.heapTotal), mb(empty.external), mb(empty.rss)],
      [`reflector, ${CLIENTS} peers configured, no session (MB)`, mb(configured.heap), mb(configured.heapTotal), mb(configured.external), mb(configured.rss)],
      [`reflector, ${CLIENTS} sessions Established, idle (MB)`, mb(up.heap), mb(up.heapTotal), mb(up.external), mb(up.rss)],
      [
        'per configured peer (bytes)',
        per(empty, configured, 'heap'),
        per(empty, configured, 'heapTotal'),
        per(empty, configured, 'external'),
        per(empty, configured, 'rss'),
      ],
      [
        'per Established session, beyond the configured peer (bytes)',
        per(configured, up, 'heap'),
        per(configured, up, 'heapTotal'),
        per(configured, up, 'external'),
        per(configured, up, 'rss'),
      ],
    ],
    notes: [
      `Reflector: this process (BgpSpeaker, ${CLIENTS} passive route-reflector clients, IPv4). Clients: tsbgp speakers, ${share} per process in ${PROCESSES} processes, over real TCP on 127.0.x.y, originating nothing. Memory after two full collections. Node flags: ${process.execArgv.join(' ') || 'none'}.`,
    ],
  });
} finally {
  await Promise.all(farms.map((f) => f.stop().catch(() => undefined)));
  await rr.stop();
}
