/** RouteAttributes (user terms) ↔ PathAttributes (wire terms): src/speaker/attributes.ts. */
import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import { AttributeCache, describeRoute, RouteAttributeError, splitLate, toPathAttributes } from '../../src/speaker/attributes.js';
import { WellKnownCommunity } from '../../src/wire/constants.js';

describe('toPathAttributes', () => {
  it('extended communities: link bandwidth, route target, route origin, hex and 64-bit values, deduplicated', () => {
    const pa = toPathAttributes({ extendedCommunities: ['lb:64512:375000', 'rt:65000:100', 'soo:192.0.2.1:7', 0x0002fde800000064n, 'rt:65000:100'] }, 4);
    expect(pa.extendedCommunities).toEqual([0x4004fc0048b71b00n, 0x0002fde800000064n, 0x0103c00002010007n]);
    const back = describeRoute(Prefix.parse('192.0.2.0/24'), pa).extendedCommunities;
    expect(back).toEqual(['lb:64512:375000', 'rt:65000:100', 'soo:192.0.2.1:7']);
    expect(() => toPathAttributes({ extendedCommunities: ['rt:65000:1', 'lb:64512:-1'] }, 4)).toThrow(/extendedCommunities\[1\]/);
    expect(() => toPathAttributes({ extendedCommunities: [-1n] }, 4)).toThrow(/extendedCommunities\[0\] must be a 64-bit/);
    // The cache keys bigint values too (JSON.stringify alone throws on them).
    expect(new AttributeCache().get({ extendedCommunities: [1n] }, 4).extendedCommunities).toEqual([1n]);
  });

  it('defaults: origin IGP, empty AS path, nothing else', () => {
    expect(toPathAttributes({}, 4)).toEqual({ origin: 0, asPath: [] });
  });

  it('maps every field, communities by the one text form, deduplicated', () => {
    const pa = toPathAttributes(
      {
        origin: 'incomplete',
        med: 7,
        localPref: 200,
        asPath: [65001, 65002],
        communities: ['65000:1', 'no-export', 0xfde80001, '65000:1'],
        largeCommunities: ['64512:7:9'],
        nextHop: '192.0.2.9',
      },
      4,
    );
    expect(pa).toEqual({
      origin: 2,
      asPath: [{ type: 2, asns: [65001, 65002] }],
      med: 7,
      localPref: 200,
      communities: [0xfde80001, WellKnownCommunity.NO_EXPORT],
      largeCommunities: [{ global: 64512, local1: 7, local2: 9 }],
      nextHop: expect.objectContaining({ family: 4 }),
    });
    expect(pa.nextHop!.toString()).toBe('192.0.2.9');
  });

  it('an IPv6 next hop goes into MP_REACH', () => {
    const pa = toPathAttributes({ nextHop: '2001:db8::9' }, 6);
    expect(pa.nextHop).toBeUndefined();
    expect(pa.mpReach?.afi).toBe(2);
    expect(pa.mpReach?.nextHops.map(String)).toEqual(['2001:db8::9']);
  });

  it.each([
    [{ origin: 'bgp' as 'igp' }, 4, /origin/],
    [{ med: 1.5 }, 4, /med must be an integer/],
    [{ localPref: 2 ** 32 }, 4, /localPref/],
    [{ asPath: [1, -1] }, 4, /asPath\[1\]/],
    [{ communities: ['64512:7:9'] }, 4, /communities\[0\]/],
    [{ communities: [2 ** 32] }, 4, /communities\[0\]/],
    [{ largeCommunities: ['1:2'] }, 4, /largeCommunities\[0\]/],
    [{ nextHop: 'router' }, 4, /nextHop/],
    [{ nextHop: '2001:db8::1' }, 4, /IPv6 but the prefix is IPv4/],
  ] as const)('refuses %j naming the field', (attrs, family, message) => {
    expect(() => toPathAttributes(attrs, family)).toThrow(RouteAttributeError);
    expect(() => toPathAttributes(attrs, family)).toThrow(message);
  });
});

describe('AttributeCache', () => {
  it('returns one object per distinct attributes and family, and stays within its bound', () => {
    const cache = new AttributeCache(2);
    const a = cache.get({ med: 1 }, 4);
    expect(cache.get({ med: 1 }, 4)).toBe(a);
    expect(cache.get({ med: 1 }, 6)).not.toBe(a);
    expect(cache.get(undefined, 4)).toEqual({ origin: 0, asPath: [] });
    // the bound was reached: cleared, so the first one is built again (equal, not the same)
    const again = cache.get({ med: 1 }, 4);
    expect(again).toEqual(a);
    expect(again).not.toBe(a);
  });

  it('throws what toPathAttributes throws, and caches nothing for it', () => {
    const cache = new AttributeCache();
    expect(() => cache.get({ communities: ['x'] }, 4)).toThrow(RouteAttributeError);
    expect(() => cache.get({ communities: ['x'] }, 4)).toThrow(RouteAttributeError);
  });
});

describe('describeRoute', () => {
  it('prints communities in the one text form and flattens the AS path', () => {
    const pa = toPathAttributes(
      { origin: 'egp', med: 3, communities: ['65535:65281', '65000:1'], largeCommunities: ['1:2:3'], asPath: [65001], nextHop: '192.0.2.9' },
      4,
    );
    expect(describeRoute(Prefix.parse('198.51.100.0/24'), pa)).toEqual({
      prefix: Prefix.parse('198.51.100.0/24'),
      asPath: [65001],
      communities: ['no-export', '65000:1'],
      largeCommunities: ['1:2:3'],
      nextHop: '192.0.2.9',
      med: 3,
      origin: 'egp',
    });
  });

  it('takes an IPv6 route’s next hop from MP_REACH', () => {
    const pa = toPathAttributes({ nextHop: '2001:db8::9' }, 6);
    expect(describeRoute(Prefix.parse('2001:db8:1::/48'), pa).nextHop).toBe('2001:db8::9');
  });
});

describe('splitLate (communities added after the export policy)', () => {
  it('the policy side drops exportCommunities/exportLargeCommunities; the sent side joins them, once each', () => {
    expect(splitLate(undefined)).toEqual({ policy: undefined });
    const plain = { communities: ['65000:1'] };
    expect(splitLate(plain).policy).toBe(plain);
    expect(splitLate({ localPref: 7, exportCommunities: [] })).toEqual({ policy: { localPref: 7 } });
    const { policy, sent } = splitLate({
      communities: ['65000:1'],
      exportCommunities: ['65000:100', '65000:1'],
      exportLargeCommunities: ['65000:1:2'],
      localPref: 7,
    });
    expect(policy).toEqual({ communities: ['65000:1'], localPref: 7 });
    expect(sent).toEqual({ communities: ['65000:1', '65000:100'], largeCommunities: ['65000:1:2'], localPref: 7 });
    expect(toPathAttributes(sent!, 4).communities).toEqual([65000 * 65536 + 1, 65000 * 65536 + 100]);
  });
});
