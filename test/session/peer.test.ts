import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Listener, canonicalRemote } from '../../src/session/listener.js';
import { Peer } from '../../src/session/peer.js';
import { UnsupportedTransportError } from '../../src/session/transport.js';
import { setLibcLoader } from '../../src/native/libc.js';
import { sessionConfig } from '../../src/session/types.js';
import type { UpdateMessage } from '../../src/wire/types.js';
import { WIRE_CODEC } from '../../src/session/connection.js';
import { loopbackPair, recorder, until } from './loopback.js';
import { VirtualClock } from './sim.js';

describe('Peer over loopback with a virtual clock (the real codec)', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  it('establishes, carries an UPDATE and End-of-RIB, keeps alive on the clock, and goes down on hold expiry when stalled', async () => {
    const p = await loopbackPair(WIRE_CODEC);
    cleanup.push(() => {
      p.a.stop();
      p.b.stop();
      return p.listener.close();
    });
    p.a.start();
    p.b.start();
    expect(await until(() => p.a.state === 'Established' && p.b.state === 'Established')).toBe(true);
    expect(p.ra.ups).toBe(1);
    expect(p.a.negotiated?.peerAs).toBe(65002);
    const u: UpdateMessage = { type: 'update', withdrawn: [], attributes: { origin: 0 }, nlri: [] };
    expect(p.b.send(u)).toBe(true);
    p.b.sendEndOfRib({ afi: 1, safi: 1 });
    expect(await until(() => p.ra.updates.length === 1 && p.ra.eor === 1)).toBe(true);
    // 30 s at a time with I/O in between (each side's KEEPALIVE arrives before the next step): both stay up.
    for (let i = 0; i < 5; i++) {
      const [inA, inB] = [p.a.stats.messagesIn, p.b.stats.messagesIn];
      p.clock.advance(30_000);
      expect(await until(() => p.a.stats.messagesIn > inA && p.b.stats.messagesIn > inB)).toBe(true);
    }
    expect(p.a.state).toBe('Established');
    expect(p.ra.downs).toEqual([]);
    // 91 s with no I/O in between: the keepalives cannot arrive, hold expires.
    p.clock.advance(91_000);
    expect(p.ra.downs).toEqual([{ kind: 'holdTimerExpired' }]);
    expect(p.rb.downs).toEqual([{ kind: 'holdTimerExpired' }]);
    expect(p.a.state).toBe('Idle');
  });

  it('messages restart the hold timer without a new timer each; it still expires hold time after the last one', async () => {
    const p = await loopbackPair(WIRE_CODEC);
    cleanup.push(() => {
      p.a.stop();
      p.b.stop();
      return p.listener.close();
    });
    let armed = 0;
    const setTimeout0 = p.clock.setTimeout.bind(p.clock);
    p.clock.setTimeout = (fn, ms) => (armed++, setTimeout0(fn, ms));
    p.a.start();
    p.b.start();
    expect(await until(() => p.a.state === 'Established' && p.b.state === 'Established')).toBe(true);
    const u: UpdateMessage = { type: 'update', withdrawn: [], attributes: { origin: 0 }, nlri: [] };
    const before = armed;
    // 500 UPDATEs, 100 ms apart on the clock: each restarts a's hold timer.
    for (let i = 0; i < 500; i++) {
      expect(p.b.send(u)).toBe(true);
      expect(await until(() => p.ra.updates.length === i + 1)).toBe(true);
      p.clock.advance(100);
    }
    // Keepalive timers (30 s each side) re-arm a few times in 50 s; hold restarts no longer arm timers.
    expect(armed - before).toBeLessThan(20);
    // No I/O from here (the clock runs synchronously, b's keepalives cannot arrive):
    // a is still up 89.8 s after the last UPDATE, and its 90 s hold timer fires just after.
    p.clock.advance(89_800);
    expect(p.a.state).toBe('Established');
    expect(p.ra.downs).toEqual([]);
    p.clock.advance(300);
    expect(p.ra.downs).toEqual([{ kind: 'holdTimerExpired' }]);
  });

  it('a ManualStop sends Cease 6/2 and the other side sees it', async () => {
    const p = await loopbackPair(WIRE_CODEC);
    cleanup.push(() => {
      p.a.stop();
      p.b.stop();
      return p.listener.close();
    });
    p.a.start();
    p.b.start();
    expect(await until(() => p.a.state === 'Established' && p.b.state === 'Established')).toBe(true);
    p.b.stop();
    expect(await until(() => p.ra.downs.length === 1)).toBe(true);
    expect(p.ra.downs[0]).toEqual({ kind: 'notificationReceived', code: 6, subcode: 2 });
    expect(p.rb.downs[0]).toEqual({ kind: 'manualStop' });
  });

  it('dials out from the configured source address, and a refused dial leaves it in Active', async () => {
    const clock = new VirtualClock();
    const seen: unknown[] = [];
    const r = recorder();
    const p = new Peer({
      session: sessionConfig({ localAs: 65001, localId: '10.0.0.1', peerAs: 65002 }),
      remoteAddress: '127.0.0.1',
      remotePort: 1,
      localAddress: '127.0.0.1',
      localPort: 0,
      scheduler: clock,
      codec: WIRE_CODEC,
      hooks: r.hooks,
      dial: (o) => {
        seen.push(o);
        return connect({ host: o.host, port: o.port, localAddress: o.localAddress });
      },
    });
    cleanup.push(() => p.stop());
    p.start();
    expect(seen).toEqual([{ host: '127.0.0.1', port: 1, localAddress: '127.0.0.1', localPort: 0 }]);
    expect(await until(() => p.state === 'Active')).toBe(true);
    // ConnectRetry brings the next attempt.
    clock.advance(120_000);
    expect(seen).toHaveLength(2);
  });

  it('refuses TCP-MD5 / TTL options with UnsupportedTransportError where the FFI cannot load, and only then', () => {
    const base = { session: sessionConfig({ localAs: 1, localId: '1.1.1.1', peerAs: 2 }), remoteAddress: '192.0.2.1' };
    let loads = 0;
    setLibcLoader(() => {
      loads++;
      throw new Error('no prebuilt binary for sparc');
    });
    try {
      expect(() => new Peer({ ...base })).not.toThrow();
      expect(() => new Peer({ ...base, password: '', ttlSecurity: 0 })).not.toThrow();
      expect(loads).toBe(0); // nothing native is loaded unless a peer asks
      expect(() => new Peer({ ...base, password: 'secret' })).toThrow(UnsupportedTransportError);
      expect(() => new Peer({ ...base, password: 'secret' })).toThrow(
        /peer 192\.0\.2\.1: a TCP-MD5 password \(TCP_MD5SIG\) is configured, but socket options cannot be set on this platform \(cannot load the FFI package koffi and libc on .*: no prebuilt binary for sparc\)/,
      );
      expect(() => new Peer({ ...base, ttlSecurity: 1 })).toThrow(/TTL security \(IP_TTL, IP_MINTTL\) is configured/);
      expect(() => new Peer({ ...base, multihopTtl: 2 })).toThrow(/an outgoing TTL \(multihop 2\)/);
      expect(loads).toBe(1); // tried once, the reason remembered
    } finally {
      setLibcLoader(undefined);
    }
  });
});

