/**
 * The kernel benchmark's rows "fed by BGP" (bench/lab/kernel.ts `--only
 * bird-bgp,frr-bgp,tsbgp-bgp`): each daemon learns the same N IPv4 /32s
 * (198.18.0.0/15) from two eBGP peers and installs them into its
 * namespace's main table with two ECMP next hops, then both peers withdraw.
 * The same setup and the same clock for every daemon:
 *
 *   - two namespaces per row, made fresh for it: the device under test
 *     (`d0` 192.0.2.1/24) and the peers (`p0` 192.0.2.7/24 and 192.0.2.8/24),
 *     one veth between them;
 *   - two feeders in the peers' namespace: tsbgp speaker processes
 *     (test/interop/speaker-node.ts, compiled like the lab's tsbgp node), AS
 *     64512 both (the same neighbour AS, so every daemon may multipath
 *     without relaxing), each with the N routes originated before it starts
 *     and no peer yet; once both are up, both are told to add the device
 *     under test as their peer at once (they connect; the daemon is passive);
 *   - the daemon under test, AS 64500, passive to both:
 *       BIRD 2: two `protocol bgp` (`import all`), `protocol kernel` with
 *         `merge paths on`, `export all`;
 *       FRR: bgpd (`no bgp ebgp-requires-policy`, `maximum-paths 2`) and
 *         zebra, both started in the namespace (`-N`);
 *       tsbgp: the library BgpSpeaker with the `kernel` option (KernelFib,
 *         its default writer), an accept-all import policy (RFC 8212);
 *   - the count: an `ip -ts -o monitor route` in the daemon's namespace
 *     (its buffer is capped by net.core.rmem_max; KBGP_MONITOR=rtnl runs
 *     rtnl-monitor.ts instead, the same lines from a 256 MiB SO_RCVBUFFORCE
 *     buffer, measured to cost the daemons more CPU), started (and seen
 *     to report a probe route) before the sessions, at a real-time priority
 *     (`chrt -f 10`) and writing into a file, so that it keeps up with the
 *     kernel; should it overrun anyway (ENOBUFS) the view is read again from
 *     a dump (route-view.ts) instead of failing the row, and every row is
 *     confirmed by a dump at the end (`ip route`); this
 *     process reads the file and keeps, per prefix in 198.18.0.0/15 of the
 *     main table, how many next hops the kernel last announced. Install: from
 *     the first feeder's session reaching Established (its `peerUp` event, as
 *     read here, wall clock) until the line (by `ip`'s timestamp) after which
 *     all N have two next hops. Withdraw: from telling both feeders to
 *     withdraw everything until the line after which every one is deleted.
 *     Each row is then checked with `ip route` (untimed).
 */
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { Reply, WireEvent } from '../../test/interop/speaker-protocol.js';
import { compiledNode } from './routers.js';
import { isOverrun, parseRouteLine, RouteView } from './route-view.js';
import type { BenchNodeConfig } from './tsbgp-node.js';

type Child = ChildProcessByStdio<Writable, Readable, null>;

export type BgpDaemon = 'bird' | 'frr' | 'tsbgp';
export const BGP_ROWS: Record<BgpDaemon, string> = {
  bird: 'BIRD 2 fed by BGP (`merge paths on`)',
  frr: 'FRR bgpd + zebra fed by BGP (`maximum-paths 2`)',
  tsbgp: 'tsbgp BgpSpeaker + KernelFib fed by BGP',
};

const DUT = '192.0.2.1';
const FEEDERS = ['192.0.2.7', '192.0.2.8'] as const;
const DUT_ASN = 64500;
const FEED_ASN = 64512;

export interface BgpRowResult {
  add: number;
  del: number;
  note: string;
}

