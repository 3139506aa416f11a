// A loopback Peer with the real wire codec (src/wire/message.ts), checking the bytes of OPEN, KEEPALIVE and Cease.
import { afterEach, describe, expect, it } from 'vitest';
import { WIRE_CODEC } from '../../src/session/connection.js';
import { loopbackPair, until } from './loopback.js';

describe('Peer over loopback (wire codec)', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  it('establishes with real OPEN/KEEPALIVE bytes, negotiates, and a ManualStop arrives as Cease 6/2', async () => {
    const p = await loopbackPair(WIRE_CODEC);
    cleanup.push(() => {
      p.a.stop();
      p.b.stop();
      return p.listener.close();
    });
    p.a.start();
    p.b.start();
    expect(await until(() => p.a.state === 'Established' && p.b.state === 'Established')).toBe(true);
    expect(p.a.negotiated).toMatchObject({ peerAs: 65002, asn4: true, routeRefresh: true, holdTime: 90, keepaliveTime: 30, families: [{ afi: 1, safi: 1 }] });
    const [inA, inB] = [p.a.stats.messagesIn, p.b.stats.messagesIn];
    p.clock.advance(30_000);
    expect(await until(() => p.a.stats.messagesIn > inA && p.b.stats.messagesIn > inB)).toBe(true); // the KEEPALIVEs
    expect(p.a.state).toBe('Established');
    p.b.stop();
    expect(await until(() => p.ra.downs.length === 1)).toBe(true);
    expect(p.ra.downs[0]).toEqual({ kind: 'notificationReceived', code: 6, subcode: 2 });
  });
});
