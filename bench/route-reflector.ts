/**
 * Scenario 5, many peers: tsbgp as a route reflector (this process) with 100
 * iBGP clients, tsbgp speakers spread over a few child processes
 * (bench/speaker-farm.ts), over real TCP on 127.0.x.y. Every client
 * originates its share of 10,000 routes; once all clients hold the others'
 * routes, one client at a time originates one new /32 and we time until the
 * other 99 hold it in their RIBs (each client stamps the arrival itself).
 *
 *   node --expose-gc --import tsx bench/route-reflector.ts [--quick]
 *
 * Memory per client: the reflector's heap and RSS (after a full GC) with no
 * sessions, with every session up and no routes, and with the routes; the
 * clients' processes likewise, divided by the clients each holds.
 */
import { BgpSpeaker } from '../src/speaker/speaker.js';
import { sleep, until } from './clock.js';
import { emit, median, percentile } from './report.js';
import { startFarm, type Farm, type FarmMemory } from './speaker-farm.js';

const quick = process.argv.includes('--quick');
const CLIENTS = quick ? 10 : 100;
const PROCESSES = quick ? 2 : 4;
const ROUTES = quick ? 1000 : 10_000;
const PROBES = quick ? 3 : 12;
const WARMUP = 2;
const ASN = 65000;
const RR = '127.0.2.1';
const gc = (globalThis as { gc?: () => void }).gc;

const clientAddress = (i: number) => `127.0.3.${i + 1}`;
/** Route k of the bulk table: a /24 in 10.0.0.0/8. */
const bulk = (k: number) => `10.${k >> 8}.${k & 255}.0/24`;

