import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openCapabilities } from '../../src/session/open.js';
import { sessionConfig, type SessionConfig } from '../../src/session/types.js';
import { refuseCapabilities, Sim } from './sim.js';

const ids: Record<string, string> = { a: '10.0.0.1', b: '10.0.0.2', c: '10.0.0.3' };
const asns: Record<string, number> = { a: 65001, b: 65002, c: 65003 };
const conf = (me: string, peer: string, over: Partial<SessionConfig> = {}): SessionConfig =>
  sessionConfig({ localAs: asns[me], localId: ids[me], peerAs: asns[peer], idleHold: { initial: 1, max: 8, stableAfter: 30 }, ...over });

function pair(over: Partial<SessionConfig> = {}, overB: Partial<SessionConfig> = over): Sim {
  const sim = new Sim();
  sim.add('a', 'b', conf('a', 'b', over));
  sim.add('b', 'a', conf('b', 'a', overB));
  return sim;
}

const up = (sim: Sim, x: string, y: string) => sim.state(x, y) === 'Established' && sim.state(y, x) === 'Established';

describe('simulation over in-memory links', () => {
  it('two peers establish and keep the session with keepalives', () => {
    const sim = pair({}, { passive: true });
    sim.start('b', 'a');
    sim.start('a', 'b');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 1000)).toBe(true);
    sim.clock.advance(600_000);
    expect(up(sim, 'a', 'b')).toBe(true);
    expect(sim.actions('a', 'b', 'sessionDown')).toEqual([]);
    const kas = sim.sent.filter((s) => s.from === 'a' && s.message.type === 'keepalive').length;
    // One every 30 s for 10 minutes, plus the OpenSent one.
    expect(kas).toBeGreaterThanOrEqual(20);
  });

  it('collision: both connect at once, one connection survives, initiated by the higher identifier', () => {
    const sim = pair();
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 5000)).toBe(true);
    sim.clock.advance(5000);
    expect(sim.session('a', 'b').conns).toHaveLength(1);
    expect(sim.session('b', 'a').conns).toHaveLength(1);
    // b (10.0.0.2) has the higher id: the survivor is b's outgoing connection.
    expect(sim.session('a', 'b').conns[0].initiator).toBe('remote');
    expect(sim.session('b', 'a').conns[0].initiator).toBe('local');
    const cease7 = sim.sent.filter((s) => s.message.type === 'notification' && s.message.code === 6 && s.message.subcode === 7);
    expect(cease7.length).toBeGreaterThanOrEqual(1);
    expect(sim.actions('a', 'b', 'sessionUp')).toHaveLength(1);
    expect(sim.actions('b', 'a', 'sessionUp')).toHaveLength(1);
  });

  it('a stalled link ends in hold timer expiry on both sides, then recovers when unstalled', () => {
    const sim = pair({ holdTime: 9 });
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 5000)).toBe(true);
    const t0 = sim.clock.now();
    sim.setFaults('a', 'b', { stall: true });
    expect(sim.clock.runUntil(() => sim.actions('a', 'b', 'sessionDown').length > 0, 20_000, 100)).toBe(true);
    const down = sim.log.find((l) => l.node === 'a' && l.action.type === 'sessionDown')!;
    expect(down.action).toMatchObject({ reason: { kind: 'holdTimerExpired' } });
    expect(down.at - t0).toBeGreaterThanOrEqual(9000 - (30 * 1000) / 3);
    expect(down.at - t0).toBeLessThanOrEqual(9100);
    expect(sim.actions('b', 'a', 'sessionDown')[0]).toMatchObject({ reason: { kind: 'holdTimerExpired' } });
    sim.setFaults('a', 'b', {});
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 60_000, 100)).toBe(true);
  });

  it('capability refused with 2/7: the next attempt omits it and the session comes up', () => {
    const sim = pair({ extendedMessage: true, enhancedRouteRefresh: true }, { passive: true });
    sim.filterOpens('b', refuseCapabilities([6]));
    sim.start('b', 'a');
    sim.start('a', 'b');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 30_000)).toBe(true);
    const opens = sim.sent
      .filter((s) => s.from === 'a' && s.message.type === 'open')
      .map((s) => (s.message.type === 'open' ? openCapabilities(s.message).map((c) => c.kind) : []));
    expect(opens.length).toBeGreaterThanOrEqual(2);
    expect(opens[0]).toContain('extendedMessage');
    expect(opens.at(-1)).not.toContain('extendedMessage');
    expect(opens.at(-1)).toContain('enhancedRouteRefresh');
    const n = sim.session('a', 'b').conns[0].fsm.negotiated!;
    expect(n.extendedMessage).toBe(false);
    expect(n.enhancedRouteRefresh).toBe(false); // b did not offer it
  });

  it('graceful restart: routes go stale on loss, are purged after End-of-RIB once the peer is back', () => {
    const gr = { gracefulRestart: { restartTime: 120, stalePathTime: 300, forwardingPreserved: [{ afi: 1, safi: 1 }] } };
    const sim = pair(gr);
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 5000)).toBe(true);
    // b crashes and comes back restarting.
    sim.restart('b', 'a', conf('b', 'a', gr), { restarting: true });
    // The restarted b's RIB sends End-of-RIB once its (empty) initial dump is done.
    sim.eorOnUp.set('b', [{ afi: 1, safi: 1 }]);
    sim.clock.advance(100);
    expect(sim.actions('a', 'b', 'markStale')).toEqual([{ type: 'markStale', families: [{ afi: 1, safi: 1 }] }]);
    expect(sim.actions('a', 'b', 'flushRoutes')).toEqual([]);
    expect(sim.actions('a', 'b', 'startPeerTimer')).toEqual([{ type: 'startPeerTimer', timer: 'Restart', seconds: 120 }]);
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 30_000)).toBe(true);
    // b's OPEN carried the R bit and forwarding flag.
    const bOpen = sim.sent.filter((s) => s.from === 'b' && s.message.type === 'open').at(-1)!.message;
    const cap = bOpen.type === 'open' ? openCapabilities(bOpen).find((c) => c.kind === 'gracefulRestart') : undefined;
    expect(cap).toMatchObject({ restarting: true, families: [{ afi: 1, safi: 1, forwardingPreserved: true }] });
    sim.clock.advance(100);
    expect(sim.actions('a', 'b', 'endOfRib')).toHaveLength(1);
    expect(sim.actions('a', 'b', 'purgeStale')).toEqual([{ type: 'purgeStale', families: [{ afi: 1, safi: 1 }] }]);
    expect(sim.session('a', 'b').gr.phase).toBe('none');
    // Once up, b is no longer restarting.
    expect(sim.session('b', 'a').restarting).toBe(false);
  });

  it('graceful restart: a peer that stays away past its restart time has its routes purged', () => {
    const gr = { gracefulRestart: { restartTime: 60, stalePathTime: 300, forwardingPreserved: [] } };
    const sim = pair(gr);
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 5000)).toBe(true);
    sim.setFaults('a', 'b', { down: true });
    sim.cut('a', 'b');
    sim.clock.advance(59_000);
    expect(sim.actions('a', 'b', 'purgeStale')).toEqual([]);
    sim.clock.advance(2_000);
    expect(sim.actions('a', 'b', 'purgeStale')).toEqual([{ type: 'purgeStale', families: [{ afi: 1, safi: 1 }] }]);
  });

  it('three peers in a full mesh all establish, and a cut between two leaves the third sessions alone', () => {
    const sim = new Sim();
    for (const x of ['a', 'b', 'c']) for (const y of ['a', 'b', 'c']) if (x !== y) sim.add(x, y, conf(x, y));
    for (const x of ['a', 'b', 'c']) for (const y of ['a', 'b', 'c']) if (x !== y) sim.start(x, y);
    const all = () => up(sim, 'a', 'b') && up(sim, 'a', 'c') && up(sim, 'b', 'c');
    expect(sim.clock.runUntil(all, 10_000)).toBe(true);
    for (const x of ['a', 'b', 'c']) for (const y of ['a', 'b', 'c']) if (x !== y) expect(sim.session(x, y).conns).toHaveLength(1);
    sim.cut('a', 'b');
    sim.clock.advance(50);
    expect(sim.state('a', 'b')).not.toBe('Established');
    expect(up(sim, 'a', 'c') && up(sim, 'b', 'c')).toBe(true);
    expect(sim.clock.runUntil(all, 60_000, 100)).toBe(true);
  });
});

