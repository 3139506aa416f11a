import { Address, type PrefixKey } from '../../net/index.js';
import type { Writer } from '../buffer.js';
import type { CodecContext } from '../context.js';
import { BgpError } from '../errors.js';
import { copyBytes } from './bytes.js';
import { decodeV4Keys, decodeV6Keys, prefixesSize, writePrefixes, type NlriSite } from '../nlri.js';
import { rawMpReach, rawMpUnreach, ReceivedMpReach, ReceivedMpUnreach } from '../received.js';
import type { MpReach, MpUnreach } from '../types.js';

/**
 * MP_REACH_NLRI / MP_UNREACH_NLRI (RFC 4760) for IPv4 and IPv6 unicast;
 * other families are kept as raw bytes. Any fault here is a session reset
 * with UPDATE error 3/9 (RFC 4760 §7, RFC 7606 §7.11–7.12): the NLRI inside
 * cannot be trusted, so it cannot be withdrawn either.
 */

/** `at` is where the attribute (header included) starts; it ends at the value's end. */
function malformed(name: string, why: string, b: Uint8Array, at: number, end: number): never {
  throw BgpError.update('OPTIONAL_ATTRIBUTE_ERROR', `malformed ${name}: ${why}`, copyBytes(b, at, end));
}

function isUnicast(afi: number, safi: number): boolean {
  return safi === 1 && (afi === 1 || afi === 2);
}

function addPathFor(ctx: CodecContext, afi: number): boolean {
  return afi === 1 ? ctx.addPathV4 : afi === 2 ? ctx.addPathV6 : false;
}

/** The value is b[o, o+len); the attribute header starts at `at` (for the NOTIFICATION data). */
export function decodeMpReach(b: Uint8Array, o: number, len: number, ctx: CodecContext, at: number): MpReach {
  const end = o + len;
  if (len < 3) malformed('MP_REACH_NLRI', `length ${len} cannot hold AFI and SAFI`, b, at, end);
  const afi = (b[o] << 8) | b[o + 1];
  const safi = b[o + 2];
  if (!isUnicast(afi, safi)) return rawMpReach(afi, safi, copyBytes(b, o + 3, end));
  if (len < 5) malformed('MP_REACH_NLRI', `length ${len} is below the 5-byte minimum for unicast`, b, at, end);
  const nhLen = b[o + 3];
  const nhStart = o + 4;
  if (nhStart + nhLen + 1 > end) malformed('MP_REACH_NLRI', `next hop length ${nhLen} overruns the attribute`, b, at, end);
  let nextHops: Address[];
  if (nhLen === 4 && afi === 1) nextHops = [Address.fromBytes(4, b, nhStart)];
  else if (nhLen === 16) nextHops = [Address.fromBytes(6, b, nhStart)];
  else if (nhLen === 32) nextHops = [Address.fromBytes(6, b, nhStart), Address.fromBytes(6, b, nhStart + 16)];
  else malformed('MP_REACH_NLRI', `next hop length ${nhLen} is not valid for AFI ${afi} (4, 16 or 32 expected)`, b, at, end);
  const nlriStart = nhStart + nhLen + 1; // one reserved byte after the next hop
  const addPath = addPathFor(ctx, afi);
  const keys: PrefixKey[] = [];
  const ids: number[] | null = addPath ? [] : null;
  const site: NlriSite = { what: 'MP_REACH_NLRI', subcode: 'OPTIONAL_ATTRIBUTE_ERROR', buf: b, from: at, to: end };
  if (afi === 1) decodeV4Keys(b, nlriStart, end, addPath, keys, ids, site);
  else decodeV6Keys(b, nlriStart, end, addPath, keys, ids, site);
  return new ReceivedMpReach(afi, safi, nextHops, keys, ids ?? undefined, undefined);
}

export function decodeMpUnreach(b: Uint8Array, o: number, len: number, ctx: CodecContext, at: number): MpUnreach {
  const end = o + len;
  if (len < 3) malformed('MP_UNREACH_NLRI', `length ${len} is below the 3-byte minimum`, b, at, end);
  const afi = (b[o] << 8) | b[o + 1];
  const safi = b[o + 2];
  if (!isUnicast(afi, safi)) return rawMpUnreach(afi, safi, copyBytes(b, o + 3, end));
  const addPath = addPathFor(ctx, afi);
  const keys: PrefixKey[] = [];
  const ids: number[] | null = addPath ? [] : null;
  const site: NlriSite = { what: 'MP_UNREACH_NLRI', subcode: 'OPTIONAL_ATTRIBUTE_ERROR', buf: b, from: at, to: end };
  if (afi === 1) decodeV4Keys(b, o + 3, end, addPath, keys, ids, site);
  else decodeV6Keys(b, o + 3, end, addPath, keys, ids, site);
  return new ReceivedMpUnreach(afi, safi, keys, ids ?? undefined, undefined);
}

function familyOf(afi: number): 4 | 6 {
  return afi === 1 ? 4 : 6;
}

function nextHopsLength(mp: MpReach): number {
  let n = 0;
  for (const a of mp.nextHops) n += a.byteLength;
  return n;
}

export function mpReachSize(mp: MpReach, ctx: CodecContext): number {
  if (mp.raw !== undefined) return 3 + mp.raw.length;
  return 3 + 1 + nextHopsLength(mp) + 1 + prefixesSize(mp.nlri, addPathFor(ctx, mp.afi));
}

export function mpUnreachSize(mp: MpUnreach, ctx: CodecContext): number {
  if (mp.raw !== undefined) return 3 + mp.raw.length;
  return 3 + prefixesSize(mp.withdrawn, addPathFor(ctx, mp.afi));
}

/** Writes the MP_REACH_NLRI value (no attribute header). */
export function encodeMpReachValue(w: Writer, mp: MpReach, ctx: CodecContext): void {
  w.u16(mp.afi).u8(mp.safi);
  if (mp.raw !== undefined) {
    w.bytes(mp.raw);
    return;
  }
  if (!isUnicast(mp.afi, mp.safi)) throw new Error(`MP_REACH_NLRI for AFI ${mp.afi}/SAFI ${mp.safi} needs raw bytes`);
  const nhLen = nextHopsLength(mp);
  if (nhLen === 0 || nhLen > 32) throw new Error(`MP_REACH_NLRI needs one next hop, or IPv6 global + link-local (got ${mp.nextHops.length})`);
  w.u8(nhLen);
  w.ensure(nhLen);
  for (const a of mp.nextHops) w.pos = a.writeTo(w.buf, w.pos);
  w.u8(0);
  const addPath = addPathFor(ctx, mp.afi);
  w.ensure(prefixesSize(mp.nlri, addPath));
  w.pos = writePrefixes(w.buf, w.pos, mp.nlri, familyOf(mp.afi), addPath, mp.pathIds);
}

export function encodeMpUnreachValue(w: Writer, mp: MpUnreach, ctx: CodecContext): void {
  w.u16(mp.afi).u8(mp.safi);
  if (mp.raw !== undefined) {
    w.bytes(mp.raw);
    return;
  }
  if (!isUnicast(mp.afi, mp.safi)) throw new Error(`MP_UNREACH_NLRI for AFI ${mp.afi}/SAFI ${mp.safi} needs raw bytes`);
  const addPath = addPathFor(ctx, mp.afi);
  w.ensure(prefixesSize(mp.withdrawn, addPath));
  w.pos = writePrefixes(w.buf, w.pos, mp.withdrawn, familyOf(mp.afi), addPath, mp.pathIds);
}
