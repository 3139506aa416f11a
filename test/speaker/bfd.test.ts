import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { encodePacket } from '../../src/bfd/packet.js';
import { bfdPacket } from '../bfd/sim.js';
import { BfdService } from '../../src/bfd/service.js';
import { BgpSpeaker, type PeerBfdStatus } from '../../src/index.js';
import { eventually, established, link, peerStatus, routeOf, running, speaker, stopAll } from './helpers.js';

const fakes: BfdService[] = [];
afterEach(async () => {
  await stopAll();
  await Promise.all(fakes.splice(0).map((f) => f.stop()));
});

async function freeUdpPort(address: string): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, address, () => r()));
  const p = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

/** A stands in for B's BFD: a BFD speaker at 127.0.0.2 that the test can silence and restore. */
async function fakeBfdAtB(portA: number, portB: number, timers = { desiredMinTx: 100_000, requiredMinRx: 100_000, detectMult: 3 }) {
  const f = new BfdService({ thread: false, port: portB, listen: ['127.0.0.2'] });
  fakes.push(f);
  await f.start();
  f.add({ peer: '127.0.0.1', local: '127.0.0.2', port: portA, timers });
  return {
    silence: () => f.update({ peer: '127.0.0.1', local: '127.0.0.2', port: 9, timers }),
    restore: () => f.update({ peer: '127.0.0.1', local: '127.0.0.2', port: portA, timers }),
    remove: () => f.remove('127.0.0.1'),
  };
}

