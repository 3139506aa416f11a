import { afterEach, describe, expect, it } from 'vitest';
import { eventually, established, link, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

describe('two speakers over loopback TCP', () => {
  it('establish iBGP and exchange IPv4 and IPv6 routes with communities, large communities, MED and LOCAL_PREF', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { nextHopV6: '2001:db8::1' }, { nextHopV6: '2001:db8::2' });
    const st = await established(a, '127.0.0.2');
    expect(st.negotiated?.families).toEqual(['ipv4', 'ipv6']);
    expect(st.negotiated?.peerAsn).toBe(65000);
    expect(st.local?.address).toBe('127.0.0.1');
    await established(b, '127.0.0.1');
    // each side's initial table (empty) ends with End-of-RIB for both families
    for (const [x, peer] of [
      [a, '127.0.0.2'],
      [b, '127.0.0.1'],
    ] as const) {
      const eor = await eventually(`End-of-RIB at ${peer}`, () => {
        const f = x.status()[0].negotiated?.endOfRibReceived;
        return f?.length === 2 ? f : undefined;
      });
      expect([...eor].sort()).toEqual(['ipv4', 'ipv6']);
    }

    a.originate('10.1.0.0/16', { communities: ['65000:100', 'no-export'], largeCommunities: ['65000:1:2'], med: 50, localPref: 200 });
    a.originate('2001:db8:100::/48', { communities: ['65000:200'] });

    const v4 = await eventually('10.1.0.0/16 at b', () => routeOf(b, '10.1.0.0/16'));
    expect(v4).toMatchObject({ peer: '127.0.0.1', nextHop: '127.0.0.1', med: 50, localPref: 200, asPath: [], best: true, stale: false });
    expect(v4.communities).toEqual(['65000:100', 'no-export']);
    expect(v4.largeCommunities).toEqual(['65000:1:2']);
    const v6 = await eventually('2001:db8:100::/48 at b', () => routeOf(b, '2001:db8:100::/48'));
    expect(v6).toMatchObject({ nextHop: '2001:db8::1', localPref: 100, communities: ['65000:200'] });

    expect(
      a
        .advertised('127.0.0.2')
        .map((r) => r.prefix.toString())
        .sort(),
    ).toEqual(['10.1.0.0/16', '2001:db8:100::/48']);
    const sa = await eventually('counters', () => {
      const s = b.status()[0];
      return s.counters.prefixesAccepted === 2 ? s : undefined;
    });
    expect(sa.counters.prefixesReceived).toBe(2);
    expect(sa.counters.updatesIn).toBeGreaterThanOrEqual(2);

    a.withdraw('10.1.0.0/16');
    await eventually('withdrawal at b', () => routeOf(b, '10.1.0.0/16') === undefined);
    expect(routeOf(b, '2001:db8:100::/48')).toBeDefined();
  });
});

