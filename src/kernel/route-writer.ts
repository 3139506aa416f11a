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
 *   outcome uncertain, and KernelFib reads the table again. Between chunks the
 *   event loop gets a turn whenever a few milliseconds have gone by.
 * - `IpBatchWriter`: `ip -force -batch -` (every line tried; `Command
 *   failed -:N` maps the kernel's words to lines): where koffi cannot load,
 *   where this process may not write routes but `ip` may (a file capability
 *   on `ip`), or when chosen (`writer: 'iproute2'`).
 */
import { libc, type Libc } from '../native/libc.js';
import { formatOp, parseBatchErrors } from './iproute2.js';
import { errnoReason, parseAckDetails, RouteEncoder, type Ack } from './rtnetlink.js';
import type { KernelOp } from './types.js';

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

const AF_NETLINK = 16;
const SOCK_RAW = 3;
const SOCK_CLOEXEC = 0x80000;
const NETLINK_ROUTE = 0;
const SOL_SOCKET = 1;
const SO_SNDBUF = 7;
const SO_RCVBUF = 8;
const SO_RCVBUFFORCE = 33;
const SOL_NETLINK = 270;
const NETLINK_CAP_ACK = 10;
const NETLINK_EXT_ACK = 11;
const MSG_DONTWAIT = 0x40;
const EAGAIN = 11;
const EINTR = 4;
const CLONE_NEWNET = 0x40000000;
const O_RDONLY_CLOEXEC = 0x80000;

/** Requests per send() at most: each refusal is a small skb (under 1 KiB) charged against the receive buffer, which must hold a chunk's. */
export const CHUNK = 256;
/** Give the event loop a turn after this long of writing. */
const SLICE_MS = 8;

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
    c.setsockopt(this.fd, SOL_NETLINK, NETLINK_CAP_ACK, int(1), 4);
    c.setsockopt(this.fd, SOL_NETLINK, NETLINK_EXT_ACK, int(1), 4);
    if (c.setsockopt(this.fd, SOL_SOCKET, SO_RCVBUFFORCE, int(1 << 20), 4) !== 0) c.setsockopt(this.fd, SOL_SOCKET, SO_RCVBUF, int(1 << 20), 4);
    c.setsockopt(this.fd, SOL_SOCKET, SO_SNDBUF, int(1 << 20), 4);
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
    if (c.bind(this.fd, sa, 12) === 0 && c.getsockname(this.fd, sa, len) === 0) this.portId = new DataView(sa.buffer).getUint32(4, true);
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
    if (this.c.send(this.fd, buf, buf.length, 0) !== buf.length) return `netlink send: ${this.c.strerror(this.c.errno())}`;
    const acks = new Map<number, Ack>();
    for (let tries = 0; tries < 100 && !acks.has(seq); tries++) {
      const got = this.c.recv(this.fd, this.rx, this.rx.length, MSG_DONTWAIT);
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

  async write(ops: readonly KernelOp[]): Promise<WriteResult> {
    if (this.fd < 0) throw new Error('netlink socket closed');
    const out = new Array<string | undefined>(ops.length).fill(undefined);
    let uncertain = false;
    // Interface indexes, looked up in the namespace once per write (a device may come or go between writes).
    const names = new Set<string>();
    for (const op of ops) if (op.op === 'replace') for (const h of op.route.nexthops) if (h.dev !== undefined) names.add(h.dev);
    const indexes = new Map<string, number>();
    if (names.size > 0) {
      inNamespace(this.c, this.nsFile, () => {
        for (const n of names) {
          const i = this.c.ifNameToIndex(n);
          if (i > 0) indexes.set(n, i);
        }
      });
    }
    const ifindex = (n: string) => indexes.get(n);
    let slice = performance.now();
    for (let i = 0; i < ops.length; i += this.chunk) {
      if (i > 0 && performance.now() - slice >= SLICE_MS) {
        await new Promise<void>((r) => setImmediate(r));
        if (this.fd < 0) throw new Error('netlink socket closed');
        slice = performance.now();
      }
      const end = Math.min(ops.length, i + this.chunk);
      this.encoder.reset();
      const sent = new Map<number, number>(); // seq → index into ops
      for (let k = i; k < end; k++) {
        const seq = this.seq;
        this.seq = this.seq >= 0x7fffffff ? 1 : this.seq + 1;
        try {
          this.encoder.add(ops[k], seq, ifindex, false);
          sent.set(seq, k);
        } catch (err) {
          out[k] = err instanceof Error ? err.message : String(err);
        }
      }
      if (sent.size === 0) continue;
      const buf = this.encoder.bytes;
      let n: number;
      do n = this.c.send(this.fd, buf, buf.length, 0);
      while (n < 0 && this.c.errno() === EINTR);
      if (n !== buf.length) {
        const why = n < 0 ? this.c.strerror(this.c.errno()) : `short send (${n} of ${buf.length} bytes)`;
        for (const k of sent.values()) out[k] = `netlink send: ${why}`;
        uncertain ||= n > 0;
        continue;
      }
      // The refusals, all queued by now (the kernel handled the chunk inside send()).
      const acks = new Map<number, Ack>();
      for (;;) {
        const got = this.c.recv(this.fd, this.rx, this.rx.length, MSG_DONTWAIT);
        if (got < 0) {
          const e = this.c.errno();
          if (e === EINTR) continue;
          // ENOBUFS: answers were dropped — which routes they named is unknown.
          if (e !== EAGAIN) uncertain = true;
          break;
        }
        if (got === 0) break;
        parseAckDetails(this.rx.subarray(0, got), acks);
      }
      for (const [seq, k] of sent) {
        const a = acks.get(seq);
        if (a !== undefined && a.errno !== 0) out[k] = this.reason(a);
      }
    }
    return { errors: out, uncertain };
  }

  close(): void {
    if (this.fd >= 0) this.c.close(this.fd);
    this.fd = -1;
  }
}
