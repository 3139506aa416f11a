/**
 * The rtnetlink listener's thread (route-listener.ts starts it): it enters
 * the network namespace for good (setns moves only this thread), opens a
 * NETLINK_ROUTE socket joined to the link and route groups, and
 * blocks in recv(). Datagrams caused by our own writer's requests (its port
 * id in nlmsg_pid) are dropped by a socket filter in the kernel, and left
 * out here by their headers should any get through; what remains goes to
 * the main thread as bytes, undecoded, a burst per message. ENOBUFS (the
 * kernel dropped notifications) is reported, so that the main thread
 * resyncs. A receive timeout lets the loop see the shared stop flag: it
 * waits on the kernel, it does not poll its state.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  AF_NETLINK,
  CLONE_NEWNET,
  EAGAIN,
  EINTR,
  ENOBUFS,
  libc,
  MSG_DONTWAIT,
  NETLINK_ROUTE,
  O_RDONLY_CLOEXEC,
  SO_ATTACH_FILTER,
  SO_RCVBUF,
  SO_RCVBUFFORCE,
  SO_RCVTIMEO,
  SOCK_CLOEXEC,
  SOCK_RAW,
  SOL_SOCKET,
} from '../native/index.js';
import { dropSenderFilter, LISTENER_GROUPS, othersMessages } from './rtnetlink.js';

/** What the listener thread is given. */
export interface ListenerWorkerData {
  /** A name under /var/run/netns; absent: this process's namespace. */
  readonly netns?: string;
  /** The writer's port id: notifications of its requests are not wanted. */
  readonly skipPid?: number;
  /** The socket's receive buffer, bytes (default 8 MiB). */
  readonly buffer?: number;
  /** Int32Array over it: [0] ≠ 0 asks the thread to stop. */
  readonly stop: SharedArrayBuffer;
}

/** Messages from the listener thread. */
export type FromListener =
  | { readonly type: 'ready'; readonly pid: number; readonly filtered: boolean }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'messages'; readonly bytes: Uint8Array }
  | { readonly type: 'overrun' };

/** How long recv() waits before looking at the stop flag. */
const WAKE_MS = 200;
/** Largest burst handed over in one message. */
const BURST = 256 * 1024;

function run(port: NonNullable<typeof parentPort>, data: ListenerWorkerData): void {
  const post = (m: FromListener, transfer?: ArrayBuffer[]) => port.postMessage(m, transfer);
  const c = libc();
  const fail = (what: string) => {
    throw new Error(`${what}: ${c.strerror(c.errno())}`);
  };
  if (data.netns !== undefined) {
    const file = `/var/run/netns/${data.netns}`;
    const ns = c.open(file, O_RDONLY_CLOEXEC);
    if (ns < 0) fail(`cannot open network namespace ${file}`);
    const ok = c.setns(ns, CLONE_NEWNET) === 0;
    const why = ok ? '' : c.strerror(c.errno());
    c.close(ns);
    if (!ok) throw new Error(`cannot enter network namespace ${file}: ${why}`);
  }
  const fd = c.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) fail('socket(AF_NETLINK, NETLINK_ROUTE)');
  const int = (v: number) => new Uint8Array(new Int32Array([v]).buffer);
  try {
    // Room for a burst of others' changes (and for every echo, where the writer is ip -batch).
    const room = data.buffer ?? 8 << 20;
    if (c.setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, int(room)) !== 0) c.setsockopt(fd, SOL_SOCKET, SO_RCVBUF, int(room));
    let filtered = false;
    if (data.skipPid !== undefined) {
      // Before joining the groups, so that no echo of ours is queued at all.
      const f = dropSenderFilter(data.skipPid);
      filtered = c.setsockoptFprog(fd, SOL_SOCKET, SO_ATTACH_FILTER, f.program) === 0;
    }
    const tv = new Uint8Array(16); // struct timeval { time_t tv_sec; suseconds_t tv_usec; } (64-bit)
    new DataView(tv.buffer).setBigInt64(8, BigInt(WAKE_MS * 1000), true);
    if (c.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, tv) !== 0) fail('setsockopt(SO_RCVTIMEO)');
    const sa = new Uint8Array(12); // struct sockaddr_nl { family; pad; pid (0: the kernel picks); groups }
    const v = new DataView(sa.buffer);
    v.setUint16(0, AF_NETLINK, true);
    v.setUint32(8, LISTENER_GROUPS, true);
    if (c.bind(fd, sa) !== 0) fail('bind(AF_NETLINK, route groups)');
    const len = new Int32Array([12]);
    if (c.getsockname(fd, sa, len) !== 0) fail('getsockname');
    post({ type: 'ready', pid: v.getUint32(4, true), filtered });

    const stop = new Int32Array(data.stop);
    const buf = new Uint8Array(64 * 1024);
    const parts: Uint8Array[] = [];
    let size = 0;
    const take = (n: number) => {
      const mine = data.skipPid !== undefined ? othersMessages(buf.subarray(0, n), data.skipPid) : buf.subarray(0, n);
      if (mine === undefined) return;
      parts.push(mine.buffer === buf.buffer ? mine.slice() : mine);
      size += mine.length;
    };
    const flush = () => {
      if (size === 0) return;
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const p of parts) {
        bytes.set(p, at);
        at += p.length;
      }
      parts.length = 0;
      size = 0;
      post({ type: 'messages', bytes }, [bytes.buffer]);
    };
    while (Atomics.load(stop, 0) === 0) {
      const n = c.recv(fd, buf, 0);
      if (n < 0) {
        const e = c.errno();
        if (e === EAGAIN || e === EINTR) continue;
        if (e === ENOBUFS) {
          post({ type: 'overrun' });
          continue;
        }
        fail('recv on the rtnetlink listener');
      }
      if (n > 0) take(n);
      // Whatever else is queued now goes in the same message.
      while (size < BURST) {
        const m = c.recv(fd, buf, MSG_DONTWAIT);
        if (m <= 0) {
          if (m < 0 && c.errno() === ENOBUFS) post({ type: 'overrun' });
          break;
        }
        take(m);
      }
      flush();
    }
  } finally {
    c.close(fd);
  }
}

const port = parentPort;
if (port) {
  try {
    run(port, workerData as ListenerWorkerData);
  } catch (err) {
    port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) } satisfies FromListener);
  }
}