describe('IPv6 next hops and families', () => {
  it('over an IPv4 session without nextHopV6, IPv6 routes are held back (and IPv4 ones still go)', async () => {
    const logs: string[] = [];
    const a = await speaker('127.0.0.1', {
      asn: 65000,
      log: (level, msg) => {
        if (level === 'warning') logs.push(msg);
      },
    });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b);
    await established(a, '127.0.0.2');
    a.originate('2001:db8:200::/48');
    a.originate('10.7.0.0/16');
    await eventually('IPv4 route at b', () => routeOf(b, '10.7.0.0/16'));
    // A marker sent after: once it is at b, whatever went out with the first two is there too.
    a.originate('10.8.0.0/16');
    await eventually('the marker at b', () => routeOf(b, '10.8.0.0/16'));
    expect(routeOf(b, '2001:db8:200::/48')).toBeUndefined();
    expect(logs.some((l) => l.includes('no nextHopV6'))).toBe(true);
  });

  it('IPv6 routes need IPv6 unicast negotiated with the peer', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { nextHopV6: '2001:db8::1' }, { families: ['ipv4'] });
    const st = await established(a, '127.0.0.2');
    expect(st.negotiated?.families).toEqual(['ipv4']);
    a.originate('2001:db8:300::/48');
    a.originate('10.8.0.0/16');
    await eventually('IPv4 route at b', () => routeOf(b, '10.8.0.0/16'));
    expect(a.advertised('127.0.0.2').map((r) => r.prefix.toString())).toEqual(['10.8.0.0/16']);
  });

  it("learns the peer's AS from its OPEN when asn is 'any', and reports events", async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65009 });
    const events: string[] = [];
    b.on('peerUp', (p) => events.push(`up ${p.address} ${p.negotiated?.peerAsn}`));
    b.on('peerDown', (p, reason) => events.push(`down ${p.address} ${reason}`));
    b.on('stateChange', (p, from) => events.push(`${from}→${p.state}`));
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'], asn: 'any' });
    await established(b, '127.0.0.1');
    a.originate('10.9.0.0/16');
    const r = await eventually('route at b', () => routeOf(b, '10.9.0.0/16'));
    expect(r.asPath).toEqual([65000]);
    expect(b.status()[0].asn).toBe('any');
    expect(b.status()[0].negotiated?.peerAsn).toBe(65000);
    await a.stop({ message: 'bye' });
    await eventually('peerDown event', () => events.some((e) => e.startsWith('down')));
    expect(events).toContain('up 127.0.0.1 65000');
    expect(events).toContain('OpenConfirm→Established');
    // Both speakers set the RFC 8538 N bit: the Administrative Shutdown arrives as Hard Reset (6/9).
    expect(events.find((e) => e.startsWith('down'))).toContain('NOTIFICATION 6/9 received');
    expect(b.status()[0].lastError).toMatchObject({ code: 6, subcode: 2, hardReset: true, message: 'bye' });
  });
});

describe('an IPv6 TCP session', () => {
  it('uses the session’s IPv6 address as the IPv6 next hop, nextHopV4 (or the router ID) for IPv4', async () => {
    const a = await speaker('::1', { asn: 65001, routerId: '192.0.2.1' });
    const b = await speaker('::1', { asn: 65002, routerId: '192.0.2.2' });
    a.addPeer({ address: '::1', port: b.port, asn: 65002, connectRetryTime: 1, idleHoldTime: 1, nextHopV4: '192.0.2.101' });
    b.addPeer({ address: '::1', port: a.port, asn: 65001, connectRetryTime: 1, idleHoldTime: 1 });
    const st = await established(a, '::1');
    expect(st.local?.address).toBe('::1');
    a.originate('2001:db8:400::/48');
    a.originate('10.13.0.0/16');
    b.originate('10.14.0.0/16');
    expect(await eventually('IPv6 route at b', () => routeOf(b, '2001:db8:400::/48'))).toMatchObject({ nextHop: '::1', asPath: [65001] });
    expect(await eventually('IPv4 route at b', () => routeOf(b, '10.13.0.0/16'))).toMatchObject({ nextHop: '192.0.2.101' });
    expect(await eventually('IPv4 route at a', () => routeOf(a, '10.14.0.0/16'))).toMatchObject({ nextHop: '192.0.2.2' });
  });
});

describe('robustness', () => {
  it('a throwing event listener is logged and the session stays up', async () => {
    const errors: string[] = [];
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', {
      asn: 65000,
      log: (level, msg) => {
        if (level === 'error') errors.push(msg);
      },
    });
    b.on('routeReceived', () => {
      throw new Error('listener bug');
    });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    const up = await established(b, '127.0.0.1');
    a.originate('10.15.0.0/16');
    await eventually('error logged', () => errors.length > 0);
    expect(errors[0]).toContain('listener bug');
    a.originate('10.16.0.0/16');
    await eventually('second route', () => routeOf(b, '10.16.0.0/16'));
    expect(b.status()[0].since).toEqual(up.since);
  });
});
