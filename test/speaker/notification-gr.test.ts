/** RFC 8538 through the speaker, over loopback: what stop() sends and what the peer keeps. */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

describe('RFC 8538 (N bit) through the speaker', () => {
  it('both sides set N: stop({ graceful }) sends Administrative Reset, and the peer keeps our routes as stale', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    expect(peerStatus(b, '127.0.0.1').negotiated?.gracefulRestart).toEqual({ restartTime: 120, notification: true });
    a.originate('198.51.100.0/24');
    await eventually('route at b', () => routeOf(b, '198.51.100.0/24'));
    await a.stop({ graceful: true, message: 'upgrading' });
    await eventually('session lost at b', () => peerStatus(b, '127.0.0.1').state !== 'Established');
    expect(peerStatus(b, '127.0.0.1').lastError).toMatchObject({ code: 6, subcode: 4, message: 'upgrading', direction: 'received' });
    await eventually('stale at b', () => routeOf(b, '198.51.100.0/24')?.stale === true);
  });

  it('a normal stop is a Hard Reset carrying Administrative Shutdown: the peer drops our routes', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    a.originate('198.51.100.0/24');
    await eventually('route at b', () => routeOf(b, '198.51.100.0/24'));
    await a.stop({ message: 'decommissioned' });
    await eventually('route gone at b', () => routeOf(b, '198.51.100.0/24') === undefined);
    expect(peerStatus(b, '127.0.0.1').lastError).toMatchObject({
      code: 6,
      subcode: 2,
      hardReset: true,
      message: 'decommissioned',
      text: 'Cease / Administrative Shutdown: "decommissioned"',
    });
  });

  it('the peer without N: a graceful stop closes TCP without a NOTIFICATION (RFC 4724), routes kept as stale', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'], gracefulRestart: { notification: false } });
    await established(b, '127.0.0.1');
    expect(peerStatus(b, '127.0.0.1').negotiated?.gracefulRestart?.notification).toBe(false);
    a.originate('198.51.100.0/24');
    await eventually('route at b', () => routeOf(b, '198.51.100.0/24'));
    await a.stop({ graceful: true });
    await eventually('stale at b', () => routeOf(b, '198.51.100.0/24')?.stale === true);
    expect(peerStatus(b, '127.0.0.1').lastError).toMatchObject({ code: 0, text: 'TCP connection lost', direction: 'local' });
  });
});
