/**
 * Linux's numbers, once: the socket, netlink and namespace constants the
 * shells pass to libc (from the kernel's uapi headers, x86-64 and arm64
 * alike), and the one errno table (name and the C library's words).
 */

export const AF_NETLINK = 16;
export const SOCK_RAW = 3;
export const SOCK_CLOEXEC = 0x80000;
export const NETLINK_ROUTE = 0;
export const SOL_SOCKET = 1;
export const SO_SNDBUF = 7;
export const SO_RCVBUF = 8;
export const SO_RCVTIMEO = 20;
export const SO_ATTACH_FILTER = 26;
export const SO_RCVBUFFORCE = 33;
export const SOL_NETLINK = 270;
export const NETLINK_CAP_ACK = 10;
export const NETLINK_EXT_ACK = 11;
export const MSG_DONTWAIT = 0x40;
/** setns(2): the namespace is a network namespace. */
export const CLONE_NEWNET = 0x40000000;
/** open(2) flags O_RDONLY | O_CLOEXEC. */
export const O_RDONLY_CLOEXEC = 0x80000;

export const EPERM = 1;
export const EINTR = 4;
export const EAGAIN = 11;
export const ENOBUFS = 105;

/** errno → its name and the C library's words (strerror(3) in glibc), for the errnos the shells meet. */
const ERRNO: Readonly<Record<number, readonly [name: string, text: string]>> = {
  1: ['EPERM', 'Operation not permitted'],
  2: ['ENOENT', 'No such file or directory'],
  3: ['ESRCH', 'No such process'],
  4: ['EINTR', 'Interrupted system call'],
  9: ['EBADF', 'Bad file descriptor'],
  11: ['EAGAIN', 'Resource temporarily unavailable'],
  12: ['ENOMEM', 'Cannot allocate memory'],
  13: ['EACCES', 'Permission denied'],
  14: ['EFAULT', 'Bad address'],
  17: ['EEXIST', 'File exists'],
  19: ['ENODEV', 'No such device'],
  22: ['EINVAL', 'Invalid argument'],
  88: ['ENOTSOCK', 'Socket operation on non-socket'],
  92: ['ENOPROTOOPT', 'Protocol not available'],
  95: ['EOPNOTSUPP', 'Operation not supported'],
  97: ['EAFNOSUPPORT', 'Address family not supported by protocol'],
  101: ['ENETUNREACH', 'Network is unreachable'],
  105: ['ENOBUFS', 'No buffer space available'],
  113: ['EHOSTUNREACH', 'No route to host'],
};

/** "errno 22 (EINVAL)": for messages about a call that failed ("setsockopt(TCP_MD5SIG) on fd 12: errno 22 (EINVAL)"). */
export function errnoText(errno: number): string {
  const e = ERRNO[errno];
  return `errno ${errno}${e ? ` (${e[0]})` : ''}`;
}

/**
 * The C library's words for an errno ("Network is unreachable", what `ip`
 * prints after "RTNETLINK answers:"): the fallback where strerror(3) is not
 * at hand (the shells ask libc first); "errno N" for one not in the table.
 */
export function errnoReason(errno: number): string {
  return ERRNO[errno]?.[1] ?? `errno ${errno}`;
}
