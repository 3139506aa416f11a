import type { PrefixKey } from '../net/index.js';
import { Writer } from './buffer.js';
import { AttrType, HEADER_LENGTH } from './constants.js';
import { maxMessageSize, type CodecContext } from './context.js';
import { BgpError } from './errors.js';
import { attributesSize, decodeAttributeBlock, encodeAttributes, type DecodedBlock } from './attributes/block.js';
import { attributeName, type Mutable } from './attributes/descriptors.js';
import { decodeV4Keys, prefixesSize, writePrefixes, type NlriSite } from './nlri.js';
import { ReceivedMpUnreach, ReceivedUpdate } from './received.js';
import type { AttributeIssue, MpReach, MpUnreach, PathAttributes, UpdateMessage } from './types.js';

/**
 * UPDATE bodies (RFC 4271 §4.3) with RFC 7606 error handling. Decoding is
 * total: any bytes give an UpdateMessage or a BgpError. The ladder:
 *
 * - session reset (BgpError): withdrawn-routes or total-attribute length
 *   running past the body (3/1); a bad prefix in the withdrawn or NLRI
 *   field (3/10, RFC 7606 §5.3); any fault in MP_REACH/MP_UNREACH, or one of
 *   them twice (3/9, 3/4, 3/1); an unrecognized well-known attribute (3/2).
 * - treat-as-withdraw (`issues`, NLRI moved to the withdrawn lists, attributes
 *   cleared): a malformed ORIGIN, AS_PATH, NEXT_HOP, MED, LOCAL_PREF,
 *   COMMUNITIES, ORIGINATOR_ID, CLUSTER_LIST, EXTENDED or LARGE communities;
 *   flag bits that conflict with a known attribute's type; an attribute
 *   length running past the block (RFC 7606 §4); a missing well-known
 *   mandatory attribute when there is NLRI to announce.
 * - attribute discard (`issues`, the attribute dropped): a malformed
 *   ATOMIC_AGGREGATE, AGGREGATOR, AS4_PATH or AS4_AGGREGATOR; repeats of an
 *   attribute (the first copy is kept, RFC 7606 §3(g)); LOCAL_PREF from an
 *   external peer.
 *
 * Left to the layers that know more: semantic checks (martian next hops, a
 * first AS that is not the peer's, AS_CONFED segments from a peer outside
 * the confederation), and RFC 7606's "AFI/SAFI disable" alternative to a
 * reset, which needs session state. NOTIFICATION data is the offending
 * attribute where RFC 4271 §6.3 asks for it, otherwise empty.
 */

export interface UpdateDecodeOptions {
  /** The peer's kind when known; enables the eBGP/iBGP-specific rules (LOCAL_PREF). */
  readonly peer?: 'internal' | 'external';
}

const NO_OPTIONS: UpdateDecodeOptions = Object.freeze({});
const WITHDRAWN_SITE: NlriSite = { what: 'withdrawn routes', subcode: 'INVALID_NETWORK_FIELD' };
const NLRI_SITE: NlriSite = { what: 'NLRI', subcode: 'INVALID_NETWORK_FIELD' };

