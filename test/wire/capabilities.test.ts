import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Writer } from '../../src/wire/buffer.js';
import { decodeCapabilities, decodeCapability, encodeCapabilities, encodeCapability } from '../../src/wire/capabilities.js';
import { BgpError } from '../../src/wire/errors.js';
import type { Capability } from '../../src/wire/types.js';
import { capabilityArb, capabilityValueLength, hex } from './arbitraries-messages.js';
import { expectBgpError } from './bgp-error.js';

function decode(text: string): Capability[] {
  const b = hex(text);
  return decodeCapabilities(b, 0, b.length);
}

function encode(cap: Capability): Uint8Array {
  const w = new Writer(8);
  encodeCapability(cap, w);
  return w.finish();
}

const openError = (text: string): BgpError => expectBgpError(() => decode(text), 2, 0);

describe('capability decoders (one per code)', () => {
  it('multiprotocol (1, RFC 4760): AFI, reserved byte ignored, SAFI', () => {
    expect(decode('01 04 0002 00 01')).toEqual([{ kind: 'multiprotocol', afi: 2, safi: 1 }]);
    expect(decode('01 04 0001 7f 02')).toEqual([{ kind: 'multiprotocol', afi: 1, safi: 2 }]);
  });

  it('route refresh (2), enhanced route refresh (70), extended message (6): empty values', () => {
    expect(decode('02 00 46 00 06 00')).toEqual([{ kind: 'routeRefresh' }, { kind: 'enhancedRouteRefresh' }, { kind: 'extendedMessage' }]);
  });

  it('4-octet AS (65, RFC 6793)', () => {
    expect(decode('41 04 fa56ea01')).toEqual([{ kind: 'fourOctetAs', asn: 4200000001 }]);
    expect(decode('41 04 ffffffff')).toEqual([{ kind: 'fourOctetAs', asn: 0xffffffff }]);
  });

  it('graceful restart (64, RFC 4724 + RFC 8538 N bit): flags, 12-bit time, per-family F bit', () => {
    expect(decode('40 0a 4fff 0001 01 80 0002 01 00')).toEqual([
      {
        kind: 'gracefulRestart',
        restarting: false,
        notification: true,
        restartTime: 4095,
        families: [
          { afi: 1, safi: 1, forwardingPreserved: true },
          { afi: 2, safi: 1, forwardingPreserved: false },
        ],
      },
    ]);
    // Reserved flag bits (0x3 of the restart flags, 0x7f of the family flags) are ignored.
    expect(decode('40 06 b078 0001 01 7f')).toEqual([
      { kind: 'gracefulRestart', restarting: true, notification: false, restartTime: 120, families: [{ afi: 1, safi: 1, forwardingPreserved: false }] },
    ]);
    expect(decode('40 02 0000')).toEqual([{ kind: 'gracefulRestart', restarting: false, notification: false, restartTime: 0, families: [] }]);
  });

  it('ADD-PATH (69, RFC 7911): receive 1, send 2, both 3 per family', () => {
    expect(decode('45 0c 0001 01 01 0002 01 02 0001 02 03')).toEqual([
      {
        kind: 'addPath',
        families: [
          { afi: 1, safi: 1, mode: 'receive' },
          { afi: 2, safi: 1, mode: 'send' },
          { afi: 1, safi: 2, mode: 'both' },
        ],
      },
    ]);
  });

  it('extended next hop (5, RFC 8950): NLRI AFI, 2-byte NLRI SAFI, next hop AFI', () => {
    expect(decode('05 0c 0001 0001 0002 0001 0080 0002')).toEqual([
      {
        kind: 'extendedNextHop',
        entries: [
          { afi: 1, safi: 1, nextHopAfi: 2 },
          { afi: 1, safi: 128, nextHopAfi: 2 },
        ],
      },
    ]);
  });

  it('FQDN (73): hostname and domain, each with a length byte', () => {
    // "node-1" and "example.org"
    expect(decode('49 13 06 6e6f64652d31 0b 6578616d706c652e6f7267')).toEqual([{ kind: 'fqdn', hostname: 'node-1', domain: 'example.org' }]);
    expect(decode('49 02 00 00')).toEqual([{ kind: 'fqdn', hostname: '', domain: '' }]);
  });

  it('keeps unknown codes as bytes, in wire order with the known ones', () => {
    expect(decode('80 00 02 00 47 03 010203')).toEqual([
      { kind: 'unknown', code: 128, value: new Uint8Array(0) },
      { kind: 'routeRefresh' },
      { kind: 'unknown', code: 71, value: Uint8Array.of(1, 2, 3) },
    ]);
  });

  it('copies kept bytes, so they survive the receive buffer', () => {
    const b = hex('47 02 aabb');
    const [cap] = decodeCapabilities(b, 0, b.length);
    b.fill(0);
    expect(cap).toEqual({ kind: 'unknown', code: 71, value: Uint8Array.of(0xaa, 0xbb) });
  });
});

