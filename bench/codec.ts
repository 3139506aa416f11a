/**
 * UPDATE codec benchmark on a synthetic full table.
 *
 *   node --import tsx bench/codec.ts           # 1,040,000 IPv4 + 220,000 IPv6 prefixes
 *   node --import tsx bench/codec.ts --quick   # a 1/20 smoke version
 *
 * Builds prefixes with today's length mix, a few thousand attribute sets
 * (AS paths of 2–8 ASNs, some communities / large communities / MED), packs
 * them into 4096-byte UPDATEs, then times decode, encode (encodeUpdateBody of
 * the decoded messages) and packing, each the median of several runs after
 * a warm-up (wall time; CPU time beside it, as the machine may be shared); plus one small UPDATE (1 prefix, 6 attributes).
 */
import { performance } from 'node:perf_hooks';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import type { CodecContext } from '../src/wire/context.js';
import { packUpdates } from '../src/wire/packer.js';
import type { PathAttributes, UpdateMessage } from '../src/wire/types.js';
import { decodeUpdate, encodeUpdateBody } from '../src/wire/update.js';
import { mulberry32 } from '../test/prng.js';
import { emit, median, type Cell } from './report.js';

const quick = process.argv.includes('--quick');
const scale = quick ? 20 : 1;
const V4_COUNT = Math.round(1_040_000 / scale);
const V6_COUNT = Math.round(220_000 / scale);
const SETS = Math.round(3000 / scale);
const RUNS = quick ? 5 : 7;
const ctx: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };

// Deterministic PRNG so every run sees the same table.
const rand = mulberry32(0x5eed);
const u32 = () => (rand() * 4294967296) >>> 0;

function picker(weights: Record<number, number>): () => number {
  const entries = Object.entries(weights).map(([k, w]) => [Number(k), w] as const);
  const total = entries.reduce((s, [, w]) => s + w, 0);
  return () => {
    let r = rand() * total;
    for (const [k, w] of entries) if ((r -= w) < 0) return k;
    return entries[entries.length - 1][0];
  };
}

// Roughly the 2020s DFZ: IPv4 about 60% /24, then /22, /23, /20, /21, /19, /16…; IPv6 mostly /48, then /32, /40, /44, /36…
const v4Len = picker({ 24: 60, 22: 10, 23: 8, 20: 5, 21: 5, 19: 3.5, 16: 2.5, 18: 2, 17: 1.5, 15: 0.6, 14: 0.4, 13: 0.3, 12: 0.2 });
const v6Len = picker({ 48: 52, 32: 12, 44: 8, 40: 7, 36: 4, 46: 3, 47: 2, 29: 3, 45: 2, 42: 2, 34: 1, 38: 1, 56: 1.5, 64: 1.5 });

function attrSet(): PathAttributes {
  const n = 2 + Math.floor(rand() * 7);
  const asns = Array.from({ length: n }, () => (rand() < 0.3 ? 131072 + Math.floor(rand() * 300000) : 1 + Math.floor(rand() * 64000)));
  const a: { -readonly [K in keyof PathAttributes]: PathAttributes[K] } = {
    origin: rand() < 0.9 ? 0 : 2,
    asPath: [{ type: 2, asns }],
    nextHop: Address.v4(0xc0000200 + Math.floor(rand() * 250)),
  };
  if (rand() < 0.3) a.med = Math.floor(rand() * 1000);
  if (rand() < 0.4) a.communities = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => ((asns[0] & 0xffff) * 65536 + Math.floor(rand() * 1000)) >>> 0);
  if (rand() < 0.1)
    a.largeCommunities = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
      global: asns[0],
      local1: Math.floor(rand() * 100),
      local2: Math.floor(rand() * 100),
    }));
  return a;
}

