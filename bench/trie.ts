// Trie benchmarks: IPv4/IPv6 longest-prefix match over full-table-sized
// synthetic tables, and prefix-set membership with length ranges, side by
// side with cidr-matcher on the same inputs. Tables of medians of several
// runs, via bench/report.ts.
//   node --expose-gc --import tsx bench/trie.ts [--quick]
import CIDRMatcher from 'cidr-matcher';
import { emit, median, ratio } from './report.js';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { PrefixSet, type PrefixRange } from '../src/net/prefix-set.js';
import { PrefixTrie } from '../src/net/trie.js';

const quick = process.argv.includes('--quick');
const RUNS = quick ? 3 : 5;
const V4_TABLE = quick ? 100_000 : 1_040_000;
const V6_TABLE = quick ? 22_000 : 220_000;
const LOOKUPS = quick ? 200_000 : 2_000_000;
const SET_SIZE = 10_000;
const WARMUP = quick ? 1 : 3;

// xorshift32: deterministic inputs so runs are comparable.
let seed = 0x9e3779b9;
function rnd(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
}
function pick(weights: [number, number][]): number {
  const total = weights.reduce((s, [, w]) => s + w, 0);
  let r = (rnd() / 2 ** 32) * total;
  for (const [len, w] of weights) if ((r -= w) < 0) return len;
  return weights[weights.length - 1][0];
}

// Rough shape of the 2025 global tables (share of prefixes per length).
const V4_LENGTHS: [number, number][] = [
  [8, 0.002],
  [12, 0.03],
  [13, 0.1],
  [14, 0.3],
  [15, 0.5],
  [16, 1.3],
  [17, 0.8],
  [18, 1.3],
  [19, 2.5],
  [20, 4],
  [21, 5],
  [22, 11],
  [23, 10],
  [24, 63],
];
const V6_LENGTHS: [number, number][] = [
  [28, 0.5],
  [29, 3],
  [30, 0.5],
  [32, 11],
  [33, 0.5],
  [34, 0.5],
  [36, 3],
  [40, 5],
  [44, 6],
  [45, 0.5],
  [46, 1.5],
  [47, 1.5],
  [48, 58],
  [56, 1],
  [64, 1],
];

/** Operations per second: the median of `runs` timed runs, by wall clock and by process CPU time (the machine is shared). */
interface Rate {
  readonly wall: number;
  readonly cpu: number;
}
function rate(label: string, ops: number, fn: () => number, runs = RUNS, warmup = WARMUP): Rate {
  const wall: number[] = [];
  const cpu: number[] = [];
  // Warm-up runs: V8 reaches its optimising tier only after a few long loops,
  // and first-touch page faults should not be measured either.
  let sink = 0;
  for (let i = 0; i < warmup; i++) sink += fn();
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    sink += fn();
    wall.push(Number(process.hrtime.bigint() - t0) / 1e9);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e6);
  }
  const r = { wall: ops / median(wall), cpu: ops / median(cpu) };
  console.log(`${label.padEnd(52)} ${(r.wall / 1e6).toFixed(3).padStart(9)} M ops/s   (median of ${runs}, ${ops} ops/run, sink ${sink % 1000})`);
  return r;
}
const M = (n: number) => n / 1e6;
function maskOf(len: number): number {
  return len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
}

