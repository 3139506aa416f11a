/**
 * The received-TTL check of RFC 5881 §5 as a classic BPF socket filter
 * (pure: the program and its bytes; `ttl-socket.ts` attaches it).
 *
 * Single-hop BFD packets must arrive with TTL / Hop Limit 255, so that a
 * packet from further than one hop away cannot bring a session up or keep it
 * up. Linux enforces IP_MINTTL / IPV6_MINHOPCOUNT on TCP sockets only (UDP
 * ignores them: tested on this kernel, 6.18), and Node.js's dgram gives no
 * ancillary data (IP_RECVTTL). A socket filter runs in the kernel on every
 * datagram queued to the socket, with the IP header reachable at
 * SKF_NET_OFF; a datagram with another TTL is dropped there (the socket's
 * drop counter counts it) and never reaches us.
 */

/** linux/filter.h: negative offsets reach the network header from a socket filter. */
export const SKF_NET_OFF = -0x100000;

/** linux/filter.h instruction classes and modes used here. */
export const BPF_LD = 0x00;
export const BPF_JMP = 0x05;
export const BPF_RET = 0x06;
export const BPF_B = 0x10;
export const BPF_ABS = 0x20;
export const BPF_JEQ = 0x10;
export const BPF_K = 0x00;

/** `struct sock_filter`: 8 bytes, host byte order. */
export interface BpfInstruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

export const SOCK_FILTER_SIZE = 8;
/** A socket filter's return value: keep this many bytes (all of them), or 0: drop. */
export const ACCEPT_ALL = 0xffffffff;

/** Offset of the TTL in the IPv4 header, of the Hop Limit in the IPv6 header. */
const TTL_OFFSET = { 4: 8, 6: 7 } as const;

/** Single-hop BFD's required TTL / Hop Limit (RFC 5881 §5). */
const REQUIRED_TTL = 255;

/**
 * The filter for a socket of `family` (an IPv6-only socket for 6):
 *
 *     ldb  [SKF_NET_OFF + 8]      ; IPv4 TTL (IPv6: + 7, the Hop Limit)
 *     jeq  #255, accept, drop
 *   accept: ret #0xffffffff       ; the whole datagram
 *   drop:   ret #0
 */
export function ttlFilter(family: 4 | 6, ttl: number = REQUIRED_TTL): BpfInstruction[] {
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 255) throw new RangeError(`TTL must be 1..255, got ${ttl}`);
  return [
    { code: BPF_LD | BPF_B | BPF_ABS, jt: 0, jf: 0, k: (SKF_NET_OFF + TTL_OFFSET[family]) >>> 0 },
    { code: BPF_JMP | BPF_JEQ | BPF_K, jt: 0, jf: 1, k: ttl },
    { code: BPF_RET | BPF_K, jt: 0, jf: 0, k: ACCEPT_ALL },
    { code: BPF_RET | BPF_K, jt: 0, jf: 0, k: 0 },
  ];
}

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The program as the array of `struct sock_filter` that `struct sock_fprog.filter` points to. */
export function encodeFilter(program: readonly BpfInstruction[], littleEndian = HOST_LITTLE_ENDIAN): Uint8Array {
  if (program.length === 0 || program.length > 4096) throw new RangeError(`a socket filter has 1..4096 instructions, got ${program.length}`);
  const b = new Uint8Array(program.length * SOCK_FILTER_SIZE);
  const v = new DataView(b.buffer);
  program.forEach((ins, i) => {
    const o = i * SOCK_FILTER_SIZE;
    v.setUint16(o, ins.code, littleEndian);
    v.setUint8(o + 2, ins.jt);
    v.setUint8(o + 3, ins.jf);
    v.setUint32(o + 4, ins.k >>> 0, littleEndian);
  });
  return b;
}
