/**
 * How KernelFib writes routes: one interface, two implementations, chosen
 * at start.
 *
 * - `NetlinkWriter`: RTM_NEWROUTE/RTM_DELROUTE requests (rtnetlink.ts) on an
 *   AF_NETLINK/NETLINK_ROUTE socket opened through koffi (src/native) in our
 *   network namespace or the configured one. Requests go in chunks of
 *   `CHUNK` per send(); the kernel handles a netlink request inside send(),
 *   so when send() returns every answer is queued. Requests carry no
 *   NLM_F_ACK: the kernel answers only refusals (a request without it gets
 *   an acknowledgement only when it fails), which are read without waiting
 *   (MSG_DONTWAIT, until the queue is empty) and mapped back to the
 *   operations by sequence number, with the kernel's words (strerror of the
 *   errno, and the extended-ack message when the kernel gives one); silence
 *   is success. An overrun receive queue (ENOBUFS: answers lost) makes the
 *   outcome uncertain, and KernelFib reads the table again. With its thread
 *   (`startThread`, writer-worker.ts) the chunks are encoded here and sent
 *   there: the kernel installs one chunk on that thread's core while this
 *   one encodes the next (and KernelFib plans the next piece); writes begun
 *   together post their chunks in the order begun. Without it, between
 *   chunks the event loop gets a turn whenever a few milliseconds have gone
 *   by.
 * - `IpBatchWriter`: `ip -force -batch -` (every line tried; `Command
 *   failed -:N` maps the kernel's words to lines): where koffi cannot load,
 *   where this process may not write routes but `ip` may (a file capability
 *   on `ip`), or when chosen (`writer: 'iproute2'`).
 */
import type { Worker } from 'node:worker_threads';
import {
  AF_NETLINK,
  CLONE_NEWNET,
  EAGAIN,
  EINTR,
  errnoReason,
  libc,
  MSG_DONTWAIT,
  NETLINK_CAP_ACK,
  NETLINK_EXT_ACK,
  NETLINK_ROUTE,
  O_RDONLY_CLOEXEC,
  SO_RCVBUF,
  SO_RCVBUFFORCE,
  SO_SNDBUF,
  SOCK_CLOEXEC,
  SOCK_RAW,
  SOL_NETLINK,
  SOL_SOCKET,
  startModuleWorker,
  type Libc,
} from '../native/index.js';
import { formatOp, parseBatchErrors } from './iproute2.js';
import { parseAckDetails, RouteEncoder, type Ack } from './rtnetlink.js';
import type { KernelOp, NextHop } from './types.js';
import type { FromWriter, ToWriter, WriterWorkerData } from './writer-worker.js';

export type WriterKind = 'netlink' | 'iproute2';

export interface WriteResult {
  /** One entry per operation: undefined (done) or the kernel's reason. */
  readonly errors: (string | undefined)[];
  /** Some results are not known (acknowledgements lost): the table should be read again. */
  readonly uncertain: boolean;
}

export interface RouteWriter {
  readonly kind: WriterKind;
  /** Writes the operations in order. Throws only when nothing could be written. */
  write(ops: readonly KernelOp[]): Promise<WriteResult>;
  close(): void;
}

/** Runs `ip` with arguments (and stdin lines); the shell's runner. */
export type IpRunner = (args: string[], stdinLines?: string[]) => Promise<{ code: number | null; stdout: string; stderr: string; error?: Error }>;

export class IpBatchWriter implements RouteWriter {
  readonly kind = 'iproute2' as const;
  constructor(
    private readonly run: IpRunner,
    private readonly nsArgs: readonly string[],
    private readonly table: number,
    private readonly protocol: number,
  ) {}

  async write(ops: readonly KernelOp[]): Promise<WriteResult> {
    const lines = ops.map((op) => formatOp(op, this.table, this.protocol));
    const r = await this.run([...this.nsArgs, '-force', '-batch', '-'], lines);
    if (r.error !== undefined) throw new Error(`ip -batch: ${r.error.message}`);
    const errors = parseBatchErrors(r.stderr);
    return { errors: ops.map((_, i) => errors.get(i + 1)), uncertain: false };
  }

  close(): void {}
}

