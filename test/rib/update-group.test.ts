import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { endOfRib } from '../../src/rib/eor.js';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import type { Send } from '../../src/rib/update-group.js';
import { A, CTX, decodeFake, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const SESSION: SessionInfo = { ctx: CTX, families: [4, 6], routerId: '10.255.0.1' };
const ORIGIN = { origin: 0 as const, asPath: [] };

function setup(perMessage = 100) {
  const packer = new FakePacker(perMessage);
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer });
  const peer = (addr: string, asn = 65009) => rib.addPeer({ address: A(addr), asn, localAddressV4: A('192.0.2.100'), localAddressV6: A('2001:db8::100') });
  return { rib, packer, peer };
}

const texts = (s: Send | undefined) => (s?.messages ?? []).map(decodeFake);
const forPeer = (sends: Send[], id: string) => sends.filter((s) => s.peerId === id);
const isEor = (m: Uint8Array, f: 4 | 6) => m.length === endOfRib(f).length && m.every((b, i) => b === endOfRib(f)[i]);

describe('update groups', () => {
  it('puts peers with the same settings in one group and gives them identical bytes', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    const b = peer('10.0.0.2');
    const c = rib.addPeer({ address: A('10.0.0.3'), asn: 65009, localAddressV4: A('192.0.2.100'), nextHopSelf: true });
    rib.peerUp(a, SESSION, 0);
    rib.peerUp(b, SESSION, 0);
    rib.peerUp(c, { ...SESSION, ctx: { ...CTX, extendedMessage: true } }, 0);
    expect(rib.groupOf(a)).toBe(rib.groupOf(b));
    expect(rib.groupOf(c)).not.toBe(rib.groupOf(a));
    expect(rib.groupCount).toBe(2);
    rib.flushDue(10); // initial (empty) dumps and End-of-RIB
    rib.originate(P('198.51.100.0/24'), ORIGIN, 20);
    rib.originate(P('2001:db8:7::/48'), ORIGIN, 20);
    const sends = rib.flushDue(30);
    const [sa] = forPeer(sends, a);
    const [sb] = forPeer(sends, b);
    expect(sa.messages.length).toBeGreaterThan(0);
    expect(sb.messages).toBe(sa.messages); // the very same packed buffers
    expect(texts(sa).join('\n')).toContain('198.51.100.0/24');
    expect(texts(sa).join('\n')).toContain('nh6=2001:db8::100');
    expect(forPeer(sends, c)).toHaveLength(1);
  });

  it('sends a newly established peer the full table, then End-of-RIB per family', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24')], ORIGIN, 0);
    rib.peerUp(a, SESSION, 1);
    expect(rib.flushDue(3)).toEqual([]); // window still open
    const [s] = rib.flushDue(6);
    expect(s.peerId).toBe(a);
    const n = s.messages.length;
    expect(isEor(s.messages[n - 2], 4)).toBe(true);
    expect(isEor(s.messages[n - 1], 6)).toBe(true);
    expect(texts(s)[0]).toMatch(/^A .*198\.51\.100\.0\/24 203\.0\.113\.0\/24$/);
    expect(texts(s)[0]).toContain('"nextHop":"192.0.2.100"');
    expect(texts(s)[0]).toContain('"asPath":[{"type":2,"asns":[65000]}]');
  });

  it('sends End-of-RIB for every negotiated family, also one it sends no routes in', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    rib.originateMany([P('198.51.100.0/24'), P('2001:db8:5::/48')], ORIGIN, 0);
    rib.peerUp(a, { ...SESSION, families: [4], endOfRib: [4, 6] }, 0);
    const [s] = rib.flushDue(10);
    expect(
      texts(s)
        .filter((t) => t.startsWith('A '))
        .join('\n'),
    ).not.toContain('2001:db8:5::');
    const n = s.messages.length;
    expect([isEor(s.messages[n - 2], 4), isEor(s.messages[n - 1], 6)]).toEqual([true, true]);
  });

  it('a peer joining an existing group gets the group Adj-RIB-Out first, then follows the group', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    const b = peer('10.0.0.2');
    rib.peerUp(a, SESSION, 0);
    rib.originate(P('198.51.100.0/24'), ORIGIN, 0);
    rib.flushDue(10);
    rib.peerUp(b, SESSION, 20);
    rib.originate(P('203.0.113.0/24'), ORIGIN, 20);
    const sends = rib.flushDue(30);
    const [sa] = forPeer(sends, a);
    const [sb] = forPeer(sends, b);
    expect(texts(sa)).toHaveLength(1);
    expect(texts(sa)[0]).toMatch(/203\.0\.113\.0\/24$/);
    expect(texts(sa)[0]).not.toContain('198.51.100.0');
    expect(texts(sb)[0]).toMatch(/198\.51\.100\.0\/24 203\.0\.113\.0\/24$/);
    expect(isEor(sb.messages[sb.messages.length - 1], 6)).toBe(true);
    rib.withdraw(P('198.51.100.0/24'), 40);
    const next = rib.flushDue(50);
    expect(next.map((s) => s.peerId).sort()).toEqual([a, b].sort());
    expect(next[0].messages).toBe(next[1].messages);
    expect(texts(next[0])).toEqual(['W 198.51.100.0/24']);
  });

  it('packs 10,000 originations into at most ceil(10,000 / per-message) UPDATEs per attribute set', () => {
    const { rib, packer, peer } = setup(500);
    const a = peer('10.0.0.1');
    rib.peerUp(a, SESSION, 0);
    rib.flushDue(10);
    packer.messages = 0;
    const sets = [0, 1, 2].map((i) => ({ origin: 0 as const, asPath: [], communities: [65000 * 65536 + i] }));
    for (let i = 0; i < 10_000; i++) rib.originate(Prefix.v4(((10 << 24) | (i << 8)) >>> 0, 24), sets[i % 3], 20);
    const [s] = rib.flushDue(25);
    expect(packer.updateCalls).toBe(3); // one call per attribute set
    const perSet = [3334, 3333, 3333].map((n) => Math.ceil(n / 500));
    expect(s.messages.length).toBe(perSet.reduce((x, y) => x + y, 0));
    expect(packer.messages).toBe(s.messages.length);
    const announced = packer.log.filter((l) => l.kind === 'announce').flatMap((l) => l.prefixes);
    expect(new Set(announced).size).toBe(10_000);
  });

  it('never sends a route announced and withdrawn within one window, nor an unchanged re-announcement', () => {
    const { rib, packer, peer } = setup();
    const a = peer('10.0.0.1');
    rib.peerUp(a, SESSION, 0);
    rib.originate(P('198.51.100.0/24'), ORIGIN, 0);
    rib.flushDue(10);
    const before = packer.log.length;
    rib.originate(P('203.0.113.0/24'), ORIGIN, 20);
    rib.withdraw(P('203.0.113.0/24'), 22);
    rib.withdraw(P('198.51.100.0/24'), 23);
    rib.originate(P('198.51.100.0/24'), ORIGIN, 24);
    expect(rib.flushDue(40)).toEqual([]);
    expect(packer.log.length).toBe(before);
    expect(rib.nextDeadline()).toBeUndefined();
  });

  it('sends a change after a quiet window at once, then coalesces until a quiet window, but never beyond the latency bound', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    rib.peerUp(a, SESSION, 0);
    rib.flushDue(10);
    const v4 = (t: number) => Prefix.v4(((10 << 24) | (t << 8)) >>> 0, 24);
    // Nothing changed for 90 ms: the change at 100 is due at once.
    rib.originate(v4(100), ORIGIN, 100);
    expect(rib.nextDeadline()).toBe(100);
    const [first] = rib.flushDue(100);
    expect(texts(first)[0].split(' ').length - 3).toBe(1);
    for (let t = 102; t < 200; t += 2) {
      rib.originate(v4(t), ORIGIN, t);
      if (t < 152) expect(rib.flushDue(t)).toEqual([]);
      else if (t === 152) {
        expect(rib.nextDeadline()).toBe(152);
        const [s] = rib.flushDue(t);
        expect(texts(s)[0].split(' ').length - 3).toBe(26); // t = 102..152
      }
    }
    // Changes at 154..198: quiet + 5 ms (203) comes before the 50 ms bound from 154 (204).
    expect(rib.nextDeadline()).toBe(203);
    expect(rib.flushDue(202)).toEqual([]);
    expect(rib.flushDue(203)).toHaveLength(1);
    // Quiet again since 198: the next change goes out at once.
    rib.originate(v4(210), ORIGIN, 210);
    expect(rib.nextDeadline()).toBe(210);
    expect(rib.flushDue(210)).toHaveLength(1);
  });

  it('re-sends the whole Adj-RIB-Out on ROUTE-REFRESH, without End-of-RIB', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    rib.peerUp(a, SESSION, 0);
    rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24')], ORIGIN, 0);
    rib.flushDue(10);
    rib.routeRefresh(a, 20);
    const [s] = rib.flushDue(25);
    expect(texts(s)).toHaveLength(1);
    expect(texts(s)[0]).toMatch(/198\.51\.100\.0\/24 203\.0\.113\.0\/24$/);
  });

  it('limits a ROUTE-REFRESH for one family to that family', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    rib.peerUp(a, SESSION, 0);
    rib.originateMany([P('198.51.100.0/24'), P('2001:db8:9::/48')], ORIGIN, 0);
    rib.flushDue(10);
    rib.routeRefresh(a, 20, 6);
    const [s] = rib.flushDue(25);
    expect(texts(s)).toHaveLength(1);
    expect(texts(s)[0]).toMatch(/ 2001:db8:9::\/48$/);
    rib.routeRefresh(a, 30, 6);
    rib.routeRefresh(a, 30, 4);
    const both = texts(rib.flushDue(35)[0]); // one UPDATE per family: their next hops differ
    expect(both).toHaveLength(2);
    expect(both.join('\n')).toMatch(/ 198\.51\.100\.0\/24$/m);
    expect(both.join('\n')).toMatch(/ 2001:db8:9::\/48$/m);
  });

  it('withdraws from peers when the best path goes, and follows best-path changes', () => {
    const { rib, peer } = setup();
    const up = rib.addPeer({ address: A('10.0.0.1'), asn: 65001 });
    const down = peer('10.0.0.9');
    rib.peerUp(down, SESSION, 0);
    rib.flushDue(10);
    rib.ingest(up, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 20);
    expect(texts(rib.flushDue(30)[0])[0]).toContain('"asns":[65000,65001]');
    rib.ingest(up, update(ebgpAttrs([65001, 65001], '10.0.0.1'), ['198.51.100.0/24']), 40);
    expect(texts(rib.flushDue(50)[0])[0]).toContain('"asns":[65000,65001,65001]');
    rib.peerDown(up, 60);
    expect(texts(rib.flushDue(70)[0])).toEqual(['W 198.51.100.0/24']);
    expect(rib.adjRibOut(down)!.size).toBe(0);
  });

  it('does not advertise an eBGP peer its own routes, and applies the export policy once per group', () => {
    const { rib } = setup();
    let calls = 0;
    const exportPolicy = (r: { prefix: Prefix; attrs: object }) => {
      calls++;
      return r.prefix.length === 24 ? { verdict: 'accept' as const, attrs: r.attrs } : { verdict: 'reject' as const, attrs: r.attrs };
    };
    const mk = (addr: string, asn: number) => rib.addPeer({ address: A(addr), asn, localAddressV4: A('192.0.2.100'), exportPolicy });
    const x = mk('10.0.0.1', 65001);
    const y = mk('10.0.0.2', 65001);
    const z = mk('10.0.0.3', 65003);
    for (const p of [x, y, z]) rib.peerUp(p, SESSION, 0);
    rib.flushDue(10);
    calls = 0;
    rib.ingest(x, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24', '198.51.100.0/25']), 20);
    const sends = rib.flushDue(30);
    expect(sends.map((s) => s.peerId)).toEqual([z]);
    expect(texts(sends[0])).toHaveLength(1);
    expect(texts(sends[0])[0]).toMatch(/ 198\.51\.100\.0\/24$/);
    expect(calls).toBe(2); // two prefixes, once for group {z}; group {x, y} drops them before policy (AS 65001 on path)
  });

  it('the export policy sees the route before the session’s rules (as BIRD’s export filters); its prepend follows our AS; a MED or next hop it sets wins', () => {
    const { rib } = setup();
    const seen: { asPath: unknown; localPref: unknown }[] = [];
    const exportPolicy = (r: { prefix: Prefix; attrs: PathAttributes }) => {
      seen.push({ asPath: r.attrs.asPath, localPref: r.attrs.localPref });
      const asPath = [{ type: 2 as const, asns: [64999, ...(r.attrs.asPath ?? []).flatMap((x) => x.asns)] }];
      return { verdict: 'accept' as const, attrs: { ...r.attrs, asPath, med: 7, nextHop: A('192.0.2.77') } };
    };
    const up = rib.addPeer({ address: A('10.0.0.9'), asn: 65000, localAddressV4: A('192.0.2.100') });
    const ebgp = rib.addPeer({ address: A('10.0.0.3'), asn: 65003, localAddressV4: A('192.0.2.100'), exportPolicy });
    for (const p of [up, ebgp]) rib.peerUp(p, SESSION, 0);
    rib.flushDue(10);
    // Learned over iBGP with LOCAL_PREF 300, a MED and a path; one more with NO_EXPORT as received.
    rib.ingest(up, update(ebgpAttrs([65001], '10.0.0.1', { localPref: 300, med: 5 }), ['198.51.100.0/24']), 20);
    rib.ingest(up, update(ebgpAttrs([65001], '10.0.0.1', { communities: [0xffffff01] }), ['203.0.113.0/24']), 20);
    const sends = rib.flushDue(30).filter((x) => x.peerId === ebgp);
    expect(seen).toEqual([{ asPath: [{ type: 2, asns: [65001] }], localPref: 300 }]);
    const sent = texts(sends[0]).join('\n');
    expect(sent).toContain('"asns":[65000,64999,65001]');
    expect(sent).toContain('"med":7');
    expect(sent).toContain('192.0.2.77');
    expect(sent).not.toContain('localPref');
    expect(sent).not.toContain('203.0.113.0/24');
  });

  it('releases attribute references when a group goes away', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    rib.peerUp(a, SESSION, 0);
    rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24')], ORIGIN, 0);
    rib.flushDue(10);
    expect(rib.store.size).toBe(2); // the local set and the exported (prepended, next-hop self) set
    rib.peerDown(a, 20);
    expect(rib.groupCount).toBe(0);
    expect(rib.store.size).toBe(1);
    rib.withdraw(P('198.51.100.0/24'), 30);
    rib.withdraw(P('203.0.113.0/24'), 30);
    expect(rib.store.size).toBe(0);
  });

  it('switches a large burst to a full scan and still finds withdrawals and changes', () => {
    const packer = new FakePacker();
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer, coalesce: { scanThreshold: 3 } });
    const a = rib.addPeer({ address: A('10.0.0.1'), asn: 65009, localAddressV4: A('192.0.2.100') });
    rib.peerUp(a, SESSION, 0);
    const pfx = (i: number) => Prefix.v4(((10 << 24) | (i << 8)) >>> 0, 24);
    for (let i = 0; i < 6; i++) rib.originate(pfx(i), ORIGIN, 0);
    rib.flushDue(10);
    expect(rib.adjRibOut(a)!.size).toBe(6);
    for (let i = 0; i < 3; i++) rib.withdraw(pfx(i), 20);
    rib.originate(pfx(3), { ...ORIGIN, med: 1 }, 20);
    rib.originate(pfx(9), ORIGIN, 20);
    const [s] = rib.flushDue(30);
    expect(texts(s)[0]).toBe('W 10.0.0.0/24 10.0.1.0/24 10.0.2.0/24');
    expect(texts(s).slice(1).join('\n')).toMatch(/"med":1.* 10\.0\.3\.0\/24$/m);
    expect(texts(s).slice(1).join('\n')).toMatch(/ 10\.0\.9\.0\/24$/m);
    expect(texts(s).join('\n')).not.toContain('10.0.4.0');
    expect([...rib.adjRibOut(a)!.keys()].length).toBe(4);
  });

  it('reflects routes between route-reflector clients with ORIGINATOR_ID and CLUSTER_LIST', () => {
    const packer = new FakePacker();
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', clusterId: '192.0.2.200', packer });
    const mk = (addr: string, rrClient: boolean) => rib.addPeer({ address: A(addr), asn: 65000, rrClient, localAddressV4: A('192.0.2.100') });
    const c1 = mk('10.0.1.1', true);
    const c2 = mk('10.0.1.2', true);
    const n1 = mk('10.0.1.3', false);
    const n2 = mk('10.0.1.4', false);
    [c1, c2, n1, n2].forEach((p, i) => rib.peerUp(p, { ...SESSION, routerId: `1.1.1.${i + 1}` }, 0));
    expect(rib.groupOf(c1)).toBe(rib.groupOf(c2));
    expect(rib.groupOf(n1)).toBe(rib.groupOf(n2));
    rib.flushDue(10);
    rib.ingest(c1, update(ebgpAttrs([65001], '10.0.0.9'), ['198.51.100.0/24']), 20);
    rib.ingest(n1, update(ebgpAttrs([65002], '10.0.0.8'), ['203.0.113.0/24']), 20);
    const sends = rib.flushDue(30);
    const byPeer = new Map(sends.map((s) => [s.peerId, texts(s).join('\n')]));
    // From client c1: to every client and non-client (c1 itself included; it drops its own ORIGINATOR_ID).
    for (const p of [c1, c2, n1, n2]) expect(byPeer.get(p)).toContain('198.51.100.0/24');
    expect(byPeer.get(n2)).toContain('"originatorId":"1.1.1.1","clusterList":["192.0.2.200"]');
    expect(byPeer.get(n2)).toContain('"nextHop":"10.0.0.9"');
    expect(byPeer.get(n2)).toContain('"localPref":100');
    // From non-client n1: to clients only.
    expect(byPeer.get(c2)).toContain('203.0.113.0/24');
    expect(byPeer.get(n2)).not.toContain('203.0.113.0/24');
  });

  it('takes IPv4 NLRI from MP_REACH with its next hop', () => {
    const { rib, peer } = setup();
    const up = rib.addPeer({ address: A('10.0.0.1'), asn: 65001 });
    const down = peer('10.0.0.9', 65000);
    rib.peerUp(down, SESSION, 0);
    rib.ingest(
      up,
      update({ origin: 0, asPath: [{ type: 2, asns: [65001] }], mpReach: { afi: 1, safi: 1, nextHops: [A('10.0.0.1')], nlri: [P('198.51.100.0/24')] } }, []),
      0,
    );
    expect(rib.best(P('198.51.100.0/24'))!.attrs.attrs.nextHop!.toString()).toBe('10.0.0.1');
    const [s] = rib.flushDue(10);
    expect(texts(s)[0]).toContain('"nextHop":"10.0.0.1"');
    expect(texts(s)[0]).not.toContain('mpReach');
  });

  it('an export policy change moves the peer to a new group and sends only the difference', () => {
    const { rib, peer } = setup();
    const a = peer('10.0.0.1');
    const b = peer('10.0.0.2');
    rib.peerUp(a, SESSION, 0);
    rib.peerUp(b, SESSION, 0);
    rib.originateMany([P('198.51.100.0/24'), P('203.0.113.0/24')], ORIGIN, 0);
    rib.originate(P('192.0.2.0/25'), { ...ORIGIN, med: 9 }, 0);
    rib.flushDue(10);
    const only24 = (r: { prefix: Prefix; attrs: object }) => ({ verdict: r.prefix.length === 24 ? ('accept' as const) : ('reject' as const), attrs: r.attrs });
    rib.setExportPolicy(a, only24, 20);
    expect(rib.groupOf(a)).not.toBe(rib.groupOf(b));
    const sends = rib.flushDue(30);
    expect(sends.map((s) => s.peerId)).toEqual([a]);
    expect(texts(sends[0])).toEqual(['W 192.0.2.0/25']);
    // Back to no policy: the /25 comes back, nothing else is repeated.
    rib.setExportPolicy(a, undefined, 40);
    expect(rib.groupOf(a)).toBe(rib.groupOf(b));
    const again = rib.flushDue(50);
    expect(again.map((s) => s.peerId)).toEqual([a]);
    expect(texts(again[0])).toHaveLength(1);
    expect(texts(again[0])[0]).toMatch(/"med":9.* 192\.0\.2\.0\/25$/);
  });

  it('a settings change (next-hop-self) re-sends the routes whose attributes change', () => {
    const { rib } = setup();
    const up = rib.addPeer({ address: A('10.0.0.1'), asn: 65001 });
    const ib = rib.addPeer({ address: A('10.0.1.1'), asn: 65000, localAddressV4: A('192.0.2.100') });
    rib.peerUp(ib, SESSION, 0);
    rib.ingest(up, update(ebgpAttrs([65001], '10.0.0.1'), ['198.51.100.0/24']), 0);
    expect(texts(rib.flushDue(10)[0])[0]).toContain('"nextHop":"10.0.0.1"');
    rib.reconfigurePeer(ib, { nextHopSelf: true }, 20);
    const [s] = rib.flushDue(30);
    expect(texts(s)).toHaveLength(1);
    expect(texts(s)[0]).toContain('"nextHop":"192.0.2.100"');
  });
});
