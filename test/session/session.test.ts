import { describe, expect, it } from 'vitest';
import { collisionWinner, createPeerSession, establishedConn, peerTransition, type PeerAction, type PeerSession } from '../../src/session/session.js';
import { cfg, ev, peerOpen } from './fixtures.js';

function run(s: PeerSession, events: Parameters<typeof peerTransition>[1][]): { s: PeerSession; actions: PeerAction[] } {
  const actions: PeerAction[] = [];
  for (const e of events) {
    const r = peerTransition(s, e, 0);
    s = r.session;
    actions.push(...r.actions);
  }
  return { s, actions };
}

const notifOn = (actions: PeerAction[], conn: number) =>
  actions.flatMap((a) =>
    a.type === 'send' && 'conn' in a && a.conn === conn && a.message.type === 'notification' ? [[a.message.code, a.message.subcode]] : [],
  );

describe('collision detection (RFC 4271 §6.8)', () => {
  it('the higher identifier keeps the connection it initiated', () => {
    expect(collisionWinner(cfg({ localId: '10.0.0.9' }), peerOpen({ bgpId: '10.0.0.2' }))).toBe('local');
    expect(collisionWinner(cfg({ localId: '10.0.0.1' }), peerOpen({ bgpId: '10.0.0.2' }))).toBe('remote');
    // 1.0.0.0 > 0.255.255.255 as unsigned 32-bit numbers, not as strings.
    expect(collisionWinner(cfg({ localId: '9.0.0.0' }), peerOpen({ bgpId: '10.0.0.0' }))).toBe('remote');
    // RFC 6286: equal identifiers fall back to the AS number.
    expect(collisionWinner(cfg({ localId: '10.0.0.2', localAs: 65009 }), peerOpen({ bgpId: '10.0.0.2' }))).toBe('local');
  });

  const both = (localId: string) => {
    // Outbound (conn 1) reaches OpenConfirm; an inbound (conn 2) then gets its OPEN.
    let r = run(createPeerSession(cfg({ localId })), [
      { type: 'start' },
      { type: 'conn', conn: 1, event: { type: 'TcpConnection_Acknowledged' } },
      { type: 'incoming' },
    ]);
    expect(r.s.conns.map((c) => [c.id, c.initiator, c.fsm.state])).toEqual([
      [1, 'local', 'OpenSent'],
      [2, 'remote', 'OpenSent'],
    ]);
    r = run(r.s, [{ type: 'conn', conn: 1, event: ev.open() }]);
    expect(r.s.conns[0].fsm.state).toBe('OpenConfirm');
    return run(r.s, [{ type: 'conn', conn: 2, event: ev.open() }]);
  };

  it('we have the lower identifier: our outbound connection is dumped with Cease 7', () => {
    const r = both('10.0.0.1');
    expect(notifOn(r.actions, 1)).toEqual([[6, 7]]);
    expect(r.s.conns.map((c) => [c.id, c.fsm.state])).toEqual([[2, 'OpenConfirm']]);
    expect(r.actions).toContainEqual({ type: 'release', conn: 1 });
  });

  it('we have the higher identifier: the inbound connection is dumped with Cease 7', () => {
    const r = both('10.0.0.9');
    expect(notifOn(r.actions, 2)).toEqual([[6, 7]]);
    expect(r.s.conns.map((c) => [c.id, c.fsm.state])).toEqual([[1, 'OpenConfirm']]);
  });

  it('a new connection while Established is refused with Cease 7, unless GR says the peer restarted', () => {
    const toUp = [
      { type: 'start' },
      { type: 'conn', conn: 1, event: { type: 'TcpConnection_Acknowledged' } },
      { type: 'conn', conn: 1, event: ev.open() },
      { type: 'conn', conn: 1, event: { type: 'KeepAliveMsg' } },
      { type: 'incoming' },
      { type: 'conn', conn: 2, event: ev.open() },
    ] as const;
    const plain = run(createPeerSession(cfg()), [...toUp]);
    expect(notifOn(plain.actions, 2)).toEqual([[6, 7]]);
    expect(establishedConn(plain.s)?.id).toBe(1);
    const grCfg = cfg({ gracefulRestart: { restartTime: 90, stalePathTime: 300, forwardingPreserved: [] } });
    const grCaps = [
      { kind: 'fourOctetAs', asn: 65002 } as const,
      { kind: 'gracefulRestart', restarting: true, notification: false, restartTime: 90, families: [{ afi: 1, safi: 1, forwardingPreserved: true }] } as const,
    ];
    const steps = toUp.map((e) => (e.type === 'conn' && e.event.type === 'BGPOpen' ? { ...e, event: ev.open(peerOpen({ caps: [...grCaps] })) } : e));
    const gr = run(createPeerSession(grCfg), steps);
    expect(notifOn(gr.actions, 1)).toEqual([[6, 7]]);
    expect(gr.actions).toContainEqual({ type: 'markStale', families: [{ afi: 1, safi: 1 }] });
    expect(gr.s.conns.map((c) => [c.id, c.fsm.state])).toEqual([[2, 'OpenConfirm']]);
  });

  it('an inbound connection is taken by a listening primary, refused while Idle or with two already', () => {
    const idle = run(createPeerSession(cfg()), [{ type: 'incoming' }]);
    expect(idle.actions).toEqual([{ type: 'refuse', reason: 'peer is idle' }]);
    const passive = run(createPeerSession(cfg({ passive: true })), [{ type: 'start' }, { type: 'incoming' }]);
    expect(passive.actions).toContainEqual({ type: 'accept', conn: 1 });
    expect(passive.s.conns).toHaveLength(1);
    expect(passive.s.conns[0]).toMatchObject({ initiator: 'remote', fsm: { state: 'OpenSent' } });
    const three = run(createPeerSession(cfg()), [{ type: 'start' }, { type: 'incoming' }, { type: 'incoming' }]);
    expect(three.actions.at(-1)).toEqual({ type: 'refuse', reason: 'already two connections to this peer' });
  });

  it('the primary failing hands over to the surviving inbound connection', () => {
    const r = run(createPeerSession(cfg()), [{ type: 'start' }, { type: 'incoming' }, { type: 'conn', conn: 1, event: { type: 'TcpConnectionFails' } }]);
    expect(r.s.conns.map((c) => c.id)).toEqual([2]);
    expect(r.actions).toContainEqual({ type: 'release', conn: 1 });
  });

  it('capability refusals learnt on one connection carry to the next OPEN', () => {
    let r = run(createPeerSession(cfg({ extendedMessage: true })), [
      { type: 'start' },
      { type: 'conn', conn: 1, event: { type: 'TcpConnection_Acknowledged' } },
      { type: 'conn', conn: 1, event: ev.notif(2, 7, Uint8Array.of(6, 0)) },
    ]);
    expect(r.s.conns[0].fsm.omissions.codes).toEqual([6]);
    r = run(r.s, [
      { type: 'conn', conn: 1, event: { type: 'IdleHoldTimer_Expires' } },
      { type: 'conn', conn: 1, event: { type: 'TcpConnection_Acknowledged' } },
    ]);
    const open = r.actions.find((a) => a.type === 'send' && a.message.type === 'open');
    const caps =
      open && open.type === 'send' && open.message.type === 'open' ? open.message.params.flatMap((p) => p.capabilities ?? []).map((c) => c.kind) : [];
    expect(caps).toContain('fourOctetAs');
    expect(caps).not.toContain('extendedMessage');
  });

  it('End-of-RIB from the peer is reported, not delivered as an UPDATE; sending one needs an Established session', () => {
    const up = run(createPeerSession(cfg()), [
      { type: 'start' },
      { type: 'conn', conn: 1, event: { type: 'TcpConnection_Acknowledged' } },
      { type: 'conn', conn: 1, event: ev.open() },
      { type: 'conn', conn: 1, event: { type: 'KeepAliveMsg' } },
    ]);
    const eor = run(up.s, [{ type: 'conn', conn: 1, event: { type: 'UpdateMsg', message: { type: 'update', withdrawn: [], attributes: {}, nlri: [] } } }]);
    expect(eor.actions).toEqual([
      { type: 'startTimer', timer: 'Hold', seconds: 90, conn: 1 },
      { type: 'endOfRib', conn: 1, family: { afi: 1, safi: 1 } },
    ]);
    expect(run(up.s, [{ type: 'sendEndOfRib', family: { afi: 1, safi: 1 } }]).actions).toEqual([
      { type: 'send', conn: 1, message: { type: 'update', withdrawn: [], attributes: {}, nlri: [] } },
    ]);
    expect(run(createPeerSession(cfg()), [{ type: 'sendEndOfRib', family: { afi: 1, safi: 1 } }]).actions).toEqual([]);
  });
});

describe('session config validation', () => {
  it('names the field that is wrong', () => {
    expect(() => createPeerSession(cfg({ holdTime: 2 }))).toThrow(/holdTime must be 0 or 3\.\.65535 seconds, got 2/);
    expect(() => createPeerSession(cfg({ localId: '0.0.0.0' }))).toThrow(/localId/);
    expect(() => createPeerSession(cfg({ localId: '10.0.0.256' }))).toThrow(/localId/);
    expect(() => createPeerSession(cfg({ localAs: 0 }))).toThrow(/localAs/);
    expect(() => createPeerSession(cfg({ peerAs: 2 ** 32 }))).toThrow(/peerAs/);
    expect(() => createPeerSession(cfg({ families: [] }))).toThrow(/families/);
    expect(() => createPeerSession(cfg({ idleHold: { initial: 10, max: 5, stableAfter: 0 } }))).toThrow(/idleHold/);
    expect(() => createPeerSession(cfg({ gracefulRestart: { restartTime: 5000, stalePathTime: 1, forwardingPreserved: [] } }))).toThrow(
      /restartTime must be 0\.\.4095/,
    );
    expect(createPeerSession(cfg({ holdTime: 0, peerAs: 'any' })).conns).toHaveLength(1);
  });
});
