/**
 * A minimal MRT TABLE_DUMP_V2 writer (RFC 6396), so GoBGP can load many
 * routes at once with `gobgp mrt inject global FILE` (one `gobgp global rib
 * add` per route costs ~17 ms each). Written independently of the codec
 * under test, byte by byte. Used by the GoBGP interop test (a few thousand
 * routes) and the lab benchmarks (a full table).
 */
import { ATTR_SETS, daemonRoutes, type AttrSet } from './daemon-routes.js';
import type { PrefixRange } from './speaker-protocol.js';

const TABLE_DUMP_V2 = 13;
const PEER_INDEX_TABLE = 1;
const RIB_IPV4_UNICAST = 2;
const RIB_IPV6_UNICAST = 4;

function v4Bytes(a: string): number[] {
  return a.split('.').map(Number);
}

function v6Bytes(a: string): number[] {
  const [h, t] = a.includes('::') ? a.split('::') : [a, undefined];
  const hs = h ? h.split(':') : [];
  const tsx = t ? t.split(':') : [];
  const groups = t === undefined ? hs : [...hs, ...Array<string>(8 - hs.length - tsx.length).fill('0'), ...tsx];
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]);
}

const u16 = (n: number): number[] => [(n >>> 8) & 255, n & 255];
const u32 = (n: number): number[] => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];

function record(subtype: number, body: number[]): number[] {
  return [...u32(0), ...u16(TABLE_DUMP_V2), ...u16(subtype), ...u32(body.length), ...body];
}

function attr(flags: number, type: number, value: number[]): number[] {
  return value.length > 255 ? [flags | 0x10, type, ...u16(value.length), ...value] : [flags, type, value.length, ...value];
}

function attrs(a: AttrSet, v6: boolean, nextHop: string): number[] {
  // AS_PATH: one AS_SEQUENCE of 4-byte ASNs (TABLE_DUMP_V2 always uses 4-byte ASNs)
  const path = a.asPath?.length ? [2, a.asPath.length, ...a.asPath.flatMap(u32)] : [];
  const out = [...attr(0x40, 1, [['igp', 'egp', 'incomplete'].indexOf(a.origin)]), ...attr(0x40, 2, path)];
  // RFC 6396 4.3.4 abbreviates MP_REACH_NLRI in RIB entries to next hop length and address, but
  // GoBGP 3.10's MRT reader parses the full form (AFI, SAFI, next hop, reserved, no NLRI)
  if (v6) out.push(...attr(0x80, 14, [...u16(2), 1, 16, ...v6Bytes(nextHop), 0]));
  else out.push(...attr(0x40, 3, v4Bytes(nextHop)));
  if (a.med !== undefined) out.push(...attr(0x80, 4, u32(a.med)));
  if (a.communities.length)
    out.push(
      ...attr(
        0xc0,
        8,
        a.communities.flatMap((c) => {
          const [x, y] = c.split(':').map(Number);
          return [...u16(x), ...u16(y)];
        }),
      ),
    );
  if (a.largeCommunities.length)
    out.push(
      ...attr(
        0xc0,
        32,
        a.largeCommunities.flatMap((c) => c.split(':').map(Number).flatMap(u32)),
      ),
    );
  return out;
}

export interface MrtPeer {
  readonly routerId: string;
  readonly peerAsn: number;
  readonly nextHop4: string;
  readonly nextHop6: string;
}

/** One route of a dump: the prefix as daemons print it, and its attributes. */
export interface MrtRoute {
  readonly prefix: string;
  readonly set: AttrSet;
}

/**
 * One MRT file: a peer index table with one peer, then one RIB record per
 * route, in order. Attribute bytes are built once per AttrSet object, so a
 * full table with a few thousand sets writes quickly.
 */
export function mrtFile(peer: MrtPeer, routes: Iterable<MrtRoute>): Buffer {
  const rid = v4Bytes(peer.routerId);
  // peer type 0x02: AS4, IPv4 peer address
  const chunks: Buffer[] = [Buffer.from(record(PEER_INDEX_TABLE, [...rid, ...u16(0), ...u16(1), 0x02, ...rid, ...rid, ...u32(peer.peerAsn)]))];
  const cache = [new Map<AttrSet, number[]>(), new Map<AttrSet, number[]>()];
  let seq = 0;
  for (const r of routes) {
    const v6 = r.prefix.includes(':');
    const byFamily = cache[v6 ? 1 : 0];
    let a = byFamily.get(r.set);
    if (a === undefined) byFamily.set(r.set, (a = attrs(r.set, v6, v6 ? peer.nextHop6 : peer.nextHop4)));
    const [addr, lenText] = r.prefix.split('/');
    const len = Number(lenText);
    const full = v6 ? v6Bytes(addr) : v4Bytes(addr);
    const body = [...u32(seq++), len, ...full.slice(0, Math.ceil(len / 8)), ...u16(1), ...u16(0), ...u32(0), ...u16(a.length), ...a];
    chunks.push(Buffer.from(record(v6 ? RIB_IPV6_UNICAST : RIB_IPV4_UNICAST, body)));
  }
  return Buffer.concat(chunks);
}

/** The interop test's routes (daemon-routes.ts ranges) as one MRT file. */
export function mrtDump(opts: MrtPeer & { v4?: PrefixRange; v6?: PrefixRange }): Buffer {
  const ranges = [opts.v4, opts.v6].filter((r): r is PrefixRange => r !== undefined);
  const routes = ranges.flatMap((range) => daemonRoutes(range).map((r) => ({ prefix: r.prefix, set: ATTR_SETS[r.set] })));
  // Everything twice: GoBGP 3.10's `mrt inject` closes its stream before the server has taken
  // the last few hundred paths, which are then lost; re-adding an existing path changes nothing.
  return mrtFile(opts, [...routes, ...routes]);
}
