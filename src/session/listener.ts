import { createServer, type Server, type Socket } from 'node:net';
import { Address, Prefix } from '../net/index.js';
import { needsSocketOptions, secureAccepted, setListenerKey, setListenerTtlSecurity, type SocketSecurity } from './sockopt.js';
import { RefusalLog, type RefusalLogOptions } from './refusal-log.js';

/** Whatever takes an inbound connection: a `Peer` in practice. */
export interface Acceptor {
  accept(socket: Socket): boolean;
}

export interface ListenerOptions {
  /** Local addresses to listen on; both wildcards when absent. */
  readonly addresses?: readonly string[];
  /** 179 unless told otherwise (0 picks a free port, for tests). */
  readonly port?: number;
  readonly log?: (line: string) => void;
  /** Throttling of the per-connection "closing connection from …" lines (src/session/refusal-log.ts). */
  readonly refusals?: RefusalLogOptions;
}

/** "::ffff:192.0.2.1" → "192.0.2.1"; canonical text otherwise. */
export function canonicalRemote(text: string): string | undefined {
  const bare = text.startsWith('::ffff:') && text.includes('.') ? text.slice(7) : text;
  try {
    return Address.parse(bare.split('%')[0]).toString();
  } catch {
    return undefined;
  }
}

/**
 * Accepts BGP connections and hands each to the peer configured for its
 * remote address, or to a dynamic range's factory; anything else is closed
 * with a log line.
 */
export class Listener {
  private readonly servers: Server[] = [];
  private readonly peers = new Map<string, Acceptor>();
  private readonly ranges: { prefix: Prefix; factory: (remote: string) => Acceptor | undefined }[] = [];
  /** Socket options per peer key: TCP-MD5 keys live on the listening sockets, TTL options go on accepted ones. */
  private readonly security = new Map<string, SocketSecurity>();
  private ttlSecurityOn = false;

  private readonly refusals: RefusalLog;

  constructor(private readonly options: ListenerOptions = {}) {
    this.refusals = new RefusalLog((line) => this.options.log?.(line), options.refusals);
  }

  /**
   * Connections from `address` go to `peer`. With a password its TCP-MD5 key
   * is installed on every listening socket now (or when listening starts), so
   * the peer's SYN is accepted; calling again with another or no password
   * replaces or deletes the key. Throws SocketOptionError when the kernel
   * refuses (the previous key, if any, stays).
   */
  addPeer(address: string, peer: Acceptor, security: SocketSecurity = {}): void {
    const key = canonicalRemote(address);
    if (!key) throw new Error(`listener: peer address ${JSON.stringify(address)} is not an IP address`);
    const before = this.security.get(key)?.password || undefined;
    const after = security.password || undefined;
    if (after !== before) for (const server of this.servers) setListenerKey(server, Address.parse(key), after);
    if ((security.ttlSecurity ?? 0) > 0) this.enableTtlSecurity();
    this.peers.set(key, peer);
    if (needsSocketOptions(security)) this.security.set(key, security);
    else this.security.delete(key);
  }

  removePeer(address: string): void {
    const key = canonicalRemote(address);
    if (!key) return;
    this.peers.delete(key);
    const sec = this.security.get(key);
    this.security.delete(key);
    if (sec?.password) {
      for (const server of this.servers) {
        try {
          setListenerKey(server, Address.parse(key), undefined);
        } catch (e) {
          this.options.log?.(`listener: cannot remove the TCP-MD5 key of ${key}: ${(e as Error).message}`);
        }
      }
    }
  }

  /** Peers whose TCP-MD5 key is installed (or will be, when listening starts). */
  get keyedPeers(): string[] {
    return [...this.security].filter(([, s]) => s.password).map(([k]) => k);
  }

  /** Once a peer does TTL security: TTL 255 (our SYN-ACKs must reach it) and saved SYNs on the listening sockets. */
  private enableTtlSecurity(): void {
    this.ttlSecurityOn = true;
    for (const server of this.servers) setListenerTtlSecurity(server);
  }

  /** Connections from `prefix` go to whatever `factory` returns for the remote address (undefined refuses). */
  addRange(prefix: string, factory: (remote: string) => Acceptor | undefined): void {
    this.ranges.push({ prefix: Prefix.parse(prefix), factory });
  }

  /** The acceptor for a remote address, if any: exact peers first, then the most specific range. */
  lookup(remote: string): Acceptor | undefined {
    const key = canonicalRemote(remote);
    if (!key) return undefined;
    const exact = this.peers.get(key);
    if (exact) return exact;
    const addr = Address.parse(key);
    const match = this.ranges.filter((r) => r.prefix.contains(addr)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
    return match?.factory(key);
  }

  /** Bound ports, one per address (useful with port 0). */
  get ports(): number[] {
    return this.servers.map((s) => {
      const a = s.address();
      return typeof a === 'object' && a ? a.port : 0;
    });
  }

  async listen(): Promise<void> {
    const port = this.options.port ?? 179;
    const addresses = this.options.addresses ?? ['::'];
    for (const host of addresses) {
      const server = createServer((socket) => this.onConnection(socket));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host, port, ipv6Only: false }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (e) => this.options.log?.(`listener ${host}:${port}: ${e.message}`));
      try {
        for (const [key, sec] of this.security) if (sec.password) setListenerKey(server, Address.parse(key), sec.password);
        if (this.ttlSecurityOn) setListenerTtlSecurity(server);
      } catch (e) {
        server.close();
        throw e;
      }
      this.servers.push(server);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    this.servers.length = 0;
    this.refusals.flush();
  }

  private onConnection(socket: Socket): void {
    const remote = socket.remoteAddress ?? '';
    const peer = this.lookup(remote);
    if (!peer) {
      this.refusals.refused(remote, `closing connection from ${remote}:${socket.remotePort}: no peer configured for that address`);
      socket.destroy();
      return;
    }
    const key = canonicalRemote(remote);
    const sec = key === undefined ? undefined : this.security.get(key);
    if (sec !== undefined && key !== undefined) {
      try {
        secureAccepted(socket, Address.parse(key), sec);
      } catch (e) {
        this.options.log?.(`closing connection from ${remote}:${socket.remotePort}: ${(e as Error).message}`);
        socket.destroy();
        return;
      }
    }
    peer.accept(socket);
  }
}
