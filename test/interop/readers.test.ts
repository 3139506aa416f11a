/**
 * The interop harness's pure parts, on captured daemon output: capability
 * readers, the prefix ranges, the MRT writer. No root or daemons needed.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import { ATTR_SETS, DAEMON_V4, DAEMON_V6, birdStatic, exabgpRoutes, frrNetworks } from './daemon-routes.js';
import type { NegotiatedView } from './harness.js';
import { mrtDump } from './mrt.js';
import { birdNegotiated, frrNegotiated, gobgpMpFamilies, gobgpNegotiated, type FrrNeighbor, type GobgpNeighborFull } from './readers.js';
import { expandRange } from './speaker-protocol.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'interop');
const fixture = (f: string): string => readFileSync(join(FIX, f), 'utf8');

describe('capability readers on captured output', () => {
  /** What the captured sessions negotiated: all IPv4 with the same capabilities but for `differs`. */
  const negotiated = (peerAsn: number, differs: Partial<NegotiatedView> = {}): NegotiatedView & { established: boolean } => ({
    established: true,
    families: ['ipv4'],
    asn4: true,
    routeRefresh: true,
    enhancedRouteRefresh: true,
    extendedMessage: false,
    gracefulRestart: true,
    holdTime: 180,
    peerAsn,
    ...differs,
  });

  it('BIRD: negotiated = announced by both ends; extended message only by FRR here', () => {
    expect(birdNegotiated(fixture('bird-show-protocols-all.txt'))).toEqual(negotiated(65002));
  });

  it('FRR: "advertisedAndReceived…" counts, "advertised" alone does not', () => {
    const n = JSON.parse(fixture('frr-neighbor.json')) as FrrNeighbor;
    expect(frrNegotiated(n)).toEqual(negotiated(65001));
  });

  it('GoBGP: capability type names on both sides, families from the protobuf value', () => {
    const n = JSON.parse(fixture('gobgp-neighbor.json')) as GobgpNeighborFull;
    expect(gobgpNegotiated(n)).toEqual(
      negotiated(65001, {
        holdTime: 90,
        // BIRD offered these, GoBGP (without GR configured) did not
        enhancedRouteRefresh: false,
        gracefulRestart: false,
      }),
    );
    // Family{afi: 2, safi: 1} is 0a 04 08 02 10 01
    expect(
      gobgpMpFamilies([
        { type_url: 'type.googleapis.com/apipb.MultiProtocolCapability', value: Buffer.from([0x0a, 0x04, 0x08, 0x02, 0x10, 0x01]).toString('base64') },
      ]),
    ).toEqual(['ipv6']);
  });
});

