/**
 * The status hint for a peer whose trouble the state alone does not explain.
 * A TCP-MD5 mismatch is silent by design: Linux drops segments with a wrong
 * or missing signature, so the peer looks unreachable (Connect/Active, no
 * NOTIFICATION, nothing in its log either unless the kernel's is read). Both
 * ends of a mismatch look the same, so the hint is the operator's first
 * check, not a verdict.
 */
import type { PeerOptions, PeerState } from './types.js';

export const MD5_NO_ANSWER_HINT = 'TCP-MD5 configured; no answer from the peer: check the key first';

/** How long a peer with a password may stay silent before the hint shows: twice ConnectRetry, at least 10 s. */
export function hintAfterMs(o: Pick<PeerOptions, 'connectRetryTime'>): number {
  return Math.max(10, 2 * (o.connectRetryTime ?? 5)) * 1000;
}

/** `silentForMs`: time since the peer last answered (its OPEN arrived) or since the session settings were applied. */
export function transportHint(o: Pick<PeerOptions, 'password' | 'connectRetryTime'>, state: PeerState, silentForMs: number): string | undefined {
  if (!o.password || state === 'Established') return undefined;
  return silentForMs >= hintAfterMs(o) ? MD5_NO_ANSWER_HINT : undefined;
}
