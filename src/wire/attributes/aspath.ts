import { AS_TRANS } from '../constants.js';
import type { Writer } from '../buffer.js';
import type { AsPathSegment } from '../types.js';

/**
 * AS_PATH / AS4_PATH segments (RFC 4271 §4.3, RFC 5065, RFC 6793). In memory
 * every ASN is a 4-byte value; `width` picks the wire form.
 */

/** Decodes segments; returns a reason string when malformed (RFC 7606 §7.2). */
export function decodeSegments(b: Uint8Array, o: number, len: number, width: 2 | 4): AsPathSegment[] | string {
  const end = o + len;
  const segs: AsPathSegment[] = [];
  while (o < end) {
    if (end - o < 2) return 'a single byte is left where a segment header needs two';
    const type = b[o];
    const n = b[o + 1];
    o += 2;
    if (type < 1 || type > 4) return `unknown segment type ${type}`;
    if (n === 0) return 'segment with zero ASNs';
    if (o + n * width > end) return `segment of ${n} ASNs overruns the attribute`;
    const asns = new Array<number>(n);
    if (width === 4) {
      for (let i = 0; i < n; i++, o += 4) asns[i] = ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
    } else {
      for (let i = 0; i < n; i++, o += 2) asns[i] = (b[o] << 8) | b[o + 1];
    }
    segs.push({ type: type as 1 | 2 | 3 | 4, asns });
  }
  return segs;
}

/**
 * Writes segments, splitting any longer than 255 ASNs into several of the
 * same type and skipping empty ones (neither exists on the wire). With
 * width 2, ASNs above 65535 become AS_TRANS.
 */
export function encodeSegments(w: Writer, segs: readonly AsPathSegment[], width: 2 | 4, skipConfed = false): void {
  for (const seg of segs) {
    if (skipConfed && (seg.type === 3 || seg.type === 4)) continue;
    const asns = seg.asns;
    for (let start = 0; start < asns.length; start += 255) {
      const n = Math.min(255, asns.length - start);
      w.ensure(2 + n * width);
      const buf = w.buf;
      let p = w.pos;
      buf[p++] = seg.type;
      buf[p++] = n;
      for (let i = start; i < start + n; i++) {
        const a = asns[i];
        if (!Number.isInteger(a) || a < 0 || a > 0xffffffff) throw new Error(`AS_PATH holds ${a}, not a 32-bit AS number`);
        if (width === 4) {
          buf[p++] = a >>> 24;
          buf[p++] = a >>> 16;
          buf[p++] = a >>> 8;
          buf[p++] = a;
        } else {
          const v = a > 0xffff ? AS_TRANS : a;
          buf[p++] = v >>> 8;
          buf[p++] = v;
        }
      }
      w.pos = p;
    }
  }
}

/** Encoded size of the segments as encodeSegments writes them. */
export function segmentsSize(segs: readonly AsPathSegment[], width: 2 | 4, skipConfed = false): number {
  let n = 0;
  for (const seg of segs) {
    if (skipConfed && (seg.type === 3 || seg.type === 4)) continue;
    const len = seg.asns.length;
    n += 2 * Math.ceil(len / 255) + len * width;
  }
  return n;
}

/** True when an AS4_PATH is worth sending: a non-confederation ASN needs 4 bytes. */
export function needsAs4Path(segs: readonly AsPathSegment[]): boolean {
  for (const s of segs) if (s.type === 1 || s.type === 2) for (const a of s.asns) if (a > 0xffff) return true;
  return false;
}

/** RFC 6793 §4.2.3 path length: a sequence counts its ASNs, a set counts 1, confederation segments 0. */
export function pathCount(segs: readonly AsPathSegment[]): number {
  let n = 0;
  for (const s of segs) n += s.type === 2 ? s.asns.length : s.type === 1 ? 1 : 0;
  return n;
}

/**
 * RFC 6793 §4.2.3: rebuilds the 4-byte path from AS_PATH and AS4_PATH. When
 * AS_PATH counts fewer ASNs than AS4_PATH, AS4_PATH is ignored. Otherwise the
 * leading ASNs of AS_PATH that AS4_PATH lacks (plus any leading confederation
 * segments) go in front of AS4_PATH; adjacent sequences are joined where they
 * fit one segment.
 */
export function mergeAs4Path(asPath: readonly AsPathSegment[], as4Path: readonly AsPathSegment[]): readonly AsPathSegment[] {
  const n = pathCount(asPath);
  const n4 = pathCount(as4Path);
  if (n < n4) return asPath;
  let need = n - n4;
  const out: AsPathSegment[] = [];
  // A sequence cut short by the merge is rejoined with the AS4_PATH's first sequence.
  let cut = false;
  for (const seg of asPath) {
    if (seg.type === 3 || seg.type === 4) {
      out.push(seg);
      cut = false;
      continue;
    }
    if (need === 0) break;
    if (seg.type === 1) {
      out.push(seg);
      cut = false;
      need--;
      continue;
    }
    const take = Math.min(need, seg.asns.length);
    cut = take < seg.asns.length;
    out.push(cut ? { type: 2, asns: seg.asns.slice(0, take) } : seg);
    need -= take;
  }
  const first = as4Path[0];
  const last = out[out.length - 1];
  if (cut && first !== undefined && first.type === 2 && last.asns.length + first.asns.length <= 255) {
    out[out.length - 1] = { type: 2, asns: [...last.asns, ...first.asns] };
    for (let i = 1; i < as4Path.length; i++) out.push(as4Path[i]);
  } else out.push(...as4Path);
  return out;
}
