import { describe, expect, it } from 'vitest';
import {
  formatOp,
  isLearnedProtocol,
  parseBatchErrors,
  parseConnectedDump,
  parseLearnedDump,
  parseMonitorLine,
  parseRouteDump,
  parseRouteGet,
  parseRtTables,
} from '../../src/kernel/iproute2.js';

// Output captured from iproute2 6.1 in a namespace (see the commands in each test's name).
describe('iproute2 language', () => {
  it('formats replace and delete lines, ECMP and onlink included', () => {
    const r = {
      prefix: '198.51.100.0/24',
      type: 'unicast' as const,
      metric: 5,
      nexthops: [
        { via: '192.0.2.5', dev: 'd0' },
        { via: '192.0.2.6', dev: 'd0' },
      ],
    };
    expect(formatOp({ op: 'replace', route: r }, 254, 12)).toBe(
      'route replace 198.51.100.0/24 table 254 proto 12 metric 5 nexthop via 192.0.2.5 dev d0 nexthop via 192.0.2.6 dev d0',
    );
    expect(formatOp({ op: 'replace', route: { ...r, nexthops: [{ via: '192.0.2.4', dev: 'tunl0', onlink: true }] } }, 100, 12)).toBe(
      'route replace 198.51.100.0/24 table 100 proto 12 metric 5 via 192.0.2.4 dev tunl0 onlink',
    );
    expect(formatOp({ op: 'replace', route: { prefix: '2001:db8::/48', type: 'blackhole', metric: 1024, nexthops: [] } }, 254, 12)).toBe(
      'route replace blackhole 2001:db8::/48 table 254 proto 12 metric 1024',
    );
    expect(formatOp({ op: 'delete', route: r }, 254, 12)).toBe('route del 198.51.100.0/24 table 254 proto 12 metric 5');
  });

  it('reads `ip -j -N route show table 100 proto 12` dumps', () => {
    const v4 =
      '[{"type":"6","dst":"198.51.102.0/24","flags":[]},{"dst":"198.51.103.0/24","gateway":"192.0.2.4","dev":"d0","flags":["onlink"]},{"dst":"198.51.100.0/24","metric":5,"flags":[],"nexthops":[{"gateway":"192.0.2.6","dev":"d0","weight":1,"flags":[]},{"gateway":"192.0.2.5","dev":"d0","weight":1,"flags":[]}]},{"dst":"203.0.113.9","gateway":"192.0.2.4","dev":"d0","flags":[]}]';
    expect(parseRouteDump(v4, 4)).toEqual([
      { prefix: '198.51.102.0/24', type: 'blackhole', metric: 0, nexthops: [] },
      { prefix: '198.51.103.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.4', dev: 'd0', onlink: true }] },
      {
        prefix: '198.51.100.0/24',
        type: 'unicast',
        metric: 5,
        nexthops: [
          { via: '192.0.2.5', dev: 'd0' },
          { via: '192.0.2.6', dev: 'd0' },
        ],
      },
      { prefix: '203.0.113.9/32', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.4', dev: 'd0' }] },
    ]);
    const v6 =
      '[{"dst":"2001:db8:6::/64","gateway":"fe80::1","dev":"d0","metric":1024,"flags":[],"pref":"medium"},{"type":"blackhole","dst":"2001:db8:1::/64","dev":"lo","metric":1024,"flags":[],"pref":"medium"}]';
    expect(parseRouteDump(v6, 6)).toEqual([
      { prefix: '2001:db8:6::/64', type: 'unicast', metric: 1024, nexthops: [{ via: 'fe80::1', dev: 'd0' }] },
      { prefix: '2001:db8:1::/64', type: 'blackhole', metric: 1024, nexthops: [] },
    ]);
    expect(parseRouteDump('', 4)).toEqual([]);
  });

  it('reads connected networks and `ip route get` answers', () => {
    expect(parseConnectedDump('[{"dst":"192.0.2.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"192.0.2.2","flags":[]}]', 4)).toEqual([
      { prefix: '192.0.2.0/24', dev: 'eth0' },
    ]);
    expect(parseRouteGet('[{"dst":"192.0.2.77","dev":"d0","prefsrc":"192.0.2.1","flags":[],"uid":0,"cache":[]}]')).toEqual({ dev: 'd0' });
    expect(parseRouteGet('[{"dst":"198.18.0.1","gateway":"192.0.2.1","dev":"d0","flags":[]}]')).toEqual({ via: '192.0.2.1', dev: 'd0' });
  });

  it('reads `ip -o -N monitor route link` lines', () => {
    expect(parseMonitorLine('198.51.100.0/24 proto 12 metric 5 \\\tnexthop via 192.0.2.5 dev d0 weight 1 \\\tnexthop via 192.0.2.6 dev d0 weight 1 ')).toEqual({
      kind: 'route',
      deleted: false,
      table: 254,
      protocol: 12,
      route: {
        prefix: '198.51.100.0/24',
        type: 'unicast',
        metric: 5,
        nexthops: [
          { via: '192.0.2.5', dev: 'd0' },
          { via: '192.0.2.6', dev: 'd0' },
        ],
      },
    });
    expect(parseMonitorLine('Deleted 198.51.103.0/24 via 192.0.2.4 dev d0 table 100 proto 12 onlink ')).toEqual({
      kind: 'route',
      deleted: true,
      table: 100,
      protocol: 12,
      route: { prefix: '198.51.103.0/24', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.4', dev: 'd0', onlink: true }] },
    });
    expect(parseMonitorLine('6 198.51.102.0/24 table 100 proto 12 ')).toMatchObject({ kind: 'route', route: { type: 'blackhole', nexthops: [] }, table: 100 });
    expect(
      parseMonitorLine(
        '2001:db8:5::/64 table 100 proto 12 metric 1024 pref medium\\\tnexthop via 2001:db8:ffff::5 dev d0 weight 1 \\\tnexthop via 2001:db8:ffff::6 dev d0 weight 1 ',
      ),
    ).toMatchObject({
      route: {
        prefix: '2001:db8:5::/64',
        metric: 1024,
        nexthops: [
          { via: '2001:db8:ffff::5', dev: 'd0' },
          { via: '2001:db8:ffff::6', dev: 'd0' },
        ],
      },
    });
    expect(
      parseMonitorLine(
        '3: d0@d1: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500 qdisc noqueue state LOWERLAYERDOWN group 0 \\    link/[1] 8e:64:09:9b:53:71 brd ff:ff:ff:ff:ff:ff',
      ),
    ).toEqual({ kind: 'link', name: 'd0', deleted: false });
    expect(parseMonitorLine('Deleted fe80::/64 dev d1 proto 2 metric 256 pref medium')).toMatchObject({
      kind: 'route',
      deleted: true,
      protocol: 2,
      table: 254,
    });
  });

  it('maps `ip -force -batch` errors to their lines', () => {
    const stderr = 'Error: Nexthop has invalid gateway.\nCommand failed -:2\nCannot find device "tunl0"\nCommand failed -:4\n';
    expect([...parseBatchErrors(stderr)]).toEqual([
      [2, 'Nexthop has invalid gateway.'],
      [4, 'Cannot find device "tunl0"'],
    ]);
  });

  it('reads rt_tables', () => {
    expect([...parseRtTables('#\n255\tlocal\n254\tmain\n100 pods # ours\n')]).toEqual([
      ['local', 255],
      ['main', 254],
      ['pods', 100],
    ]);
  });
});

