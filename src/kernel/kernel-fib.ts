/**
 * KernelFib: the shell around FibCore. It writes routes through a
 * RouteWriter chosen at start (route-writer.ts): rtnetlink requests from
 * this process through koffi, or `ip -force -batch -` where that cannot be
 * used — either way each refused operation is reported with the kernel's
 * reason while the rest is applied. It hears about changes through a
 * listener chosen at start (route-listener.ts): an rtnetlink socket in a
 * worker thread (the echoes of our own writes left out by the kernel), or
 * one long-lived `ip -o -N monitor route link` where that cannot be used —
 * a route of ours deleted or changed by someone else is put back at once;
 * an interface or connected network change re-reads the connected networks
 * and re-resolves. It reads through iproute2: `ip -json route show` dumps,
 * `ip -json route get` for recursive next hops.
 * A periodic resync (BIRD's `scan`) re-reads our routes as a backstop.
 *
 * Routes persist: stopping (or dying) leaves them in the kernel; the next
 * start adopts them (FibCore) until `endRestart`.
 *
 * Kernel problems never throw out of here: no CAP_NET_ADMIN, no `ip`, an
 * unknown table turn kernel programming off with one clear reason in
 * `status()`; BGP carries on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { nativeUnavailableReason } from '../native/index.js';
import type { Address } from '../net/index.js';
import { FibCore } from './fib-core.js';
import { ifaceOf } from './iface-of.js';
import { sameRoute } from './next-hops.js';
import { formatOp, isLearnedProtocol, parseConnectedDump, parseLearnedDump, parseRouteDump, parseRouteGet, parseRtTables, tableNumber } from './iproute2.js';
import { IpMonitor, NetlinkListener, startNetlinkListener, type KernelListener, type ListenerHandlers, type ListenerKind } from './route-listener.js';
import { IpBatchWriter, NetlinkWriter, type RouteWriter, type WriterKind } from './route-writer.js';
import type { ConnectedRoute, DesiredRoute, KernelEvent, KernelOp, KernelRoute, LearnedKernelRoute, Refusal } from './types.js';

export interface KernelFibOptions {
  /** Routing table: a number, or a name from rt_tables ("main", the default). */
  readonly table?: number | string;
  /** Route protocol number written on and owned by our routes: default 12 ("bird", RTPROT_BIRD), as on a Calico node. */
  readonly protocol?: number;
  /** Metric on our routes: one for both families, or per family (default: the kernel's, 0 for IPv4 and 1024 for IPv6). */
  readonly metric?: number | { readonly v4?: number; readonly v6?: number };
  /** Most next hops per route (default 16, BIRD's `merge paths`). */
  readonly ecmp?: number;
  /** Resolve a next hop on no connected network through the kernel's own lookup (`gateway recursive`, default true). */
  readonly recursive?: boolean;
  /** Adopt our routes found at start until `endRestart` (default true). */
  readonly adopt?: boolean;
  /** Periodic resync, seconds (default 30; 0 turns it off — the monitor still runs). */
  readonly scanSeconds?: number;
  /** Program the table of this network namespace (`ip -n NAME`) instead of our own. */
  readonly netns?: string;
  /** The `ip` binary (default "ip" on PATH). */
  readonly ipBinary?: string;
  /**
   * How routes are written: 'netlink' (default: rtnetlink requests from this
   * process through koffi; iproute2 where that cannot load or this process
   * may not write routes) or 'iproute2' (`ip -force -batch -`).
   */
  readonly writer?: WriterKind;
  /**
   * The rtnetlink writer sends from a thread of its own, the plan written
   * piece by piece while the rest is planned (default true: the kernel
   * installs routes on another core meanwhile); false: everything on the
   * main thread (for comparison, or where threads are scarce).
   */
  readonly writerThread?: boolean;
  /**
   * How changes in the kernel are heard: 'netlink' (default: an rtnetlink
   * socket in a worker thread, our own writes' echoes left out; `ip
   * monitor` where that cannot start) or 'iproute2' (`ip -o -N monitor`).
   */
  readonly listener?: ListenerKind;
  /**
   * The rtnetlink listener's receive buffer, bytes (default 8 MiB; BIRD's
   * `netlink rx buffer`). When a burst of others' changes overruns it the
   * kernel drops notifications (ENOBUFS): counted in `lost`, logged, and
   * the table is read again.
   */
  readonly listenerBuffer?: number;
  readonly log?: (level: 'debug' | 'info' | 'warning' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /**
   * BIRD's `learn`: keep the routes of other programs in our table (Felix's
   * routes to local workloads) and the connected networks, read at start
   * and after lost notifications, kept current by the listener (`learned()`).
   */
  readonly learn?: boolean;
  /** With `learn`: called when what `learned()` returns changed. */
  readonly onLearned?: () => void;
}