describe('simulation under random faults', () => {
  it('after any schedule of cuts, stalls, refusals and restarts, clearing the faults brings the session back with one connection per side', () => {
    const fault = fc.record({
      at: fc.integer({ min: 0, max: 300_000 }),
      what: fc.constantFrom('cut', 'stall', 'unstall', 'down', 'up', 'restartA', 'restartB', 'stopA', 'startA'),
    });
    fc.assert(
      fc.property(fc.array(fault, { maxLength: 12 }), fc.boolean(), (faults, gr) => {
        const g = gr ? { gracefulRestart: { restartTime: 60, stalePathTime: 120, forwardingPreserved: [{ afi: 1, safi: 1 }] } } : {};
        const sim = pair({ holdTime: 9, ...g });
        sim.start('a', 'b');
        sim.start('b', 'a');
        let now = 0;
        for (const f of [...faults].sort((x, y) => x.at - y.at)) {
          sim.clock.advance(f.at - now);
          now = f.at;
          if (f.what === 'cut') sim.cut('a', 'b');
          if (f.what === 'stall') sim.setFaults('a', 'b', { stall: true });
          if (f.what === 'unstall' || f.what === 'up') sim.setFaults('a', 'b', {});
          if (f.what === 'down') sim.setFaults('a', 'b', { down: true });
          if (f.what === 'restartA') {
            sim.restart('a', 'b', conf('a', 'b', { holdTime: 9, ...g }), { restarting: gr });
            sim.start('a', 'b');
          }
          if (f.what === 'restartB') {
            sim.restart('b', 'a', conf('b', 'a', { holdTime: 9, ...g }), { restarting: gr });
            sim.start('b', 'a');
          }
          if (f.what === 'stopA') sim.step('a', 'b', { type: 'stop' });
          if (f.what === 'startA') sim.start('a', 'b');
          for (const x of ['a', 'b']) {
            const s = sim.session(x, x === 'a' ? 'b' : 'a');
            expect(s.conns.filter((c) => c.fsm.state === 'OpenConfirm' || c.fsm.state === 'Established').length).toBeLessThanOrEqual(1);
          }
        }
        sim.setFaults('a', 'b', {});
        if (sim.session('a', 'b').conns[0].fsm.state === 'Idle' && !sim.session('a', 'b').conns[0].fsm.autoRestart) sim.start('a', 'b');
        // Worst case: both back off to idleHold.max and ConnectRetry (120 s) runs out once.
        expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 400_000, 500)).toBe(true);
        expect(sim.session('a', 'b').conns).toHaveLength(1);
        expect(sim.session('b', 'a').conns).toHaveLength(1);
        // Whatever graceful restart did meanwhile, no stale state outlives Restart + StalePath.
        sim.clock.advance(200_000);
        expect(sim.session('a', 'b').gr.phase).toBe('none');
      }),
      { numRuns: 60 },
    );
  });
});

describe('simulation link faults', () => {
  it('a short stall delays keepalives without loss; a stall past the hold time ends the session', () => {
    const sim = pair({ holdTime: 30 });
    sim.start('a', 'b');
    sim.start('b', 'a');
    expect(sim.clock.runUntil(() => up(sim, 'a', 'b'), 5000)).toBe(true);
    const received = () => sim.log.filter((l) => l.node === 'a' && l.action.type === 'startTimer' && l.action.timer === 'Hold').length;
    const before = received();
    sim.setFaults('a', 'b', { stall: true });
    sim.clock.advance(15_000);
    expect(received()).toBe(before); // nothing from b got through
    sim.setFaults('a', 'b', {});
    sim.clock.advance(10);
    expect(received()).toBeGreaterThan(before); // the held keepalive arrived
    expect(up(sim, 'a', 'b')).toBe(true);
    sim.setFaults('a', 'b', { drop: true });
    sim.clock.advance(31_000);
    expect(sim.actions('a', 'b', 'sessionDown')[0]).toMatchObject({ reason: { kind: 'holdTimerExpired' } });
  });
});