describe('prefix ranges', () => {
  it('expands IPv4 and IPv6 ranges into the strings daemons print', () => {
    expect(expandRange({ start: '198.18.0.0', length: 32, count: 3 })).toEqual(['198.18.0.0/32', '198.18.0.1/32', '198.18.0.2/32']);
    expect(expandRange({ start: '198.18.255.252', length: 30, count: 2 })).toEqual(['198.18.255.252/30', '198.19.0.0/30']);
    expect(expandRange({ start: '2001:db8:2000::', length: 64, count: 3 })).toEqual(['2001:db8:2000::/64', '2001:db8:2000:1::/64', '2001:db8:2000:2::/64']);
    expect(expandRange({ start: '2001:db8::', length: 48, count: 2 })).toEqual(['2001:db8::/48', '2001:db8:1::/48']);
  });

  it('rejects host bits, bad lengths and ranges past the end', () => {
    expect(() => expandRange({ start: '198.18.0.1', length: 24, count: 1 })).toThrow(/host bits set/);
    expect(() => expandRange({ start: '198.18.0.0', length: 33, count: 1 })).toThrow(/1\.\.32/);
    expect(() => expandRange({ start: '255.255.255.0', length: 24, count: 2 })).toThrow(/past/);
    expect(() => expandRange({ start: '2001:db8::1', length: 64, count: 1 })).toThrow(/host bits set/);
    expect(() => expandRange({ start: 'nonsense', length: 24, count: 1 })).toThrow(/not an IPv4 address/);
  });

  it('gives count distinct, ascending, canonical prefixes (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 8, max: 32 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 1000 }), (len, count, slot) => {
        const step = 2 ** (32 - len);
        const startInt = (slot * step) % 2 ** 31;
        const start = [startInt >>> 24, (startInt >>> 16) & 255, (startInt >>> 8) & 255, startInt & 255].join('.');
        // no further than the end of the address space (that is an error, tested above)
        const n = Math.min(count, (2 ** 32 - startInt) / step);
        const out = expandRange({ start, length: len, count: n });
        expect(out).toHaveLength(n);
        const parsed = out.map((p) => Prefix.parse(p));
        for (let i = 0; i < parsed.length; i++) {
          expect(parsed[i].toString()).toBe(out[i]);
          expect(parsed[i].length).toBe(len);
          if (i > 0) expect(parsed[i].compare(parsed[i - 1])).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('keeps the daemon ranges clear of the scale range and of each other', () => {
    const v4 = expandRange(DAEMON_V4);
    expect(v4[0]).toBe('198.19.192.0/30');
    expect(v4[v4.length - 1]).toBe('198.19.223.252/30');
    // the scale range ends at 198.19.134.159
    expect(expandRange({ start: '198.18.0.0', length: 32, count: 100_000 }).pop()).toBe('198.19.134.159/32');
    expect(expandRange(DAEMON_V6).pop()).toBe('2001:db8:2000:3ff::/64');
  });
});

describe('daemon route renderers', () => {
  it('write one route per prefix, with the attribute set of its index', () => {
    const bird = birdStatic();
    expect(bird.match(/^\s+route /gm)).toHaveLength(DAEMON_V4.count + DAEMON_V6.count);
    expect(bird).toContain(
      'route 198.19.192.8/30 blackhole { bgp_origin = ORIGIN_EGP; bgp_med = 20; bgp_community.add((65010,2)); bgp_community.add((65010,3)); bgp_large_community.add((4200000002,1,2)); };',
    );
    const frr = frrNetworks(4200000002);
    expect(frr).toContain('  network 198.19.192.12/30 route-map gen-3');
    expect(frr).toContain('route-map gen-2 permit 10\n set origin egp\n set metric 20\n set community 65010:2 65010:3\n set large-community 4200000002:1:2');
    expect(exabgpRoutes('ipv6').split('\n')[1].trim()).toBe('route 2001:db8:2000:1::/64 next-hop self origin igp med 10 community [ 65010:1 ];');
    expect(ATTR_SETS).toHaveLength(4);
  });
});

describe('MRT TABLE_DUMP_V2 writer', () => {
  it('writes a peer index table, then one RIB record per route, twice over', () => {
    const v4 = { start: '198.19.192.0', length: 30, count: 3 };
    const v6 = { start: '2001:db8:2000::', length: 64, count: 2 };
    const buf = mrtDump({ routerId: '198.51.100.11', peerAsn: 4200000002, v4, v6, nextHop4: '0.0.0.0', nextHop6: '::' });
    const records: { subtype: number; body: Buffer }[] = [];
    for (let off = 0; off < buf.length;) {
      expect(buf.readUInt16BE(off + 4)).toBe(13);
      const len = buf.readUInt32BE(off + 8);
      records.push({ subtype: buf.readUInt16BE(off + 6), body: buf.subarray(off + 12, off + 12 + len) });
      off += 12 + len;
    }
    expect(records.map((r) => r.subtype)).toEqual([1, 2, 2, 2, 4, 4, 2, 2, 2, 4, 4]);
    // peer entry: type 2 (AS4, IPv4), BGP ID, address, AS
    expect(records[0].body.readUInt16BE(6)).toBe(1);
    expect(records[0].body.readUInt32BE(4 + 2 + 2 + 1 + 4 + 4)).toBe(4200000002);
    // second IPv4 route: sequence 1, /30, prefix bytes c6 13 c0 04, one entry
    const r = records[2].body;
    expect([...r.subarray(0, 9)]).toEqual([0, 0, 0, 1, 30, 0xc6, 0x13, 0xc0, 0x04]);
    expect(r.readUInt16BE(9)).toBe(1);
    // its attributes carry MED 10 (set 1) and community 65010:1
    const attrs = r.subarray(9 + 2 + 2 + 4 + 2);
    expect(attrs.includes(Buffer.from([0x80, 4, 4, 0, 0, 0, 10]))).toBe(true);
    expect(attrs.includes(Buffer.from([0xc0, 8, 4, 0xfd, 0xf2, 0, 1]))).toBe(true);
  });
});
