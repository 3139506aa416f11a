/**
 * RFC 9494 long-lived graceful restart in the RIB: a peer's stale routes
 * become long-lived stale (LLGR_STALE added, NO_LLGR ones dropped), lose to
 * any route without the community, and are sent only to peers that
 * advertised long-lived graceful restart.
 */
import { describe, expect, it } from 'vitest';
import { carriesLlgrStale, carriesNoLlgr, LLGR_STALE, NO_LLGR, withLlgrStale } from '../../src/rib/llgr.js';
import { selectBest, explainSelection } from '../../src/rib/best-path.js';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A, CTX, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const SESSION: SessionInfo = { ctx: CTX, families: [4], routerId: '10.255.0.1' };
const LL_SESSION: SessionInfo = { ...SESSION, longLived: true };

const srcOf = (rib: Rib, p: string) => {
  const best = rib.best(P(p));
  return best?.source.kind === 'peer' ? best.source.address.toString() : best?.source.kind;
};

/**
 * Peer a (short AS path, so preferred) and peer b both send 198.51.100.0/24;
 * a alone sends 203.0.113.0/24 and 192.0.2.0/25 (the latter with NO_LLGR).
 * c (no LLGR) and d (LLGR) only receive.
 */
function build() {
  const packer = new FakePacker();
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer });
  const a = rib.addPeer({ address: A('192.0.2.2'), asn: 65010 });
  const b = rib.addPeer({ address: A('192.0.2.3'), asn: 65020 });
  const c = rib.addPeer({ address: A('192.0.2.4'), asn: 65030, localAddressV4: A('192.0.2.100') });
  const d = rib.addPeer({ address: A('192.0.2.5'), asn: 65040, localAddressV4: A('192.0.2.100') });
  for (const p of [a, b]) rib.peerUp(p, LL_SESSION, 0);
  rib.peerUp(c, SESSION, 0);
  rib.peerUp(d, { ...LL_SESSION, routerId: '10.255.0.5' }, 0);
  rib.ingest(a, update(ebgpAttrs([65010], '192.0.2.2', { communities: [65010 * 65536 + 1] }), ['198.51.100.0/24', '203.0.113.0/24']), 1);
  rib.ingest(a, update(ebgpAttrs([65010], '192.0.2.2', { communities: [NO_LLGR] }), ['192.0.2.0/25']), 1);
  rib.ingest(b, update(ebgpAttrs([65020, 65021, 65022], '192.0.2.3'), ['198.51.100.0/24']), 2);
  rib.flushDue(10_000);
  packer.log.length = 0;
  return { rib, packer, a, b, c, d };
}

describe('LLGR_STALE helpers', () => {
  it('adds the community once and reads both communities', () => {
    const a: PathAttributes = { origin: 0, asPath: [], communities: [7] };
    const s = withLlgrStale(a);
    expect(s.communities).toEqual([7, LLGR_STALE]);
    expect(withLlgrStale(s)).toBe(s);
    expect(carriesLlgrStale(s)).toBe(true);
    expect(carriesLlgrStale(a)).toBe(false);
    expect(carriesNoLlgr({ origin: 0, asPath: [], communities: [NO_LLGR] })).toBe(true);
    expect(carriesNoLlgr(a)).toBe(false);
    expect(LLGR_STALE).toBe(0xffff0006);
    expect(NO_LLGR).toBe(0xffff0007);
  });
});

describe('best path with LLGR_STALE (RFC 9494 §4.3)', () => {
  it('a route carrying LLGR_STALE loses to any route without it, whatever LOCAL_PREF says', () => {
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
    const a = rib.addPeer({ address: A('192.0.2.2'), asn: 65000 });
    const b = rib.addPeer({ address: A('192.0.2.3'), asn: 65000 });
    rib.peerUp(a, SESSION, 0);
    rib.peerUp(b, SESSION, 0);
    rib.ingest(a, update({ ...ebgpAttrs([], '192.0.2.2'), localPref: 500, communities: [LLGR_STALE] }, ['198.51.100.0/24']), 1);
    rib.ingest(b, update({ ...ebgpAttrs([65020, 65021], '192.0.2.3'), localPref: 50 }, ['198.51.100.0/24']), 2);
    expect(srcOf(rib, '198.51.100.0/24')).toBe('192.0.2.3');
    const why = explainSelection(rib.candidates(P('198.51.100.0/24')));
    expect(why.find((o) => o.outcome === 'lost')!.step).toBe('not long-lived stale (LLGR_STALE)');
    // Alone, a long-lived stale route is still the best path.
    rib.ingest(b, update(ebgpAttrs([], '192.0.2.3'), [], ['198.51.100.0/24']), 3);
    expect(srcOf(rib, '198.51.100.0/24')).toBe('192.0.2.2');
    expect(selectBest(rib.candidates(P('198.51.100.0/24')))!.best.attrs.attrs.communities).toEqual([LLGR_STALE]);
  });
});

