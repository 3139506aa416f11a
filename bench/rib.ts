/**
 * RIB benchmark: originate 1,040,000 IPv4 /24s over a few thousand attribute
 * sets, plan and pack the UPDATEs for one update group, and measure the heap
 * per route with 1 peer and with 10 peers in the group.
 *
 *   node --expose-gc --import tsx bench/rib.ts [--quick] [--count-only] [--learned-only]
 *
 * UPDATEs are encoded by src/wire/packer.ts; --count-only counts them
 * instead (the RIB's own share of the time).
 */
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import type { Packer } from '../src/rib/ports.js';
import { Rib } from '../src/rib/rib.js';
import * as wirePacker from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';
import { emit, median, type Cell } from './report.js';

const quick = process.argv.includes('--quick');
const realPacker = !process.argv.includes('--count-only');
const N = quick ? 104_000 : 1_040_000;
const SETS = quick ? 300 : 3_000;
const RUNS = quick ? 1 : 3;
const PER_MESSAGE = 900; // about what fits in 4096 bytes for /24s

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.warn('run with node --expose-gc for heap figures');

/** Counts messages instead of encoding them: the real packer is measured in bench/wire. */
class CountingPacker implements Packer {
  messages = 0;
  prefixes = 0;
  packUpdates(_a: PathAttributes, prefixes: readonly Prefix[]): Uint8Array[] {
    this.prefixes += prefixes.length;
    const n = Math.ceil(prefixes.length / PER_MESSAGE);
    this.messages += n;
    return Array.from({ length: n }, () => EMPTY);
  }
  packWithdrawals(prefixes: readonly Prefix[]): Uint8Array[] {
    return this.packUpdates({}, prefixes);
  }
}
const EMPTY = new Uint8Array(0);

function attrSets(): PathAttributes[] {
  return Array.from({ length: SETS }, (_, i) => ({
    origin: 0,
    asPath: [],
    med: i % 7,
    communities: [(65000 * 65536 + i) >>> 0, 0xfde80001],
  }));
}