// ---------------------------------------------------------------- tables
const started = Date.now();
let t0 = Date.now();
const v4 = new PrefixTrie<number>();
const v4List: Prefix[] = [];
while (v4.size < V4_TABLE) {
  const len = pick(V4_LENGTHS);
  const first = 1 + (rnd() % 223);
  const value = (((first << 24) | (rnd() & 0xffffff)) & maskOf(len)) >>> 0;
  const p = Prefix.v4(value, len);
  if (!v4.has(p)) v4List.push(p);
  v4.set(p, v4.size);
}
const v4Build = Date.now() - t0;
t0 = Date.now();
const v6 = new PrefixTrie<number>();
const v6List: Prefix[] = [];
while (v6.size < V6_TABLE) {
  const len = pick(V6_LENGTHS);
  const w0 = (0x20000000 | (rnd() & 0x0fffffff)) >>> 0; // inside 2000::/4
  const w1 = rnd();
  const p = Prefix.containing(Address.v6(w0, w1, 0, 0), len);
  if (!v6.has(p)) v6List.push(p);
  v6.set(p, v6.size);
}
console.log(`built IPv4 table ${v4.size} prefixes in ${v4Build} ms, IPv6 table ${v6.size} prefixes in ${Date.now() - t0} ms`);

// Lookups: half inside a random table prefix (random host bits), half uniform.
const v4Addrs = new Uint32Array(LOOKUPS);
for (let i = 0; i < LOOKUPS; i++) {
  if (i & 1) v4Addrs[i] = rnd();
  else {
    const p = v4List[rnd() % v4List.length];
    v4Addrs[i] = (p.w0 | (rnd() & ~maskOf(p.length))) >>> 0;
  }
}
const v6Addrs: Address[] = [];
for (let i = 0; i < LOOKUPS / 4; i++) {
  if (i & 1) v6Addrs.push(Address.v6((0x20000000 | (rnd() & 0x0fffffff)) >>> 0, rnd(), rnd(), rnd()));
  else {
    const p = v6List[rnd() % v6List.length];
    const len = p.length;
    v6Addrs.push(Address.v6(p.w0 | (rnd() & ~maskOf(len)), p.w1 | (rnd() & ~maskOf(len - 32)), rnd(), rnd()));
  }
}
const v4AddrObjs = Array.from(v4Addrs.subarray(0, LOOKUPS / 4), (v) => Address.v4(v));

// ---------------------------------------------------------------- ours
console.log('\n### longest-prefix match');
const ourV4 = rate('tsbgp PrefixTrie.lookupV4(number), IPv4', LOOKUPS, () => {
  let hits = 0;
  for (let i = 0; i < v4Addrs.length; i++) if (v4.lookupV4(v4Addrs[i]) !== undefined) hits++;
  return hits;
});
const batchOut = new Array(4096);
const ourV4Many = rate('tsbgp PrefixTrie.lookupV4Many, batches of 4096, IPv4', LOOKUPS, () => {
  let hits = 0;
  for (let off = 0; off < v4Addrs.length; off += 4096) {
    const part = v4Addrs.subarray(off, Math.min(off + 4096, v4Addrs.length));
    v4.lookupV4Many(part, batchOut);
    for (let i = 0; i < part.length; i++) if (batchOut[i] !== undefined) hits++;
  }
  return hits;
});
const ourV4Addr = rate('tsbgp PrefixTrie.lookup(Address), IPv4', v4AddrObjs.length, () => {
  let hits = 0;
  for (let i = 0; i < v4AddrObjs.length; i++) if (v4.lookup(v4AddrObjs[i]) !== undefined) hits++;
  return hits;
});
const ourV6 = rate('tsbgp PrefixTrie.lookup(Address), IPv6', v6Addrs.length, () => {
  let hits = 0;
  for (let i = 0; i < v6Addrs.length; i++) if (v6.lookup(v6Addrs[i]) !== undefined) hits++;
  return hits;
});