/** Requests per send() at most: each refusal is a small skb (under 1 KiB) charged against the receive buffer, which must hold a chunk's. */
export const CHUNK = 256;
/** Give the event loop a turn after this long of writing (without the writer thread). */
const SLICE_MS = 8;
/** Chunks posted to the writer thread and not yet answered, at most (4,096 requests: some 10 ms of the kernel's work). */
const WINDOW = 16;

/** One write() in progress. */
interface WriteState {
  readonly out: (string | undefined)[];
  uncertain: boolean;
  /** Chunks posted to the thread and not yet answered. */
  inflight: number;
  wake: (() => void) | undefined;
}

/** A chunk posted to the writer thread: its requests' sequence numbers are seq0, seq0 + 1, … for operations ks[0], ks[1], …. */
interface ChunkRecord {
  readonly state: WriteState;
  readonly seq0: number;
  readonly ks: Int32Array;
  readonly count: number;
  readonly length: number;
}

interface WriterThread {
  readonly w: Worker;
  nextId: number;
  readonly chunks: Map<number, ChunkRecord>;
  closing: boolean;
}

/**
 * Runs `fn` with this thread in the network namespace whose file is
 * `nsFile`, and back. setns(2) moves only the calling thread: node's main
 * thread, synchronously, so no other JavaScript runs meanwhile.
 */
function inNamespace<T>(c: Libc, nsFile: string | undefined, fn: () => T): T {
  if (nsFile === undefined) return fn();
  const home = c.open('/proc/thread-self/ns/net', O_RDONLY_CLOEXEC);
  if (home < 0) throw new Error(`cannot open our own network namespace: ${c.strerror(c.errno())}`);
  try {
    const there = c.open(nsFile, O_RDONLY_CLOEXEC);
    if (there < 0) throw new Error(`cannot open network namespace ${nsFile}: ${c.strerror(c.errno())}`);
    try {
      if (c.setns(there, CLONE_NEWNET) !== 0) throw new Error(`cannot enter network namespace ${nsFile}: ${c.strerror(c.errno())}`);
    } finally {
      c.close(there);
    }
    try {
      return fn();
    } finally {
      // Not getting back would leave node's main thread in the wrong namespace: nothing sane can follow.
      if (c.setns(home, CLONE_NEWNET) !== 0) throw new Error(`FATAL: cannot return to our network namespace: ${c.strerror(c.errno())}`);
    }
  } finally {
    c.close(home);
  }
}

export class NetlinkWriter implements RouteWriter {
  readonly kind = 'netlink' as const;
  private readonly c: Libc;
  private fd: number;
  private seq = 1;
  private readonly encoder: RouteEncoder;
  private readonly rx = Buffer.alloc(256 * 1024);
  private readonly acks = new Map<number, Ack>();
  private thread: WriterThread | undefined;
  /** Chunks posted to the thread and not yet answered, every write's. */
  private inflight = 0;
  /** Writes in progress. */
  private writing = 0;
  /** The interface indexes of the writes in progress. */
  private knownIndexes: Map<string, number> | undefined;
  /** The write posting chunks waits here for room in the window. */
  private roomWake: (() => void) | undefined;
  /** Settles once every write begun so far has posted its chunks: writes post in the order they were called. */
  private posting: Promise<void> = Promise.resolve();
  private readonly nsFile: string | undefined;
  /** Requests per send(), at most CHUNK. */
  private chunk = 64;