function buildStream() {
  const sets = Array.from({ length: SETS }, attrSet);
  const v4: Prefix[][] = sets.map(() => []);
  const v6: Prefix[][] = sets.map(() => []);
  for (let i = 0; i < V4_COUNT; i++) {
    const len = v4Len();
    v4[Math.floor(rand() * SETS)].push(Prefix.containing(Address.v4(u32()), len));
  }
  for (let i = 0; i < V6_COUNT; i++) {
    const len = v6Len();
    v6[Math.floor(rand() * SETS)].push(Prefix.containing(Address.v6(0x20000000 | (u32() >>> 3), u32(), 0, 0), len));
  }
  const nextHopV6 = [Address.parse('2001:db8::1')];
  const pack = (family: Prefix[][]) => sets.flatMap((a, i) => (family[i].length > 0 ? packUpdates(a, family[i], ctx, { nextHopV6 }) : []));
  return { sets, v4, v6, nextHopV6, msgs4: pack(v4), msgs6: pack(v6) };
}

/** Median wall time in ms of `runs` runs after three warm-ups; also logs the median process CPU time (the machine may be shared). */
let lastCpu = 0;
function time(runs: number, fn: () => void): number {
  for (let i = 0; i < 3; i++) fn(); // warm-up
  const t: number[] = [];
  const c: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
    const u = process.cpuUsage(c0);
    c.push((u.user + u.system) / 1000);
  }
  lastCpu = median(c);
  return median(t);
}

function bytesOf(msgs: Uint8Array[]): number {
  let n = 0;
  for (const m of msgs) n += m.length;
  return n;
}

const rows: Cell[][] = [];
function report(what: string, ms: number, prefixes: number, bytes: number): void {
  const ns = (ms * 1e6) / prefixes;
  rows.push([
    what,
    Math.round(ns * 10) / 10,
    Math.round(prefixes / ms / 10) / 100,
    Math.round(bytes / ms / 1000),
    Math.round(ms * 10) / 10,
    Math.round(lastCpu * 10) / 10,
  ]);
  console.log(
    `${what.padEnd(30)} ${ns.toFixed(1).padStart(7)} ns/prefix  ${(prefixes / ms / 1000).toFixed(2).padStart(6)} M prefixes/s  ${(bytes / ms / 1000).toFixed(0).padStart(5)} MB/s  (median ${ms.toFixed(1)} ms wall, ${lastCpu.toFixed(1)} ms CPU)`,
  );
}

let sink = 0;
// The small message first, while the heap is small (a retained full table makes every later allocation pay for GC).
// One small UPDATE: 1 prefix, 6 attributes.
const small: UpdateMessage = {
  type: 'update',
  withdrawn: [],
  nlri: [Prefix.parse('198.51.100.0/24')],
  attributes: {
    origin: 0,
    asPath: [{ type: 2, asns: [65001, 4200000000, 3356] }],
    nextHop: Address.parse('192.0.2.1'),
    med: 10,
    localPref: 100,
    communities: [0xfde90064, 0xffffff01],
  },
};
const smallBody = encodeUpdateBody(small, ctx);
/** Prefixes announced, counted as the RIB reads them: the decoder's key lists (reading `nlri` would build the Prefix lists too). */
const nlriCount = (m: UpdateMessage): number => (m.nlriKeys ?? m.nlri).length + (m.attributes.mpReach?.keys ?? m.attributes.mpReach?.nlri ?? []).length;
const ITER = quick ? 20_000 : 200_000;
const perOp = (fn: () => void) =>
  (time(RUNS, () => {
    for (let i = 0; i < ITER; i++) fn();
  }) *
    1e6) /
  ITER;
const decNs = perOp(() => void (sink += nlriCount(decodeUpdate(smallBody, ctx))));
const encNs = perOp(() => void (sink += encodeUpdateBody(small, ctx).length));
const smallLine = `small UPDATE (1 prefix, 6 attributes, ${smallBody.length + 19} bytes): decode ${decNs.toFixed(0)} ns, encode ${encNs.toFixed(0)} ns`;

