/**
 * `tsbgp explain` as the sessions stand: the plan says a prefix is exported
 * to a peer; it is sent only while that session is Established. `routes`
 * lists what is sent, so explain says both, and the two views agree.
 */
import type { PeerState, PeerStatus } from '../speaker/index.js';
import type { ExplainJson, ExplainPeerJson } from './views.js';

export type ExplainPeerSessionJson = ExplainPeerJson & {
  /** The session's state, `null` when the speaker does not run this peer (not started). */
  readonly session: PeerState | null;
  /** Exported and the session is Established: in `tsbgp routes` for this peer. */
  readonly sent: boolean;
};

export function withSessions(x: ExplainJson, status: readonly PeerStatus[]): ExplainJson {
  const state = new Map(status.map((s) => [s.address, s.state]));
  return {
    ...x,
    prefixes: x.prefixes.map((p) => ({
      ...p,
      peers: p.peers.map((peer): ExplainPeerSessionJson => {
        const session = state.get(peer.address) ?? null;
        const sent = peer.exported && session === 'Established';
        const why = peer.exported && !sent ? `the session is ${session ?? 'not running'}; sent once it is Established. ${peer.why}` : peer.why;
        return { ...peer, why, session, sent };
      }),
    })),
  };
}
