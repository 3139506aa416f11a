/**
 * The codec's own writer (src/wire/buffer.ts) against `smart-buffer` on the
 * UPDATE-packing path, side by side in one run.
 *
 *   node --import tsx bench/writers.ts           # 400,000 IPv4 prefixes
 *   node --import tsx bench/writers.ts --quick   # 1/10 of that
 *
 * The same packing loop is written twice, once per writer: for each
 * attribute set, whole UPDATEs of at most 4096 bytes (header, withdrawn
 * length, the attribute block, IPv4 NLRI), the message and attribute
 * lengths reserved and back-patched. The product's packer (packUpdates,
 * which writes straight into one typed array) runs beside them as the
 * reference. Each figure is the median of several runs after a warm-up, and
 * the loops' outputs are compared byte for byte first.
 */
import { performance } from 'node:perf_hooks';
import { SmartBuffer } from 'smart-buffer';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { encodeAttributes } from '../src/wire/attributes/block.js';
import { Writer } from '../src/wire/buffer.js';
import type { CodecContext } from '../src/wire/context.js';
import { packUpdates } from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';
import { mulberry32 } from '../test/prng.js';
import { emit, median } from './report.js';

const quick = process.argv.includes('--quick');
const PREFIXES = quick ? 40_000 : 400_000;
const SETS = quick ? 200 : 2000;
const RUNS = quick ? 5 : 9;
const MAX = 4096;
const ctx: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };

const rand = mulberry32(0x5eed);

const sets: { attrs: PathAttributes; block: Uint8Array; prefixes: Prefix[] }[] = Array.from({ length: SETS }, (_, i) => {
  const attrs: PathAttributes = {
    origin: 0,
    asPath: [{ type: 2, asns: Array.from({ length: 2 + (i % 6) }, () => 1 + Math.floor(rand() * 64000)) }],
    nextHop: Address.v4(0xc0000200 + (i % 250)),
    ...(i % 3 === 0 ? { communities: [0xfde80000 + i, 0xfde80001 + i] } : {}),
  };
  const w = new Writer();
  encodeAttributes(w, attrs, ctx);
  return { attrs, block: w.finish(), prefixes: [] };
});
for (let i = 0; i < PREFIXES; i++) {
  const len = rand() < 0.6 ? 24 : 16 + Math.floor(rand() * 9);
  sets[i % SETS].prefixes.push(Prefix.containing(Address.v4((rand() * 4294967296) >>> 0), len));
}

const prefixBytes = (p: Prefix) => 1 + ((p.length + 7) >>> 3);
const MARKER = new Uint8Array(16).fill(0xff);

/** With the codec's Writer: reserve, write, patch. */
function packWithWriter(block: Uint8Array, prefixes: readonly Prefix[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let i = 0;
  while (i < prefixes.length) {
    const w = new Writer(MAX);
    w.bytes(MARKER);
    const len = w.reserve(2);
    w.u8(2).u16(0);
    const attrLen = w.reserve(2);
    w.bytes(block);
    w.patch(attrLen, 2);
    while (i < prefixes.length && w.pos + prefixBytes(prefixes[i]) <= MAX) {
      const p = prefixes[i++];
      w.u8(p.length);
      const n = (p.length + 7) >>> 3;
      for (let k = 0; k < n; k++) w.u8(p.w0 >>> (24 - 8 * k));
    }
    w.buf[len] = w.pos >>> 8;
    w.buf[len + 1] = w.pos;
    out.push(w.finish());
  }
  return out;
}

/** The same loop with smart-buffer: placeholders written, then overwritten at their offsets. */
function packWithSmartBuffer(block: Uint8Array, prefixes: readonly Prefix[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  const blockBuf = Buffer.from(block.buffer, block.byteOffset, block.length);
  const marker = Buffer.from(MARKER);
  let i = 0;
  while (i < prefixes.length) {
    const s = SmartBuffer.fromSize(MAX);
    s.writeBuffer(marker);
    s.writeUInt16BE(0);
    s.writeUInt8(2);
    s.writeUInt16BE(0);
    s.writeUInt16BE(block.length);
    s.writeBuffer(blockBuf);
    while (i < prefixes.length && s.length + prefixBytes(prefixes[i]) <= MAX) {
      const p = prefixes[i++];
      s.writeUInt8(p.length);
      const n = (p.length + 7) >>> 3;
      for (let k = 0; k < n; k++) s.writeUInt8((p.w0 >>> (24 - 8 * k)) & 0xff);
    }
    s.writeUInt16BE(s.length, 16);
    out.push(Uint8Array.from(s.toBuffer()));
  }
  return out;
}

const same = (a: Uint8Array[], b: Uint8Array[]) => a.length === b.length && a.every((m, k) => Buffer.compare(m, b[k]) === 0);
for (const s of sets.slice(0, 20)) {
  const ref = packUpdates(s.attrs, s.prefixes, ctx);
  if (!same(packWithWriter(s.block, s.prefixes), ref) || !same(packWithSmartBuffer(s.block, s.prefixes), ref))
    throw new Error('the packing loops disagree with packUpdates');
}

type Loop = (s: (typeof sets)[number]) => Uint8Array[];
const loops: [string, Loop][] = [
  ['codec Writer (src/wire/buffer.ts)', (s) => packWithWriter(s.block, s.prefixes)],
  ['smart-buffer 4.2', (s) => packWithSmartBuffer(s.block, s.prefixes)],
  ['packUpdates (the product, one typed array per call)', (s) => packUpdates(s.attrs, s.prefixes, ctx)],
];
const times = new Map<string, number[]>(loops.map(([n]) => [n, []]));
let messages = 0;
for (let r = 0; r <= RUNS; r++) {
  // interleaved, so load on a shared machine falls on all three alike; run 0 warms up
  for (const [name, loop] of loops) {
    const t0 = performance.now();
    let m = 0;
    for (const s of sets) m += loop(s).length;
    const dt = performance.now() - t0;
    if (r > 0) times.get(name)!.push(dt);
    messages = m;
  }
}
const base = median(times.get(loops[0][0])!);
emit({
  suite: 'writers.ts',
  title: `UPDATE packing: codec Writer vs smart-buffer (${PREFIXES.toLocaleString('en')} IPv4 prefixes, ${SETS} attribute sets, ${messages.toLocaleString('en')} messages)`,
  columns: ['writer', 'median ms', 'ns / prefix', 'vs codec Writer'],
  rows: loops.map(([name]) => {
    const m = median(times.get(name)!);
    return [name, m.toFixed(1), ((m * 1e6) / PREFIXES).toFixed(0), `${(m / base).toFixed(2)}×`];
  }),
  notes: [`median of ${RUNS} interleaved runs after a warm-up; outputs checked equal to packUpdates first`],
});
