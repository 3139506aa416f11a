/**
 * The rtnetlink writer's thread (route-writer.ts starts it): it owns the
 * sending side of the writer's socket. The main thread opens the socket (in
 * the namespace it writes to — a socket keeps the namespace it was made in,
 * and a file descriptor is the whole process's), probes it, encodes the
 * requests and posts them here a chunk at a time, bytes transferred, not
 * copied. Here each chunk goes out in one send(), inside which the kernel
 * installs the routes: on this thread's core, while the main thread plans
 * and encodes the next chunk. The refusals are then read without waiting
 * and posted back by sequence number with the kernel's errno and extended
 * message; ENOBUFS (answers lost) is posted as `uncertain`. Chunks are
 * handled in the order they were posted, so the kernel sees the operations
 * in order. `close` closes the socket and ends the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EAGAIN, EINTR, libc, MSG_DONTWAIT } from '../native/index.js';
import { parseAckDetails, type Ack } from './rtnetlink.js';

/** What the writer thread is given. */
export interface WriterWorkerData {
  /** The socket, opened, configured and bound by the main thread. */
  readonly fd: number;
}

/** To the writer thread. */
export type ToWriter = { readonly type: 'chunk'; readonly id: number; readonly bytes: ArrayBuffer } | { readonly type: 'close' };

/** From the writer thread. */
export type FromWriter =
  | { readonly type: 'ready' }
  | {
      readonly type: 'done';
      readonly id: number;
      /** send() failed (−1: see `errno`) or was short (0 ≤ sent < length). Undefined: all sent. */
      readonly sent?: number;
      readonly errno?: number;
      /** The refusals: [sequence number, errno, the kernel's extended message or ''] per refused request. */
      readonly refused: readonly (readonly [number, number, string])[];
      /** Answers were lost (ENOBUFS): which requests they named is unknown. */
      readonly uncertain: boolean;
    }
  | { readonly type: 'closed' };

function run(port: NonNullable<typeof parentPort>, data: WriterWorkerData): void {
  const c = libc();
  const fd = data.fd;
  const rx = Buffer.alloc(256 * 1024);
  const acks = new Map<number, Ack>();
  let open = true;
  port.on('message', (m: ToWriter) => {
    if (m.type === 'close') {
      if (open) c.close(fd);
      open = false;
      port.postMessage({ type: 'closed' } satisfies FromWriter);
      port.close();
      return;
    }
    if (!open) return;
    const buf = new Uint8Array(m.bytes);
    let n: number;
    do n = c.send(fd, buf, 0);
    while (n < 0 && c.errno() === EINTR);
    if (n !== buf.length) {
      const errno = n < 0 ? c.errno() : 0;
      port.postMessage({ type: 'done', id: m.id, sent: n, errno, refused: [], uncertain: n > 0 } satisfies FromWriter);
      return;
    }
    // The refusals, all queued by now (the kernel handled the chunk inside send()).
    let uncertain = false;
    acks.clear();
    for (;;) {
      const got = c.recv(fd, rx, MSG_DONTWAIT);
      if (got < 0) {
        const e = c.errno();
        if (e === EINTR) continue;
        // ENOBUFS: answers were dropped — which routes they named is unknown.
        if (e !== EAGAIN) uncertain = true;
        break;
      }
      if (got === 0) break;
      parseAckDetails(rx.subarray(0, got), acks);
    }
    const refused: [number, number, string][] = [];
    for (const [seq, a] of acks) if (a.errno !== 0) refused.push([seq, a.errno, a.message ?? '']);
    port.postMessage({ type: 'done', id: m.id, refused, uncertain } satisfies FromWriter);
  });
  port.postMessage({ type: 'ready' } satisfies FromWriter);
}

const port = parentPort;
if (port) run(port, workerData as WriterWorkerData);