describe('long-lived stale routes (RIB)', () => {
  it('marks the peer stale routes with LLGR_STALE, drops NO_LLGR, and prefers the other path', () => {
    const { rib, a } = build();
    expect(srcOf(rib, '198.51.100.0/24')).toBe('192.0.2.2');
    rib.peerDown(a, 20_000, { gracefulFamilies: [4] });
    // Plain GR stale: still preferred (RFC 4724 does not demote it).
    expect(srcOf(rib, '198.51.100.0/24')).toBe('192.0.2.2');
    expect(rib.longLivedStale(a, 4, 30_000)).toEqual({ kept: 2, dropped: 1 });
    expect(srcOf(rib, '198.51.100.0/24')).toBe('192.0.2.3');
    expect(rib.best(P('192.0.2.0/25'))).toBeUndefined();
    const held = rib.adjRibIn(a, 'post');
    expect(held.map((r) => [r.prefix.toString(), r.stale, r.attrs.communities])).toEqual([
      ['198.51.100.0/24', true, [65010 * 65536 + 1, LLGR_STALE]],
      ['203.0.113.0/24', true, [65010 * 65536 + 1, LLGR_STALE]],
    ]);
    // Purged at the end of the long-lived stale time.
    expect(rib.purgeStale(a, 4, 40_000)).toBe(2);
    expect(rib.best(P('203.0.113.0/24'))).toBeUndefined();
  });

  it('sends LLGR-stale routes with LLGR_STALE to LLGR peers and withdraws them from the others (§4.5)', () => {
    const { rib, packer, a, b, c, d } = build();
    rib.peerDown(a, 20_000, { gracefulFamilies: [4] });
    rib.flushDue(25_000);
    expect(packer.log).toEqual([]);
    rib.longLivedStale(a, 4, 30_000);
    const sends = rib.flushDue(40_000);
    // b, c and d all change (b is an LLGR peer too, and loses a's path for the prefix it sent itself).
    expect(sends.map((s) => s.peerId).sort()).toEqual([b, c, d].sort());
    const toC = rib.adjRibOut(c)!;
    const toD = rib.adjRibOut(d)!;
    const keysOf = (m: ReadonlyMap<unknown, unknown>) => m.size;
    // c keeps b's path for 198.51.100.0/24 only; 203.0.113.0/24 (only LLGR-stale) and the NO_LLGR route are withdrawn.
    expect(keysOf(toC)).toBe(1);
    const cAttrs = [...toC.values()].map((s) => s.attrs);
    expect(cAttrs.every((x) => !carriesLlgrStale(x))).toBe(true);
    // d gets 203.0.113.0/24 with LLGR_STALE, and b's path for the other.
    expect(keysOf(toD)).toBe(2);
    const dStale = [...toD.values()].filter((s) => carriesLlgrStale(s.attrs));
    expect(dStale).toHaveLength(1);
    expect(rib.exportPreview(d, P('203.0.113.0/24')).refusal).toBeUndefined();
    const llAnnounced = packer.log.filter((l) => l.kind === 'announce' && l.attrs !== undefined && carriesLlgrStale(l.attrs));
    // To b and to d (two update groups), never to c.
    expect(llAnnounced.flatMap((l) => l.prefixes)).toEqual(['203.0.113.0/24', '203.0.113.0/24']);
    expect(rib.exportPreview(c, P('203.0.113.0/24')).refusal).toMatch(/LLGR_STALE/);
  });

  it('a fresh announcement from the returning peer replaces the long-lived stale route', () => {
    const { rib, a } = build();
    rib.peerDown(a, 20_000, { gracefulFamilies: [4] });
    rib.longLivedStale(a, 4, 30_000);
    rib.peerUp(a, LL_SESSION, 50_000);
    rib.ingest(a, update(ebgpAttrs([65010], '192.0.2.2', { communities: [65010 * 65536 + 1] }), ['198.51.100.0/24']), 51_000);
    expect(srcOf(rib, '198.51.100.0/24')).toBe('192.0.2.2');
    expect(rib.best(P('198.51.100.0/24'))!.attrs.attrs.communities).toEqual([65010 * 65536 + 1]);
    // End-of-RIB: what was not re-sent goes.
    expect(rib.purgeStale(a, 4, 52_000)).toBe(1);
    expect(rib.best(P('203.0.113.0/24'))).toBeUndefined();
  });

  it('a re-run of import policy sees the long-lived stale routes with LLGR_STALE, and keeps it', () => {
    const { rib, a } = build();
    rib.peerDown(a, 20_000, { gracefulFamilies: [4] });
    rib.longLivedStale(a, 4, 30_000);
    const seen: number[][] = [];
    rib.setImportPolicy(
      a,
      (r) => {
        seen.push([...(r.attrs.communities ?? [])]);
        return { verdict: 'accept', attrs: r.attrs };
      },
      31_000,
    );
    expect(seen.length).toBe(2);
    for (const c of seen) expect(c).toContain(LLGR_STALE);
    expect(rib.best(P('203.0.113.0/24'))!.attrs.attrs.communities).toContain(LLGR_STALE);
  });
});
