/**
 * Why a peer is down, and since when — what `calicoctl node status` and
 * `birdc show protocols` answer at 3 a.m.
 *
 * `upDownSince` moves only when the session goes up (Established) or down
 * (leaves Established): connect retries (Idle → Connect → Active → …) do not
 * reset it, so it says how long a peer has been down. The reason belongs to
 * the current state: cleared when the session is established, replaced by
 * each newer failure (a refused connect, a NOTIFICATION, a lost connection).
 *
 * Texts follow BIRD's protocol info as calicoctl shows it after the state
 * (`Active Socket: Connection refused`, `Idle Received: Cease / …`).
 */
import type { DownReason } from '../session/index.js';

export interface DownReasonInfo {
  /** One line, e.g. `Socket: Connection refused`, `Received: Cease / Administrative Shutdown: "bye"`, `Sent: Hold Timer Expired`. */
  readonly text: string;
  readonly at: Date;
}

/** Node.js socket error codes → the words BIRD (strerror) uses. */
const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'Connection refused',
  EHOSTUNREACH: 'No route to host',
  ENETUNREACH: 'Network is unreachable',
  ETIMEDOUT: 'Connection timed out',
  ECONNRESET: 'Connection reset by peer',
  ECONNABORTED: 'Connection aborted',
  EADDRINUSE: 'Address already in use',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
};

/** A failed connect as one line: `Socket: Connection refused`; a bind failure names the local address. */
export function socketErrorText(err: Error & { code?: string; address?: string; syscall?: string }): string {
  if (err.code === 'EADDRNOTAVAIL') {
    const addr = err.address ?? /EADDRNOTAVAIL\s+(\S+)/.exec(err.message)?.[1];
    return `Socket: Cannot bind to local address${addr ? ` ${addr}` : ''}: not an address of this host (EADDRNOTAVAIL)`;
  }
  const words = err.code !== undefined ? SOCKET_ERRORS[err.code] : undefined;
  if (words) return `Socket: ${words}`;
  return `Socket: ${err.message}`;
}

/** A session or attempt that ended without a more specific reason recorded. */
function downText(r: DownReason): string {
  switch (r.kind) {
    case 'tcpFailed':
      return 'Socket: Connection closed';
    case 'holdTimerExpired':
      return 'Error: Hold timer expired';
    case 'sendHoldTimerExpired':
      return 'Error: Send hold timer expired (the peer stopped reading)';
    case 'manualStop':
      return 'Stopped';
    case 'automaticStop':
      return 'Stopped automatically';
    case 'collision':
      return 'Connection collision';
    case 'notificationReceived':
      return `Received: NOTIFICATION ${r.code}/${r.subcode}`;
    case 'notificationSent':
      return `Sent: NOTIFICATION ${r.code}/${r.subcode} (${r.message})`;
    case 'unexpected':
      return `Error: unexpected ${r.event}`;
  }
}

/** One peer's up/down history as status shows it. Time is passed in. */
export class PeerHealth {
  private up = false;
  private since: Date;
  private last: DownReasonInfo | undefined;
  /** The reason was recorded by a specific event (connect error, NOTIFICATION) of the attempt now ending: keep it. */
  private specific = false;

  constructor(now: Date) {
    this.since = now;
  }

  /** When the session last went up or down (or the peer was configured). */
  get upDownSince(): Date {
    return this.since;
  }

  /** Why the session is not Established; undefined while it is, or before any attempt failed. */
  get reason(): DownReasonInfo | undefined {
    return this.up ? undefined : this.last;
  }

  /** The session's state changed: up is Established, every other state is down. */
  state(state: string, now: Date): void {
    const up = state === 'Established';
    if (up !== this.up) this.since = now;
    this.up = up;
    if (up) {
      this.last = undefined;
      this.specific = false;
    }
  }

  connectFailed(err: Error, now: Date): void {
    this.note(socketErrorText(err), now);
  }

  notification(direction: 'sent' | 'received', text: string, now: Date): void {
    this.note(`${direction === 'sent' ? 'Sent' : 'Received'}: ${text}`, now);
  }

  /** The established session ended. */
  sessionDown(reason: DownReason, now: Date): void {
    this.state('Idle', now);
    this.ended(reason, now);
  }

  /** An attempt that never reached Established ended. */
  attemptFailed(reason: DownReason, now: Date): void {
    this.ended(reason, now);
  }

  private note(text: string, now: Date): void {
    // A NOTIFICATION on the established session ends it: the reason of the down state that follows.
    this.last = { text, at: now };
    this.specific = true;
  }

  private ended(reason: DownReason, now: Date): void {
    if (!this.specific) this.last = { text: downText(reason), at: now };
    this.specific = false;
  }
}
