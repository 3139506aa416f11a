/**
 * Kernel FIB cost, as root, in a scratch namespace: N IPv4 routes with two
 * ECMP next hops each installed and then withdrawn, by KernelFib (the pure
 * core's plan + `ip -force -batch`) and by `ip -batch` of the same lines
 * (the floor: what the kernel and iproute2 cost). Routes are /32s inside
 * 198.18.0.0/15 (at most 131,072). BIRD's kernel protocol and FRR's zebra
 * side by side are not measured yet.
 *
 *   sudo node --import tsx bench/lab/kernel.ts [--routes 100000]
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KernelFib } from '../../src/kernel/kernel-fib.js';
import { formatV4 } from '../../src/net/address.js';

const arg = process.argv.indexOf('--routes');
const N = arg > 0 ? Number(process.argv[arg + 1]) : 100_000;
if (!(N > 0 && N <= 131_072)) throw new Error('--routes must be 1..131072');
const ns = `tsbgp-kbench${process.pid}`;
const ip = (...a: string[]) => execFileSync('ip', a, { encoding: 'utf8', maxBuffer: 1 << 30 });
const base = (198 << 24) | (18 << 16);
const prefixes = Array.from({ length: N }, (_, i) => `${formatV4((base + i) >>> 0)}/32`);
const count = () => ip('-n', ns, 'route', 'show', 'proto', '12').split('\n').filter((l) => l.startsWith('198.')).length;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

async function main(): Promise<void> {
  ip('netns', 'add', ns);
  try {
    ip('-n', ns, 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
    ip('-n', ns, 'link', 'set', 'v0', 'up');
    ip('-n', ns, 'link', 'set', 'v1', 'up');
    ip('-n', ns, 'addr', 'add', '192.0.2.1/24', 'dev', 'v0');
    const rows: string[] = [];

    // floor: ip -batch of the same lines
    const file = join(tmpdir(), `${ns}.batch`);
    writeFileSync(file, prefixes.map((p) => `route replace ${p} table 254 proto 12 metric 0 nexthop via 192.0.2.7 dev v0 nexthop via 192.0.2.8 dev v0`).join('\n') + '\n');
    let t = performance.now();
    ip('-n', ns, '-force', '-batch', file);
    const floorAdd = performance.now() - t;
    if (count() !== N) throw new Error(`floor: ${count()} routes installed, expected ${N}`);
    writeFileSync(file, prefixes.map((p) => `route del ${p} table 254 proto 12 metric 0`).join('\n') + '\n');
    t = performance.now();
    ip('-n', ns, '-force', '-batch', file);
    const floorDel = performance.now() - t;
    rmSync(file);
    rows.push(`| ip -batch (floor) | ${(floorAdd / 1000).toFixed(2)} s | — | ${(floorDel / 1000).toFixed(2)} s | — |`);

    // KernelFib
    const fib = new KernelFib({ netns: ns, scanSeconds: 0, adopt: false });
    await fib.start();
    if (!fib.status().enabled) throw new Error(fib.status().error);
    const gw = { kind: 'unicast' as const, gateways: [{ address: '192.0.2.7' }, { address: '192.0.2.8' }] };
    let c = cpu();
    t = performance.now();
    for (const p of prefixes) fib.setRoute(p, gw);
    await fib.flushed();
    const addMs = performance.now() - t;
    const addCpu = cpu() - c;
    if (count() !== N || fib.status().routes.installed !== N) throw new Error(`KernelFib: ${count()} routes installed, expected ${N}`);
    c = cpu();
    t = performance.now();
    for (const p of prefixes) fib.setRoute(p, undefined);
    await fib.flushed();
    const delMs = performance.now() - t;
    const delCpu = cpu() - c;
    if (count() !== 0) throw new Error(`KernelFib: ${count()} routes left after withdrawing all`);
    await fib.stop();
    rows.push(`| tsbgp KernelFib | ${(addMs / 1000).toFixed(2)} s (${(addMs / floorAdd).toFixed(2)}× floor) | ${(addCpu / 1000).toFixed(2)} s | ${(delMs / 1000).toFixed(2)} s (${(delMs / floorDel).toFixed(2)}× floor) | ${(delCpu / 1000).toFixed(2)} s |`);
    console.log(`${N.toLocaleString('en')} IPv4 routes, two ECMP next hops each, into a namespace's main table\n`);
    console.log('| who | install (wall) | node CPU | withdraw (wall) | node CPU |\n|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    ip('netns', 'del', ns);
  }
}
await main();
