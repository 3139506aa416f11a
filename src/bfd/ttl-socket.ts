/**
 * Shell: the received-TTL check (RFC 5881 §5) on a listening BFD socket,
 * through the FFI door in `src/native/libc.ts`: the filter of
 * `ttl-filter.ts` attached with SO_ATTACH_FILTER, and the socket's kernel
 * drop counter read back with SO_MEMINFO. Where koffi cannot load, these
 * throw (NativeUnavailableError) and the caller runs without the check and
 * says so.
 */
import type { Socket } from 'node:dgram';
import { errnoText, libc, SO_ATTACH_FILTER, SOL_SOCKET } from '../native/index.js';
import { encodeFilter, ttlFilter } from './ttl-filter.js';

const SO_MEMINFO = 55;
/** Index of the socket's drop counter in SO_MEMINFO's u32 array (SK_MEMINFO_DROPS). */
const SK_MEMINFO_DROPS = 8;
const SK_MEMINFO_VARS = 9;

class TtlCheckError extends Error {
  override readonly name = 'TtlCheckError';
}

/**
 * The descriptor of a bound dgram socket. Node.js keeps a dgram socket's
 * handle under an internal symbol (the `_handle` getter is deprecated,
 * DEP0112, and warns); undefined when there is none.
 */
function dgramDescriptor(socket: Socket): number | undefined {
  const sym = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'state symbol');
  const state = sym ? (socket as unknown as Record<symbol, { handle?: { fd?: number } } | undefined>)[sym] : undefined;
  const fd = state?.handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

function descriptor(socket: Socket, what: string): number {
  const fd = dgramDescriptor(socket);
  if (fd === undefined) throw new TtlCheckError(`${what}: the socket has no file descriptor (not bound, or closed)`);
  return fd;
}

/**
 * Attaches the filter that drops every datagram whose TTL (IPv4) or Hop
 * Limit (IPv6) is not 255. Call it right after bind, before the first read
 * (datagrams queued in between are not re-filtered). Throws naming the
 * socket and the errno.
 */
export function attachTtlFilter(socket: Socket, family: 4 | 6): void {
  const fd = descriptor(socket, `BFD TTL filter (IPv${family})`);
  const program = ttlFilter(family);
  const c = libc();
  if (c.setsockoptFprog(fd, SOL_SOCKET, SO_ATTACH_FILTER, encodeFilter(program)) !== 0) {
    throw new TtlCheckError(`setsockopt(SO_ATTACH_FILTER) for the BFD TTL filter (IPv${family}) on fd ${fd}: ${errnoText(c.errno())}`);
  }
}

/**
 * Datagrams the kernel dropped on this socket since it was opened: the
 * filter's drops (TTL / Hop Limit not 255), and a full receive buffer's.
 */
export function kernelDrops(socket: Socket): number {
  const fd = descriptor(socket, 'BFD socket drop counter');
  const c = libc();
  const buf = new Uint8Array(4 * SK_MEMINFO_VARS);
  const len = new Int32Array([buf.length]);
  if (c.getsockopt(fd, SOL_SOCKET, SO_MEMINFO, buf, len) !== 0) throw new TtlCheckError(`getsockopt(SO_MEMINFO) on fd ${fd}: ${errnoText(c.errno())}`);
  if (len[0] < 4 * (SK_MEMINFO_DROPS + 1)) throw new TtlCheckError(`getsockopt(SO_MEMINFO) on fd ${fd}: ${len[0]} bytes, no drop counter`);
  return new Uint32Array(buf.buffer, 0, SK_MEMINFO_VARS)[SK_MEMINFO_DROPS];
}
