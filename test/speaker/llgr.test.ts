/**
 * RFC 9494 long-lived graceful restart through the speaker, over loopback:
 * PeerOptions, the capability on the wire, a peer that goes away for good
 * (its routes stale, then long-lived stale with LLGR_STALE, sent on only to
 * LLGR peers, then gone), and NO_LLGR.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PeerConfigError } from '../../src/speaker/peer-config-error.js';
import { toSessionConfig, validatePeerOptions } from '../../src/speaker/peer-config.js';
import { established, eventually, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

describe('PeerOptions.gracefulRestart.longLivedStaleTime', () => {
  it('maps to the session config, and a bad value is refused naming the field', () => {
    const c = toSessionConfig({ address: '192.0.2.20', asn: 65000, gracefulRestart: { longLivedStaleTime: 3600 } }, 64512, '192.0.2.1');
    expect(c.longLivedGracefulRestart).toMatchObject({ staleTime: 3600 });
    expect(toSessionConfig({ address: '192.0.2.20', asn: 65000 }, 64512, '192.0.2.1').longLivedGracefulRestart).toBeUndefined();
    for (const bad of [0, -1, 1.5, 0x1000000]) {
      expect(() => validatePeerOptions({ address: '192.0.2.20', asn: 65000, gracefulRestart: { longLivedStaleTime: bad } }, 64512, '192.0.2.1')).toThrow(
        new PeerConfigError(`peer 192.0.2.20: gracefulRestart.longLivedStaleTime must be a whole number of seconds 1..16777215, got ${bad}`),
      );
    }
  });
});

describe('long-lived graceful restart between speakers', () => {
  it('a peer gone for good: stale, then long-lived stale (LLGR_STALE, not to non-LLGR peers, NO_LLGR dropped), then gone', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    const c = await speaker('127.0.0.3', { asn: 65000 });
    const d = await speaker('127.0.0.4', { asn: 65000 });
    // a asks b for 1 s of graceful restart, then 2 s long-lived.
    const ll = (restartTime: number, longLivedStaleTime: number) => ({ families: ['ipv4' as const], gracefulRestart: { restartTime, longLivedStaleTime } });
    link(a, b, ll(1, 2), ll(1, 30));
    link(b, c, { families: ['ipv4'] }, { families: ['ipv4'] });
    link(b, d, ll(1, 30), ll(1, 30));
    for (const [s, p] of [
      [b, '127.0.0.1'],
      [c, '127.0.0.2'],
      [d, '127.0.0.2'],
    ] as const)
      await established(s, p);
    expect(peerStatus(b, '127.0.0.1').negotiated?.gracefulRestart?.longLived).toEqual([{ family: 'ipv4', staleTime: 2 }]);
    expect(peerStatus(b, '127.0.0.3').negotiated?.gracefulRestart?.longLived).toBeUndefined();
    a.originate('10.60.0.0/16');
    a.originate('10.61.0.0/16', { communities: ['no-llgr'] });
    await eventually('routes at c and d', () => [c, d].every((s) => routeOf(s, '10.60.0.0/16') && routeOf(s, '10.61.0.0/16')));

    await a.stop({ graceful: true });
    await eventually('stale at b', () => routeOf(b, '10.60.0.0/16')?.stale);
    // After a's restart time: long-lived stale with LLGR_STALE; the NO_LLGR route goes.
    const llStale = await eventually('LLGR_STALE at b', () => {
      const r = routeOf(b, '10.60.0.0/16');
      return r?.communities.includes('llgr-stale') ? r : undefined;
    });
    expect(llStale.stale).toBe(true);
    await eventually('NO_LLGR route dropped at b', () => routeOf(b, '10.61.0.0/16') === undefined);
    // Sent on with LLGR_STALE to d, withdrawn from c.
    await eventually('d has it with LLGR_STALE', () => routeOf(d, '10.60.0.0/16')?.communities.includes('llgr-stale'));
    await eventually('withdrawn from c', () => routeOf(c, '10.60.0.0/16') === undefined);
    // And gone once a's long-lived stale time (2 s) is over.
    await eventually('purged at b', () => routeOf(b, '10.60.0.0/16') === undefined);
    await eventually('withdrawn from d', () => routeOf(d, '10.60.0.0/16') === undefined);
  });
});
