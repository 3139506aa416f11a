// Soak (issue 14 §5): a router (bench/table-sender.ts, its own process) sends
// and withdraws a full table every cycle to a node (bench/soak-node.ts, its
// own process: a speaker with the agent's metrics server); /metrics scraped
// every 15 s (10 s timeout, as Prometheus), /healthz every 2 s with a 1 s
// timeout (as a kubelet probe). Reports failed probes, session resets and
// the node's RSS per cycle; exits 1 on any failed probe or reset.
//
//   npm run soak                       1,000,000 routes, 60 s cycles, 10 minutes
//   npm run soak -- --quick            100,000 routes, 1 cycle (the CI form)
//   npm run soak -- --routes N --cycle-s S --duration-s D
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { emit } from './report.js';
import { TableSender } from './table-sender-client.js';

const { values } = parseArgs({
  options: { quick: { type: 'boolean' }, routes: { type: 'string' }, 'cycle-s': { type: 'string' }, 'duration-s': { type: 'string' } },
});
const quick = values.quick === true;
const routes = Number(values.routes ?? (quick ? 100_000 : 1_000_000));
const cycleS = Number(values['cycle-s'] ?? 60);
const durationS = Number(values['duration-s'] ?? (quick ? cycleS : 600));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sender = await TableSender.start(routes, '127.0.0.1', '127.0.0.2', { timeoutMs: 600_000 });
const node = spawn(process.execPath, ['--import', 'tsx', join(dirname(fileURLToPath(import.meta.url)), 'soak-node.ts'), String(sender.port)], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const events: { event: string; reason?: string; at: number }[] = [];
/** The node's longest event-loop stall: overall (from the first table on) and in the current cycle. */
const loopMax = { all: 0, cycle: 0, gcCycle: 0 };
const loopPerCycle: number[] = [];
const gcPerCycle: number[] = [];
const lines = createInterface({ input: node.stdout! });
const metricsPort = await new Promise<number>((resolve) => {
  lines.on('line', (l) => {
    const m = JSON.parse(l) as { metrics?: number; event?: string; reason?: string; loopMaxMs?: number; gcMaxMs?: number };
    if (m.metrics !== undefined) resolve(m.metrics);
    else if (m.loopMaxMs !== undefined) {
      loopMax.all = Math.max(loopMax.all, m.loopMaxMs);
      loopMax.cycle = Math.max(loopMax.cycle, m.loopMaxMs);
      loopMax.gcCycle = Math.max(loopMax.gcCycle, m.gcMaxMs ?? 0);
    } else events.push({ event: m.event!, reason: m.reason, at: Date.now() });
  });
});
const base = `http://127.0.0.2:${metricsPort}`;

async function probe(path: string, timeoutMs: number): Promise<{ ok: boolean; ms: number; body: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.text();
    return { ok: res.status === 200, ms: performance.now() - t0, body };
  } catch {
    return { ok: false, ms: performance.now() - t0, body: '' };
  }
}
const gauge = (body: string, name: string, labels = ''): number | undefined => {
  const line = body.split('\n').find((l) => l.startsWith(`${name}${labels}`) && !l.startsWith('#'));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

// Wait for the first full table before the clock starts.
const t00 = Date.now();
for (;;) {
  const r = await probe('/metrics', 10_000);
  const want = (await sender.command('status')).advertised ?? routes;
  if (r.ok && gauge(r.body, 'tsbgp_bgp_prefixes_received', '{peer="127.0.0.1",family="ipv4"}') === want && want > 0) break;
  if (Date.now() - t00 > 900_000) throw new Error('the first table did not arrive within 900 s');
  await sleep(1000);
}

loopMax.all = 0;
loopMax.cycle = 0;
loopMax.gcCycle = 0;
const health = { sent: 0, failed: 0, maxMs: 0 };
const scrape = { sent: 0, failed: 0, maxMs: 0 };
const rss: { cycle: number; rssMiB: number; received: number; full: { rssMiB: number; received: number } }[] = [];
const start = Date.now();
let running = true;
const healthLoop = (async () => {
  while (running) {
    const r = await probe('/healthz', 1000);
    health.sent++;
    if (!r.ok) health.failed++;
    health.maxMs = Math.max(health.maxMs, r.ms);
    await sleep(2000);
  }
})();
let lastBody = '';
const scrapeLoop = (async () => {
  while (running) {
    const r = await probe('/metrics', 10_000);
    scrape.sent++;
    if (!r.ok) scrape.failed++;
    else lastBody = r.body;
    scrape.maxMs = Math.max(scrape.maxMs, r.ms);
    await sleep(15_000);
  }
})();
const cycles = Math.max(1, Math.round(durationS / cycleS));
// Each cycle: the full table is in for the first half, withdrawn for the second; the
// router's commands are timed but not waited on past their half, so a cycle stays cycleS long.
let announced: Promise<unknown> | undefined;
const senderMs: { withdraw: number; announce: number }[] = [];
let announceMs = 0;
for (let c = 1; c <= cycles; c++) {
  const cycleStart = Date.now();
  await sleep(cycleS * 500);
  if (announced) await announced;
  const full = await probe('/metrics', 10_000);
  if (full.ok) lastBody = full.body;
  const atFull = {
    rssMiB: Math.round((gauge(lastBody, 'process_resident_memory_bytes') ?? 0) / 2 ** 20),
    received: gauge(lastBody, 'tsbgp_bgp_prefixes_received', '{peer="127.0.0.1",family="ipv4"}') ?? -1,
  };
  const w0 = Date.now();
  await sender.command('withdraw');
  senderMs.push({ withdraw: Date.now() - w0, announce: announceMs });
  await sleep(Math.max(0, cycleStart + cycleS * 1000 - Date.now()));
  const r = await probe('/metrics', 10_000);
  if (r.ok) lastBody = r.body;
  rss.push({
    cycle: c,
    rssMiB: Math.round((gauge(lastBody, 'process_resident_memory_bytes') ?? 0) / 2 ** 20),
    received: gauge(lastBody, 'tsbgp_bgp_prefixes_received', '{peer="127.0.0.1",family="ipv4"}') ?? -1,
    full: atFull,
  });
  const a0 = Date.now();
  announced = sender.command('announce').then(() => {
    announceMs = Date.now() - a0;
  });
  loopPerCycle.push(Math.round(loopMax.cycle));
  gcPerCycle.push(Math.round(loopMax.gcCycle));
  loopMax.cycle = 0;
  loopMax.gcCycle = 0;
  console.log(
    `cycle ${c}/${cycles}: node had ${atFull.received} routes at mid-cycle (RSS ${atFull.rssMiB} MiB), ${rss.at(-1)!.received} at the end (RSS ${rss.at(-1)!.rssMiB} MiB); longest loop stall ${loopPerCycle.at(-1)} ms (GC pause ${gcPerCycle.at(-1)} ms); ` +
      `health ${health.failed}/${health.sent} failed (max ${health.maxMs.toFixed(0)} ms), scrapes ${scrape.failed}/${scrape.sent} failed (max ${scrape.maxMs.toFixed(0)} ms), resets ${events.filter((e) => e.event === 'down').length}; router withdraw ${senderMs.at(-1)!.withdraw} ms, previous announce ${senderMs.at(-1)!.announce} ms`,
  );
}
if (announced) await announced;
running = false;
await Promise.all([healthLoop, scrapeLoop]);
const resets = events.filter((e) => e.event === 'down' && e.at >= start);
emit({
  suite: 'soak',
  title: `Soak: ${routes.toLocaleString('en')} routes sent and withdrawn every ${cycleS} s for ${Math.round((Date.now() - start) / 1000)} s`,
  columns: ['measure', 'value'],
  rows: [
    ['/healthz probes failed (1 s timeout, every 2 s)', `${health.failed} of ${health.sent} (slowest ${health.maxMs.toFixed(0)} ms)`],
    ['/metrics scrapes failed (10 s timeout, every 15 s)', `${scrape.failed} of ${scrape.sent} (slowest ${scrape.maxMs.toFixed(0)} ms)`],
    ['cycles where the node did not hold the whole table at mid-cycle', `${rss.filter((x) => x.full.received !== routes).length} of ${rss.length}`],
    ['session resets', `${resets.length}${resets.length ? ` (${[...new Set(resets.map((e) => e.reason))].join('; ')})` : ''}`],
    ['routes at the node mid-cycle (full table) / at the end (withdrawn)', rss.map((x) => `${x.full.received}/${x.received}`).join(', ')],
    ['node RSS with the full table, mid-cycle (MiB)', rss.map((x) => x.full.rssMiB).join(', ')],
    ['node RSS at the end of each cycle, table withdrawn (MiB)', rss.map((x) => x.rssMiB).join(', ')],
    ['router: withdraw / announce command (ms; its own process)', senderMs.map((x) => `${x.withdraw}/${x.announce}`).join(', ')],
    ['node: longest event-loop stall per cycle (ms)', loopPerCycle.join(', ')],
    ['node: longest GC pause per cycle (ms)', gcPerCycle.join(', ')],
  ],
  notes: [
    'The router is tsbgp itself (bench/table-sender.ts) in another process over loopback; the node is a speaker with the agent metrics server (bench/soak-node.ts), hold time 90 s. The machine may be shared: figures are noisy.',
  ],
});
node.stdin!.end();
await sender.stop();
await new Promise((r) => setTimeout(r, 500));
node.kill();
process.exit(health.failed + scrape.failed + resets.length + rss.filter((x) => x.full.received !== routes).length > 0 ? 1 : 0);
