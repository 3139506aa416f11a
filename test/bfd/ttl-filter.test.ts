import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFilter, SKF_NET_OFF, ttlFilter, type BpfInstruction } from '../../src/bfd/ttl-filter.js';

/**
 * A reference interpreter for the few classic BPF instructions a filter may
 * use here (ld b abs, jeq k, ret k), over a datagram whose network header is
 * `net` and whose transport data (the UDP header on) is `data`, as the
 * kernel runs a socket filter. Anything else is an error, so that a program
 * using more than this fails the test instead of passing by accident.
 */
function run(program: readonly BpfInstruction[], net: Uint8Array, data: Uint8Array): number {
  let a = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc];
    switch (code) {
      case 0x30: {
        // BPF_LD | BPF_B | BPF_ABS
        const off = k | 0;
        if (off >= SKF_NET_OFF && off < 0) {
          const i = off - SKF_NET_OFF;
          if (i >= net.length) return 0; // out of the packet: the kernel drops
          a = net[i];
        } else {
          if (off < 0 || off >= data.length) return 0;
          a = data[off];
        }
        break;
      }
      case 0x15: // BPF_JMP | BPF_JEQ | BPF_K
        pc += a === k ? jt : jf;
        break;
      case 0x06: // BPF_RET | BPF_K
        return k >>> 0;
      default:
        throw new Error(`instruction 0x${code.toString(16)} at ${pc} not modelled`);
    }
  }
  throw new Error('fell off the end of the program');
}

const ipv4Header = (ttl: number): Uint8Array => Uint8Array.from([0x45, 0, 0, 52, 0x12, 0x34, 0x40, 0, ttl, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2]);
const ipv6Header = (hops: number): Uint8Array => {
  const h = new Uint8Array(40);
  h.set([0x60, 0, 0, 0, 0, 32, 17, hops]);
  return h;
};
const udpAndBfd = new Uint8Array(8 + 24);

describe('the BFD TTL socket filter (RFC 5881 §5)', () => {
  it('is byte for byte the program of the comment, in host order either way', () => {
    // ldb [SKF_NET_OFF + 8]; jeq #255, 0, 1; ret #-1; ret #0
    expect([...encodeFilter(ttlFilter(4), true)]).toEqual([
      0x30, 0x00, 0x00, 0x00, 0x08, 0x00, 0xf0, 0xff, 0x15, 0x00, 0x00, 0x01, 0xff, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x06,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]);
    expect([...encodeFilter(ttlFilter(6), true)].slice(0, 8)).toEqual([0x30, 0x00, 0x00, 0x00, 0x07, 0x00, 0xf0, 0xff]);
    expect([...encodeFilter(ttlFilter(6), false)]).toEqual([
      0x00, 0x30, 0x00, 0x00, 0xff, 0xf0, 0x00, 0x07, 0x00, 0x15, 0x00, 0x01, 0x00, 0x00, 0x00, 0xff, 0x00, 0x06, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00,
      0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]);
  });

  it('keeps a datagram exactly when its TTL / Hop Limit is 255', () => {
    for (let ttl = 0; ttl <= 255; ttl++) {
      expect(run(ttlFilter(4), ipv4Header(ttl), udpAndBfd) !== 0).toBe(ttl === 255);
      expect(run(ttlFilter(6), ipv6Header(ttl), udpAndBfd) !== 0).toBe(ttl === 255);
    }
    expect(run(ttlFilter(4), ipv4Header(255), udpAndBfd)).toBe(0xffffffff);
  });

  it('looks at the TTL byte and at nothing else of the headers', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 40, maxLength: 40 }), fc.uint8Array({ minLength: 8, maxLength: 64 }), fc.boolean(), (hdr, data, v6) => {
        const fam = v6 ? 6 : 4;
        const at = v6 ? 7 : 8;
        const kept = run(ttlFilter(fam), hdr, data) !== 0;
        expect(kept).toBe(hdr[at] === 255);
      }),
    );
  });

  it('refuses what is not a filter', () => {
    expect(() => ttlFilter(4, 0)).toThrow(/TTL must be 1\.\.255, got 0/);
    expect(() => encodeFilter([])).toThrow(/1\.\.4096 instructions, got 0/);
  });
});
