import type { Address, Prefix } from '../net/index.js';
import { Writer } from './buffer.js';
import { AttrFlag, AttrType, HEADER_LENGTH, MessageType } from './constants.js';
import { maxMessageSize, type CodecContext } from './context.js';
import { attributesSize, encodeAttributes } from './attributes/block.js';
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
  /** Write the messages here, after those of earlier calls given the same arena (see `PackArena`). */
  readonly arena?: PackArena;
}

const EMPTY = new Uint8Array(0);

/** Bytes of a `PackArena` chunk: 64 KiB, below V8's large-object size and one socket write's worth. */
export const ARENA_CHUNK = 65_536;

/**
 * Where successive packer calls write their messages back to back, in
 * shared chunks of `ARENA_CHUNK` bytes, instead of one new buffer per call:
 * a batch of many small attribute-set buckets (a propagating node plans
 * thousands of them per flush) costs a few allocations, and its messages
 * are adjacent views of one buffer that a writer can send as one run
 * without copying. A call needing more than a chunk gets a buffer of its
 * own. Whoever holds one message holds its chunk, so an arena serves one
 * batch, not a session's life.
 */
export class PackArena {
  private buf: Uint8Array = EMPTY;
  private pos = 0;

  constructor(private readonly chunk = ARENA_CHUNK) {}

  /** A buffer with at least `n` free bytes from `at` (the same buffer as the last call when it still has room). */
  take(n: number): { readonly buf: Uint8Array; readonly at: number } {
    if (this.buf.length - this.pos < n) {
      this.buf = new Uint8Array(Math.max(n, this.chunk));
      this.pos = 0;
    }
    return { buf: this.buf, at: this.pos };
  }

  /** The bytes up to `end` of the buffer `take` returned are used. */
  used(end: number): void {
    this.pos = end;
  }
}

/** How one family's messages are laid out. */
interface Layout {
  readonly family: 4 | 6;
  readonly addPath: boolean;
  /** 'nlri' (classic, after the attributes), 'withdrawn' (classic, before them) or an MP attribute. */
  readonly field: 'nlri' | 'withdrawn' | 'mp';
  /** Attributes after the MP attribute (or after the lengths, for classic NLRI), null for none; `blockLen` their encoded size. */
  readonly attrs: PathAttributes | null;
  readonly blockLen: number;
  readonly ctx: CodecContext;
  /** MP only: the attribute code and the value bytes before the prefixes (AFI, SAFI, next hop…). */
  readonly mpCode?: number;
  readonly mpLead?: Uint8Array;
}

// Encodes the attribute block straight into the message buffer. Typed-array
// allocations dominate a small call, so no scratch buffer is made per call;
// the writer is only borrowed synchronously and let go of the buffer after.
const blockWriter = new Writer(0);

/**
 * Writes the attribute block at `o`: encoded the first time (`blockAt` < 0),
 * copied from the first message's block at `blockAt` after that.
 */
