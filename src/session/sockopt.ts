/**
 * Shell: TCP-MD5 and TTL security on real sockets, through the FFI loader in
 * `src/native/libc.ts` (koffi + libc, loaded lazily on the first peer that
 * asks). Node.js exposes a socket's descriptor only once it exists:
 *  - a listening server's (`server._handle.fd`): each configured peer's key
 *    is installed there before the peer can connect, and Linux copies it to
 *    the accepted socket;
 *  - an accepted socket's: TTL options are set on it in the 'connection'
 *    event, as BIRD does after accept();
 *  - an outgoing socket's only inside libuv's connect, after the SYN would
 *    need the key: so the socket is created here through FFI, its options
 *    set, and the descriptor handed to `net.Socket` (libuv connects an
 *    existing descriptor as it is).
 */
import { Socket, type Server } from 'node:net';
import { Address } from '../net/index.js';
import { errnoText, libc } from '../native/index.js';
import {
  AF_INET,
  AF_INET6,
  intBytes,
  md5KeyBytes,
  md5sigStruct,
  MD5SIG_SIZE,
  SOCK_CLOEXEC,
  SOCK_NONBLOCK,
  SOCK_STREAM,
  SOL_TCP,
  synTtl,
  TCP_MD5SIG,
  TCP_SAVE_SYN,
  TCP_SAVED_SYN,
  ttlOptions,
} from './sockopt-struct.js';

/** What a session's socket must carry. */
export interface SocketSecurity {
  readonly password?: string;
  readonly ttlSecurity?: number;
  readonly multihopTtl?: number;
}

export class SocketOptionError extends Error {
  override readonly name = 'SocketOptionError';
}

/** True when the options need native calls (so the FFI must load). */
export function needsSocketOptions(o: SocketSecurity): boolean {
  return (o.password !== undefined && o.password !== '') || (o.ttlSecurity ?? 0) > 0 || o.multihopTtl !== undefined;
}

