/**
 * The kernel FIB for real: BgpSpeakers on loopback, the receiving one
 * programming the main table of a network namespace (`kernel.netns`), where
 * 192.0.2.0/24 is connected on a veth. Checks ECMP from two peers, a route
 * deleted by hand coming back (event, not scan), a per-route refusal with
 * the reason while the rest is installed, routes persisting across a stop
 * and adopted by the next process until End-of-RIB, an unknown table and
 * a missing CAP_NET_ADMIN as one clear error with BGP still running; and
 * KernelFib alone with each writer (rtnetlink from node, `ip -batch` when
 * chosen or when koffi cannot load): the same routes, and a route the
 * kernel refuses carrying the kernel's reason.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KernelFib } from '../../src/kernel/kernel-fib.js';
import { setLibcLoader } from '../../src/native/libc.js';
import { established, eventually, FAST, link, running, speaker, stopAll } from '../speaker/helpers.js';
import { requireLab } from './require.js';
import { destroyNamespace, ip, protocolRoutes, vethNamespace } from './shell.js';

const available = requireLab([], { binaries: ['setpriv', 'node'] });
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NS = `tsbgp-i15k${process.pid}`;

const ours = () => protocolRoutes(NS);

describe.skipIf(!available.ok)('KernelFib in a namespace', () => {
  beforeAll(() => {
    vethNamespace(NS);
  });
  afterAll(() => destroyNamespace(NS));
  afterEach(stopAll);

  const kernelSpeaker = (address: string, extra: Record<string, unknown> = {}) =>
    speaker(address, {
      asn: 65000,
      kernel: {
        netns: NS,
        scanSeconds: 0,
        restartTime: 20,
        rules: [{ prefix: '198.18.0.0/24', action: 'accept', tunnel: { dev: 'tunl0' } }],
        statics: [{ prefix: '203.0.113.128/26', blackhole: true }],
        ...extra,
      },
    });

  it('installs ECMP routes, refuses per route with a reason, puts back a deleted route, and keeps routes across a restart', async () => {
    const a = await speaker('127.0.0.2', { asn: 65000 });
    const c = await speaker('127.0.0.3', { asn: 65000 });
    const b = await kernelSpeaker('127.0.0.1');
    const GR = { gracefulRestart: { restartTime: 30 } };
    link(b, a, GR, GR);
    link(b, c, GR, GR);
    await established(b, '127.0.0.2');
    await established(b, '127.0.0.3');
    a.originate('203.0.113.0/26', { nextHop: '192.0.2.7' });
    c.originate('203.0.113.0/26', { nextHop: '192.0.2.8' });
    a.originate('203.0.113.64/26', { nextHop: '192.0.2.7' });
    a.originate('198.51.100.0/24', { nextHop: '198.51.100.77' }); // on no connected network, and no route to it
    a.originate('198.18.0.0/26', { nextHop: '192.0.2.7' }); // needs tunl0, which this kernel cannot have
    await eventually(
      'routes in the namespace',
      () => {
        const t = ours();
        const r = b.kernelStatus()!.routes;
        return t['203.0.113.0/26']?.length === 2 && r.installed === 3 && r.refused === 2 ? t : undefined;
      },
      15_000,
    );
    expect(ours()).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.64/26': ['192.0.2.7'], '203.0.113.128/26': 'blackhole' });
    const st = b.kernelStatus()!;
    expect(st).toMatchObject({ enabled: true, protocol: 12, table: 254 });
    expect(st.refused.map((r) => [r.prefix, r.reason])).toEqual([
      ['198.18.0.0/26', 'interface tunl0 does not exist (next hop 192.0.2.7)'],
      ['198.51.100.0/24', expect.stringMatching(/^next hop 198\.51\.100\.77 is on no connected network and the kernel cannot reach it: .*unreachable/i)],
    ]);
    expect(b.kernelRoute('203.0.113.0/26')?.installed[0].nexthops).toEqual([
      { via: '192.0.2.7', dev: 'v0' },
      { via: '192.0.2.8', dev: 'v0' },
    ]);

    // deleted by hand: back through the listener (the scan is off)
    expect(b.kernelStatus()!.listener).toBe('netlink');
    ip('-n', NS, 'route', 'del', '203.0.113.64/26', 'proto', '12');
    await eventually('put back', () => ours()['203.0.113.64/26'] !== undefined, 5000);
    expect(b.kernelStatus()!.counters.putBack).toBeGreaterThanOrEqual(1);

    // stop: routes persist
    await b.stop();
    running.splice(running.indexOf(b), 1);
    expect(Object.keys(ours()).sort()).toEqual(['203.0.113.0/26', '203.0.113.128/26', '203.0.113.64/26']);
    // meanwhile a withdraws one prefix; the next process adopts everything, then drops it after End-of-RIB
    a.withdraw('203.0.113.64/26');
    const b2 = await kernelSpeaker('127.0.0.1', {});
    expect(b2.kernelStatus()!.restarting).toBe(true);
    expect(b2.kernelStatus()!.routes.stale).toBe(3);
    expect(Object.keys(ours()).sort()).toEqual(['203.0.113.0/26', '203.0.113.128/26', '203.0.113.64/26']);
    // b2 dials a and c (they accept it as their configured peer 127.0.0.1)
    for (const x of [a, c]) b2.addPeer({ ...FAST, address: x.address, port: x.port, asn: 65000, localAddress: b2.address, ...GR });
    await eventually('restart over', () => b2.kernelStatus()!.restarting === false, 20_000);
    await eventually('withdrawn route gone', () => ours()['203.0.113.64/26'] === undefined, 5000);
    expect(ours()).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.128/26': 'blackhole' });
  }, 60_000);

  it('an unknown table is one clear error; BGP runs on', async () => {
    const a = await speaker('127.0.0.2', { asn: 65000 });
    const b = await kernelSpeaker('127.0.0.1', { table: 'no-such-table' });
    expect(b.kernelStatus()).toMatchObject({
      enabled: false,
      error: 'routing table "no-such-table" does not exist (not a number, and not named in /etc/iproute2/rt_tables)',
    });
    link(b, a);
    await established(b, '127.0.0.2');
  }, 30_000);

  it('without CAP_NET_ADMIN kernel programming is off with one clear error', () => {
    const script = `import { KernelFib } from ${JSON.stringify(join(repo, 'src/index.ts'))};
      const f = new KernelFib({ netns: ${JSON.stringify(NS)} }); await f.start(); console.log(JSON.stringify(f.status()));`;
    const r = spawnSync(
      'setpriv',
      ['--inh-caps=-net_admin', '--bounding-set=-net_admin', '--', 'node', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: repo, encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.stderr).toBe('');
    const st = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(st).toMatchObject({
      enabled: false,
      error:
        'no permission to change routes (CAP_NET_ADMIN missing in this process and for ip: RTNETLINK answers: Operation not permitted); run as root or grant the capability',
    });
  });

  describe('KernelFib alone, with each writer (table 100)', () => {
    const table100 = () => protocolRoutes(NS, { table: '100' });
    const exercise = async (fib: KernelFib) => {
      await fib.start();
      fib.setRoute('203.0.113.0/26', { kind: 'unicast', gateways: [{ address: '192.0.2.7' }, { address: '192.0.2.8' }] });
      fib.setRoute('203.0.113.128/26', { kind: 'blackhole' });
      // lo is no way to 192.0.2.7: the kernel says no, and why
      fib.setRoute('203.0.113.64/26', { kind: 'unicast', gateways: [{ address: '192.0.2.7', dev: 'lo' }] });
      await fib.flushed();
      // deleted by hand: put back by event, whichever listener
      ip('-n', NS, 'route', 'del', '203.0.113.128/26', 'table', '100', 'proto', '12');
      await eventually('put back', () => table100()['203.0.113.128/26'] !== undefined, 10_000);
      await fib.flushed(); // the put-back write's outcome recorded (the kernel may hold it a moment before)
      const installed = table100();
      const st = fib.status();
      for (const p of ['203.0.113.0/26', '203.0.113.64/26', '203.0.113.128/26']) fib.setRoute(p, undefined);
      await fib.flushed();
      const after = table100();
      await fib.stop();
      return { installed, st, after };
    };

    it("rtnetlink (the default): routes written, a refusal carries the kernel's reason", async () => {
      const logs: string[] = [];
      const r = await exercise(new KernelFib({ netns: NS, table: 100, scanSeconds: 0, adopt: false, log: (l, m) => logs.push(`${l} ${m}`) }));
      expect(r.st).toMatchObject({ enabled: true, writer: 'netlink', listener: 'netlink', routes: { installed: 2, refused: 1 } });
      expect(r.st.writerNote).toBeUndefined();
      expect(r.st.listenerNote).toBeUndefined();
      expect(r.installed).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.128/26': 'blackhole' });
      // strerror of the errno, and the kernel's extended message
      expect(r.st.refused).toEqual([{ prefix: '203.0.113.64/26', reason: 'Network is unreachable (Nexthop has invalid gateway)', by: 'kernel' }]);
      expect(logs).toContain('warning kernel refused route 203.0.113.64/26: Network is unreachable (Nexthop has invalid gateway)');
      expect(r.after).toEqual({});
    }, 30_000);

    it("iproute2 when chosen: the same routes, the refusal in ip's words", async () => {
      const r = await exercise(new KernelFib({ netns: NS, table: 100, scanSeconds: 0, adopt: false, writer: 'iproute2' }));
      expect(r.st).toMatchObject({ enabled: true, writer: 'iproute2', routes: { installed: 2, refused: 1 } });
      expect(r.st.writerNote).toBeUndefined();
      expect(r.installed).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.128/26': 'blackhole' });
      expect(r.st.refused).toEqual([{ prefix: '203.0.113.64/26', reason: 'Nexthop has invalid gateway.', by: 'kernel' }]);
      expect(r.after).toEqual({});
    }, 30_000);

    // Our own writes are not heard back (the kernel filters the echoes by the writer's port id); someone else's are.
    // (`ip monitor`, the fallback, recognises echoes by content and cannot pass this: its echoes lag behind the writer.)
    for (const listener of ['netlink'] as const) {
      it(`the ${listener} listener: our own writes cause no put-back, someone else's delete and change are put right`, async () => {
        const fib = new KernelFib({ netns: NS, table: 100, scanSeconds: 0, adopt: false, listener });
        await fib.start();
        try {
          expect(fib.status()).toMatchObject({ enabled: true, writer: 'netlink', listener });
          const N = 2000;
          const gw = { kind: 'unicast' as const, gateways: [{ address: '192.0.2.7' }, { address: '192.0.2.8' }] };
          const hosts = Array.from({ length: N }, (_, i) => `198.18.${i >> 8}.${i & 255}`);
          const prefixes = hosts.map((h) => `${h}/32`);
          for (const p of prefixes) fib.setRoute(p, gw);
          await fib.flushed();
          // set in one turn of the event loop: planned and written as one batch
          expect(fib.status().counters).toMatchObject({ written: N, batches: 1 });
          // a route changed by us again (one next hop less) and half of them withdrawn: still all our own
          fib.setRoute(prefixes[0], { kind: 'unicast', gateways: [{ address: '192.0.2.7' }] });
          for (const p of prefixes.slice(N / 2)) fib.setRoute(p, undefined);
          await fib.flushed();
          const quiet = fib.status();
          expect(Object.keys(table100()).length).toBe(N / 2);
          // someone else deletes one and changes another (other next hop, same protocol): both are put right by event
          ip('-n', NS, 'route', 'del', prefixes[1], 'table', '100', 'proto', '12');
          ip('-n', NS, 'route', 'replace', prefixes[2], 'table', '100', 'proto', '12', 'via', '192.0.2.9');
          await eventually(
            'put back',
            () => {
              const t = table100(); // ip prints a /32 as a bare address
              return t[hosts[1]]?.length === 2 && t[hosts[2]]?.length === 2 ? t : undefined;
            },
            10_000,
          ).catch((e: Error) => {
            throw new Error(`${e.message}: ${JSON.stringify([table100()[hosts[1]], table100()[hosts[2]], fib.status().counters])}`);
          });
          const after = fib.status();
          // what the listener reported is the two changes only
          expect(table100()[hosts[2]]).toEqual(['192.0.2.7', '192.0.2.8']);
          expect(quiet.counters.foreign).toBe(0);
          expect(quiet.counters.putBack).toBe(0);
          expect(quiet.counters.written).toBe(N + 1 + N / 2);
          expect(quiet.counters.batches).toBe(2);
          expect(after.counters.putBack).toBe(1);
          expect(after.counters.foreign - quiet.counters.foreign).toBe(2);
          expect(after.counters.written - quiet.counters.written).toBe(2);
          expect(after.counters.batches - quiet.counters.batches).toBeGreaterThanOrEqual(1);
          expect(after.counters.batches - quiet.counters.batches).toBeLessThanOrEqual(2);
          expect(after.counters.lost).toBe(0);
        } finally {
          for (let i = 0; i < 2000; i++) fib.setRoute(`198.18.${i >> 8}.${i & 255}/32`, undefined);
          await fib.flushed();
          await fib.stop();
        }
        expect(Object.keys(table100())).toEqual([]);
      }, 30_000);
    }

    it("a burst that overruns the listener's buffer (ENOBUFS) is counted, warned of once per resync, and the table read again: a route deleted inside the burst is back", async () => {
      const logs: string[] = [];
      // the smallest buffer the kernel allows (it raises 1024 to its minimum): a burst of others' changes overruns it
      const fib = new KernelFib({ netns: NS, table: 100, scanSeconds: 0, adopt: false, listenerBuffer: 1024, log: (l, m) => logs.push(`${l} ${m}`) });
      await fib.start();
      try {
        expect(fib.status()).toMatchObject({ enabled: true, listener: 'netlink', counters: { lost: 0 } });
        fib.setRoute('203.0.113.0/26', { kind: 'unicast', gateways: [{ address: '192.0.2.7' }] });
        fib.setRoute('203.0.113.64/26', { kind: 'unicast', gateways: [{ address: '192.0.2.8' }] });
        await fib.flushed();
        const before = fib.status().counters;
        // someone else's burst: 20,000 routes into table 200, and one of ours deleted in the middle of it
        const adds = (from: number) =>
          Array.from({ length: 10_000 }, (_, i) => `route add 198.18.${((from + i) >> 8) & 255}.${(from + i) & 255}/32 via 192.0.2.9 table 200\n`).join('');
        const burst = `${adds(0)}route del 203.0.113.0/26 table 100 proto 12\n${adds(10_000)}`;
        const r = spawnSync('ip', ['-n', NS, '-batch', '-'], { input: burst, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
        await eventually('the deleted route back', () => table100()['203.0.113.0/26'] !== undefined, 15_000);
        await fib.flushed();
        const after = fib.status().counters;
        expect(after.lost).toBeGreaterThan(0);
        expect(after.resyncs).toBeGreaterThan(before.resyncs);
        const warned = logs.filter((l) => l.startsWith('warning') && l.includes('ENOBUFS'));
        expect(warned.length).toBeGreaterThan(0);
        // not one warning per overrun: at most one per resync that followed
        expect(warned.length).toBeLessThanOrEqual(after.resyncs - before.resyncs);
        expect(table100()).toEqual({ '203.0.113.0/26': ['192.0.2.7'], '203.0.113.64/26': ['192.0.2.8'] });
        // others' routes are left alone
        expect(ip('-n', NS, 'route', 'show', 'table', '200').trim().split('\n')).toHaveLength(20_000);
      } finally {
        ip('-n', NS, 'route', 'flush', 'table', '200');
        for (const p of ['203.0.113.0/26', '203.0.113.64/26']) fib.setRoute(p, undefined);
        await fib.flushed();
        await fib.stop();
      }
      expect(Object.keys(table100())).toEqual([]);
    }, 60_000);

    it('an interface going down and up: the route through it is refused while down (the kernel flushed it) and back once it is up, by events', async () => {
      ip('-n', NS, 'link', 'add', 'w0', 'type', 'veth', 'peer', 'name', 'w1');
      ip('-n', NS, 'link', 'set', 'w1', 'up');
      ip('-n', NS, 'link', 'set', 'w0', 'up');
      ip('-n', NS, 'addr', 'add', '198.51.100.1/24', 'dev', 'w0');
      const fib = new KernelFib({ netns: NS, table: 100, scanSeconds: 0, adopt: false });
      try {
        await fib.start();
        expect(fib.status()).toMatchObject({ enabled: true, listener: 'netlink' });
        fib.setRoute('203.0.113.192/26', { kind: 'unicast', gateways: [{ address: '198.51.100.7' }] });
        await fib.flushed();
        expect(table100()['203.0.113.192/26']).toEqual(['198.51.100.7']);
        const resyncs = fib.status().counters.resyncs;
        ip('-n', NS, 'link', 'set', 'w0', 'down');
        // the kernel drops the connected network (an event) and our route through it (no event): both noticed
        await eventually('refused while down', () => fib.status().refused.find((r) => r.prefix === '203.0.113.192/26'), 10_000);
        expect(table100()['203.0.113.192/26']).toBeUndefined();
        ip('-n', NS, 'link', 'set', 'w0', 'up');
        await eventually('back once up', () => table100()['203.0.113.192/26'], 10_000);
        expect(table100()['203.0.113.192/26']).toEqual(['198.51.100.7']);
        await eventually('nothing refused', () => fib.status().refused.length === 0, 10_000);
        expect(fib.status().counters.resyncs).toBeGreaterThan(resyncs); // re-read on the events, the scan is off
        expect(fib.status().counters.lost).toBe(0);
        fib.setRoute('203.0.113.192/26', undefined);
        await fib.flushed();
      } finally {
        await fib.stop();
        ip('-n', NS, 'link', 'del', 'w0');
      }
      expect(table100()['203.0.113.192/26']).toBeUndefined();
    }, 30_000);

    it('iproute2 where koffi cannot load, said once in the log and in status', async () => {
      setLibcLoader(() => {
        throw new Error('no prebuilt binary for sparc');
      });
      try {
        const logs: string[] = [];
        const r = await exercise(new KernelFib({ netns: NS, table: 100, scanSeconds: 0, adopt: false, log: (l, m) => logs.push(`${l} ${m}`) }));
        expect(r.st).toMatchObject({ enabled: true, writer: 'iproute2', routes: { installed: 2, refused: 1 } });
        expect(r.st.writerNote).toMatch(
          /^cannot write routes over netlink from this process \(cannot load the FFI package koffi and libc on linux\/\w+: no prebuilt binary for sparc\): writing through ip -batch$/,
        );
        // the listener falls back too: `ip monitor`
        expect(r.st).toMatchObject({ listener: 'iproute2' });
        expect(r.st.listenerNote).toMatch(
          /^cannot listen to the kernel over netlink \(cannot load the FFI package koffi and libc on linux\/\w+: no prebuilt binary for sparc\): watching through ip monitor$/,
        );
        expect(logs.filter((l) => l.includes('koffi'))).toEqual([`warning kernel: ${r.st.writerNote}`, `warning kernel: ${r.st.listenerNote}`]);
        expect(r.installed).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.128/26': 'blackhole' });
        expect(r.after).toEqual({});
      } finally {
        setLibcLoader(undefined);
      }
    }, 30_000);
  });
});
