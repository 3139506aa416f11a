import { Prefix } from '../../src/net/prefix.js';
import { BgpError } from '../../src/wire/errors.js';
import type { NlriSite } from '../../src/wire/nlri.js';

/**
 * The NLRI decoder as it was before prefixes were decoded into keys
 * (src/wire/nlri.ts at 63cad27: bytes straight into Prefix objects), kept
 * as the reference the key decoders are checked against: the same prefixes,
 * path ids and errors for any bytes (test/wire/update-nlri.test.ts).
 */

function fail(site: NlriSite, why: string): never {
  const data = site.buf !== undefined ? site.buf.slice(site.from ?? 0, site.to ?? 0) : new Uint8Array(0);
  throw BgpError.update(site.subcode, `${site.what}: ${why}`, data);
}

function partialWord(b: Uint8Array, o: number, n: number): number {
  let v = 0;
  for (let i = 0; i < 4; i++) v = (v << 8) | (i < n ? b[o + i] : 0);
  return v;
}

function mask(v: number, len: number): number {
  if (len <= 0) return 0;
  if (len >= 32) return v >>> 0;
  return (v & (0xffffffff << (32 - len))) >>> 0;
}

export function referenceV4(b: Uint8Array, start: number, end: number, addPath: boolean, out: Prefix[], ids: number[] | null, site: NlriSite): void {
  if (addPath) {
    let o = start;
    while (o < end) {
      if (end - o < 5) fail(site, `path identifier and length truncated at byte ${o - start}`);
      const id = ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
      o += 4;
      const len = b[o++];
      if (len > 32) fail(site, `IPv4 prefix length ${len} is above 32`);
      const n = (len + 7) >>> 3;
      if (o + n > end) fail(site, `prefix /${len} needs ${n} bytes but only ${end - o} remain`);
      const v = mask(partialWord(b, o, n), len);
      o += n;
      out.push(Prefix.v4(v, len));
      if (ids !== null) ids.push(id);
    }
    return;
  }
  let o = start;
  while (o < end) {
    const len = b[o];
    if (len > 32) fail(site, `IPv4 prefix length ${len} is above 32`);
    const n = (len + 7) >>> 3;
    if (o + 1 + n > end) fail(site, `prefix /${len} needs ${n} bytes but only ${end - o - 1} remain`);
    o += 1 + n;
  }
  o = start;
  while (o < end) {
    const len = b[o++];
    const n = (len + 7) >>> 3;
    out.push(Prefix.v4(mask(partialWord(b, o, n), len), len));
    o += n;
  }
}

export function referenceV6(b: Uint8Array, start: number, end: number, addPath: boolean, out: Prefix[], ids: number[] | null, site: NlriSite): void {
  const head = addPath ? 5 : 1;
  let o = start;
  while (o < end) {
    if (end - o < head) fail(site, `path identifier and length truncated at byte ${o - start}`);
    const len = b[o + head - 1];
    if (len > 128) fail(site, `IPv6 prefix length ${len} is above 128`);
    const n = (len + 7) >>> 3;
    if (o + head + n > end) fail(site, `prefix /${len} needs ${n} bytes but only ${end - o - head} remain`);
    o += head + n;
  }
  o = start;
  while (o < end) {
    if (addPath) {
      if (ids !== null) ids.push(((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0);
      o += 4;
    }
    const len = b[o++];
    const n = (len + 7) >>> 3;
    const w = [0, 1, 2, 3].map((i) => (n > 4 * i ? mask(partialWord(b, o + 4 * i, Math.min(4, n - 4 * i)), len - 32 * i) : 0));
    o += n;
    out.push(Prefix.v6(w[0], w[1], w[2], w[3], len));
  }
}