/** Decodes an UPDATE body (the bytes after the 19-byte header). Throws only BgpError. */
export function decodeUpdate(body: Uint8Array, ctx: CodecContext, opts: UpdateDecodeOptions = NO_OPTIONS): UpdateMessage {
  const size = body.length;
  if (size < 4) throw BgpError.update('MALFORMED_ATTRIBUTE_LIST', `UPDATE body of ${size} bytes cannot hold the two length fields`);
  const wLen = (body[0] << 8) | body[1];
  if (2 + wLen + 2 > size) throw BgpError.update('MALFORMED_ATTRIBUTE_LIST', `withdrawn routes length ${wLen} runs past the ${size}-byte body`);
  const aStart = 4 + wLen;
  const aLen = (body[aStart - 2] << 8) | body[aStart - 1];
  const aEnd = aStart + aLen;
  if (aEnd > size) throw BgpError.update('MALFORMED_ATTRIBUTE_LIST', `total path attribute length ${aLen} runs past the ${size}-byte body`);

  const addPath = ctx.addPathV4;
  // Prefixes are decoded as keys (no Prefix per route); the message builds Prefix lists only if they are read (received.ts).
  const withdrawn: PrefixKey[] = [];
  const withdrawnIds: number[] | null = addPath ? [] : null;
  decodeV4Keys(body, 2, 2 + wLen, addPath, withdrawn, withdrawnIds, WITHDRAWN_SITE);
  const block = cachedBlock(body, aStart, aEnd, ctx, opts.peer);
  const nlri: PrefixKey[] = [];
  const nlriIds: number[] | null = addPath ? [] : null;
  decodeV4Keys(body, aEnd, size, addPath, nlri, nlriIds, NLRI_SITE);

  const attrs = block.attrs;
  const issues = block.issues;
  let withdraw = block.withdraw;
  const mpReach = attrs.mpReach;
  if (nlri.length > 0 || (mpReach !== undefined && (keysOf(mpReach).length > 0 || mpReach.raw !== undefined))) {
    if (checkMandatory(attrs, nlri.length > 0, opts.peer, issues)) withdraw = true;
  }

  if (withdraw) return treatAsWithdraw(withdrawn, withdrawnIds, nlri, nlriIds, attrs, ctx, issues);
  return new ReceivedUpdate(withdrawn, withdrawnIds ?? undefined, attrs, nlri, nlriIds ?? undefined, issues.length > 0 ? issues : undefined);
}

/**
 * Attribute blocks seen before, keyed by their raw bytes (and what changes
 * how those bytes read: 4-octet ASNs, the peer's kind), as BIRD's attribute
 * hash: a speaker sending a table repeats a few thousand blocks over many
 * UPDATEs, and a repeat is neither parsed again nor, downstream, hashed and
 * compared again (the result is frozen, and AttrStore remembers a frozen
 * input it has interned). Only clean blocks are kept: no issue, no
 * MP_REACH/MP_UNREACH (those carry NLRI). Bounded: emptied when full.
 */
const BLOCK_CACHE_MAX = 8192;
/** Blocks longer than this are decoded each time. */
const BLOCK_CACHE_BYTES = 1024;
interface CachedBlock {
  /** A copy of the block's bytes, and how they were read. */
  readonly bytes: Uint8Array;
  readonly asn4: boolean;
  readonly peer: UpdateDecodeOptions['peer'];
  readonly attrs: PathAttributes;
}
/** By a hash of the bytes (FNV-1a): no string is built per UPDATE, a hit is one pass over the bytes to compare. */
const blockCache = new Map<number, CachedBlock | CachedBlock[]>();
let blockCacheSize = 0;

function cachedBlock(body: Uint8Array, start: number, end: number, ctx: CodecContext, peer: UpdateDecodeOptions['peer']): DecodedBlock {
  if (end - start > BLOCK_CACHE_BYTES || end === start) return decodeAttributeBlock(body, start, end, ctx, peer);
  let h = 0x811c9dc5 ^ (end - start);
  for (let i = start; i < end; i++) h = Math.imul(h ^ body[i], 0x01000193);
  const slot = blockCache.get(h);
  if (slot !== undefined) {
    if (Array.isArray(slot)) {
      for (const c of slot) if (sameBlock(c, body, start, end, ctx.asn4, peer)) return { attrs: c.attrs, issues: [], withdraw: false };
    } else if (sameBlock(slot, body, start, end, ctx.asn4, peer)) return { attrs: slot.attrs, issues: [], withdraw: false };
  }
  const block = decodeAttributeBlock(body, start, end, ctx, peer);
  if (block.issues.length > 0 || block.withdraw || block.attrs.mpReach !== undefined || block.attrs.mpUnreach !== undefined) return block;
  if (blockCacheSize >= BLOCK_CACHE_MAX) clearAttributeBlockCache();
  const entry: CachedBlock = { bytes: body.slice(start, end), asn4: ctx.asn4, peer, attrs: deepFreeze(block.attrs) };
  const now = blockCache.get(h);
  if (now === undefined) blockCache.set(h, entry);
  else if (Array.isArray(now)) now.push(entry);
  else blockCache.set(h, [now, entry]);
  blockCacheSize++;
  return { attrs: entry.attrs, issues: [], withdraw: false };
}

