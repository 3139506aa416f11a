/**
 * The BFD sessions with their sockets: a BfdRuntime on real timers over a
 * UdpTransport. The worker thread runs one; `BfdService({ thread: false })`
 * runs one inline.
 */
import { realScheduler } from '../session/index.js';
import type { FromWorker, ToWorker } from './protocol.js';
import { BfdRuntime } from './runtime.js';
import { UdpTransport, type UdpOptions } from './udp.js';

export class BfdHost {
  private readonly udp: UdpTransport;
  private readonly runtime: BfdRuntime;
  private statsTimer: ReturnType<typeof setInterval> | undefined;
  private lastStats = '';
  private loggedDrops = 0;
  private dropsLoggedAt = -Infinity;

  constructor(
    opts: UdpOptions,
    private readonly post: (m: FromWorker) => void,
  ) {
    const log = (level: 'info' | 'warning' | 'error', msg: string): void => post({ type: 'log', level, msg });
    this.udp = new UdpTransport({ ...opts, log }, (bytes, from) => this.runtime.receive(bytes, from));
    this.runtime = new BfdRuntime(this.udp, realScheduler, (change) => post({ type: 'change', change }), Math.random, Date.now, {
      log,
      defer: (f) => setImmediate(f),
    });
  }

  async start(): Promise<void> {
    try {
      await this.udp.start();
    } catch (e) {
      this.post({ type: 'error', message: (e as Error).message });
      return;
    }
    this.statsTimer = setInterval(() => this.pushStats(), 1000);
    this.statsTimer.unref?.();
    this.post({ type: 'ready', ports: this.udp.ports, ttl: this.udp.ttlCheck });
  }

  handle(m: ToWorker): void {
    try {
      switch (m.op) {
        case 'add':
          return this.runtime.add(m.spec);
        case 'update':
          return this.runtime.update(m.spec);
        case 'remove':
          return this.runtime.remove(m.peer);
        case 'stop': {
          void this.stop().then(() => this.post({ type: 'stopped' }));
          return;
        }
      }
    } catch (e) {
      this.post({ type: 'log', level: 'error', msg: `BFD: ${(e as Error).message}` });
    }
  }

  async stop(): Promise<void> {
    if (this.statsTimer) clearInterval(this.statsTimer);
    this.runtime.stop();
    await this.udp.stop();
  }

  private pushStats(): void {
    const sessions = this.runtime.status();
    const kernelDrops = this.udp.kernelDrops();
    this.logDrops(kernelDrops);
    const key = JSON.stringify([sessions.map((s) => s.counters), this.runtime.discardedUnmatched, kernelDrops]);
    if (key === this.lastStats) return;
    this.lastStats = key;
    this.post({
      type: 'stats',
      sessions,
      discarded: this.runtime.discardedUnmatched,
      ...(this.runtime.lastDiscard !== undefined ? { lastDiscard: this.runtime.lastDiscard } : {}),
      ...(kernelDrops !== undefined ? { kernelDrops } : {}),
    });
  }

  /** A warning when the kernel dropped datagrams, at most once a minute. */
  private logDrops(total: number | undefined): void {
    if (total === undefined || total <= this.loggedDrops) return;
    const now = Date.now();
    if (now - this.dropsLoggedAt < 60_000) return;
    const what = this.udp.ttlCheck.checked
      ? 'a TTL / Hop Limit other than 255 (RFC 5881 §5: sent from further than one hop), or a full receive buffer'
      : 'a full receive buffer';
    this.post({
      type: 'log',
      level: 'warning',
      msg: `BFD: the kernel dropped ${total - this.loggedDrops} datagrams to the BFD port (${total} since start): ${what}`,
    });
    this.loggedDrops = total;
    this.dropsLoggedAt = now;
  }
}
