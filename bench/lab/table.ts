/**
 * A synthetic, deterministic "full table" for the lab benchmarks: IPv4 and
 * IPv6 prefixes with a realistic mix of prefix lengths, and a few thousand
 * distinct attribute sets (AS paths of 1-6 hops, standard and large
 * communities, MED, ORIGIN) spread over the routes with a skew, as a few
 * origin ASes announce many prefixes and most announce few. The same seed
 * gives the same table in every process (the tsbgp node generates it
 * itself; the daemons get it rendered into their own configuration).
 *
 * The prefixes are globally routable-looking space (a full table needs more
 * than the documentation ranges hold). They only ever live in the daemons'
 * BGP tables: no benchmark node installs routes into a kernel table.
 */
import type { AttrSet } from '../../test/interop/daemon-routes.js';
import { mulberry32 } from '../../test/prng.js';

export interface TableSpec {
  readonly v4: number;
  readonly v6: number;
  readonly sets: number;
  readonly seed: number;
  /** Every IPv4 prefix a /24 and every route the same attributes (scenario 4b). */
  readonly plain24?: boolean;
}

export interface FullTable {
  readonly spec: TableSpec;
  readonly sets: readonly AttrSet[];
  /** Network address, length and attribute set index of each IPv4 route. */
  readonly v4: { readonly addr: Uint32Array; readonly len: Uint8Array; readonly set: Uint16Array };
  /** Upper 64 bits of each IPv6 network (lengths are ≤ 64), length and set. */
  readonly v6: { readonly hi: Uint32Array; readonly lo: Uint32Array; readonly len: Uint8Array; readonly set: Uint16Array };
}

/** Cumulative pick from [value, weight] pairs. */
function picker(weights: readonly (readonly [number, number])[]): (u: number) => number {
  const total = weights.reduce((s, [, w]) => s + w, 0);
  return (u) => {
    let x = u * total;
    for (const [v, w] of weights) if ((x -= w) < 0) return v;
    return weights[weights.length - 1][0];
  };
}

// Roughly the shape of today's tables (share of prefixes per length, in ‰).
const V4_LENGTHS = picker([
  [24, 600],
  [23, 95],
  [22, 125],
  [21, 50],
  [20, 45],
  [19, 30],
  [18, 15],
  [17, 10],
  [16, 18],
  [15, 4],
  [14, 3],
  [13, 2],
  [12, 1],
  [11, 1],
  [10, 1],
]);
const V6_LENGTHS = picker([
  [48, 530],
  [32, 110],
  [44, 60],
  [40, 50],
  [36, 30],
  [29, 30],
  [46, 30],
  [47, 25],
  [42, 25],
  [45, 20],
  [56, 20],
  [33, 15],
  [34, 15],
  [38, 15],
  [64, 10],
  [28, 10],
  [30, 5],
]);

/** Space never used for table prefixes: private, special, and the lab's own link and loopback ranges. */
function v4Excluded(addr: number): boolean {
  const a = addr >>> 24;
  const b = (addr >>> 16) & 255;
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 100 && b >= 64 && b < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b < 32) ||
    (a === 192 && (b === 168 || b === 0)) ||
    (a === 198 && (b === 18 || b === 19 || b === 51)) ||
    (a === 203 && b === 0)
  );
}

function attrSets(n: number, next: () => number): AttrSet[] {
  const origin = picker([
    [0, 85],
    [2, 14],
    [1, 1],
  ]);
  const hops = picker([
    [1, 5],
    [2, 25],
    [3, 35],
    [4, 20],
    [5, 10],
    [6, 5],
  ]);
  const transit = Array.from({ length: 40 }, () => 1000 + Math.floor(next() * 60000));
  const sets: AttrSet[] = [];
  for (let s = 0; s < n; s++) {
    const len = hops(next());
    // a few transit ASes near us, then the origin (2- or 4-byte)
    const path = [...new Set(Array.from({ length: len - 1 }, () => transit[Math.floor(next() * next() * transit.length)]))];
    path.push(next() < 0.2 ? 131072 + Math.floor(next() * 270000) : 1000 + Math.floor(next() * 60000));
    // standard communities carry a 2-byte ASN: the nearest 2-byte one on the path
    const tagger = path.find((a) => a < 65536) ?? 64512;
    const communities = Array.from({ length: Math.floor(next() * next() * 6) }, () => `${tagger}:${Math.floor(next() * 65536)}`);
    const large = next() < 0.1 ? [`${path[0]}:${Math.floor(next() * 1000)}:${Math.floor(next() * 1000)}`] : [];
    sets.push({
      origin: (['igp', 'egp', 'incomplete'] as const)[origin(next())],
      asPath: path,
      ...(next() < 0.3 ? { med: Math.floor(next() * 1000) } : {}),
      communities: [...new Set(communities)],
      largeCommunities: large,
    });
  }
  return sets;
}