describe("routes of other programs (BIRD's learn)", () => {
  it("`ip -N -j route show table T`: boot (left out by iproute2) and other protocols kept; the kernel's, ours, unspec and redirects not", () => {
    const dump = JSON.stringify([
      { dst: '198.19.0.70', dev: 'caliA', scope: 'link', metric: 1024, flags: [] }, // Felix: proto boot, not printed
      { dst: '192.0.2.0/24', dev: 'eth1', protocol: '2', scope: '253', flags: [] }, // the kernel's own
      { dst: '198.19.0.64/26', gateway: '192.0.2.12', dev: 'eth1', protocol: '12', metric: 1024, flags: [] }, // ours
      { dst: 'default', gateway: '192.0.2.1', dev: 'eth1', protocol: '16', flags: [] }, // dhcp
      { type: 'blackhole', dst: '198.19.128.0/26', protocol: '80', flags: [] }, // Felix's blackhole for a VXLAN block
      { dst: '203.0.113.0/24', protocol: '0', dev: 'eth1', flags: [] },
    ]);
    expect(parseLearnedDump(dump, 4, 12)).toEqual([
      { source: 'kernel', protocol: 3, route: { prefix: '198.19.0.70/32', type: 'unicast', metric: 1024, nexthops: [{ dev: 'caliA' }] } },
      { source: 'kernel', protocol: 16, route: { prefix: '0.0.0.0/0', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.1', dev: 'eth1' }] } },
      { source: 'kernel', protocol: 80, route: { prefix: '198.19.128.0/26', type: 'blackhole', metric: 0, nexthops: [] } },
    ]);
    expect(parseLearnedDump(JSON.stringify([{ dst: '2001:db8:1::5', dev: 'caliB', metric: 1024, flags: [] }]), 6, 12)[0].route.prefix).toBe(
      '2001:db8:1::5/128',
    );
    expect(parseLearnedDump('', 4, 12)).toEqual([]);
    expect([0, 1, 2, 3, 12, 80].map((p) => isLearnedProtocol(p, 12))).toEqual([false, false, false, true, false, true]);
  });

  it("a monitor line of Felix's route carries its protocol and interface", () => {
    expect(parseMonitorLine('198.19.0.70 dev caliA proto 3 scope link metric 1024')).toEqual({
      kind: 'route',
      deleted: false,
      table: 254,
      protocol: 3,
      route: { prefix: '198.19.0.70/32', type: 'unicast', metric: 1024, nexthops: [{ dev: 'caliA' }] },
    });
  });
});

describe('parseMonitorLine on a batch of echoes (the parse of the rest of the line is kept)', () => {
  const tail = ' proto 12 linkdown \\\tnexthop via 192.0.2.7 dev v0 weight 1 linkdown \\\tnexthop via 192.0.2.8 dev v0 weight 1 linkdown ';
  const hops = [
    { via: '192.0.2.7', dev: 'v0' },
    { via: '192.0.2.8', dev: 'v0' },
  ];

  it('each line keeps its own destination, deletion and family; links stay links', () => {
    const evs = ['198.18.0.1', '198.18.0.2', 'Deleted 198.18.0.1', '198.18.1.0/24', 'Deleted 198.18.0.3', '198.18.0.4'].map((h) =>
      parseMonitorLine(`${h}${tail}`),
    );
    expect(evs.map((e) => (e.kind === 'route' ? [e.deleted, e.route.prefix, e.protocol, e.table, e.route.metric, e.route.nexthops] : e.kind))).toEqual([
      [false, '198.18.0.1/32', 12, 254, 0, hops],
      [false, '198.18.0.2/32', 12, 254, 0, hops],
      [true, '198.18.0.1/32', 12, 254, 0, hops],
      [false, '198.18.1.0/24', 12, 254, 0, hops],
      [true, '198.18.0.3/32', 12, 254, 0, hops],
      [false, '198.18.0.4/32', 12, 254, 0, hops],
    ]);
    const v6 = ' via 2001:db8:ffff::7 dev v0 proto 12 metric 1024 pref medium';
    expect(
      [parseMonitorLine(`2001:db8:1::/64${v6}`), parseMonitorLine(`2001:db8:2::/64${v6}`)].map((e) =>
        e.kind === 'route' ? [e.route.prefix, e.route.metric, e.route.nexthops] : e.kind,
      ),
    ).toEqual([
      ['2001:db8:1::/64', 1024, [{ via: '2001:db8:ffff::7', dev: 'v0' }]],
      ['2001:db8:2::/64', 1024, [{ via: '2001:db8:ffff::7', dev: 'v0' }]],
    ]);
    // an IPv4 destination with an IPv6 next hop is read as IPv6 every time, not from a kept IPv4 parse
    const mixed = ' proto 12 \\\tnexthop via inet6 fe80::1 dev v0 weight 1 ';
    expect(
      [parseMonitorLine(`198.18.0.9${mixed}`), parseMonitorLine(`198.18.0.10${mixed}`)].map((e) => (e.kind === 'route' ? e.route.nexthops : e.kind)),
    ).toEqual([[{ via: 'fe80::1', dev: 'v0' }], [{ via: 'fe80::1', dev: 'v0' }]]);
    expect(parseMonitorLine('3: v0@v1: <BROADCAST,MULTICAST,UP> mtu 1500 qdisc noqueue state UP')).toMatchObject({ kind: 'link', name: 'v0' });
    expect(parseMonitorLine('Deleted 3: v0@v1: <BROADCAST,MULTICAST> mtu 1500')).toMatchObject({ kind: 'link', name: 'v0', deleted: true });
    // a destination that is not an address is still no route, though the rest of its line is known
    expect(parseMonitorLine(`198.018.0.1${tail}`)).toEqual({ kind: 'other' });
  });
});
