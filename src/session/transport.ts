/**
 * Socket options a peer may ask for, checked before a session exists: their
 * values, and whether this platform can set them (through the FFI loader in
 * `src/native/libc.ts`; see `sockopt.ts` for how they are applied).
 */
import { nativeUnavailableReason } from '../native/index.js';
import { needsSocketOptions } from './sockopt.js';
import { md5PasswordProblem } from './sockopt-struct.js';

export interface TransportOptions {
  /** RFC 2385 TCP-MD5 password (1..80 bytes); empty or absent: none. */
  readonly password?: string;
  /** RFC 5082 GTSM: the peer's distance in hops, 1..255 (TTL 255 out, minimum TTL 256 − hops in); 0 or absent: off. */
  readonly ttlSecurity?: number;
  /** eBGP multihop: outgoing TTL, 1..255. */
  readonly multihopTtl?: number;
}

/** The options are valid but this platform cannot set them (koffi or libc did not load). */
export class UnsupportedTransportError extends Error {
  override readonly name = 'UnsupportedTransportError';
}

/** What is wrong with the values, or undefined. */
export function transportOptionsProblem(o: TransportOptions): string | undefined {
  if (o.password !== undefined && o.password !== '') {
    const p = md5PasswordProblem(o.password);
    if (p) return `password: ${p}`;
  }
  const hops = o.ttlSecurity;
  if (hops !== undefined && (!Number.isInteger(hops) || hops < 0 || hops > 255)) return `ttlSecurity must be 0..255 hops, got ${hops}`;
  if (o.multihopTtl !== undefined && (!Number.isInteger(o.multihopTtl) || o.multihopTtl < 1 || o.multihopTtl > 255))
    return `multihopTtl must be 1..255, got ${o.multihopTtl}`;
  return undefined;
}

/**
 * Throws UnsupportedTransportError when the peer asks for socket options this
 * platform cannot set: failing loudly beats a session that silently runs
 * without the protection the operator asked for. Nothing native is loaded
 * unless a peer asks.
 */
export function assertTransportSupported(o: TransportOptions, peer: string): void {
  if (!needsSocketOptions(o)) return;
  const reason = nativeUnavailableReason();
  if (reason === undefined) return;
  const what = [
    o.password ? 'a TCP-MD5 password (TCP_MD5SIG)' : undefined,
    (o.ttlSecurity ?? 0) > 0 ? 'TTL security (IP_TTL, IP_MINTTL)' : undefined,
    o.multihopTtl !== undefined ? `an outgoing TTL (multihop ${o.multihopTtl})` : undefined,
  ]
    .filter((x) => x !== undefined)
    .join(' and ');
  throw new UnsupportedTransportError(
    `peer ${peer}: ${what} is configured, but socket options cannot be set on this platform (` +
      `${reason}); remove it or protect the session another way (IPsec, a filtering firewall)`,
  );
}
