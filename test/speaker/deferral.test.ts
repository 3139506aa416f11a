import { describe, expect, it } from 'vitest';
import type { Negotiated } from '../../src/session/negotiate.js';
import { SelectionDeferral } from '../../src/speaker/deferral.js';

const V4 = { afi: 1, safi: 1 };
const V6 = { afi: 2, safi: 1 };

/** The parts of a negotiated session the deferral reads. */
const session = (gr: 'none' | 'helper' | 'restarting', families = [V4, V6]) =>
  ({
    families,
    gracefulRestart:
      gr === 'none'
        ? undefined
        : { restartTime: 120, restarting: gr === 'restarting', notification: false, families: families.map((f) => ({ ...f, forwardingPreserved: true })) },
  }) as unknown as Negotiated;

describe('SelectionDeferral', () => {
  it('waits for End-of-RIB of every family from every graceful-restart peer, and for peers not yet up', () => {
    const d = new SelectionDeferral();
    for (const p of ['a', 'b', 'c', 'd']) d.addPeer(p);
    expect(d.waitingFor()).toEqual(['a', 'b', 'c', 'd']);
    d.up('a', session('helper'));
    d.up('b', session('none')); // no graceful restart: not waited for
    d.up('c', session('restarting')); // restarting itself (R bit): not waited for
    expect(d.waitingFor()).toEqual(['a', 'd']);
    d.endOfRib('a', V4);
    expect(d.waitingFor()).toEqual(['a', 'd']);
    d.endOfRib('a', V6);
    expect(d.waitingFor()).toEqual(['d']);
    d.removePeer('d');
    expect(d.waitingFor()).toEqual([]);
  });

  it('a session lost before its End-of-RIB is waited for again; one that finished stays done', () => {
    const d = new SelectionDeferral();
    d.addPeer('a');
    d.addPeer('b');
    d.up('a', session('helper', [V4]));
    d.up('b', session('helper', [V4]));
    d.endOfRib('b', V4);
    d.down('a');
    d.down('b');
    expect(d.waitingFor()).toEqual(['a']);
    d.endOfRib('a', V4); // from a session that is gone: ignored
    expect(d.waitingFor()).toEqual(['a']);
    d.up('a', session('helper', [V4]));
    d.endOfRib('a', V4);
    expect(d.waitingFor()).toEqual([]);
  });
});
