import { describe, expect, it } from 'vitest';
import { buildOpen, checkOpen, NO_OMISSIONS, omissionsAfter, refusedCapabilityCodes, capabilityTlv, openCapabilities } from '../../src/session/open.js';
import { decodeOpen } from '../../src/wire/open.js';
import { cfg, peerOpen } from './fixtures.js';

const codeOf = (e: ReturnType<typeof checkOpen>) => (e ? [e.code, e.subcode] : null);

describe('OPEN checks (RFC 4271 §6.2)', () => {
  it('accepts a well-formed OPEN', () => {
    expect(checkOpen(peerOpen(), cfg())).toBeUndefined();
  });
  it('judges what the codec decoded: hold time 2 and identifier 0 pass decodeOpen and are refused here', () => {
    const wire = (hold: string, id: string) => decodeOpen(Uint8Array.from(Buffer.from(`04fdea${hold}${id}08020641040000fdea`, 'hex')));
    expect(checkOpen(wire('00b4', '0a000002'), cfg())).toBeUndefined();
    expect(codeOf(checkOpen(wire('0002', '0a000002'), cfg()))).toEqual([2, 6]);
    expect(codeOf(checkOpen(wire('00b4', '00000000'), cfg()))).toEqual([2, 3]);
  });
  it('rejects a wrong peer AS with 2/2, using the 4-octet capability AS', () => {
    expect(codeOf(checkOpen(peerOpen({ caps: [{ kind: 'fourOctetAs', asn: 65099 }] }), cfg()))).toEqual([2, 2]);
    expect(codeOf(checkOpen(peerOpen({ myAs: 23456, caps: [{ kind: 'fourOctetAs', asn: 4200000000 }] }), cfg({ peerAs: 4200000000 })))).toBeNull();
    expect(codeOf(checkOpen(peerOpen({ myAs: 23456, caps: [] }), cfg({ peerAs: 23456 })))).toEqual([2, 2]);
  });
  it('learns any AS when configured so', () => {
    expect(checkOpen(peerOpen({ caps: [{ kind: 'fourOctetAs', asn: 64999 }] }), cfg({ peerAs: 'any' }))).toBeUndefined();
  });
  it('rejects identifier 0, malformed identifiers, and our own identifier on iBGP', () => {
    expect(codeOf(checkOpen(peerOpen({ bgpId: '0.0.0.0' }), cfg()))).toEqual([2, 3]);
    expect(codeOf(checkOpen(peerOpen({ bgpId: '1.2.3' }), cfg()))).toEqual([2, 3]);
    const ibgp = cfg({ localAs: 65002 });
    expect(codeOf(checkOpen(peerOpen({ bgpId: '10.0.0.1' }), ibgp))).toEqual([2, 3]);
    // eBGP may share identifiers (RFC 6286).
    expect(checkOpen(peerOpen({ bgpId: '10.0.0.1' }), cfg())).toBeUndefined();
  });
  it('rejects hold times 1 and 2 with 2/6, accepts 0 and 3', () => {
    expect(codeOf(checkOpen(peerOpen({ holdTime: 1 }), cfg()))).toEqual([2, 6]);
    expect(codeOf(checkOpen(peerOpen({ holdTime: 2 }), cfg()))).toEqual([2, 6]);
    expect(checkOpen(peerOpen({ holdTime: 0 }), cfg())).toBeUndefined();
    expect(checkOpen(peerOpen({ holdTime: 3 }), cfg())).toBeUndefined();
  });
  it('sends 2/7 with the missing required capability as data', () => {
    const e = checkOpen(peerOpen(), cfg({ requiredCapabilities: [{ kind: 'multiprotocol', afi: 2, safi: 1 }] }));
    expect(codeOf(e)).toEqual([2, 7]);
    expect([...e!.data]).toEqual([1, 4, 0, 2, 0, 1]);
    const e2 = checkOpen(peerOpen(), cfg({ requiredCapabilities: [{ kind: 'extendedMessage' }] }));
    expect([...e2!.data]).toEqual([6, 0]);
    expect(checkOpen(peerOpen(), cfg({ requiredCapabilities: [{ kind: 'routeRefresh' }] }))).toBeUndefined();
  });
});

describe('our OPEN', () => {
  it('carries AS_TRANS for a 4-byte AS and the real AS in the capability', () => {
    const o = buildOpen(cfg({ localAs: 4200000001 }), NO_OMISSIONS, false);
    expect(o.myAs).toBe(23456);
    expect(openCapabilities(o)).toContainEqual({ kind: 'fourOctetAs', asn: 4200000001 });
  });
  it('advertises R bit and forwarding flags only when restarting', () => {
    const c = cfg({
      families: [
        { afi: 1, safi: 1 },
        { afi: 2, safi: 1 },
      ],
      gracefulRestart: { restartTime: 120, stalePathTime: 360, forwardingPreserved: [{ afi: 1, safi: 1 }] },
    });
    const gr = (r: boolean) => openCapabilities(buildOpen(c, NO_OMISSIONS, r)).find((x) => x.kind === 'gracefulRestart');
    expect(gr(true)).toEqual({
      kind: 'gracefulRestart',
      restarting: true,
      notification: true,
      restartTime: 120,
      families: [
        { afi: 1, safi: 1, forwardingPreserved: true },
        { afi: 2, safi: 1, forwardingPreserved: false },
      ],
    });
    expect(gr(false)).toMatchObject({ restarting: false, families: [{ forwardingPreserved: false }, { forwardingPreserved: false }] });
  });
  it('sets the N bit (RFC 8538) unless gracefulRestart.notification is false', () => {
    const gr = (notification?: boolean) =>
      openCapabilities(
        buildOpen(
          cfg({ gracefulRestart: { restartTime: 120, stalePathTime: 360, forwardingPreserved: [], ...(notification !== undefined ? { notification } : {}) } }),
          NO_OMISSIONS,
          false,
        ),
      ).find((x) => x.kind === 'gracefulRestart');
    expect(gr()).toMatchObject({ notification: true });
    expect(gr(false)).toMatchObject({ notification: false });
  });
  it('omits refused capabilities (2/7) and every optional parameter (2/4)', () => {
    const c = cfg({ extendedMessage: true });
    const data = Uint8Array.from([...capabilityTlv({ kind: 'extendedMessage' }), ...capabilityTlv({ kind: 'multiprotocol', afi: 1, safi: 1 })]);
    expect(refusedCapabilityCodes(data)).toEqual([6, 1]);
    const om = omissionsAfter(NO_OMISSIONS, 2, 7, data);
    const kinds = openCapabilities(buildOpen(c, om, false)).map((x) => x.kind);
    expect(kinds).not.toContain('extendedMessage');
    expect(kinds).not.toContain('multiprotocol');
    expect(kinds).toContain('fourOctetAs');
    expect(buildOpen(c, omissionsAfter(om, 2, 4, new Uint8Array(0)), false).params).toEqual([]);
    // Unrelated NOTIFICATIONs change nothing.
    expect(omissionsAfter(NO_OMISSIONS, 6, 2, data)).toBe(NO_OMISSIONS);
  });
  it('stops at a truncated capability in 2/7 data', () => {
    expect(refusedCapabilityCodes(Uint8Array.of(6, 0, 1, 4, 0))).toEqual([6]);
  });
});
