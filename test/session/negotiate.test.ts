import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { negotiate, negotiateTimers } from '../../src/session/negotiate.js';
import { buildOpen, NO_OMISSIONS } from '../../src/session/open.js';
import type { AddPathMode, Capability } from '../../src/wire/types.js';
import { cfg, peerOpen } from './fixtures.js';

const v4 = { afi: 1, safi: 1 };
const v6 = { afi: 2, safi: 1 };

describe('negotiate', () => {
  it('intersects multiprotocol families; a peer without MP caps is IPv4 unicast only', () => {
    const ours = buildOpen(cfg({ families: [v4, v6] }), NO_OMISSIONS, false);
    expect(negotiate(ours, peerOpen({ caps: [{ kind: 'multiprotocol', ...v6 }] })).families).toEqual([v6]);
    expect(negotiate(ours, peerOpen({ caps: [] })).families).toEqual([v4]);
    const v6only = buildOpen(cfg({ families: [v6] }), NO_OMISSIONS, false);
    expect(negotiate(v6only, peerOpen({ caps: [] })).families).toEqual([]);
  });

  it('needs both sides for 4-octet AS, route refresh, enhanced refresh and extended messages', () => {
    const ours = buildOpen(cfg({ enhancedRouteRefresh: true, extendedMessage: true }), NO_OMISSIONS, false);
    const all = negotiate(
      ours,
      peerOpen({ caps: [{ kind: 'fourOctetAs', asn: 65002 }, { kind: 'routeRefresh' }, { kind: 'enhancedRouteRefresh' }, { kind: 'extendedMessage' }] }),
    );
    expect([all.asn4, all.routeRefresh, all.enhancedRouteRefresh, all.extendedMessage]).toEqual([true, true, true, true]);
    expect(all.decode.extendedMessage && all.encode.extendedMessage && all.decode.asn4).toBe(true);
    const none = negotiate(ours, peerOpen({ caps: [] }));
    expect([none.asn4, none.routeRefresh, none.enhancedRouteRefresh, none.extendedMessage]).toEqual([false, false, false, false]);
    const onlyPeer = negotiate(
      buildOpen(cfg({ routeRefresh: false }), NO_OMISSIONS, false),
      peerOpen({ caps: [{ kind: 'routeRefresh' }, { kind: 'extendedMessage' }] }),
    );
    expect([onlyPeer.routeRefresh, onlyPeer.extendedMessage]).toEqual([false, false]);
  });

  it('ADD-PATH: receive needs our receive and their send, per family, and sets the codec contexts', () => {
    const modes: AddPathMode[] = ['receive', 'send', 'both'];
    fc.assert(
      fc.property(fc.constantFrom(...modes), fc.constantFrom(...modes), fc.constantFrom(...modes), (ourV4, theirV4, theirV6) => {
        const ours = buildOpen(cfg({ families: [v4, v6], addPath: [{ ...v4, mode: ourV4 }] }), NO_OMISSIONS, false);
        const caps: Capability[] = [
          { kind: 'multiprotocol', ...v4 },
          { kind: 'multiprotocol', ...v6 },
          {
            kind: 'addPath',
            families: [
              { ...v4, mode: theirV4 },
              { ...v6, mode: theirV6 },
            ],
          },
        ];
        const n = negotiate(ours, peerOpen({ caps }));
        const recv = ourV4 !== 'send' && theirV4 !== 'receive';
        const send = ourV4 !== 'receive' && theirV4 !== 'send';
        expect(n.addPathReceive).toEqual(recv ? [v4] : []);
        expect(n.addPathSend).toEqual(send ? [v4] : []);
        expect(n.decode.addPathV4).toBe(recv);
        expect(n.encode.addPathV4).toBe(send);
        // We did not offer ADD-PATH for IPv6.
        expect(n.decode.addPathV6 || n.encode.addPathV6).toBe(false);
      }),
    );
  });

  it('graceful restart: the peer view, limited to negotiated families, only if we advertised GR too', () => {
    const gr: Capability = {
      kind: 'gracefulRestart',
      restarting: true,
      notification: false,
      restartTime: 90,
      families: [
        { ...v4, forwardingPreserved: true },
        { ...v6, forwardingPreserved: true },
      ],
    };
    const withGr = buildOpen(cfg({ gracefulRestart: { restartTime: 120, stalePathTime: 360, forwardingPreserved: [] } }), NO_OMISSIONS, false);
    const n = negotiate(withGr, peerOpen({ caps: [{ kind: 'multiprotocol', ...v4 }, gr] }));
    expect(n.gracefulRestart).toEqual({ restartTime: 90, restarting: true, notification: false, families: [{ ...v4, forwardingPreserved: true }] });
    expect(negotiate(buildOpen(cfg(), NO_OMISSIONS, false), peerOpen({ caps: [gr] })).gracefulRestart).toBeUndefined();
  });

  it('hold time is the smaller one; keepalive a third unless configured; 0 disables both', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constant(0), fc.integer({ min: 3, max: 65535 })), fc.oneof(fc.constant(0), fc.integer({ min: 3, max: 65535 })), (a, b) => {
        const t = negotiateTimers(a, b);
        expect(t.holdTime).toBe(Math.min(a, b));
        if (t.holdTime === 0) expect(t.keepaliveTime).toBe(0);
        else expect(t.keepaliveTime).toBe(Math.floor(t.holdTime / 3));
      }),
    );
    expect(negotiateTimers(90, 30, 5)).toEqual({ holdTime: 30, keepaliveTime: 5 });
    expect(negotiateTimers(90, 30, 60)).toEqual({ holdTime: 30, keepaliveTime: 10 });
    expect(negotiate(buildOpen(cfg({ holdTime: 30 }), NO_OMISSIONS, false), peerOpen({ holdTime: 90 })).holdTime).toBe(30);
  });
});
