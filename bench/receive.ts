/**
 * Receive-path benchmark: a peer sends a full table. The table is packed
 * once into one byte stream (src/wire/packer.ts, a few thousand synthetic
 * attribute sets, prefixes interleaved across sets); each run frames and
 * decodes it and feeds every UPDATE to Rib.ingest from one eBGP peer, as the
 * speaker does, with one other peer established so the changes are queued
 * for an update group. Prints the median time over the runs and the heap +
 * external bytes per route once everything is in Adj-RIB-In and Loc-RIB.
 *
 *   node --expose-gc --import tsx bench/receive.ts [--quick]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import type { Packer } from '../src/rib/ports.js';
import { Rib } from '../src/rib/rib.js';
import type { CodecContext } from '../src/wire/context.js';
import { Framer } from '../src/wire/framer.js';
import { decodeMessage } from '../src/wire/message.js';
import { packUpdates } from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';
import { emit, median, type Cell } from './report.js';

const quick = process.argv.includes('--quick');
const SCALE = quick ? 40 : 1;
const V4 = 1_040_000 / SCALE;
const V6 = 220_000 / SCALE;
const SETS = 3_000 / SCALE;
const RUNS = quick ? 3 : 5;
const CTX: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };
const PEER_V4 = Address.parse('10.1.0.1');
const PEER_V6 = Address.parse('2001:db8:1::1');

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined && !process.argv.includes('--emit')) console.warn('run with node --expose-gc for memory figures');

function heap(): number {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function attrs(s: number): PathAttributes {
  return {
    origin: 0,
    asPath: [{ type: 2, asns: [65200, 65300 + (s % 50), 64512 + (s % 401)] }],
    nextHop: PEER_V4,
    med: s % 7,
    communities: [(65200 * 65536 + s) >>> 0, 0xfde80001],
  };
}

function prefixAt(family: 4 | 6, i: number): Prefix {
  return family === 4 ? Prefix.v4((0x10000000 + i * 256) >>> 0, 24) : Prefix.v6(0x20010000 | (i >>> 16), (i & 0xffff) << 16, 0, 0, 48);
}

/** The whole table as the peer would send it: one stream of UPDATE messages. */
function buildStream(family: 4 | 6, n: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (let s = 0; s < SETS; s++) {
    const prefixes: Prefix[] = [];
    for (let i = s; i < n; i += SETS) prefixes.push(prefixAt(family, i));
    for (const m of packUpdates(attrs(s), prefixes, CTX, { nextHopV6: [PEER_V6] })) {
      parts.push(m);
      total += m.length;
    }
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const NO_PACK: Packer = {
  packUpdates: () => [],
  packWithdrawals: () => [],
};

interface Result {
  ms: number;
  cpuMs: number;
  bytesPerRoute: number;
  messages: number;
  rssMb: number;
}

function run(family: 4 | 6, stream: Uint8Array, n: number): Result {
  const before = heap();
  const rss0 = process.memoryUsage().rss;
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.1', packer: NO_PACK });
  const src = rib.addPeer({ address: family === 4 ? PEER_V4 : PEER_V6, asn: 65200 });
  const dst = rib.addPeer({
    address: Address.parse('10.1.0.2'),
    asn: 65100,
    localAddressV4: Address.parse('192.0.2.1'),
    localAddressV6: Address.parse('2001:db8::1'),
  });
  rib.peerUp(src, { ctx: CTX, families: [family], routerId: '10.255.1.1' }, 0);
  rib.peerUp(dst, { ctx: CTX, families: [family], routerId: '10.255.1.2' }, 0);
  rib.flushDue(10);
  const framer = new Framer();
  let messages = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  // Feed the stream in 64 KiB chunks, as a socket would.
  for (let o = 0; o < stream.length; o += 65536) {
    framer.push(stream.subarray(o, Math.min(stream.length, o + 65536)), (type, body) => {
      const m = decodeMessage(type, body, CTX);
      if (m.type !== 'update') throw new Error(`unexpected ${m.type}`);
      rib.ingest(src, m, 20);
      messages++;
    });
  }
  const ms = performance.now() - t0;
  const c1 = process.cpuUsage(c0);
  if (rib.locRibSize !== n) throw new Error(`expected ${n} routes in the Loc-RIB, got ${rib.locRibSize}`);
  const bytesPerRoute = (heap() - before) / n;
  // Whole process (Node itself and the packed stream included), with this RIB alive.
  const mu = process.memoryUsage();
  const rssMb = mu.rss / 1e6;
  if (process.argv.includes('--verbose'))
    console.log(
      `  rss ${(mu.rss / 1e6).toFixed(0)} MB, heap total ${(mu.heapTotal / 1e6).toFixed(0)} MB, used ${(mu.heapUsed / 1e6).toFixed(0)} MB, array buffers ${(mu.arrayBuffers / 1e6).toFixed(0)} MB (before this run: rss ${(rss0 / 1e6).toFixed(0)} MB)`,
    );
  if (rib.locRibSize !== n) throw new Error('RIB collected early');
  return { ms, cpuMs: (c1.user + c1.system) / 1000, bytesPerRoute, messages, rssMb };
}

/**
 * The stream is packed in a child process and read from a file, so that the
 * garbage of packing does not sit in this process's RSS.
 */
function streamFor(family: 4 | 6, n: number): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'tsbgp-receive-'));
  const file = join(dir, `v${family}.bin`);
  try {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--emit', String(family), String(n), file, ...(quick ? ['--quick'] : [])],
      { stdio: 'inherit' },
    );
    if (r.status !== 0) throw new Error(`packing the IPv${family} stream failed (exit ${r.status})`);
    return new Uint8Array(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const emitArg = process.argv.indexOf('--emit');
if (emitArg >= 0) {
  const [family, n, file] = process.argv.slice(emitArg + 1, emitArg + 4);
  writeFileSync(file, buildStream(Number(family) as 4 | 6, Number(n)));
  process.exit(0);
}

const rows: Cell[][] = [];
for (const [family, n] of [
  [4, V4],
  [6, V6],
] as const) {
  const stream = streamFor(family, n);
  const rs: Result[] = [];
  for (let r = 0; r < RUNS; r++) rs.push(run(family, stream, n));
  const m = (f: (r: Result) => number) => median(rs.map(f));
  console.log(
    `IPv${family}: ${n} prefixes (/${family === 4 ? 24 : 48}), ${SETS} attribute sets, ${rs[0].messages} UPDATEs (${(stream.length / 1e6).toFixed(1)} MB): ` +
      `frame+decode+ingest ${m((r) => r.ms).toFixed(0)} ms (cpu ${m((r) => r.cpuMs).toFixed(0)} ms, median of ${RUNS}); ` +
      `heap+external ${gc ? m((r) => r.bytesPerRoute).toFixed(1) : '?'} bytes/route (Adj-RIB-In and Loc-RIB); ` +
      `process RSS after run 1 ${rs[0].rssMb.toFixed(0)} MB`,
  );
  rows.push([
    `IPv${family}: ${n.toLocaleString('en-US')} /${family === 4 ? 24 : 48}s in ${rs[0].messages} UPDATEs (${(stream.length / 1e6).toFixed(1)} MB)`,
    Math.round(m((r) => r.ms)),
    Math.round(m((r) => r.cpuMs)),
    Math.round((m((r) => r.ms) * 1e6) / n),
    gc ? Math.round(m((r) => r.bytesPerRoute)) : 'n/a',
    Math.round(rs[0].rssMb),
  ]);
}
emit({
  suite: 'receive',
  title: 'Receive a full table (in process): frame, decode, Adj-RIB-In and Loc-RIB',
  columns: ['table', 'wall (ms)', 'CPU (ms)', 'ns per prefix', 'heap + external per route (B)', 'process RSS (MB)'],
  rows,
  notes: [
    `One eBGP peer's stream fed in 64 KiB chunks to the framer, decoder and Rib.ingest, with a second peer established so changes queue for its update group; ${SETS.toLocaleString('en-US')} attribute sets. Median of ${RUNS} runs; memory with the RIB alive, after a full GC; RSS of the whole process (stream included) after the first run. The same over TCP from BIRD is scenario 4b (bench:lab).`,
  ],
});
