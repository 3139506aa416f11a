/**
 * Learned routes into a Linux routing table: speaker B keeps the main table
 * of a scratch network namespace in step with its best paths (ECMP
 * included), as BIRD's kernel protocol does on a Calico node. A and C
 * announce the same prefix with next hops on the namespace's connected
 * network; B installs one route with two next hops, plus a blackhole.
 * Needs root (CAP_NET_ADMIN) and iproute2; the namespace is removed at the end.
 *
 *   sudo node --import tsx examples/kernel-fib.ts
 */
import { execFileSync } from 'node:child_process';
import { BgpSpeaker } from '../src/index.js';

const ns = `tsbgp-example-${process.pid}`;
const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });
ip('netns', 'add', ns);
try {
  ip('-n', ns, 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'v1');
  ip('-n', ns, 'link', 'set', 'v0', 'up');
  ip('-n', ns, 'link', 'set', 'v1', 'up');
  ip('-n', ns, 'addr', 'add', '192.0.2.1/24', 'dev', 'v0');

  const listen = (address: string) => ({ addresses: [address], port: 0 });
  const a = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.2', listen: listen('127.0.0.2') });
  const c = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.3', listen: listen('127.0.0.3') });
  const b = new BgpSpeaker({
    asn: 65000,
    routerId: '127.0.0.1',
    listen: listen('127.0.0.1'),
    kernel: {
      netns: ns, // omit to program this process's own namespace
      table: 'main',
      protocol: 12, // "proto bird", as on a Calico node (the default)
      ecmp: 16,
      statics: [{ prefix: '198.51.100.0/26', blackhole: true }],
      // rules: [{ prefix: '198.18.0.0/16', action: 'reject', why: 'service CIDR' }],
      // exportPolicies: ['kernel-only-pods'],
    },
  });
  for (const s of [a, b, c]) await s.start();
  for (const s of [a, c]) {
    const addr = s.options.routerId;
    s.addPeer({ address: '127.0.0.1', port: b.port, asn: 65000, localAddress: addr, families: ['ipv4'], connectRetryTime: 1 });
    b.addPeer({ address: addr, port: s.port, asn: 65000, localAddress: '127.0.0.1', families: ['ipv4'], connectRetryTime: 1 });
  }
  a.originate('203.0.113.0/24', { nextHop: '192.0.2.7' });
  c.originate('203.0.113.0/24', { nextHop: '192.0.2.8' });

  // Wait until the kernel holds the route with both next hops.
  for (let i = 0; i < 200 && (b.kernelRoute('203.0.113.0/24')?.installed[0]?.nexthops.length ?? 0) < 2; i++) await new Promise((r) => setTimeout(r, 50));
  const view = b.kernelRoute('203.0.113.0/24');
  console.log(`B's kernel route 203.0.113.0/24: ${view?.installed[0]?.nexthops.map((h) => `via ${h.via} dev ${h.dev}`).join(', ')}`);
  console.log(ip('-n', ns, 'route', 'show', 'proto', 'bird').trim());

  // Routes persist when the speaker stops (the next start adopts them); here the namespace goes anyway.
  for (const s of [a, b, c]) await s.stop();
} finally {
  ip('netns', 'del', ns);
}
