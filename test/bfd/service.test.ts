import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { encodePacket } from '../../src/bfd/packet.js';
import type { BfdChange } from '../../src/bfd/runtime.js';
import { setLibcLoader } from '../../src/native/libc.js';
import { BfdService } from '../../src/bfd/service.js';
import { eventually } from '../speaker/helpers.js';
import { bfdPacket, ms, timers } from './sim.js';

const services: BfdService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
});

async function service(opts: ConstructorParameters<typeof BfdService>[0]): Promise<BfdService> {
  const s = new BfdService(opts);
  services.push(s);
  await s.start();
  return s;
}

function next(s: BfdService, pred: (c: BfdChange) => boolean, timeoutMs = 10_000): Promise<BfdChange> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      s.off('change', on);
      reject(new Error('no such BFD change in time'));
    }, timeoutMs);
    const on = (c: BfdChange): void => {
      if (!pred(c)) return;
      clearTimeout(t);
      s.off('change', on);
      resolve(c);
    };
    s.on('change', on);
  });
}

describe.each([
  ['worker thread', true, '127.0.0.1'],
  ['inline', false, '127.0.0.1'],
  ['worker thread, IPv6', true, '::1'],
])(
  'BfdService over real UDP (%s)',
  (_name, thread, addr) => {
    it('brings a session up, negotiates, and follows the remote down and back up', async () => {
      const a = await service({ thread, port: 0, listen: [addr] });
      const b = await service({ thread, port: 0, listen: [addr] });
      const t = timers(100, 100, 3);
      const upA = next(a, (c) => c.status.state === 'Up');
      const upB = next(b, (c) => c.status.state === 'Up');
      a.add({ peer: addr, port: b.ports[0], timers: t });
      b.add({ peer: addr, port: a.ports[0], timers: timers(150, 120, 4) });
      const [ca, cb] = await Promise.all([upA, upB]);
      expect(ca.from).toMatch(/Down|Init/);
      expect(cb.status.state).toBe('Up');
      // After the Poll/Final of going Up: A sends every max(100, 120) ms and waits 4 × max(100, 150).
      await next(a, (c) => c.status.txIntervalMs === 120 && c.status.detectionTimeMs === 600).catch(() => undefined);
      expect(a.status(addr)).toMatchObject({ state: 'Up', txIntervalMs: 120, detectionTimeMs: 600, remoteMultiplier: 4 });

      // A's packets now go nowhere: B notices within its detection time (3 × 150), A hears B's Down.
      const downB = next(b, (c) => c.status.state === 'Down');
      const downA = next(a, (c) => c.status.state === 'Down');
      const cutAt = performance.now();
      a.update({ peer: addr, port: 9, timers: t });
      const db = await downB;
      const took = performance.now() - cutAt;
      expect(db.status.lastDiag).toEqual({ code: 1, text: 'Control Detection Time Expired' });
      expect(took).toBeLessThan(3000); // 450 ms nominal; honest slack for a loaded machine
      const da = await downA;
      expect(da.status.lastDiag.code).toBe(3);

      const back = Promise.all([next(a, (c) => c.status.state === 'Up'), next(b, (c) => c.status.state === 'Up')]);
      a.update({ peer: addr, port: b.ports[0], timers: t });
      await back;
      expect(a.status(addr)?.counters.upTransitions).toBe(2);
    });

    it('a removed session says AdminDown, which the remote reports as such (RFC 5882 §3.2)', async () => {
      const a = await service({ thread, port: 0, listen: [addr] });
      const b = await service({ thread, port: 0, listen: [addr] });
      const up = Promise.all([next(a, (c) => c.status.state === 'Up'), next(b, (c) => c.status.state === 'Up')]);
      a.add({ peer: addr, port: b.ports[0], timers: timers(100, 100, 3) });
      b.add({ peer: addr, port: a.ports[0], timers: timers(100, 100, 3) });
      await up;
      const down = next(b, (c) => c.status.state === 'Down');
      a.remove(addr);
      const d = await down;
      expect(d.remoteAdminDown).toBe(true);
      expect(d.status.lastDiag.code).toBe(3);
      expect(a.status(addr)).toBeUndefined();
    });
  },
  30_000,
);

/** A UDP socket on `addr` sending with this TTL / Hop Limit. */
async function sender(addr: string, ttl: number): Promise<Socket> {
  const s = createSocket(addr.includes(':') ? 'udp6' : 'udp4');
  await new Promise<void>((r) => s.bind({ address: addr, port: 0 }, () => r()));
  s.setTTL(ttl);
  return s;
}

/** A BFD Down packet from a new remote (Your Discriminator 0): a Down session that takes it goes Init. */
const hello = encodePacket(bfdPacket({ myDiscr: 0x1234, requiredMinRx: 100_000 }));
const send = (s: Socket, port: number, addr: string): Promise<void> => new Promise((r) => s.send(hello, port, addr, () => r()));

