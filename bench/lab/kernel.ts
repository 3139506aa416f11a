/**
 * Kernel FIB cost, as root, in a scratch namespace: N IPv4 /32 routes with two
 * ECMP next hops each installed and then withdrawn, side by side in one run:
 *
 *   - `ip -batch` of the same lines: the floor (what the kernel and iproute2 cost);
 *   - the floor again with an `ip -o monitor route` listening (output thrown
 *     away): what the kernel's notifications to a listener cost — every
 *     daemon below listens, the floor does not;
 *   - tsbgp's KernelFib (the pure core's plan + `ip -force -batch -`, its monitor
 *     parsing every echo);
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
 *
 * Every row ends by counting the routes in the kernel (not timed). Routes are
 * /32s inside 198.18.0.0/15, the largest documentation range: at most
 * 131,072 (a 1,040,000-route table does not fit in documentation space, and
 * routes outside it are not written into a kernel here).
 *
 *   sudo node --import tsx bench/lab/kernel.ts [--routes 100000] [--only floor,monitor,tsbgp,bird[,frr]]
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { KernelFib } from '../../src/kernel/kernel-fib.js';
import { encodeRouteOp, errnoReason, parseAcks } from '../../src/kernel/rtnetlink.js';
import type { KernelOp, KernelRoute } from '../../src/kernel/types.js';
import { formatV4 } from '../../src/net/address.js';

const argOf = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const N = Number(argOf('--routes') ?? 100_000);
if (!(Number.isInteger(N) && N > 0 && N <= 131_072)) throw new Error(`--routes must be 1..131072 (/32s inside 198.18.0.0/15), got ${argOf('--routes')}`);
const ALL = ['floor', 'monitor', 'tsbgp', 'netlink', 'bird', 'frr'] as const;
const only = new Set((argOf('--only') ?? 'floor,monitor,tsbgp,netlink,bird').split(','));
for (const o of only) if (!(ALL as readonly string[]).includes(o)) throw new Error(`--only: unknown row "${o}" (known: ${ALL.join(', ')})`);

const ns = `tsbgp-kbench-i${process.pid}`;
const work = join(tmpdir(), ns);
const ip = (...a: string[]) => execFileSync('ip', a, { encoding: 'utf8', maxBuffer: 1 << 30 });
const inNs = (argv: string[]) => execFileSync('ip', ['netns', 'exec', ns, ...argv], { encoding: 'utf8', maxBuffer: 1 << 30 });
const base = (198 << 24) | (18 << 16);
const prefixes = Array.from({ length: N }, (_, i) => `${formatV4((base + i) >>> 0)}/32`);
/** Our test routes in the kernel's main table (of one protocol, or any). */
const count = (proto?: string) => ip('-n', ns, '-4', 'route', 'show', 'table', '254', ...(proto !== undefined ? ['proto', proto] : [])).split('\n').filter((l) => l.startsWith('198.')).length;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, limitMs: number, test: () => boolean, everyMs = 100): Promise<void> {
  const end = Date.now() + limitMs;
  for (;;) {
    if (test()) return;
    if (Date.now() > end) throw new Error(`timed out after ${limitMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

interface Row { who: string; add: number; del: number; addCpu?: number; delCpu?: number; note?: string }
const rows: Row[] = [];
const pids: number[] = [];

function batchFile(lines: string[]): string {
  const f = join(work, 'batch');
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
}
const addLines = () => prefixes.map((p) => `route replace ${p} table 254 proto 12 metric 0 nexthop via 192.0.2.7 dev v0 nexthop via 192.0.2.8 dev v0`);
const delLines = () => prefixes.map((p) => `route del ${p} table 254 proto 12 metric 0`);

function floor(who: string, note?: string): void {
  const add = batchFile(addLines());
  let t = performance.now();
  ip('-n', ns, '-force', '-batch', add);
  const a = performance.now() - t;
  if (count('12') !== N) throw new Error(`${who}: ${count('12')} routes installed, expected ${N}`);
  const del = batchFile(delLines());
  t = performance.now();
  ip('-n', ns, '-force', '-batch', del);
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

async function kernelFib(): Promise<void> {
  const fib = new KernelFib({ netns: ns, scanSeconds: 0, adopt: false });
  await fib.start();
  if (!fib.status().enabled) throw new Error(fib.status().error);
  // Where node's own time goes: the pure plan, and the rest (formatting, piping, the monitor's lines).
  let planMs = 0;
  const plan = fib.core.plan.bind(fib.core);
  fib.core.plan = () => { const t = performance.now(); try { return plan(); } finally { planMs += performance.now() - t; } };
  const gw = { kind: 'unicast' as const, gateways: [{ address: '192.0.2.7' }, { address: '192.0.2.8' }] };
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
  rows.push({ who: 'tsbgp KernelFib', add, del, addCpu, delCpu, note: `node CPU of which the pure plan: ${(addPlan / 1000).toFixed(2)} s / ${(planMs / 1000).toFixed(2)} s` });
}

/**
 * The other interface the issue names: rtnetlink in-process. The same routes
 * as RTM_NEWROUTE/RTM_DELROUTE requests (src/kernel/rtnetlink.ts, pure) on
 * an AF_NETLINK socket opened through koffi inside the namespace (setns and
 * back), in chunks of 128 requests, each chunk's acknowledgements read
 * before the next (the kernel handles a request within send()).
 */
async function netlink(): Promise<void> {
  const require = createRequire(import.meta.url);
  const koffi = require('koffi') as typeof import('koffi');
  const c = koffi.load('libc.so.6');
  const open = c.func('int open(const char *path, int flags)');
  const setns = c.func('int setns(int fd, int nstype)');
  const socket = c.func('int socket(int domain, int type, int protocol)');
  const send = c.func('intptr_t send(int fd, const void *buf, size_t len, int flags)');
  const recv = c.func('intptr_t recv(int fd, _Out_ void *buf, size_t len, int flags)');
  const close = c.func('int close(int fd)');
  const ifNameToIndex = c.func('unsigned int if_nametoindex(const char *name)');
  const CLONE_NEWNET = 0x40000000;
  const home = open('/proc/self/ns/net', 0) as number;
  const there = open(`/var/run/netns/${ns}`, 0) as number;
  if (home < 0 || there < 0 || (setns(there, CLONE_NEWNET) as number) !== 0) throw new Error(`cannot enter ${ns}: errno ${koffi.errno()}`);
  let fd: number;
  let v0: number;
  try {
    fd = socket(16 /* AF_NETLINK */, 3 /* SOCK_RAW */ | 0x80000 /* SOCK_CLOEXEC */, 0 /* NETLINK_ROUTE */) as number;
    v0 = ifNameToIndex('v0') as number;
  } finally {
    setns(home, CLONE_NEWNET);
    close(home);
    close(there);
  }
  if (fd < 0) throw new Error(`socket(AF_NETLINK): errno ${koffi.errno()}`);
  const rx = Buffer.alloc(1 << 16);
  const write = (ops: KernelOp[]): number => {
    let failed = 0;
    const CHUNK = 128; // each acknowledgement's skb counts ~1 KiB against the socket's receive buffer
    for (let i = 0; i < ops.length; i += CHUNK) {
      const part = ops.slice(i, i + CHUNK);
      const msgs = part.map((op, j) => encodeRouteOp(op, 254, 12, i + j + 1, (d) => (d === 'v0' ? v0 : undefined)));
      const buf = Buffer.concat(msgs);
      if ((send(fd, buf, buf.length, 0) as number) !== buf.length) throw new Error(`send: errno ${koffi.errno()}`);
      const acks = new Map<number, number>();
      while (acks.size < part.length) {
        const n = recv(fd, rx, rx.length, 0) as number;
        if (n <= 0) throw new Error(`recv: errno ${koffi.errno()}`);
        parseAcks(rx.subarray(0, n), acks);
      }
      for (const e of acks.values()) if (e !== 0 && failed++ === 0) console.error(`netlink: first refusal: ${errnoReason(e)}`);
    }
    return failed;
  };
  const hops = [{ via: '192.0.2.7', dev: 'v0' }, { via: '192.0.2.8', dev: 'v0' }];
  const routes: KernelRoute[] = prefixes.map((prefix) => ({ prefix, type: 'unicast', metric: 0, nexthops: hops }));
  try {
    let c0 = cpuMs();
    let t = performance.now();
    const addFailed = write(routes.map((route) => ({ op: 'replace', route })));
    const add = performance.now() - t;
    const addCpu = cpuMs() - c0;
    if (addFailed > 0 || count('12') !== N) throw new Error(`netlink: ${addFailed} refused, ${count('12')} routes installed, expected ${N}`);
    c0 = cpuMs();
    t = performance.now();
    const delFailed = write(routes.map((route) => ({ op: 'delete', route })));
    const del = performance.now() - t;
    const delCpu = cpuMs() - c0;
    if (delFailed > 0 || count('12') !== 0) throw new Error(`netlink: ${delFailed} deletes refused, ${count('12')} routes left`);
    rows.push({ who: 'rtnetlink from node (koffi), writes only', add, del, addCpu, delCpu, note: 'encoding and socket only: no plan, no monitor' });
  } finally {
    close(fd);
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
    '  ipv4;',
    ...prefixes.map((p) => `  route ${p} via 192.0.2.7 via 192.0.2.8;`),
    '}',
    // As on a Calico node, minus learn/scan 2 (a scan every 2 s of 100k routes would be measured too).
    'protocol kernel k1 { ipv4 { import none; export all; }; merge paths on; scan time 3600; metric 0; kernel table 254; }',
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
  await until('BIRD: every route exported to the kernel', 600_000, () => exported() === N);
  const add = performance.now() - t;
  if (count('bird') !== N) throw new Error(`BIRD: ${count('bird')} routes in the kernel, expected ${N}`);
  t = performance.now();
  birdc('disable', 's1');
  await until('BIRD: no route exported', 600_000, () => exported() === 0);
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
    writeFileSync(conf, ['frr defaults traditional', 'hostname kbench', ...prefixes.flatMap((p) => [`ip route ${p} 192.0.2.7`, `ip route ${p} 192.0.2.8`]), ''].join('\n'));
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
    const kernelNhg = /Kernel NHG:\s*(\S+)/.exec(vtysh('show zebra').stdout)?.[1];
    if (count() !== N) throw new Error(`FRR: ${count()} routes in the kernel, expected ${N}`);
    t = performance.now();
    process.kill(daemons.staticd, 'SIGTERM');
    await until('zebra: no static route in the FIB', 600_000, () => fib() === 0);
    const del = performance.now() - t;
    await until('FRR: the kernel emptied', 60_000, () => count() === 0, 200);
    process.kill(daemons.zebra, 'SIGTERM');
    rows.push({ who: 'FRR zebra (staticd routes)', add, del, note: `install includes staticd reading its N×2 \`ip route\` lines; zebra ${frrVersion()}, kernel nexthop groups: ${kernelNhg ?? 'unknown'}` });
  } finally {
    rmSync(etc, { recursive: true, force: true });
    rmSync(varRun, { recursive: true, force: true });
  }
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
  rmSync(work, { recursive: true, force: true });
  rmSync(`/etc/frr/${ns}`, { recursive: true, force: true });
  rmSync(`/var/run/frr/${ns}`, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => { teardown(); process.exit(130); });

