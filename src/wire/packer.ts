import type { Address } from '../net/address.js';
import type { Prefix } from '../net/prefix.js';
import { Writer } from './buffer.js';
import { AttrFlag, AttrType, HEADER_LENGTH, MessageType } from './constants.js';
import { maxMessageSize, type CodecContext } from './context.js';
import { encodeAttributes } from './attributes/block.js';
import { writeHeader } from './header.js';
import { writePrefix } from './nlri.js';
import type { PathAttributes } from './types.js';

/**
 * The UPDATE packer: many prefixes sharing one attribute set become the
 * fewest whole messages (header included) within maxMessageSize(ctx). IPv4
 * goes in the classic NLRI/withdrawn fields, IPv6 in MP_REACH_NLRI /
 * MP_UNREACH_NLRI (which lead the attribute block, as in the canonical
 * form). Messages are filled greedily in input order; the wire size grows
 * with every prefix added, so greedy filling is the fewest messages for that
 * order. The attribute block is encoded once per family per call, and all
 * messages are written into one buffer (the returned arrays are views of it).
 */

export interface PackOptions {
  /** IPv6 next hop for MP_REACH_NLRI: one global address, or global + link-local. */
  readonly nextHopV6?: readonly Address[];
  /** ADD-PATH identifiers parallel to `prefixes` (0 where absent); used only when negotiated for the family. */
  readonly pathIds?: readonly number[];
}

interface Split {
  v4: number[];
  v6: number[];
}

function split(prefixes: readonly Prefix[]): Split {
  const v4: number[] = [];
  const v6: number[] = [];
  for (let i = 0; i < prefixes.length; i++) (prefixes[i].family === 4 ? v4 : v6).push(i);
  return { v4, v6 };
}

/** Attribute header size for a value of `len` bytes (extended length only above 255). */
function attrHeader(len: number): number {
  return len > 255 ? 4 : 3;
}

/**
 * Groups indices (into `prefixes`) greedily into messages: `fixed` bytes per
 * message plus the prefixes, where `mpBase` ≥ 0 means the prefixes sit in an
 * MP attribute whose value starts with `mpBase` bytes (its header then grows
 * from 3 to 4 bytes once the value passes 255).
 */
function group(prefixes: readonly Prefix[], idx: readonly number[], addPath: boolean, fixed: number, mpBase: number, limit: number): number[] {
  const ends: number[] = [];
  let body = 0;
  let count = 0;
  const per = addPath ? 5 : 1;
  for (let k = 0; k < idx.length; k++) {
    const size = per + ((prefixes[idx[k]].length + 7) >>> 3);
    const next = body + size;
    const total = mpBase >= 0 ? fixed + attrHeader(mpBase + next) + mpBase + next : fixed + next;
    if (total > limit) {
      if (count === 0) throw new Error(`the attributes leave no room for ${prefixes[idx[k]].toString()} within ${limit} bytes`);
      ends.push(k);
      body = size;
      count = 1;
    } else {
      body = next;
      count++;
    }
  }
  if (count > 0) ends.push(idx.length);
  return ends;
}

function prefixBytes(prefixes: readonly Prefix[], idx: readonly number[], from: number, to: number, addPath: boolean): number {
  let n = 0;
  for (let k = from; k < to; k++) n += (prefixes[idx[k]].length + 7) >>> 3;
  return n + (to - from) * (addPath ? 5 : 1);
}

function attributeBlock(attrs: PathAttributes, ctx: CodecContext, withNextHop: boolean): Uint8Array {
  const w = new Writer(256);
  encodeAttributes(w, withNextHop ? attrs : { ...attrs, nextHop: undefined }, ctx, true);
  return w.finish();
}

/**
 * The fewest whole UPDATE messages announcing `prefixes` with `attrs`. IPv4
 * needs `attrs.nextHop`; IPv6 needs `opts.nextHopV6`. `attrs.mpReach` and
 * `attrs.mpUnreach` are ignored: the packer builds them. IPv6 messages leave
 * out NEXT_HOP (RFC 4760 §3: it has no meaning without classic NLRI).
 */
