import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT } from '../../src/wire/context.js';
import { BgpError } from '../../src/wire/errors.js';
import { decodeMessage, encodeMessage } from '../../src/wire/message.js';
import type { Message } from '../../src/wire/types.js';
import { CONTEXTS, fitsPlainParams, hex, nonUpdateMessageArb, type NonUpdateMessage } from './arbitraries-messages.js';
import { expectBgpError } from './bgp-error.js';

const EXTENDED = { ...DEFAULT_CONTEXT, extendedMessage: true };

/** What decoding must give back: the message itself, except that an OPEN too big for one-byte lengths comes back flagged extended. */
function expected(m: NonUpdateMessage): Message {
  if (m.type === 'open' && !m.extendedParams && !fitsPlainParams(m.params)) return { ...m, extendedParams: true };
  return m;
}

describe('encodeMessage / decodeMessage round trip', () => {
  for (const [name, ctx] of CONTEXTS) {
    it(`gives back any OPEN, NOTIFICATION, KEEPALIVE or ROUTE-REFRESH (${name} context)`, () => {
      fc.assert(
        fc.property(nonUpdateMessageArb, (m) => {
          const wire = encodeMessage(m, ctx);
          expect(wire.subarray(0, 16).every((b) => b === 0xff)).toBe(true);
          expect((wire[16] << 8) | wire[17]).toBe(wire.length);
          expect(decodeMessage(wire[18], wire.subarray(19), ctx)).toStrictEqual(expected(m));
        }),
        { numRuns: 300 },
      );
    });
  }

  it('writes the standard KEEPALIVE: 16 × ff, length 19, type 4 (RFC 4271 §4.4)', () => {
    expect(encodeMessage({ type: 'keepalive' }, DEFAULT_CONTEXT)).toEqual(hex('ffffffffffffffffffffffffffffffff 0013 04'));
  });
});

describe('decodeMessage on untrusted bytes', () => {
  const types = fc.oneof(fc.constantFrom(1, 2, 3, 4, 5), fc.integer({ min: 0, max: 255 }));

  it('throws nothing but BgpError, for random bodies of every type', () => {
    fc.assert(
      fc.property(types, fc.uint8Array({ maxLength: 300 }), fc.constantFrom(...CONTEXTS.map(([, c]) => c)), (type, body, ctx) => {
        try {
          const m = decodeMessage(type, body, ctx);
          expect(['open', 'update', 'notification', 'keepalive', 'routeRefresh'][type - 1]).toBe(m.type);
        } catch (err) {
          expect(err).toBeInstanceOf(BgpError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('throws nothing but BgpError for OPENs with a valid fixed part and random parameters', () => {
    const head = hex('04 fde8 00b4 c0000201');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), fc.option(fc.integer({ min: 0, max: 255 })), (rest, optLen) => {
        const body = new Uint8Array(head.length + 1 + rest.length);
        body.set(head, 0);
        body[head.length] = optLen ?? rest.length;
        body.set(rest, head.length + 1);
        try {
          decodeMessage(1, body, LEGACY_CONTEXT);
        } catch (err) {
          expect(err).toBeInstanceOf(BgpError);
          expect((err as BgpError).code === 2 || (err as BgpError).code === 1).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('re-encodes whatever it accepts into bytes that decode to the same message', () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 3, 4, 5), fc.uint8Array({ maxLength: 64 }), (type, body) => {
        let m: Message;
        try {
          m = decodeMessage(type, body, DEFAULT_CONTEXT);
        } catch (err) {
          expect(err).toBeInstanceOf(BgpError);
          return;
        }
        const wire = encodeMessage(m, DEFAULT_CONTEXT);
        expect(decodeMessage(wire[18], wire.subarray(19), DEFAULT_CONTEXT)).toStrictEqual(m);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('length rules per type', () => {
  it('OPEN needs a body of at least 10 bytes (29 in all): Bad Message Length with the length field', () => {
    expectBgpError(() => decodeMessage(1, new Uint8Array(9), DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0, 28));
  });

  it('UPDATE needs a body of at least 4 bytes (23 in all)', () => {
    expectBgpError(() => decodeMessage(2, new Uint8Array(3), DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0, 22));
  });

  it('NOTIFICATION needs code and subcode (21 in all)', () => {
    expectBgpError(() => decodeMessage(3, Uint8Array.of(6), DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0, 20));
    expectBgpError(() => decodeMessage(3, new Uint8Array(0), DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0, 19));
  });

  it('KEEPALIVE must have an empty body', () => {
    expect(decodeMessage(4, new Uint8Array(0), DEFAULT_CONTEXT)).toEqual({ type: 'keepalive' });
    expectBgpError(() => decodeMessage(4, Uint8Array.of(0), DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0, 20));
  });

  it('ROUTE-REFRESH must be exactly 4 bytes', () => {
    expectBgpError(() => decodeMessage(5, new Uint8Array(5), DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0, 24));
  });

  it('unknown types are Bad Message Type with the type as data', () => {
    expectBgpError(() => decodeMessage(6, new Uint8Array(0), DEFAULT_CONTEXT), 1, 3, Uint8Array.of(6));
    expectBgpError(() => decodeMessage(0, new Uint8Array(0), DEFAULT_CONTEXT), 1, 3, Uint8Array.of(0));
  });

  it('more than 4096 bytes is Bad Message Length unless RFC 8654 was negotiated, and never for OPEN', () => {
    const notification = new Uint8Array(4096 - 19 + 1);
    notification[0] = 6;
    expectBgpError(() => decodeMessage(3, notification, DEFAULT_CONTEXT), 1, 2, Uint8Array.of(0x10, 0x01));
    expect(decodeMessage(3, notification, EXTENDED)).toMatchObject({ type: 'notification', code: 6 });
    expectBgpError(() => decodeMessage(1, new Uint8Array(5000), EXTENDED), 1, 2);
  });
});

describe('encodeMessage limits', () => {
  it('cuts NOTIFICATION data so the message fits the context', () => {
    const data = new Uint8Array(5000).fill(7);
    const small = encodeMessage({ type: 'notification', code: 3, subcode: 1, data }, DEFAULT_CONTEXT);
    expect(small.length).toBe(4096);
    expect((small[16] << 8) | small[17]).toBe(4096);
    expect(small.subarray(19, 21)).toEqual(Uint8Array.of(3, 1));
    expect(encodeMessage({ type: 'notification', code: 3, subcode: 1, data }, EXTENDED).length).toBe(19 + 2 + 5000);
  });

  it('refuses an OPEN over 4096 bytes even with extended messages', () => {
    const caps = Array.from({ length: 20 }, () => ({ kind: 'unknown' as const, code: 200, value: new Uint8Array(250) }));
    const open = { type: 'open' as const, version: 4, myAs: 1, holdTime: 90, bgpId: '1.1.1.1', params: [{ type: 2 as const, capabilities: caps }] };
    expect(() => encodeMessage(open, EXTENDED)).toThrow(RangeError);
    expect(() => encodeMessage(open, EXTENDED)).toThrow(/more than the 4096/);
  });

  it('names the bad field', () => {
    expect(() => encodeMessage({ type: 'routeRefresh', afi: 70000, safi: 1, subtype: 0 }, DEFAULT_CONTEXT)).toThrow(/AFI/);
    expect(() => encodeMessage({ type: 'notification', code: 256, subcode: 0, data: new Uint8Array(0) }, DEFAULT_CONTEXT)).toThrow(/error code/);
  });
});
