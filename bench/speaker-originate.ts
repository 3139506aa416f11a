/**
 * originate() throughput through a real BgpSpeaker to a second one over
 * loopback: N /24s sharing one attribute set, time until the receiver has
 * them all. Prints the median of several runs.
 *
 *   node --import tsx bench/speaker-originate.ts [N] [runs]
 */
import { BgpSpeaker, Prefix } from '../src/index.js';
import { emit, median } from './report.js';

const N = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 3);

async function once(n = N): Promise<{ originateMs: number; totalMs: number; updates: number }> {
  const a = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.1', listen: { addresses: ['127.0.0.1'], port: 0 } });
  const b = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.2', listen: { addresses: ['127.0.0.2'], port: 0 } });
  await a.start();
  await b.start();
  a.addPeer({ address: '127.0.0.2', port: b.port, asn: 65000, localAddress: '127.0.0.1', families: ['ipv4'], connectRetryTime: 1 });
  b.addPeer({ address: '127.0.0.1', port: a.port, asn: 65000, localAddress: '127.0.0.2', families: ['ipv4'], connectRetryTime: 1 });
  while (b.status()[0].state !== 'Established') await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  const before = b.status()[0].counters.updatesIn;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) a.originate(Prefix.v4((((10 + (i >>> 16)) << 24) | ((i & 0xffff) << 8)) >>> 0, 24), { communities: ['65000:1'] });
  const t1 = performance.now();
  while (b.status()[0].counters.prefixesAccepted < n) await new Promise((r) => setTimeout(r, 5));
  const t2 = performance.now();
  const updates = b.status()[0].counters.updatesIn - before;
  await a.stop();
  await b.stop();
  return { originateMs: t1 - t0, totalMs: t2 - t0, updates };
}

await once(Math.min(N, 20_000)); // warm-up
const runs = [];
for (let i = 0; i < RUNS; i++) runs.push(await once());
const orig = median(runs.map((r) => r.originateMs));
const total = median(runs.map((r) => r.totalMs));
console.log(
  `${N} originations: originate() calls ${orig.toFixed(1)} ms, until all received ${total.toFixed(1)} ms, ${runs[0].updates} UPDATEs (median of ${RUNS})`,
);
emit({
  suite: 'speaker-originate',
  title: `Originate ${N.toLocaleString('en-US')} routes through a BgpSpeaker to another over loopback`,
  columns: ['measure', 'median (ms)', 'ns per route'],
  rows: [
    ['originate() calls', orig, Math.round((orig * 1e6) / N)],
    ['until the receiving speaker holds them all', total, Math.round((total * 1e6) / N)],
  ],
  notes: [
    `/24s sharing one attribute set, iBGP, both speakers in one process; ${runs[0].updates} UPDATEs; median of ${RUNS} runs after a warm-up. Across processes and against BIRD, GoBGP, FRR: scenario 3 (bench:lab).`,
  ],
});
