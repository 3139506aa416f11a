/**
 * rtnetlink's language for our operations, as pure functions: a KernelOp as
 * one RTM_NEWROUTE (create/replace) or RTM_DELROUTE message, and the
 * kernel's acknowledgements (NLMSG_ERROR, 0 or −errno) back to one result
 * per sequence number. What `ip -batch` writes for the same line, without
 * iproute2's per-line costs; the socket (AF_NETLINK through an FFI library)
 * belongs to a shell. And the other way: the kernel's notifications (route,
 * link and address changes a listener is subscribed to) as KernelEvents,
 * with the few words a listener needs to leave out the echoes of our own
 * requests (by the sender's port id, without decoding them). Layouts:
 * linux/netlink.h, linux/rtnetlink.h, linux/if_link.h, linux/filter.h
 * (native byte order: little-endian on the machines this runs on).
 */
import { Address, Prefix } from '../net/index.js';
import { writeV4, writeV6 } from './addr-text.js';
import { sortNextHops } from './next-hops.js';
import type { KernelEvent, KernelOp, NextHop, RouteType } from './types.js';

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
  /** The next hops last encoded (their array, the interface lookup used) and their bytes: the next route through the same array copies them. */
  private tailHops: readonly NextHop[] | undefined;
  private tailIfindex: IfIndex | undefined;
  private tail: Uint8Array | undefined;
  private tailOnlink = false;

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
   * Appends one operation as one request, with NLM_F_ACK unless `ack` is
   * false (`seq` ties the acknowledgement to it). Without it the kernel
   * answers only a refusal: a writer that knows the kernel has handled the
   * request (rtnetlink handles it inside send()) reads silence as success. Throws, naming the interface, for a `dev` that
   * does not exist (nothing is appended): the caller reports it as that
   * route's refusal.
   */
  add(op: KernelOp, seq: number, ifindex: IfIndex, ack = true): void {
    const r = op.route;
    const del = op.op === 'delete';
    const unicast = !del && (r.type === 'unicast' || r.type === 'other');
    const hops = r.nexthops;
    // The next hops as encoded for the route before, when this one has the same (routes share their NextHop arrays).
    const tail = unicast && hops === this.tailHops && ifindex === this.tailIfindex ? this.tail : undefined;
    // Interfaces first, so that a missing one leaves nothing half written.
    let oifs: number[] | undefined;
    if (unicast && tail === undefined) {
      for (let i = 0; i < hops.length; i++) {
        const dev = hops[i].dev;
        if (dev === undefined) continue;
        const x = ifindex(dev);
        if (x === undefined) throw new Error(`Cannot find device "${dev}"`);
        (oifs ??= new Array<number>(hops.length).fill(0))[i] = x;
      }
    }
    const need = 64 + 16 + (unicast ? hops.length * 28 : 0);
    if (this.at + need > this.buf.length) {
      const bigger = Buffer.alloc(Math.max(this.buf.length * 2, this.at + need));
      this.buf.copy(bigger, 0, 0, this.at);
      this.buf = bigger;
    }
    const b = this.buf;
    const start = this.at;
    let at = start + 16; // the header, written last
    const text = r.prefix;
    const slash = text.indexOf('/');
    const v6 = text.includes(':');
    const len = slash < 0 ? -1 : prefixLength(text, slash + 1);
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
    if (len < 0 || !(v6 ? len <= 128 && writeV6(text, slash, b, at + 4) : len <= 32 && writeV4(text, slash, b, at + 4))) {
      const p = Prefix.parse(text);
      if ((p.family === 6) !== v6) throw new Error(`bad prefix ${text}`);
      p.network.writeTo(b, at + 4);
      b[start + 17] = p.length;
    }
    at += 4 + (v6 ? 16 : 4);
    at = u32attr(b, at, RTA_PRIORITY, r.metric);
    if (tail !== undefined) {
      b.set(tail, at);
      at += tail.length;
      if (this.tailOnlink) b.writeUInt32LE(RTNH_F_ONLINK, flagsAt);
    } else if (unicast) {
      const from = at;
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
      this.tailHops = hops;
      this.tailIfindex = ifindex;
      this.tail = Uint8Array.prototype.slice.call(b, from, at);
      this.tailOnlink = hops.length === 1 && hops[0].onlink === true;
    }
    b.writeUInt32LE(at - start, start);
    b.writeUInt16LE(del ? RTM_DELROUTE : RTM_NEWROUTE, start + 4);
    b.writeUInt16LE(NLM_F_REQUEST | (ack ? NLM_F_ACK : 0) | (del ? 0 : NLM_F_CREATE | NLM_F_REPLACE), start + 6);
    b.writeUInt32LE(seq >>> 0, start + 8);
    b.writeUInt32LE(0, start + 12); // nlmsg_pid: the kernel
    this.at = at;
  }
}

