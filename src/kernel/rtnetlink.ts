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
import { writeV4, writeV6 } from './addr-text.js';
import type { KernelOp } from './types.js';

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
const NLM_F_CAPPED = 0x100; // in an acknowledgement: the request is not echoed (NETLINK_CAP_ACK)
const NLM_F_ACK_TLVS = 0x200; // in an acknowledgement: extended-ack attributes follow
const NLMSGERR_ATTR_MSG = 1;

/** Interface name → index (the shell's `if_nametoindex`); undefined: no such interface. */
export type IfIndex = (name: string) => number | undefined;

/**
 * Encodes operations as rtnetlink requests, one after another in one
 * reusable buffer: a chunk for one send(). Next-hop addresses repeat across
 * routes and are parsed once (a bounded cache); IPv4 destinations are
 * written straight from their text.
 */
export class RouteEncoder {
  private buf = Buffer.alloc(32 * 1024);
  private at = 0;
  private readonly gateways = new Map<string, Uint8Array>();

  constructor(
    readonly table: number,
    readonly protocol: number,
  ) {}

  /** Bytes encoded since the last `reset` (a view: valid until the next `add`/`reset`). */
  get bytes(): Buffer {
    return this.buf.subarray(0, this.at);
  }

  get length(): number {
    return this.at;
  }

  reset(): void {
    this.at = 0;
  }

  private gateway(text: string): Uint8Array {
    let b = this.gateways.get(text);
    if (b === undefined) {
      if (this.gateways.size >= 4096) this.gateways.clear();
      b = Address.parse(text).toBytes();
      this.gateways.set(text, b);
    }
    return b;
  }

  /**
   * Appends one operation as one request with NLM_F_ACK (`seq` ties the
   * acknowledgement to it). Throws, naming the interface, for a `dev` that
   * does not exist (nothing is appended): the caller reports it as that
   * route's refusal.
   */
  add(op: KernelOp, seq: number, ifindex: IfIndex): void {
    const r = op.route;
    const del = op.op === 'delete';
    const unicast = !del && (r.type === 'unicast' || r.type === 'other');
    // Interfaces first, so that a missing one leaves nothing half written.
    let oifs: number[] | undefined;
    if (unicast) {
      for (let i = 0; i < r.nexthops.length; i++) {
        const dev = r.nexthops[i].dev;
        if (dev === undefined) continue;
        const x = ifindex(dev);
        if (x === undefined) throw new Error(`Cannot find device "${dev}"`);
        (oifs ??= new Array<number>(r.nexthops.length).fill(0))[i] = x;
      }
    }
    const need = 64 + 16 + (unicast ? r.nexthops.length * 28 : 0);
    if (this.at + need > this.buf.length) {
      const bigger = Buffer.alloc(Math.max(this.buf.length * 2, this.at + need));
      this.buf.copy(bigger, 0, 0, this.at);
      this.buf = bigger;
    }
    const b = this.buf;
    const start = this.at;
    let at = start + 16; // the header, written last
    const slash = r.prefix.indexOf('/');
    const v6 = r.prefix.includes(':');
    const len = Number(r.prefix.slice(slash + 1));
    // rtmsg
    b[at] = v6 ? AF_INET6 : AF_INET;
    b[at + 1] = len;
    b[at + 2] = 0; // src_len
    b[at + 3] = 0; // tos
    b[at + 4] = this.table < 256 ? this.table : 252; // RT_TABLE_COMPAT when RTA_TABLE carries it
    b[at + 5] = this.protocol;
    b[at + 6] = del ? RT_SCOPE_NOWHERE : RT_SCOPE_UNIVERSE;
    b[at + 7] = del ? 0 : RTN_TYPES[r.type];
    const flagsAt = at + 8;
    b.writeUInt32LE(0, flagsAt); // rtm_flags
    at += 12;
    at = u32attr(b, at, RTA_TABLE, this.table);
    // RTA_DST
    b.writeUInt16LE(4 + (v6 ? 16 : 4), at);
    b.writeUInt16LE(RTA_DST, at + 2);
    if (slash < 0 || !(v6 ? writeV6(r.prefix, slash, b, at + 4) && len >= 0 && len <= 128 : writeV4(r.prefix, slash, b, at + 4) && len >= 0 && len <= 32)) {
      const p = Prefix.parse(r.prefix);
      if ((p.family === 6) !== v6) throw new Error(`bad prefix ${r.prefix}`);
      p.network.writeTo(b, at + 4);
    }
    at += 4 + (v6 ? 16 : 4);
    at = u32attr(b, at, RTA_PRIORITY, r.metric);
    if (unicast) {
      const hops = r.nexthops;
      if (hops.length === 1) {
        const h = hops[0];
        if (h.via !== undefined) at = attr(b, at, RTA_GATEWAY, this.gateway(h.via));
        if (oifs !== undefined) at = u32attr(b, at, RTA_OIF, oifs[0]);
        if (h.onlink) b.writeUInt32LE(RTNH_F_ONLINK, flagsAt);
      } else if (hops.length > 1) {
        const mp = at;
        at += 4; // RTA_MULTIPATH header, below
        for (let i = 0; i < hops.length; i++) {
          const h = hops[i];
          const gw = h.via !== undefined ? this.gateway(h.via) : undefined;
          b.writeUInt16LE(8 + (gw !== undefined ? align(4 + gw.length) : 0), at); // rtnh_len
          b[at + 2] = h.onlink ? RTNH_F_ONLINK : 0;
          b[at + 3] = 0; // rtnh_hops (weight − 1)
          b.writeUInt32LE(oifs?.[i] ?? 0, at + 4);
          at += 8;
          if (gw !== undefined) at = attr(b, at, RTA_GATEWAY, gw);
        }
        b.writeUInt16LE(at - mp, mp);
        b.writeUInt16LE(RTA_MULTIPATH, mp + 2);
      }
    }
    b.writeUInt32LE(at - start, start);
    b.writeUInt16LE(del ? RTM_DELROUTE : RTM_NEWROUTE, start + 4);
    b.writeUInt16LE(NLM_F_REQUEST | NLM_F_ACK | (del ? 0 : NLM_F_CREATE | NLM_F_REPLACE), start + 6);
    b.writeUInt32LE(seq >>> 0, start + 8);
    b.writeUInt32LE(0, start + 12); // nlmsg_pid: the kernel
    this.at = at;
  }
}