/** The descriptor of a listening server or a connected socket; throws when Node.js has none. */
function descriptorOf(x: Server | Socket, what: string): number {
  const fd = (x as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new SocketOptionError(`${what}: the socket has no file descriptor (closed, or not a TCP socket)`);
  return fd;
}

function set(fd: number, level: number, name: number, value: Uint8Array, what: string): void {
  const c = libc();
  if (c.setsockopt(fd, level, name, value) !== 0) throw new SocketOptionError(`${what} on fd ${fd}: ${errnoText(c.errno())}`);
}

function familyOfServer(server: Server): 4 | 6 {
  const a = server.address();
  return typeof a === 'object' && a !== null && a.family === 'IPv4' ? 4 : 6;
}

/**
 * Installs (password) or deletes (undefined) the TCP-MD5 key for `peer` on a
 * listening server. An IPv6 peer is skipped on an IPv4 server (it cannot
 * connect there); deleting a key that is not there is not an error.
 */
export function setListenerKey(server: Server, peer: Address, password: string | undefined): void {
  const fam = familyOfServer(server);
  if (fam === 4 && peer.family === 6) return;
  const fd = descriptorOf(server, `TCP-MD5 key for ${peer} on the listener`);
  const c = libc();
  const s = md5sigStruct(peer, password === undefined ? undefined : md5KeyBytes(password), fam);
  if (c.setsockopt(fd, SOL_TCP, TCP_MD5SIG, s) === 0) return;
  const errno = c.errno();
  // ENOENT: deleting a key the kernel does not have.
  if (password === undefined && errno === 2) return;
  throw new SocketOptionError(`setsockopt(TCP_MD5SIG) for ${peer} on the listener (fd ${fd}): ${errnoText(errno)}`);
}

/**
 * Prepares a listening server for peers doing TTL security: outgoing TTL 255,
 * so that its SYN-ACKs reach them (accepted sockets inherit it; BIRD and FRR
 * do the same), and TCP_SAVE_SYN, so that the TTL of each accepted
 * connection's SYN can be checked (`acceptedSynTtl`) before a byte is read.
 */
export function setListenerTtlSecurity(server: Server): void {
  const fd = descriptorOf(server, 'TTL security on the listener');
  const opts =
    familyOfServer(server) === 4 ? ttlOptions(4, { multihopTtl: 255 }) : [...ttlOptions(4, { multihopTtl: 255 }), ...ttlOptions(6, { multihopTtl: 255 })];
  for (const x of opts) set(fd, x.level, x.name, intBytes(x.value), `setsockopt(${x.label}=255) on the listener`);
  set(fd, SOL_TCP, TCP_SAVE_SYN, intBytes(1), 'setsockopt(TCP_SAVE_SYN) on the listener');
}

/** The TTL the accepted connection's SYN arrived with, when the listener saved it (undefined otherwise). */
function acceptedSynTtl(socket: Socket): number | undefined {
  const fd = descriptorOf(socket, 'saved SYN');
  const c = libc();
  const buf = new Uint8Array(512);
  const len = new Int32Array([buf.length]);
  if (c.getsockopt(fd, SOL_TCP, TCP_SAVED_SYN, buf, len) !== 0) return undefined;
  return synTtl(buf.subarray(0, Math.max(0, Math.min(len[0], buf.length))));
}

/**
 * TTL options on an accepted socket from `peer` (its key came from the
 * listener). With TTL security the SYN's TTL is checked first: a SYN from
 * further than `ttlSecurity` hops throws (the caller closes the socket before
 * reading anything, so an OPEN that arrived before the minimum TTL was set
 * is never seen).
 */
export function secureAccepted(socket: Socket, peer: Address, o: SocketSecurity): void {
  const opts = ttlOptions(peer.family, o);
  if (opts.length === 0) return;
  const fd = descriptorOf(socket, `TTL security for ${peer}`);
  const hops = o.ttlSecurity ?? 0;
  if (hops > 0) {
    const ttl = acceptedSynTtl(socket);
    if (ttl !== undefined && ttl < 256 - hops)
      throw new SocketOptionError(
        `TTL security: the SYN from ${peer} arrived with TTL ${ttl}, so it is ${256 - ttl} hops away; ${hops} allowed (a minimum TTL of ${256 - hops})`,
      );
  }
  for (const x of opts) set(fd, x.level, x.name, intBytes(x.value), `setsockopt(${x.label}=${x.value}) for ${peer}`);
}

/**
 * A not yet connected `net.Socket` for a session to `peer`, created through
 * FFI with its key and TTL options already set, so that the SYN carries
 * them. The caller connects it (`socket.connect({ host, port, localAddress })`).
 */
function openSecuredSocket(peer: Address, o: SocketSecurity): Socket {
  const c = libc();
  const fd = c.socket(peer.family === 4 ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw new SocketOptionError(`socket() for ${peer}: ${errnoText(c.errno())}`);
  try {
    if (o.password !== undefined && o.password !== '') {
      set(fd, SOL_TCP, TCP_MD5SIG, md5sigStruct(peer, md5KeyBytes(o.password), peer.family), `setsockopt(TCP_MD5SIG) for ${peer}`);
    }
    for (const x of ttlOptions(peer.family, o)) set(fd, x.level, x.name, intBytes(x.value), `setsockopt(${x.label}=${x.value}) for ${peer}`);
    return new Socket({ fd, readable: true, writable: true });
  } catch (e) {
    c.close(fd);
    throw e;
  }
}

/** `net.connect` for a secured peer: the socket from `openSecuredSocket`, connected. */
export function connectSecured(o: SocketSecurity & { host: string; port: number; localAddress?: string; localPort?: number }): Socket {
  const socket = openSecuredSocket(Address.parse(o.host), o);
  return socket.connect({ host: o.host, port: o.port, localAddress: o.localAddress, localPort: o.localPort });
}