// What bounds a lookup on this machine: one random 4-byte read, and two
// dependent ones, in an array as large as the full table's index (its chunks
// are ~1 KiB per routed /16: tens of MiB, far beyond the caches). No table
// structure that is not cache-resident can beat the first figure per call.
const BOUND_WORDS = (quick ? 4 : 16) << 20; // 16 Mi Int32 = 64 MiB in the full run
const big = new Int32Array(BOUND_WORDS);
for (let i = 0; i < BOUND_WORDS; i++) big[i] = (Math.imul(i, 0x9e3779b1) >>> 0) % BOUND_WORDS;
const boundMask = BOUND_WORDS - 1;
const oneRead = rate(`bound: 1 random read in ${BOUND_WORDS >> 18} MiB`, LOOKUPS, () => {
  let x = 0;
  for (let i = 0; i < v4Addrs.length; i++) x += big[(Math.imul(v4Addrs[i], 0x85ebca6b) >>> 0) & boundMask];
  return x;
});
const twoReads = rate(`bound: 2 dependent random reads in ${BOUND_WORDS >> 18} MiB`, LOOKUPS, () => {
  let x = 0;
  for (let i = 0; i < v4Addrs.length; i++) x += big[big[(Math.imul(v4Addrs[i], 0x85ebca6b) >>> 0) & boundMask] & boundMask];
  return x;
});

// cidr-matcher scans its ranges linearly (milliseconds per lookup on a full
// table), so it answers only a small sample of the same address lists, on the
// same full tables: the ratio compares per-lookup time on identical tables.
// One lookup already walks a million ranges, so no warm-up pass is needed.
t0 = Date.now();
const cm4 = new CIDRMatcher(v4List.map(String));
const cm6 = new CIDRMatcher(v6List.map(String));
console.log(`cidr-matcher built in ${Date.now() - t0} ms (answers contains(), not longest match)`);
const CM_N = quick ? 10 : 20;
const v4Text = Array.from(v4Addrs.subarray(0, CM_N), (v) => Address.v4(v).toString());
const v6Text = v6Addrs.slice(0, CM_N / 2).map(String);
const theirV4 = rate(
  `cidr-matcher contains(string), IPv4 (sample of ${v4Text.length})`,
  v4Text.length,
  () => v4Text.filter((a) => cm4.contains(a)).length,
  3,
  0,
);
const theirV6 = rate(
  `cidr-matcher contains(string), IPv6 (sample of ${v6Text.length})`,
  v6Text.length,
  () => v6Text.filter((a) => cm6.contains(a)).length,
  3,
  0,
);
// Same answers on the shared inputs, as a sanity check of the comparison.
for (const a of v4Text) if (cm4.contains(a) !== (v4.lookup(Address.parse(a)) !== undefined)) throw new Error(`disagree on ${a}`);
const v4Name = `IPv4, ${v4.size.toLocaleString('en')} prefixes`;
const v6Name = `IPv6, ${v6.size.toLocaleString('en')} prefixes`;
emit({
  suite: 'trie',
  title: 'Longest-prefix match of random addresses',
  columns: ['table', 'tsbgp call', 'tsbgp M lookups/s', 'by CPU time', 'cidr-matcher lookups/s', 'tsbgp / cidr-matcher'],
  rows: [
    [v4Name, 'lookupV4(number)', M(ourV4.wall), M(ourV4.cpu), theirV4.wall, ratio(ourV4.wall, theirV4.wall)],
    [v4Name, 'lookupV4Many (batches of 4096)', M(ourV4Many.wall), M(ourV4Many.cpu), theirV4.wall, ratio(ourV4Many.wall, theirV4.wall)],
    [v4Name, 'lookup(Address)', M(ourV4Addr.wall), M(ourV4Addr.cpu), theirV4.wall, ratio(ourV4Addr.wall, theirV4.wall)],
    [v6Name, 'lookup(Address)', M(ourV6.wall), M(ourV6.cpu), theirV6.wall, ratio(ourV6.wall, theirV6.wall)],
    [`bound: ${BOUND_WORDS >> 18} MiB array`, '1 random read', M(oneRead.wall), M(oneRead.cpu), '', ''],
    [`bound: ${BOUND_WORDS >> 18} MiB array`, '2 dependent random reads', M(twoReads.wall), M(twoReads.cpu), '', ''],
  ],
  notes: [
    `Goal: ≥ 20 M lookups/s for IPv4 on the full table. Medians of ${RUNS} runs of ${LOOKUPS.toLocaleString('en')} IPv4 / ${v6Addrs.length.toLocaleString('en')} IPv6 lookups, half inside a table prefix, half uniform; "by CPU time" divides by the process's CPU time instead of wall time (the machine is shared).`,
    `The bound rows are plain random reads in an Int32Array as large as the full table's index: what memory latency allows per lookup (a lookup in the full table is one top-level read, cached, then one or two reads in the chunks).`,
    `cidr-matcher answers contains() by scanning its ranges, so it runs on a sample of ${v4Text.length} IPv4 / ${v6Text.length} IPv6 of the same addresses on the same tables; the ratio compares per-lookup time. Its answers agree with ours on the sample.`,
  ],
});