export interface KernelStatus {
  /** Kernel programming is running. */
  readonly enabled: boolean;
  /** Why it is off (no permission, no `ip`, unknown table). */
  readonly error?: string;
  readonly table: number | string;
  readonly protocol: number;
  /** What writes the routes (once running): rtnetlink from this process, or `ip -batch`. */
  readonly writer?: WriterKind;
  /** Why the writer is not the one asked for (koffi cannot load; no permission in this process). */
  readonly writerNote?: string;
  /** What hears the kernel's changes (once running): rtnetlink in a worker thread, or `ip monitor`. */
  readonly listener?: ListenerKind;
  /** Why the listener is not the one asked for (koffi cannot load, the thread could not open its socket or died). */
  readonly listenerNote?: string;
  /** Adopted routes are still kept (the restart is not over). */
  readonly restarting: boolean;
  readonly routes: { readonly desired: number; readonly installed: number; readonly refused: number; readonly stale: number };
  /** At most 100, by prefix. */
  readonly refused: readonly Refusal[];
  readonly lastSync?: Date;
  /**
   * Operations written since start, in how many batches (`batches`: plans
   * that wrote something; written / batches is the batching achieved), and
   * those the kernel refused; resyncs;
   * routes of ours deleted by someone else (`putBack`); changes to our
   * routes the listener reported that were not our own writes (`foreign`);
   * times notifications were lost (`lost`: the kernel's buffer overran, the
   * monitor restarted) and everything was read again.
   */
  readonly counters: {
    readonly written: number;
    readonly batches: number;
    readonly failed: number;
    readonly resyncs: number;
    readonly putBack: number;
    readonly foreign: number;
    readonly lost: number;
  };
}

const CAP_NET_ADMIN = 12;
/** `ifaceFor` remembers at most this many addresses (BGP next hops; a flood of distinct ones starts it again). */
const MAX_IFACES_REMEMBERED = 4096;
/** Replaces per piece of a pipelined plan (see applyPipelined). */
const PIECE = 1024;

