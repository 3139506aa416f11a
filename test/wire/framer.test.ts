import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT } from '../../src/wire/context.js';
import { BgpError } from '../../src/wire/errors.js';
import { Framer } from '../../src/wire/framer.js';
import { frameMessage } from '../../src/wire/header.js';
import { encodeMessage } from '../../src/wire/message.js';
import { hex, nonUpdateMessageArb } from './arbitraries-messages.js';
import { expectBgpError } from './bgp-error.js';

interface Frame {
  type: number;
  body: number[];
}

/** Pushes `chunks` and collects frames (copied, so later pushes cannot alter them). */
function run(chunks: readonly Uint8Array[], framer = new Framer()): Frame[] {
  const frames: Frame[] = [];
  for (const c of chunks) framer.push(c, (type, body) => frames.push({ type, body: [...body] }));
  return frames;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Splits `bytes` at the given cut points (sorted, deduplicated). */
function split(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  return out;
}

/** A message header error (NOTIFICATION 1/subcode) carrying `data`. */
const headerError = (fn: () => unknown, subcode: number, data: Uint8Array): BgpError => expectBgpError(fn, 1, subcode, data);

const KEEPALIVE = encodeMessage({ type: 'keepalive' }, DEFAULT_CONTEXT);
const SAMPLE = [
  hex('ffffffffffffffffffffffffffffffff 0025 01 04 0001 00b4 01010101 08 02 06 01 04 0001 00 01'), // OPEN, MP IPv4
  KEEPALIVE,
  frameMessage(2, hex('0000 0000')), // empty UPDATE (End-of-RIB for IPv4)
  hex('ffffffffffffffffffffffffffffffff 0017 05 0001 00 01'), // ROUTE-REFRESH
  frameMessage(3, hex('06 02 03 627965')), // Cease / shutdown "bye"
  KEEPALIVE,
];
const STREAM = concat(SAMPLE);
const EXPECTED = SAMPLE.map((m) => ({ type: m[18], body: [...m.subarray(19)] }));

describe('Framer reassembly', () => {
  it('frames a whole stream pushed at once', () => {
    expect(run([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same frames for a split at every byte boundary', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      expect(run([STREAM.subarray(0, i), STREAM.subarray(i)]), `split at ${i}`).toEqual(EXPECTED);
    }
  });

  it('gives the same frames when every pair of cut points is used', () => {
    for (let i = 0; i <= STREAM.length; i += 3) {
      for (let j = i; j <= STREAM.length; j += 5) {
        expect(run(split(STREAM, [i, j]))).toEqual(EXPECTED);
      }
    }
  });

  it('gives the same frames fed one byte at a time, holding back only what it must', () => {
    const framer = new Framer();
    const frames: Frame[] = [];
    let done = 0;
    for (let i = 0; i < STREAM.length; i++) {
      framer.push(STREAM.subarray(i, i + 1), (type, body) => frames.push({ type, body: [...body] }));
      const consumed = SAMPLE.slice(0, frames.length).reduce((n, m) => n + m.length, 0);
      expect(framer.buffered).toBe(i + 1 - consumed);
      done = frames.length;
    }
    expect(done).toBe(SAMPLE.length);
    expect(frames).toEqual(EXPECTED);
    expect(framer.buffered).toBe(0);
  });

  it('gives the same frames for any messages under any chunking', () => {
    fc.assert(
      fc.property(fc.array(nonUpdateMessageArb, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 12 }), (msgs, cuts) => {
        const wires = msgs.map((m) => encodeMessage(m, DEFAULT_CONTEXT));
        const stream = concat(wires);
        expect(run(split(stream, cuts))).toEqual(wires.map((w) => ({ type: w[18], body: [...w.subarray(19)] })));
      }),
      { numRuns: 300 },
    );
  });

  it('stops after a frame whose handler returns false and takes the rest when pushed again, under any chunking and any stops', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }), (cuts, stops) => {
        const framer = new Framer();
        const frames: Frame[] = [];
        let n = 0;
        const onFrame = (type: number, body: Uint8Array) => {
          frames.push({ type, body: [...body] });
          return !stops[n++ % stops.length];
        };
        let pushes = 0;
        for (let chunk of split(STREAM, cuts)) {
          for (;;) {
            const used = framer.push(chunk, onFrame);
            pushes++;
            expect(used).toBeGreaterThanOrEqual(0);
            expect(used).toBeLessThanOrEqual(chunk.length);
            if (used === chunk.length) break;
            // It stopped right after a frame whose handler said so, with bytes left.
            expect(stops[(n - 1) % stops.length]).toBe(true);
            chunk = chunk.subarray(used);
          }
        }
        expect(frames).toEqual(EXPECTED);
        expect(framer.buffered).toBe(0);
        expect(pushes).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('a handler that always says stop gets one frame per push', () => {
    const framer = new Framer();
    let frames = 0;
    let rest: Uint8Array = STREAM;
    let pushes = 0;
    while (rest.length > 0) {
      rest = rest.subarray(
        framer.push(rest, () => {
          frames++;
          return false;
        }),
      );
      pushes++;
    }
    expect(frames).toBe(SAMPLE.length);
    expect(pushes).toBe(SAMPLE.length);
  });

  it('hands out views into the chunk for whole frames', () => {
    const views: Uint8Array[] = [];
    new Framer().push(STREAM, (_t, body) => views.push(body));
    expect(views[0].buffer).toBe(STREAM.buffer);
  });

  it('reassembles a 65535-byte message fed byte by byte', () => {
    const body = new Uint8Array(65535 - 19).map((_, i) => i & 0xff);
    const wire = frameMessage(2, body);
    const framer = new Framer(65535);
    let got: Uint8Array | undefined;
    for (let i = 0; i < wire.length; i++) framer.push(wire.subarray(i, i + 1), (_t, b) => (got = b.slice()));
    expect(got).toEqual(body);
    expect(framer.buffered).toBe(0);
  });
});

describe('Framer header checks (RFC 4271 §6.1)', () => {
  it('rejects a marker that is not all ones with 1/1', () => {
    const bad = KEEPALIVE.slice();
    bad[7] = 0xfe;
    headerError(() => run([bad]), 1, new Uint8Array(0));
  });

  it.each([
    [0, 'zero'],
    [18, 'below the header'],
    [4097, 'above 4096'],
    [65535, 'far above 4096'],
  ])('rejects length %i (%s) with 1/2 and the length field', (length) => {
    const h = hex('ffffffffffffffffffffffffffffffff 0000 02');
    h[16] = length >>> 8;
    h[17] = length & 0xff;
    headerError(() => run([h]), 2, Uint8Array.of(length >>> 8, length & 0xff));
  });

  it.each([
    [1, 28],
    [2, 22],
    [3, 20],
    [4, 20],
    [4, 23],
    [5, 22],
  ])('rejects type %i with length %i with 1/2 and the length field', (type, length) => {
    const h = frameMessage(type, new Uint8Array(Math.max(0, length - 19)));
    headerError(() => run([h]), 2, Uint8Array.of(0, length));
  });

  it('reports a length outside 19..max before looking at the type', () => {
    const h = hex('ffffffffffffffffffffffffffffffff 0005 09');
    headerError(() => run([h]), 2, Uint8Array.of(0, 5));
  });

  it.each([0, 6, 7, 128, 255])('rejects message type %i with 1/3 and the type', (type) => {
    headerError(() => run([frameMessage(type, new Uint8Array(4))]), 3, Uint8Array.of(type));
  });

  it('accepts up to 65535 once extended messages are negotiated, but never for OPEN or KEEPALIVE (RFC 8654)', () => {
    const update = frameMessage(2, new Uint8Array(5000));
    headerError(() => run([update]), 2, Uint8Array.of(update.length >>> 8, update.length & 0xff));
    expect(run([update], new Framer(65535))).toHaveLength(1);
    const framer = new Framer();
    framer.maxSize = 65535;
    expect(run([frameMessage(3, new Uint8Array(5000))], framer)).toHaveLength(1);
    const open = frameMessage(1, new Uint8Array(5000));
    headerError(() => run([open], new Framer(65535)), 2, Uint8Array.of(open.length >>> 8, open.length & 0xff));
    headerError(() => run([frameMessage(4, new Uint8Array(1))], new Framer(65535)), 2, Uint8Array.of(0, 20));
  });

  it('raises a header fault as soon as the header is complete, before the body arrives', () => {
    const h = frameMessage(9, new Uint8Array(100));
    const framer = new Framer();
    framer.push(h.subarray(0, 10), () => undefined);
    headerError(() => framer.push(h.subarray(10, 19), () => undefined), 3, Uint8Array.of(9));
  });

  it('checks frames in order: the good ones before a bad one are delivered', () => {
    const bad = frameMessage(0, new Uint8Array(0));
    const frames: number[] = [];
    expect(() => new Framer().push(concat([KEEPALIVE, KEEPALIVE, bad]), (t) => frames.push(t))).toThrow(BgpError);
    expect(frames).toEqual([4, 4]);
  });

  it('throws nothing but BgpError for random streams, and frames only what the header allows', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 6 }), fc.boolean(), (chunks, prefix) => {
        // Half the time start with a real marker so the length and type checks are reached.
        const stream = prefix ? [hex('ffffffffffffffffffffffffffffffff'), ...chunks] : chunks;
        try {
          const frames = run(stream);
          for (const f of frames) expect([1, 2, 3, 4, 5]).toContain(f.type);
        } catch (err) {
          expect(err).toBeInstanceOf(BgpError);
          expect((err as BgpError).code).toBe(1);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
