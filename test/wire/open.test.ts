import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT } from '../../src/wire/context.js';
import { decodeMessage, encodeMessage } from '../../src/wire/message.js';
import { buildOpen, capabilitiesOf, decodeOpen, encodeOpenBody, openAsn } from '../../src/wire/open.js';
import type { Capability, OpenMessage } from '../../src/wire/types.js';
import { capabilityArb, fitsPlainParams, hex, openArb } from './arbitraries-messages.js';
import { bgpError } from './bgp-error.js';

/** An OPEN body: version 4, AS 65000, hold 180, id 192.0.2.1, then `rest` (Opt Parm Len onwards). */
function body(rest: string): Uint8Array {
  return hex(`04 fde8 00b4 c0000201 ${rest}`);
}

describe('OPEN known bytes', () => {
  // holo-bgp's OPEN3 test vector (holo-bgp/tests/packet/open.rs): AS 1, hold 180,
  // id 1.1.1.1, five parameters of one capability each — MP IPv4/unicast,
  // MP IPv6/unicast, 4-octet AS 65550, route refresh, enhanced route refresh.
  const OPEN3 = hex(`
    ffffffffffffffffffffffffffffffff 003d 01   # marker, length 61, OPEN
    04 0001 00b4 01010101 20                   # version 4, AS 1, hold 180, 1.1.1.1, 32 bytes of parameters
    02 06 01 04 0001 00 01                     # MP: AFI 1, reserved, SAFI 1
    02 06 01 04 0002 00 01                     # MP: AFI 2, reserved, SAFI 1
    02 06 41 04 0001000e                       # 4-octet AS 65550
    02 02 02 00                                # route refresh
    02 02 46 00                                # enhanced route refresh (70)
  `);
  const OPEN3_MSG: OpenMessage = {
    type: 'open',
    version: 4,
    myAs: 1,
    holdTime: 180,
    bgpId: '1.1.1.1',
    params: [
      { type: 2, capabilities: [{ kind: 'multiprotocol', afi: 1, safi: 1 }] },
      { type: 2, capabilities: [{ kind: 'multiprotocol', afi: 2, safi: 1 }] },
      { type: 2, capabilities: [{ kind: 'fourOctetAs', asn: 65550 }] },
      { type: 2, capabilities: [{ kind: 'routeRefresh' }] },
      { type: 2, capabilities: [{ kind: 'enhancedRouteRefresh' }] },
    ],
  };

  it('decodes and re-encodes holo-bgp OPEN3 byte for byte', () => {
    expect(decodeMessage(OPEN3[18], OPEN3.subarray(19), LEGACY_CONTEXT)).toStrictEqual(OPEN3_MSG);
    expect(encodeMessage(OPEN3_MSG, LEGACY_CONTEXT)).toEqual(OPEN3);
    expect(openAsn(OPEN3_MSG)).toBe(65550);
  });

  it('decodes the annotated capabilities OPEN of Net::BGP (Perl 6, t/bgp-messages/open-message-capabilities.2.txt)', () => {
    const wire = hex(`
      ffffffffffffffffffffffffffffffff 0031 01
      04 1020 0003 01020304 14     # AS 4128, hold 3, id 1.2.3.4, 20 bytes of parameters
      02 02 02 00                  # route refresh
      02 06 41 04 12345678         # 4-octet AS 0x12345678
      02 06 01 04 00010001         # MP IPv4 unicast
    `);
    const open = decodeMessage(1, wire.subarray(19), LEGACY_CONTEXT) as OpenMessage;
    expect(open).toMatchObject({ myAs: 0x1020, holdTime: 3, bgpId: '1.2.3.4' });
    expect(capabilitiesOf(open)).toEqual([{ kind: 'routeRefresh' }, { kind: 'fourOctetAs', asn: 0x12345678 }, { kind: 'multiprotocol', afi: 1, safi: 1 }]);
    expect(encodeMessage(open, LEGACY_CONTEXT)).toEqual(wire);
  });

  it('builds the usual single-parameter OPEN exactly as RFC 4271/5492/6793/4724 lay it out', () => {
    const open = buildOpen({
      asn: 4200000001,
      holdTime: 90,
      bgpId: '10.0.0.1',
      capabilities: [
        { kind: 'multiprotocol', afi: 1, safi: 1 },
        { kind: 'multiprotocol', afi: 2, safi: 1 },
        { kind: 'routeRefresh' },
        { kind: 'fourOctetAs', asn: 4200000001 },
        { kind: 'gracefulRestart', restarting: true, notification: true, restartTime: 120, families: [{ afi: 1, safi: 1, forwardingPreserved: true }] },
      ],
    });
    expect(encodeMessage(open, LEGACY_CONTEXT)).toEqual(
      hex(`
        ffffffffffffffffffffffffffffffff 003b 01   # length 59
        04 5ba0 005a 0a000001 1e                   # My AS = AS_TRANS 23456, hold 90, 30 bytes of parameters
        02 1c                                      # one capabilities parameter of 28 bytes
        01 04 0001 00 01                           # MP IPv4 unicast
        01 04 0002 00 01                           # MP IPv6 unicast
        02 00                                      # route refresh
        41 04 fa56ea01                             # 4-octet AS 4200000001
        40 06 c078 0001 01 80                      # GR: R and N set, 120 s; IPv4 unicast with F bit
      `),
    );
  });
});