/** Whether this process holds CAP_NET_ADMIN in its effective set (undefined: cannot tell). */
function hasNetAdmin(): boolean | undefined {
  try {
    const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (!m) return undefined;
    return (BigInt(`0x${m[1]}`) & (1n << BigInt(CAP_NET_ADMIN))) !== 0n;
  } catch {
    return undefined;
  }
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

export class KernelFib {
  readonly core: FibCore;
  private readonly protocol: number;
  private table = 254;
  private readonly tableName: number | string;
  private readonly scanMs: number;
  private readonly ip: string;
  private readonly nsArgs: string[];
  private enabled = false;
  private error: string | undefined;
  private started = false;
  private stopped = false;
  private listener: KernelListener | undefined;
  private listenerNote: string | undefined;
  private scanTimer: NodeJS.Timeout | undefined;
  private busy = false;
  private kick: NodeJS.Immediate | undefined;
  private connectedTimer: NodeJS.Timeout | undefined;
  private lastSync: Date | undefined;
  private readonly counters = { written: 0, batches: 0, failed: 0, resyncs: 0, putBack: 0, foreign: 0, lost: 0 };
  private waiters: (() => void)[] = [];
  private readonly reported = new Map<string, string>();
  private resyncWanted = false;
  /** Prefixes the batch being written deletes (their Deleted events are ours). */
  private deleting = new Set<string>();
  private connectedWanted = false;
  private writer: RouteWriter | undefined;
  private writerNote: string | undefined;
  /** With `learn`: others' routes in our table by `prefix|metric`, and the connected networks. */
  private readonly others = new Map<string, LearnedKernelRoute>();
  private connectedNow: readonly ConnectedRoute[] = [];
  /** `ifaceFor`'s answers by address, until the learned routes change (BGP next hops are few). */
  private readonly ifaces = new Map<string, string | undefined>();
  private learnWanted = false;

  constructor(private readonly opts: KernelFibOptions = {}) {
    const protocol = opts.protocol ?? 12;
    if (!Number.isInteger(protocol) || protocol < 1 || protocol > 255 || protocol === 2)
      throw new RangeError(`kernel protocol must be 1..255 and not 2 (the kernel's own), got ${protocol}`);
    this.protocol = protocol;
    const m = opts.metric;
    const v4 = typeof m === 'number' ? m : m?.v4;
    const v6 = typeof m === 'number' ? m : m?.v6;
    this.core = new FibCore({ ecmp: opts.ecmp, metricV4: v4, metricV6: v6, recursive: opts.recursive, restarting: opts.adopt ?? true });
    this.tableName = opts.table ?? 'main';
    if (typeof this.tableName === 'number' && !(Number.isInteger(this.tableName) && this.tableName >= 1 && this.tableName <= 0xffffffff))
      throw new RangeError(`kernel table must be 1..4294967295 or a name, got ${this.tableName}`);
    const scan = opts.scanSeconds ?? 30;
    if (!(scan >= 0 && scan <= 86400)) throw new RangeError(`kernel scanSeconds must be 0..86400, got ${scan}`);
    this.scanMs = scan * 1000;
    this.ip = opts.ipBinary ?? 'ip';
    this.nsArgs = opts.netns !== undefined ? ['-n', opts.netns] : [];
    if (opts.writer !== undefined && opts.writer !== 'netlink' && opts.writer !== 'iproute2')
      throw new RangeError(`kernel writer must be "netlink" or "iproute2", got ${JSON.stringify(opts.writer)}`);
    if (opts.listenerBuffer !== undefined && (!Number.isInteger(opts.listenerBuffer) || opts.listenerBuffer < 1024 || opts.listenerBuffer > 1 << 30))
      throw new RangeError(`kernel listener buffer must be a whole number of bytes from 1024 to ${1 << 30}, got ${JSON.stringify(opts.listenerBuffer)}`);
    if (opts.listener !== undefined && opts.listener !== 'netlink' && opts.listener !== 'iproute2')
      throw new RangeError(`kernel listener must be "netlink" or "iproute2", got ${JSON.stringify(opts.listener)}`);
  }

  private log(level: 'debug' | 'info' | 'warning' | 'error', msg: string, fields?: Record<string, unknown>): void {
    this.opts.log?.(level, msg, fields);
  }

  // ------------------------------------------------------------ lifecycle

  /** Checks permission, the table and `ip`, reads the kernel and starts watching it. Never throws: see `status().error`. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const why = await this.preflight();
    const writer = why === undefined ? await this.chooseWriter() : why;
    if (typeof writer === 'string') {
      this.error = writer;
      this.log('error', `kernel programming is off: ${writer}`);
      return;
    }
    this.writer = writer;
    this.enabled = true;
    await this.startListener();
    await this.refreshConnected();
    await this.resync();
    if (this.opts.learn) await this.readLearned();
    if (this.scanMs > 0)
      this.scanTimer = setInterval(() => {
        this.resyncWanted = true;
        this.schedule();
      }, this.scanMs);
    this.scanTimer?.unref?.();
    this.log(
      'info',
      `kernel programming on: table ${this.table}, protocol ${this.protocol}, written through ` +
        `${this.writer.kind === 'netlink' ? 'rtnetlink' : 'ip -batch'}, watched through ` +
        `${this.listener?.kind === 'netlink' ? 'rtnetlink' : 'ip monitor'}` +
        `${this.core.isRestarting ? `, ${this.core.counts.stale} route(s) adopted until the restart ends` : ''}`,
    );
  }

  private async preflight(): Promise<string | undefined> {
    let table = typeof this.tableName === 'number' ? this.tableName : tableNumber(this.tableName);
    if (table === undefined) {
      for (const f of ['/etc/iproute2/rt_tables', '/usr/share/iproute2/rt_tables']) {
        try {
          table = parseRtTables(readFileSync(f, 'utf8')).get(String(this.tableName));
        } catch {
          // the file may not exist
        }
        if (table !== undefined) break;
      }
      if (table === undefined) return `routing table "${this.tableName}" does not exist (not a number, and not named in /etc/iproute2/rt_tables)`;
    }
    this.table = table;
    const v = await this.run(['-V']);
    if (v.error !== undefined || v.code !== 0) return `cannot run "${this.ip}" (iproute2): ${v.error?.message ?? v.stderr.trim()}`;
    if (this.nsArgs.length > 0) {
      const r = await this.run([...this.nsArgs, 'link', 'show', 'lo']);
      if (r.code !== 0) return `network namespace ${this.opts.netns}: ${r.stderr.trim()}`;
    }
    return undefined;
  }

  /**
   * Why `ip` may not write routes, or undefined when it may: delete a route
   * that does not exist and look at why that failed ("Operation not
   * permitted" vs "No such process").
   */
  private async ipRefusal(): Promise<string | undefined> {
    const probe = await this.run([
      ...this.nsArgs,
      '-4',
      'route',
      'del',
      '192.0.2.255/32',
      'table',
      String(this.table),
      'proto',
      String(this.protocol),
      'metric',
      '4294967295',
    ]);
    return /not permitted|permission denied/i.test(probe.stderr) ? probe.stderr.trim() : undefined;
  }

  /**
   * The writer, or why no route can be written. rtnetlink from this process
   * unless iproute2 was asked for; where koffi cannot load or this process
   * may not write routes, `ip -batch` if `ip` may (a file capability on `ip`
   * with CAP_NET_ADMIN inheritable), said once in the log and in
   * status().writerNote. Whether `ip` may write matters only then: the image
   * gives the capability to node, and `ip` (which only reads) none.
   */
  private async chooseWriter(): Promise<RouteWriter | string> {
    const noPermission = (ipWhy: string): string =>
      `no permission to change routes (CAP_NET_ADMIN missing${hasNetAdmin() === false ? ' in this process and' : ''} for ` +
      `${this.ip}: ${ipWhy}); run as root or grant the capability`;
    const ip = new IpBatchWriter((a, l) => this.run(a, l), this.nsArgs, this.table, this.protocol);
    if (this.opts.writer === 'iproute2') {
      const ipWhy = await this.ipRefusal();
      return ipWhy === undefined ? ip : noPermission(ipWhy);
    }
    let nl: NetlinkWriter | undefined;
    let note: string;
    try {
      nl = new NetlinkWriter({ netns: this.opts.netns, table: this.table, protocol: this.protocol });
      // The same probe from this process: delete a route that does not exist.
      const why = nl.probe();
      if (why === undefined) {
        // The sending on a thread of its own, so that the kernel's work overlaps ours; on this thread where it cannot start.
        if (this.opts.writerThread !== false && !(await nl.startThread()))
          this.log('debug', 'kernel: the rtnetlink writer thread did not start: writing from the main thread');
        return nl;
      }
      note =
        `this process may not write routes over netlink (${why}; CAP_NET_ADMIN` +
        `${hasNetAdmin() === false ? ' missing here' : ''}), but ip may: writing through ip -batch`;
    } catch (err) {
      note = `cannot write routes over netlink from this process (${err instanceof Error ? err.message : String(err)}): writing through ip -batch`;
    }
    nl?.close();
    const ipWhy = await this.ipRefusal();
    if (ipWhy !== undefined) return noPermission(ipWhy);
    this.writerNote = note;
    this.log('warning', `kernel: ${note}`);
    return ip;
  }

  /** Stops watching; our routes stay in the kernel (the next start adopts them). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.scanTimer !== undefined) clearInterval(this.scanTimer);
    if (this.connectedTimer !== undefined) clearTimeout(this.connectedTimer);
    if (this.kick !== undefined) clearImmediate(this.kick);
    this.listener?.stop();
    this.writer?.close();
    for (const w of this.waiters.splice(0)) w();
  }

  // ------------------------------------------------------------ routing's side

  setRoute(prefix: string, route: DesiredRoute | undefined): void {
    this.core.setRoute(prefix, route);
    this.schedule();
  }

  setStatics(routes: ReadonlyMap<string, DesiredRoute>): void {
    this.core.setStatics(routes);
    this.schedule();
  }

  /** The restart is over (every peer's End-of-RIB, or the deferral timer): adopted routes nobody wants go. */
  endRestart(): void {
    if (!this.core.isRestarting) return;
    const stale = this.core.counts.stale;
    this.core.endRestart();
    if (this.enabled) this.log('info', `kernel: restart over, removing adopted routes not learned again (of ${stale} adopted)`);
    this.schedule();
  }

  /** Resolves once everything asked so far has been written (or kernel programming is off). */
  flushed(): Promise<void> {
    if (!this.enabled || this.stopped || (!this.busy && !this.core.pending && this.kick === undefined && !this.resyncWanted)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  status(): KernelStatus {
    return {
      enabled: this.enabled && !this.stopped,
      ...(this.error !== undefined ? { error: this.error } : {}),
      table: this.enabled ? this.table : this.tableName,
      protocol: this.protocol,
      ...(this.writer !== undefined ? { writer: this.writer.kind } : {}),
      ...(this.writerNote !== undefined ? { writerNote: this.writerNote } : {}),
      ...(this.listener !== undefined ? { listener: this.listener.kind } : {}),
      ...(this.listenerNote !== undefined ? { listenerNote: this.listenerNote } : {}),
      restarting: this.core.isRestarting,
      routes: this.core.counts,
      refused: this.core.refusals(100),
      ...(this.lastSync !== undefined ? { lastSync: this.lastSync } : {}),
      counters: { ...this.counters },
    };
  }

  // ------------------------------------------------------------ the work loop

  private schedule(): void {
    if (!this.enabled || this.stopped || this.kick !== undefined || this.busy) return;
    this.kick = setImmediate(() => {
      this.kick = undefined;
      void this.work();
    });
  }

  private async work(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      for (let guard = 0; guard < 1000 && !this.stopped; guard++) {
        if (this.connectedWanted) await this.refreshConnected();
        if (this.resyncWanted) await this.resync();
        if (this.learnWanted) await this.readLearned();
        const asks = this.core.neededLookups();
        if (asks.length > 0) await this.lookup(asks);
        if (!this.core.pending) break;
        if (this.writer instanceof NetlinkWriter && this.writer.threaded && !this.hearsOwnWrites) await this.applyPipelined(this.writer);
        else {
          const ops = this.core.plan();
          if (ops.length > 0) {
            this.counters.batches++;
            await this.apply(ops);
            this.reportUnresolved();
          }
        }
      }
    } catch (err) {
      // Stopping closes the writer under a batch being written: not an error.
      if (!this.stopped) this.log('error', `kernel: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.busy = false;
    }
    if (!this.stopped && (this.core.pending || this.resyncWanted || this.connectedWanted || this.learnWanted)) this.schedule();
    else for (const w of this.waiters.splice(0)) w();
  }

  /** The listener hears our own writes (`ip monitor`, or any listener where the writer is `ip -batch`): their echoes are told apart by content. */
  private get hearsOwnWrites(): boolean {
    return !(
      this.listener instanceof NetlinkListener &&
      this.writer instanceof NetlinkWriter &&
      this.writer.portId !== undefined &&
      this.listener.skipsPid === this.writer.portId
    );
  }

  /**
   * Plans in pieces and writes each while the next is planned: the writer
   * thread sends one piece (the kernel installing it on the other core)
   * while this thread plans and encodes the next, and takes each piece's
   * outcome as it comes. The kernel sees the operations in the order of
   * `plan` (the writer posts writes in the order they were begun).
   */
  private async applyPipelined(w: NetlinkWriter): Promise<void> {
    const applying: Promise<void>[] = [];
    let failure: { error: unknown } | undefined;
    try {
      for (const piece of this.core.planPieces(PIECE)) {
        if (piece.length > 0)
          applying.push(
            this.apply(piece).catch((error: unknown) => {
              failure ??= { error };
            }),
          );
        // The next piece is planned once this one is handed on: the thread has a window of chunks to send meanwhile.
        await w.accepting();
        if (failure !== undefined || this.stopped) break;
      }
    } finally {
      await Promise.all(applying);
    }
    if (applying.length > 0) this.counters.batches++;
    if (failure !== undefined) throw failure.error;
    this.reportUnresolved();
  }

  private async apply(ops: KernelOp[]): Promise<void> {
    let result;
    if (!this.hearsOwnWrites) result = await this.writer!.write(ops);
    else {
      this.deleting = new Set(ops.filter((o) => o.op === 'delete').map((o) => o.route.prefix));
      try {
        result = await this.writer!.write(ops);
      } finally {
        // Our own Deleted events may still be in the monitor's pipe: forget them a little later.
        const mine = this.deleting;
        setTimeout(() => {
          if (this.deleting === mine) this.deleting = new Set();
        }, 1000).unref();
      }
    }
    if (this.stopped) return;
    const errors = result.errors;
    // Some acknowledgements were lost: what the kernel holds is read again.
    if (result.uncertain) this.resyncWanted = true;
    this.counters.written += ops.length;
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      let err = errors[i];
      if (err !== undefined) this.counters.failed++;
      // Deleting what is already gone is what we wanted.
      if (err !== undefined && op.op === 'delete' && /No such process|not found/i.test(err)) err = undefined;
      this.core.applied(op, err);
      const p = op.route.prefix;
      if (err !== undefined && op.op === 'replace') {
        if (this.reported.get(p) !== err) this.log('warning', `kernel refused route ${p}: ${err}`, { route: formatOp(op, this.table, this.protocol) });
        this.reported.set(p, err);
      } else if (op.op === 'replace' && this.reported.size > 0) this.reported.delete(p);
    }
  }

  /** Routes not installed because a next hop did not resolve: logged once per reason. */
  private reportUnresolved(): void {
    if (this.core.refusedCount === 0) return;
    for (const f of this.core.refusals(Number.MAX_SAFE_INTEGER)) {
      if (f.by !== 'resolve' || this.reported.get(f.prefix) === f.reason) continue;
      this.reported.set(f.prefix, f.reason);
      this.log('warning', `kernel: route ${f.prefix} not installed: ${f.reason}`);
    }
  }

  private async resync(): Promise<void> {
    this.resyncWanted = false;
    const routes: KernelRoute[] = [];
    for (const fam of [4, 6] as const) {
      const r = await this.run([...this.nsArgs, `-${fam}`, '-j', 'route', 'show', 'table', String(this.table), 'proto', String(this.protocol)]);
      if (r.code !== 0) {
        // An empty numbered table does not exist yet: nothing of ours there.
        if (/table does not exist/i.test(r.stderr)) continue;
        throw new Error(`reading table ${this.table} (IPv${fam}): ${r.stderr.trim() || r.error?.message}`);
      }
      routes.push(...parseRouteDump(r.stdout, fam));
    }
    this.core.kernelTable(routes);
    this.counters.resyncs++;
    this.lastSync = new Date();
  }

  private async refreshConnected(): Promise<void> {
    this.connectedWanted = false;
    const conn: ConnectedRoute[] = [];
    for (const fam of [4, 6] as const) {
      const r = await this.run([...this.nsArgs, `-${fam}`, '-j', 'route', 'show', 'table', 'main', 'proto', 'kernel']);
      if (r.code === 0) conn.push(...parseConnectedDump(r.stdout, fam));
    }
    const l = await this.run([...this.nsArgs, '-j', 'link', 'show']);
    let links: Set<string> | undefined;
    if (l.code === 0) {
      try {
        const rows = JSON.parse(l.stdout) as { ifindex: number; ifname: string }[];
        links = new Set(rows.map((x) => x.ifname));
        // The netlink listener names next hops' interfaces by index.
        const names = this.listener?.names;
        if (names !== undefined) {
          names.clear();
          for (const x of rows) names.set(x.ifindex, x.ifname);
        }
      } catch {
        links = undefined;
      }
    }
    this.core.setConnected(conn, links);
    if (this.opts.learn && JSON.stringify(conn) !== JSON.stringify(this.connectedNow)) {
      this.connectedNow = conn;
      this.learnedChanged();
    }
  }

  /** BIRD's `learn`: every route of other programs in our table, read again (at start, after lost notifications). */
  private async readLearned(): Promise<void> {
    this.learnWanted = false;
    const all: LearnedKernelRoute[] = [];
    for (const fam of [4, 6] as const) {
      const r = await this.run([...this.nsArgs, '-N', `-${fam}`, '-j', 'route', 'show', 'table', String(this.table)]);
      if (r.code !== 0) {
        if (/table does not exist/i.test(r.stderr)) continue;
        this.log('warning', `kernel: reading the routes to learn (IPv${fam}): ${r.stderr.trim() || r.error?.message}`);
        continue;
      }
      all.push(...parseLearnedDump(r.stdout, fam, this.protocol));
    }
    const next = new Map(all.map((x) => [`${x.route.prefix}|${x.route.metric}`, x]));
    let same = next.size === this.others.size;
    if (same) for (const [k, v] of next) if (JSON.stringify(this.others.get(k)) !== JSON.stringify(v)) same = false;
    if (same) return;
    this.others.clear();
    for (const [k, v] of next) this.others.set(k, v);
    this.learnedChanged();
  }

  private learnedEvent(deleted: boolean, protocol: number, r: KernelRoute): void {
    const key = `${r.prefix}|${r.metric}`;
    if (deleted) {
      if (!this.others.delete(key)) return;
    } else this.others.set(key, { source: 'kernel', protocol, route: r });
    this.learnedChanged();
  }

  /** What `learned()` returns changed: the interfaces found for addresses go, the owner is told. */
  private learnedChanged(): void {
    this.ifaces.clear();
    this.opts.onLearned?.();
  }

  /**
   * With `learn`: the interface the learned routes (connected networks,
   * others' routes) send `address` out of, as BIRD's `gateway recursive`
   * resolves a BGP next hop (`iface-of.ts`); undefined without `learn`, or
   * when none does. Remembered per address until the learned routes change.
   */
  ifaceFor(address: Address): string | undefined {
    if (!this.opts.learn) return undefined;
    const key = address.toString();
    if (this.ifaces.has(key)) return this.ifaces.get(key);
    const dev = ifaceOf(address, this.learnedRoutes());
    if (this.ifaces.size >= MAX_IFACES_REMEMBERED) this.ifaces.clear();
    this.ifaces.set(key, dev);
    return dev;
  }

  private *learnedRoutes(): Generator<LearnedKernelRoute> {
    yield* this.others.values();
    for (const c of this.connectedNow)
      yield { source: 'direct', protocol: 2, route: { prefix: c.prefix, type: 'unicast', metric: 0, nexthops: [{ dev: c.dev }] } };
  }

  /** With `learn`: the routes of other programs in our table, then the connected networks (empty without `learn`). */
  learned(): LearnedKernelRoute[] {
    if (!this.opts.learn) return [];
    return [
      ...this.others.values(),
      ...this.connectedNow.map((c): LearnedKernelRoute => ({
        source: 'direct',
        protocol: 2,
        route: { prefix: c.prefix, type: 'unicast', metric: 0, nexthops: [{ dev: c.dev }] },
      })),
    ];
  }

  private async lookup(addresses: string[]): Promise<void> {
    for (const a of addresses) {
      const r = await this.run([...this.nsArgs, '-j', 'route', 'get', a]);
      if (r.code !== 0) {
        this.core.setLookup(a, { ok: false, reason: r.stderr.trim().replace(/^Error: /, '') || `ip route get exited ${r.code}` });
        continue;
      }
      const got = parseRouteGet(r.stdout);
      this.core.setLookup(a, got !== undefined ? { ok: true, ...got } : { ok: false, reason: 'no unicast route to it' });
    }
  }

  // ------------------------------------------------------------ events

  /**
   * The listener: rtnetlink in a worker thread unless iproute2 was asked
   * for, koffi cannot load, or the thread cannot open its socket: then `ip
   * monitor`, said once in the log and in status().listenerNote.
   */
  private async startListener(): Promise<void> {
    const h: ListenerHandlers = {
      onEvent: (ev) => this.onKernelEvent(ev),
      onLost: (why) => this.lost(why),
      onDead: (why) => {
        if (this.stopped) return;
        this.listenerNote = `the rtnetlink listener stopped (${why}): watching through ip monitor`;
        this.log('warning', `kernel: ${this.listenerNote}`);
        this.listener = new IpMonitor(this.ip, this.nsArgs, h);
        this.lost(why);
      },
      log: (level, msg) => this.log(level, msg),
    };
    if (this.opts.listener !== 'iproute2') {
      const why = nativeUnavailableReason();
      if (why === undefined) {
        try {
          const skipPid = this.writer instanceof NetlinkWriter ? this.writer.portId : undefined;
          this.listener = await startNetlinkListener(
            {
              ...(this.opts.netns !== undefined ? { netns: this.opts.netns } : {}),
              ...(skipPid !== undefined ? { skipPid } : {}),
              ...(this.opts.listenerBuffer !== undefined ? { buffer: this.opts.listenerBuffer } : {}),
            },
            h,
          );
          if (this.stopped) this.listener.stop();
          return;
        } catch (err) {
          this.listenerNote = `cannot listen to the kernel over netlink (${err instanceof Error ? err.message : String(err)}): watching through ip monitor`;
        }
      } else this.listenerNote = `cannot listen to the kernel over netlink (${why}): watching through ip monitor`;
      this.log('warning', `kernel: ${this.listenerNote}`);
    }
    this.listener = new IpMonitor(this.ip, this.nsArgs, h);
  }

  /** Notifications were lost: read the connected networks and our table again. */
  private lost(why: string): void {
    if (this.stopped) return;
    this.counters.lost++;
    // A burst overruns the buffer again and again before the resync runs: one warning per resync, every overrun counted.
    if (!this.resyncWanted) this.log('warning', `kernel: ${why}; reading the kernel again`);
    this.resyncWanted = true;
    this.connectedWanted = true;
    if (this.opts.learn) this.learnWanted = true;
    this.schedule();
  }

  private onKernelEvent(ev: KernelEvent): void {
    if (ev.kind === 'link') return this.connectedChanged();
    if (ev.kind !== 'route') return;
    const r = ev.route;
    if (ev.protocol === 2 && ev.table === 254) return this.connectedChanged();
    if (ev.table !== this.table) return;
    if (this.opts.learn && isLearnedProtocol(ev.protocol, this.protocol)) this.learnedEvent(ev.deleted, ev.protocol, r);
    if (ev.protocol !== this.protocol) {
      // Someone else's route took the place (prefix and metric) of one of ours: read ours again.
      if (!ev.deleted && this.core.installedFor(r.prefix).some((x) => x.metric === r.metric)) {
        this.counters.foreign++;
        this.resyncWanted = true;
        this.schedule();
      }
      return;
    }
    if (ev.deleted) {
      this.core.kernelDeleted(r.prefix, r.metric);
      if (!this.deleting.has(r.prefix)) {
        this.counters.foreign++;
        this.counters.putBack++;
        this.log('debug', `kernel: route ${r.prefix} was deleted by someone else; putting it back if wanted`);
      }
    } else {
      const known = this.core.installedFor(r.prefix).find((x) => x.metric === r.metric);
      if (known !== undefined && sameRoute(known, r)) return; // the echo of our own write
      this.counters.foreign++;
      this.core.kernelAdded(r);
    }
    this.schedule();
  }

  /** Interfaces or connected networks changed: re-read them soon (one read for a burst). */
  private connectedChanged(): void {
    if (this.connectedTimer !== undefined) return;
    this.connectedTimer = setTimeout(() => {
      this.connectedTimer = undefined;
      this.connectedWanted = true;
      // An IPv4 route through an interface that went down is flushed without an event: read ours (and others', when learning) again too.
      this.resyncWanted = true;
      if (this.opts.learn) this.learnWanted = true;
      this.schedule();
    }, 100);
    this.connectedTimer.unref?.();
  }

  // ------------------------------------------------------------ ip

  private run(args: string[], stdinLines?: string[]): Promise<RunResult> {
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        child = spawn(this.ip, args, { stdio: [stdinLines !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
      } catch (err) {
        resolve({ code: null, stdout: '', stderr: '', error: err as Error });
        return;
      }
      const out: Buffer[] = [];
      const errs: Buffer[] = [];
      let failed: Error | undefined;
      child.stdout!.on('data', (b: Buffer) => out.push(b));
      child.stderr!.on('data', (b: Buffer) => errs.push(b));
      child.on('error', (err) => (failed = err));
      child.on('close', (code) =>
        resolve({
          code,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(errs).toString('utf8'),
          ...(failed !== undefined ? { error: failed } : {}),
        }),
      );
      if (stdinLines !== undefined) void writeLines(child, stdinLines);
    });
  }
}

/** Writes lines to the child's stdin in chunks, honouring backpressure. */
async function writeLines(child: ChildProcess, lines: string[]): Promise<void> {
  const stdin = child.stdin!;
  stdin.on('error', () => {}); // the child died: its exit status says why
  const CHUNK = 4096;
  for (let i = 0; i < lines.length; i += CHUNK) {
    const ok = stdin.write(`${lines.slice(i, i + CHUNK).join('\n')}\n`);
    if (!ok) await new Promise<void>((r) => stdin.once('drain', () => r()));
  }
  stdin.end();
}