function writeBlock(buf: Uint8Array, o: number, lay: Layout, blockAt: number): number {
  const n = lay.blockLen;
  if (n === 0 || lay.attrs === null) return o;
  if (blockAt >= 0) {
    buf.copyWithin(o, blockAt, blockAt + n);
    return o + n;
  }
  const w = blockWriter;
  w.buf = buf;
  w.pos = o;
  encodeAttributes(w, lay.attrs, lay.ctx, true);
  const grown = w.buf !== buf;
  const end = w.pos;
  w.buf = EMPTY;
  w.pos = 0;
  if (grown || end !== o + n) throw new Error(`packer: attributes took ${end - o} bytes, ${n} expected`);
  return end;
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
 * Starts a message at `start`: header room, the withdrawn/attribute length
 * fields, and the fixed bytes before the prefixes. Returns the offset where
 * prefixes go. The MP attribute header is first written in its 4-byte
 * extended form and narrowed to 3 bytes on close when the value fits.
 */
function openMessage(buf: Uint8Array, start: number, lay: Layout, lead: Uint8Array, blockAt: number): number {
  let o = start + HEADER_LENGTH;
  if (lay.field === 'withdrawn') return o + 2; // withdrawn length, patched on close
  buf[o++] = 0; // no withdrawn routes
  buf[o++] = 0;
  o += 2; // attribute length, patched on close
  if (lay.field === 'mp') {
    buf[o++] = AttrFlag.OPTIONAL | AttrFlag.EXTENDED_LENGTH;
    buf[o++] = lay.mpCode!;
    o += 2;
    buf.set(lead, o);
    return o + lead.length;
  }
  return writeBlock(buf, o, lay, blockAt);
}

/** Finishes the message begun at `start` whose prefixes end at `o`; appends it to `out` and returns its end. */
function closeMessage(buf: Uint8Array, start: number, o: number, lay: Layout, out: Uint8Array[], blockAt: number): number {
  if (lay.field === 'withdrawn') {
    const valueStart = start + HEADER_LENGTH + 2;
    const len = o - valueStart;
    buf[valueStart - 2] = len >>> 8;
    buf[valueStart - 1] = len;
    buf[o++] = 0; // no path attributes
    buf[o++] = 0;
  } else if (lay.field === 'mp') {
    const valueStart = start + HEADER_LENGTH + 8;
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
    o = writeBlock(buf, o, lay, blockAt);
    len = o - (start + HEADER_LENGTH + 4);
    buf[start + HEADER_LENGTH + 2] = len >>> 8;
    buf[start + HEADER_LENGTH + 3] = len;
  } else {
    const len = lay.blockLen;
    buf[start + HEADER_LENGTH + 2] = len >>> 8;
    buf[start + HEADER_LENGTH + 3] = len;
  }
  // Typed arrays drop writes past their end; make sure the size bound held (`pack` checks its own room).
  if (o > buf.length) throw new Error(`packer overran its ${buf.length}-byte buffer`);
  writeHeader(buf, start, o - start, MessageType.UPDATE);
  out.push(buf.subarray(start, o));
  return o;
}

/** Writes an IPv6 prefix without path id at `o`; returns the new offset. */
function writeV6(buf: Uint8Array, o: number, p: Prefix): number {
  const len = p.length;
  buf[o++] = len;
  const n = (len + 7) >>> 3;
  const end = o + n;
  const w0 = p.w0;
  const w1 = p.w1;
  // Whole bytes first (most prefixes are /32–/48: two words at most), then the rest.
  if (n >= 4) {
    buf[o] = w0 >>> 24;
    buf[o + 1] = w0 >>> 16;
    buf[o + 2] = w0 >>> 8;
    buf[o + 3] = w0;
    if (n >= 8) {
      buf[o + 4] = w1 >>> 24;
      buf[o + 5] = w1 >>> 16;
      buf[o + 6] = w1 >>> 8;
      buf[o + 7] = w1;
      if (n > 8) return writePrefixTail(buf, o, p, n);
      return end;
    }
    for (let k = 4; k < n; k++) buf[o + k] = w1 >>> (24 - 8 * (k - 4));
    return end;
  }
  for (let k = 0; k < n; k++) buf[o + k] = w0 >>> (24 - 8 * k);
  return end;
}

/** Bytes 8.. of a long IPv6 prefix (longer than /64). */
function writePrefixTail(buf: Uint8Array, o: number, p: Prefix, n: number): number {
  for (let k = 8; k < n; k++) {
    const w = k < 12 ? p.w2 : p.w3;
    buf[o + k] = w >>> (24 - 8 * (k & 3));
  }
  return o + n;
}

/**
 * Writes every prefix of `lay.family` in greedily filled messages, all in one
 * buffer. The loop keeps its offsets in locals (no closures over them) and
 * tests one precomputed capacity per prefix.
 */
function pack(prefixes: readonly Prefix[], ids: readonly number[] | undefined, lay: Layout, limit: number, arena: PackArena | undefined): Uint8Array[] {
  const { bytes, count, largest } = measure(prefixes, lay.family, lay.addPath);
  if (count === 0) return [];
  const mp = lay.field === 'mp';
  const lead = lay.mpLead ?? EMPTY;
  const fixed = HEADER_LENGTH + 4 + lay.blockLen + (mp ? 4 + lead.length : 0);
  const room = limit - fixed + (mp ? 1 : 0); // a short MP value saves one header byte
  if (room < largest) throw new Error(`the attributes (${lay.blockLen} bytes) leave no room for a prefix within ${limit} bytes`);
  // Every message but the last is filled to within one prefix (and one header byte) of its room, so this bounds the count.
  const maxMessages = Math.ceil(bytes / Math.max(1, room - largest - 1)) + 1;
  const need = maxMessages * fixed + bytes;
  const { buf, at } = arena !== undefined ? arena.take(need) : { buf: new Uint8Array(need), at: 0 };
  const out: Uint8Array[] = [];
  const family = lay.family;
  const addPath = lay.addPath;
  const per = addPath ? 5 : 1;
  // Prefix bytes a message takes: `cap`, or `cap + 1` when its MP value stays within 255 bytes (3-byte header).
  const cap = limit - fixed;
  const shortMax = mp ? 255 - lead.length : -1;
  let start = at;
  // Where the first message's attribute block sits, once written: later messages copy it.
  let blockAt = -1;
  let o = openMessage(buf, start, lay, lead, blockAt);
  if (!mp) blockAt = at + HEADER_LENGTH + 4;
  let used = 0; // prefix bytes in the open message
  const fastV4 = family === 4 && !addPath;
  const fastV6 = family === 6 && !addPath;
  for (let i = 0; i < prefixes.length; i++) {
    const p = prefixes[i];
    if (p.family !== family) continue;
    const size = per + ((p.length + 7) >>> 3);
    const next = used + size;
    if (next > cap && used > 0 && !(next <= shortMax && next <= cap + 1)) {
      start = closeMessage(buf, start, o, lay, out, blockAt);
      if (mp) blockAt = start - lay.blockLen;
      o = openMessage(buf, start, lay, lead, blockAt);
      used = 0;
    }
    o = fastV4 ? writeV4(buf, o, p.length, p.w0) : fastV6 ? writeV6(buf, o, p) : writePrefix(buf, o, p, addPath, ids !== undefined ? (ids[i] ?? 0) : 0);
    used += size;
  }
  const end = closeMessage(buf, start, o, lay, out, blockAt);
  // The bound above held (typed arrays drop writes past their end, and an arena's buffer goes on past `need`).
  if (end > at + need) throw new Error(`packer overran its ${need}-byte room`);
  arena?.used(end);
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
    out.push(
      ...pack(
        prefixes,
        opts.pathIds,
        { family: 4, addPath: ctx.addPathV4, field: 'nlri', attrs, blockLen: attributesSize(attrs, ctx, true), ctx },
        limit,
        opts.arena,
      ),
    );
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
    const attrs6: PathAttributes = { ...attrs, nextHop: undefined };
    out.push(
      ...pack(
        prefixes,
        opts.pathIds,
        {
          family: 6,
          addPath: ctx.addPathV6,
          field: 'mp',
          attrs: attrs6,
          blockLen: attributesSize(attrs6, ctx, true),
          ctx,
          mpCode: AttrType.MP_REACH_NLRI,
          mpLead: lead,
        },
        limit,
        opts.arena,
      ),
    );
  }
  return out;
}

const UNREACH_V6_LEAD = Uint8Array.of(0, 2, 1);

/** The fewest whole UPDATE messages withdrawing `prefixes` (IPv4 classic, IPv6 in MP_UNREACH_NLRI). */
export function packWithdrawals(
  prefixes: readonly Prefix[],
  ctx: CodecContext,
  opts: { readonly pathIds?: readonly number[]; readonly arena?: PackArena } = {},
): Uint8Array[] {
  const limit = maxMessageSize(ctx);
  return [
    ...pack(prefixes, opts.pathIds, { family: 4, addPath: ctx.addPathV4, field: 'withdrawn', attrs: null, blockLen: 0, ctx }, limit, opts.arena),
    ...pack(
      prefixes,
      opts.pathIds,
      {
        family: 6,
        addPath: ctx.addPathV6,
        field: 'mp',
        attrs: null,
        blockLen: 0,
        ctx,
        mpCode: AttrType.MP_UNREACH_NLRI,
        mpLead: UNREACH_V6_LEAD,
      },
      limit,
      opts.arena,
    ),
  ];
}
