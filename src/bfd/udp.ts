/**
 * BFD over UDP, single hop (RFC 5881): receive on port 3784 (IPv4 and IPv6),
 * send from one socket per session bound to a source port in 49152–65535,
 * with TTL / hop limit 255.
 *
 * The received TTL is checked in the kernel: each listening socket gets the
 * socket filter of ttl-filter.ts (attached through koffi, ttl-socket.ts),
 * which drops datagrams whose TTL / Hop Limit is not 255. Where that cannot
 * be done, BFD runs without the check and `ttlCheck` says why (README.md,
 * "TTL / GTSM").
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { BfdTransport } from './runtime.js';
import { attachTtlFilter, kernelDrops } from './ttl-socket.js';

const BFD_PORT = 3784;
const SOURCE_PORTS: readonly [number, number] = [49152, 65535];

export interface UdpOptions {
  /** Port to receive on (default 3784; 0 for an ephemeral one in tests). */
  readonly port?: number;
  /** Port packets are sent to (default 3784). */
  readonly peerPort?: number;
  /** Addresses to receive on; default 0.0.0.0 and :: (IPv6 only where the host has it). */
  readonly listen?: readonly string[];
  /**
   * Called with each listening socket once bound, to check the received TTL
   * (default: attachTtlFilter, the kernel socket filter); throwing means
   * "not checked", with the message as the reason.
   */
  readonly secureSocket?: (socket: Socket, family: 4 | 6) => void;
  readonly log?: (level: 'info' | 'warning' | 'error', msg: string) => void;
  readonly random?: () => number;
}

interface TxSocket {
  readonly socket: Socket;
  ready: boolean;
  closed: boolean;
  readonly queue: Uint8Array[];
  readonly port: number;
}

/** Whether received packets must carry TTL / Hop Limit 255 (RFC 5881 §5), and if not, why. */
export type TtlCheckStatus = { readonly checked: true } | { readonly checked: false; readonly reason: string };

export class UdpTransport implements BfdTransport {
  private readonly rx: Socket[] = [];
  private readonly tx = new Map<string, TxSocket>();
  /** Set by start(): checked on every listening socket, or why not. */
  ttlCheck: TtlCheckStatus = { checked: false, reason: 'not started' };
  /** Send errors (the session carries on; the remote's detection time decides). */
  sendErrors = 0;
  lastError: string | undefined;

  constructor(
    private readonly opts: UdpOptions,
    private readonly onPacket: (bytes: Uint8Array, from: string) => void,
  ) {}

  /** Binds the receive sockets. Throws (naming the address and port) if none can be bound. */
  async start(): Promise<void> {
    const addrs = this.opts.listen ?? ['0.0.0.0', '::'];
    const errors: string[] = [];
    const unchecked: string[] = [];
    for (const address of addrs) {
      const family = isIPv6(address) ? 6 : 4;
      const s = createSocket({ type: family === 6 ? 'udp6' : 'udp4', ipv6Only: family === 6, reuseAddr: false });
      try {
        await new Promise<void>((resolve, reject) => {
          s.once('error', reject);
          s.bind({ address, port: this.opts.port ?? BFD_PORT, exclusive: true }, () => {
            s.off('error', reject);
            resolve();
          });
        });
      } catch (e) {
        s.close();
        const msg = `cannot listen for BFD on [${address}]:${this.opts.port ?? BFD_PORT}: ${(e as Error).message}`;
        // No IPv6 on this host is not an error worth failing for when IPv4 works.
        errors.push(msg);
        this.opts.log?.('warning', msg);
        continue;
      }
      // Before the first read: libuv reads on the next turn of the loop.
      try {
        (this.opts.secureSocket ?? attachTtlFilter)(s, family);
      } catch (e) {
        unchecked.push(`[${address}]: ${(e as Error).message}`);
      }
      s.on('message', (msg, rinfo) => this.onPacket(msg, rinfo.address));
      s.on('error', (e) => this.opts.log?.('error', `BFD socket [${address}]: ${e.message}`));
      this.rx.push(s);
    }
    if (this.rx.length === 0) throw new Error(errors.join('; '));
    this.ttlCheck = unchecked.length === 0 ? { checked: true } : { checked: false, reason: unchecked.join('; ') };
    if (!this.ttlCheck.checked) {
      this.opts.log?.(
        'warning',
        `BFD: the received TTL is not checked (RFC 5881 §5 wants 255), packets from further than one hop are accepted: ${this.ttlCheck.reason}`,
      );
    }
  }

  /**
   * Datagrams the kernel dropped on the listening sockets (the TTL filter's
   * drops and full receive buffers), or undefined where it cannot be read.
   */
  kernelDrops(): number | undefined {
    try {
      return this.rx.reduce((n, s) => n + kernelDrops(s), 0);
    } catch {
      return undefined;
    }
  }

  /** The bound receive ports (one per listening socket). */
  get ports(): number[] {
    return this.rx.map((s) => s.address().port);
  }

  open(peer: string, local: string | undefined, port?: number): void {
    const family = isIPv6(peer) ? 6 : 4;
    const socket = createSocket({ type: family === 6 ? 'udp6' : 'udp4' });
    const t: TxSocket = { socket, ready: false, closed: false, queue: [], port: port ?? this.opts.peerPort ?? BFD_PORT };
    this.tx.set(peer, t);
    socket.on('message', () => {}); // replies come to port 3784, not here
    const [lo, hi] = SOURCE_PORTS;
    const rand = this.opts.random ?? Math.random;
    let tries = 0;
    const attempt = (): void => {
      if (t.closed) return;
      const sport = lo + Math.floor(rand() * (hi - lo + 1));
      const onError = (e: NodeJS.ErrnoException): void => {
        if (t.closed) return;
        if (++tries < 32 && e.code === 'EADDRINUSE') return attempt();
        this.lastError = `BFD to ${peer}: cannot bind a source port${local ? ` on ${local}` : ''}: ${e.message}`;
        this.opts.log?.('error', this.lastError);
      };
      socket.once('error', onError);
      socket.bind({ address: local ?? (family === 6 ? '::' : '0.0.0.0'), port: sport, exclusive: true }, () => {
        socket.off('error', onError);
        socket.on('error', (e) => {
          this.sendErrors++;
          this.lastError = `BFD to ${peer}: ${e.message}`;
        });
        // RFC 5881 §5: TTL / Hop Limit 255 on every packet we send.
        socket.setTTL(255);
        t.ready = true;
        for (const b of t.queue.splice(0)) this.send(peer, b);
      });
    };
    attempt();
  }

  send(peer: string, bytes: Uint8Array): void {
    const t = this.tx.get(peer);
    if (!t || t.closed) return;
    if (!t.ready) {
      if (t.queue.length < 4) t.queue.push(bytes);
      return;
    }
    try {
      t.socket.send(bytes, t.port, peer, (err) => {
        if (err) {
          this.sendErrors++;
          this.lastError = `BFD to ${peer}: ${err.message}`;
        }
      });
    } catch (err) {
      this.sendErrors++;
      this.lastError = `BFD to ${peer}: ${(err as Error).message}`;
    }
  }

  close(peer: string): void {
    const t = this.tx.get(peer);
    if (!t) return;
    this.tx.delete(peer);
    // Let a last queued send (AdminDown) go out first.
    t.closed = true;
    setImmediate(() => {
      try {
        t.socket.close();
      } catch {
        /* already closed */
      }
    });
  }

  async stop(): Promise<void> {
    for (const peer of [...this.tx.keys()]) this.close(peer);
    await Promise.all(this.rx.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
