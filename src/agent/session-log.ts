/**
 * What the agent logs about BGP sessions. An unreachable peer cycles
 * Connect ↔ Active every connect retry; logging each change at info buried
 * the log (three such peers: 205 lines in 160 s). So:
 *   - info: a session established; a session that never came up failing, once, with its reason;
 *   - warning: an established session going down, with its reason;
 *   - info: a new reason while down (each reason once); a summary every `summaryEveryMs` while it stays down;
 *   - debug: every other state change (the retries).
 * Time is passed in; the caller feeds it the speaker's stateChange and peerDown snapshots.
 */
import type { PeerState, PeerStatus } from '../speaker/index.js';
import type { Logger } from './log.js';
import { peerKey } from '../kubernetes/index.js';

/** While a peer stays down, one summary line per this long. */
const DOWN_SUMMARY_EVERY_MS = 5 * 60_000;

interface Down {
  /** The reason last seen. */
  reason: string | undefined;
  /** Reasons logged at info or warning while down: one alternating with another is not logged again. */
  readonly logged: Set<string>;
  lastSummary: number;
  retries: number;
}

export class SessionLog {
  private readonly up = new Set<string>();
  private readonly down = new Map<string, Down>();

  constructor(
    private readonly log: Logger,
    private readonly summaryEveryMs = DOWN_SUMMARY_EVERY_MS,
  ) {}

  /** A snapshot from the speaker after a state change (`from` when known). */
  observe(st: PeerStatus, from: PeerState | undefined, nowMs: number): void {
    const peer = st.address;
    // Kept per session (`plannedPeerKey`): two peers at one address on different ports have each their own.
    const key = peerKey(st.address, st.port);
    const reason = st.downReason?.text;
    const since = (st.upDownSince ?? st.since).toISOString();
    if (st.state === 'Established') {
      if (this.up.has(key)) return;
      const was = this.down.get(key);
      this.up.add(key);
      this.down.delete(key);
      this.log.info('BGP session established', { peer, ...(was ? { retries: was.retries } : {}) });
      return;
    }
    if (this.up.delete(key)) {
      this.down.set(key, { reason, logged: new Set(reason ? [reason] : []), lastSummary: nowMs, retries: 0 });
      this.log.warn('BGP session down', { peer, state: st.state, reason: reason ?? 'unknown' });
      return;
    }
    let d = this.down.get(key);
    if (!d) {
      // Configured, never up: quiet until an attempt has failed with a reason.
      if (reason === undefined) {
        this.log.debug('BGP session state changed', { peer, ...(from ? { from } : {}), to: st.state });
        return;
      }
      d = { reason, logged: new Set([reason]), lastSummary: nowMs, retries: 0 };
      this.down.set(key, d);
      this.log.info('BGP session not established', { peer, state: st.state, reason });
      return;
    }
    if (from !== undefined && from !== st.state && st.state === 'Connect') d.retries++;
    const newReason = reason !== undefined && reason !== d.reason && !d.logged.has(reason);
    if (reason !== undefined) d.reason = reason;
    if (newReason) {
      d.logged.add(reason);
      d.lastSummary = nowMs;
      this.log.info('BGP session still down, for another reason', { peer, state: st.state, reason, downSince: since });
      return;
    }
    if (nowMs - d.lastSummary >= this.summaryEveryMs) {
      d.lastSummary = nowMs;
      this.log.info('BGP session still down', { peer, state: st.state, reason: reason ?? 'unknown', downSince: since, retries: d.retries });
      return;
    }
    this.log.debug('BGP session state changed', { peer, ...(from ? { from } : {}), to: st.state, ...(reason ? { reason } : {}) });
  }

  /** The peer was removed from the configuration (`peer`: its key, as in Operations.removePeers). */
  forget(peer: string): void {
    this.up.delete(peer);
    this.down.delete(peer);
  }
}