describe('Listener', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  it('canonicalises v4-mapped and scoped addresses', () => {
    expect(canonicalRemote('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalRemote('fe80::1%eth0')).toBe('fe80::1');
    expect(canonicalRemote('bogus')).toBeUndefined();
  });

  it('closes connections from unknown addresses with a log line, hands range matches to the factory', async () => {
    const logs: string[] = [];
    const listener = new Listener({ addresses: ['127.0.0.1'], port: 0, log: (l) => logs.push(l) });
    await listener.listen();
    cleanup.push(() => listener.close());
    const c1 = connect(listener.ports[0], '127.0.0.1');
    let closed = false;
    c1.on('close', () => {
      closed = true;
    });
    c1.on('error', () => {});
    expect(await until(() => closed)).toBe(true);
    expect(logs.some((l) => /closing connection from 127\.0\.0\.1:\d+: no peer configured/.test(l))).toBe(true);

    const accepted: string[] = [];
    listener.addRange('127.0.0.0/8', (remote) => ({
      accept: (s: Socket) => {
        accepted.push(remote);
        s.destroy();
        return true;
      },
    }));
    const c2 = connect(listener.ports[0], '127.0.0.1');
    c2.on('error', () => {});
    expect(await until(() => accepted.length === 1)).toBe(true);
    expect(accepted).toEqual(['127.0.0.1']);
    // An exact peer wins over the range.
    const exact: string[] = [];
    listener.addPeer('127.0.0.1', {
      accept: (s: Socket) => {
        exact.push('x');
        s.destroy();
        return true;
      },
    });
    expect(listener.lookup('::ffff:127.0.0.1')).toBeDefined();
    const c3 = connect(listener.ports[0], '127.0.0.1');
    c3.on('error', () => {});
    expect(await until(() => exact.length === 1)).toBe(true);
    expect(accepted).toHaveLength(1);
    expect(() => listener.addPeer('nope', { accept: () => true })).toThrow(/not an IP address/);
  });
});