/** A speaker-node child over its stdio: requests, replies, events. */
class Node {
  private next = 1;
  private readonly waiting = new Map<number, (r: Reply) => void>();
  private readonly listeners: ((e: WireEvent, at: number) => void)[] = [];
  readonly events: (WireEvent & { at: number })[] = [];
  constructor(
    readonly child: Child,
    readonly name: string,
  ) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const at = Date.now();
      let msg: Reply | WireEvent;
      try {
        msg = JSON.parse(line) as Reply | WireEvent;
      } catch {
        return;
      }
      if ('event' in msg) {
        this.events.push({ ...msg, at });
        for (const l of this.listeners) l(msg, at);
      } else this.waiting.get(msg.id)?.(msg);
    });
  }
  request(req: Record<string, unknown>, timeoutMs = 120_000): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no reply to ${String(req.cmd)} in ${timeoutMs} ms`)), timeoutMs);
      this.waiting.set(id, (r) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        if (r.ok) resolve(r.result);
        else reject(new Error(`${this.name}: ${String(req.cmd)}: ${r.error}`));
      });
      this.child.stdin.write(`${JSON.stringify({ id, ...req })}\n`);
    });
  }
  waitEvent(test: (e: WireEvent) => boolean, timeoutMs: number, what: string): Promise<WireEvent & { at: number }> {
    const seen = this.events.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      this.listeners.push((e, at) => {
        if (test(e)) {
          clearTimeout(timer);
          resolve({ ...e, at });
        }
      });
      this.child.once('exit', (code) => reject(new Error(`${this.name}: exited (${code}) while waiting for ${what}`)));
    });
  }
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** The count's receive buffer (SO_RCVBUFFORCE; the kernel doubles it): room for a 1M-route burst it falls behind on. */
const MONITOR_BUFFER = 256 << 20;

/**
 * The kernel's view (route-view.ts), from `ip -ts -o monitor route` lines.
 * The monitor runs at a real-time priority and writes into a file (no pipe
 * to block it, so it keeps up with the kernel as well as it can); this
 * process reads the file every 20 ms, and `when(test)` resolves with the
 * timestamp `ip` gave the first line after which test() holds (wall clock,
 * ms). When the monitor reports an overrun (its buffer is capped, see
 * route-view.ts) the view is read again from a dump, and a test that then
 * holds resolves with the time the dump was read: later than the kernel got
 * there, never earlier.
 */
class RouteWatch {
  readonly view = new RouteView((dst) => dst.startsWith('198.1'));
  private checks: { test: () => boolean; resolve: (t: number) => void; reject: (e: Error) => void }[] = [];
  private error: string | undefined;
  private readonly fd: number;
  private readonly buf = Buffer.alloc(1 << 20);
  private pending = '';
  private readonly timer: NodeJS.Timeout;
  constructor(
    file: string,
    private readonly dump: () => string,
  ) {
    this.fd = openSync(file, 'r');
    this.timer = setInterval(() => this.drain(), 20);
  }
  get hops(): Map<string, number> {
    return this.view.hops;
  }
  get two(): number {
    return this.view.two;
  }
  get events(): number {
    return this.view.events;
  }
  get probed(): boolean {
    return this.view.probed;
  }
  close(): void {
    clearInterval(this.timer);
    closeSync(this.fd);
  }
  private drain(): void {
    for (;;) {
      const n = readSync(this.fd, this.buf, 0, this.buf.length, null);
      if (n <= 0) break;
      const text = this.pending + this.buf.toString('utf8', 0, n);
      const lines = text.split('\n');
      this.pending = lines.pop()!;
      for (const l of lines) {
        this.view.line(l);
        if (this.checks.length > 0) this.check(parseRouteLine(l)?.at);
      }
    }
  }
  /** The monitor lost notifications: everything it printed so far, then the kernel's own table. */
  lost(): void {
    this.drain();
    this.view.resync(this.dump());
    this.check(Date.now());
  }
  private check(at: number | undefined): void {
    if (at === undefined) return;
    this.checks = this.checks.filter((c) => {
      if (!c.test()) return true;
      c.resolve(at);
      return false;
    });
  }
  fail(why: string): void {
    this.error ??= why;
    for (const c of this.checks.splice(0)) c.reject(new Error(why));
  }
  when(test: () => boolean, timeoutMs: number, what: string): Promise<number> {
    if (this.error !== undefined) return Promise.reject(new Error(this.error));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (kernel: ${this.hops.size} prefixes, ${this.two} with 2 next hops)`)),
        timeoutMs,
      );
      this.checks.push({
        test,
        resolve: (t) => {
          clearTimeout(timer);
          resolve(t);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
    });
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls `test` every `everyMs` until it holds, or throws naming `what` after `limitMs`. */
export async function until(what: string, limitMs: number, test: () => boolean, everyMs = 100): Promise<void> {
  const end = Date.now() + limitMs;
  for (;;) {
    if (test()) return;
    if (Date.now() > end) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
const must = (cmd: string, args: string[]): string => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout;
};

/**
 * One row: `daemon` fed N /32s by two peers, installed and withdrawn.
 * `base` names the namespaces; `track` gets every pid started (the caller's
 * teardown kills them on a signal); everything is torn down before returning.
 */
export async function bgpRow(daemon: BgpDaemon, n: number, base: string, work: string, track: number[]): Promise<BgpRowResult> {
  const d = `${base}-d`;
  const p = `${base}-p`;
  const dir = join(work, `bgp-${daemon}`);
  mkdirSync(dir, { recursive: true });
  const started: { kill(sig?: NodeJS.Signals): unknown }[] = [];
  const watches: RouteWatch[] = [];
  const pidsToKill: number[] = [];
  const frrSpace = d;
  try {
    must('ip', ['netns', 'add', d]);
    must('ip', ['netns', 'add', p]);
    must('ip', ['-n', d, 'link', 'set', 'lo', 'up']);
    must('ip', ['-n', p, 'link', 'set', 'lo', 'up']);
    must('ip', ['-n', d, 'link', 'add', 'd0', 'type', 'veth', 'peer', 'name', 'p0', 'netns', p]);
    must('ip', ['-n', d, 'addr', 'add', `${DUT}/24`, 'dev', 'd0']);
    for (const a of FEEDERS) must('ip', ['-n', p, 'addr', 'add', `${a}/24`, 'dev', 'p0']);
    must('ip', ['-n', d, 'link', 'set', 'd0', 'up']);
    must('ip', ['-n', p, 'link', 'set', 'p0', 'up']);

    // The count: started first, and seen to work, before anything is learned. Real-time priority and
    // a file, so that the listener keeps up (one that falls behind loses notifications: ENOBUFS).
    const monFile = join(dir, 'monitor.txt');
    writeFileSync(monFile, '');
    const monOut = openSync(monFile, 'w');
    // rtnl-monitor.ts: `ip -ts -o monitor route`'s lines from a socket whose buffer is not capped by rmem_max.
    // iproute2's own by default: measured cheaper than rtnl-monitor.ts (docs/performance.md, issue 31), its
    // overruns survived by the resync below. KBGP_MONITOR=rtnl: ours, with a buffer rmem_max does not cap.
    const monArgs =
      process.env.KBGP_MONITOR === 'rtnl'
        ? ['-f', '10', 'ip', 'netns', 'exec', d, process.execPath, '--import', 'tsx', join(HERE, 'rtnl-monitor.ts'), String(MONITOR_BUFFER)]
        : ['-f', '10', 'ip', '-ts', '-rcvbuf', String(MONITOR_BUFFER), '-n', d, '-o', 'monitor', 'route'];
    const mon = spawn('chrt', monArgs, { stdio: ['pipe', monOut, 'pipe'], cwd: join(HERE, '..', '..') });
    closeSync(monOut);
    started.push(mon);
    const watch = new RouteWatch(monFile, () => must('ip', ['-n', d, '-o', '-4', 'route', 'show', 'table', 'main']));
    watches.push(watch);
    // "No buffer space available": the kernel dropped notifications anyway; the view is read again from a
    // dump. Anything else on its stderr ends the row.
    mon.stderr!.on('data', (b: Buffer) => {
      const text = b.toString().trim();
      if (isOverrun(text)) watch.lost();
      else watch.fail(`ip monitor: ${text}`);
    });
    // A probe route added and deleted until the monitor reports it (a route replaced by the same one is not announced).
    await until(
      'the route monitor to start',
      60_000,
      () => {
        spawnSync('ip', ['-n', d, 'route', 'add', '203.0.113.99/32', 'dev', 'd0']);
        spawnSync('ip', ['-n', d, 'route', 'del', '203.0.113.99/32', 'dev', 'd0']);
        return watch.probed;
      },
      100,
    );

    // The daemon under test, passive to both feeders.
    const script = compiledNode();
    const nodeProc = (ns: string, name: string, cfg: BenchNodeConfig, nodeArgs: readonly string[] = []): Node => {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(cfg));
      const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '--max-old-space-size=4096', ...nodeArgs, script, file], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      started.push(child);
      if (child.pid) track.push(child.pid);
      return new Node(child, name);
    };
    let tsbgp: Node | undefined;
    const frrPid: Record<string, number> = {};
    let note = '';
    if (daemon === 'bird') {
      const conf = join(dir, 'bird.conf');
      const sock = join(dir, 'bird.ctl');
      writeFileSync(
        conf,
        [
          `router id ${DUT};`,
          'protocol device { scan time 60; }',
          'protocol kernel k1 { ipv4 { import none; export all; }; merge paths on; scan time 3600; }',
          ...FEEDERS.map(
            (f, i) =>
              `protocol bgp f${i} { local ${DUT} as ${DUT_ASN}; neighbor ${f} as ${FEED_ASN}; passive on; graceful restart off; ipv4 { import all; export none; }; }`,
          ),
          '',
        ].join('\n'),
      );
      const pidFile = join(dir, 'bird.pid');
      must('ip', ['netns', 'exec', d, 'bird', '-c', conf, '-s', sock, '-P', pidFile]);
      await until('bird control socket', 60_000, () => spawnSync('birdc', ['-s', sock, 'show', 'status']).status === 0, 100);
      pidsToKill.push(Number(readFileSync(pidFile, 'utf8').trim()));
      note = `BIRD ${/BIRD (\S+)/.exec(must('birdc', ['-s', sock, 'show', 'status']))?.[1] ?? '?'}`;
    } else if (daemon === 'frr') {
      const etc = `/etc/frr/${frrSpace}`;
      const varRun = `/var/run/frr/${frrSpace}`;
      mkdirSync(etc, { recursive: true });
      mkdirSync(varRun, { recursive: true });
      const conf = join(etc, 'frr.conf');
      writeFileSync(
        conf,
        [
          'frr defaults traditional',
          'hostname kbgp',
          `router bgp ${DUT_ASN}`,
          ` bgp router-id ${DUT}`,
          ' no bgp ebgp-requires-policy',
          ...FEEDERS.flatMap((f) => [` neighbor ${f} remote-as ${FEED_ASN}`, ` neighbor ${f} passive`]),
          ' address-family ipv4 unicast',
          '  maximum-paths 2',
          ' exit-address-family',
          'exit',
          '',
        ].join('\n'),
      );
      writeFileSync(join(etc, 'daemons'), 'zebra=yes\nbgpd=yes\nvtysh_enable=yes\n');
      writeFileSync(join(etc, 'vtysh.conf'), 'service integrated-vtysh-config\n');
      must('chown', ['-R', 'frr:frr', etc, varRun]);
      for (const x of ['zebra', 'bgpd']) {
        const pidFile = join(varRun, `${x}.pid`);
        must('ip', ['netns', 'exec', d, `/usr/lib/frr/${x}`, '-d', '-N', frrSpace, '-f', conf, '-i', pidFile]);
        await until(`${x} pid file`, 60_000, () => existsSync(pidFile));
        frrPid[x] = Number(readFileSync(pidFile, 'utf8').trim());
        pidsToKill.push(frrPid[x]);
      }
      await until('vtysh', 60_000, () => spawnSync('vtysh', ['-N', frrSpace, '-c', 'show bgp summary']).status === 0, 200);
      const v = /version (\S+)/.exec(must('/usr/lib/frr/zebra', ['-v']))?.[1] ?? '?';
      note = `FRR ${v}, kernel nexthop groups: ${/Kernel NHG:?\s+(\S+)/.exec(must('vtysh', ['-N', frrSpace, '-c', 'show zebra']))?.[1] ?? 'unknown'}`;
    } else {
      const cfg: BenchNodeConfig = {
        speaker: { asn: DUT_ASN, routerId: DUT, listen: { addresses: [DUT], port: 179 }, kernel: {} },
        peers: FEEDERS.map((f) => ({ address: f, asn: FEED_ASN, passive: true, families: ['ipv4'], gracefulRestart: false, importPolicies: ['all'] })),
        verbose: false,
        bench: { acceptAll: true },
      };
      // TSBGP_NODE_ARGS (as for the lab's tsbgp nodes), e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": the device under test only.
      tsbgp = nodeProc(d, 'tsbgp', cfg, process.env.TSBGP_NODE_ARGS?.split(' ').filter(Boolean) ?? []);
      await tsbgp.waitEvent((e) => e.event === 'ready' || e.event === 'fatal', 120_000, 'tsbgp ready');
      const st = (await tsbgp.request({ cmd: 'ext', name: 'kernel' })) as { enabled: boolean; writer?: string; error?: string };
      if (!st.enabled) throw new Error(`tsbgp: kernel programming off: ${st.error}`);
      note = `KernelFib writer: ${st.writer}`;
    }

    // The feeders: routes originated, no peer yet.
    const feeders = FEEDERS.map((f, i) =>
      nodeProc(p, `feeder${i}`, {
        speaker: { asn: FEED_ASN, routerId: f, listen: false },
        peers: [],
        ranges: [{ range: { start: '198.18.0.0', length: 32, count: n } }],
        verbose: false,
        bench: {},
      } satisfies BenchNodeConfig),
    );
    for (const f of feeders) {
      const e = await f.waitEvent((x) => x.event === 'ready' || x.event === 'fatal', 300_000, 'feeder ready');
      if (e.event === 'fatal') throw new Error(`${f.name}: ${e.error}`);
    }
    const up = feeders.map((f) => f.waitEvent((e) => e.event === 'peerUp', 120_000, 'session Established'));
    await Promise.all(
      feeders.map((f, i) =>
        f.request({
          cmd: 'addPeer',
          peer: { address: DUT, asn: DUT_ASN, localAddress: FEEDERS[i], families: ['ipv4'], connectRetryTime: 1, gracefulRestart: false },
        }),
      ),
    );
    const ups = await Promise.all(up);
    const t0 = Math.min(...ups.map((e) => e.at));
    const added = await watch.when(() => watch.two === n, 600_000, `all ${n} routes with two next hops`);
    const add = added - t0;
    const inEvents = watch.events;
    const shown = must('ip', ['-n', d, '-4', 'route', 'show', 'table', 'main']);
    const inKernel = shown.split('\n').filter((l) => l.startsWith('198.')).length;
    if (inKernel !== n) throw new Error(`${daemon}: ${inKernel} routes in the kernel after install, expected ${n}`);
    if (watch.hops.size !== n) throw new Error(`${daemon}: the monitor saw ${watch.hops.size} prefixes, expected ${n}`);

    // tsbgp: how many kernel writes the install took, in how many batches (KernelFib's counters).
    const fibCounts = async (): Promise<{ written: number; batches: number }> =>
      ((await tsbgp!.request({ cmd: 'ext', name: 'kernel' })) as { counters: { written: number; batches: number } }).counters;
    const inCounts = tsbgp ? await fibCounts() : undefined;
    const t1 = Date.now();
    await Promise.all(feeders.map((f) => f.request({ cmd: 'withdrawRange', range: { start: '198.18.0.0', length: 32, count: n } })));
    const gone = await watch.when(() => watch.hops.size === 0, 600_000, 'every route deleted');
    const del = gone - t1;
    note += `; kernel notifications per prefix: install ${(inEvents / n).toFixed(2)}, withdraw ${((watch.events - inEvents) / n).toFixed(2)}`;
    if (watch.view.resyncs > 0)
      note += `; the monitor overran ${watch.view.resyncs} times (the view read again from a dump each time; the notification counts are then low)`;
    const left = must('ip', ['-n', d, '-4', 'route', 'show', 'table', 'main'])
      .split('\n')
      .filter((l) => l.startsWith('198.')).length;
    if (left !== 0) throw new Error(`${daemon}: ${left} routes left in the kernel after withdrawing`);
    if (tsbgp && inCounts) {
      const outCounts = await fibCounts();
      note += `; install: ${inCounts.written} writes (${(inCounts.written / n).toFixed(2)} per prefix) in ${inCounts.batches} batches; withdraw: ${outCounts.written - inCounts.written} writes in ${outCounts.batches - inCounts.batches} batches`;
      // End of stdin ends the node by process.exit, so that --cpu-prof (TSBGP_NODE_ARGS) can write its profile.
      const exited = new Promise((r) => tsbgp!.child.once('exit', r));
      tsbgp.child.stdin.end();
      await Promise.race([exited, sleep(30_000)]);
    }
    return { add, del, note };
  } finally {
    for (const w of watches) w.close();
    for (const c of started) c.kill('SIGKILL');
    for (const pid of pidsToKill) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    // Whatever still runs in the namespaces (ip netns exec children).
    for (const ns of [d, p]) {
      const r = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' });
      for (const pid of (r.stdout ?? '').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone
        }
      }
      spawnSync('ip', ['netns', 'del', ns]);
    }
    rmSync(`/etc/frr/${frrSpace}`, { recursive: true, force: true });
    rmSync(`/var/run/frr/${frrSpace}`, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}
