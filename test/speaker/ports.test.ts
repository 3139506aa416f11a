import { afterEach, describe, expect, it } from 'vitest';
import { parsePeerKey, peerId } from '../../src/speaker/peer-config.js';
import { FAST, eventually, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

describe('peer keys: address, and address:port for a second peer at one address', () => {
  it('reads and writes both forms, IPv4 and IPv6; refuses anything else by name', () => {
    expect(peerId('192.0.2.1')).toBe('192.0.2.1');
    expect(peerId('192.0.2.1', 1790)).toBe('192.0.2.1:1790');
    expect(peerId('2001:db8:0::1', 1790)).toBe('[2001:db8::1]:1790');
    expect(parsePeerKey('[2001:db8::1]:1790')).toEqual({ address: '2001:db8::1', port: 1790 });
    expect(parsePeerKey('192.0.2.1:150')).toEqual({ address: '192.0.2.1', port: 150 });
    expect(parsePeerKey('2001:db8::1')).toEqual({ address: '2001:db8::1' });
    expect(() => parsePeerKey('192.0.2.1:99999')).toThrow('"192.0.2.1:99999" is not an IP address (or address:port)');
    expect(() => parsePeerKey('router1')).toThrow('is not an IP address');
  });
});

describe('two peers at one address on different ports (Calico explicit_peering/global: ports 150 and 166)', () => {
  it('both sessions run; each is named by address:port; removing one leaves the other up', async () => {
    const a = await speaker('127.0.0.1', { asn: 64512 });
    const b = await speaker('127.0.0.2', { asn: 65001 });
    const c = await speaker('127.0.0.2', { asn: 65002 });
    // b and c only listen (a dials both): the same address, each its own port.
    for (const x of [b, c]) x.addPeer({ ...FAST, address: '127.0.0.1', asn: 64512, passive: true, families: ['ipv4'] });
    a.addPeer({ ...FAST, address: '127.0.0.2', port: b.port, asn: 65001, localAddress: '127.0.0.1', families: ['ipv4'] });
    a.addPeer({ ...FAST, address: '127.0.0.2', port: c.port, asn: 65002, localAddress: '127.0.0.1', families: ['ipv4'] });
    expect(() => a.addPeer({ ...FAST, address: '127.0.0.2', port: c.port, asn: 65002 })).toThrow(`peer 127.0.0.2:${c.port} is already configured`);

    const up = await eventually('both sessions Established', () => {
      const s = a.status();
      return s.length === 2 && s.every((p) => p.state === 'Established') ? s : undefined;
    });
    expect(up.map((p) => [p.address, p.port, p.negotiated?.peerAsn])).toEqual([
      ['127.0.0.2', b.port, 65001],
      ['127.0.0.2', c.port, 65002],
    ]);

    a.originate('198.51.100.0/24');
    await eventually('the route at b', () => routeOf(b, '198.51.100.0/24'));
    await eventually('the route at c', () => routeOf(c, '198.51.100.0/24'));
    expect(a.advertised(`127.0.0.2:${c.port}`).map((r) => r.prefix.toString())).toEqual(['198.51.100.0/24']);

    await a.removePeer(`127.0.0.2:${c.port}`);
    await eventually('c sees its session go', () => c.status()[0].state !== 'Established');
    expect(a.status().map((p) => [p.address, p.port, p.state])).toEqual([['127.0.0.2', b.port, 'Established']]);
    expect(b.status()[0].state).toBe('Established');
    // The remaining peer is still named by its address alone, and by address:port.
    expect(a.advertised('127.0.0.2').map((r) => r.prefix.toString())).toEqual(['198.51.100.0/24']);
    expect(a.advertised(`127.0.0.2:${b.port}`).map((r) => r.prefix.toString())).toEqual(['198.51.100.0/24']);
  });

  it('connections from the address go to the first peer there; when it goes, to the next', async () => {
    const a = await speaker('127.0.0.1', { asn: 64512 });
    const b = await speaker('127.0.0.2', { asn: 65001 });
    const c = await speaker('127.0.0.2', { asn: 65002 });
    // a only listens: the first peer at 127.0.0.2 (b's port) takes what comes from that address.
    a.addPeer({ ...FAST, address: '127.0.0.2', port: b.port, asn: 65001, passive: true, families: ['ipv4'] });
    a.addPeer({ ...FAST, address: '127.0.0.2', port: c.port, asn: 65002, passive: true, families: ['ipv4'] });
    // c dials a from 127.0.0.2: its OPEN (AS 65002) reaches the peer that expects 65001 and is refused.
    c.addPeer({ ...FAST, address: '127.0.0.1', port: a.port, asn: 64512, localAddress: '127.0.0.2', families: ['ipv4'] });
    await eventually('c refused by the first peer', () => c.status()[0].downReason !== undefined);
    expect(a.status().every((p) => p.state !== 'Established')).toBe(true);
    await a.removePeer('127.0.0.2');
    const up = await eventually('c Established with the remaining peer', () => {
      const s = a.status();
      return s.length === 1 && s[0].state === 'Established' ? s[0] : undefined;
    });
    expect([up.port, up.negotiated?.peerAsn]).toEqual([c.port, 65002]);
  });
});
