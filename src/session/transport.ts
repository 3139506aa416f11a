/** Socket options a peer may ask for, and what Node.js can actually do. */
export interface TransportOptions {
  /** RFC 2385 TCP-MD5 password. */
  readonly password?: string;
  /** RFC 5082 GTSM: expected hop count (sets TTL 255 out, minimum TTL in). */
  readonly ttlSecurity?: number | boolean;
  /** eBGP multihop: outgoing TTL. */
  readonly multihopTtl?: number;
}

export class UnsupportedTransportError extends Error {
  override readonly name = 'UnsupportedTransportError';
}

/**
 * Node.js's `net` module exposes neither TCP_MD5SIG nor IP_TTL/IP_MINTTL, so
 * these cannot be honoured; failing loudly beats a session that silently runs
 * without the protection the operator asked for.
 */
export function assertTransportSupported(o: TransportOptions, peer: string): void {
  if (o.password !== undefined && o.password !== '') {
    throw new UnsupportedTransportError(`peer ${peer}: a TCP-MD5 password is configured, but Node.js cannot set TCP_MD5SIG on a socket; remove the password or protect the session another way (IPsec, a filtering firewall)`);
  }
  if (o.ttlSecurity !== undefined && o.ttlSecurity !== false) {
    throw new UnsupportedTransportError(`peer ${peer}: TTL security (GTSM) is configured, but Node.js cannot set the outgoing TTL or IP_MINTTL on a socket; remove ttlSecurity`);
  }
  if (o.multihopTtl !== undefined) {
    throw new UnsupportedTransportError(`peer ${peer}: an outgoing TTL (multihop ${o.multihopTtl}) is configured, but Node.js cannot set the TTL of a TCP socket; remove multihopTtl`);
  }
}
