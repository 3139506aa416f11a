import { afterEach, describe, expect, it } from 'vitest';
import { Prefix } from '../../src/index.js';
import { eventually, established, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const V4 = { families: ['ipv4' as const] };

describe('routing between speakers', () => {
  it('eBGP chain A→B→C: each hop prepends its AS and sets itself as next hop', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    const c = await speaker('127.0.0.3', { asn: 65003 });
    b.definePolicy('pass', { statements: [{ actions: { result: 'accept' } }] });
    link(a, b, V4, V4);
    link(b, c, { ...V4, exportPolicies: ['pass'] }, V4);
    await established(c, '127.0.0.2');
    a.originate('10.10.0.0/16', { med: 5, communities: ['65001:1'] });
    const r = await eventually('route at C', () => routeOf(c, '10.10.0.0/16'));
    expect(r).toMatchObject({ peer: '127.0.0.2', nextHop: '127.0.0.2', asPath: [65002, 65001], communities: ['65001:1'] });
    // A MED learned from a peer is not passed on to another AS.
    expect(r.med).toBeUndefined();
    expect(routeOf(b, '10.10.0.0/16')).toMatchObject({ nextHop: '127.0.0.1', asPath: [65001], med: 5 });
    a.withdraw('10.10.0.0/16');
    await eventually('withdrawal reaches C', () => routeOf(c, '10.10.0.0/16') === undefined);
    expect(routeOf(b, '10.10.0.0/16')).toBeUndefined();
  });

  it('RFC 8212: without an export policy learned routes are not sent to eBGP, our own still are', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    const c = await speaker('127.0.0.3', { asn: 65003 });
    link(a, b, V4, V4);
    link(b, c, V4, V4);
    await established(c, '127.0.0.2');
    await established(b, '127.0.0.1');
    a.originate('10.11.0.0/16');
    b.originate('10.12.0.0/16');
    await eventually('B has A route', () => routeOf(b, '10.11.0.0/16'));
    await eventually('C has B route', () => routeOf(c, '10.12.0.0/16'));
    // A marker originated by B after it took A's route: once C has it, anything B sent C before is there too.
    b.originate('10.13.0.0/16');
    await eventually('C has the marker', () => routeOf(c, '10.13.0.0/16'));
    expect(routeOf(c, '10.11.0.0/16')).toBeUndefined();
    expect(b.advertised('127.0.0.3').map((x) => x.prefix.toString())).toEqual(['10.12.0.0/16', '10.13.0.0/16']);
  });

  it('route reflector: B reflects client A’s route to client C with ORIGINATOR_ID and CLUSTER_LIST', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000, clusterId: '10.255.0.1' });
    const c = await speaker('127.0.0.3', { asn: 65000 });
    link(a, b, V4, { ...V4, routeReflectorClient: true });
    link(b, c, { ...V4, routeReflectorClient: true }, V4);
    await established(c, '127.0.0.2');
    a.originate('10.30.0.0/16', { localPref: 250 });
    const r = await eventually('reflected route at C', () => routeOf(c, '10.30.0.0/16'));
    expect(r).toMatchObject({ peer: '127.0.0.2', nextHop: '127.0.0.1', localPref: 250, asPath: [], originatorId: '127.0.0.1', clusterList: ['10.255.0.1'] });
    expect(routeOf(b, '10.30.0.0/16')?.originatorId).toBeUndefined();
  });

  it('iBGP without a reflector does not pass iBGP-learned routes on', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    const c = await speaker('127.0.0.3', { asn: 65000 });
    link(a, b, V4, V4);
    link(b, c, V4, V4);
    await established(c, '127.0.0.2');
    a.originate('10.31.0.0/16');
    b.originate('10.32.0.0/16');
    await eventually('C has B route', () => routeOf(c, '10.32.0.0/16'));
    await eventually('B has A route', () => routeOf(b, '10.31.0.0/16'));
    // A marker originated by B after it took A's route: once C has it, anything B sent C before is there too.
    b.originate('10.33.0.0/16');
    await eventually('C has the marker', () => routeOf(c, '10.33.0.0/16'));
    expect(routeOf(c, '10.31.0.0/16')).toBeUndefined();
  });

  it('refuses a path holding our own AS (loop), and takes it once allowOwnAs permits', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b, V4, V4);
    const up = await established(b, '127.0.0.1');
    a.originate('10.40.0.0/16', { asPath: [65002, 64999] });
    await eventually('received (pre-policy)', () => peerStatus(b, '127.0.0.1').counters.prefixesReceived === 1);
    expect(peerStatus(b, '127.0.0.1').counters.prefixesAccepted).toBe(0);
    expect(routeOf(b, '10.40.0.0/16')).toBeUndefined();
    b.updatePeer({
      address: '127.0.0.1',
      port: a.port,
      asn: 65001,
      localAddress: '127.0.0.2',
      connectRetryTime: 1,
      idleHoldTime: 1,
      holdTime: 9,
      ...V4,
      allowOwnAs: 1,
    });
    expect(routeOf(b, '10.40.0.0/16')).toMatchObject({ asPath: [65001, 65002, 64999] });
    expect(peerStatus(b, '127.0.0.1').since).toEqual(up.since);
  });

  it('a burst of 10,000 originate() calls goes out as the fewest full UPDATEs', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, V4, V4);
    await established(b, '127.0.0.1');
    await established(a, '127.0.0.2');
    // counted after A's End-of-RIB (an UPDATE) has arrived
    await eventually('End-of-RIB from A at B', () => peerStatus(b, '127.0.0.1').negotiated?.endOfRibReceived.includes('ipv4'));
    const before = peerStatus(b, '127.0.0.1').counters.updatesIn;
    const n = 10_000;
    for (let i = 0; i < n; i++) a.originate(Prefix.v4(((10 << 24) | (i << 8)) >>> 0, 24), { communities: ['65000:1'] });
    await eventually('all prefixes at B', () => peerStatus(b, '127.0.0.1').counters.prefixesAccepted === n, 15_000);
    const updates = peerStatus(b, '127.0.0.1').counters.updatesIn - before;
    // 4096-byte messages: 23 bytes of header and lengths, 28 of attributes (ORIGIN 4, empty AS_PATH 3,
    // NEXT_HOP 7, LOCAL_PREF 7, COMMUNITIES 7), 4 bytes per /24.
    const perMessage = Math.floor((4096 - 23 - 28) / 4);
    expect(updates).toBeLessThanOrEqual(Math.ceil(n / perMessage));
    expect(updates).toBeGreaterThan(0);
  });
});
