/**
 * kernel-bgp.ts's count: an `ip -ts -o monitor route` of our own, for the one
 * thing iproute2 cannot do here — a receive buffer larger than
 * net.core.rmem_max. iproute2 (6.1) sizes its socket with SO_RCVBUF, which
 * the kernel caps at rmem_max (4 MiB on this host, a host-wide setting not
 * writable inside a network namespace); as root SO_RCVBUFFORCE is not capped.
 * Run in the namespace (`ip netns exec`) at a real-time priority, it blocks
 * in recv(), stamps each datagram when it arrives, and writes one line per
 * route notification to stdout (a file) in `ip -ts -o monitor`'s format.
 * The first line says the buffer the kernel granted; an overrun (ENOBUFS)
 * is reported on stderr in iproute2's words, so the reader resyncs by a dump.
 *
 *   node --import tsx bench/lab/rtnl-monitor.ts [buffer bytes] > file
 */
import { writeSync } from 'node:fs';
import { libc } from '../../src/native/libc.js';
import { AF_NETLINK, EINTR, ENOBUFS, NETLINK_ROUTE, SO_RCVBUF, SO_RCVBUFFORCE, SOCK_RAW, SOL_SOCKET } from '../../src/native/linux.js';
import { decodeNotifications } from '../../src/kernel/rtnetlink.js';
import { routeEventLine } from './route-view.js';

const RTMGRP_IPV4_ROUTE = 0x40;

const want = Number(process.argv[2] ?? 256 << 20);
const c = libc();
const fd = c.socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
if (fd < 0) throw new Error(`socket(AF_NETLINK): ${c.strerror(c.errno())}`);
const int = (v: number) => new Uint8Array(new Int32Array([v]).buffer);
if (c.setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, int(want)) !== 0) throw new Error(`setsockopt(SO_RCVBUFFORCE, ${want}): ${c.strerror(c.errno())}`);
const got = new Uint8Array(4);
if (c.getsockopt(fd, SOL_SOCKET, SO_RCVBUF, got, new Int32Array([4])) !== 0) throw new Error(`getsockopt(SO_RCVBUF): ${c.strerror(c.errno())}`);
const sa = new Uint8Array(12);
const v = new DataView(sa.buffer);
v.setUint16(0, AF_NETLINK, true);
v.setUint32(8, RTMGRP_IPV4_ROUTE, true);
if (c.bind(fd, sa) !== 0) throw new Error(`bind(AF_NETLINK): ${c.strerror(c.errno())}`);
writeSync(1, `# receive buffer ${new DataView(got.buffer).getInt32(0, true)} bytes\n`);

const names = new Map<number, string>();
const buf = new Uint8Array(1 << 20);
for (;;) {
  const n = c.recv(fd, buf, 0);
  const at = performance.timeOrigin + performance.now();
  if (n < 0) {
    const e = c.errno();
    if (e === EINTR) continue;
    if (e === ENOBUFS) {
      writeSync(2, 'netlink receive error No buffer space available (105)\n');
      continue;
    }
    throw new Error(`recv: ${c.strerror(e)}`);
  }
  let out = '';
  for (const ev of decodeNotifications(buf.subarray(0, n), names)) if (ev.kind === 'route') out += routeEventLine(at, ev) + '\n';
  if (out) writeSync(1, out);
}
