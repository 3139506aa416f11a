/**
 * RFC 8326 graceful shutdown through the speaker: drain() re-sends our routes
 * marked without resetting the session; a receiver gives marked routes
 * LOCAL_PREF 0 unless told not to.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const GSHUT = 'graceful-shutdown';

describe('speaker.drain (RFC 8326)', () => {
  it('marks every route, LOCAL_PREF 0 to iBGP, keeps the session, and undrain reverts', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const ib = await speaker('127.0.0.2', { asn: 65000 });
    const eb = await speaker('127.0.0.3', { asn: 65010 });
    link(a, ib, { families: ['ipv4'] }, { families: ['ipv4'] });
    link(a, eb, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(ib, '127.0.0.1');
    await established(eb, '127.0.0.1');
    a.originate('198.51.100.0/24');
    a.originate('203.0.113.0/24', { communities: ['65000:7'] });
    await eventually('routes at both', () => ib.received().length === 2 && eb.received().length === 2);
    const since = peerStatus(ib, '127.0.0.1').upDownSince;

    a.drain();
    expect(a.status().every((p) => p.draining === true)).toBe(true);
    await eventually('marked at the iBGP peer', () => ib.received().every((r) => r.communities.includes(GSHUT)) && ib.received().length === 2);
    for (const r of ib.received()) expect(r.localPref).toBe(0);
    expect(routeOf(ib, '203.0.113.0/24')!.communities).toEqual(['65000:7', GSHUT]);
    await eventually('marked at the eBGP peer', () => eb.received().every((r) => r.communities.includes(GSHUT)) && eb.received().length === 2);
    // The eBGP receiver honours the community itself (LOCAL_PREF 0 on import).
    for (const r of eb.received()) expect(r.localPref).toBe(0);
    expect(peerStatus(ib, '127.0.0.1').state).toBe('Established');
    expect(peerStatus(ib, '127.0.0.1').upDownSince).toEqual(since);

    a.undrain();
    expect(a.status().some((p) => p.draining)).toBe(false);
    await eventually('unmarked', () => ib.received().every((r) => !r.communities.includes(GSHUT) && r.localPref === 100));
    expect(peerStatus(ib, '127.0.0.1').upDownSince).toEqual(since);
  });

  it('drains one peer only, and a draining-all speaker drains peers added later', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    const c = await speaker('127.0.0.3', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    link(a, c, { families: ['ipv4'] }, { families: ['ipv4'] });
    a.originate('198.51.100.0/24');
    await eventually('routes', () => routeOf(b, '198.51.100.0/24') && routeOf(c, '198.51.100.0/24'));
    a.drain({ peers: ['127.0.0.2'] });
    await eventually('b marked', () => routeOf(b, '198.51.100.0/24')?.communities.includes(GSHUT));
    expect(routeOf(c, '198.51.100.0/24')!.communities).toEqual([]);
    expect(peerStatus(a, '127.0.0.3').draining).toBeUndefined();
    expect(() => a.drain({ peers: ['192.0.2.99'] })).toThrow(/192\.0\.2\.99 is not configured/);

    const d = await speaker('127.0.0.4', { asn: 65000 });
    a.drain();
    link(a, d, { families: ['ipv4'] }, { families: ['ipv4'] });
    await eventually('d gets it marked from the start', () => routeOf(d, '198.51.100.0/24')?.communities.includes(GSHUT));
    await eventually('c marked too', () => routeOf(c, '198.51.100.0/24')?.communities.includes(GSHUT));
  });

  it('honourGracefulShutdown: false keeps the sender LOCAL_PREF', async () => {
    const a = await speaker('127.0.0.1', { asn: 65010 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'], honourGracefulShutdown: false });
    a.originate('198.51.100.0/24', { communities: ['graceful-shutdown'] });
    const r = await eventually('route', () => routeOf(b, '198.51.100.0/24'));
    expect(r.communities).toEqual([GSHUT]);
    expect(r.localPref).toBeUndefined();
  });
});
