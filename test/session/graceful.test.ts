import { describe, expect, it } from 'vitest';
import { endOfRib, isEndOfRib } from '../../src/wire/update.js';
import { GR_NONE, grEndOfRib, grSessionDown, grSessionUp, grTimerExpired, retainsRoutes } from '../../src/session/graceful.js';
import { negotiate } from '../../src/session/negotiate.js';
import { buildOpen, NO_OMISSIONS } from '../../src/session/open.js';
import { Prefix } from '../../src/net/prefix.js';
import type { Capability } from '../../src/wire/types.js';
import { cfg, peerOpen } from './fixtures.js';

const v4 = { afi: 1, safi: 1 };
const v6 = { afi: 2, safi: 1 };
const ours = buildOpen(cfg({ families: [v4, v6], gracefulRestart: { restartTime: 120, stalePathTime: 300, forwardingPreserved: [] } }), NO_OMISSIONS, false);
const grPeer = (f4: boolean, f6: boolean, restartTime = 90) => {
  const caps: Capability[] = [
    { kind: 'multiprotocol', ...v4 },
    { kind: 'multiprotocol', ...v6 },
    {
      kind: 'gracefulRestart',
      restarting: false,
      notification: false,
      restartTime,
      families: [
        { ...v4, forwardingPreserved: f4 },
        { ...v6, forwardingPreserved: f6 },
      ],
    },
  ];
  return negotiate(ours, peerOpen({ caps }));
};

describe('graceful restart, receiving speaker', () => {
  it('session loss with GR: mark stale and start the Restart timer with the peer restart time', () => {
    const s = grSessionDown(GR_NONE, grPeer(true, true), { kind: 'tcpFailed' });
    expect(s.actions).toEqual([
      { type: 'markStale', families: [v4, v6] },
      { type: 'startPeerTimer', timer: 'Restart', seconds: 90 },
    ]);
    expect(s.gr.phase).toBe('waitingRestart');
  });

  it('flushes instead when GR is absent, restart time is 0, or the loss was a NOTIFICATION', () => {
    expect(grSessionDown(GR_NONE, negotiate(ours, peerOpen()), { kind: 'tcpFailed' }).actions).toEqual([{ type: 'flushRoutes' }]);
    expect(grSessionDown(GR_NONE, grPeer(true, true, 0), { kind: 'holdTimerExpired' }).actions).toEqual([{ type: 'flushRoutes' }]);
    expect(retainsRoutes(grPeer(true, true), { kind: 'notificationReceived', code: 6, subcode: 2 })).toBe(false);
    expect(retainsRoutes(grPeer(true, true), { kind: 'manualStop' })).toBe(false);
  });

  it('Restart timer expiry purges the stale routes', () => {
    const down = grSessionDown(GR_NONE, grPeer(true, true), { kind: 'tcpFailed' });
    expect(grTimerExpired(down.gr, 'Restart')).toEqual({ gr: GR_NONE, actions: [{ type: 'purgeStale', families: [v4, v6] }] });
    expect(grTimerExpired(down.gr, 'StalePath').actions).toEqual([]);
  });

  it('on return: purge families without F bit, wait for End-of-RIB of the rest under StalePath', () => {
    const down = grSessionDown(GR_NONE, grPeer(true, true), { kind: 'tcpFailed' });
    const up = grSessionUp(down.gr, grPeer(true, false), 300);
    expect(up.actions).toEqual([
      { type: 'stopPeerTimer', timer: 'Restart' },
      { type: 'purgeStale', families: [v6] },
      { type: 'startPeerTimer', timer: 'StalePath', seconds: 300 },
    ]);
    expect(up.gr).toEqual({ phase: 'waitingEor', stale: [v4] });
    expect(grEndOfRib(up.gr, v6).actions).toEqual([]);
    expect(grEndOfRib(up.gr, v4)).toEqual({
      gr: GR_NONE,
      actions: [
        { type: 'purgeStale', families: [v4] },
        { type: 'stopPeerTimer', timer: 'StalePath' },
      ],
    });
    expect(grTimerExpired(up.gr, 'StalePath').actions).toEqual([{ type: 'purgeStale', families: [v4] }]);
  });

  it('a peer coming back without GR loses all stale routes at once', () => {
    const down = grSessionDown(GR_NONE, grPeer(true, true), { kind: 'tcpFailed' });
    const up = grSessionUp(down.gr, negotiate(ours, peerOpen()), 300);
    expect(up.gr).toEqual(GR_NONE);
    expect(up.actions).toContainEqual({ type: 'purgeStale', families: [v4, v6] });
  });

  it('a second loss before End-of-RIB purges the old stale routes first', () => {
    const down = grSessionDown(GR_NONE, grPeer(true, true), { kind: 'tcpFailed' });
    const up = grSessionUp(down.gr, grPeer(true, true), 300);
    const again = grSessionDown(up.gr, grPeer(true, true), { kind: 'holdTimerExpired' });
    expect(again.actions.slice(0, 3)).toEqual([
      { type: 'purgeStale', families: [v4, v6] },
      { type: 'stopPeerTimer', timer: 'StalePath' },
      { type: 'markStale', families: [v4, v6] },
    ]);
  });

  it('End-of-RIB markers (the codec’s endOfRib / isEndOfRib, which the session uses) round-trip', () => {
    expect(isEndOfRib(endOfRib(v4.afi, v4.safi))).toEqual(v4);
    expect(isEndOfRib(endOfRib(v6.afi, v6.safi))).toEqual(v6);
    expect(isEndOfRib({ type: 'update', withdrawn: [Prefix.v4(0x0a000000, 8)], attributes: {}, nlri: [] })).toBeNull();
    expect(isEndOfRib({ type: 'update', withdrawn: [], attributes: { origin: 0 }, nlri: [] })).toBeNull();
  });
});
