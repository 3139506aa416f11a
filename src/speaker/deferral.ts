/**
 * RFC 4724 §4.1, the restarting side: after a restart the speaker holds back
 * its advertisements (route selection results) until every peer that will
 * send End-of-RIB has sent it for each of its families — so peers get one
 * complete initial dump instead of a partial one followed by corrections —
 * or until the selection deferral timer runs out (the speaker's job).
 * Pure bookkeeping: the speaker feeds session events and asks `waitingFor`.
 */
import type { AfiSafi } from '../wire/index.js';
import type { Negotiated } from '../session/index.js';

/** 'unknown': no session since the restart; a set: families whose End-of-RIB is still awaited. */
type Wait = 'unknown' | ReadonlySet<string>;

const famKey = (f: AfiSafi) => `${f.afi}/${f.safi}`;

export class SelectionDeferral {
  private readonly peers = new Map<string, Wait>();

  addPeer(id: string): void {
    if (!this.peers.has(id)) this.peers.set(id, 'unknown');
  }

  removePeer(id: string): void {
    this.peers.delete(id);
  }

  /**
   * A session came up. Peers without graceful restart, or restarting
   * themselves (R bit), are not waited for (§4.1); the others owe End-of-RIB
   * for every family of the session.
   */
  up(id: string, n: Negotiated): void {
    const gr = n.gracefulRestart;
    this.peers.set(id, gr === undefined || gr.restarting ? new Set() : new Set(n.families.map(famKey)));
  }

  /** A session went down before its End-of-RIB: wait for the next one. */
  down(id: string): void {
    const w = this.peers.get(id);
    if (w !== undefined && w !== 'unknown' && w.size > 0) this.peers.set(id, 'unknown');
  }

  endOfRib(id: string, family: AfiSafi): void {
    const w = this.peers.get(id);
    if (w === undefined || w === 'unknown') return;
    const rest = new Set(w);
    rest.delete(famKey(family));
    this.peers.set(id, rest);
  }

  /** Peers still awaited (empty: the deferral is over). */
  waitingFor(): string[] {
    return [...this.peers].filter(([, w]) => w === 'unknown' || w.size > 0).map(([id]) => id);
  }
}