describe.each([
  ['worker thread', true, '127.0.0.1'],
  ['worker thread, IPv6', true, '::1'],
  ['inline', false, '127.0.0.1'],
])(
  'received TTL check, RFC 5881 §5 (%s)',
  (_name, thread, addr) => {
    it('the kernel drops a packet with TTL 254 (counted), one with 255 reaches the session', async () => {
      const a = await service({ thread, port: 0, listen: [addr] });
      expect(a.ttlCheck).toEqual({ checked: true });
      a.add({ peer: addr, port: 9, timers: timers(100, 100, 3) });
      const far = await sender(addr, 254);
      for (let i = 0; i < 3; i++) await send(far, a.ports[0], addr);
      far.close();
      await eventually('3 kernel drops reported', () => (a.kernelDrops ?? 0) >= 3, 10_000);
      expect(a.kernelDrops).toBe(3);
      expect(a.status(addr)).toMatchObject({ state: 'Down', counters: { packetsIn: 0 } });
      expect(a.discarded).toBe(0);

      const init = next(a, (c) => c.status.state === 'Init');
      const near = await sender(addr, 255);
      await send(near, a.ports[0], addr);
      near.close();
      expect((await init).status.counters.packetsIn).toBe(1);
    });
  },
  30_000,
);

describe('BfdService edges', () => {
  it('where koffi cannot load, BFD runs without the TTL check and says so', async () => {
    setLibcLoader(() => {
      throw new Error('no prebuilt binary for sparc');
    });
    try {
      const logs: string[] = [];
      const a = await service({ thread: false, port: 0, listen: ['127.0.0.1'], log: (_l, m) => logs.push(m) });
      expect(a.ttlCheck).toEqual({
        checked: false,
        reason: expect.stringMatching(/^\[127\.0\.0\.1\]: cannot load the FFI package koffi .*no prebuilt binary for sparc/),
      });
      expect(logs.some((m) => /the received TTL is not checked .*koffi/.test(m))).toBe(true);
      a.add({ peer: '127.0.0.1', port: 9, timers: timers(100, 100, 3) });
      const init = next(a, (c) => c.status.state === 'Init');
      const far = await sender('127.0.0.1', 254);
      await send(far, a.ports[0], '127.0.0.1');
      far.close();
      expect((await init).status.counters.packetsIn).toBe(1);
      expect(a.kernelDrops).toBeUndefined();
    } finally {
      setLibcLoader(undefined);
    }
  });

  it('counts and drops bad packets; the session carries on', async () => {
    const a = await service({ port: 0, listen: ['127.0.0.1'] });
    const s = await sender('127.0.0.1', 255);
    await new Promise<void>((r) => s.send(Buffer.from([0x20, 0x40, 0, 24]), a.ports[0], '127.0.0.1', () => r()));
    await new Promise<void>((r) => s.send(Buffer.alloc(24), a.ports[0], '127.0.0.1', () => r()));
    s.close();
    a.add({ peer: '127.0.0.1', port: 9, timers: timers(100, 100, 3) });
    const deadline = Date.now() + 5000;
    while (a.discarded < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(a.discarded).toBe(2);
    expect(a.lastDiscard).toMatch(/from 127\.0\.0\.1: /);
    expect(a.status('127.0.0.1')?.state).toBe('Down');
  });

  it('says which address and port it could not bind', async () => {
    const a = await service({ port: 0, listen: ['127.0.0.1'] });
    const b = new BfdService({ port: a.ports[0], listen: ['127.0.0.1'] });
    services.push(b);
    await expect(b.start()).rejects.toThrow(new RegExp(`cannot listen for BFD on \\[127\\.0\\.0\\.1\\]:${a.ports[0]}`));
    expect(b.failure).toMatch(/cannot listen/);
  });

  it('hands each listening socket to the GTSM seam', async () => {
    const { UdpTransport } = await import('../../src/bfd/udp.js');
    const seen: number[] = [];
    const u = new UdpTransport({ port: 0, listen: ['127.0.0.1'], secureSocket: (_s, fam) => seen.push(fam) }, () => {});
    await u.start();
    await u.stop();
    expect(seen).toEqual([4]);
  });

  it('refuses timers outside the protocol ranges with the field named', async () => {
    const { BfdRuntime } = await import('../../src/bfd/runtime.js');
    const { realScheduler } = await import('../../src/session/clock.js');
    const r = new BfdRuntime({ open() {}, send() {}, close() {} }, realScheduler, () => {});
    expect(() => r.add({ peer: '192.0.2.1', timers: { ...timers(100, 100, 3), detectMult: 0 } })).toThrow(
      /BFD session to 192\.0\.2\.1: detectMult must be 1\.\.255/,
    );
    expect(ms(1)).toBe(1000);
  });
});
