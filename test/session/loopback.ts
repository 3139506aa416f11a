import type { Codec } from '../../src/session/connection.js';
import { Listener } from '../../src/session/listener.js';
import { Peer, type PeerHooks } from '../../src/session/peer.js';
import { sessionConfig, type DownReason } from '../../src/session/types.js';
import type { UpdateMessage } from '../../src/wire/types.js';
import { VirtualClock } from './sim.js';

export const until = async (pred: () => boolean, ms = 3000) => {
  for (let t = 0; t < ms && !pred(); t += 5) await new Promise((r) => setTimeout(r, 5));
  return pred();
};

export interface Recorder {
  ups: number;
  downs: DownReason[];
  updates: UpdateMessage[];
  eor: number;
  logs: string[];
}
export const recorder = (): Recorder & { hooks: PeerHooks } => {
  const r: Recorder = { ups: 0, downs: [], updates: [], eor: 0, logs: [] };
  return Object.assign(r, {
    hooks: {
      onUp: () => {
        r.ups++;
      },
      onDown: (d: DownReason) => {
        r.downs.push(d);
      },
      onUpdate: (u: UpdateMessage) => {
        r.updates.push(u);
      },
      onEndOfRib: () => {
        r.eor++;
      },
      log: (l: string) => {
        r.logs.push(l);
      },
    },
  });
};

/**
 * Two Peers in one process over loopback: `a` listens (passive), `b` dials.
 * Timers run on a virtual clock, so hold and keepalive only fire when told.
 */
export async function loopbackPair(codec: Codec) {
  const clock = new VirtualClock();
  const listener = new Listener({ addresses: ['127.0.0.1'], port: 0 });
  await listener.listen();
  const ra = recorder();
  const rb = recorder();
  const a = new Peer({
    session: sessionConfig({ localAs: 65001, localId: '10.0.0.1', peerAs: 65002, passive: true }),
    remoteAddress: '127.0.0.1',
    scheduler: clock,
    codec,
    hooks: ra.hooks,
  });
  listener.addPeer('127.0.0.1', a);
  const b = new Peer({
    session: sessionConfig({ localAs: 65002, localId: '10.0.0.2', peerAs: 65001 }),
    remoteAddress: '127.0.0.1',
    remotePort: listener.ports[0],
    localAddress: '127.0.0.1',
    scheduler: clock,
    codec,
    hooks: rb.hooks,
  });
  return { clock, listener, a, b, ra, rb };
}
