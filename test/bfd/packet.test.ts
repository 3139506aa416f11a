import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePacket, describeDiag, encodePacket, STATE_NAMES, type BfdPacket } from '../../src/bfd/packet.js';
import { bfdPacket } from './sim.js';

const base: BfdPacket = bfdPacket({ myDiscr: 7, requiredMinRx: 300_000 });

const arbPacket = fc.record({
  diag: fc.integer({ min: 0, max: 31 }),
  state: fc.constantFrom(...STATE_NAMES),
  poll: fc.boolean(),
  final: fc.boolean(),
  cpi: fc.boolean(),
  auth: fc.constant(false),
  demand: fc.boolean(),
  multipoint: fc.constant(false),
  detectMult: fc.integer({ min: 1, max: 255 }),
  myDiscr: fc.integer({ min: 1, max: 0xffffffff }),
  yourDiscr: fc.integer({ min: 1, max: 0xffffffff }),
  desiredMinTx: fc.integer({ min: 0, max: 0xffffffff }),
  requiredMinRx: fc.integer({ min: 0, max: 0xffffffff }),
  requiredMinEchoRx: fc.integer({ min: 0, max: 0xffffffff }),
});

describe('BFD packet codec', () => {
  it('encodes the RFC 5880 §4.1 layout byte for byte', () => {
    const b = encodePacket({ ...base, diag: 3, state: 'Up', poll: true, yourDiscr: 0x01020304 });
    expect([...b]).toEqual([0x23, 0xe0, 3, 24, 0, 0, 0, 7, 1, 2, 3, 4, 0x00, 0x0f, 0x42, 0x40, 0x00, 0x04, 0x93, 0xe0, 0, 0, 0, 0]);
  });

  it('round-trips any valid packet', () => {
    fc.assert(
      fc.property(arbPacket, (p) => {
        const d = decodePacket(encodePacket(p));
        expect(d).toEqual({ ok: true, packet: p });
      }),
    );
  });

  it('never throws on arbitrary bytes, and says why it refuses', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const d = decodePacket(bytes);
        if (!d.ok) expect(d.reason.length).toBeGreaterThan(0);
        else expect(d.packet.detectMult).toBeGreaterThan(0);
      }),
    );
  });

  const mutate = (f: (b: Uint8Array) => void, len = 24): Uint8Array => {
    const b = new Uint8Array(len);
    b.set(encodePacket(base));
    f(b);
    return b;
  };

  it.each([
    ['short', new Uint8Array(23), /shorter than the 24-byte/],
    [
      'version 0',
      mutate((b) => {
        b[0] = 0;
      }),
      /version 0/,
    ],
    [
      'version 2',
      mutate((b) => {
        b[0] = 2 << 5;
      }),
      /version 2/,
    ],
    [
      'length below 24',
      mutate((b) => {
        b[3] = 20;
      }),
      /Length field 20/,
    ],
    [
      'length beyond the datagram',
      mutate((b) => {
        b[3] = 40;
      }),
      /exceeds the 24-byte datagram/,
    ],
    [
      'A bit with length 24',
      mutate((b) => {
        b[1] |= 0x04;
      }),
      /minimum \(26 with the A bit\)/,
    ],
    [
      'Detect Mult zero',
      mutate((b) => {
        b[2] = 0;
      }),
      /Detect Mult is zero/,
    ],
    [
      'M bit',
      mutate((b) => {
        b[1] |= 0x01;
      }),
      /Multipoint/,
    ],
    [
      'My Discriminator zero',
      mutate((b) => {
        b[7] = 0;
      }),
      /My Discriminator is zero/,
    ],
    [
      'Your Discriminator zero in Up',
      mutate((b) => {
        b[1] = 3 << 6;
      }),
      /Your Discriminator is zero in state Up/,
    ],
    [
      'Your Discriminator zero in Init',
      mutate((b) => {
        b[1] = 2 << 6;
      }),
      /in state Init/,
    ],
  ])('drops a packet with %s', (_name, bytes, reason) => {
    const d = decodePacket(bytes);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.reason).toMatch(reason);
  });

  it('accepts trailing bytes beyond Length and a zero Your Discriminator in Down/AdminDown', () => {
    expect(decodePacket(mutate(() => {}, 30)).ok).toBe(true);
    expect(
      decodePacket(
        mutate((b) => {
          b[1] = 0;
        }),
      ).ok,
    ).toBe(true);
  });

  it('names diagnostics', () => {
    expect(describeDiag(1)).toBe('Control Detection Time Expired');
    expect(describeDiag(3)).toBe('Neighbor Signaled Session Down');
    expect(describeDiag(20)).toBe('Reserved (20)');
  });
});