/** The decimal prefix length at `from` to the end of `text`; -1 when it is not one (empty, not digits, more than 3 digits). */
function prefixLength(text: string, from: number): number {
  const end = text.length;
  if (end === from || end - from > 3) return -1;
  let n = 0;
  for (let i = from; i < end; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
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
        for (let t = at + 20 + align(echoed); t + 4 <= at + len;) {
          const alen = b.readUInt16LE(t);
          if (alen < 4 || t + alen > at + len) break;
          if ((b.readUInt16LE(t + 2) & 0x3fff) === NLMSGERR_ATTR_MSG) {
            const text = b
              .toString('utf8', t + 4, t + alen)
              .replace(/\0.*$/s, '')
              .trim();
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

// ------------------------------------------------------------ notifications

const RTM_NEWLINK = 16;
const RTM_DELLINK = 17;
const RTA_VIA = 18;
const IFLA_IFNAME = 3;
const RTM_F_CLONED = 0x200;
const TYPE_OF: Record<number, RouteType> = { 1: 'unicast', 6: 'blackhole', 7: 'unreachable', 8: 'prohibit' };

/**
 * The multicast groups a listener joins (RTMGRP_* bits for
 * `sockaddr_nl.nl_groups`): links, IPv4 and IPv6 routes — what `ip monitor
 * route link` hears. Not addresses: a connected network comes and goes as
 * the kernel's own route (protocol 2), and that route's notification is
 * what matters; an IPv6 link-local address finishing duplicate address
 * detection would otherwise make a node re-read its whole table for nothing.
 */
export const LISTENER_GROUPS = 0x1 /* LINK */ | 0x40 /* IPV4_ROUTE */ | 0x400; /* IPV6_ROUTE */

/** The port id (nlmsg_pid) of the first message in a datagram; undefined when there is none. */
export function firstSender(buf: Uint8Array): number | undefined {
  if (buf.length < 16) return undefined;
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength).getUint32(12, true);
}

/**
 * The messages of a datagram not sent because of a request from port
 * `pid` (a notification carries the requester's port id in nlmsg_pid),
 * read from the headers only; undefined when nothing is left. The same
 * bytes when nothing was dropped.
 */
export function othersMessages(buf: Uint8Array, pid: number): Uint8Array | undefined {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const keep: Uint8Array[] = [];
  let dropped = false;
  let at = 0;
  while (at + 16 <= buf.length) {
    const len = v.getUint32(at, true);
    if (len < 16 || at + len > buf.length) break;
    const next = Math.min(buf.length, align(at + len));
    if (v.getUint32(at + 12, true) === pid) dropped = true;
    else keep.push(buf.subarray(at, next));
    at = next;
  }
  if (!dropped) return buf;
  if (keep.length === 0) return undefined;
  const out = new Uint8Array(keep.reduce((n, x) => n + x.length, 0));
  let o = 0;
  for (const x of keep) {
    out.set(x, o);
    o += x.length;
  }
  return out;
}

/**
 * A classic BPF program (SO_ATTACH_FILTER, 8 bytes per instruction) that
 * drops every datagram whose first message came from port `pid`: the
 * kernel then never queues the echoes of our own writes to the listener
 * (one notification per datagram). BPF reads words big-endian, nlmsg_pid
 * is in native (little-endian) order, hence the swap.
 */
export function dropSenderFilter(pid: number): { program: Uint8Array; count: number } {
  const swapped = (((pid & 0xff) << 24) | ((pid & 0xff00) << 8) | ((pid >>> 8) & 0xff00) | (pid >>> 24)) >>> 0;
  const ins: [number, number, number, number][] = [
    [0x20, 0, 0, 12], // ld [12]            nlmsg_pid of the first message
    [0x15, 1, 0, swapped], // jeq #pid, drop, accept
    [0x06, 0, 0, 0xffffffff], // ret #-1   accept (whole datagram)
    [0x06, 0, 0, 0], // ret #0              drop
  ];
  const program = new Uint8Array(ins.length * 8);
  const v = new DataView(program.buffer);
  ins.forEach(([code, jt, jf, k], i) => {
    v.setUint16(i * 8, code, true);
    v.setUint8(i * 8 + 2, jt);
    v.setUint8(i * 8 + 3, jf);
    v.setUint32(i * 8 + 4, k, true);
  });
  return { program, count: ins.length };
}

function ipText(b: Buffer, at: number, family: 4 | 6): string {
  if (family === 4) return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
  return Address.fromBytes(6, b, at).toString();
}

/**
 * Notifications in one datagram → what they say, in order, as the `ip
 * monitor` parser reports the same changes (iproute2.ts): a route with its
 * table, protocol, metric and sorted next hops (interfaces by name), a
 * link. `names` maps interface indexes to names and is kept
 * current as link messages pass (an unknown index reads as "if#N"). Cloned
 * (cache) routes and other families are `other`; a truncated message ends
 * the walk.
 */
export function decodeNotifications(buf: Uint8Array, names: Map<number, string>): KernelEvent[] {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: KernelEvent[] = [];
  let at = 0;
  while (at + 16 <= b.length) {
    const len = b.readUInt32LE(at);
    if (len < 16 || at + len > b.length) break;
    const type = b.readUInt16LE(at + 4);
    const end = at + len;
    const body = at + 16;
    if ((type === RTM_NEWROUTE || type === RTM_DELROUTE) && len >= 28) out.push(decodeRoute(b, body, end, type === RTM_DELROUTE, names));
    else if ((type === RTM_NEWLINK || type === RTM_DELLINK) && len >= 32) {
      const index = b.readInt32LE(body + 4);
      let name: string | undefined;
      for (let t = body + 16; t + 4 <= end;) {
        const alen = b.readUInt16LE(t);
        if (alen < 4 || t + alen > end) break;
        if ((b.readUInt16LE(t + 2) & 0x3fff) === IFLA_IFNAME) name = b.toString('utf8', t + 4, t + alen).replace(/\0.*$/s, '');
        t += align(alen);
      }
      const deleted = type === RTM_DELLINK;
      if (name !== undefined) {
        if (deleted) names.delete(index);
        else names.set(index, name);
      }
      out.push({ kind: 'link', name: name ?? names.get(index) ?? `if#${index}`, deleted });
    } else out.push({ kind: 'other' });
    at = align(end);
  }
  return out;
}

/** The last RTA_MULTIPATH decoded (its bytes, its sorted next hops, and the interface map and size it was named with). */
let lastMultipath: Buffer = Buffer.alloc(0);
let lastHops: readonly NextHop[] | undefined;
/** Each of lastHops' interface index (0: none). */
let lastIndexes: readonly number[] = [];

/** The kept next hops still carry the names the map gives their indexes now (an interface may have been renamed). */
function namedAlike(hops: readonly NextHop[], indexes: readonly number[], names: Map<number, string>): boolean {
  for (let i = 0; i < hops.length; i++) if (indexes[i] > 0 && hops[i].dev !== (names.get(indexes[i]) ?? `if#${indexes[i]}`)) return false;
  return true;
}

function decodeRoute(b: Buffer, at: number, end: number, deleted: boolean, names: Map<number, string>): KernelEvent {
  const af = b[at];
  if (af !== AF_INET && af !== AF_INET6) return { kind: 'other' };
  const family: 4 | 6 = af === AF_INET ? 4 : 6;
  const dstLen = b[at + 1];
  let table = b[at + 4];
  const protocol = b[at + 5];
  const rtype = b[at + 7];
  const flags = b.readUInt32LE(at + 8);
  if (flags & RTM_F_CLONED) return { kind: 'other' };
  const type: RouteType = TYPE_OF[rtype] ?? 'other';
  const size = family === 4 ? 4 : 16;
  const dev = (i: number) => names.get(i) ?? `if#${i}`;
  let dst: string | undefined;
  let metric = 0;
  let via: string | undefined;
  let oif: number | undefined;
  let hops: readonly NextHop[] | undefined;
  for (let t = at + 12; t + 4 <= end;) {
    const alen = b.readUInt16LE(t);
    if (alen < 4 || t + alen > end) break;
    const v = t + 4;
    switch (b.readUInt16LE(t + 2) & 0x3fff) {
      case RTA_DST:
        if (alen >= 4 + size) dst = ipText(b, v, family);
        break;
      case RTA_GATEWAY:
        if (alen >= 4 + size) via = ipText(b, v, family);
        break;
      case RTA_VIA:
        via = viaText(b, v, t + alen) ?? via;
        break;
      case RTA_OIF:
        if (alen >= 8) oif = b.readUInt32LE(v);
        break;
      case RTA_PRIORITY:
        if (alen >= 8) metric = b.readUInt32LE(v);
        break;
      case RTA_TABLE:
        if (alen >= 8) table = b.readUInt32LE(v);
        break;
      case RTA_MULTIPATH: {
        // A burst of notifications mostly repeats its next hops: the last decoding is kept (with the names it used).
        if (lastHops !== undefined && b.compare(lastMultipath, 0, lastMultipath.length, t, t + alen) === 0 && namedAlike(lastHops, lastIndexes, names)) {
          hops = lastHops;
          break;
        }
        const built: NextHop[] = [];
        const indexes: number[] = [];
        for (let h = v; h + 8 <= t + alen;) {
          const hlen = b.readUInt16LE(h);
          if (hlen < 8 || h + hlen > t + alen) break;
          let hvia: string | undefined;
          for (let x = h + 8; x + 4 <= h + hlen;) {
            const xlen = b.readUInt16LE(x);
            if (xlen < 4 || x + xlen > h + hlen) break;
            const xt = b.readUInt16LE(x + 2) & 0x3fff;
            if (xt === RTA_GATEWAY && xlen >= 4 + size) hvia = ipText(b, x + 4, family);
            else if (xt === RTA_VIA) hvia = viaText(b, x + 4, x + xlen) ?? hvia;
            x += align(xlen);
          }
          const idx = b.readInt32LE(h + 4);
          built.push({
            ...(hvia !== undefined ? { via: hvia } : {}),
            ...(idx > 0 ? { dev: dev(idx) } : {}),
            ...(b[h + 2] & RTNH_F_ONLINK ? { onlink: true } : {}),
          });
          indexes.push(idx);
          h += align(hlen);
        }
        const sorted = sortNextHops([...built]);
        hops = sorted;
        lastMultipath = Buffer.from(b.subarray(t, t + alen));
        lastHops = sorted;
        lastIndexes = sorted.map((x) => indexes[built.indexOf(x)]); // each kept hop's index, in the sorted order
        break;
      }
    }
    t += align(alen);
  }
  if (hops === undefined) {
    hops = [];
    if (via !== undefined || (oif !== undefined && type === 'unicast'))
      hops = [
        {
          ...(via !== undefined ? { via } : {}),
          ...(oif !== undefined ? { dev: dev(oif) } : {}),
          ...(flags & RTNH_F_ONLINK ? { onlink: true } : {}),
        },
      ];
  }
  const prefix = `${dst ?? (family === 4 ? '0.0.0.0' : '::')}/${dstLen}`;
  return { kind: 'route', deleted, table, protocol, route: { prefix, type, metric, nexthops: hops } };
}

/**
 * RTA_VIA (struct rtvia: family, then the address): a next hop of the other
 * family. `at..end` is the attribute's value; undefined when it is cut short
 * (shorter than its family's address, or running past the buffer) or of a
 * family other than IPv4 and IPv6.
 */
export function viaText(b: Buffer, at: number, end: number): string | undefined {
  if (at < 0 || end > b.length || end - at < 2) return undefined;
  const af = b.readUInt16LE(at);
  if (af === AF_INET && end - at >= 6) return ipText(b, at + 2, 4);
  if (af === AF_INET6 && end - at >= 18) return ipText(b, at + 2, 6);
  return undefined;
}
