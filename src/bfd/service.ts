/**
 * The main thread's handle on BFD: add, update and remove sessions; hear of
 * their changes. By default the sessions run in a worker thread (worker.ts)
 * with their own sockets and timers, so that the main thread's pauses cannot
 * make us miss our transmit deadlines; `thread: false` runs them inline.
 */
import { EventEmitter } from 'eventemitter3';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../native/index.js';
import { BfdHost } from './host.js';
import type { BfdWorkerData, FromWorker, ToWorker } from './protocol.js';
import type { BfdChange, BfdSessionSpec, BfdSessionStatus } from './runtime.js';
import type { TtlCheckStatus } from './udp.js';
import { addressKey } from './runtime.js';

export interface BfdServiceOptions extends BfdWorkerData {
  /** Run the sessions in a worker thread (default true). */
  readonly thread?: boolean;
  readonly log?: (level: 'info' | 'warning' | 'error', msg: string) => void;
}

export interface BfdServiceEvents {
  change: (c: BfdChange) => void;
}

export class BfdService extends EventEmitter<BfdServiceEvents> {
  private worker: Worker | undefined;
  private host: BfdHost | undefined;
  private readonly sessions = new Map<string, BfdSessionStatus>();
  /** Sessions added and not removed: a late report of a removed one is ignored. */
  private readonly known = new Set<string>();
  private readyPorts: number[] = [];
  private starting: Promise<void> | undefined;
  private stopped = false;
  private stoppedWaiter: (() => void) | undefined;
  /** Packets dropped before reaching a session, as of the worker's last report. */
  discarded = 0;
  lastDiscard: string | undefined;
  /** Whether received packets must carry TTL 255 (known once started). */
  ttlCheck: TtlCheckStatus | undefined;
  /** Datagrams the kernel dropped on the listening sockets (TTL filter, full buffers), as of the last report; undefined where unreadable. */
  kernelDrops: number | undefined;
  /** Why BFD is not running (the sockets could not be opened, the worker died), if so. */
  failure: string | undefined;

  constructor(private readonly opts: BfdServiceOptions = {}) {
    super();
  }

  /** Opens the sockets (in the worker); rejects with the reason if BFD cannot run. */
  start(): Promise<void> {
    this.starting ??= new Promise<void>((resolve, reject) => {
      let settled = false;
      const onMessage = (m: FromWorker): void => {
        if (m.type === 'ready' && !settled) {
          settled = true;
          this.readyPorts = m.ports;
          this.ttlCheck = m.ttl;
          resolve();
          return;
        }
        if (m.type === 'error' && !settled) {
          settled = true;
          this.failure = m.message;
          reject(new Error(m.message));
          return;
        }
        this.onMessage(m);
      };
      const data: BfdWorkerData = { port: this.opts.port, peerPort: this.opts.peerPort, listen: this.opts.listen };
      if (this.opts.thread === false) {
        this.host = new BfdHost(data, onMessage);
        void this.host.start();
        return;
      }
      const w = startModuleWorker(import.meta.url, 'worker', data, 'tsbgp-bfd');
      this.worker = w;
      w.on('message', onMessage);
      w.on('error', (e) => {
        this.failure = `BFD worker failed: ${e.message}`;
        this.opts.log?.('error', this.failure);
        if (!settled) {
          settled = true;
          reject(new Error(this.failure));
        }
      });
      w.on('exit', (code) => {
        this.stoppedWaiter?.();
        if (!this.stopped) {
          this.failure ??= `BFD worker exited (code ${code})`;
          this.opts.log?.('error', this.failure);
          if (!settled) {
            settled = true;
            reject(new Error(this.failure));
          }
        }
      });
    });
    return this.starting;
  }

  get ports(): readonly number[] {
    return this.readyPorts;
  }

  add(spec: BfdSessionSpec): void {
    this.known.add(addressKey(spec.peer));
    this.send({ op: 'add', spec });
  }

  update(spec: BfdSessionSpec): void {
    this.send({ op: 'update', spec });
  }

  remove(peer: string): void {
    this.known.delete(addressKey(peer));
    this.sessions.delete(addressKey(peer));
    this.send({ op: 'remove', peer });
  }

  /** The last reported status of the session with `peer`. */
  status(peer: string): BfdSessionStatus | undefined {
    return this.sessions.get(addressKey(peer));
  }

  all(): BfdSessionStatus[] {
    return [...this.sessions.values()];
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.host) {
      await this.host.stop();
      return;
    }
    const w = this.worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => {
      this.stoppedWaiter = resolve;
    });
    const done = new Promise<void>((resolve) => {
      w.on('message', (m: FromWorker) => {
        if (m.type === 'stopped') resolve();
      });
      const t = setTimeout(resolve, 1000);
      t.unref?.();
    });
    w.postMessage({ op: 'stop' } satisfies ToWorker);
    await done;
    await w.terminate();
    await exited;
  }

  private send(m: ToWorker): void {
    if (this.stopped) return;
    if (this.host) this.host.handle(m);
    else this.worker?.postMessage(m);
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case 'change':
        // A change may arrive after remove(): the session is gone here.
        if (!this.known.has(m.change.status.peer)) return;
        this.sessions.set(m.change.status.peer, m.change.status);
        this.emit('change', m.change);
        return;
      case 'stats':
        for (const s of m.sessions) if (this.known.has(s.peer)) this.sessions.set(s.peer, s);
        this.discarded = m.discarded;
        this.lastDiscard = m.lastDiscard;
        this.kernelDrops = m.kernelDrops;
        return;
      case 'log':
        this.opts.log?.(m.level, m.msg);
        return;
      default:
        return;
    }
  }
}
