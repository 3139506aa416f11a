// /metrics and /healthz latency while a router (bench/table-sender.ts, its own
// process) sends a full table to a speaker with the agent's metrics on, and
// once the table is in (issue 14 §1). Every scrape is an HTTP round trip on
// loopback; the figure that matters is the worst one: Prometheus and the
// kubelet time out (the DaemonSet's probes: 1 s).
//
//   node --import tsx bench/metrics-scrape.ts [ROUTES]   (default 1,000,000)
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startMetricsServer } from '../src/agent/metrics-server.js';
import { AgentMetrics } from '../src/agent/metrics.js';
import { BgpSpeaker } from '../src/speaker/speaker.js';
import { emit, median, percentile } from './report.js';
import { TableSender } from './table-sender-client.js';

const N = Number(process.argv[2] ?? 1_000_000);

async function timed(url: string): Promise<{ ms: number; status: number; body: string }> {
  const t0 = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  const body = await res.text();
  return { ms: performance.now() - t0, status: res.status, body };
}

const sender = await TableSender.start(N, '127.0.0.1', '127.0.0.2', { timeoutMs: 600_000 });
const receiver = new BgpSpeaker({ asn: 64512, routerId: '127.0.0.2', listen: false });
receiver.originate('203.0.113.0/24');
receiver.addPeer({ address: '127.0.0.1', port: sender.port, asn: 65000, localAddress: '127.0.0.2', families: ['ipv4'], holdTime: 9, connectRetryTime: 1 });
const metrics = new AgentMetrics();
metrics.attach(() => ({ running: true, speaker: receiver, configErrors: 0 }));
// What the agent does on each session state change.
receiver.on('stateChange', () => metrics.refresh());
const server = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${server.address.port}`;
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const t0 = performance.now();
await receiver.start();

const during: number[] = [];
const health: number[] = [];
let failures = 0;
let resets = 0;
const resetReasons: string[] = [];
receiver.on('peerDown', (_st, reason) => (resets++, resetReasons.push(reason)));
const count = () => receiver.status()[0]?.counters.prefixesReceived ?? 0;
// Health every 100 ms alongside.
let healthOn = true;
const healthLoop = (async () => {
  while (healthOn) {
    const r = await timed(`${base}/healthz`).catch(() => undefined);
    if (!r || r.status !== 200) failures++;
    else health.push(r.ms);
    await new Promise((r) => setTimeout(r, 200));
  }
})();
// What the router sends: its Adj-RIB-Out (routes whose AS path holds ours are not sent to us).
const expected = async () => (await sender.command('status')).advertised ?? N;
let want = await expected();
while (count() < want || want === 0) {
  if (performance.now() - t0 > 900_000) throw new Error(`table not received after 900 s (${count()} of ${want})`);
  want = await expected();
  const r = await timed(`${base}/metrics`);
  if (r.status !== 200) failures++;
  else if (count() > 0) during.push(r.ms);
  // 4 a second: under the endpoint's rate limit (5/s), 60 times what Prometheus asks (one per 15 s).
  await new Promise((r) => setTimeout(r, 250));
}
const receiveS = (performance.now() - t0) / 1000;
const loopMaxDuring = loop.max / 1e6;
loop.reset();
const after: number[] = [];
for (let i = 0; i < 20; i++) {
  const r = await timed(`${base}/metrics`);
  if (r.status !== 200) failures++;
  after.push(r.ms);
  await new Promise((r) => setTimeout(r, 250));
}
const s0 = performance.now();
for (let i = 0; i < 100; i++) receiver.status();
const statusUs = ((performance.now() - s0) / 100) * 1000;
// What each scrape (and each session state change) cost before issue 14: metrics walked received() and advertised().
const w0 = performance.now();
const walked = receiver.received('127.0.0.1').length + receiver.advertised('127.0.0.1').length;
const walkMs = performance.now() - w0;
healthOn = false;
await healthLoop;
loop.disable();
const rss = process.memoryUsage().rss / 2 ** 20;

const f = (x: number) => x.toFixed(1);
emit({
  suite: 'metrics-scrape',
  title: `/metrics while receiving a full table (${N.toLocaleString('en')} IPv4 routes from a router in another process)`,
  columns: ['measure', 'value'],
  rows: [
    ['routes sent by the router / received', `${want} / ${count()}`],
    ['table received in', `${receiveS.toFixed(1)} s`],
    ['/metrics scrapes during the receive', during.length],
    ['/metrics latency during the receive, median / p99 / max', `${f(median(during))} / ${f(percentile(during, 99))} / ${f(Math.max(...during))} ms`],
    ['/metrics latency with the table in, median / max', `${f(median(after))} / ${f(Math.max(...after))} ms`],
    ['/healthz latency, median / max', `${f(median(health))} / ${f(Math.max(...health))} ms`],
    ['failed probes / session resets', `${failures} / ${resets}${resetReasons.length ? ` (${[...new Set(resetReasons)].join('; ')})` : ''}`],
    ['speaker.status() with the table in (what a scrape reads now)', `${statusUs.toFixed(1)} µs`],
    [
      'received() + advertised() with the table in (what each scrape walked before)',
      `${walkMs.toFixed(0)} ms for ${walked.toLocaleString('en')} routes, loop blocked throughout`,
    ],
    ['event loop delay max during the receive', `${f(loopMaxDuring)} ms`],
    ['receiver RSS at the end', `${rss.toFixed(0)} MiB`],
  ],
  notes: [
    'Scrapes every 250 ms and /healthz every 200 ms, over HTTP on loopback, from the process that runs the speaker. The scrape reads counters the RIB keeps as routes change (O(peers)); the worst latency during the receive is the loop being busy with the receive itself (UPDATE decoding and best-path work between socket reads), not the scrape.',
  ],
});
await server.close();
await receiver.stop();
await sender.stop();
process.exit(0);
