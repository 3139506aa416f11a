/**
 * rtnetlink's language for our operations, as pure functions: a KernelOp as
 * one RTM_NEWROUTE (create/replace) or RTM_DELROUTE message, and the
 * kernel's acknowledgements (NLMSG_ERROR, 0 or −errno) back to one result
 * per sequence number. What `ip -batch` writes for the same line, without
 * iproute2's per-line costs; the socket (AF_NETLINK through an FFI library)
 * belongs to a shell. Layouts: linux/netlink.h, linux/rtnetlink.h
 * (native byte order: little-endian on the machines this runs on).
 */
import { Address } from '../net/address.js';
import { Prefix } from '../net/prefix.js';
import type { KernelOp, NextHop } from './types.js';

export const NLMSG_ERROR = 2;
export const RTM_NEWROUTE = 24;
export const RTM_DELROUTE = 25;
const NLM_F_REQUEST = 0x1;
const NLM_F_ACK = 0x4;
const NLM_F_REPLACE = 0x100;
const NLM_F_CREATE = 0x400;
const RTA_DST = 1;
const RTA_OIF = 4;
const RTA_GATEWAY = 5;
const RTA_PRIORITY = 6;
const RTA_MULTIPATH = 9;
const RTA_TABLE = 15;
const RTNH_F_ONLINK = 4;
const RTN_TYPES: Record<string, number> = { unicast: 1, blackhole: 6, unreachable: 7, prohibit: 8, other: 1 };
const RT_SCOPE_UNIVERSE = 0;
const RT_SCOPE_NOWHERE = 255;
const AF_INET = 2;
const AF_INET6 = 10;

const align = (n: number) => (n + 3) & ~3;

/** Interface name → index (the shell's `if_nametoindex`); undefined: no such interface. */
export type IfIndex = (name: string) => number | undefined;

class Writer {
  buf: Buffer;
  at = 0;
  constructor(size: number) {
    this.buf = Buffer.alloc(size);
  }
  u8(v: number): void { this.buf.writeUInt8(v, this.at); this.at += 1; }
  u16(v: number): void { this.buf.writeUInt16LE(v, this.at); this.at += 2; }
  u32(v: number): void { this.buf.writeUInt32LE(v >>> 0, this.at); this.at += 4; }
  bytes(b: Uint8Array): void { this.buf.set(b, this.at); this.at += b.length; }
  pad(): void { this.at = align(this.at); }
  /** An attribute: header, value, padding. */
  attr(type: number, value: Uint8Array): void {
    this.u16(4 + value.length);
    this.u16(type);
    this.bytes(value);
    this.pad();
  }
}

function u32(v: number): Uint8Array {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0, 0);
  return b;
}

/**
 * One operation as one netlink request with NLM_F_ACK (`seq` ties the
 * acknowledgement to it). Throws, naming the interface, for a `dev` that
 * does not exist: the caller reports it as that route's refusal.
 */
export function encodeRouteOp(op: KernelOp, table: number, protocol: number, seq: number, ifindex: IfIndex): Buffer {
  const r = op.route;
  const p = Prefix.parse(r.prefix);
  const family = p.family === 4 ? AF_INET : AF_INET6;
  const dst = p.network.toBytes();
  const w = new Writer(64 + dst.length + r.nexthops.length * 40);
  w.at = 16; // the header, written last
  w.u8(family);
  w.u8(p.length);
  w.u8(0); // src_len
  w.u8(0); // tos
  w.u8(table < 256 ? table : 252); // RT_TABLE_COMPAT when RTA_TABLE carries it
  w.u8(protocol);
  const del = op.op === 'delete';
  w.u8(del ? RT_SCOPE_NOWHERE : RT_SCOPE_UNIVERSE);
  w.u8(del ? 0 : RTN_TYPES[r.type]);
  w.u32(0); // rtm_flags
  w.attr(RTA_TABLE, u32(table));
  w.attr(RTA_DST, dst);
  w.attr(RTA_PRIORITY, u32(r.metric));
  if (!del && (r.type === 'unicast' || r.type === 'other')) {
    const index = (h: NextHop): number => {
      if (h.dev === undefined) return 0;
      const i = ifindex(h.dev);
      if (i === undefined) throw new Error(`Cannot find device "${h.dev}"`);
      return i;
    };
    if (r.nexthops.length === 1) {
      const h = r.nexthops[0];
      if (h.via !== undefined) w.attr(RTA_GATEWAY, Address.parse(h.via).toBytes());
      if (h.dev !== undefined) w.attr(RTA_OIF, u32(index(h)));
      if (h.onlink) w.buf.writeUInt32LE(RTNH_F_ONLINK, 16 + 8); // rtm_flags
    } else if (r.nexthops.length > 1) {
      const start = w.at;
      w.u16(0); // RTA_MULTIPATH length, below
      w.u16(RTA_MULTIPATH);
      for (const h of r.nexthops) {
        const gw = h.via !== undefined ? Address.parse(h.via).toBytes() : undefined;
        w.u16(8 + (gw !== undefined ? align(4 + gw.length) : 0)); // rtnh_len
        w.u8(h.onlink ? RTNH_F_ONLINK : 0);
        w.u8(0); // rtnh_hops (weight − 1)
        w.u32(index(h));
        if (gw !== undefined) w.attr(RTA_GATEWAY, gw);
      }
      w.buf.writeUInt16LE(w.at - start, start);
    }
  }
  const len = w.at;
  w.at = 0;
  w.u32(len);
  w.u16(del ? RTM_DELROUTE : RTM_NEWROUTE);
  w.u16(NLM_F_REQUEST | NLM_F_ACK | (del ? 0 : NLM_F_CREATE | NLM_F_REPLACE));
  w.u32(seq);
  w.u32(0); // nlmsg_pid: the kernel
  return w.buf.subarray(0, len);
}

/** Acknowledgements in one datagram: sequence number → 0 (done) or a positive errno. Other messages are skipped. */
export function parseAcks(buf: Uint8Array, into: Map<number, number> = new Map()): Map<number, number> {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = 0;
  while (at + 16 <= b.length) {
    const len = b.readUInt32LE(at);
    if (len < 16 || at + len > b.length) break;
    if (b.readUInt16LE(at + 4) === NLMSG_ERROR && len >= 20) into.set(b.readUInt32LE(at + 8), Math.abs(b.readInt32LE(at + 16)));
    at += align(len);
  }
  return into;
}

/** The kernel's words for the errnos a route write meets (what `ip` prints after "RTNETLINK answers:"). */
export function errnoReason(errno: number): string {
  const text: Record<number, string> = {
    1: 'Operation not permitted',
    3: 'No such process',
    17: 'File exists',
    19: 'No such device',
    22: 'Invalid argument',
    101: 'Network is unreachable',
    113: 'No route to host',
    105: 'No buffer space available',
  };
  return text[errno] ?? `errno ${errno}`;
}