function heap(): number {
  gc?.();
  gc?.();
  // Typed-array tables live outside the V8 heap: count them too.
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

interface Result {
  originateMs: number;
  planMs: number;
  packMs: number;
  messages: number;
  bytesPerRoute: number;
  /** Process CPU time for originate + plan: less sensitive than wall time to a shared, busy machine. */
  cpuMs: number;
}

function run(peers: number, plainAttrs = false, groups = 1): Result {
  const sets = attrSets();
  const counter = new CountingPacker();
  const packer: Packer = realPacker ? wirePacker : counter;
  const before = heap();
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.1', packer });
  const ids: string[] = [];
  for (let p = 0; p < peers; p++) {
    // A different per-peer local AS puts a peer in a different update group.
    const id = rib.addPeer({
      address: Address.v4((0x0a000000 + p + 1) >>> 0),
      asn: 65100,
      localAsn: 65000 - (p % groups),
      localAddressV4: Address.parse('192.0.2.1'),
    });
    rib.peerUp(id, { ctx: { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false }, families: [4], routerId: `10.255.0.${p + 1}` }, 0);
    ids.push(id);
  }
  rib.flushDue(10); // initial empty dumps + End-of-RIB
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  // Interleave attribute sets across prefixes, as a planner handing over many services would.
  for (let s = 0; s < SETS; s++) {
    // Either the interned set (what a planner holding a set per service does) or a fresh equal object per call.
    const set = rib.store.lookupOrCreate(sets[s]);
    for (let i = s; i < N; i += SETS) rib.originate(Prefix.v4((0x10000000 + i * 256) >>> 0, 24), plainAttrs ? { ...sets[s] } : set, 20);
  }
  const t1 = performance.now();
  const plans = rib.planDue(1e9);
  const t2 = performance.now();
  const c1 = process.cpuUsage(c0);
  let sends;
  try {
    sends = plans.flatMap((p) => p.group.pack(p, packer));
  } catch (err) {
    console.log(`packing failed: ${(err as Error).message}`);
    process.exit(1);
  }
  const t3 = performance.now();
  if (rib.locRibSize !== N || (!realPacker && counter.prefixes !== N * groups))
    throw new Error(`expected ${N} routes, got ${rib.locRibSize} / ${counter.prefixes}`);
  const messages = realPacker ? sends[0].messages.length : counter.messages;
  if (sends.length !== peers || rib.groupCount !== groups) throw new Error(`expected ${peers} sends in ${groups} groups`);
  plans.length = 0;
  sends.length = 0;
  const after = heap();
  const bytesPerRoute = (after - before) / N;
  // Keep the RIB alive until after the measurement.
  if (rib.groupOf(ids[0])!.adjRibOutSize !== N) throw new Error('Adj-RIB-Out incomplete');
  return { originateMs: t1 - t0, planMs: t2 - t1, packMs: t3 - t2, messages, bytesPerRoute, cpuMs: (c1.user + c1.system) / 1000 };
}

/** Median of each figure over `RUNS` runs. */
function medianRun(f: () => Result): Result {
  const rs = Array.from({ length: RUNS }, f);
  const m = (g: (r: Result) => number) => median(rs.map(g));
  return {
    originateMs: m((r) => r.originateMs),
    planMs: m((r) => r.planMs),
    packMs: m((r) => r.packMs),
    messages: rs[0].messages,
    bytesPerRoute: m((r) => r.bytesPerRoute),
    cpuMs: m((r) => r.cpuMs),
  };
}

const heapCell = (b: number): Cell => (gc ? b : 'n/a (no --expose-gc)');
const row = (label: string, r: Result): Cell[] => [
  label,
  r.originateMs,
  r.planMs,
  r.packMs,
  r.originateMs + r.planMs + r.packMs,
  r.cpuMs,
  r.messages,
  heapCell(r.bytesPerRoute),
];

// --learned-only: just the last (info) figure.
const learnedOnly = process.argv.includes('--learned-only');
if (!learnedOnly) {
  const one = medianRun(() => run(1));
  const ten = medianRun(() => run(10));
  const plain = run(1, true);
  const two = run(2, false, 2);
  emit({
    suite: 'rib',
    title: `Originate ${N.toLocaleString('en')} IPv4 prefixes and produce their UPDATEs`,
    columns: ['scenario', 'originate ms', 'plan ms', `${realPacker ? 'pack' : 'count (no encode)'} ms`, 'total ms', 'CPU ms', 'UPDATEs', 'heap B/route'],
    rows: [
      row('1 peer', one),
      row('10 peers in one update group', ten),
      row('1 peer, a fresh attribute object per call', plain),
      row('2 peers in 2 update groups', two),
    ],
    notes: [
      `Goals: total < 1000 ms for one peer; heap ≤ 100 B/route for the first peer and ≤ 10 B more per extra peer in the group (here ${gc ? ((ten.bytesPerRoute - one.bytesPerRoute) / 9).toFixed(1) : '?'} B per extra peer).`,
      `${SETS.toLocaleString('en')} attribute sets interleaved over the prefixes; ${RUNS > 1 ? `medians of ${RUNS} runs for the first two rows, one run for the others` : 'one run each'}. ` +
        (realPacker
          ? 'UPDATEs encoded by src/wire/packer.ts (--count-only counts them instead).'
          : `UPDATEs counted at ${PER_MESSAGE} /24s per message, not encoded (--count-only).`) +
        ' Heap counts V8 heap and typed-array memory after a full GC; CPU is process CPU time for originate + plan.',
    ],
  });
}

/** Info: the same prefixes learned from one eBGP peer (UPDATEs of 900 prefixes each) and planned toward one other peer. */
function ingestRun(): { ms: number; ingestMs: number; cpuMs: number; bytesPerRoute: number } {
  const sets = attrSets();
  const before = heap();
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.1', packer: new CountingPacker() });
  const src = rib.addPeer({ address: Address.parse('10.1.0.1'), asn: 65200 });
  const dst = rib.addPeer({ address: Address.parse('10.1.0.2'), asn: 65100, localAddressV4: Address.parse('192.0.2.1') });
  rib.peerUp(dst, { ctx: { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false }, families: [4], routerId: '10.255.1.2' }, 0);
  rib.flushDue(10);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let s = 0; s < SETS; s++) {
    const attrs: PathAttributes = { ...sets[s], asPath: [{ type: 2, asns: [65200, 65300 + (s % 50)] }], nextHop: Address.parse('10.1.0.1') };
    let batch: Prefix[] = [];
    const send = () => {
      rib.ingest(src, { type: 'update', withdrawn: [], attributes: attrs, nlri: batch }, 20);
      batch = [];
    };
    for (let i = s; i < N; i += SETS) {
      batch.push(Prefix.v4((0x10000000 + i * 256) >>> 0, 24));
      if (batch.length === PER_MESSAGE) send();
    }
    if (batch.length > 0) send();
  }
  const ingestMs = performance.now() - t0;
  rib.planDue(1e9);
  const ms = performance.now() - t0;
  const c1 = process.cpuUsage(c0);
  const bytesPerRoute = (heap() - before) / N;
  if (rib.groupOf(dst)!.adjRibOutSize !== N) throw new Error('ingest run incomplete');
  return { ms, ingestMs, cpuMs: (c1.user + c1.system) / 1000, bytesPerRoute };
}
const learned = ingestRun();
emit({
  suite: 'rib',
  title: `${N.toLocaleString('en')} prefixes learned from one eBGP peer and planned toward another`,
  columns: ['ingest ms', 'total ms (ingest + plan)', 'CPU ms', 'heap B/route (Adj-RIB-In included)'],
  rows: [[learned.ingestMs, learned.ms, learned.cpuMs, heapCell(learned.bytesPerRoute)]],
  notes: [
    `Decoded UPDATEs of ${PER_MESSAGE} prefixes handed to Rib.ingest (no framing or decoding: bench/receive.ts measures the whole receive path). One run.`,
  ],
});