function sameBlock(c: CachedBlock, body: Uint8Array, start: number, end: number, asn4: boolean, peer: UpdateDecodeOptions['peer']): boolean {
  const b = c.bytes;
  if (b.length !== end - start || c.asn4 !== asn4 || c.peer !== peer) return false;
  for (let i = 0; i < b.length; i++) if (b[i] !== body[start + i]) return false;
  return true;
}

/** For tests: forget every cached block. */
export function clearAttributeBlockCache(): void {
  blockCache.clear();
  blockCacheSize = 0;
}

/** Typed arrays (unknown attributes' bytes, copies of the receive buffer) cannot be frozen: read-only by contract. */
function deepFreeze<T>(v: T): T {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v) || ArrayBuffer.isView(v)) return v;
  for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  return Object.freeze(v);
}

/**
 * RFC 4271 §5 / RFC 4760 §3: ORIGIN and AS_PATH for any announcement,
 * NEXT_HOP for classic NLRI, LOCAL_PREF from an internal peer. Returns true
 * when one is missing (RFC 7606 §3(d): treat-as-withdraw). A code already
 * reported as malformed is not reported again.
 */
function checkMandatory(a: PathAttributes, classic: boolean, peer: UpdateDecodeOptions['peer'], issues: AttributeIssue[]): boolean {
  if (a.origin !== undefined && a.asPath !== undefined && (!classic || a.nextHop !== undefined) && (peer !== 'internal' || a.localPref !== undefined))
    return false;
  const missing: number[] = [];
  if (a.origin === undefined) missing.push(AttrType.ORIGIN);
  if (a.asPath === undefined) missing.push(AttrType.AS_PATH);
  if (classic && a.nextHop === undefined) missing.push(AttrType.NEXT_HOP);
  if (peer === 'internal' && a.localPref === undefined) missing.push(AttrType.LOCAL_PREF);
  let any = false;
  for (const code of missing) {
    if (issues.some((i) => i.code === code && i.action === 'treat-as-withdraw')) {
      any = true;
      continue;
    }
    issues.push({ code, action: 'treat-as-withdraw', reason: `missing well-known attribute ${attributeName(code)}` });
    any = true;
  }
  return any;
}

/** The UPDATE with every announced prefix moved into the withdrawn lists and the attributes cleared. */
function treatAsWithdraw(
  withdrawn: readonly PrefixKey[],
  withdrawnIds: readonly number[] | null,
  nlri: readonly PrefixKey[],
  nlriIds: readonly number[] | null,
  a: PathAttributes,
  ctx: CodecContext,
  issues: AttributeIssue[],
): ReceivedUpdate {
  const w4 = [...withdrawn, ...nlri];
  const ids4 = withdrawnIds !== null ? [...withdrawnIds, ...(nlriIds ?? [])] : undefined;
  let unreach: MpUnreach | undefined;
  const v6: PrefixKey[] = [];
  const ids6: number[] = [];
  const take = (afi: number, safi: number, list: readonly PrefixKey[], ids: readonly number[] | undefined, raw: Uint8Array | undefined, what: string) => {
    if (raw !== undefined) {
      if (unreach === undefined) unreach = new ReceivedMpUnreach(afi, safi, [], undefined, raw);
      else
        issues.push({
          code: AttrType.MP_UNREACH_NLRI,
          action: 'treat-as-withdraw',
          reason: `${what} for AFI ${afi}/SAFI ${safi} could not be carried as a withdrawal`,
        });
      return;
    }
    if (afi === 1) {
      w4.push(...list);
      if (ids4 !== undefined) for (let i = 0; i < list.length; i++) ids4.push(ids?.[i] ?? 0);
    } else {
      v6.push(...list);
      for (let i = 0; i < list.length; i++) ids6.push(ids?.[i] ?? 0);
    }
  };
  if (a.mpUnreach !== undefined) take(a.mpUnreach.afi, a.mpUnreach.safi, keysOf(a.mpUnreach), a.mpUnreach.pathIds, a.mpUnreach.raw, 'MP_UNREACH_NLRI');
  if (a.mpReach !== undefined) take(a.mpReach.afi, a.mpReach.safi, keysOf(a.mpReach), a.mpReach.pathIds, reachRawNlri(a.mpReach.raw), 'MP_REACH_NLRI');
  const attributes: Mutable<PathAttributes> = {};
  if (v6.length > 0 || (a.mpUnreach?.afi === 2 && a.mpUnreach.raw === undefined)) {
    if (unreach === undefined) unreach = new ReceivedMpUnreach(2, 1, v6, ctx.addPathV6 ? ids6 : undefined, undefined);
    else issues.push({ code: AttrType.MP_UNREACH_NLRI, action: 'treat-as-withdraw', reason: 'IPv6 withdrawals could not be carried beside another family' });
  }
  if (unreach !== undefined) attributes.mpUnreach = unreach;
  return new ReceivedUpdate(w4, ids4, attributes, [], nlriIds !== null ? [] : undefined, issues.length > 0 ? issues : undefined);
}

