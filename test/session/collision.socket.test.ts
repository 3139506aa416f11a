import { afterEach, describe, expect, it } from 'vitest';
import { Listener } from '../../src/session/listener.js';
import { Peer } from '../../src/session/peer.js';
import { sessionConfig } from '../../src/session/types.js';
import { WIRE_CODEC } from '../../src/session/connection.js';
import { recorder, until } from './loopback.js';
import { VirtualClock } from './sim.js';

describe('Peer collision over real sockets (127.0.0.1 ↔ 127.0.0.2)', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0)) await f();
  });

  it('both dial at once; one TCP connection per side survives and the session comes up once', async () => {
    const clock = new VirtualClock();
    const la = new Listener({ addresses: ['127.0.0.1'], port: 0 });
    const lb = new Listener({ addresses: ['127.0.0.2'], port: 0 });
    await la.listen();
    await lb.listen();
    cleanup.push(
      () => la.close(),
      () => lb.close(),
    );
    const ra = recorder();
    const rb = recorder();
    const a = new Peer({
      session: sessionConfig({ localAs: 65001, localId: '10.0.0.1', peerAs: 65002 }),
      remoteAddress: '127.0.0.2',
      remotePort: lb.ports[0],
      localAddress: '127.0.0.1',
      scheduler: clock,
      codec: WIRE_CODEC,
      hooks: ra.hooks,
    });
    const b = new Peer({
      session: sessionConfig({ localAs: 65002, localId: '10.0.0.2', peerAs: 65001 }),
      remoteAddress: '127.0.0.1',
      remotePort: la.ports[0],
      localAddress: '127.0.0.2',
      scheduler: clock,
      codec: WIRE_CODEC,
      hooks: rb.hooks,
    });
    la.addPeer('127.0.0.2', a);
    lb.addPeer('127.0.0.1', b);
    cleanup.unshift(() => {
      a.stop();
      b.stop();
    });
    a.start();
    b.start();
    expect(await until(() => a.state === 'Established' && b.state === 'Established')).toBe(true);
    // the collision's loser is closed on both sides
    expect(await until(() => a.snapshot.conns.length === 1 && b.snapshot.conns.length === 1)).toBe(true);
    expect(a.snapshot.conns).toHaveLength(1);
    expect(b.snapshot.conns).toHaveLength(1);
    expect(ra.ups).toBe(1);
    expect(rb.ups).toBe(1);
    expect([...ra.logs, ...rb.logs].some((l) => /collision|6\/7/.test(l))).toBe(true);
    // b has the higher identifier, so the survivor is the connection b opened.
    expect(b.snapshot.conns[0].initiator).toBe('local');
    expect(a.snapshot.conns[0].initiator).toBe('remote');
  });
});
