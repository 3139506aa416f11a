import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CeaseSubcode, ErrorCode, FsmSubcode, HeaderSubcode, OpenSubcode, RouteRefreshSubcode, UpdateSubcode } from '../../src/wire/constants.js';
import { DEFAULT_CONTEXT } from '../../src/wire/context.js';
import { BgpError } from '../../src/wire/errors.js';
import { decodeMessage, encodeMessage } from '../../src/wire/message.js';
import { decodeNotification, describeNotification, encodeNotificationBody, shutdownCommunication, shutdownNotification } from '../../src/wire/notification.js';
import type { NotificationMessage } from '../../src/wire/types.js';
import { hex, notificationArb } from './arbitraries-messages.js';

const utf8 = new TextEncoder();

describe('NOTIFICATION codec', () => {
  it('matches holo-bgp NOTIFICATION1 (holo-bgp/tests/packet/notification.rs): Bad Message Length, data ffff', () => {
    const wire = hex('ffffffffffffffffffffffffffffffff 0017 03 01 02 ffff');
    const msg: NotificationMessage = { type: 'notification', code: 1, subcode: 2, data: Uint8Array.of(0xff, 0xff) };
    expect(decodeMessage(3, wire.subarray(19), DEFAULT_CONTEXT)).toStrictEqual(msg);
    expect(encodeMessage(msg, DEFAULT_CONTEXT)).toEqual(wire);
  });

  it('treats a body under 2 bytes as a header length error with the length field', () => {
    for (const body of [new Uint8Array(0), Uint8Array.of(6)]) {
      let err: unknown;
      try {
        decodeNotification(body);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(BgpError);
      expect([(err as BgpError).code, (err as BgpError).subcode]).toEqual([1, 2]);
      expect((err as BgpError).data).toEqual(Uint8Array.of(0, 19 + body.length));
    }
  });

  it('copies the data out of the receive buffer', () => {
    const body = Uint8Array.of(6, 2, 3, 0x61, 0x62, 0x63);
    const msg = decodeNotification(body);
    body.fill(0);
    expect(msg.data).toEqual(Uint8Array.of(3, 0x61, 0x62, 0x63));
  });

  it('round-trips any code, subcode and data', () => {
    fc.assert(
      fc.property(notificationArb, (m) => {
        expect(decodeNotification(encodeNotificationBody(m))).toStrictEqual(m);
      }),
    );
  });
});

describe('describeNotification', () => {
  it.each([
    [6, 2, 'Cease / Administrative Shutdown'],
    [6, 4, 'Cease / Administrative Reset'],
    [6, 9, 'Cease / Hard Reset'],
    [6, 10, 'Cease / BFD Down'],
    [2, 7, 'OPEN Message Error / Unsupported Capability'],
    [2, 11, 'OPEN Message Error / Role Mismatch'],
    [2, 0, 'OPEN Message Error / Unspecific'],
    [1, 3, 'Message Header Error / Bad Message Type'],
    [3, 11, 'UPDATE Message Error / Malformed AS_PATH'],
    [5, 0, 'Finite State Machine Error / Unspecified Error'],
    [5, 2, 'Finite State Machine Error / Receive Unexpected Message in OpenConfirm State'],
    [7, 1, 'ROUTE-REFRESH Message Error / Invalid Message Length'],
    [4, 0, 'Hold Timer Expired'],
    [4, 3, 'Hold Timer Expired / unknown subcode 3'],
    [6, 77, 'Cease / unknown subcode 77'],
    [42, 1, 'Unknown error code 42 / subcode 1'],
  ])('(%i, %i) is "%s"', (code, subcode, text) => {
    expect(describeNotification(code, subcode)).toBe(text);
  });

  it('has a name for every code and subcode the codec defines', () => {
    const tables: [number, Record<string, number>][] = [
      [ErrorCode.MESSAGE_HEADER, HeaderSubcode],
      [ErrorCode.OPEN_MESSAGE, OpenSubcode],
      [ErrorCode.UPDATE_MESSAGE, UpdateSubcode],
      [ErrorCode.FSM, FsmSubcode],
      [ErrorCode.CEASE, CeaseSubcode],
      [ErrorCode.ROUTE_REFRESH, RouteRefreshSubcode],
    ];
    for (const [code, subs] of tables) {
      for (const sub of Object.values(subs)) {
        const text = describeNotification(code, sub);
        expect(text, `${code}/${sub}`).not.toMatch(/unknown|Unknown/);
        expect(text).toContain(' / ');
      }
    }
    for (const code of Object.values(ErrorCode)) expect(describeNotification(code, 0)).not.toMatch(/Unknown/);
  });
});

describe('RFC 9003 Shutdown Communication', () => {
  it('encodes length byte then UTF-8 for Cease 2 and 4', () => {
    expect(shutdownNotification(2, 'maintenance, back at 14:00')).toEqual({
      type: 'notification',
      code: 6,
      subcode: 2,
      data: Uint8Array.of(26, ...utf8.encode('maintenance, back at 14:00')),
    });
    expect(shutdownNotification(4, '').data).toEqual(Uint8Array.of(0));
    expect(() => shutdownNotification(3 as 2, 'x')).toThrow(/subcode 2 or 4/);
  });

  it('cuts at 255 bytes without splitting a character', () => {
    expect(shutdownNotification(2, 'a'.repeat(300)).data.length).toBe(256);
    const m = shutdownNotification(2, 'a'.repeat(254) + 'é'); // é is 2 bytes and would straddle byte 255
    expect(m.data[0]).toBe(254);
    expect(shutdownCommunication(m)).toBe('a'.repeat(254));
    const emoji = shutdownNotification(4, '🙂'.repeat(70)); // 4 bytes each: 63 fit in 252
    expect(emoji.data[0]).toBe(252);
    expect(shutdownCommunication(emoji)).toBe('🙂'.repeat(63));
  });

  it('keeps any text whole when it fits, and a character-aligned prefix when it does not', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 120 }), fc.constantFrom(2 as const, 4 as const), (text, sub) => {
        const m = shutdownNotification(sub, text);
        expect(m.data.length).toBe(1 + m.data[0]);
        expect(m.data[0]).toBeLessThanOrEqual(255);
        const back = shutdownCommunication(m) ?? '';
        if (utf8.encode(text).length <= 255) expect(back).toBe(text);
        else {
          expect(text.startsWith(back)).toBe(true);
          expect(utf8.encode(back).length).toBeGreaterThan(251);
        }
      }),
    );
  });

  it('decodes tolerantly: bad length, bad UTF-8, other codes give undefined', () => {
    const cease = (subcode: number, data: string): NotificationMessage => ({ type: 'notification', code: 6, subcode, data: hex(data) });
    expect(shutdownCommunication(cease(2, '02 6869'))).toBe('hi');
    expect(shutdownCommunication(cease(4, '02 6869 ffff'))).toBe('hi'); // bytes after the communication are ignored
    expect(shutdownCommunication(cease(2, '05 6869'))).toBeUndefined();
    expect(shutdownCommunication(cease(2, '02 c328'))).toBeUndefined();
    expect(shutdownCommunication(cease(2, '00'))).toBeUndefined();
    expect(shutdownCommunication(cease(2, ''))).toBeUndefined();
    expect(shutdownCommunication(cease(3, '02 6869'))).toBeUndefined();
    expect(shutdownCommunication({ type: 'notification', code: 2, subcode: 2, data: hex('02 6869') })).toBeUndefined();
  });

  it('never throws on arbitrary data', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(2, 4), (data, subcode) => {
        const text = shutdownCommunication({ type: 'notification', code: 6, subcode, data });
        expect(text === undefined || typeof text === 'string').toBe(true);
      }),
    );
  });
});