describe('OPEN checks (RFC 4271 §6.2)', () => {
  it('rejects versions other than 4 with 2/1 and data 0x0004', () => {
    for (const v of [0, 3, 5, 255]) {
      const b = body('00');
      b[0] = v;
      const e = bgpError(() => decodeOpen(b));
      expect([e.code, e.subcode]).toEqual([2, 1]);
      expect(e.data).toEqual(Uint8Array.of(0, 4));
    }
  });

  it('decodes any hold time and identifier as they are: what they mean is the session’s check (src/session/open.ts)', () => {
    for (const h of [0, 1, 2, 3]) expect(decodeOpen(hex(`04 fde8 000${h} c0000201 00`)).holdTime).toBe(h);
    expect(decodeOpen(hex('04 fde8 00b4 00000000 00')).bgpId).toBe('0.0.0.0');
    expect(decodeOpen(hex('04 fde8 00b4 ffffffff 00')).bgpId).toBe('255.255.255.255');
    expect(decodeOpen(hex('04 fde8 00b4 e0000001 00')).bgpId).toBe('224.0.0.1');
  });

  it('rejects optional parameter types other than 2 with 2/4', () => {
    for (const t of ['01', '00', '03', 'fe']) {
      const e = bgpError(() => decodeOpen(body(`04 ${t} 02 abcd`)));
      expect([e.code, e.subcode]).toEqual([2, 4]);
      expect(e.message).toContain(`type ${parseInt(t, 16)}`);
    }
  });

  it.each([
    ['Opt Parm Len beyond the body', '05 02 02 02 00'],
    ['bytes after the parameters', '04 02 02 02 00 ff'],
    ['a parameter length beyond Opt Parm Len', '04 02 05 02 00'],
    ['a parameter header cut short', '01 02'],
    ['a capability length beyond its parameter', '04 02 02 41 04'],
    ['a capability header cut short', '03 02 01 02'],
    ['extended format with its length cut short', 'ff ff 00'],
    ['extended format with a length beyond the body', 'ff ff 0010 02 0002 0200'],
    ['extended format with a parameter header cut short', 'ff ff 0002 02 00'],
  ])('rejects %s with 2/0', (_why, rest) => {
    const e = bgpError(() => decodeOpen(body(rest)));
    expect([e.code, e.subcode]).toEqual([2, 0]);
  });

  it('accepts a type-2 parameter with no capabilities and an OPEN without parameters', () => {
    expect(decodeOpen(body('02 02 00')).params).toEqual([{ type: 2, capabilities: [] }]);
    expect(decodeOpen(body('00')).params).toEqual([]);
  });

  it('leaves the peer-AS decision to the session: AS 0 and AS_TRANS decode as sent', () => {
    expect(decodeOpen(hex('04 0000 00b4 c0000201 00')).myAs).toBe(0);
    expect(decodeOpen(hex('04 5ba0 00b4 c0000201 00')).myAs).toBe(23456);
  });
});

describe('RFC 9072 extended optional parameters', () => {
  it('accepts the extended format even for short parameters, ignoring Non-Ext OP Len', () => {
    // Non-Ext OP Len 1 (any non-zero value), Non-Ext OP Type 255, length 5: one parameter, 2-byte length 2, route refresh.
    const open = decodeOpen(body('01 ff 0005 02 0002 0200'));
    expect(open.extendedParams).toBe(true);
    expect(open.params).toEqual([{ type: 2, capabilities: [{ kind: 'routeRefresh' }] }]);
  });

  it('reads the extended length and 2-byte parameter lengths', () => {
    const open = decodeOpen(body('07 ff 0009 02 0006 41 04 0001000e'));
    expect(open.extendedParams).toBe(true);
    expect(capabilitiesOf(open)).toEqual([{ kind: 'fourOctetAs', asn: 65550 }]);
  });

  it('uses the plain format when Opt Parm Len is 0 whatever follows', () => {
    expect(bgpError(() => decodeOpen(body('00 ff ff'))).subcode).toBe(0);
  });

  it('encodes extended when asked, as 255, 255, length, then 3-byte parameter headers', () => {
    const open: OpenMessage = {
      ...buildOpen({ asn: 65000, holdTime: 180, bgpId: '192.0.2.1', capabilities: [{ kind: 'routeRefresh' }] }),
      extendedParams: true,
    };
    expect(encodeOpenBody(open)).toEqual(body('ff ff 0005 02 0002 0200'));
    expect(decodeOpen(encodeOpenBody(open))).toStrictEqual(open);
  });

  it('switches to extended on its own when the parameters pass 255 bytes, and only then', () => {
    const big = (n: number): Capability => ({ kind: 'unknown', code: 200, value: new Uint8Array(n).fill(n) });
    const fits = buildOpen({ asn: 65000, holdTime: 180, bgpId: '192.0.2.1', capabilities: [big(251)] }); // 2 + 2 + 251 = 255
    expect(encodeOpenBody(fits)[9]).toBe(255);
    expect(encodeOpenBody(fits)[10]).toBe(2);
    expect(decodeOpen(encodeOpenBody(fits)).extendedParams).toBeUndefined();
    const over = buildOpen({ asn: 65000, holdTime: 180, bgpId: '192.0.2.1', capabilities: [big(252)] });
    const wire = encodeOpenBody(over);
    expect([wire[9], wire[10], (wire[11] << 8) | wire[12]]).toEqual([255, 255, 3 + 2 + 252]);
    expect(decodeOpen(wire)).toStrictEqual({ ...over, extendedParams: true });
  });

  it('round-trips any OPEN, predicting the format from the RFC field sizes', () => {
    fc.assert(
      fc.property(openArb, (open) => {
        const wire = encodeOpenBody(open);
        const extended = open.extendedParams === true || !fitsPlainParams(open.params);
        expect(wire[9] === 255 && wire[10] === 255).toBe(extended);
        expect(decodeOpen(wire)).toStrictEqual(extended ? { ...open, extendedParams: true } : open);
      }),
      { numRuns: 500 },
    );
  });
});

