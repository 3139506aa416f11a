/**
 * How KernelFib hears about changes in the kernel: one interface, two
 * implementations, chosen at start.
 *
 * - `NetlinkListener`: an rtnetlink socket in a worker thread
 *   (listener-worker.ts) blocked in recv(), subscribed to link and route
 *   changes; the echoes of our own writes are dropped in the kernel by
 *   a socket filter on the writer's port id, the rest comes here as bytes
 *   and is decoded by rtnetlink.ts. No process, no text.
 * - `IpMonitor`: one long-lived `ip -o -N monitor route link`, its lines
 *   parsed by iproute2.ts: where koffi cannot load or the worker cannot open
 *   its socket, or when chosen (`listener: 'iproute2'`).
 *
 * Either way the listener reports KernelEvents, a lost stretch of them
 * (`onLost`: ENOBUFS, or the monitor died) and its own failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../native/index.js';
import { parseMonitorLine } from './iproute2.js';
import type { FromListener, ListenerWorkerData } from './listener-worker.js';
import { decodeNotifications } from './rtnetlink.js';
import type { KernelEvent } from './types.js';

export type ListenerKind = 'netlink' | 'iproute2';

export interface ListenerHandlers {
  readonly onEvent: (ev: KernelEvent) => void;
  /** Notifications were lost (the kernel's buffer overran, the monitor restarted): read everything again. */
  readonly onLost: (why: string) => void;
  /** The netlink listener's thread is gone (it failed after starting): the caller falls back. */
  readonly onDead: (why: string) => void;
  readonly log: (level: 'debug' | 'info' | 'warning' | 'error', msg: string) => void;
}

export interface KernelListener {
  readonly kind: ListenerKind;
  /** Interface index → name, for decoding (the shell fills it from its link dumps; link events keep it current). */
  readonly names: Map<number, string>;
  stop(): void;
}

/**
 * Starts the listener thread and resolves once it is subscribed (so a dump
 * read afterwards misses nothing); rejects with the reason it could not.
 */
export function startNetlinkListener(
  opts: { readonly netns?: string; readonly skipPid?: number; readonly buffer?: number },
  h: ListenerHandlers,
): Promise<NetlinkListener> {
  return new Promise((resolve, reject) => {
    const stop = new SharedArrayBuffer(4);
    const data: ListenerWorkerData = {
      ...(opts.netns !== undefined ? { netns: opts.netns } : {}),
      ...(opts.skipPid !== undefined ? { skipPid: opts.skipPid } : {}),
      ...(opts.buffer !== undefined ? { buffer: opts.buffer } : {}),
      stop,
    };
    const w = startModuleWorker(import.meta.url, 'listener-worker', data, 'tsbgp-rtnl');
    let listener: NetlinkListener | undefined;
    w.on('message', (m: FromListener) => {
      if (m.type === 'ready') {
        listener = new NetlinkListener(w, stop, m.pid, m.filtered, opts.skipPid, h);
        resolve(listener);
      } else if (m.type === 'error') {
        if (listener === undefined) reject(new Error(m.message));
        else listener.failed(m.message);
      } else listener?.received(m);
    });
    w.on('error', (e) => {
      if (listener === undefined) reject(e);
      else listener.failed(e.message);
    });
    w.on('exit', (code) => {
      if (listener === undefined) reject(new Error(`the rtnetlink listener thread exited (${code}) before it was ready`));
      else listener.exited(code);
    });
  });
}

export class NetlinkListener implements KernelListener {
  readonly kind = 'netlink' as const;
  readonly names = new Map<number, string>();
  private stopped = false;
  /** Notifications decoded (others' changes: ours are filtered out). */
  messages = 0;

  constructor(
    private readonly worker: Worker,
    private readonly stopFlag: SharedArrayBuffer,
    /** The listener socket's own port id. */
    readonly pid: number,
    /** Our own echoes are dropped by the kernel (the socket filter is on); else by the thread. */
    readonly filtered: boolean,
    /** The port whose notifications are left out (the writer's). */
    readonly skipsPid: number | undefined,
    private readonly h: ListenerHandlers,
  ) {
    worker.unref();
  }

  received(m: FromListener): void {
    if (this.stopped) return;
    if (m.type === 'overrun') return this.h.onLost('the kernel dropped notifications (ENOBUFS)');
    if (m.type !== 'messages') return;
    for (const ev of decodeNotifications(m.bytes, this.names)) {
      this.messages++;
      this.h.onEvent(ev);
    }
  }

  private why: string | undefined;

  failed(why: string): void {
    if (this.stopped) return;
    this.why ??= why;
  }

  exited(code: number): void {
    if (this.stopped) return;
    this.stopped = true;
    this.h.onDead(this.why ?? `its thread exited (${code})`);
  }

  /** The thread sees the flag within its receive timeout and ends. */
  stop(): void {
    this.stopped = true;
    Atomics.store(new Int32Array(this.stopFlag), 0, 1);
  }
}

/** `ip -o -N monitor route link`, restarted (with a resync) if it dies. */
export class IpMonitor implements KernelListener {
  readonly kind = 'iproute2' as const;
  readonly names = new Map<number, string>();
  private child: ChildProcess | undefined;
  private stopped = false;

  constructor(
    private readonly ip: string,
    private readonly nsArgs: readonly string[],
    private readonly h: ListenerHandlers,
  ) {
    this.start();
  }

  private start(): void {
    if (this.stopped) return;
    const child = spawn(this.ip, [...this.nsArgs, '-o', '-N', 'monitor', 'route', 'link'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => this.h.onEvent(parseMonitorLine(line)));
    child.on('error', (err) => this.h.log('error', `kernel: ip monitor: ${err.message}`));
    child.on('exit', (code) => {
      if (this.stopped || this.child !== child) return;
      // Lost events: restart the monitor and resync once.
      this.h.log('warning', `kernel: ip monitor exited (${code}); restarting it and resyncing`);
      this.h.onLost('ip monitor exited');
      setTimeout(() => this.start(), 1000).unref();
    });
  }

  stop(): void {
    this.stopped = true;
    this.child?.kill();
    this.child = undefined;
  }
}
