import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Framer } from '../../src/wire/framer.js';
import { MessageType } from '../../src/wire/constants.js';

// Real byte streams captured from BIRD, FRR, GoBGP and ExaBGP (see test/fixtures/README.md).
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const fixtures = readdirSync(ROOT)
  .filter((d) => statSync(join(ROOT, d)).isDirectory() && d !== 'capture')
  .flatMap((d) =>
    readdirSync(join(ROOT, d))
      .filter((f) => f.endsWith('.bin'))
      .map((f) => `${d}/${f}`),
  )
  .sort();

interface Frame {
  type: number;
  body: Uint8Array;
}

function frameAll(bytes: Uint8Array, chunkSizes: (i: number) => number): Frame[] {
  const framer = new Framer(65535);
  const out: Frame[] = [];
  let off = 0;
  for (let i = 0; off < bytes.length; i++) {
    const n = Math.max(1, chunkSizes(i));
    framer.push(bytes.subarray(off, off + n), (type, body) => out.push({ type, body: body.slice() }));
    off += n;
  }
  expect(framer.buffered).toBe(0);
  return out;
}

describe('captured daemon fixtures', () => {
  it('has a capture per daemon and session', () => {
    const daemons = new Set(fixtures.map((f) => f.split('/')[0]));
    expect([...daemons].sort()).toEqual(['bird', 'exabgp', 'frr', 'gobgp']);
    expect(fixtures).toContain('frr/ebgp-as2.bin');
    expect(fixtures.length).toBeGreaterThanOrEqual(9);
  });

  for (const name of fixtures) {
    describe(name, () => {
      const bytes = new Uint8Array(readFileSync(join(ROOT, name)));

      it('frames into OPEN, KEEPALIVE, UPDATEs and a closing Cease NOTIFICATION', () => {
        const frames = frameAll(bytes, () => bytes.length);
        const types = frames.map((f) => f.type);
        expect(types[0]).toBe(MessageType.OPEN);
        expect(types[1]).toBe(MessageType.KEEPALIVE);
        expect(types[types.length - 1]).toBe(MessageType.NOTIFICATION);
        // in between only KEEPALIVEs and UPDATEs, and several UPDATEs
        const middle = types.slice(2, -1);
        expect(middle.every((t) => t === MessageType.UPDATE || t === MessageType.KEEPALIVE)).toBe(true);
        expect(middle.filter((t) => t === MessageType.UPDATE).length).toBeGreaterThanOrEqual(3);
        const total = frames.reduce((n, f) => n + 19 + f.body.length, 0);
        expect(total).toBe(bytes.length);
      });

      it('ends with Cease / Administrative Shutdown carrying an RFC 9003 message', () => {
        const frames = frameAll(bytes, () => bytes.length);
        const n = frames[frames.length - 1].body;
        expect([n[0], n[1]]).toEqual([6, 2]);
        const len = n[2];
        expect(len).toBeGreaterThan(0);
        expect(n.length).toBe(3 + len);
        const text = new TextDecoder('utf-8', { fatal: true }).decode(n.subarray(3));
        expect(text).toMatch(/shutdown/i);
      });

      it('frames identically when the stream arrives in small uneven chunks', () => {
        const whole = frameAll(bytes, () => bytes.length);
        const pieces = frameAll(bytes, (i) => ((i * 7919) % 97) + 1);
        expect(pieces.map((f) => f.type)).toEqual(whole.map((f) => f.type));
        expect(pieces.map((f) => Buffer.from(f.body).toString('hex'))).toEqual(whole.map((f) => Buffer.from(f.body).toString('hex')));
      });
    });
  }
});