function attr(b: Buffer, at: number, type: number, value: Uint8Array): number {
  b.writeUInt16LE(4 + value.length, at);
  b.writeUInt16LE(type, at + 2);
  b.set(value, at + 4);
  const end = at + 4 + value.length;
  const padded = align(end);
  b.fill(0, end, padded);
  return padded;
}

function u32attr(b: Buffer, at: number, type: number, value: number): number {
  b.writeUInt16LE(8, at);
  b.writeUInt16LE(type, at + 2);
  b.writeUInt32LE(value >>> 0, at + 4);
  return at + 8;
}

/**
 * One operation as one netlink request with NLM_F_ACK (`seq` ties the
 * acknowledgement to it). Throws, naming the interface, for a `dev` that
 * does not exist: the caller reports it as that route's refusal.
 */
export function encodeRouteOp(op: KernelOp, table: number, protocol: number, seq: number, ifindex: IfIndex): Buffer {
  const e = new RouteEncoder(table, protocol);
  e.add(op, seq, ifindex);
  return Buffer.from(e.bytes);
}

/** One acknowledgement: 0 (done) or a positive errno, and the kernel's extended message when it gave one. */
export interface Ack {
  readonly errno: number;
  readonly message?: string;
}

/**
 * Acknowledgements in one datagram, with the kernel's extended message
 * (NETLINK_EXT_ACK's NLMSGERR_ATTR_MSG, e.g. "Nexthop has invalid gateway")
 * when there is one. Other messages are skipped; a truncated one ends the walk.
 */
export function parseAckDetails(buf: Uint8Array, into: Map<number, Ack> = new Map()): Map<number, Ack> {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let at = 0;
  while (at + 16 <= b.length) {
    const len = b.readUInt32LE(at);
    if (len < 16 || at + len > b.length) break;
    if (b.readUInt16LE(at + 4) === NLMSG_ERROR && len >= 20) {
      const errno = Math.abs(b.readInt32LE(at + 16));
      const flags = b.readUInt16LE(at + 6);
      let message: string | undefined;
      if (errno !== 0 && flags & NLM_F_ACK_TLVS && len >= 36) {
        // After the error code: the request's header (all of the request unless capped), then attributes.
        const echoed = flags & NLM_F_CAPPED ? 16 : b.readUInt32LE(at + 20);
        for (let t = at + 20 + align(echoed); t + 4 <= at + len; ) {
          const alen = b.readUInt16LE(t);
          if (alen < 4 || t + alen > at + len) break;
          if ((b.readUInt16LE(t + 2) & 0x3fff) === NLMSGERR_ATTR_MSG) {
            const text = b.toString('utf8', t + 4, t + alen).replace(/\0.*$/s, '').trim();
            if (text !== '') message = text;
          }
          t += align(alen);
        }
      }
      into.set(b.readUInt32LE(at + 8), message !== undefined ? { errno, message } : { errno });
    }
    at += align(len);
  }
  return into;
}

/** Acknowledgements in one datagram: sequence number → 0 (done) or a positive errno. Other messages are skipped. */
export function parseAcks(buf: Uint8Array, into: Map<number, number> = new Map()): Map<number, number> {
  for (const [seq, a] of parseAckDetails(buf)) into.set(seq, a.errno);
  return into;
}

/**
 * The C library's words for the errnos a route write meets (what `ip`
 * prints after "RTNETLINK answers:"): the fallback where strerror(3) is not
 * at hand (the shell asks libc first).
 */
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
