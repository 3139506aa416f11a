import type { Address } from '../net/address.js';
import type { Prefix } from '../net/prefix.js';
import { Writer } from './buffer.js';
import { AttrFlag, AttrType, HEADER_LENGTH, MessageType } from './constants.js';
import { maxMessageSize, type CodecContext } from './context.js';
import { encodeAttributes } from './attributes/block.js';
import { writeHeader } from './header.js';
import { writePrefix, writeV4 } from './nlri.js';
import type { PathAttributes } from './types.js';

/**
 * The UPDATE packer: many prefixes sharing one attribute set become the
 * fewest whole messages (header included) within maxMessageSize(ctx). IPv4
 * goes in the classic NLRI/withdrawn fields, IPv6 in MP_REACH_NLRI /
 * MP_UNREACH_NLRI, which lead the attribute block as in the canonical form.
 * Messages are filled greedily in input order; a message's size only grows
 * as prefixes are added, so greedy filling gives the fewest messages for
 * that order. The attribute block is encoded once per family per call; each
 * family's messages are written in one pass into one buffer (the returned
 * arrays are views of it).
 */

export interface PackOptions {
  /** IPv6 next hop for MP_REACH_NLRI: one global address, or global + link-local. */
  readonly nextHopV6?: readonly Address[];
  /** ADD-PATH identifiers parallel to `prefixes` (0 where absent); used only when negotiated for the family. */
  readonly pathIds?: readonly number[];
}

/** How one family's messages are laid out. */
interface Layout {
  readonly family: 4 | 6;
  readonly addPath: boolean;
  /** 'nlri' (classic, after the attributes), 'withdrawn' (classic, before them) or an MP attribute. */
  readonly field: 'nlri' | 'withdrawn' | 'mp';
  /** Attribute bytes after the MP attribute (or after the lengths, for classic NLRI). */
  readonly block: Uint8Array;
  /** MP only: the attribute code and the value bytes before the prefixes (AFI, SAFI, next hop…). */
  readonly mpCode?: number;
  readonly mpLead?: Uint8Array;
}

function attributeBlock(attrs: PathAttributes, ctx: CodecContext, withNextHop: boolean): Uint8Array {
  const w = new Writer(256);
  encodeAttributes(w, withNextHop ? attrs : { ...attrs, nextHop: undefined }, ctx, true);
  return w.finish();
}

/** Total prefix bytes of one family and its largest prefix. */
function measure(prefixes: readonly Prefix[], family: 4 | 6, addPath: boolean): { bytes: number; count: number; largest: number } {
  let bytes = 0;
  let count = 0;
  let largest = 0;
  const per = addPath ? 5 : 1;
  for (let i = 0; i < prefixes.length; i++) {
    const p = prefixes[i];
    if (p.family !== family) continue;
    const s = per + ((p.length + 7) >>> 3);
    bytes += s;
    count++;
    if (s > largest) largest = s;
  }
  return { bytes, count, largest };
}

/**
 * Writes every prefix of `lay.family` in greedily filled messages. The MP
 * attribute header is first written in its 4-byte extended form and
 * narrowed to 3 bytes when the value ends up at most 255 bytes.
 */
function pack(prefixes: readonly Prefix[], ids: readonly number[] | undefined, lay: Layout, limit: number): Uint8Array[] {
  const { bytes, count, largest } = measure(prefixes, lay.family, lay.addPath);
  if (count === 0) return [];
  const mp = lay.field === 'mp';
  const lead = lay.mpLead ?? new Uint8Array(0);
  const fixed = HEADER_LENGTH + 4 + lay.block.length + (mp ? 4 + lead.length : 0);
  const room = limit - fixed + (mp ? 1 : 0); // a short MP value saves one header byte
  if (room < largest) throw new Error(`the attributes (${lay.block.length} bytes) leave no room for a prefix within ${limit} bytes`);
  // Every message but the last is filled to within one prefix (and one header byte) of its room, so this bounds the count.
  const maxMessages = Math.ceil(bytes / Math.max(1, room - largest - 1)) + 1;
  const buf = new Uint8Array(maxMessages * fixed + bytes);
  const out: Uint8Array[] = [];
  const per = lay.addPath ? 5 : 1;
  let o = 0;
  let start = 0;
  let valueStart = 0; // MP: where the attribute value starts; classic: where the prefix field starts

  const open = () => {
    start = o;
    o += HEADER_LENGTH;
    if (lay.field === 'withdrawn') {
      o += 2; // withdrawn length, patched on close
      valueStart = o;
      return;
    }
    buf[o++] = 0; // no withdrawn routes
    buf[o++] = 0;
    o += 2; // attribute length, patched on close
    if (mp) {
      buf[o++] = AttrFlag.OPTIONAL | AttrFlag.EXTENDED_LENGTH;
      buf[o++] = lay.mpCode!;
      o += 2;
      valueStart = o;
      buf.set(lead, o);
      o += lead.length;
    } else {
      buf.set(lay.block, o);
      o += lay.block.length;
      valueStart = o;
    }
  };

  const close = () => {
    if (lay.field === 'withdrawn') {
      const len = o - valueStart;
      buf[valueStart - 2] = len >>> 8;
      buf[valueStart - 1] = len;
      buf[o++] = 0; // no path attributes
      buf[o++] = 0;
    } else if (mp) {
      let len = o - valueStart;
      if (len <= 255) {
        // Narrow the header: shift the value down one byte.
        buf.copyWithin(valueStart - 1, valueStart, o);
        o--;
        buf[valueStart - 4] = AttrFlag.OPTIONAL;
        buf[valueStart - 2] = len;
      } else {
        buf[valueStart - 2] = len >>> 8;
        buf[valueStart - 1] = len;
      }
      buf.set(lay.block, o);
      o += lay.block.length;
      len = o - (start + HEADER_LENGTH + 4);
      buf[start + HEADER_LENGTH + 2] = len >>> 8;
      buf[start + HEADER_LENGTH + 3] = len;
    } else {
      const len = lay.block.length;
      buf[start + HEADER_LENGTH + 2] = len >>> 8;
      buf[start + HEADER_LENGTH + 3] = len;
    }
    // Typed arrays drop writes past their end; make sure the bound above held.
    if (o > buf.length) throw new Error(`packer overran its ${buf.length}-byte buffer`);
    writeHeader(buf, start, o - start, MessageType.UPDATE);
    out.push(buf.subarray(start, o));
  };

  open();
  const fastV4 = lay.family === 4 && !lay.addPath;
  let used = 0; // prefix bytes in the open message
  for (let i = 0; i < prefixes.length; i++) {
    const p = prefixes[i];
    if (p.family !== lay.family) continue;
    const size = per + ((p.length + 7) >>> 3);
    const value = (mp ? lead.length : 0) + used + size;
    const total = fixed + used + size - (mp && value <= 255 ? 1 : 0);
    if (total > limit && used > 0) {
      close();
      open();
      used = 0;
    }
    o = fastV4 ? writeV4(buf, o, p.length, p.w0) : writePrefix(buf, o, p, lay.addPath, ids !== undefined ? ids[i] ?? 0 : 0);
    used += size;
  }
  close();
  return out;
}

