import { describe, expect, it } from 'vitest';
import { AttrStore } from '../../src/rib/attr-store.js';
import { exportAttrs, exportRefusal, type ExportSettings } from '../../src/rib/export.js';
import { LOCAL_SOURCE, type Path, type PeerSource } from '../../src/rib/path.js';
import { WellKnownCommunity } from '../../src/wire/constants.js';
import { parseExtendedCommunity } from '../../src/wire/communities.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A } from './helpers.js';

const store = new AttrStore();
const src = (addr: string, type: 'ebgp' | 'ibgp', asn: number, rrClient = false): PeerSource => ({
  kind: 'peer',
  id: addr,
  address: A(addr),
  asn,
  type,
  routerId: '7.7.7.7',
  routerIdNum: A('7.7.7.7').w0,
  rrClient,
});
const eSrc = src('10.0.0.1', 'ebgp', 65001);
const iClient = src('10.0.1.1', 'ibgp', 65000, true);
const iNon = src('10.0.1.2', 'ibgp', 65000, false);
const path = (s: Path['source'], a: PathAttributes): Path => ({ source: s, attrs: store.acquire(a), pathId: 0 });

const toE: ExportSettings = {
  type: 'ebgp',
  peerAsn: 65009,
  localAsn: 65000,
  routerId: '192.0.2.100',
  rrClient: false,
  nextHopSelf: false,
  keepNextHop: false,
  sendMed: false,
  defaultLocalPref: 100,
  localAddressV4: A('192.0.2.100'),
  localAddressV6: A('2001:db8::100'),
  members: ['10.0.0.9'],
};
const toI: ExportSettings = { ...toE, type: 'ibgp', peerAsn: 65000, members: ['10.0.1.9'] };
const rr = (client: boolean): ExportSettings => ({ ...toI, clusterId: A('192.0.2.200'), rrClient: client });

const learned: PathAttributes = { origin: 0, asPath: [{ type: 2, asns: [65001] }], nextHop: A('10.0.0.1'), med: 5, localPref: 120 };

