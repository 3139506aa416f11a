import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { hintAfterMs, MD5_NO_ANSWER_HINT, transportHint } from '../../src/speaker/transport-hint.js';
import { eventually, established, FAST, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

/** TcpExt TCPMD5Failure of /proc/net/netstat: segments the kernel dropped because their MD5 signature was wrong. */
function md5Failures(counter: 'TCPMD5Failure' | 'TCPMD5NotFound' = 'TCPMD5Failure'): number {
  const [names, values] = readFileSync('/proc/net/netstat', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('TcpExt:'))
    .map((l) => l.split(/\s+/));
  const i = names!.indexOf(counter);
  if (i < 0) throw new Error(`/proc/net/netstat has no TcpExt ${counter} counter`);
  return Number(values![i]);
}

/** True when a plain (unsigned) TCP connect from `from` to `port` completes; false once the kernel has dropped its SYN for want of a signature. */
async function plainConnectsOrDropped(from: string, to: string, port: number): Promise<boolean> {
  const before = md5Failures('TCPMD5NotFound');
  const s = connect({ host: to, port, localAddress: from });
  let connected = false;
  s.once('connect', () => (connected = true));
  s.once('error', () => undefined);
  try {
    await eventually('the SYN dropped or the connection made', () => connected || md5Failures('TCPMD5NotFound') > before);
    return connected;
  } finally {
    s.destroy();
  }
}

/** Resolves true when a plain (unsigned) TCP connect from `from` to `port` completes within `ms`. */
function plainConnects(from: string, to: string, port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: to, port, localAddress: from });
    const t = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, ms);
    s.once('connect', () => {
      clearTimeout(t);
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

describe('TCP-MD5 on loopback (real kernel, koffi)', () => {
  it('matching keys: up whichever side connects; a key rotated on both sides brings the session back; a wrong key keeps it down', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    // b passive: a connects (key on a's outgoing socket, on b's listener).
    link(a, b, { families: ['ipv4'], password: 'k1' }, { families: ['ipv4'], password: 'k1', passive: true });
    await established(a, '127.0.0.2');
    a.originate('198.18.1.0/24');
    await eventually('route at b', () => routeOf(b, '198.18.1.0/24'));

    // Rotated on both sides, and now a is passive: b connects.
    a.updatePeer({ ...FAST, address: '127.0.0.2', port: b.port, asn: 65002, localAddress: '127.0.0.1', families: ['ipv4'], password: 'k2', passive: true });
    b.updatePeer({ ...FAST, address: '127.0.0.1', port: a.port, asn: 65001, localAddress: '127.0.0.2', families: ['ipv4'], password: 'k2' });
    await established(b, '127.0.0.1');
    await eventually('route at b again', () => routeOf(b, '198.18.1.0/24'));

    // b changes its key alone: the segments are dropped, nothing gets through.
    b.updatePeer({ ...FAST, address: '127.0.0.1', port: a.port, asn: 65001, localAddress: '127.0.0.2', families: ['ipv4'], password: 'other' });
    await eventually('a down', () => peerStatus(a, '127.0.0.2').state !== 'Established');
    const inBefore = peerStatus(a, '127.0.0.2').counters.messagesIn;
    // b keeps dialling (ConnectRetry 1 s, and the SYN's retransmissions): wait until the kernel has dropped three
    // of its signed SYNs for a bad MD5 signature (a counter of this network namespace), not for a fixed time.
    const dropped = md5Failures();
    await eventually('three SYNs dropped for a bad MD5 signature', () => md5Failures() >= dropped + 3, 15_000);
    for (const [s, p] of [
      [a, '127.0.0.2'],
      [b, '127.0.0.1'],
    ] as const)
      expect(peerStatus(s, p).state).not.toBe('Established');
    expect(peerStatus(a, '127.0.0.2').counters.messagesIn).toBe(inBefore);
    expect(routeOf(b, '198.18.1.0/24')).toBeUndefined();
  }, 30_000);

  it('a dual-stack listener takes an IPv4 peer key as v4-mapped; removePeer deletes the key from the kernel', async () => {
    const b = await speaker('127.0.0.2', { asn: 65002, listen: { addresses: ['::'], port: 0 } });
    const a = await speaker('127.0.0.3', { asn: 65001 });
    b.addPeer({ ...FAST, address: '127.0.0.3', asn: 65001, families: ['ipv4'], password: 'mapped', passive: true });
    a.addPeer({ ...FAST, address: '127.0.0.2', port: b.port, asn: 65002, localAddress: '127.0.0.3', families: ['ipv4'], password: 'mapped' });
    await established(b, '127.0.0.3');
    // While b holds a key for 127.0.0.4, an unsigned SYN from there is dropped by the kernel.
    b.addPeer({ ...FAST, address: '127.0.0.4', asn: 65001, families: ['ipv4'], password: 'x', passive: true });
    expect(await plainConnectsOrDropped('127.0.0.4', '127.0.0.2', b.port!)).toBe(false);
    await b.removePeer('127.0.0.4');
    expect(await plainConnects('127.0.0.4', '127.0.0.2', b.port!, 5000)).toBe(true);
    expect(peerStatus(b, '127.0.0.3').state).toBe('Established');
  }, 30_000);

  it('TTL security closes an accepted connection whose SYN came from too far (TTL 64 on loopback), before reading a byte', async () => {
    const lines: string[] = [];
    const b = await speaker('127.0.0.2', { asn: 65002, log: (_level, line) => lines.push(line) });
    b.addPeer({ ...FAST, address: '127.0.0.4', asn: 65001, families: ['ipv4'], ttlSecurity: 1, passive: true });
    const closed = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.2', port: b.port!, localAddress: '127.0.0.4' });
      s.on('connect', () => s.write(Buffer.alloc(19, 0xff)));
      s.on('error', () => undefined);
      s.on('close', () => resolve(true));
      setTimeout(() => {
        s.destroy();
        resolve(false);
      }, 5000);
    });
    expect(closed).toBe(true);
    expect(lines.join('\n')).toContain('TTL security: the SYN from 127.0.0.4 arrived with TTL 64, so it is 192 hops away; 1 allowed (a minimum TTL of 255)');
    expect(peerStatus(b, '127.0.0.4').counters.messagesIn).toBe(0);
  });

  it('TTL security with hops 1 on loopback (TTL 255 both ways) comes up', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b, { families: ['ipv4'], ttlSecurity: 1, password: 'both' }, { families: ['ipv4'], ttlSecurity: 1, password: 'both' });
    await established(a, '127.0.0.2');
    await established(b, '127.0.0.1');
    expect(peerStatus(a, '127.0.0.2').hint).toBeUndefined();
  }, 30_000);
});

describe('the TCP-MD5 status hint', () => {
  it('shows once a peer with a password has been silent for twice ConnectRetry (at least 10 s), never when Established or without one', () => {
    expect(hintAfterMs({})).toBe(10_000);
    expect(hintAfterMs({ connectRetryTime: 30 })).toBe(60_000);
    expect(transportHint({ password: 'k' }, 'Active', 9_999)).toBeUndefined();
    expect(transportHint({ password: 'k' }, 'Active', 10_000)).toBe(MD5_NO_ANSWER_HINT);
    expect(transportHint({ password: 'k' }, 'Connect', 60_000)).toBe('TCP-MD5 configured; no answer from the peer: check the key first');
    expect(transportHint({ password: 'k' }, 'Established', 60_000)).toBeUndefined();
    expect(transportHint({}, 'Active', 60_000)).toBeUndefined();
    expect(transportHint({ password: 'k', connectRetryTime: 30 }, 'Idle', 59_000)).toBeUndefined();
  });
});
