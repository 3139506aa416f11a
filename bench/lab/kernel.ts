/**
 * Kernel FIB cost, as root, in a scratch namespace: a set of routes with two
 * ECMP next hops each installed and then withdrawn, side by side in one run:
 *
 *   - `ip -batch` of the same lines: the floor (what the kernel and iproute2 cost);
 *   - the floor again with an `ip -o monitor route` listening (output thrown
 *     away): what the kernel's notifications to a listener cost — every
 *     daemon below listens, the floor does not;
 *   - tsbgp's KernelFib as it runs (the pure core's plan, its rtnetlink writer
 *     through koffi, its rtnetlink listener in a worker thread, which the
 *     kernel spares the echoes of our own writes; the writer's thread send()s
 *     one piece while the main thread plans and encodes the next), and the same
 *     with `writerThread: false` (everything on the main thread);
 *   - tsbgp's KernelFib with the iproute2 writer (`writer: 'iproute2'`, the
 *     fallback: `ip -force -batch -`; its listener hears every echo);
 *   - the rtnetlink writer alone (NetlinkWriter: encoding, send, acknowledgements;
 *     no plan, no monitor), with its thread and on the main thread;
 *   - BIRD 2's kernel protocol (`export all; merge paths on`), the routes from a
 *     `protocol static` with two `via`s each, parsed at start while the static
 *     protocol is disabled: the clock runs from `birdc enable` until the kernel
 *     protocol has exported N (BIRD writes each route with a synchronous
 *     netlink request, so exported = in the kernel), and from `birdc disable`
 *     until it has exported 0;
 *   - FRR's zebra (only with `--only …,frr`): the routes from staticd (`ip
 *     route P NH` twice per prefix); the clock runs from starting staticd until
 *     zebra counts N routes in its FIB, and from stopping staticd (zebra
 *     removes a gone client's routes) until it counts 0. Not in the default
 *     run: FRR 8.4's staticd takes its configuration one northbound commit per
 *     line, 13.5 s for 300 prefixes here, so the install time is staticd's
 *     parsing and 100,000 routes do not load in any useful time; FRR's own
 *     tool for this, sharpd (`sharp install routes`), is not in Debian's
 *     package. See src/kernel/README.md.
 *   - fed by BGP (bench/lab/kernel-bgp.ts; `--set v4-32`, in the default run):
 *     BIRD 2 (`merge paths on`), FRR bgpd + zebra (`maximum-paths 2`) and
 *     tsbgp's BgpSpeaker with the `kernel` option each learn the N /32s from
 *     two eBGP peers and install them with two next hops, then both peers
 *     withdraw; the same clock and count for all three (an `ip monitor` in the
 *     daemon's namespace). Their own table (suite `kernel-bgp`), with the
 *     floor of the same run for reference.
 *
 * Every row ends by counting the routes in the kernel (not timed). Only
 * documentation ranges go into a kernel here, so the sets are (`--set`):
 *
 *   - `v4-32` (default): N IPv4 /32s inside 198.18.0.0/15, at most 131,072;
 *   - `v4-all`: every prefix of every length /15–/32 inside 198.18.0.0/15,
 *     262,143 routes: the largest IPv4 set the documentation ranges allow
 *     (nested prefixes, as in a real table);
 *   - `v6`: N IPv6 /64s inside 2001:db8::/32 (default 1,040,000: the issue's
 *     full-table size, which IPv4 documentation space cannot hold), next hops
 *     2001:db8:ffff::7 and ::8.
 *
 * `--runs K` repeats each row K times and reports medians. The table is
 * printed and, with $BENCH_OUT set, recorded for scripts/perf-readme.ts.
 *
 *   sudo node --import tsx bench/lab/kernel.ts [--set v4-32|v4-all|v6] [--routes N] [--runs K] [--only floor,monitor,tsbgp,tsbgp-1t,tsbgp-ip,netlink,netlink-1t,bird[,frr][,bird-bgp,frr-bgp,tsbgp-bgp]]
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { KernelFib } from '../../src/kernel/kernel-fib.js';
import { NetlinkWriter } from '../../src/kernel/route-writer.js';
import type { KernelOp, KernelRoute } from '../../src/kernel/types.js';
import { formatV4 } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { emit, median } from '../report.js';
import { BGP_ROWS, bgpRow, sleep, until, type BgpDaemon } from './kernel-bgp.js';

const argOf = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SET = argOf('--set') ?? 'v4-32';
if (!['v4-32', 'v4-all', 'v6'].includes(SET)) throw new Error(`--set must be v4-32, v4-all or v6, got ${SET}`);
const V6 = SET === 'v6';
const N = SET === 'v4-all' ? 262_143 : Number(argOf('--routes') ?? (V6 ? 1_040_000 : 100_000));
if (SET === 'v4-all' && argOf('--routes') !== undefined && Number(argOf('--routes')) !== N)
  throw new Error('--set v4-all is every prefix /15–/32 of 198.18.0.0/15: 262,143 routes, no --routes');
if (SET === 'v4-32' && !(Number.isInteger(N) && N > 0 && N <= 131_072))
  throw new Error(`--routes must be 1..131072 (/32s inside 198.18.0.0/15), got ${argOf('--routes')}`);
if (V6 && !(Number.isInteger(N) && N > 0 && N <= 0xffff0000))
  throw new Error(`--routes must be 1..${0xffff0000} (/64s inside 2001:db8::/32 below 2001:db8:ffff::/48), got ${argOf('--routes')}`);
const RUNS = Number(argOf('--runs') ?? 1);
if (!(Number.isInteger(RUNS) && RUNS >= 1 && RUNS <= 15)) throw new Error(`--runs must be 1..15, got ${argOf('--runs')}`);
const BGP = ['bird-bgp', 'frr-bgp', 'tsbgp-bgp'] as const;
const ALL = ['floor', 'monitor', 'tsbgp', 'tsbgp-1t', 'tsbgp-ip', 'netlink', 'netlink-1t', 'bird', 'frr', ...BGP] as const;
const only = new Set(
  (argOf('--only') ?? `floor,monitor,tsbgp,tsbgp-1t,tsbgp-ip,netlink,netlink-1t,bird${SET === 'v4-32' ? `,${BGP.join(',')}` : ''}`).split(','),
);
for (const o of only) if (!(ALL as readonly string[]).includes(o)) throw new Error(`--only: unknown row "${o}" (known: ${ALL.join(', ')})`);
if (only.has('frr') && SET !== 'v4-32') throw new Error('--only …,frr: the FRR row takes --set v4-32 only');
for (const b of BGP) if (only.has(b) && SET !== 'v4-32') throw new Error(`--only …,${b}: the rows fed by BGP take --set v4-32 only`);

const ns = `tsbgp-kbench-i${process.pid}`;
const work = join(tmpdir(), ns);
const ip = (...a: string[]) => execFileSync('ip', a, { encoding: 'utf8', maxBuffer: 1 << 30 });
const inNs = (argv: string[]) => execFileSync('ip', ['netns', 'exec', ns, ...argv], { encoding: 'utf8', maxBuffer: 1 << 30 });
const base = (198 << 24) | (18 << 16);
function makePrefixes(): string[] {
  if (SET === 'v4-32') return Array.from({ length: N }, (_, i) => `${formatV4((base + i) >>> 0)}/32`);
  if (SET === 'v4-all') {
    const out: string[] = [];
    for (let len = 15; len <= 32; len++) for (let k = 0; k < 2 ** (len - 15); k++) out.push(`${formatV4((base + k * 2 ** (32 - len)) >>> 0)}/${len}`);
    return out;
  }
  // Canonical text (what the kernel's dumps print), as routing hands prefixes to KernelFib.
  return Array.from({ length: N }, (_, i) => Prefix.parse(`2001:db8:${Math.floor(i / 65536).toString(16)}:${(i % 65536).toString(16)}::/64`).toString());
}
const prefixes = makePrefixes();
if (prefixes.length !== N) throw new Error(`internal: ${prefixes.length} prefixes for ${N}`);
const FAM = V6 ? '-6' : '-4';
const GW = V6 ? ['2001:db8:ffff::7', '2001:db8:ffff::8'] : ['192.0.2.7', '192.0.2.8'];
const METRIC = V6 ? 1024 : 0; // the kernel's default per family (KernelFib's too)
const DESC =
  SET === 'v4-32'
    ? `${N.toLocaleString('en')} IPv4 /32s`
    : SET === 'v4-all'
      ? `${N.toLocaleString('en')} IPv4 prefixes (every /15–/32 in 198.18.0.0/15)`
      : `${N.toLocaleString('en')} IPv6 /64s`;
/** Our test routes in the kernel's main table (of one protocol, or any). */
const count = (proto?: string) => {
  const out = ip('-n', ns, FAM, 'route', 'show', 'table', '254', ...(proto !== undefined ? ['proto', proto] : []));
  let n = 0;
  for (let at = 0; at < out.length;) {
    const nl = out.indexOf('\n', at);
    const line = out.slice(at, nl < 0 ? out.length : nl);
    if (V6 ? line.startsWith('2001:db8:') && !line.startsWith('2001:db8:ffff::') : line.startsWith('198.')) n++;
    at = nl < 0 ? out.length : nl + 1;
  }
  return n;
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Row {
  who: string;
  add: number;
  del: number;
  addCpu?: number;
  delCpu?: number;
  note?: string;
  bgp?: boolean;
}
const rows: Row[] = [];
const pids: number[] = [];

function batchFile(lines: string[]): string {
  const f = join(work, 'batch');
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
}
const addLines = () => prefixes.map((p) => `route replace ${p} table 254 proto 12 metric ${METRIC} nexthop via ${GW[0]} dev v0 nexthop via ${GW[1]} dev v0`);
const delLines = () => prefixes.map((p) => `route del ${p} table 254 proto 12 metric ${METRIC}`);

function floor(who: string, note?: string): void {
  const add = batchFile(addLines());
  let t = performance.now();
  ip('-n', ns, FAM, '-force', '-batch', add);
  const a = performance.now() - t;
  if (count('12') !== N) throw new Error(`${who}: ${count('12')} routes installed, expected ${N}`);
  const del = batchFile(delLines());
  t = performance.now();
  ip('-n', ns, FAM, '-force', '-batch', del);
  const d = performance.now() - t;
  if (count('12') !== 0) throw new Error(`${who}: routes left after withdrawing`);
  rows.push({ who, add: a, del: d, ...(note ? { note } : {}) });
}

async function withMonitor(): Promise<void> {
  // A listener as every daemon has: `ip monitor` printing each notification, the text thrown away.
  const mon = spawn('ip', ['-n', ns, '-o', '-N', 'monitor', 'route'], { stdio: ['ignore', 'ignore', 'ignore'] });
  await sleep(300);
  try {
    floor('`ip -batch` + an `ip monitor` listening', 'the kernel also notifies a listener');
  } finally {
    mon.kill();
  }
}

async function kernelFib(writer: 'netlink' | 'iproute2', who: string, writerThread = true): Promise<void> {
  const fib = new KernelFib({ netns: ns, scanSeconds: 0, adopt: false, writer, writerThread });
  await fib.start();
  if (!fib.status().enabled) throw new Error(fib.status().error);
  if (fib.status().writer !== writer) throw new Error(`KernelFib writes through ${fib.status().writer}, not ${writer}: ${fib.status().writerNote}`);
  if (fib.status().listener !== 'netlink') throw new Error(`KernelFib listens through ${fib.status().listener}, not rtnetlink: ${fib.status().listenerNote}`);
  // Where node's own time goes: the pure plan, and the rest (formatting, piping, the monitor's lines).
  let planMs = 0;
  const plan = fib.core.plan.bind(fib.core);
  fib.core.plan = () => {
    const t = performance.now();
    try {
      return plan();
    } finally {
      planMs += performance.now() - t;
    }
  };
  // The pipelined plan (writer thread): the time inside each piece's planning.
  const pieces = fib.core.planPieces.bind(fib.core);
  fib.core.planPieces = function* (size: number) {
    const it = pieces(size);
    try {
      for (;;) {
        const t = performance.now();
        let r: IteratorResult<KernelOp[], void>;
        try {
          r = it.next();
        } finally {
          planMs += performance.now() - t;
        }
        if (r.done) return;
        yield r.value;
      }
    } finally {
      it.return(undefined);
    }
  };
  const gw = { kind: 'unicast' as const, gateways: GW.map((address) => ({ address })) };
  let c = cpuMs();
  let t = performance.now();
  for (const p of prefixes) fib.setRoute(p, gw);
  await fib.flushed();
  const add = performance.now() - t;
  const addCpu = cpuMs() - c;
  const addPlan = planMs;
  if (count('12') !== N || fib.status().routes.installed !== N) throw new Error(`KernelFib: ${count('12')} routes installed, expected ${N}`);
  planMs = 0;
  c = cpuMs();
  t = performance.now();
  for (const p of prefixes) fib.setRoute(p, undefined);
  await fib.flushed();
  const del = performance.now() - t;
  const delCpu = cpuMs() - c;
  if (count('12') !== 0) throw new Error(`KernelFib: ${count('12')} routes left after withdrawing all`);
  await fib.stop();
  rows.push({ who, add, del, addCpu, delCpu, note: `node CPU of which the pure plan: ${(addPlan / 1000).toFixed(2)} s / ${(planMs / 1000).toFixed(2)} s` });
}

/**
 * The rtnetlink writer alone (src/kernel/route-writer.ts NetlinkWriter, as
 * KernelFib uses it): the same routes as RTM_NEWROUTE/RTM_DELROUTE requests
 * on its AF_NETLINK socket in the namespace, in chunks, acknowledgements
 * mapped back per route — no plan, no monitor.
 */
async function netlink(thread: boolean): Promise<void> {
  const w = new NetlinkWriter({ netns: ns, table: 254, protocol: 12 });
  if (thread && !(await w.startThread())) throw new Error('the writer thread did not start');
  const hops = GW.map((via) => ({ via, dev: 'v0' }));
  const routes: KernelRoute[] = prefixes.map((prefix) => ({ prefix, type: 'unicast', metric: METRIC, nexthops: hops }));
  const failed = (r: { errors: (string | undefined)[] }) => r.errors.filter((e) => e !== undefined);
  try {
    let c0 = cpuMs();
    let t = performance.now();
    const a = await w.write(routes.map((route) => ({ op: 'replace', route })));
    const add = performance.now() - t;
    const addCpu = cpuMs() - c0;
    if (failed(a).length > 0 || count('12') !== N)
      throw new Error(`netlink: ${failed(a).length} refused (${failed(a)[0]}), ${count('12')} routes installed, expected ${N}`);
    c0 = cpuMs();
    t = performance.now();
    const d = await w.write(routes.map((route) => ({ op: 'delete', route })));
    const del = performance.now() - t;
    const delCpu = cpuMs() - c0;
    if (failed(d).length > 0 || count('12') !== 0)
      throw new Error(`netlink: ${failed(d).length} deletes refused (${failed(d)[0]}), ${count('12')} routes left`);
    rows.push({
      who: `rtnetlink writer alone (NetlinkWriter${thread ? ', its thread' : ', main thread'})`,
      add,
      del,
      addCpu,
      delCpu,
      note: `encoding, socket and acknowledgements only: no plan, no monitor; ${thread ? 'send() on the writer thread' : 'everything on the main thread'}`,
    });
  } finally {
    w.close();
  }
}

async function bird(): Promise<void> {
  const conf = join(work, 'bird.conf');
  const sock = join(work, 'bird.ctl');
  const lines = [
    'router id 192.0.2.1;',
    'protocol device { scan time 60; }',
    'protocol static s1 {',
    '  disabled;',
    `  ${V6 ? 'ipv6' : 'ipv4'};`,
    ...prefixes.map((p) => `  route ${p} via ${GW[0]} via ${GW[1]};`),
    '}',
    // As on a Calico node, minus learn/scan 2 (a scan every 2 s of 100k routes would be measured too).
    `protocol kernel k1 { ${V6 ? 'ipv6' : 'ipv4'} { import none; export all; }; merge paths on; scan time 3600; metric ${METRIC}; kernel table 254; }`,
  ];
  writeFileSync(conf, lines.join('\n') + '\n');
  const pidFile = join(work, 'bird.pid');
  inNs(['bird', '-c', conf, '-s', sock, '-P', pidFile]);
  const birdc = (...a: string[]) => spawnSync('birdc', ['-s', sock, ...a], { encoding: 'utf8' });
  await until('bird control socket', 300_000, () => birdc('show', 'status').status === 0, 200);
  pids.push(Number(readFileSync(pidFile, 'utf8').trim()));
  const exported = (): number => {
    const m = /Routes:\s+\d+ imported, (\d+) exported/.exec(birdc('show', 'protocols', 'all', 'k1').stdout);
    return m ? Number(m[1]) : -1;
  };
  let t = performance.now();
  birdc('enable', 's1');
  await until('BIRD: every route exported to the kernel', 3_600_000, () => exported() === N, 25);
  const add = performance.now() - t;
  if (count('bird') !== N) throw new Error(`BIRD: ${count('bird')} routes in the kernel, expected ${N}`);
  t = performance.now();
  birdc('disable', 's1');
  await until('BIRD: no route exported', 3_600_000, () => exported() === 0, 25);
  const del = performance.now() - t;
  if (count('bird') !== 0) throw new Error(`BIRD: ${count('bird')} routes left in the kernel`);
  birdc('down');
  rows.push({ who: 'BIRD 2 kernel protocol', add, del });
}

async function frr(): Promise<void> {
  const space = ns;
  const etc = `/etc/frr/${space}`;
  const varRun = `/var/run/frr/${space}`;
  mkdirSync(etc, { recursive: true });
  mkdirSync(varRun, { recursive: true });
  try {
    const conf = join(etc, 'frr.conf');
    writeFileSync(
      conf,
      ['frr defaults traditional', 'hostname kbench', ...prefixes.flatMap((p) => [`ip route ${p} 192.0.2.7`, `ip route ${p} 192.0.2.8`]), ''].join('\n'),
    );
    writeFileSync(join(etc, 'daemons'), 'zebra=yes\nstaticd=yes\nvtysh_enable=yes\n');
    writeFileSync(join(etc, 'vtysh.conf'), 'service integrated-vtysh-config\n');
    execFileSync('chown', ['-R', 'frr:frr', etc, varRun]);
    const vtysh = (c: string) => spawnSync('vtysh', ['-N', space, '-c', c], { encoding: 'utf8' });
    const fib = (): number => {
      const r = vtysh('show ip route summary json');
      try {
        const j = JSON.parse(r.stdout) as { routes?: { type: string; fib: number }[] };
        return j.routes?.find((x) => x.type === 'static')?.fib ?? 0;
      } catch {
        return -1;
      }
    };
    const daemons: Record<string, number> = {};
    let t = 0;
    for (const d of ['zebra', 'staticd']) {
      const pidFile = join(varRun, `${d}.pid`);
      if (d === 'staticd') t = performance.now();
      inNs([`/usr/lib/frr/${d}`, '-d', '-N', space, '-f', conf, '-i', pidFile]);
      await until(`${d} pid file`, 60_000, () => existsSync(pidFile));
      daemons[d] = Number(readFileSync(pidFile, 'utf8').trim());
      pids.push(daemons[d]);
    }
    await until('zebra: every route in the FIB', 600_000, () => fib() === N, 200);
    const add = performance.now() - t;
    const kernelNhg = /Kernel NHG:?\s+(\S+)/.exec(vtysh('show zebra').stdout)?.[1];
    if (count() !== N) throw new Error(`FRR: ${count()} routes in the kernel, expected ${N}`);
    t = performance.now();
    process.kill(daemons.staticd, 'SIGTERM');
    await until('zebra: no static route in the FIB', 600_000, () => fib() === 0);
    const del = performance.now() - t;
    await until('FRR: the kernel emptied', 60_000, () => count() === 0, 200);
    process.kill(daemons.zebra, 'SIGTERM');
    rows.push({
      who: 'FRR zebra (staticd routes)',
      add,
      del,
      note: `install includes staticd reading its N×2 \`ip route\` lines; zebra ${frrVersion()}, kernel nexthop groups: ${kernelNhg ?? 'unknown'}`,
    });
  } finally {
    rmSync(etc, { recursive: true, force: true });
    rmSync(varRun, { recursive: true, force: true });
  }
}

/** A row fed by BGP (bench/lab/kernel-bgp.ts): its own two namespaces, made and torn down inside. */
async function fedByBgp(daemon: BgpDaemon): Promise<void> {
  const r = await bgpRow(daemon, N, `${ns}-${daemon}`, work, pids);
  rows.push({ who: BGP_ROWS[daemon], add: r.add, del: r.del, note: r.note, bgp: true });
  console.error(`${daemon}-bgp: install ${(r.add / 1000).toFixed(2)} s, withdraw ${(r.del / 1000).toFixed(2)} s; ${r.note}`);
}

const frrVersion = () => /version (\S+)/.exec(execFileSync('/usr/lib/frr/zebra', ['-v'], { encoding: 'utf8' }))?.[1] ?? '?';

function teardown(): void {
  for (const p of pids.splice(0)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  spawnSync('ip', ['netns', 'del', ns]);
  for (const b of ['bird', 'frr', 'tsbgp']) for (const side of ['d', 'p']) spawnSync('ip', ['netns', 'del', `${ns}-${b}-${side}`], { stdio: 'ignore' });
  for (const b of ['bird', 'frr', 'tsbgp']) {
    rmSync(`/etc/frr/${ns}-${b}-d`, { recursive: true, force: true });
    rmSync(`/var/run/frr/${ns}-${b}-d`, { recursive: true, force: true });
  }
  rmSync(work, { recursive: true, force: true });
  rmSync(`/etc/frr/${ns}`, { recursive: true, force: true });
  rmSync(`/var/run/frr/${ns}`, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    teardown();
    process.exit(130);
  });

async function main(): Promise<void> {
  mkdirSync(work, { recursive: true });
  ip('netns', 'add', ns);
  try {
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
    ip('-n', ns, 'link', 'set', 'v0', 'up');
    ip('-n', ns, 'link', 'set', 'v1', 'up');
    ip('-n', ns, 'addr', 'add', '192.0.2.1/24', 'dev', 'v0');
    ip('-n', ns, 'addr', 'add', '2001:db8:ffff::1/64', 'dev', 'v0', 'nodad');
    const loadBefore = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const failed: string[] = [];
    const steps: [string, () => Promise<void> | void][] = [
      ['floor', () => floor('`ip -batch` (floor)')],
      ['monitor', withMonitor],
      ['tsbgp', () => kernelFib('netlink', 'tsbgp KernelFib (rtnetlink writer)')],
      ['tsbgp-1t', () => kernelFib('netlink', 'tsbgp KernelFib (rtnetlink writer, `writerThread: false`)', false)],
      ['tsbgp-ip', () => kernelFib('iproute2', 'tsbgp KernelFib (iproute2 writer)')],
      ['netlink', () => netlink(true)],
      ['netlink-1t', () => netlink(false)],
      ['bird', bird],
      ['frr', frr],
      ['bird-bgp', () => fedByBgp('bird')],
      ['frr-bgp', () => fedByBgp('frr')],
      ['tsbgp-bgp', () => fedByBgp('tsbgp')],
    ];
    for (let run = 0; run < RUNS; run++) {
      for (const [name, step] of steps) {
        if (!only.has(name)) continue;
        try {
          await step();
        } catch (err) {
          failed.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
          process.stderr.write(`FAILED ${failed.at(-1)}\n`);
          // Leave the table empty for the next row.
          spawnSync('ip', ['-n', ns, FAM, 'route', 'flush', 'table', '254', 'proto', '12']);
        }
      }
    }
    const loadAfter = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    // Medians per row over the runs.
    const whos = [...new Set(rows.map((r) => r.who))];
    const med = whos.map((who) => {
      const rs = rows.filter((r) => r.who === who);
      const m = (f: (r: Row) => number | undefined) => (rs.every((r) => f(r) !== undefined) ? median(rs.map((r) => f(r)!)) : undefined);
      return {
        who: rs.length < RUNS ? `${who} (${rs.length} of ${RUNS} runs)` : who,
        n: rs.length,
        add: m((r) => r.add)!,
        del: m((r) => r.del)!,
        addCpu: m((r) => r.addCpu),
        delCpu: m((r) => r.delCpu),
        note: rs[0].note,
        bgp: rs[0].bgp === true,
      };
    });
    const floorRow = med.find((r) => r.who.endsWith('(floor)'));
    const x = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}×` : 'n/a');
    const sec = (ms: number | undefined) => (ms === undefined ? '—' : Number((ms / 1000).toFixed(2)));
    const runsNote = `${RUNS === 1 ? 'One run' : `Medians of ${RUNS} runs`} of each row, one after another`;
    const loadNote = `Load average (1/5/15 min) ${loadBefore} before, ${loadAfter} after, on 2 cores.`;
    const direct = med.filter((r) => !r.bgp);
    // The direct rows' table when one of them besides the floor was asked for (the floor alone is the BGP table's reference).
    if ([...only].some((o) => o !== 'floor' && !(BGP as readonly string[]).includes(o))) {
      const birdRow = direct.find((r) => r.who.startsWith('BIRD'));
      emit({
        suite: SET === 'v4-32' ? 'kernel' : `kernel-${SET}`,
        title: `Kernel FIB: ${DESC}, two ECMP next hops each, installed and withdrawn`,
        columns: [
          'who',
          'install (s)',
          'withdraw (s)',
          'install / floor',
          'withdraw / floor',
          'install / BIRD',
          'withdraw / BIRD',
          'node CPU install (s)',
          'node CPU withdraw (s)',
        ],
        rows: direct.map((r) => [
          r.who,
          sec(r.add),
          sec(r.del),
          x(r.add, floorRow?.add),
          x(r.del, floorRow?.del),
          x(r.add, birdRow?.add),
          x(r.del, birdRow?.del),
          sec(r.addCpu),
          sec(r.delCpu),
        ]),
        notes: [
          `${runsNote}, into a scratch namespace's main table (veth next hops); every row ends by counting the routes in the kernel (untimed). ${loadNote}`,
          'floor: `ip -force -batch` of the same lines; + monitor: the same with an `ip -o monitor route` listening; tsbgp KernelFib: setRoute for every prefix until flushed() (the plan, the writer, its rtnetlink listener — with the iproute2 writer the listener decodes every echo); with the rtnetlink writer its thread send()s (the kernel installs on the other core) while the main thread plans and encodes the next piece, `writerThread: false` does it all on the main thread; rtnetlink writer alone: NetlinkWriter.write of the same operations, with its thread and without; BIRD 2: `protocol static` (two `via`s) enabled/disabled, `protocol kernel` with `merge paths on`, clock until it reports N / 0 exported. Details: src/kernel/README.md.',
          ...direct.filter((r) => r.note).map((r) => `${r.who}: ${r.note}`),
          ...failed.filter((f) => !BGP.some((b) => f.startsWith(`${b}:`))).map((f) => `FAILED ${f}`),
        ],
      });
    }
    const fed = med.filter((r) => r.bgp);
    if (BGP.some((b) => only.has(b))) {
      const fastest = (f: (r: (typeof fed)[number]) => number) => (fed.length > 0 ? Math.min(...fed.map(f)) : undefined);
      const [fa, fd] = [fastest((r) => r.add), fastest((r) => r.del)];
      emit({
        suite: 'kernel-bgp',
        title: `Kernel FIB fed by BGP: ${DESC} from two eBGP peers, installed with two ECMP next hops and withdrawn`,
        columns: ['who', 'install (s)', 'withdraw (s)', 'install / fastest', 'withdraw / fastest', 'install / floor', 'withdraw / floor'],
        rows: [
          ...fed.map((r) => [r.who, sec(r.add), sec(r.del), x(r.add, fa), x(r.del, fd), x(r.add, floorRow?.add), x(r.del, floorRow?.del)]),
          ...(floorRow
            ? [[`${floorRow.who}, no BGP (the same routes written directly)`, sec(floorRow.add), sec(floorRow.del), '—', '—', '1.00×', '1.00×']]
            : []),
        ],
        notes: [
          `${runsNote}. ${loadNote}`,
          "Each row: fresh namespaces (the daemon at 192.0.2.1, two peers at 192.0.2.7 and .8 on one veth); the peers are tsbgp speakers (AS 64512 both), each originating the same /32s in 198.18.0.0/15 with itself as next hop, and connect to the daemon (AS 64500, passive) at the same moment. Counted the same way for every row: an `ip -ts -o monitor route` in the daemon's namespace (real-time priority, into a file; its buffer is capped by net.core.rmem_max, so after an overrun the view is read again from a dump instead of failing the row, and every row is confirmed by a dump; KBGP_MONITOR=rtnl counts with bench/lab/rtnl-monitor.ts, a 256 MiB SO_RCVBUFFORCE buffer), its lines parsed here, each event timed by `ip`'s timestamp: install from the first session Established (the peer's event, read here) until all N are in the main table with two next hops; withdraw from telling both peers to withdraw everything until all N are deleted; then checked with `ip route` (untimed). BIRD 2: `protocol kernel` with `merge paths on`; FRR: bgpd with `maximum-paths 2`, zebra; tsbgp: BgpSpeaker with the `kernel` option. Details: bench/lab/kernel-bgp.ts, src/kernel/README.md.",
          ...fed.filter((r) => r.note).map((r) => `${r.who}: ${r.note}`),
          ...failed.filter((f) => BGP.some((b) => f.startsWith(`${b}:`))).map((f) => `FAILED ${f}`),
        ],
      });
    }
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    teardown();
  }
}
await main();