describe('export rules', () => {
  it('non-transitive extended communities: learned ones stay in the AS, our own reach the direct eBGP neighbour', () => {
    const lb = parseExtendedCommunity('lb:64512:375000');
    const rt = parseExtendedCommunity('rt:65000:100');
    const withExt: PathAttributes = { ...learned, extendedCommunities: [rt, lb] };
    expect(exportAttrs(path(eSrc, withExt), 4, toE)!.extendedCommunities).toEqual([rt]);
    expect(exportAttrs(path(eSrc, { ...learned, extendedCommunities: [lb] }), 4, toE)!.extendedCommunities).toBeUndefined();
    // iBGP keeps them (reflected or not), and our own originations keep theirs toward eBGP.
    expect(exportAttrs(path(iClient, withExt), 4, rr(false))!.extendedCommunities).toEqual([rt, lb]);
    expect(exportAttrs(path(LOCAL_SOURCE, { origin: 0, extendedCommunities: [lb] }), 4, toE)!.extendedCommunities).toEqual([lb]);
  });

  it('toward eBGP: prepend our AS, next-hop self, strip LOCAL_PREF and foreign MED', () => {
    const out = exportAttrs(path(eSrc, learned), 4, toE)!;
    expect(out.asPath).toEqual([{ type: 2, asns: [65000, 65001] }]);
    expect(out.nextHop!.toString()).toBe('192.0.2.100');
    expect(out.localPref).toBeUndefined();
    expect(out.med).toBeUndefined();
    expect(exportAttrs(path(eSrc, learned), 4, { ...toE, sendMed: true })!.med).toBe(5);
    expect(exportAttrs(path(eSrc, learned), 4, { ...toE, keepNextHop: true })!.nextHop!.toString()).toBe('10.0.0.1');
    expect(exportAttrs(path(eSrc, learned), 4, { ...toE, localAsn: 64999 })!.asPath![0].asns).toEqual([64999, 65001]);
    // Our own MED on a local route is ours to send.
    expect(exportAttrs(path(LOCAL_SOURCE, { origin: 0, med: 3 }), 4, toE)!.med).toBe(3);
  });

  it('toward eBGP: drops RR attributes and confederation segments, starts a new segment after an AS_SET', () => {
    const out = exportAttrs(
      path(iClient, {
        origin: 0,
        asPath: [
          { type: 3, asns: [1] },
          { type: 1, asns: [65001, 65002] },
        ],
        originatorId: A('1.1.1.1'),
        clusterList: [A('2.2.2.2')],
      }),
      4,
      toE,
    )!;
    expect(out.asPath).toEqual([
      { type: 2, asns: [65000] },
      { type: 1, asns: [65001, 65002] },
    ]);
    expect(out.originatorId).toBeUndefined();
    expect(out.clusterList).toBeUndefined();
  });

  it('toward eBGP over IPv6: next-hop self goes in MP_REACH next hops (global then link-local)', () => {
    const out = exportAttrs(path(LOCAL_SOURCE, { origin: 0 }), 6, { ...toE, linkLocalV6: A('fe80::1') })!;
    expect(out.mpReach!.nextHops.map(String)).toEqual(['2001:db8::100', 'fe80::1']);
    expect(out.nextHop).toBeUndefined();
  });

  it('does not send a route back to the peer it came from, nor to an AS already on the path', () => {
    expect(exportAttrs(path(eSrc, learned), 4, { ...toE, members: ['10.0.0.1'], peerAsn: 65555 })).toBeNull();
    expect(exportAttrs(path(eSrc, learned), 4, { ...toE, peerAsn: 65001 })).toBeNull();
  });

  it('toward iBGP: sets LOCAL_PREF when absent, keeps an eBGP next hop unless next-hop-self', () => {
    const noLp = { ...learned, localPref: undefined };
    const out = exportAttrs(path(eSrc, noLp), 4, toI)!;
    expect(out.localPref).toBe(100);
    expect(out.nextHop!.toString()).toBe('10.0.0.1');
    expect(out.asPath).toEqual(learned.asPath);
    expect(out.med).toBe(5);
    expect(exportAttrs(path(eSrc, learned), 4, toI)!.localPref).toBe(120);
    expect(exportAttrs(path(eSrc, noLp), 4, { ...toI, defaultLocalPref: 50 })!.localPref).toBe(50);
    expect(exportAttrs(path(eSrc, learned), 4, { ...toI, nextHopSelf: true })!.nextHop!.toString()).toBe('192.0.2.100');
    // A local route without a next hop gets ours.
    expect(exportAttrs(path(LOCAL_SOURCE, { origin: 0 }), 4, toI)!.nextHop!.toString()).toBe('192.0.2.100');
  });

  it('never passes iBGP-learned routes to iBGP peers without route reflection', () => {
    expect(exportAttrs(path(iNon, learned), 4, toI)).toBeNull();
    expect(exportAttrs(path(iClient, learned), 4, toI)).toBeNull();
    expect(exportAttrs(path(iNon, learned), 4, toE)).not.toBeNull();
  });

  it('route reflector: client routes to everyone, non-client routes to clients only (RFC 4456)', () => {
    const fromClient = exportAttrs(path(iClient, learned), 4, rr(false))!;
    expect(fromClient.originatorId!.toString()).toBe('7.7.7.7');
    expect(fromClient.clusterList!.map(String)).toEqual(['192.0.2.200']);
    expect(exportAttrs(path(iClient, learned), 4, rr(true))).not.toBeNull();
    expect(exportAttrs(path(iNon, learned), 4, rr(true))).not.toBeNull();
    expect(exportAttrs(path(iNon, learned), 4, rr(false))).toBeNull();
    const kept = exportAttrs(path(iNon, { ...learned, originatorId: A('5.5.5.5'), clusterList: [A('9.9.9.9')] }), 4, rr(true))!;
    expect(kept.originatorId!.toString()).toBe('5.5.5.5');
    expect(kept.clusterList!.map(String)).toEqual(['192.0.2.200', '9.9.9.9']);
    // eBGP-learned routes are not reflected, just advertised: no RR attributes.
    expect(exportAttrs(path(eSrc, learned), 4, rr(false))!.originatorId).toBeUndefined();
  });

  it('honours NO_ADVERTISE, NO_EXPORT and NO_EXPORT_SUBCONFED', () => {
    const w = (c: number) => path(eSrc, { ...learned, communities: [100, c] });
    expect(exportAttrs(w(WellKnownCommunity.NO_ADVERTISE), 4, toI)).toBeNull();
    expect(exportAttrs(w(WellKnownCommunity.NO_ADVERTISE), 4, toE)).toBeNull();
    expect(exportAttrs(w(WellKnownCommunity.NO_EXPORT), 4, toE)).toBeNull();
    expect(exportAttrs(w(WellKnownCommunity.NO_EXPORT), 4, toI)!.communities).toEqual([100, WellKnownCommunity.NO_EXPORT]);
    expect(exportAttrs(w(WellKnownCommunity.NO_EXPORT_SUBCONFED), 4, toE)).toBeNull();
    expect(exportAttrs(w(WellKnownCommunity.NO_EXPORT_SUBCONFED), 4, toI)).not.toBeNull();
  });

  it('sends a route we originate with its well-known communities: they tell the receiver, not us (as calico-node does)', () => {
    for (const c of [WellKnownCommunity.NO_EXPORT, WellKnownCommunity.NO_EXPORT_SUBCONFED, WellKnownCommunity.NO_ADVERTISE]) {
      expect(exportAttrs(path(LOCAL_SOURCE, { origin: 0, communities: [100, c] }), 4, toE)!.communities).toEqual([100, c]);
      expect(exportAttrs(path(LOCAL_SOURCE, { origin: 0, communities: [100, c] }), 4, toI)!.communities).toEqual([100, c]);
    }
  });

  it('keeps the next hop of reflected routes even with next-hop-self', () => {
    const out = exportAttrs(path(iClient, learned), 4, { ...rr(false), nextHopSelf: true })!;
    expect(out.nextHop!.toString()).toBe('10.0.0.1');
  });

  it('passes unknown transitive attributes on marked Partial and drops non-transitive ones', () => {
    const withUnknown = {
      ...learned,
      unknown: [
        { flags: 0xc0, code: 99, value: Uint8Array.of(1) },
        { flags: 0x80, code: 98, value: Uint8Array.of(2) },
      ],
    };
    const out = exportAttrs(path(eSrc, withUnknown), 4, toE)!;
    expect(out.unknown!.map((u) => [u.code, u.flags])).toEqual([[99, 0xe0]]);
    expect(exportAttrs(path(eSrc, { ...learned, unknown: [{ flags: 0x80, code: 98, value: Uint8Array.of(2) }] }), 4, toI)!.unknown).toBeUndefined();
    // Our own originations carry what we configured.
    expect(exportAttrs(path(LOCAL_SOURCE, { origin: 0, unknown: [{ flags: 0x80, code: 98, value: Uint8Array.of(2) }] }), 4, toE)!.unknown).toHaveLength(1);
  });

  it('names the rule behind every refusal (for explain)', () => {
    const w = (c: number) => path(eSrc, { ...learned, communities: [c] });
    const cases: [Path, ExportSettings, string][] = [
      [w(WellKnownCommunity.NO_ADVERTISE), toI, 'NO_ADVERTISE'],
      [w(WellKnownCommunity.NO_EXPORT), toE, 'NO_EXPORT'],
      [w(WellKnownCommunity.NO_EXPORT_SUBCONFED), toE, 'NO_EXPORT_SUBCONFED'],
      [path(eSrc, learned), { ...toE, members: ['10.0.0.1'], peerAsn: 65555 }, 'split horizon'],
      [path(eSrc, learned), { ...toE, peerAsn: 65001 }, 'AS 65001 is on the AS_PATH'],
      [path(iNon, learned), toI, 'not a route reflector'],
      [path(iNon, learned), rr(false), 'reflected to clients only'],
    ];
    for (const [p, st, why] of cases) {
      expect(exportRefusal(p, st)).toContain(why);
      expect(exportAttrs(p, 4, st)).toBeNull();
    }
    // And no reason wherever a route goes out.
    for (const [p, st] of [
      [path(eSrc, learned), toE],
      [path(iClient, learned), rr(false)],
      [path(LOCAL_SOURCE, { origin: 0 }), toI],
    ] as const) {
      expect(exportRefusal(p, st)).toBeUndefined();
      expect(exportAttrs(p, 4, st)).not.toBeNull();
    }
  });
});
