/**
 * RIB benchmark: originate 1,040,000 IPv4 /24s over a few thousand attribute
 * sets, plan (and fake-pack) the UPDATEs for one update group, and measure
 * the heap per route with 1 peer and with 10 peers in the group.
 *
 *   node --expose-gc --import tsx bench/rib.ts [--quick] [--real-packer] [--learned-only]
 *
 * By default UPDATEs are counted, not encoded (the packer is measured with
 * the codec); --real-packer uses src/wire/packer.ts instead.
 */
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import type { Packer } from '../src/rib/ports.js';
import { Rib } from '../src/rib/rib.js';
import * as wirePacker from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';

const quick = process.argv.includes('--quick');
const realPacker = process.argv.includes('--real-packer');
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
    const id = rib.addPeer({ address: Address.v4((0x0a000000 + p + 1) >>> 0), asn: 65100, localAsn: 65000 - (p % groups), localAddressV4: Address.parse('192.0.2.1') });
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
  if (rib.locRibSize !== N || (!realPacker && counter.prefixes !== N * groups)) throw new Error(`expected ${N} routes, got ${rib.locRibSize} / ${counter.prefixes}`);
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

const median = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// --learned-only: just the last (info) figure.
const learnedOnly = process.argv.includes('--learned-only');
for (const peers of learnedOnly ? [] : [1, 10]) {
  const rs: Result[] = [];
  for (let r = 0; r < RUNS; r++) rs.push(run(peers));
  const m = (f: (r: Result) => number) => median(rs.map(f));
  console.log(
    `${N} prefixes, ${SETS} attribute sets, ${peers} peer(s) in one group: ` +
      `originate ${m((r) => r.originateMs).toFixed(0)} ms, plan ${m((r) => r.planMs).toFixed(0)} ms, ` +
      `${realPacker ? 'pack' : 'fake pack'} ${m((r) => r.packMs).toFixed(0)} ms (${rs[0].messages} UPDATEs), ` +
      `total ${m((r) => r.originateMs + r.planMs).toFixed(0)} ms (cpu ${m((r) => r.cpuMs).toFixed(0)} ms); heap ${gc ? m((r) => r.bytesPerRoute).toFixed(1) : '?'} bytes/route`,
  );
}

if (!learnedOnly) {
  const plain = run(1, true);
  console.log(`  same, 1 peer, a fresh attribute object per originate call (interning hashes each): originate ${plain.originateMs.toFixed(0)} ms`);
  const two = run(2, false, 2);
  console.log(`  2 peers in 2 update groups: plan ${two.planMs.toFixed(0)} ms, heap ${gc ? two.bytesPerRoute.toFixed(1) : '?'} bytes/route`);
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
console.log(`  info: ${N} prefixes learned from one eBGP peer and planned toward another: ${learned.ms.toFixed(0)} ms (ingest ${learned.ingestMs.toFixed(0)} ms, cpu ${learned.cpuMs.toFixed(0)} ms), heap ${gc ? learned.bytesPerRoute.toFixed(1) : '?'} bytes/route (Adj-RIB-In included)`);
