import { afterEach, describe, expect, it } from 'vitest';
import { UnsupportedTransportError } from '../../src/index.js';
import { setLibcLoader } from '../../src/native/libc.js';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import { eventually, established, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const ACCEPT_ALL = { statements: [{ actions: { result: 'accept' as const } }] };

describe('peer configuration at run time', () => {
  it('route refresh from the peer makes us send the routes again', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    a.originate('10.2.0.0/16');
    await eventually('route at b', () => routeOf(b, '10.2.0.0/16'));
    await eventually('End-of-RIB from a at b', () => peerStatus(b, '127.0.0.1').negotiated?.endOfRibReceived.includes('ipv4'));
    const before = peerStatus(b, '127.0.0.1').counters.updatesIn;
    b.requestRouteRefresh('127.0.0.1');
    await eventually('refreshed UPDATE', () => peerStatus(b, '127.0.0.1').counters.updatesIn > before);
    expect(routeOf(b, '10.2.0.0/16')).toBeDefined();
    expect(peerStatus(b, '127.0.0.1').counters.updatesIn - before).toBe(1);
  });

  it('updatePeer with a new export policy withdraws what it filters, without a session reset', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    a.definePolicies({
      sets: { prefix: { ten: ['10.0.0.0/8 le 32'] } },
      policies: { 'no-ten': { statements: [{ conditions: { prefixSet: { set: 'ten' } }, actions: { result: 'reject' } }, { actions: { result: 'accept' } }] } },
    });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    const upA = await established(a, '127.0.0.2');
    const upB = await established(b, '127.0.0.1');
    a.originate('10.3.0.0/16');
    a.originate('192.0.2.0/24');
    await eventually('both routes at b', () => b.received().length === 2);

    a.updatePeer({
      address: '127.0.0.2',
      port: b.port,
      asn: 65002,
      localAddress: '127.0.0.1',
      connectRetryTime: 1,
      idleHoldTime: 1,
      holdTime: 9,
      families: ['ipv4'],
      description: 'now filtered',
      exportPolicies: ['no-ten'],
    });
    await eventually('10.3.0.0/16 withdrawn at b', () => routeOf(b, '10.3.0.0/16') === undefined);
    expect(routeOf(b, '192.0.2.0/24')).toBeDefined();
    const stA = peerStatus(a, '127.0.0.2');
    expect(stA.state).toBe('Established');
    expect(stA.since).toEqual(upA.since);
    expect(stA.description).toBe('now filtered');
    expect(peerStatus(b, '127.0.0.1').since).toEqual(upB.since);
    expect(a.advertised('127.0.0.2').map((r) => r.prefix.toString())).toEqual(['192.0.2.0/24']);
  });

  it('redefining a policy in use re-evaluates the routes in place', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    a.definePolicy('out', ACCEPT_ALL);
    link(a, b, { families: ['ipv4'], exportPolicies: ['out'] }, { families: ['ipv4'] });
    const up = await established(a, '127.0.0.2');
    a.originate('10.4.0.0/16');
    await eventually('route at b', () => routeOf(b, '10.4.0.0/16'));
    a.definePolicy('out', { statements: [{ actions: { result: 'accept', community: { add: ['65001:7'] } } }] });
    await eventually('community added at b', () => routeOf(b, '10.4.0.0/16')?.communities.includes('65001:7'));
    expect(peerStatus(a, '127.0.0.2').since).toEqual(up.since);
  });

  it('changing a session setting resets the session with Cease 6/6', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    const first = await established(a, '127.0.0.2');
    await established(b, '127.0.0.1');
    a.updatePeer({
      address: '127.0.0.2',
      port: b.port,
      asn: 65000,
      localAddress: '127.0.0.1',
      connectRetryTime: 1,
      idleHoldTime: 1,
      families: ['ipv4'],
      holdTime: 30,
    });
    const err = await eventually('6/6 at b', () => {
      const e = peerStatus(b, '127.0.0.1').lastError;
      return e?.subcode === 6 ? e : undefined;
    });
    expect(err).toMatchObject({ code: 6, subcode: 6, direction: 'received' });
    expect(err.text).toContain('Other Configuration Change');
    // b proposes 9 s, so the new session still negotiates 9; what matters is that it came back.
    const again = await eventually('re-established', () => {
      const s = peerStatus(a, '127.0.0.2');
      return s.state === 'Established' && s.since > first.since ? s : undefined;
    });
    expect(again.negotiated?.holdTime).toBe(9);
  });

  it('removePeer sends Cease 6/3 with the message, and the peer records it', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    a.originate('10.5.0.0/16');
    await eventually('route at b', () => routeOf(b, '10.5.0.0/16'));
    await a.removePeer('127.0.0.2', { message: 'moving to a new rack' });
    expect(a.status()).toEqual([]);
    const err = await eventually('6/3 at b', () => peerStatus(b, '127.0.0.1').lastError);
    expect(err).toMatchObject({ code: 6, subcode: 3, message: 'moving to a new rack', direction: 'received' });
    expect(err.text).toBe('Cease / Peer De-configured: "moving to a new rack"');
    expect(routeOf(b, '10.5.0.0/16')).toBeUndefined();
  });

  it('stop sends Cease 6/2 with the RFC 9003 message to every peer', async () => {
    const a = await speaker('127.0.0.1', { asn: 65000 });
    const b = await speaker('127.0.0.2', { asn: 65000 });
    const c = await speaker('127.0.0.3', { asn: 65000 });
    link(a, b, { families: ['ipv4'] }, { families: ['ipv4'] });
    link(a, c, { families: ['ipv4'] }, { families: ['ipv4'] });
    await established(b, '127.0.0.1');
    await established(c, '127.0.0.1');
    await a.stop({ message: 'maintenance — back at 10:00' });
    for (const s of [b, c]) {
      const err = await eventually('6/2 at peer', () => peerStatus(s, '127.0.0.1').lastError);
      expect(err).toMatchObject({ code: 6, subcode: 2, message: 'maintenance — back at 10:00', direction: 'received' });
      expect(err.text).toContain('Cease / Administrative Shutdown');
      expect(peerStatus(s, '127.0.0.1').state).not.toBe('Established');
    }
  });

  it('refuses TCP-MD5 and TTL security with UnsupportedTransportError where the FFI cannot load; other peers run', () => {
    setLibcLoader(() => {
      throw new Error('koffi: no prebuilt binary');
    });
    try {
      const s = new BgpSpeaker({ asn: 65000, routerId: '192.0.2.1', listen: false });
      expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, password: 'secret' })).toThrow(UnsupportedTransportError);
      expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, password: 'secret' })).toThrow(
        /TCP_MD5SIG.*cannot be set on this platform.*koffi: no prebuilt binary/,
      );
      expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, ttlSecurity: 1 })).toThrow(/TTL security.*cannot be set on this platform/);
      expect(s.status()).toEqual([]);
      s.addPeer({ address: '192.0.2.3', asn: 65001 });
      expect(s.status().map((p) => p.address)).toEqual(['192.0.2.3']);
    } finally {
      setLibcLoader(undefined);
    }
  });

  it('rejects a password or hop count the kernel cannot take, naming the field', () => {
    const s = new BgpSpeaker({ asn: 65000, routerId: '192.0.2.1', listen: false });
    expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, password: 'x'.repeat(81) })).toThrow(
      /peer 192\.0\.2\.2: password: the TCP-MD5 password is 81 bytes; Linux takes at most 80/,
    );
    expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, ttlSecurity: 256 })).toThrow(/ttlSecurity must be 0\.\.255 hops, got 256/);
    expect(s.status()).toEqual([]);
  });

  it('rejects bad peer settings naming the field', () => {
    const s = new BgpSpeaker({ asn: 65000, routerId: '192.0.2.1', listen: false });
    expect(() => s.addPeer({ address: 'not-an-ip', asn: 65001 })).toThrow(/peer address "not-an-ip"/);
    expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, holdTime: 2 })).toThrow(/holdTime/);
    expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, nextHopV6: '10.0.0.1' })).toThrow(/nextHopV6 must be an IPv6 address/);
    expect(() => s.addPeer({ address: '192.0.2.2', asn: 65001, exportPolicies: ['nope'] })).toThrow(/unknown policy "nope"/);
    expect(() => s.originate('10.0.0.0/8', { communities: ['65536:1'] })).toThrow(/communities\[0\]/);
  });
});
