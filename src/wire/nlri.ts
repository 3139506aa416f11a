import { Prefix, v4Key, v6Key, type PrefixKey } from '../net/index.js';
import { copyBytes } from './attributes/bytes.js';
import { BgpError } from './errors.js';
import type { UpdateSubcode } from './constants.js';

/**
 * Prefix (NLRI) encoding: a length byte then the fewest bytes that hold it,
 * optionally preceded by a 4-byte RFC 7911 path identifier. Decoding reads
 * straight from the byte array into prefix keys (src/net/prefix-key.ts), the
 * form the RIB stores, so receiving a route builds no Prefix; bits beyond the prefix
 * length are masked off (RFC 4271 says they are irrelevant), so a sender's
 * stray host bits never make two distinct keys for one route.
 */

/** Where a prefix list sits, for error messages and the NOTIFICATION subcode. */
export interface NlriSite {
  readonly what: string;
  readonly subcode: keyof typeof UpdateSubcode;
  /** NOTIFICATION data, the enclosing attribute as buf[from, to); copied only on error. Empty when absent. */
  readonly buf?: Uint8Array;
  readonly from?: number;
  readonly to?: number;
}

function fail(site: NlriSite, why: string): never {
  const data = site.buf !== undefined ? copyBytes(site.buf, site.from ?? 0, site.to ?? 0) : new Uint8Array(0);
  throw BgpError.update(site.subcode, `${site.what}: ${why}`, data);
}

/** The first `n` (0..4) bytes at `o` as the top of a 32-bit word. */
function partialWord(b: Uint8Array, o: number, n: number): number {
  switch (n) {
    case 0:
      return 0;
    case 1:
      return b[o] << 24;
    case 2:
      return (b[o] << 24) | (b[o + 1] << 16);
    case 3:
      return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8);
    default:
      return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
  }
}

/** Top `len` bits of a word kept (len 0..32). */
function mask(v: number, len: number): number {
  if (len <= 0) return 0;
  if (len >= 32) return v >>> 0;
  return (v & (0xffffffff << (32 - len))) >>> 0;
}

/** MASK4[len]: the top `len` bits of a word, for len 0..32 (a table beats shifts with edge cases). */
const MASK4: readonly number[] = Array.from({ length: 33 }, (_, len) => (len === 0 ? 0 : len === 32 ? 0xffffffff : (0xffffffff << (32 - len)) >>> 0));

/**
 * Decodes IPv4 prefixes in b[start, end) into `out` as prefix keys (src/net
 * prefix-key.ts: no Prefix object per route), and their path ids into `ids`
 * when `addPath`. Throws BgpError with `site.subcode` on a length above 32 or
 * a prefix running past `end` (RFC 7606 §5.3: session reset).
 */
export function decodeV4Keys(b: Uint8Array, start: number, end: number, addPath: boolean, out: PrefixKey[], ids: number[] | null, site: NlriSite): void {
  if (addPath) return decodeV4WithIds(b, start, end, out, ids, site);
  // Pass 1 checks every length and counts, so pass 2 can fill a presized array without checks.
  let o = start;
  let count = 0;
  while (o < end) {
    const len = b[o];
    if (len > 32) fail(site, `IPv4 prefix length ${len} is above 32`);
    const n = (len + 7) >>> 3;
    if (o + 1 + n > end) fail(site, `prefix /${len} needs ${n} bytes but only ${end - o - 1} remain`);
    o += 1 + n;
    count++;
  }
  let k = out.length;
  out.length = k + count;
  o = start;
  while (o < end) {
    const len = b[o++];
    const n = (len + 7) >>> 3;
    out[k++] = v4Key((partialWord(b, o, n) & MASK4[len]) >>> 0, len);
    o += n;
  }
}

function decodeV4WithIds(b: Uint8Array, start: number, end: number, out: PrefixKey[], ids: number[] | null, site: NlriSite): void {
  let o = start;
  while (o < end) {
    if (end - o < 5) fail(site, `path identifier and length truncated at byte ${o - start}`);
    const id = ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
    o += 4;
    const len = b[o++];
    if (len > 32) fail(site, `IPv4 prefix length ${len} is above 32`);
    const n = (len + 7) >>> 3;
    if (o + n > end) fail(site, `prefix /${len} needs ${n} bytes but only ${end - o} remain`);
    const v = (partialWord(b, o, n) & MASK4[len]) >>> 0;
    o += n;
    out.push(v4Key(v, len));
    if (ids !== null) ids.push(id);
  }
}