export function fullTable(spec: TableSpec): FullTable {
  const next = mulberry32(spec.seed);
  const sets = spec.plain24 ? [{ origin: 'igp' as const, communities: [], largeCommunities: [] }] : attrSets(spec.sets, next);
  // skewed: set i gets a share falling off like 1/(i+1)
  const pickSet = (): number => (sets.length === 1 ? 0 : Math.min(sets.length - 1, Math.floor(Math.exp(next() * Math.log(sets.length + 1)) - 1)));

  const v4 = { addr: new Uint32Array(spec.v4), len: new Uint8Array(spec.v4), set: new Uint16Array(spec.v4) };
  const seen = new Set<number>();
  for (let i = 0; i < spec.v4;) {
    if (spec.plain24) {
      // consecutive /24s from 11.0.0.0 on, skipping excluded space
      const addr = (((11 << 24) >>> 0) + (i + seen.size) * 256) >>> 0;
      if (v4Excluded(addr)) {
        seen.add(addr);
        continue;
      }
      v4.addr[i] = addr;
      v4.len[i] = 24;
      i++;
      continue;
    }
    const len = V4_LENGTHS(next());
    const addr = (Math.floor(next() * 2 ** 32) & (len === 0 ? 0 : 0xffffffff << (32 - len))) >>> 0;
    if (v4Excluded(addr)) continue;
    const key = addr * 64 + len;
    if (seen.has(key)) continue;
    seen.add(key);
    v4.addr[i] = addr;
    v4.len[i] = len;
    v4.set[i] = pickSet();
    i++;
  }

  const v6 = { hi: new Uint32Array(spec.v6), lo: new Uint32Array(spec.v6), len: new Uint8Array(spec.v6), set: new Uint16Array(spec.v6) };
  const seen6 = new Set<string>();
  for (let i = 0; i < spec.v6;) {
    const len = V6_LENGTHS(next());
    // 2000::/3, minus 2001:db8::/32 (the lab's own links)
    let hi = ((0x20000000 | Math.floor(next() * 2 ** 29)) & (0xffffffff << (32 - Math.min(32, len)))) >>> 0;
    const lo = len <= 32 ? 0 : (Math.floor(next() * 2 ** 32) & (len === 64 ? 0xffffffff : ~(0xffffffff >>> (len - 32)))) >>> 0;
    if (hi === 0x20010db8) continue;
    hi >>>= 0;
    const key = `${hi}:${lo}:${len}`;
    if (seen6.has(key)) continue;
    seen6.add(key);
    v6.hi[i] = hi;
    v6.lo[i] = lo;
    v6.len[i] = len;
    v6.set[i] = pickSet();
    i++;
  }
  return { spec, sets, v4, v6 };
}

export function v4Prefix(addr: number, len: number): string {
  return `${addr >>> 24}.${(addr >>> 16) & 255}.${(addr >>> 8) & 255}.${addr & 255}/${len}`;
}

/** RFC 5952 text of an IPv6 network whose lower 64 bits are zero. */
export function v6Prefix(hi: number, lo: number, len: number): string {
  const g = [hi >>> 16, hi & 0xffff, lo >>> 16, lo & 0xffff];
  // trailing zero groups (and the four implicit ones) compress to "::"
  let n = 4;
  while (n > 0 && g[n - 1] === 0) n--;
  return `${g
    .slice(0, n)
    .map((x) => x.toString(16))
    .join(':')}::/${len}`;
}

/** Every route as text with its set index, IPv4 first. */
export function* routes(t: FullTable, family?: 4 | 6): Generator<{ prefix: string; set: number }> {
  if (family !== 6) for (let i = 0; i < t.v4.addr.length; i++) yield { prefix: v4Prefix(t.v4.addr[i], t.v4.len[i]), set: t.v4.set[i] };
  if (family !== 4) for (let i = 0; i < t.v6.hi.length; i++) yield { prefix: v6Prefix(t.v6.hi[i], t.v6.lo[i], t.v6.len[i]), set: t.v6.set[i] };
}