const t0 = performance.now();
const s = buildStream();
const tableLine = `${V4_COUNT.toLocaleString('en-US')} IPv4 prefixes in ${s.msgs4.length} UPDATEs (${(bytesOf(s.msgs4) / 1e6).toFixed(1)} MB) and ${V6_COUNT.toLocaleString('en-US')} IPv6 in ${s.msgs6.length} (${(bytesOf(s.msgs6) / 1e6).toFixed(1)} MB), ${SETS} attribute sets (AS paths of 2–8 ASNs, some communities, large communities, MED), 4096-byte UPDATEs`;
console.log(
  `table: ${V4_COUNT} IPv4 in ${s.msgs4.length} UPDATEs (${(bytesOf(s.msgs4) / 1e6).toFixed(1)} MB), ${V6_COUNT} IPv6 in ${s.msgs6.length} UPDATEs (${(bytesOf(s.msgs6) / 1e6).toFixed(1)} MB), ${SETS} attribute sets; built in ${(performance.now() - t0).toFixed(0)} ms; ${RUNS} runs each${quick ? ' (quick)' : ''}`,
);

function decodeAll(msgs: Uint8Array[]): UpdateMessage[] {
  const out = new Array<UpdateMessage>(msgs.length);
  for (let i = 0; i < msgs.length; i++) out[i] = decodeUpdate(msgs[i].subarray(19), ctx);
  return out;
}
function count(d: UpdateMessage[]): number {
  let n = 0;
  for (const m of d) n += nlriCount(m);
  return n;
}

// Decode throughput: each message decoded and counted, then dropped (keeping them is the RIB's cost, not the codec's).
const decodeCount = (msgs: Uint8Array[]) => {
  for (let i = 0; i < msgs.length; i++) {
    const m = decodeUpdate(msgs[i].subarray(19), ctx);
    sink += nlriCount(m);
  }
};
report(
  'decode IPv4',
  time(RUNS, () => decodeCount(s.msgs4)),
  V4_COUNT,
  bytesOf(s.msgs4),
);
report(
  'decode IPv6',
  time(RUNS, () => decodeCount(s.msgs6)),
  V6_COUNT,
  bytesOf(s.msgs6),
);
// Packing before any decoded table is kept, so it does not pay for a doubled heap.
const packAll = (family: Prefix[][]) => {
  for (let i = 0; i < s.sets.length; i++) if (family[i].length > 0) sink += packUpdates(s.sets[i], family[i], ctx, { nextHopV6: s.nextHopV6 }).length;
};
report(
  'pack IPv4 (packUpdates)',
  time(RUNS, () => packAll(s.v4)),
  V4_COUNT,
  bytesOf(s.msgs4),
);
report(
  'pack IPv6 (packUpdates)',
  time(RUNS, () => packAll(s.v6)),
  V6_COUNT,
  bytesOf(s.msgs6),
);
const retained = time(RUNS, () => void (sink += decodeAll(s.msgs4).length));
report('decode IPv4, results kept', retained, V4_COUNT, bytesOf(s.msgs4));

const d4 = decodeAll(s.msgs4);
const d6 = decodeAll(s.msgs6);
if (count(d4) !== V4_COUNT || count(d6) !== V6_COUNT) throw new Error('decoded prefix count does not match the table');
const encodeAll = (d: UpdateMessage[]) => {
  for (const m of d) sink += encodeUpdateBody(m, ctx).length;
};
report(
  'encode IPv4 (encodeUpdateBody)',
  time(RUNS, () => encodeAll(d4)),
  V4_COUNT,
  bytesOf(s.msgs4),
);
report(
  'encode IPv6 (encodeUpdateBody)',
  time(RUNS, () => encodeAll(d6)),
  V6_COUNT,
  bytesOf(s.msgs6),
);

console.log(smallLine);
if (sink === 0) console.log('');
emit({
  suite: 'codec',
  title: 'Codec: a full-table UPDATE stream',
  columns: ['operation', 'ns per prefix', 'M prefixes/s', 'MB/s', 'wall (ms)', 'CPU (ms)'],
  rows: [...rows, [`small UPDATE (1 prefix, 6 attributes): decode / encode`, `${decNs.toFixed(0)} / ${encNs.toFixed(0)} ns per message`, '', '', '', '']],
  notes: [
    `Stream: ${tableLine}. Median of ${RUNS} runs after 3 warm-ups; decode drops each message after counting its prefixes unless "kept"; encode re-encodes the decoded messages (encodeUpdateBody); pack builds the UPDATEs from attribute sets and prefix lists (packUpdates).`,
  ],
});
