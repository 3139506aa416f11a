/**
 * RFC 8326 graceful shutdown in the RIB: a draining peer's update group
 * re-sends every route once, marked; received routes carrying the community
 * lose to any other path.
 */
import { describe, expect, it } from 'vitest';
import { carriesGracefulShutdown, GRACEFUL_SHUTDOWN, withGracefulShutdown } from '../../src/rib/gshut.js';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A, CTX, decodeFake, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const SESSION: SessionInfo = { ctx: CTX, families: [4], routerId: '10.255.0.1' };

function build() {
  const packer = new FakePacker();
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer });
  const ibgp = rib.addPeer({ address: A('192.0.2.1'), asn: 65000, localAddressV4: A('192.0.2.100') });
  const ebgp = rib.addPeer({ address: A('192.0.2.2'), asn: 65010, localAddressV4: A('192.0.2.100') });
  rib.originate(P('198.51.100.0/24'), { origin: 0, asPath: [], communities: [65000 * 65536 + 7] }, 0);
  rib.originate(P('203.0.113.0/24'), { origin: 0, asPath: [] }, 0);
  rib.peerUp(ibgp, SESSION, 0);
  rib.peerUp(ebgp, SESSION, 0);
  rib.flushDue(10_000);
  packer.log.length = 0;
  return { rib, packer, ibgp, ebgp };
}

describe('withGracefulShutdown', () => {
  it('adds the community once, and LOCAL_PREF 0 toward iBGP only', () => {
    const a: PathAttributes = { origin: 0, asPath: [], localPref: 200, communities: [1] };
    const i = withGracefulShutdown(a, 'ibgp');
    expect(i.communities).toEqual([1, GRACEFUL_SHUTDOWN]);
    expect(i.localPref).toBe(0);
    const e = withGracefulShutdown({ origin: 0, asPath: [] }, 'ebgp');
    expect(e.communities).toEqual([GRACEFUL_SHUTDOWN]);
    expect(e.localPref).toBeUndefined();
    expect(withGracefulShutdown(i, 'ibgp')).toBe(i);
    expect(carriesGracefulShutdown(e)).toBe(true);
    expect(carriesGracefulShutdown(a)).toBe(false);
  });
});

describe('draining a peer (RIB)', () => {
  it('re-sends every route marked, without touching the other peer, and unmarks on undrain', () => {
    const { rib, packer, ibgp, ebgp } = build();
    rib.reconfigurePeer(ibgp, { gracefulShutdown: true }, 20_000);
    const sends = rib.flushDue(30_000);
    expect(sends.map((s) => s.peerId)).toEqual([ibgp]);
    expect(ebgp).not.toBe(ibgp);
    const announced = packer.log.filter((l) => l.kind === 'announce');
    expect(announced.flatMap((l) => l.prefixes).sort()).toEqual(['198.51.100.0/24', '203.0.113.0/24']);
    for (const l of announced) {
      expect(l.attrs!.communities).toContain(GRACEFUL_SHUTDOWN);
      expect(l.attrs!.localPref).toBe(0);
    }
    // The other communities stay.
    expect(announced.find((l) => l.prefixes.includes('198.51.100.0/24'))!.attrs!.communities).toEqual([65000 * 65536 + 7, GRACEFUL_SHUTDOWN]);
    expect(rib.flushDue(40_000)).toEqual([]);

    packer.log.length = 0;
    rib.reconfigurePeer(ibgp, { gracefulShutdown: false }, 50_000);
    rib.flushDue(60_000);
    const back = packer.log.filter((l) => l.kind === 'announce');
    expect(back.flatMap((l) => l.prefixes).sort()).toEqual(['198.51.100.0/24', '203.0.113.0/24']);
    for (const l of back) {
      expect(l.attrs!.communities ?? []).not.toContain(GRACEFUL_SHUTDOWN);
      expect(l.attrs!.localPref).toBe(100);
    }
  });

  it('marks eBGP routes with the community only, after the export policy', () => {
    const { rib, packer, ebgp } = build();
    // A policy that sets its own communities cannot undo the drain.
    rib.reconfigurePeer(ebgp, { gracefulShutdown: true, exportPolicy: (r) => ({ verdict: 'accept', attrs: { ...r.attrs, communities: [5] } }) }, 20_000);
    const sends = rib.flushDue(30_000);
    expect(sends.length).toBeGreaterThan(0);
    const announced = packer.log.filter((l) => l.kind === 'announce');
    expect(announced.length).toBeGreaterThan(0);
    for (const l of announced) {
      expect(l.attrs!.communities).toEqual([5, GRACEFUL_SHUTDOWN]);
      expect(l.attrs!.localPref).toBeUndefined();
      expect(decodeFake(sends[0].messages[0])).toMatch(/^A /);
    }
  });

  it('new routes originated while draining go out marked', () => {
    const { rib, packer, ibgp } = build();
    rib.reconfigurePeer(ibgp, { gracefulShutdown: true }, 20_000);
    rib.flushDue(30_000);
    packer.log.length = 0;
    rib.originate(P('192.0.2.128/25'), { origin: 0, asPath: [] }, 31_000);
    rib.flushDue(40_000);
    // Two groups send it: the draining iBGP peer's marked, the eBGP peer's not.
    const sent = packer.log.filter((x) => x.prefixes.includes('192.0.2.128/25')).map((x) => [x.attrs?.localPref, x.attrs?.communities]);
    expect(sent).toHaveLength(2);
    expect(sent).toContainEqual([0, [GRACEFUL_SHUTDOWN]]);
    expect(sent).toContainEqual([undefined, undefined]);
  });
});

describe('receiving GRACEFUL_SHUTDOWN (RFC 8326 §4)', () => {
  const marked = ebgpAttrs([65010], '192.0.2.2', { communities: [GRACEFUL_SHUTDOWN] });
  const plain = ebgpAttrs([65020, 65021], '192.0.2.3');

  function twoPaths(honour?: boolean) {
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
    const a = rib.addPeer({ address: A('192.0.2.2'), asn: 65010, ...(honour !== undefined ? { honourGracefulShutdown: honour } : {}) });
    const b = rib.addPeer({ address: A('192.0.2.3'), asn: 65020 });
    rib.peerUp(a, SESSION, 0);
    rib.peerUp(b, SESSION, 0);
    // The marked path has the shorter AS path: without the rule it would win.
    rib.ingest(a, update(marked, ['198.51.100.0/24']), 1);
    rib.ingest(b, update(plain, ['198.51.100.0/24']), 2);
    return { rib, a, b };
  }

  it('gives the marked path LOCAL_PREF 0, so the other path wins', () => {
    const { rib } = twoPaths();
    const best = rib.best(P('198.51.100.0/24'))!;
    expect(best.source.kind === 'peer' && best.source.address.toString()).toBe('192.0.2.3');
  });

  it('can be turned off per peer, and turning it off re-runs import', () => {
    const { rib, a } = twoPaths(false);
    const best = rib.best(P('198.51.100.0/24'))!;
    expect(best.source.kind === 'peer' && best.source.address.toString()).toBe('192.0.2.2');
    rib.reconfigurePeer(a, { honourGracefulShutdown: true }, 5);
    const after = rib.best(P('198.51.100.0/24'))!;
    expect(after.source.kind === 'peer' && after.source.address.toString()).toBe('192.0.2.3');
    expect(after.attrs.attrs.localPref).toBeUndefined();
  });
});
