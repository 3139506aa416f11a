/** A peer's options are invalid: the message names the peer and the field. Thrown by `addPeer`/`updatePeer` (`peer-config.ts`, `bfd.ts`). */
export class PeerConfigError extends Error {
  override readonly name = 'PeerConfigError';
}
