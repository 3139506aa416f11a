import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT } from '../../src/wire/context.js';
import { decodeMessage, encodeMessage } from '../../src/wire/message.js';
import { decodeRouteRefresh, encodeRouteRefreshBody } from '../../src/wire/route-refresh.js';
import type { RouteRefreshMessage } from '../../src/wire/types.js';
import { hex, routeRefreshArb } from './arbitraries-messages.js';
import { bgpError } from './bgp-error.js';

describe('ROUTE-REFRESH', () => {
  it('matches holo-bgp ROUTE_REFRESH1 (holo-bgp/tests/packet/route_refresh.rs): IPv4 unicast', () => {
    const wire = hex('ffffffffffffffffffffffffffffffff 0017 05 0001 00 01');
    const msg: RouteRefreshMessage = { type: 'routeRefresh', afi: 1, safi: 1, subtype: 0 };
    expect(decodeMessage(5, wire.subarray(19), DEFAULT_CONTEXT)).toStrictEqual(msg);
    expect(encodeMessage(msg, DEFAULT_CONTEXT)).toEqual(wire);
  });

  it('reads the RFC 7313 subtypes: BoRR and EoRR for IPv6 unicast', () => {
    expect(decodeRouteRefresh(hex('0002 01 01'))).toEqual({ type: 'routeRefresh', afi: 2, safi: 1, subtype: 1 });
    expect(decodeRouteRefresh(hex('0002 02 01'))).toEqual({ type: 'routeRefresh', afi: 2, safi: 1, subtype: 2 });
  });

  it('passes unassigned subtypes up for the session to ignore (RFC 7313 §5)', () => {
    expect(decodeRouteRefresh(hex('0001 07 01')).subtype).toBe(7);
  });

  it('gives a BoRR/EoRR of the wrong length 7/1 with the whole message as data (RFC 7313 §5)', () => {
    for (const body of [hex('0001 01 01 00'), hex('0001 02 01 0000 00'), hex('0001 01')]) {
      const e = bgpError(() => decodeRouteRefresh(body));
      expect([e.code, e.subcode]).toEqual([7, 1]);
      expect(e.data.length).toBe(19 + body.length);
      expect((e.data[16] << 8) | e.data[17]).toBe(19 + body.length);
      expect(e.data[18]).toBe(5);
      expect(e.data.subarray(19)).toEqual(body);
    }
  });

  it('gives a plain request (or no subtype byte at all) of the wrong length the header error 1/2', () => {
    for (const body of [hex('0001 00 01 00'), hex('0001'), new Uint8Array(0), hex('0001 ff 01 00')]) {
      const e = bgpError(() => decodeRouteRefresh(body));
      expect([e.code, e.subcode]).toEqual([1, 2]);
      expect(e.data).toEqual(Uint8Array.of(0, 19 + body.length));
    }
  });

  it('round-trips any AFI, subtype and SAFI', () => {
    fc.assert(
      fc.property(routeRefreshArb, (m) => {
        const body = encodeRouteRefreshBody(m);
        expect(body.length).toBe(4);
        expect(decodeRouteRefresh(body)).toStrictEqual(m);
      }),
    );
  });

  it('refuses fields that do not fit', () => {
    expect(() => encodeRouteRefreshBody({ type: 'routeRefresh', afi: 1, safi: 256, subtype: 0 })).toThrow(/SAFI/);
    expect(() => encodeRouteRefreshBody({ type: 'routeRefresh', afi: 1, safi: 1, subtype: -1 })).toThrow(/subtype/);
  });
});