  /**
   * Opens the socket (in `netns`, a name under /var/run/netns, when given).
   * Throws NativeUnavailableError where koffi cannot load, or an Error
   * naming what failed.
   */
  constructor(opts: { readonly netns?: string; readonly table: number; readonly protocol: number }) {
    this.c = libc();
    const c = this.c;
    this.nsFile = opts.netns !== undefined ? `/var/run/netns/${opts.netns}` : undefined;
    this.fd = inNamespace(c, this.nsFile, () => c.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    if (this.fd < 0) throw new Error(`socket(AF_NETLINK, NETLINK_ROUTE): ${c.strerror(c.errno())}`);
    const int = (v: number) => new Uint8Array(new Int32Array([v]).buffer);
    // Acknowledgements without the request echoed, with the kernel's extended message; room for a chunk of them.
    c.setsockopt(this.fd, SOL_NETLINK, NETLINK_CAP_ACK, int(1));
    c.setsockopt(this.fd, SOL_NETLINK, NETLINK_EXT_ACK, int(1));
    if (c.setsockopt(this.fd, SOL_SOCKET, SO_RCVBUFFORCE, int(1 << 20)) !== 0) c.setsockopt(this.fd, SOL_SOCKET, SO_RCVBUF, int(1 << 20));
    c.setsockopt(this.fd, SOL_SOCKET, SO_SNDBUF, int(1 << 20));
    // Without the privilege to force it, the receive buffer may stay small (rmem_max): fewer requests per send().
    const got = new Uint8Array(4);
    const gotLen = new Int32Array([4]);
    if (c.getsockopt(this.fd, SOL_SOCKET, SO_RCVBUF, got, gotLen) === 0) {
      const rcvbuf = new DataView(got.buffer).getInt32(0, true);
      this.chunk = Math.max(16, Math.min(CHUNK, Math.floor(rcvbuf / 2048)));
    }
    this.encoder = new RouteEncoder(opts.table, opts.protocol);
    // Our port id now (bound by the kernel's choice), so that a listener can leave out the notifications our requests cause.
    const sa = new Uint8Array(12); // struct sockaddr_nl { family; pad; pid; groups }
    new DataView(sa.buffer).setUint16(0, AF_NETLINK, true);
    const len = new Int32Array([12]);
    if (c.bind(this.fd, sa) === 0 && c.getsockname(this.fd, sa, len) === 0) this.portId = new DataView(sa.buffer).getUint32(4, true);
  }

  /** The socket's netlink port id: the kernel's notifications of our requests carry it (nlmsg_pid). Undefined if it could not be read. */
  readonly portId: number | undefined;

  /**
   * Whether this process may write routes: deletes a route that does not
   * exist and looks at why that failed. Undefined: it may ("No such
   * process"); else the kernel's words ("Operation not permitted").
   */
  probe(): string | undefined {
    const route = { prefix: '192.0.2.255/32', type: 'unicast' as const, metric: 4294967295, nexthops: [] };
    this.encoder.reset();
    const seq = this.seq++;
    this.encoder.add({ op: 'delete', route }, seq, () => undefined);
    const buf = this.encoder.bytes;
    if (this.c.send(this.fd, buf, 0) !== buf.length) return `netlink send: ${this.c.strerror(this.c.errno())}`;
    const acks = new Map<number, Ack>();
    for (let tries = 0; tries < 100 && !acks.has(seq); tries++) {
      const got = this.c.recv(this.fd, this.rx, MSG_DONTWAIT);
      if (got < 0 && this.c.errno() === EINTR) continue;
      if (got <= 0) return 'no acknowledgement from the kernel';
      parseAckDetails(this.rx.subarray(0, got), acks);
    }
    const a = acks.get(seq);
    if (a === undefined) return 'no acknowledgement from the kernel';
    return a.errno === 1 || a.errno === 13 ? this.reason(a) : undefined;
  }

  /** The kernel's words for an acknowledgement's error. */
  private reason(a: Ack): string {
    let text: string;
    try {
      text = this.c.strerror(a.errno);
    } catch {
      text = errnoReason(a.errno);
    }
    return a.message !== undefined ? `${text} (${a.message.replace(/\.$/, '')})` : text;
  }

  /**
   * Moves the sending to a thread of its own (writer-worker.ts), so that the
   * kernel installs one chunk (inside send(), on that thread's core) while
   * this thread plans and encodes the next. Resolves true once the thread
   * runs; false (and writes stay on this thread) when it cannot start.
   */
  async startThread(): Promise<boolean> {
    if (this.fd < 0 || this.thread !== undefined) return this.thread !== undefined;
    const data: WriterWorkerData = { fd: this.fd };
    let w: Worker;
    try {
      w = startModuleWorker(import.meta.url, 'writer-worker', data, 'tsbgp-rtnl-writer');
    } catch {
      return false;
    }
    const ready = await new Promise<boolean>((resolve) => {
      const early = (m: FromWriter) => {
        if (m.type === 'ready') {
          w.off('message', early);
          resolve(true);
        }
      };
      w.on('message', early);
      w.once('error', () => resolve(false));
      w.once('exit', () => resolve(false));
    });
    if (!ready || this.fd < 0) {
      void w.terminate();
      return false;
    }
    const thread: WriterThread = { w, nextId: 1, chunks: new Map(), closing: false };
    this.thread = thread;
    const gone = (why: string) => {
      if (this.thread === thread) this.thread = undefined;
      for (const ch of thread.chunks.values()) {
        for (let j = 0; j < ch.count; j++) ch.state.out[ch.ks[j]] ??= `netlink writer thread stopped (${why}): outcome unknown`;
        ch.state.uncertain = true;
        this.chunkDone(ch.state);
      }
      thread.chunks.clear();
    };
    w.on('message', (m: FromWriter) => {
      if (m.type !== 'done') return;
      const ch = thread.chunks.get(m.id);
      if (ch === undefined) return;
      thread.chunks.delete(m.id);
      this.finishChunk(ch, m);
    });
    w.on('error', (e) => gone(e.message));
    w.on('exit', (code) => gone(thread.closing ? 'closed' : `exited ${code}`));
    w.unref();
    return true;
  }

  /** Whether writes go through the writer thread. */
  get threaded(): boolean {
    return this.thread !== undefined;
  }

  private chunkDone(state: WriteState): void {
    state.inflight--;
    this.inflight--;
    const wake = state.wake;
    state.wake = undefined;
    wake?.();
    const room = this.roomWake;
    this.roomWake = undefined;
    room?.();
  }

  /**
   * Resolves once the writes begun so far have handed all their requests
   * on (with the writer thread: posted to it, at most a window of chunks
   * ahead of the kernel): the moment to prepare the next write, which then
   * keeps the thread busy. Without the thread, at once.
   */
  accepting(): Promise<void> {
    return this.posting;
  }

  /** A chunk's answer from the writer thread: its refusals mapped back to the operations. */
  private finishChunk(ch: ChunkRecord, m: Extract<FromWriter, { type: 'done' }>): void {
    const { state } = ch;
    if (m.sent !== undefined) {
      const why = m.sent < 0 ? this.strerror(m.errno ?? 0) : `short send (${m.sent} of ${ch.length} bytes)`;
      for (let j = 0; j < ch.count; j++) state.out[ch.ks[j]] = `netlink send: ${why}`;
    }
    if (m.uncertain) state.uncertain = true;
    for (const [seq, errno, message] of m.refused) {
      const j = seq - ch.seq0;
      if (j >= 0 && j < ch.count) state.out[ch.ks[j]] = this.reason(message !== '' ? { errno, message } : { errno });
    }
    this.chunkDone(state);
  }

  private strerror(errno: number): string {
    try {
      return this.c.strerror(errno);
    } catch {
      return errnoReason(errno);
    }
  }

  /**
   * Interface indexes, looked up in the namespace once per write (a device
   * may come or go between writes) — or once for writes that overlap (the
   * pieces of one plan, begun while the one before is still being written).
   */
  private ifindexes(ops: readonly KernelOp[]): (name: string) => number | undefined {
    const names = new Set<string>();
    let last: readonly NextHop[] | undefined;
    for (const op of ops) {
      if (op.op !== 'replace' || op.route.nexthops === last) continue;
      last = op.route.nexthops;
      for (const h of last) if (h.dev !== undefined) names.add(h.dev);
    }
    const known = this.writing > 0 ? this.knownIndexes : undefined;
    if (known !== undefined) {
      let all = true;
      for (const n of names) if (!known.has(n)) all = false;
      if (all) return (n: string) => known.get(n);
    }
    const indexes = new Map<string, number>();
    this.knownIndexes = indexes;
    if (names.size > 0) {
      inNamespace(this.c, this.nsFile, () => {
        for (const n of names) {
          const i = this.c.ifNameToIndex(n);
          if (i > 0) indexes.set(n, i);
        }
      });
    }
    return (n: string) => indexes.get(n);
  }

  async write(ops: readonly KernelOp[]): Promise<WriteResult> {
    if (this.fd < 0) throw new Error('netlink socket closed');
    const state: WriteState = { out: new Array<string | undefined>(ops.length).fill(undefined), uncertain: false, inflight: 0, wake: undefined };
    const ifindex = this.ifindexes(ops);
    let slice = performance.now();
    // The thread keeps the process alive only while a write waits on it.
    const thread = this.thread;
    if (this.writing++ === 0) thread?.w.ref();
    // Writes overlap (a shell prepares the next while this one is posted): each posts its chunks after the one before.
    const before = this.posting;
    let posted!: () => void;
    this.posting = new Promise<void>((r) => (posted = r));
    try {
      await before;
      for (let i = 0; i < ops.length; i += this.chunk) {
        if (this.thread !== undefined) {
          // Threaded: at most WINDOW chunks ahead of the kernel; waiting for one gives the event loop its turn.
          while (this.inflight >= WINDOW && this.thread !== undefined) await new Promise<void>((r) => (this.roomWake = r));
        } else if (i > 0 && performance.now() - slice >= SLICE_MS) {
          await new Promise<void>((r) => setImmediate(r));
          slice = performance.now();
        }
        if (this.fd < 0) throw new Error('netlink socket closed');
        const end = Math.min(ops.length, i + this.chunk);
        // Sequence numbers run on within a chunk (the answers map back by subtraction): wrap before a chunk, not inside one.
        if (this.seq + (end - i) > 0x7fffffff) this.seq = 1;
        const seq0 = this.seq;
        const ks = new Int32Array(end - i);
        let count = 0;
        this.encoder.reset();
        for (let k = i; k < end; k++) {
          try {
            this.encoder.add(ops[k], this.seq, ifindex, false);
            ks[count++] = k;
            this.seq++;
          } catch (err) {
            state.out[k] = err instanceof Error ? err.message : String(err);
          }
        }
        if (count === 0) continue;
        const t = this.thread;
        if (t !== undefined) {
          const bytes = this.encoder.bytes;
          const copy = new Uint8Array(bytes.length);
          copy.set(bytes);
          const id = t.nextId++;
          t.chunks.set(id, { state, seq0, ks, count, length: bytes.length });
          state.inflight++;
          this.inflight++;
          t.w.postMessage({ type: 'chunk', id, bytes: copy.buffer } satisfies ToWriter, [copy.buffer]);
        } else this.sendHere(state, seq0, ks, count);
      }
      posted();
      while (state.inflight > 0) await new Promise<void>((r) => (state.wake = r));
      if (this.fd < 0 && thread !== undefined) throw new Error('netlink socket closed');
    } finally {
      posted();
      if (--this.writing === 0 && thread !== undefined && this.thread === thread) thread.w.unref();
    }
    return { errors: state.out, uncertain: state.uncertain };
  }

  /** One chunk sent from this thread (no writer thread): send(), then the refusals. */
  private sendHere(state: WriteState, seq0: number, ks: Int32Array, count: number): void {
    const buf = this.encoder.bytes;
    let n: number;
    do n = this.c.send(this.fd, buf, 0);
    while (n < 0 && this.c.errno() === EINTR);
    if (n !== buf.length) {
      const why = n < 0 ? this.c.strerror(this.c.errno()) : `short send (${n} of ${buf.length} bytes)`;
      for (let j = 0; j < count; j++) state.out[ks[j]] = `netlink send: ${why}`;
      if (n > 0) state.uncertain = true;
      return;
    }
    // The refusals, all queued by now (the kernel handled the chunk inside send()).
    this.acks.clear();
    for (;;) {
      const got = this.c.recv(this.fd, this.rx, MSG_DONTWAIT);
      if (got < 0) {
        const e = this.c.errno();
        if (e === EINTR) continue;
        // ENOBUFS: answers were dropped — which routes they named is unknown.
        if (e !== EAGAIN) state.uncertain = true;
        break;
      }
      if (got === 0) break;
      parseAckDetails(this.rx.subarray(0, got), this.acks);
    }
    for (const [seq, a] of this.acks) {
      const j = seq - seq0;
      if (a.errno !== 0 && j >= 0 && j < count) state.out[ks[j]] = this.reason(a);
    }
  }

  close(): void {
    const t = this.thread;
    if (t !== undefined) {
      // The thread closes the socket once the chunks posted before are sent; it then ends (its exit settles any write in flight).
      t.closing = true;
      this.thread = undefined;
      t.w.postMessage({ type: 'close' } satisfies ToWriter);
    } else if (this.fd >= 0) this.c.close(this.fd);
    this.fd = -1;
  }
}