/** The decoder's key list of an MP attribute (always set by mp.ts, which made it). */
function keysOf(mp: MpReach | MpUnreach): readonly PrefixKey[] {
  if (mp.keys === undefined) throw new Error('MP attribute without prefix keys: not from the decoder');
  return mp.keys;
}

/** The NLRI bytes of a raw MP_REACH value (next-hop length, next hop, reserved byte, NLRI). */
function reachRawNlri(raw: Uint8Array | undefined): Uint8Array | undefined {
  if (raw === undefined) return undefined;
  const skip = raw.length > 0 ? 1 + raw[0] + 1 : 0;
  return raw.subarray(Math.min(skip, raw.length));
}

/**
 * Encodes an UPDATE body (without header) in canonical form (see
 * attributes/descriptors.ts ENCODE_ORDER). Classic withdrawn and NLRI must be
 * IPv4. Throws a plain Error for a message that cannot be encoded, including
 * one larger than the context allows.
 */
export function encodeUpdateBody(msg: UpdateMessage, ctx: CodecContext): Uint8Array {
  const addPath = ctx.addPathV4;
  const wSize = prefixesSize(msg.withdrawn, addPath);
  const nSize = prefixesSize(msg.nlri, addPath);
  const aSize = attributesSize(msg.attributes, ctx);
  const total = 4 + wSize + aSize + nSize;
  const limit = maxMessageSize(ctx);
  if (total + HEADER_LENGTH > limit) throw new Error(`UPDATE of ${total + HEADER_LENGTH} bytes exceeds the ${limit}-byte limit; use the packer to split it`);
  // Sizes are known up front: one exact allocation, written in place.
  const w = new Writer(total);
  w.u16(wSize);
  w.pos = writePrefixes(w.buf, w.pos, msg.withdrawn, 4, addPath, msg.withdrawnPathIds);
  w.u16(aSize);
  encodeAttributes(w, msg.attributes, ctx);
  w.pos = writePrefixes(w.buf, w.pos, msg.nlri, 4, addPath, msg.nlriPathIds);
  if (w.pos !== total || w.buf.length !== total) throw new Error(`UPDATE encoder wrote ${w.pos} bytes, expected ${total}`);
  return w.buf;
}

/** The End-of-RIB marker (RFC 4724 §2): an empty UPDATE for IPv4 unicast, an empty MP_UNREACH_NLRI otherwise. */
export function endOfRib(afi: number, safi = 1): UpdateMessage {
  if (afi === 1 && safi === 1) return { type: 'update', withdrawn: [], attributes: {}, nlri: [] };
  return { type: 'update', withdrawn: [], attributes: { mpUnreach: { afi, safi, withdrawn: [] } }, nlri: [] };
}

/** The family an End-of-RIB marker stands for, or null when `msg` is not one. */
export function isEndOfRib(msg: UpdateMessage): { afi: number; safi: number } | null {
  // Counted from the key lists when the decoder made them: reading `withdrawn` or `nlri` would build Prefix objects.
  if ((msg.withdrawnKeys ?? msg.withdrawn).length > 0 || (msg.nlriKeys ?? msg.nlri).length > 0 || (msg.issues !== undefined && msg.issues.length > 0))
    return null;
  const a = msg.attributes;
  let keys = 0;
  for (const k in a) if ((a as Record<string, unknown>)[k] !== undefined) keys++;
  if (keys === 0) return { afi: 1, safi: 1 };
  const u = a.mpUnreach;
  if (keys !== 1 || u === undefined || (u.keys ?? u.withdrawn).length > 0 || (u.raw !== undefined && u.raw.length > 0)) return null;
  return { afi: u.afi, safi: u.safi };
}
