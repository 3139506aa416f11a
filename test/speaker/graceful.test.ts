import { afterEach, describe, expect, it } from 'vitest';
import { BgpSpeaker } from '../../src/index.js';
import { eventually, established, FAST, link, peerStatus, routeOf, running, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

describe('graceful restart', () => {
  it('a graceful stop and restart: the peer keeps our routes as stale, then takes the new ones after End-of-RIB', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    expect(peerStatus(b, '127.0.0.1').negotiated?.gracefulRestart?.restartTime).toBe(120);
    a.originate('10.50.0.0/16', { med: 1 });
    a.originate('10.51.0.0/16');
    await eventually('routes at b', () => b.received().length === 2);

    // Watch b's table every few ms: 10.50.0.0/16 must never disappear.
    let missing = 0;
    let sawStale = false;
    const watch = setInterval(() => {
      const r = routeOf(b, '10.50.0.0/16');
      if (!r) missing++;
      else if (r.stale) sawStale = true;
    }, 5);
    const withdrawn: string[] = [];
    b.on('routeWithdrawn', (_peer, p) => withdrawn.push(p.toString()));

    const port = a.port!;
    await a.stop({ graceful: true });
    await eventually('b sees the session lost', () => peerStatus(b, '127.0.0.1').state !== 'Established');
    await eventually('routes stale at b', () => b.received().every((r) => r.stale) && b.received().length === 2);

    // The comeback: same address and port, R bit set, only one of the two routes this time.
    const a2 = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.1', listen: { addresses: ['127.0.0.1'], port }, restarting: true, coalesceMs: 2 });
    running.push(a2);
    a2.originate('10.50.0.0/16', { med: 2 });
    a2.addPeer({ ...FAST, address: '127.0.0.2', port: b.port, asn: 65000, localAddress: '127.0.0.1', families: ['ipv4'] });
    await a2.start();
    await established(b, '127.0.0.1');
    const fresh = await eventually('refreshed route, not stale', () => {
      const r = routeOf(b, '10.50.0.0/16');
      return r && !r.stale && r.med === 2 ? r : undefined;
    });
    expect(fresh.med).toBe(2);
    await eventually('10.51.0.0/16 purged after End-of-RIB', () => routeOf(b, '10.51.0.0/16') === undefined);
    clearInterval(watch);
    expect(missing).toBe(0);
    expect(sawStale).toBe(true);
    expect(withdrawn).toEqual([]);
  });

  it('a normal stop withdraws: the peer drops our routes at once', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    a.originate('10.52.0.0/16');
    await eventually('route at b', () => routeOf(b, '10.52.0.0/16'));
    await a.stop();
    await eventually('route gone at b', () => routeOf(b, '10.52.0.0/16') === undefined);
    expect(peerStatus(b, '127.0.0.1').lastError).toMatchObject({ code: 6, subcode: 2 });
  });
});
