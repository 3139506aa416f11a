/**
 * Address text straight to bytes, for the kernel layer's hot paths (a
 * request per route, an echo per route): no allocation, no library call.
 * Anything these do not take (embedded IPv4 in IPv6, zones, junk) returns
 * false and the caller uses the full parser (src/net), which says what is
 * wrong; the tests check both agree.
 */
import { Prefix } from '../net/index.js';

/**
 * A dotted-quad IPv4 address written as four bytes at `at`; false when the
 * text is not one (the caller falls back to the full parser, which says why).
 * The hot path of a large batch: one call per route, no allocation.
 */
export function writeV4(text: string, end: number, buf: Buffer, at: number): boolean {
  let octet = 0;
  let digits = 0;
  let n = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return false;
    } else if (c === 46 && digits > 0 && n < 3) {
      buf[at + n++] = octet;
      octet = 0;
      digits = 0;
    } else return false;
  }
  if (digits === 0 || n !== 3) return false;
  buf[at + 3] = octet;
  return true;
}

/**
 * An IPv6 address (hex groups, at most one `::`, no embedded IPv4) written
 * as sixteen bytes at `at`; false when the text is not one of those (the
 * caller falls back to the full parser).
 */
export function writeV6(text: string, end: number, buf: Buffer, at: number): boolean {
  // The groups go into a scratch array (no allocation: one call per route in a large batch); more than 8 is never an address.
  const groups = GROUPS;
  let ng = 0;
  let gap = -1;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d >= 0) {
      if (++digits > 4) return false;
      value = value * 16 + d;
    } else if (c === 58) {
      if (digits > 0) {
        if (ng === 8) return false;
        groups[ng++] = value;
        value = 0;
        digits = 0;
        if (i + 1 < end && text.charCodeAt(i + 1) === 58) {
          if (gap >= 0) return false;
          gap = ng;
          i++;
        } else if (i + 1 >= end) return false; // a trailing single ':'
      } else if (i === 0 && end > 1 && text.charCodeAt(1) === 58) {
        if (gap >= 0) return false;
        gap = 0;
        i++;
      } else return false;
    } else return false;
  }
  if (digits > 0) {
    if (ng === 8) return false;
    groups[ng++] = value;
  } else if (gap !== ng) return false; // ends with ':' that is not '::'
  if (gap < 0 ? ng !== 8 : ng > 7) return false;
  const zeros = 8 - ng;
  let g = 0;
  for (let k = 0; k < 8; k++) {
    const v = gap >= 0 && k >= gap && k < gap + zeros ? 0 : groups[g++];
    buf[at + 2 * k] = v >>> 8;
    buf[at + 2 * k + 1] = v & 255;
  }
  return true;
}

const GROUPS = new Uint16Array(8);

const v6 = Buffer.alloc(16);

/**
 * `ADDR/LEN` IPv6 text → the canonical prefix text (as Prefix.toString
 * prints it), or undefined when the fast path does not take it (host bits
 * set, a bad length, text the full parser must judge).
 */
export function canonicalV6Prefix(text: string): string | undefined {
  const slash = text.indexOf('/');
  const end = slash < 0 ? text.length : slash;
  const len = slash < 0 ? 128 : Number(text.slice(slash + 1));
  if (!(Number.isInteger(len) && len >= 0 && len <= 128) || (slash >= 0 && !/^(0|[1-9][0-9]{0,2})$/.test(text.slice(slash + 1)))) return undefined;
  if (!writeV6(text, end, v6, 0)) return undefined;
  const p = Prefix.v6(v6.readUInt32BE(0), v6.readUInt32BE(4), v6.readUInt32BE(8), v6.readUInt32BE(12), len);
  const masked = Prefix.containing(p.network, len);
  if (!masked.network.equals(p.network)) return undefined;
  return p.toString();
}
