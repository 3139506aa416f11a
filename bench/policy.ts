// Policy evaluation over a full table: 1,040,000 IPv4 routes sharing a few
// thousand (interned) attribute sets, through a 3-statement policy with a
// prefix-set condition and a community add; and an accept/reject-only chain.
// Emits a table (bench/report.ts) of medians of several runs, with the heap
// growth per route.
//   node --expose-gc --import tsx bench/policy.ts [--quick]
import { PerformanceObserver } from 'node:perf_hooks';
import { emit, median, type Cell } from './report.js';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { compilePolicy, evaluate } from '../src/policy/engine.js';
import type { PolicyContext, PolicyRoute, RouteSource } from '../src/policy/types.js';
import type { PathAttributes } from '../src/wire/types.js';

const quick = process.argv.includes('--quick');
const ROUTES = quick ? 100_000 : 1_040_000;
const ATTR_SETS = 3000;
const RUNS = quick ? 3 : 5;

let seed = 0x2545f491;
function rnd(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
}
const maskOf = (len: number) => (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0);

const source: RouteSource = { kind: 'peer', address: Address.parse('192.0.2.9'), asn: 65009, type: 'ebgp' };
const ctx: PolicyContext = { peer: { address: Address.parse('192.0.2.9'), asn: 65009, type: 'ebgp', localAsn: 65000 }, direction: 'import' };

const attrSets: PathAttributes[] = [];
for (let i = 0; i < ATTR_SETS; i++) {
  attrSets.push({
    origin: 0,
    asPath: [{ type: 2, asns: [65009, 64512 + (rnd() % 1000), 1 + (rnd() % 60000)] }],
    nextHop: Address.v4(0xc0000209),
    med: rnd() % 100,
    communities: i % 3 === 0 ? [(65009 << 16) | (i % 100)] : [],
  });
}
const routes: PolicyRoute[] = [];
for (let i = 0; i < ROUTES; i++) {
  const len = 16 + (rnd() % 9);
  routes.push({ prefix: Prefix.v4((rnd() & maskOf(len)) >>> 0, len), attrs: attrSets[rnd() % ATTR_SETS], source });
}
// Bogons-like prefix set: a handful of reject ranges; plus a customer set.
const bogons = [
  '0.0.0.0/8{8,32}',
  '10.0.0.0/8{8,32}',
  '127.0.0.0/8{8,32}',
  '169.254.0.0/16{16,32}',
  '172.16.0.0/12{12,32}',
  '192.168.0.0/16{16,32}',
  '224.0.0.0/3{3,32}',
];
const compiled = compilePolicy({
  sets: { prefix: { bogons, long: ['0.0.0.0/0{25,32}'] }, community: { blackhole: ['65535:666'] } },
  policies: {
    full: {
      statements: [
        { name: 'no-bogons', conditions: { prefixSet: { set: 'bogons' } }, actions: { result: 'reject' } },
        { name: 'no-long', conditions: { prefixSet: { set: 'long' } }, actions: { result: 'reject' } },
        { name: 'tag', actions: { community: { add: ['65000:100'] }, result: 'accept' } },
      ],
    },
    filter: {
      statements: [
        { name: 'no-bogons', conditions: { prefixSet: { set: 'bogons' } }, actions: { result: 'reject' } },
        { name: 'no-blackhole', conditions: { communitySet: { set: 'blackhole' } }, actions: { result: 'reject' } },
        { name: 'ok', actions: { result: 'accept' } },
      ],
    },
  },
});
const modChain = compiled.chain({ direction: 'import', policies: ['full'] });
const filterChain = compiled.chain({ direction: 'import', policies: ['filter'] });

// Young-generation collections during a run: a proxy for per-route allocation.
let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === 1) scavenges++;
}).observe({ entryTypes: ['gc'] });
const gc = (globalThis as { gc?: () => void }).gc;
async function bench(label: string, chain: typeof modChain): Promise<Cell[]> {
  const ms: number[] = [];
  let accepted = 0;
  let heapPerRoute = NaN;
  const gcs: number[] = [];
  for (let r = 0; r < RUNS + 1; r++) {
    gc?.();
    const h0 = process.memoryUsage().heapUsed;
    const s0 = scavenges;
    const t0 = process.hrtime.bigint();
    let n = 0;
    for (let i = 0; i < routes.length; i++) if (evaluate(chain, routes[i], ctx).verdict === 'accept') n++;
    const t = Number(process.hrtime.bigint() - t0) / 1e6;
    const h1 = process.memoryUsage().heapUsed;
    await new Promise((r) => setImmediate(r)); // let the gc observer report
    gcs.push(scavenges - s0);
    if (r === 0) continue; // warm-up
    ms.push(t);
    accepted = n;
    heapPerRoute = (h1 - h0) / routes.length;
  }
  const m = median(ms);
  return [label, m, ((routes.length / m) * 1e3) / 1e6, accepted, median(gcs), gc ? heapPerRoute : 'n/a (no --expose-gc)'];
}
emit({
  suite: 'policy',
  title: `Policy evaluation over a full table (${ROUTES.toLocaleString('en')} IPv4 routes, ${ATTR_SETS.toLocaleString('en')} attribute sets)`,
  columns: ['import chain', 'ms', 'M routes/s', 'accepted', 'scavenges/run', 'heap B/route'],
  rows: [await bench('3 statements: prefix sets, community add', modChain), await bench('3 statements: accept/reject only', filterChain)],
  notes: [
    `Medians of ${RUNS} runs after one warm-up. Modifications are memoised per interned attribute set, so a full table copies attributes once per set, not per route; the heap column is the growth over one run.`,
  ],
});