/** As decodeV4Keys, for IPv6 (length up to 128; keys of prefixes longer than /48 are strings). */
export function decodeV6Keys(b: Uint8Array, start: number, end: number, addPath: boolean, out: PrefixKey[], ids: number[] | null, site: NlriSite): void {
  const head = addPath ? 5 : 1;
  let o = start;
  let count = 0;
  while (o < end) {
    if (end - o < head) fail(site, `path identifier and length truncated at byte ${o - start}`);
    const len = b[o + head - 1];
    if (len > 128) fail(site, `IPv6 prefix length ${len} is above 128`);
    const n = (len + 7) >>> 3;
    if (o + head + n > end) fail(site, `prefix /${len} needs ${n} bytes but only ${end - o - head} remain`);
    o += head + n;
    count++;
  }
  let k = out.length;
  out.length = k + count;
  o = start;
  while (o < end) {
    if (addPath) {
      if (ids !== null) ids.push(((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0);
      o += 4;
    }
    const len = b[o++];
    const n = (len + 7) >>> 3;
    const w0 = mask(partialWord(b, o, n > 4 ? 4 : n), len);
    const w1 = n > 4 ? mask(partialWord(b, o + 4, n > 8 ? 4 : n - 4), len - 32) : 0;
    if (len <= 48) out[k++] = v6Key(w0, w1, len);
    else {
      const w2 = n > 8 ? mask(partialWord(b, o + 8, n > 12 ? 4 : n - 8), len - 64) : 0;
      const w3 = n > 12 ? mask(partialWord(b, o + 12, n - 12), len - 96) : 0;
      out[k++] = Prefix.v6(w0, w1, w2, w3, len).key;
    }
    o += n;
  }
}

/** Wire size of a prefix list. */
export function prefixesSize(prefixes: readonly Prefix[], addPath: boolean): number {
  let n = 0;
  for (let i = 0; i < prefixes.length; i++) n += (prefixes[i].length + 7) >>> 3;
  return n + prefixes.length * (addPath ? 5 : 1);
}

function writeWordBytes(buf: Uint8Array, o: number, w: number, n: number): void {
  if (n > 0) buf[o] = w >>> 24;
  if (n > 1) buf[o + 1] = w >>> 16;
  if (n > 2) buf[o + 2] = w >>> 8;
  if (n > 3) buf[o + 3] = w;
}

/** Writes an IPv4 prefix without path id at `o`; returns the new offset. */
export function writeV4(buf: Uint8Array, o: number, len: number, w: number): number {
  buf[o++] = len;
  if (len > 0) {
    buf[o++] = w >>> 24;
    if (len > 8) {
      buf[o++] = w >>> 16;
      if (len > 16) {
        buf[o++] = w >>> 8;
        if (len > 24) buf[o++] = w;
      }
    }
  }
  return o;
}

/**
 * Writes one prefix at `o` (the caller has checked room); returns the new
 * offset. `id` is written only when `addPath`.
 */
export function writePrefix(buf: Uint8Array, o: number, p: Prefix, addPath: boolean, id: number): number {
  if (addPath) {
    buf[o] = id >>> 24;
    buf[o + 1] = id >>> 16;
    buf[o + 2] = id >>> 8;
    buf[o + 3] = id;
    o += 4;
  }
  const len = p.length;
  const n = (len + 7) >>> 3;
  buf[o++] = len;
  if (p.family === 4) {
    writeWordBytes(buf, o, p.w0, n);
  } else {
    writeWordBytes(buf, o, p.w0, n > 4 ? 4 : n);
    if (n > 4) writeWordBytes(buf, o + 4, p.w1, n > 8 ? 4 : n - 4);
    if (n > 8) writeWordBytes(buf, o + 8, p.w2, n > 12 ? 4 : n - 8);
    if (n > 12) writeWordBytes(buf, o + 12, p.w3, n - 12);
  }
  return o + n;
}

/**
 * Writes prefixes[from, to) of one family; throws a plain Error (a caller
 * bug, not a peer fault) when a prefix of the other family is mixed in.
 */
export function writePrefixes(
  buf: Uint8Array,
  o: number,
  prefixes: readonly Prefix[],
  family: 4 | 6,
  addPath: boolean,
  ids: readonly number[] | undefined,
  from = 0,
  to = prefixes.length,
): number {
  if (family === 4 && !addPath) {
    // The common case, inlined: length byte then 0–4 address bytes.
    for (let i = from; i < to; i++) {
      const p = prefixes[i];
      if (p.family !== 4) throw new Error(`cannot encode ${p.toString()} in an IPv4 prefix list`);
      o = writeV4(buf, o, p.length, p.w0);
    }
    return o;
  }
  for (let i = from; i < to; i++) {
    const p = prefixes[i];
    if (p.family !== family) throw new Error(`cannot encode ${p.toString()} in an IPv${family} prefix list`);
    o = writePrefix(buf, o, p, addPath, ids !== undefined ? (ids[i] ?? 0) : 0);
  }
  return o;
}
