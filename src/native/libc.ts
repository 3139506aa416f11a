/**
 * The one place that loads native code: `koffi` (an FFI package with
 * prebuilt binaries) and the C library, lazily, on first use. Only shells
 * import this (the socket shell for TCP-MD5 / TTL security, the BFD socket
 * shell, the kernel shell's rtnetlink writer and listener). Where koffi or libc cannot load — another OS or architecture, a
 * missing prebuilt — `libc()` throws a `NativeUnavailableError` naming why,
 * the feature that asked says so, and nothing else is affected.
 */
import { createRequire } from 'node:module';

/**
 * The libc calls we bind. Each returns the C result; `errno()` reads errno
 * right after a failed call. Every length comes from the buffer given (its
 * `byteLength`), so no call can be told a buffer is larger than it is.
 */
export interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  setsockopt(fd: number, level: number, name: number, value: Uint8Array): number;
  /** getsockopt(2) into `value`; `length[0]` out: the option's size (in: `value.byteLength`, set by the call). */
  getsockopt(fd: number, level: number, name: number, value: Uint8Array, length: Int32Array): number;
  /** setsockopt with a `struct sock_fprog { len; filter → program }` (SO_ATTACH_FILTER); `program` holds whole 8-byte sock_filters. */
  setsockoptFprog(fd: number, level: number, name: number, program: Uint8Array): number;
  close(fd: number): number;
  errno(): number;
  /** open(2), for a network namespace's file (`/var/run/netns/NAME`). */
  open(path: string, flags: number): number;
  /** setns(2): moves the calling thread into the namespace `fd` names. */
  setns(fd: number, nstype: number): number;
  /** send(2) of all of `buf` (pass a subarray to send less). */
  send(fd: number, buf: Uint8Array, flags: number): number;
  /** recv(2) into `buf`, at most its size; returns the byte count, or −1 (see errno). */
  recv(fd: number, buf: Uint8Array, flags: number): number;
  /** if_nametoindex(3) in the calling thread's network namespace; 0: no such interface. */
  ifNameToIndex(name: string): number;
  /** strerror(3): the C library's words for an errno ("Network is unreachable"). */
  strerror(errno: number): string;
  /** bind(2) to a socket address given as bytes (a `struct sockaddr_nl` for the rtnetlink listener). */
  bind(fd: number, addr: Uint8Array): number;
  /** getsockname(2) into `addr`; `length[0]` out: the address's size (in: `addr.byteLength`, set by the call). */
  getsockname(fd: number, addr: Uint8Array, length: Int32Array): number;
}

export class NativeUnavailableError extends Error {
  override readonly name = 'NativeUnavailableError';
}

export type LibcLoader = () => Libc;

/** sizeof(struct sock_filter): code u16, jt u8, jf u8, k u32. */
const SOCK_FILTER_SIZE = 8;

/** Loads koffi and binds libc (Linux: libc.so.6). Throws whatever fails. */
const koffiLibcLoader: LibcLoader = () => {
  if (process.platform !== 'linux')
    throw new Error(`platform ${process.platform} is not supported (TCP_MD5SIG, IP_MINTTL and SO_ATTACH_FILTER are bound for Linux only)`);
  const require = createRequire(import.meta.url);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const koffi = require('koffi') as typeof import('koffi');
  const lib = koffi.load('libc.so.6');
  const socket = lib.func('int socket(int domain, int type, int protocol)');
  const setsockopt = lib.func('int setsockopt(int fd, int level, int name, const void *value, uint32_t length)');
  const getsockopt = lib.func('int getsockopt(int fd, int level, int name, _Out_ void *value, _Inout_ uint32_t *length)');
  const close = lib.func('int close(int fd)');
  const open = lib.func('int open(const char *path, int flags)');
  const setns = lib.func('int setns(int fd, int nstype)');
  const send = lib.func('intptr_t send(int fd, const void *buf, size_t len, int flags)');
  const recv = lib.func('intptr_t recv(int fd, _Out_ void *buf, size_t len, int flags)');
  const ifNameToIndex = lib.func('unsigned int if_nametoindex(const char *name)');
  const strerror = lib.func('const char *strerror(int errnum)');
  const bind = lib.func('int bind(int fd, const void *addr, uint32_t length)');
  const getsockname = lib.func('int getsockname(int fd, _Out_ void *addr, _Inout_ uint32_t *length)');
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; } (anonymous: a reload must not redefine a name)
  const fprog = koffi.struct({ len: 'uint16_t', filter: 'void *' });
  const setsockoptFprog = lib.func('setsockopt', 'int', ['int', 'int', 'int', koffi.pointer(fprog), 'uint32_t']);
  return {
    socket: (d, t, p) => socket(d, t, p) as number,
    setsockopt: (fd, level, name, value) => setsockopt(fd, level, name, value, value.byteLength) as number,
    getsockopt: (fd, level, name, value, length) => {
      length[0] = value.byteLength;
      return getsockopt(fd, level, name, value, length) as number;
    },
    setsockoptFprog: (fd, level, name, program) => {
      if (program.byteLength % SOCK_FILTER_SIZE !== 0)
        throw new RangeError(`a BPF program is whole ${SOCK_FILTER_SIZE}-byte instructions, got ${program.byteLength} bytes`);
      return setsockoptFprog(fd, level, name, { len: program.byteLength / SOCK_FILTER_SIZE, filter: program }, koffi.sizeof(fprog)) as number;
    },
    close: (fd) => close(fd) as number,
    open: (path, flags) => open(path, flags) as number,
    setns: (fd, nstype) => setns(fd, nstype) as number,
    send: (fd, buf, flags) => Number(send(fd, buf, buf.byteLength, flags)),
    recv: (fd, buf, flags) => Number(recv(fd, buf, buf.byteLength, flags)),
    ifNameToIndex: (name) => ifNameToIndex(name) as number,
    strerror: (errno) => String(strerror(errno)),
    bind: (fd, addr) => bind(fd, addr, addr.byteLength) as number,
    getsockname: (fd, addr, length) => {
      length[0] = addr.byteLength;
      return getsockname(fd, addr, length) as number;
    },
    errno: () => koffi.errno(),
  };
};

let loader: LibcLoader = koffiLibcLoader;
let loaded: { libc: Libc } | { error: string } | undefined;

/** The bound libc; throws NativeUnavailableError (the same one every time) where it cannot load. */
export function libc(): Libc {
  if (loaded === undefined) {
    try {
      loaded = { libc: loader() };
    } catch (e) {
      loaded = { error: `cannot load the FFI package koffi and libc on ${process.platform}/${process.arch}: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  if ('error' in loaded) throw new NativeUnavailableError(loaded.error);
  return loaded.libc;
}

/** Why native calls are unavailable, or undefined when they load. */
export function nativeUnavailableReason(): string | undefined {
  try {
    libc();
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Replaces the loader (tests inject a failing one, or a recording fake) and
 * forgets what was loaded; `undefined` restores koffi.
 */
export function setLibcLoader(next: LibcLoader | undefined): void {
  loader = next ?? koffiLibcLoader;
  loaded = undefined;
}