export function packUpdates(attrs: PathAttributes, prefixes: readonly Prefix[], ctx: CodecContext, opts: PackOptions = {}): Uint8Array[] {
  const limit = maxMessageSize(ctx);
  const { v4, v6 } = split(prefixes);
  const ids = opts.pathIds;
  const plan: { family: 4 | 6; from: number; to: number; size: number; value: number }[] = [];
  let block4: Uint8Array | undefined;
  let block6: Uint8Array | undefined;
  let nh6: readonly Address[] = [];
  let nh6Len = 0;
  if (v4.length > 0) {
    if (attrs.nextHop === undefined) throw new Error('packUpdates: IPv4 prefixes need attrs.nextHop');
    block4 = attributeBlock(attrs, ctx, true);
    const fixed = HEADER_LENGTH + 4 + block4.length;
    let from = 0;
    for (const to of group(prefixes, v4, ctx.addPathV4, fixed, -1, limit)) {
      plan.push({ family: 4, from, to, size: fixed + prefixBytes(prefixes, v4, from, to, ctx.addPathV4), value: 0 });
      from = to;
    }
  }
  if (v6.length > 0) {
    nh6 = opts.nextHopV6 ?? [];
    if (nh6.length === 0) throw new Error('packUpdates: IPv6 prefixes need opts.nextHopV6');
    for (const a of nh6) {
      if (a.family !== 6) throw new Error(`packUpdates: IPv6 next hop ${a.toString()} is not IPv6`);
      nh6Len += 16;
    }
    if (nh6Len > 32) throw new Error('packUpdates: at most two IPv6 next hops (global, link-local)');
    block6 = attributeBlock(attrs, ctx, false);
    const fixed = HEADER_LENGTH + 4 + block6.length;
    const mpBase = 3 + 1 + nh6Len + 1; // AFI, SAFI, next-hop length, next hop, reserved
    let from = 0;
    for (const to of group(prefixes, v6, ctx.addPathV6, fixed, mpBase, limit)) {
      const value = mpBase + prefixBytes(prefixes, v6, from, to, ctx.addPathV6);
      plan.push({ family: 6, from, to, size: fixed + attrHeader(value) + value, value });
      from = to;
    }
  }
  let total = 0;
  for (const m of plan) total += m.size;
  const buf = new Uint8Array(total);
  const out: Uint8Array[] = [];
  let o = 0;
  for (const m of plan) {
    const start = o;
    writeHeader(buf, o, m.size, MessageType.UPDATE);
    o += HEADER_LENGTH;
    buf[o++] = 0; // no withdrawn routes
    buf[o++] = 0;
    if (m.family === 4) {
      const block = block4!;
      buf[o++] = block.length >>> 8;
      buf[o++] = block.length;
      buf.set(block, o);
      o += block.length;
      const addPath = ctx.addPathV4;
      for (let k = m.from; k < m.to; k++) {
        const i = v4[k];
        o = writePrefix(buf, o, prefixes[i], addPath, ids !== undefined ? ids[i] ?? 0 : 0);
      }
    } else {
      const block = block6!;
      const addPath = ctx.addPathV6;
      const aLen = attrHeader(m.value) + m.value + block.length;
      buf[o++] = aLen >>> 8;
      buf[o++] = aLen;
      o = writeMpHeader(buf, o, AttrType.MP_REACH_NLRI, m.value);
      buf[o++] = 0;
      buf[o++] = 2; // AFI IPv6
      buf[o++] = 1; // SAFI unicast
      buf[o++] = nh6Len;
      for (const a of nh6) o = a.writeTo(buf, o);
      buf[o++] = 0; // reserved
      for (let k = m.from; k < m.to; k++) {
        const i = v6[k];
        o = writePrefix(buf, o, prefixes[i], addPath, ids !== undefined ? ids[i] ?? 0 : 0);
      }
      buf.set(block, o);
      o += block.length;
    }
    out.push(buf.subarray(start, o));
  }
  return out;
}

function writeMpHeader(buf: Uint8Array, o: number, code: number, len: number): number {
  if (len > 255) {
    buf[o++] = AttrFlag.OPTIONAL | AttrFlag.EXTENDED_LENGTH;
    buf[o++] = code;
    buf[o++] = len >>> 8;
    buf[o++] = len;
  } else {
    buf[o++] = AttrFlag.OPTIONAL;
    buf[o++] = code;
    buf[o++] = len;
  }
  return o;
}

/** The fewest whole UPDATE messages withdrawing `prefixes` (IPv4 classic, IPv6 in MP_UNREACH_NLRI). */
export function packWithdrawals(prefixes: readonly Prefix[], ctx: CodecContext, opts: { readonly pathIds?: readonly number[] } = {}): Uint8Array[] {
  const limit = maxMessageSize(ctx);
  const { v4, v6 } = split(prefixes);
  const ids = opts.pathIds;
  const plan: { family: 4 | 6; from: number; to: number; size: number; value: number }[] = [];
  const fixed = HEADER_LENGTH + 4;
  let from = 0;
  for (const to of group(prefixes, v4, ctx.addPathV4, fixed, -1, limit)) {
    const value = prefixBytes(prefixes, v4, from, to, ctx.addPathV4);
    plan.push({ family: 4, from, to, size: fixed + value, value });
    from = to;
  }
  from = 0;
  for (const to of group(prefixes, v6, ctx.addPathV6, fixed, 3, limit)) {
    const value = 3 + prefixBytes(prefixes, v6, from, to, ctx.addPathV6);
    plan.push({ family: 6, from, to, size: fixed + attrHeader(value) + value, value });
    from = to;
  }
  let total = 0;
  for (const m of plan) total += m.size;
  const buf = new Uint8Array(total);
  const out: Uint8Array[] = [];
  let o = 0;
  for (const m of plan) {
    const start = o;
    writeHeader(buf, o, m.size, MessageType.UPDATE);
    o += HEADER_LENGTH;
    if (m.family === 4) {
      buf[o++] = m.value >>> 8;
      buf[o++] = m.value;
      const addPath = ctx.addPathV4;
      for (let k = m.from; k < m.to; k++) {
        const i = v4[k];
        o = writePrefix(buf, o, prefixes[i], addPath, ids !== undefined ? ids[i] ?? 0 : 0);
      }
      buf[o++] = 0; // no path attributes
      buf[o++] = 0;
    } else {
      buf[o++] = 0;
      buf[o++] = 0;
      const aLen = attrHeader(m.value) + m.value;
      buf[o++] = aLen >>> 8;
      buf[o++] = aLen;
      o = writeMpHeader(buf, o, AttrType.MP_UNREACH_NLRI, m.value);
      buf[o++] = 0;
      buf[o++] = 2;
      buf[o++] = 1;
      const addPath = ctx.addPathV6;
      for (let k = m.from; k < m.to; k++) {
        const i = v6[k];
        o = writePrefix(buf, o, prefixes[i], addPath, ids !== undefined ? ids[i] ?? 0 : 0);
      }
    }
    out.push(buf.subarray(start, o));
  }
  return out;
}
