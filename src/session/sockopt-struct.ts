/**
 * Pure encodings of the Linux socket options behind TCP-MD5 (RFC 2385) and
 * TTL security (GTSM, RFC 5082): constants, `struct tcp_md5sig`, and the list
 * of integer options a session's socket needs. No I/O; `sockopt.ts` applies
 * them to a descriptor.
 */
import type { Address } from '../net/index.js';

/** Linux takes these fields in host byte order. */
export const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export const AF_INET = 2;
export const AF_INET6 = 10;
export const SOCK_STREAM = 1;
export const SOCK_NONBLOCK = 0o4000;
export const SOCK_CLOEXEC = 0o2000000;
const SOL_IP = 0;
export const IP_TTL = 2;
export const IP_MINTTL = 21;
export const SOL_TCP = 6;
export const TCP_MD5SIG = 14;
/** Keep the SYN's headers (Linux 4.2+); read them back on the accepted socket with TCP_SAVED_SYN. */
export const TCP_SAVE_SYN = 27;
export const TCP_SAVED_SYN = 28;
const SOL_IPV6 = 41;
const IPV6_UNICAST_HOPS = 16;
export const IPV6_MINHOPCOUNT = 73;

/** TCP_MD5SIG_MAXKEYLEN (include/uapi/linux/tcp.h). */
const MD5_MAX_KEY_BYTES = 80;
/** sizeof(struct tcp_md5sig) on Linux (sockaddr_storage 128 + flags, prefixlen, keylen, ifindex 8 + key 80). */
export const MD5SIG_SIZE = 216;

/** The password's bytes as the kernel takes them (UTF-8, as BIRD and FRR pass the configured string). */
export function md5KeyBytes(password: string): Uint8Array {
  return new TextEncoder().encode(password);
}

/** Why a password cannot be used as a TCP-MD5 key, or undefined when it can. */
export function md5PasswordProblem(password: string): string | undefined {
  const n = md5KeyBytes(password).length;
  if (n === 0) return 'the TCP-MD5 password is empty';
  if (n > MD5_MAX_KEY_BYTES) return `the TCP-MD5 password is ${n} bytes; Linux takes at most ${MD5_MAX_KEY_BYTES}`;
  return undefined;
}

/**
 * `struct tcp_md5sig` for `setsockopt(SOL_TCP, TCP_MD5SIG)`: the key for one
 * peer address, or (key undefined: keylen 0) its deletion. On an IPv6
 * socket an IPv4 peer is given as a v4-mapped address (AF_INET would be
 * refused with EINVAL: a dual-stack listener sees IPv4 peers that way).
 */
export function md5sigStruct(peer: Address, key: Uint8Array | undefined, socketFamily: 4 | 6, littleEndian = HOST_LITTLE_ENDIAN): Uint8Array {
  if (key !== undefined && (key.length === 0 || key.length > MD5_MAX_KEY_BYTES))
    throw new RangeError(`TCP-MD5 key must be 1..${MD5_MAX_KEY_BYTES} bytes, got ${key.length}`);
  if (socketFamily === 4 && peer.family === 6) throw new RangeError(`an IPv6 peer (${peer}) has no key on an IPv4 socket`);
  const b = new Uint8Array(MD5SIG_SIZE);
  const v = new DataView(b.buffer);
  if (socketFamily === 4) {
    // sockaddr_in: family (host order), port 0, address at 4.
    v.setUint16(0, AF_INET, littleEndian);
    peer.writeTo(b, 4);
  } else {
    // sockaddr_in6: family, port 0, flowinfo 0, address at 8..23, scope_id 0.
    v.setUint16(0, AF_INET6, littleEndian);
    if (peer.family === 4) {
      b[18] = 0xff;
      b[19] = 0xff;
      peer.writeTo(b, 20);
    } else {
      peer.writeTo(b, 8);
    }
  }
  // tcpm_flags 0, tcpm_prefixlen 0 (the whole address), tcpm_ifindex 0.
  if (key !== undefined) {
    v.setUint16(130, key.length, littleEndian);
    b.set(key, 136);
  }
  return b;
}

export interface IntOption {
  readonly level: number;
  readonly name: number;
  readonly value: number;
  /** For messages: "IP_MINTTL". */
  readonly label: string;
}

/**
 * The integer options for a session socket to `peerFamily`: with TTL security
 * (hops 1..255) send with TTL 255 and accept only TTL ≥ 256 − hops; else, with
 * `multihopTtl`, send with that TTL. An IPv4 peer on a dual-stack IPv6 socket
 * (v4-mapped) takes the IPv4 options, as Linux routes them to IPv4.
 */
export function ttlOptions(peerFamily: 4 | 6, o: { ttlSecurity?: number; multihopTtl?: number }): IntOption[] {
  const hops = o.ttlSecurity ?? 0;
  if (hops > 0) {
    if (!Number.isInteger(hops) || hops > 255) throw new RangeError(`ttlSecurity must be 1..255 hops, got ${hops}`);
    return peerFamily === 4
      ? [
          { level: SOL_IP, name: IP_TTL, value: 255, label: 'IP_TTL' },
          { level: SOL_IP, name: IP_MINTTL, value: 256 - hops, label: 'IP_MINTTL' },
        ]
      : [
          { level: SOL_IPV6, name: IPV6_UNICAST_HOPS, value: 255, label: 'IPV6_UNICAST_HOPS' },
          { level: SOL_IPV6, name: IPV6_MINHOPCOUNT, value: 256 - hops, label: 'IPV6_MINHOPCOUNT' },
        ];
  }
  if (o.multihopTtl !== undefined) {
    if (!Number.isInteger(o.multihopTtl) || o.multihopTtl < 1 || o.multihopTtl > 255) throw new RangeError(`multihop TTL must be 1..255, got ${o.multihopTtl}`);
    return [
      peerFamily === 4
        ? { level: SOL_IP, name: IP_TTL, value: o.multihopTtl, label: 'IP_TTL' }
        : { level: SOL_IPV6, name: IPV6_UNICAST_HOPS, value: o.multihopTtl, label: 'IPV6_UNICAST_HOPS' },
    ];
  }
  return [];
}

/** A C int in host byte order. */
export function intBytes(value: number, littleEndian = HOST_LITTLE_ENDIAN): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, value, littleEndian);
  return b;
}

/**
 * The TTL (IPv4) or hop limit (IPv6) from a saved SYN's headers
 * (getsockopt TCP_SAVED_SYN: network header first); undefined when the
 * bytes are not an IP header.
 */
export function synTtl(headers: Uint8Array): number | undefined {
  if (headers.length < 1) return undefined;
  const version = headers[0] >> 4;
  if (version === 4 && headers.length >= 20) return headers[8];
  if (version === 6 && headers.length >= 40) return headers[7];
  return undefined;
}
