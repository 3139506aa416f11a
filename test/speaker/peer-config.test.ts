/** PeerOptions → session config, and the rule for which changes reset a session: src/speaker/peer-config.ts. */
import { describe, expect, it } from 'vitest';
import { setLibcLoader } from '../../src/native/libc.js';
import { PeerConfigError } from '../../src/speaker/peer-config-error.js';
import { peerId, sessionKey, toSessionConfig, validatePeerOptions } from '../../src/speaker/peer-config.js';
import type { PeerOptions } from '../../src/speaker/types.js';
import { UnsupportedTransportError } from '../../src/session/transport.js';

const base: PeerOptions = { address: '192.0.2.20', asn: 65000 };

describe('peerId', () => {
  it('canonical address text; anything else refused', () => {
    expect(peerId('2001:DB8:0::1')).toBe('2001:db8::1');
    expect(peerId('192.0.2.20')).toBe('192.0.2.20');
    expect(() => peerId('router')).toThrow(PeerConfigError);
  });
});

describe('toSessionConfig', () => {
  it('defaults: both families, hold 90, connect retry 5, graceful restart 120 s, active', () => {
    expect(toSessionConfig(base, 64512, '192.0.2.1')).toMatchObject({
      localAs: 64512,
      localId: '192.0.2.1',
      peerAs: 65000,
      holdTime: 90,
      connectRetryTime: 5,
      passive: false,
      families: [
        { afi: 1, safi: 1 },
        { afi: 2, safi: 1 },
      ],
      extendedMessage: false,
      addPath: [],
      gracefulRestart: {
        restartTime: 120,
        stalePathTime: 360,
        forwardingPreserved: [
          { afi: 1, safi: 1 },
          { afi: 2, safi: 1 },
        ],
      },
    });
  });

  it('maps the options; gracefulRestart false turns it off; add-path per family', () => {
    const c = toSessionConfig(
      { ...base, localAsn: 64600, families: ['ipv6'], holdTime: 9, passive: true, gracefulRestart: false, addPath: 'both', idleHoldTime: 120 },
      64512,
      '192.0.2.1',
    );
    expect(c).toMatchObject({ localAs: 64600, holdTime: 9, passive: true, families: [{ afi: 2, safi: 1 }], addPath: [{ afi: 2, safi: 1, mode: 'both' }] });
    expect(c.gracefulRestart).toBeUndefined();
    expect(c.idleHold.initial).toBe(120);
    expect(c.idleHold.max).toBeGreaterThanOrEqual(120);
  });
});

describe('validatePeerOptions', () => {
  it('accepts a plain peer', () => {
    expect(validatePeerOptions(base, 64512, '192.0.2.1').peerAs).toBe(65000);
  });

  it.each([
    [{ port: 0 }, /port must be 1\.\.65535/],
    [{ port: 65536 }, /port/],
    [{ families: [] }, /families must list/],
    [{ families: ['ipv5' as 'ipv4'] }, /unknown family "ipv5"/],
    [{ nextHopV6: '192.0.2.1' }, /nextHopV6 must be an IPv6 address/],
    [{ nextHopV4: 'x' }, /nextHopV4/],
    [{ localAddress: 'x' }, /localAddress/],
    [{ allowOwnAs: 11 }, /allowOwnAs must be 0\.\.10/],
    [{ holdTime: 2 }, /holdTime/],
    [{ asn: 0 }, /peerAs/],
  ] as const)('refuses %j, naming the peer and the field', (over, message) => {
    const err = (() => {
      try {
        validatePeerOptions({ ...base, ...over }, 64512, '192.0.2.1');
      } catch (e) {
        return e as Error;
      }
      throw new Error('accepted');
    })();
    expect(err).toBeInstanceOf(PeerConfigError);
    expect(err.message).toMatch(/^peer 192\.0\.2\.20: /);
    expect(err.message).toMatch(message);
  });

  it('TCP-MD5 and GTSM are refused loudly as unsupported transport where the FFI cannot load, accepted where it can', () => {
    expect(() => validatePeerOptions({ ...base, password: 's', ttlSecurity: 1 }, 64512, '192.0.2.1')).not.toThrow();
    setLibcLoader(() => {
      throw new Error('no koffi here');
    });
    try {
      expect(() => validatePeerOptions({ ...base, password: 's' }, 64512, '192.0.2.1')).toThrow(UnsupportedTransportError);
      expect(() => validatePeerOptions({ ...base, ttlSecurity: 1 }, 64512, '192.0.2.1')).toThrow(UnsupportedTransportError);
    } finally {
      setLibcLoader(undefined);
    }
  });

  it('a password or hop count changes the session key (the session resets)', () => {
    expect(sessionKey({ ...base, password: 'a' })).not.toBe(sessionKey({ ...base, password: 'b' }));
    expect(sessionKey({ ...base, ttlSecurity: 1 })).not.toBe(sessionKey({ ...base, ttlSecurity: 2 }));
    expect(sessionKey({ ...base, password: '' })).toBe(sessionKey(base));
  });
});

describe('sessionKey: which changes reset the session', () => {
  const resets = (over: Partial<PeerOptions>) => sessionKey({ ...base, ...over }) !== sessionKey(base);

  it('description, policies, next-hop handling and allowOwnAs apply in place', () => {
    for (const over of [
      { description: 'x' },
      { exportPolicies: ['p'] },
      { importPolicies: ['p'] },
      { nextHopSelf: true },
      { keepNextHop: true },
      { allowOwnAs: 2 },
      { nextHopV6: '2001:db8::1' },
    ])
      expect(resets(over), JSON.stringify(over)).toBe(false);
  });

  it('whatever the OPEN, the socket or a fixed RIB property depends on resets', () => {
    for (const over of [
      { port: 1790 },
      { asn: 65001 },
      { localAsn: 64600 },
      { families: ['ipv4' as const] },
      { holdTime: 30 },
      { keepaliveTime: 10 },
      { connectRetryTime: 9 },
      { passive: true },
      { localAddress: '192.0.2.1' },
      { localPort: 1179 },
      { gracefulRestart: false as const },
      { addPath: 'send' as const },
      { routeReflectorClient: true },
      { extendedMessage: true },
      { idleHoldTime: 30 },
    ])
      expect(resets(over), JSON.stringify(over)).toBe(true);
  });

  it('spelling a default out is no change', () => {
    expect(resets({ port: 179, passive: false, families: ['ipv4', 'ipv6'], routeReflectorClient: false, extendedMessage: false })).toBe(false);
  });
});