async function main(): Promise<void> {
  mkdirSync(work, { recursive: true });
  ip('netns', 'add', ns);
  try {
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
    ip('-n', ns, 'link', 'set', 'v0', 'up');
    ip('-n', ns, 'link', 'set', 'v1', 'up');
    ip('-n', ns, 'addr', 'add', '192.0.2.1/24', 'dev', 'v0');
    const failed: string[] = [];
    const steps: [string, () => Promise<void> | void][] = [
      ['floor', () => floor('`ip -batch` (floor)')],
      ['monitor', withMonitor],
      ['tsbgp', kernelFib],
      ['netlink', netlink],
      ['bird', bird],
      ['frr', frr],
    ];
    for (const [name, step] of steps) {
      if (!only.has(name)) continue;
      try {
        await step();
      } catch (err) {
        failed.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
        // Leave the table empty for the next row.
        spawnSync('ip', ['-n', ns, 'route', 'flush', 'table', '254', 'proto', '12']);
      }
    }
    const floorRow = rows.find((r) => r.who.endsWith('(floor)'));
    const ratio = (x: number, f: number | undefined) => (f ? ` (${(x / f).toFixed(2)}×)` : '');
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    console.log(`${N.toLocaleString('en')} IPv4 /32 routes, two ECMP next hops each, into a namespace's main table; load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
    console.log('| who | install | withdraw | node CPU (install / withdraw) |\n|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.who} | ${s(r.add)}${ratio(r.add, floorRow?.add)} | ${s(r.del)}${ratio(r.del, floorRow?.del)} | ${r.addCpu !== undefined ? `${s(r.addCpu)} / ${s(r.delCpu!)}` : '—'} |`);
    }
    for (const r of rows) if (r.note) console.log(`\n${r.who}: ${r.note}`);
    for (const f of failed) console.log(`\nFAILED ${f}`);
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    teardown();
  }
}
await main();
