import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PeerHealth, socketErrorText } from '../../src/speaker/peer-status.js';
import { FAST, established, eventually, link, peerStatus, speaker, stopAll } from './helpers.js';

afterEach(stopAll);

const t = (s: number) => new Date(Date.UTC(2026, 11, 3, 3, 0, s));
const sysErr = (code: string, message: string, address?: string) => Object.assign(new Error(message), { code, ...(address ? { address } : {}) });

describe('PeerHealth', () => {
  it('keeps SINCE across connect retries and the reason of the current state only', () => {
    const h = new PeerHealth(t(0));
    expect([h.upDownSince, h.reason]).toEqual([t(0), undefined]);
    for (let i = 1; i <= 3; i++) {
      h.state('Connect', t(i * 10));
      h.connectFailed(sysErr('ECONNREFUSED', 'connect ECONNREFUSED 192.0.2.1:179'), t(i * 10 + 1));
      h.attemptFailed({ kind: 'tcpFailed' }, t(i * 10 + 1));
      h.state('Active', t(i * 10 + 1));
    }
    expect(h.upDownSince).toEqual(t(0));
    expect(h.reason).toEqual({ text: 'Socket: Connection refused', at: t(31) });
    h.state('OpenSent', t(40));
    h.state('Established', t(41));
    expect([h.upDownSince, h.reason]).toEqual([t(41), undefined]);
    h.notification('received', 'Cease / Administrative Shutdown: "maintenance"', t(50));
    expect(h.reason).toBeUndefined();
    h.sessionDown({ kind: 'notificationReceived', code: 6, subcode: 2 }, t(50));
    h.state('Idle', t(50));
    h.state('Connect', t(55));
    expect([h.upDownSince, h.reason]).toEqual([t(50), { text: 'Received: Cease / Administrative Shutdown: "maintenance"', at: t(50) }]);
    // A connection that opens and closes without an error of its own: "Connection closed".
    h.attemptFailed({ kind: 'tcpFailed' }, t(60));
    expect(h.reason).toEqual({ text: 'Socket: Connection closed', at: t(60) });
    h.attemptFailed({ kind: 'holdTimerExpired' }, t(70));
    expect(h.reason?.text).toBe('Error: Hold timer expired');
  });

  it.each([
    [sysErr('ECONNREFUSED', 'connect ECONNREFUSED 192.0.2.1:179'), 'Socket: Connection refused'],
    [sysErr('EHOSTUNREACH', 'connect EHOSTUNREACH 192.0.2.1:179'), 'Socket: No route to host'],
    [
      sysErr('EADDRNOTAVAIL', 'bind EADDRNOTAVAIL 192.0.2.10', '192.0.2.10'),
      'Socket: Cannot bind to local address 192.0.2.10: not an address of this host (EADDRNOTAVAIL)',
    ],
    [sysErr('EWHATEVER', 'something odd'), 'Socket: something odd'],
  ])('%s → %s', (err, text) => {
    expect(socketErrorText(err)).toBe(text);
  });
});

describe('BgpSpeaker status: why a peer is down, since when', () => {
  it('a refused connect: "Socket: Connection refused", SINCE unmoved by retries', async () => {
    const closed = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as AddressInfo;
        srv.close(() => resolve(port));
      });
    });
    const a = await speaker('127.0.0.1', { asn: 65001 });
    a.addPeer({ ...FAST, address: '127.0.0.9', port: closed, asn: 65009, localAddress: '127.0.0.1' });
    // 127.0.0.9 is on loopback but nothing listens there on that port.
    const first = peerStatus(a, '127.0.0.9').upDownSince;
    let connects = 0;
    a.on('stateChange', (st) => void (st.state === 'Connect' && connects++));
    const st = await eventually('two connect retries', () => connects >= 2 && peerStatus(a, '127.0.0.9'));
    expect(st.downReason?.text).toBe('Socket: Connection refused');
    expect(st.upDownSince).toEqual(first);
  });

  it('a local address that is not ours: the bind error names it', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    a.addPeer({ ...FAST, address: '127.0.0.9', port: 1179, asn: 65009, localAddress: '192.0.2.10' });
    const st = await eventually('a bind failure', () => peerStatus(a, '127.0.0.9').downReason);
    expect(st.text).toBe('Socket: Cannot bind to local address 192.0.2.10: not an address of this host (EADDRNOTAVAIL)');
  });

  it('Established clears the reason; a Cease received becomes the reason and moves SINCE', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b);
    const up = await established(a, '127.0.0.2');
    expect(up.downReason).toBeUndefined();
    expect(up.upDownSince!.getTime()).toBe(up.since.getTime());
    await b.removePeer('127.0.0.1', { message: 'maintenance' });
    const down = await eventually('the Cease', () => peerStatus(a, '127.0.0.2').downReason);
    expect(down.text).toBe('Received: Cease / Peer De-configured: "maintenance"');
    const st = peerStatus(a, '127.0.0.2');
    expect(st.state).not.toBe('Established');
    expect(st.upDownSince!.getTime()).toBeGreaterThanOrEqual(up.upDownSince!.getTime());
    // SINCE is when it went down: the NOTIFICATION and the session's end, the same moment (1 s of slack for a busy machine).
    expect(st.upDownSince!.getTime() - down.at.getTime()).toBeGreaterThanOrEqual(0);
    expect(st.upDownSince!.getTime() - down.at.getTime()).toBeLessThan(1000);
  });
});