function memory(): FarmMemory {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

const per = (a: FarmMemory, b: FarmMemory, n: number) => ({ heap: (b.heap - a.heap) / n, rss: (b.rss - a.rss) / n });

const rr = new BgpSpeaker({ asn: ASN, routerId: RR, clusterId: RR, listen: { addresses: [RR], port: 0 } });
await rr.start();
const farms: Farm[] = [];
try {
  await sleep(100);
  const rrEmpty = memory();
  const clients = Array.from({ length: CLIENTS }, (_, i) => clientAddress(i));
  for (const c of clients) rr.addPeer({ address: c, asn: ASN, passive: true, routeReflectorClient: true, families: ['ipv4'] });
  const share = CLIENTS / PROCESSES;
  for (let p = 0; p < PROCESSES; p++) farms.push(startFarm(clients.slice(p * share, (p + 1) * share)));
  const farmEmpty = await Promise.all(farms.map((f) => f.memory()));
  const t0 = performance.now();
  await Promise.all(farms.map((f) => f.start(ASN, { address: RR, port: rr.port! })));
  const upMs = performance.now() - t0;
  await until('every session Established at the reflector', () => rr.status().every((s) => s.state === 'Established'), 30_000, 10);
  const rrSessions = memory();
  const farmSessions = await Promise.all(farms.map((f) => f.memory()));

  // Every client originates its share of the table; every client then holds all but its own.
  const each = ROUTES / CLIENTS;
  const t1 = performance.now();
  for (const [p, f] of farms.entries()) {
    for (let c = 0; c < share; c++) {
      const k0 = (p * share + c) * each;
      await f.originate(
        c,
        Array.from({ length: each }, (_, k) => bulk(k0 + k)),
      );
    }
  }
  await Promise.all(farms.map((f) => f.sync(ROUTES - each)));
  const syncMs = performance.now() - t1;
  const rrRoutes = memory();
  const farmRoutes = await Promise.all(farms.map((f) => f.memory()));

  // Probes: one new /32 from one client at a time, until the other clients all hold it.
  const arrivals = new Map<string, number[]>();
  await Promise.all(farms.map((f) => f.watch('203.0.113.', (prefix, _client, t) => arrivals.get(prefix)?.push(t))));
  const reachAll: number[] = [];
  const reachMedian: number[] = [];
  for (let k = 0; k < PROBES + WARMUP; k++) {
    const prefix = `203.0.113.${k + 1}/32`;
    arrivals.set(prefix, []);
    const p = k % PROCESSES;
    const c = Math.floor(k / PROCESSES) % share;
    const t = await farms[p].originate(c, [prefix]);
    await until(`${prefix} at ${CLIENTS - 1} clients`, () => arrivals.get(prefix)!.length >= CLIENTS - 1, 30_000, 1);
    const got = arrivals.get(prefix)!.map((x) => x - t);
    if (k >= WARMUP) {
      reachAll.push(Math.max(...got));
      reachMedian.push(median(got));
    }
    await sleep(30);
  }

  const rrPerSession = per(rrEmpty, rrSessions, CLIENTS);
  const rrPerRoute = per(rrSessions, rrRoutes, ROUTES);
  const sum = (xs: FarmMemory[]) => ({ heap: xs.reduce((s, m) => s + m.heap, 0), rss: xs.reduce((s, m) => s + m.rss, 0) });
  const clientSession = per(sum(farmEmpty), sum(farmSessions), CLIENTS);
  const clientRoutes = per(sum(farmSessions), sum(farmRoutes), CLIENTS);
  const kb = (x: number) => Math.round(x / 100) / 10;
  const mb = (x: number) => Math.round(x / 1e5) / 10;
  console.log(
    `${CLIENTS} clients up in ${upMs.toFixed(0)} ms; ${ROUTES} routes reflected to all in ${syncMs.toFixed(0)} ms; new route at all clients p50 ${median(reachAll).toFixed(1)} ms`,
  );
  emit({
    suite: 'route-reflector',
    title: `Route reflector: ${CLIENTS} iBGP clients, ${ROUTES.toLocaleString('en-US')} routes`,
    columns: ['measure', 'tsbgp', 'goal'],
    rows: [
      [`one new route from a client → held by all ${CLIENTS - 1} others, median of ${PROBES} (ms)`, Math.round(median(reachAll) * 10) / 10, '≤ 100'],
      ['↳ same, worst of the probes (ms)', Math.round(percentile(reachAll, 100) * 10) / 10, ''],
      ['↳ median client, median of the probes (ms)', Math.round(median(reachMedian) * 10) / 10, ''],
      [`${CLIENTS} sessions established (ms)`, Math.round(upMs), ''],
      [`${ROUTES.toLocaleString('en-US')} routes (${each} per client) reflected to every client (ms)`, Math.round(syncMs), ''],
      ['reflector: heap / RSS per client session (KB)', `${kb(rrPerSession.heap)} / ${kb(rrPerSession.rss)}`, ''],
      ['reflector: heap / RSS per route, all clients served (bytes)', `${Math.round(rrPerRoute.heap)} / ${Math.round(rrPerRoute.rss)}`, ''],
      ['reflector: heap / RSS in all (MB)', `${mb(rrRoutes.heap)} / ${mb(rrRoutes.rss)}`, ''],
      ['client: heap / RSS per speaker with its session (KB)', `${kb(clientSession.heap)} / ${kb(clientSession.rss)}`, ''],
      [
        `client: heap / RSS per speaker for ${(ROUTES - each).toLocaleString('en-US')} received routes (KB)`,
        `${kb(clientRoutes.heap)} / ${kb(clientRoutes.rss)}`,
        '',
      ],
    ],
    notes: [
      `Clients are tsbgp speakers, ${share} per process in ${PROCESSES} processes, each on its own 127.0.3.x address; the reflector runs in the benchmark's process. Default coalescing (5 ms window) in the originating client and in the reflector. Heap is V8 heap plus external memory after a full GC; RSS deltas are coarse (the allocator keeps freed pages).`,
    ],
  });
} finally {
  await Promise.all(farms.map((f) => f.stop()));
  await rr.stop();
}