describe('malformed known capabilities', () => {
  it.each([
    ['multiprotocol of 3 bytes', 1, '0001 01'],
    ['multiprotocol of 5 bytes', 1, '0001 0001 00'],
    ['route refresh with a value', 2, '00'],
    ['enhanced route refresh with a value', 70, '00'],
    ['extended message with a value', 6, '0000'],
    ['graceful restart of 1 byte', 64, '00'],
    ['graceful restart with a partial family', 64, '0078 0001 01'],
    ['extended next hop of 5 bytes', 5, '0001 0001 00'],
    ['ADD-PATH with Send/Receive 0 (RFC 7911 §4: not understood)', 69, '0001 01 00'],
    ['ADD-PATH with Send/Receive 4', 69, '0001 01 03 0002 01 04'],
    ['FQDN with a hostname length beyond the value', 73, '05 6162'],
    ['FQDN without a domain length', 73, '02 6162'],
    ['FQDN with trailing bytes', 73, '01 61 00 ff'],
    ['FQDN with invalid UTF-8', 73, '02 c328 00'],
  ])('falls back to unknown, bytes kept: %s', (_why, code, value) => {
    const v = hex(value);
    expect(decodeCapability(code, v)).toEqual({ kind: 'unknown', code, value: v });
  });

  it('rejects a 4-octet AS capability of the wrong length with 2/0 (ignoring it would misread AS_PATH)', () => {
    expect(openError('41 02 fde8').message).toMatch(/4-octet AS/);
    openError('41 05 0000fde800');
    openError('41 00');
  });

  it('rejects an ADD-PATH capability whose length is not a multiple of 4 with 2/0 (ignoring it would misread NLRI)', () => {
    expect(openError('45 05 0001 01 03 00').message).toMatch(/ADD-PATH/);
    openError('45 03 0001 01');
  });

  it('rejects a capability that overruns its parameter, or a lone code byte, with 2/0', () => {
    openError('01 04 0001 00');
    openError('02 00 01');
  });

  it('never throws anything but BgpError, whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (b) => {
        try {
          const caps = decodeCapabilities(b, 0, b.length);
          expect(caps.reduce((n, c) => n + 2 + capabilityValueLength(c), 0)).toBe(b.length);
        } catch (err) {
          expect(err).toBeInstanceOf(BgpError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('capability encoding', () => {
  it('round-trips any capability, with the RFC value length', () => {
    fc.assert(
      fc.property(capabilityArb, (cap) => {
        const wire = encode(cap);
        expect(wire[1]).toBe(capabilityValueLength(cap));
        expect(wire.length).toBe(2 + capabilityValueLength(cap));
        expect(decodeCapabilities(wire, 0, wire.length)).toStrictEqual([cap]);
      }),
      { numRuns: 1000 },
    );
  });

  it('encodes a list as concatenated TLVs (the data of a 2/7 NOTIFICATION)', () => {
    expect(encodeCapabilities([{ kind: 'routeRefresh' }, { kind: 'fourOctetAs', asn: 65550 }])).toEqual(hex('02 00 41 04 0001000e'));
    fc.assert(
      fc.property(fc.array(capabilityArb, { maxLength: 5 }), (caps) => {
        const b = encodeCapabilities(caps);
        expect(decodeCapabilities(b, 0, b.length)).toStrictEqual(caps);
      }),
    );
  });

  it('writes the RFC layouts', () => {
    expect(encode({ kind: 'multiprotocol', afi: 2, safi: 1 })).toEqual(hex('01 04 0002 00 01'));
    expect(
      encode({ kind: 'gracefulRestart', restarting: true, notification: false, restartTime: 300, families: [{ afi: 2, safi: 1, forwardingPreserved: true }] }),
    ).toEqual(hex('40 06 812c 0002 01 80'));
    expect(encode({ kind: 'addPath', families: [{ afi: 1, safi: 1, mode: 'both' }] })).toEqual(hex('45 04 0001 01 03'));
    expect(encode({ kind: 'extendedNextHop', entries: [{ afi: 1, safi: 1, nextHopAfi: 2 }] })).toEqual(hex('05 06 0001 0001 0002'));
    expect(encode({ kind: 'fqdn', hostname: 'a', domain: '' })).toEqual(hex('49 03 01 61 00'));
  });

  it('refuses values the one-byte length cannot carry, naming them', () => {
    const families = Array.from({ length: 64 }, () => ({ afi: 1, safi: 1, forwardingPreserved: false }));
    expect(() => encode({ kind: 'gracefulRestart', restarting: false, notification: false, restartTime: 0, families })).toThrow(
      /graceful restart capability value is 258 bytes/,
    );
    expect(() => encode({ kind: 'gracefulRestart', restarting: false, notification: false, restartTime: 4096, families: [] })).toThrow(/restart time/);
    expect(() => encode({ kind: 'fqdn', hostname: 'h'.repeat(200), domain: 'd'.repeat(60) })).toThrow(/FQDN/);
    expect(() => encode({ kind: 'unknown', code: 300, value: new Uint8Array(0) })).toThrow(/capability code/);
    expect(() => encode({ kind: 'addPath', families: [{ afi: 1, safi: 1, mode: 'sometimes' as never }] })).toThrow(/ADD-PATH mode/);
    expect(() => encode({ kind: 'fourOctetAs', asn: 2 ** 32 })).toThrow(/4-octet AS/);
  });
});