describe('BGP as a BFD client (RFC 5882)', () => {
  it('BFD down takes the BGP session down at once with Cease 10, routes withdrawn; BFD back → BGP back', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const portB = await freeUdpPort('127.0.0.2');
    const a = await speaker('127.0.0.1', { asn: 65001, bfd: { port: portA, peerPort: portB, listen: ['127.0.0.1'] } });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    const changes: [string, PeerBfdStatus['state'], PeerBfdStatus['state']][] = [];
    a.on('bfdStateChange', (peer, st, from) => changes.push([peer, from, st.state]));
    link(a, b, { bfd: { minRx: 100, minTx: 100, multiplier: 3 }, holdTime: 90 }, { holdTime: 90 });
    const fake = await fakeBfdAtB(portA, portB);
    b.originate('198.51.100.0/24');
    await established(a, '127.0.0.2');
    await eventually('route at A', () => routeOf(a, '198.51.100.0/24'));
    const up = await eventually('BFD up at A', () => {
      const s = peerStatus(a, '127.0.0.2').bfd;
      return s?.state === 'Up' ? s : undefined;
    });
    expect(up.desired).toEqual({ minTxMs: 100, minRxMs: 100, multiplier: 3, passive: false });
    expect(up.receivedTtl?.checked).toBe(true);
    await eventually('negotiated intervals', () => peerStatus(a, '127.0.0.2').bfd?.detectionTimeMs === 300);
    expect(peerStatus(a, '127.0.0.2').bfd?.txIntervalMs).toBe(100);

    const downs: number[] = [];
    const t0 = performance.now();
    a.on('peerDown', () => downs.push(performance.now() - t0));
    fake.silence();
    await eventually('BGP down at A', () => peerStatus(a, '127.0.0.2').state !== 'Established', 5000);
    expect(downs[0]).toBeLessThan(3000); // detection 300 ms; slack for a loaded machine
    expect(routeOf(a, '198.51.100.0/24')).toBeUndefined();
    const st = peerStatus(a, '127.0.0.2');
    expect(st.bfd?.lastDiag).toEqual({ code: 1, text: 'Control Detection Time Expired' });
    expect(st.lastError).toMatchObject({ code: 6, subcode: 10, direction: 'sent' });
    await eventually('B hears Cease 10', () => peerStatus(b, '127.0.0.1').lastError?.subcode === 10);
    expect(changes).toContainEqual(['127.0.0.2', 'Up', 'Down']);

    fake.restore();
    await eventually('BFD up again', () => peerStatus(a, '127.0.0.2').bfd?.state === 'Up', 8000);
    await established(a, '127.0.0.2');
    await eventually('route back at A', () => routeOf(a, '198.51.100.0/24'));
  });

  it('a remote AdminDown is not a failure: the BGP session stays (RFC 5882 §3.2)', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const portB = await freeUdpPort('127.0.0.2');
    const a = await speaker('127.0.0.1', { asn: 65001, bfd: { port: portA, peerPort: portB, listen: ['127.0.0.1'], thread: false } });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b, { bfd: { minRx: 100, minTx: 100 } });
    const fake = await fakeBfdAtB(portA, portB);
    await established(a, '127.0.0.2');
    await eventually('BFD up', () => peerStatus(a, '127.0.0.2').bfd?.state === 'Up');
    fake.remove();
    await eventually('BFD down', () => peerStatus(a, '127.0.0.2').bfd?.state === 'Down');
    expect(peerStatus(a, '127.0.0.2').bfd?.lastDiag.code).toBe(3);
    // The change was handled when status said Down; a route from B arriving after it shows the same session carried on.
    const since = peerStatus(a, '127.0.0.2').since;
    b.originate('198.51.100.0/24');
    await eventually('route from B after the AdminDown', () => routeOf(a, '198.51.100.0/24'));
    expect(peerStatus(a, '127.0.0.2')).toMatchObject({ state: 'Established', since });
  });

  it('a Down from a new session of the remote (FRR restarting its session as its BGP session establishes) keeps BGP (issue 32)', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const portB = await freeUdpPort('127.0.0.2');
    const a = await speaker('127.0.0.1', { asn: 65001, bfd: { port: portA, peerPort: portB, listen: ['127.0.0.1'], thread: false } });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b, { bfd: { minRx: 100, minTx: 100 }, holdTime: 90 }, { holdTime: 90 });
    const fake = await fakeBfdAtB(portA, portB);
    const est = await established(a, '127.0.0.2');
    const up = await eventually('BFD up', () => {
      const s = peerStatus(a, '127.0.0.2').bfd;
      return s?.state === 'Up' ? s : undefined;
    });
    const downs: unknown[] = [];
    a.on('peerDown', (p) => downs.push(p));
    // the remote's session goes quiet and a new one (another discriminator) says Down, as bfdd's does
    fake.silence();
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.2', () => r()));
    s.setTTL(255);
    const pkt = encodePacket(bfdPacket({ myDiscr: up.remoteDiscriminator! ^ 0x5a5a || 1 }));
    await new Promise<void>((r) => s.send(pkt, portA, '127.0.0.1', () => r()));
    s.close();
    const down = await eventually('BFD down', () => {
      const b = peerStatus(a, '127.0.0.2').bfd;
      return b?.state !== 'Up' ? b : undefined;
    });
    expect(down.lastDown).toMatchObject({ diag: { code: 3 }, remoteState: 'Down', remoteRestarted: true, remoteAdminDown: false });
    await new Promise((r) => setTimeout(r, 500));
    const st = peerStatus(a, '127.0.0.2');
    expect(st.state).toBe('Established');
    expect(st.since).toEqual(est.since);
    expect(downs).toEqual([]);
    fake.restore();
  });

  it('BFD that never comes up holds nothing back (as FRR by default): BGP establishes, BFD stays Down', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const a = await speaker('127.0.0.1', { asn: 65001, bfd: { port: portA, peerPort: 9, listen: ['127.0.0.1'], thread: false } });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b, { bfd: true });
    const st = await established(a, '127.0.0.2');
    expect(st.bfd).toMatchObject({ state: 'Down', desired: { minTxMs: 300, minRxMs: 300, multiplier: 3 }, txIntervalMs: 1000 });
  });

  it('changing BFD timers does not reset the BGP session; turning BFD off removes it from status', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const a = await speaker('127.0.0.1', { asn: 65001, bfd: { port: portA, peerPort: 9, listen: ['127.0.0.1'], thread: false } });
    const b = await speaker('127.0.0.2', { asn: 65002 });
    link(a, b, { bfd: true });
    await established(a, '127.0.0.2');
    const before = peerStatus(a, '127.0.0.2').since;
    a.updatePeer({
      address: '127.0.0.2',
      port: b.port,
      asn: 65002,
      localAddress: '127.0.0.1',
      connectRetryTime: 1,
      idleHoldTime: 1,
      holdTime: 9,
      bfd: { minTx: 500, minRx: 500, multiplier: 5 },
    });
    await eventually('new desired timers', () => peerStatus(a, '127.0.0.2').bfd?.desired.multiplier === 5);
    expect(peerStatus(a, '127.0.0.2')).toMatchObject({ state: 'Established', since: before });
    a.updatePeer({ address: '127.0.0.2', port: b.port, asn: 65002, localAddress: '127.0.0.1', connectRetryTime: 1, idleHoldTime: 1, holdTime: 9, bfd: false });
    expect(peerStatus(a, '127.0.0.2').bfd).toBeUndefined();
    expect(peerStatus(a, '127.0.0.2').since).toBe(before);
  });

  it('BFD starts when the peer is configured, not on Established: it comes Up while BGP cannot yet connect', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const portB = await freeUdpPort('127.0.0.2');
    const logs: string[] = [];
    const a = await speaker('127.0.0.1', { asn: 65001, bfd: { port: portA, peerPort: portB, listen: ['127.0.0.1'] }, log: (_l, m) => void logs.push(m) });
    await a.startBfd(); // as the agent does before it adds the first peer with BFD
    expect(logs.filter((m) => m.startsWith('BFD running in its worker thread'))).toHaveLength(1);
    const b = await speaker('127.0.0.2', { asn: 65002 }); // does not know A yet: A's connections are refused
    await fakeBfdAtB(portA, portB);
    a.addPeer({
      address: '127.0.0.2',
      port: b.port,
      asn: 65002,
      localAddress: '127.0.0.1',
      connectRetryTime: 1,
      bfd: { minRx: 100, minTx: 100, multiplier: 3 },
    });
    await eventually('BFD up at A', () => peerStatus(a, '127.0.0.2').bfd?.state === 'Up');
    expect(peerStatus(a, '127.0.0.2').state).not.toBe('Established');
    b.addPeer({ address: '127.0.0.1', port: a.port, asn: 65001, localAddress: '127.0.0.2', connectRetryTime: 1 });
    await established(a, '127.0.0.2');
    expect(peerStatus(a, '127.0.0.2').bfd?.state).toBe('Up');
    await a.startBfd(); // idempotent: one worker
    expect(logs.filter((m) => m.startsWith('BFD running'))).toHaveLength(1);
  });

  it('start() with peers already configured has their BFD running before their BGP sessions start', async () => {
    const portA = await freeUdpPort('127.0.0.1');
    const logs: string[] = [];
    const a = new BgpSpeaker({
      asn: 65001,
      routerId: '127.0.0.1',
      listen: false,
      bfd: { port: portA, peerPort: 9, listen: ['127.0.0.1'] },
      log: (_l, m) => void logs.push(m),
    });
    running.push(a);
    a.addPeer({ address: '127.0.0.2', port: 9, asn: 65002, localAddress: '127.0.0.1', bfd: true });
    expect(logs.some((m) => m.startsWith('BFD running'))).toBe(false);
    await a.start();
    expect(logs.some((m) => m.startsWith('BFD running in its worker thread'))).toBe(true);
    expect(peerStatus(a, '127.0.0.2').bfd).toMatchObject({ state: 'Down', txIntervalMs: 1000 });
  });

  it('refuses bad BFD settings naming the field', async () => {
    const a = await speaker('127.0.0.1', { asn: 65001 });
    expect(() => a.addPeer({ address: '192.0.2.9', asn: 65009, bfd: { multiplier: 0 } })).toThrow(/peer 192\.0\.2\.9: bfd\.multiplier must be 1\.\.255, got 0/);
    expect(() => a.addPeer({ address: '192.0.2.9', asn: 65009, bfd: { minRx: -5 } })).toThrow(/bfd\.minRx must be 1\.\.60000 ms/);
  });
});