/**
 * The fewest whole UPDATE messages announcing `prefixes` with `attrs`. IPv4
 * needs `attrs.nextHop`; IPv6 needs `opts.nextHopV6`. `attrs.mpReach` and
 * `attrs.mpUnreach` are ignored: the packer builds them. IPv6 messages leave
 * out NEXT_HOP (RFC 4760 §3: it has no meaning without classic NLRI).
 */
export function packUpdates(attrs: PathAttributes, prefixes: readonly Prefix[], ctx: CodecContext, opts: PackOptions = {}): Uint8Array[] {
  const limit = maxMessageSize(ctx);
  let has4 = false;
  let has6 = false;
  for (const p of prefixes) {
    if (p.family === 4) has4 = true;
    else has6 = true;
  }
  const out: Uint8Array[] = [];
  if (has4) {
    if (attrs.nextHop === undefined) throw new Error('packUpdates: IPv4 prefixes need attrs.nextHop');
    out.push(...pack(prefixes, opts.pathIds, { family: 4, addPath: ctx.addPathV4, field: 'nlri', block: attributeBlock(attrs, ctx, true) }, limit));
  }
  if (has6) {
    const nextHops = opts.nextHopV6 ?? [];
    if (nextHops.length === 0) throw new Error('packUpdates: IPv6 prefixes need opts.nextHopV6');
    if (nextHops.length > 2) throw new Error('packUpdates: at most two IPv6 next hops (global, link-local)');
    for (const a of nextHops) if (a.family !== 6) throw new Error(`packUpdates: IPv6 next hop ${a.toString()} is not IPv6`);
    const lead = new Uint8Array(3 + 1 + 16 * nextHops.length + 1);
    lead[1] = 2; // AFI IPv6
    lead[2] = 1; // SAFI unicast
    lead[3] = 16 * nextHops.length;
    let o = 4;
    for (const a of nextHops) o = a.writeTo(lead, o);
    // the last byte stays 0: reserved
    out.push(...pack(prefixes, opts.pathIds, { family: 6, addPath: ctx.addPathV6, field: 'mp', block: attributeBlock(attrs, ctx, false), mpCode: AttrType.MP_REACH_NLRI, mpLead: lead }, limit));
  }
  return out;
}

const EMPTY = new Uint8Array(0);
const UNREACH_V6_LEAD = Uint8Array.of(0, 2, 1);

/** The fewest whole UPDATE messages withdrawing `prefixes` (IPv4 classic, IPv6 in MP_UNREACH_NLRI). */
export function packWithdrawals(prefixes: readonly Prefix[], ctx: CodecContext, opts: { readonly pathIds?: readonly number[] } = {}): Uint8Array[] {
  const limit = maxMessageSize(ctx);
  return [
    ...pack(prefixes, opts.pathIds, { family: 4, addPath: ctx.addPathV4, field: 'withdrawn', block: EMPTY }, limit),
    ...pack(prefixes, opts.pathIds, { family: 6, addPath: ctx.addPathV6, field: 'mp', block: EMPTY, mpCode: AttrType.MP_UNREACH_NLRI, mpLead: UNREACH_V6_LEAD }, limit),
  ];
}