describe('OPEN helpers', () => {
  it('buildOpen puts AS_TRANS in My AS for 4-byte AS numbers only', () => {
    const four = (asn: number): Capability => ({ kind: 'fourOctetAs', asn });
    expect(buildOpen({ asn: 65536, holdTime: 90, bgpId: '1.1.1.1', capabilities: [four(65536)] }).myAs).toBe(23456);
    expect(buildOpen({ asn: 65535, holdTime: 90, bgpId: '1.1.1.1', capabilities: [four(65535)] }).myAs).toBe(65535);
    expect(buildOpen({ asn: 64512, holdTime: 90, bgpId: '1.1.1.1', capabilities: [] })).toStrictEqual({
      type: 'open',
      version: 4,
      myAs: 64512,
      holdTime: 90,
      bgpId: '1.1.1.1',
      params: [],
    });
  });

  it('openAsn prefers the capability over My AS, for any AS', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0xffffffff }), (asn) => {
        const open = buildOpen({ asn, holdTime: 90, bgpId: '1.1.1.1', capabilities: [{ kind: 'routeRefresh' }, { kind: 'fourOctetAs', asn }] });
        expect(openAsn(open)).toBe(asn);
        expect(open.myAs).toBe(asn > 65535 ? 23456 : asn);
        expect(openAsn(decodeOpen(encodeOpenBody(open)))).toBe(asn);
      }),
    );
    expect(openAsn(decodeOpen(hex('04 fde9 00b4 c0000201 00')))).toBe(65001);
  });

  it('capabilitiesOf flattens every parameter in wire order', () => {
    fc.assert(
      fc.property(fc.array(fc.array(capabilityArb, { maxLength: 3 }), { maxLength: 4 }), (groups) => {
        const open: OpenMessage = {
          type: 'open',
          version: 4,
          myAs: 1,
          holdTime: 0,
          bgpId: '1.1.1.1',
          params: groups.map((capabilities) => ({ type: 2, capabilities })),
        };
        expect(capabilitiesOf(open)).toEqual(groups.flat());
      }),
    );
  });

  it.each([
    [{ asn: 70000, capabilities: [] }, /needs a fourOctetAs/],
    [{ asn: 70000, capabilities: [{ kind: 'fourOctetAs', asn: 70001 } as Capability] }, /says 70001/],
    [{ asn: -1, capabilities: [] }, /AS number/],
    [{ asn: 1, capabilities: [], holdTime: 2 }, /hold time/],
    [{ asn: 1, capabilities: [], bgpId: '0.0.0.0' }, /0\.0\.0\.0/],
    [{ asn: 1, capabilities: [], bgpId: '1.2.3' }, /BGP identifier/],
  ])('buildOpen rejects %o', (opts, why) => {
    expect(() => buildOpen({ holdTime: 90, bgpId: '1.1.1.1', ...opts })).toThrow(why);
  });

  it('encodeOpenBody names fields that do not fit', () => {
    const base = buildOpen({ asn: 1, holdTime: 90, bgpId: '1.1.1.1', capabilities: [] });
    expect(() => encodeOpenBody({ ...base, myAs: 65536 })).toThrow(/My AS/);
    expect(() => encodeOpenBody({ ...base, holdTime: -1 })).toThrow(/hold time/);
    expect(() => encodeOpenBody({ ...base, params: [{ type: 255, value: new Uint8Array(0) }] })).toThrow(/reserved/);
    expect(() => encodeMessage({ ...base, bgpId: 'x' }, DEFAULT_CONTEXT)).toThrow(/BGP identifier/);
  });
});