// ---------------------------------------------------------------- prefix sets
console.log('\n### prefix-set membership with length ranges');
const ranges: PrefixRange[] = [];
for (let i = 0; i < SET_SIZE; i++) {
  const base = v4List[rnd() % v4List.length];
  const len = Math.max(8, base.length - (rnd() % 8));
  const prefix = Prefix.v4((base.w0 & maskOf(len)) >>> 0, len);
  const ge = len + (rnd() % (33 - len));
  ranges.push({ prefix, ge, le: Math.min(32, ge + (rnd() % 8)) });
}
const set = new PrefixSet(ranges);
const probes: Prefix[] = [];
for (let i = 0; i < LOOKUPS / 2; i++) {
  const r = ranges[rnd() % ranges.length];
  const len = i & 1 ? r.prefix.length + (rnd() % (33 - r.prefix.length)) : pick(V4_LENGTHS);
  const v = i & 1 ? r.prefix.w0 | (rnd() & ~maskOf(r.prefix.length)) : rnd();
  probes.push(Prefix.v4((v & maskOf(len)) >>> 0, len));
}
const ourSet = rate(`tsbgp PrefixSet.matches, ${SET_SIZE} ranges`, probes.length, () => {
  let n = 0;
  for (let i = 0; i < probes.length; i++) if (set.matches(probes[i])) n++;
  return n;
});
const few = probes.slice(0, quick ? 200 : 1000);
const naive = (q: Prefix) => ranges.some((r) => q.length >= r.ge && q.length <= r.le && r.prefix.contains(q));
const naiveRate = rate('linear scan over the same ranges', few.length, () => few.filter(naive).length, 3, 1);
for (const q of few) if (naive(q) !== set.matches(q)) throw new Error(`set disagrees on ${q}`);
const cmSet = new CIDRMatcher(ranges.map((r) => r.prefix.toString()));
const fewText = few.map((q) => q.network.toString());
const cmRate = rate('cidr-matcher contains(network) (no length ranges)', fewText.length, () => fewText.filter((a) => cmSet.contains(a)).length, 3, 1);
emit({
  suite: 'trie',
  title: `Prefix-set membership with length ranges, ${SET_SIZE.toLocaleString('en')} ranges`,
  columns: ['implementation', 'M checks/s', 'by CPU time', 'tsbgp / this'],
  rows: [
    ['tsbgp PrefixSet.matches (prefix and length range)', M(ourSet.wall), M(ourSet.cpu), ratio(ourSet.wall, ourSet.wall)],
    ['cidr-matcher contains(network) (no length ranges)', M(cmRate.wall), M(cmRate.cpu), ratio(ourSet.wall, cmRate.wall)],
    ['linear scan over the same ranges', M(naiveRate.wall), M(naiveRate.cpu), ratio(ourSet.wall, naiveRate.wall)],
  ],
  notes: [
    `Goal: ≥ 10 M checks/s. ${probes.length.toLocaleString('en')} IPv4 probes (half inside a range with a random length, half random), medians of ${RUNS} runs; cidr-matcher and the linear scan on the first ${few.length} probes. The linear scan agrees with PrefixSet on them.`,
  ],
});
console.log(`\nbench/trie.ts finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
