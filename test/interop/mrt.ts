/**
 * A minimal MRT TABLE_DUMP_V2 writer (RFC 6396), so GoBGP can load a few
 * thousand routes at once with `gobgp mrt inject global FILE` (one `gobgp
 * global rib add` per route costs ~17 ms each). Written independently of the
 * codec under test, byte by byte.
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
  const out = [...attr(0x40, 1, [['igp', 'egp', 'incomplete'].indexOf(a.origin)]), ...attr(0x40, 2, [])];
  // RFC 6396 4.3.4 abbreviates MP_REACH_NLRI in RIB entries to next hop length and address, but
  // GoBGP 3.10's MRT reader parses the full form (AFI, SAFI, next hop, reserved, no NLRI)
  if (v6) out.push(...attr(0x80, 14, [...u16(2), 1, 16, ...v6Bytes(nextHop), 0]));
  else out.push(...attr(0x40, 3, v4Bytes(nextHop)));
  if (a.med !== undefined) out.push(...attr(0x80, 4, u32(a.med)));
  if (a.communities.length) out.push(...attr(0xc0, 8, a.communities.flatMap((c) => { const [x, y] = c.split(':').map(Number); return [...u16(x), ...u16(y)]; })));
  if (a.largeCommunities.length) out.push(...attr(0xc0, 32, a.largeCommunities.flatMap((c) => c.split(':').map(Number).flatMap(u32))));
  return out;
}

/** One MRT file: a peer index table with one peer, then one RIB record per route of each range. */
export function mrtDump(opts: { routerId: string; peerAsn: number; v4?: PrefixRange; v6?: PrefixRange; nextHop4: string; nextHop6: string }): Buffer {
  const bytes: number[] = [];
  const rid = v4Bytes(opts.routerId);
  // peer type 0x02: AS4, IPv4 peer address
  bytes.push(...record(PEER_INDEX_TABLE, [...rid, ...u16(0), ...u16(1), 0x02, ...rid, ...rid, ...u32(opts.peerAsn)]));
  let seq = 0;
  // Everything twice: GoBGP 3.10's `mrt inject` closes its stream before the server has taken
  // the last few hundred paths, which are then lost; re-adding an existing path changes nothing.
  for (const [range, v6] of [[opts.v4, false], [opts.v6, true], [opts.v4, false], [opts.v6, true]] as const) {
    if (!range) continue;
    for (const r of daemonRoutes(range)) {
      const [addr, lenText] = r.prefix.split('/');
      const len = Number(lenText);
      const full = v6 ? v6Bytes(addr) : v4Bytes(addr);
      const a = attrs(ATTR_SETS[r.set], v6, v6 ? opts.nextHop6 : opts.nextHop4);
      const body = [...u32(seq++), len, ...full.slice(0, Math.ceil(len / 8)), ...u16(1), ...u16(0), ...u32(0), ...u16(a.length), ...a];
      bytes.push(...record(v6 ? RIB_IPV6_UNICAST : RIB_IPV4_UNICAST, body));
    }
  }
  return Buffer.from(bytes);
}
