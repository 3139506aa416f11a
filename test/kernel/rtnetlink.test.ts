import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseMonitorLine } from '../../src/kernel/iproute2.js';
import {
  decodeNotifications,
  dropSenderFilter,
  encodeRouteOp,
  firstSender,
  NLMSG_ERROR,
  othersMessages,
  parseAckDetails,
  parseAcks,
  RouteEncoder,
  RTM_DELROUTE,
  RTM_NEWROUTE,
  viaText,
} from '../../src/kernel/rtnetlink.js';
import fc from 'fast-check';
import type { KernelEvent, KernelOp, KernelRoute } from '../../src/kernel/types.js';
import { Prefix } from '../../src/net/prefix.js';

/** Attributes after the rtmsg: type → value bytes. */
function attrs(b: Buffer, from: number, to: number): Map<number, Buffer> {
  const m = new Map<number, Buffer>();
  for (let at = from; at + 4 <= to;) {
    const len = b.readUInt16LE(at);
    m.set(b.readUInt16LE(at + 2), b.subarray(at + 4, at + len));
    at += (len + 3) & ~3;
  }
  return m;
}

const ifindex = (d: string) => ({ eth0: 2, eth1: 3 })[d];

describe('rtnetlink encoding', () => {
  it('a two-next-hop replace: RTM_NEWROUTE with create|replace|ack, table, dst, metric and RTA_MULTIPATH', () => {
    const route: KernelRoute = {
      prefix: '198.18.0.0/15',
      type: 'unicast',
      metric: 1024,
      nexthops: [
        { via: '192.0.2.7', dev: 'eth0' },
        { via: '192.0.2.8', dev: 'eth1', onlink: true },
      ],
    };
    const b = encodeRouteOp({ op: 'replace', route }, 1000, 12, 77, ifindex);
    expect(b.readUInt32LE(0)).toBe(b.length);
    expect(b.readUInt16LE(4)).toBe(RTM_NEWROUTE);
    expect(b.readUInt16LE(6)).toBe(0x1 | 0x4 | 0x100 | 0x400);
    expect(b.readUInt32LE(8)).toBe(77);
    // rtmsg: family, dst_len, src_len, tos, table (compat 252 above 255), protocol, scope, type
    expect([...b.subarray(16, 24)]).toEqual([2, 15, 0, 0, 252, 12, 0, 1]);
    const a = attrs(b, 28, b.length);
    expect(a.get(15)!.readUInt32LE(0)).toBe(1000); // RTA_TABLE
    expect([...a.get(1)!]).toEqual([198, 18, 0, 0]); // RTA_DST
    expect(a.get(6)!.readUInt32LE(0)).toBe(1024); // RTA_PRIORITY
    const mp = a.get(9)!; // RTA_MULTIPATH: rtnexthop {len, flags, hops, ifindex} + RTA_GATEWAY
    expect(mp.length).toBe(2 * 16);
    expect([mp.readUInt16LE(0), mp[2], mp.readInt32LE(4)]).toEqual([16, 0, 2]);
    expect([...mp.subarray(12, 16)]).toEqual([192, 0, 2, 7]);
    expect([mp.readUInt16LE(16), mp[18], mp.readInt32LE(20)]).toEqual([16, 4, 3]);
    expect([...mp.subarray(28, 32)]).toEqual([192, 0, 2, 8]);
  });

  it('single next hop, IPv6, blackhole and delete', () => {
    const one = encodeRouteOp(
      { op: 'replace', route: { prefix: '2001:db8::/32', type: 'unicast', metric: 5, nexthops: [{ via: 'fe80::1', dev: 'eth1' }] } },
      254,
      12,
      1,
      ifindex,
    );
    expect([...one.subarray(16, 24)]).toEqual([10, 32, 0, 0, 254, 12, 0, 1]);
    const a = attrs(one, 28, one.length);
    expect(a.get(1)!.length).toBe(16);
    expect(a.get(5)!.toString('hex')).toBe('fe800000000000000000000000000001'); // RTA_GATEWAY
    expect(a.get(4)!.readUInt32LE(0)).toBe(3); // RTA_OIF
    const bh = encodeRouteOp({ op: 'replace', route: { prefix: '198.19.0.0/26', type: 'blackhole', metric: 0, nexthops: [] } }, 254, 12, 2, ifindex);
    expect(bh[23]).toBe(6);
    expect(attrs(bh, 28, bh.length).has(9)).toBe(false);
    const del = encodeRouteOp(
      { op: 'delete', route: { prefix: '198.19.0.0/26', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] } },
      254,
      12,
      3,
      ifindex,
    );
    expect(del.readUInt16LE(4)).toBe(RTM_DELROUTE);
    expect(del.readUInt16LE(6)).toBe(0x1 | 0x4);
    expect([del[22], del[23]]).toEqual([255, 0]); // scope nowhere, any type: matched by dst, table, protocol, metric
    expect(attrs(del, 28, del.length).has(5)).toBe(false);
  });

  it('an interface that does not exist is an error naming it', () => {
    expect(() =>
      encodeRouteOp(
        { op: 'replace', route: { prefix: '198.19.0.0/26', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'tunl0', onlink: true }] } },
        254,
        12,
        1,
        ifindex,
      ),
    ).toThrow('Cannot find device "tunl0"');
  });

  it('acknowledgements: one result per sequence number, errno positive, other messages skipped', () => {
    const ack = (seq: number, err: number, extra = 0) => {
      const b = Buffer.alloc(36 + extra);
      b.writeUInt32LE(36 + extra, 0);
      b.writeUInt16LE(NLMSG_ERROR, 4);
      b.writeUInt32LE(seq, 8);
      b.writeInt32LE(err, 16);
      return b;
    };
    const other = Buffer.alloc(20);
    other.writeUInt32LE(20, 0);
    other.writeUInt16LE(RTM_NEWROUTE, 4);
    const got = parseAcks(Buffer.concat([ack(1, 0), other, ack(2, -101, 8), ack(3, -3)]));
    expect([...got]).toEqual([
      [1, 0],
      [2, 101],
      [3, 3],
    ]);
    // a truncated datagram stops the walk instead of reading past it
    expect(parseAcks(ack(9, 0).subarray(0, 30)).size).toBe(0);
  });
});

describe('RouteEncoder and extended acknowledgements', () => {
  const route = (
    prefix: string,
    hops = [
      { via: '192.0.2.7', dev: 'eth0' },
      { via: '192.0.2.8', dev: 'eth1' },
    ],
  ): KernelRoute => ({ prefix, type: 'unicast', metric: 0, nexthops: hops });

  it('without an acknowledgement asked (the writer: the kernel then answers refusals only), only the NLM_F_ACK bit differs', () => {
    const op = { op: 'replace' as const, route: route('198.18.0.1/32') };
    const withAck = new RouteEncoder(254, 12);
    withAck.add(op, 5, ifindex);
    const without = new RouteEncoder(254, 12);
    without.add(op, 5, ifindex, false);
    expect(withAck.bytes.readUInt16LE(6)).toBe(0x1 | 0x4 | 0x100 | 0x400);
    expect(without.bytes.readUInt16LE(6)).toBe(0x1 | 0x100 | 0x400);
    const a = Buffer.from(withAck.bytes);
    a.writeUInt16LE(0x1 | 0x100 | 0x400, 6);
    expect(a.equals(without.bytes)).toBe(true);
  });

  it('a chunk is the requests one after another, each as encodeRouteOp writes it alone', () => {
    const e = new RouteEncoder(254, 12);
    const ops = [
      { op: 'replace' as const, route: route('198.18.0.1/32') },
      { op: 'replace' as const, route: route('2001:db8:1::/48', [{ via: 'fe80::1', dev: 'eth0' }]) },
      { op: 'delete' as const, route: route('198.18.255.0/24') },
      { op: 'replace' as const, route: { prefix: '203.0.113.0/26', type: 'blackhole' as const, metric: 7, nexthops: [] } },
    ];
    ops.forEach((op, i) => e.add(op, 100 + i, ifindex));
    const alone = Buffer.concat(ops.map((op, i) => encodeRouteOp(op, 254, 12, 100 + i, ifindex)));
    expect(e.bytes.equals(alone)).toBe(true);
    // each request starts where the previous one's length says
    let at = 0;
    const seqs: number[] = [];
    while (at < e.length) {
      seqs.push(e.bytes.readUInt32LE(at + 8));
      at += e.bytes.readUInt32LE(at);
    }
    expect(seqs).toEqual([100, 101, 102, 103]);
    e.reset();
    expect(e.length).toBe(0);
  });

  it('routes sharing one next-hop array (the next hops encoded once, then copied) encode as each alone, whatever comes between', () => {
    const two = [
      { via: '192.0.2.7', dev: 'eth0' },
      { via: '192.0.2.8', dev: 'eth1' },
    ];
    const onlink = [{ via: '192.0.2.50', dev: 'eth1', onlink: true }];
    const six = [
      { via: '2001:db8:ffff::7', dev: 'eth0' },
      { via: '2001:db8:ffff::8', dev: 'eth0' },
    ];
    const renamed = (n: string) => (n === 'eth0' ? 9 : n === 'eth1' ? 8 : undefined);
    const ops: { op: KernelOp; ix: typeof ifindex }[] = [];
    for (let i = 0; i < 6; i++) ops.push({ op: { op: 'replace', route: route(`198.18.0.${i}/32`, two) }, ix: ifindex });
    ops.push({ op: { op: 'replace', route: route('198.18.1.0/24', onlink) }, ix: ifindex });
    ops.push({ op: { op: 'replace', route: route('198.18.1.1/32', onlink) }, ix: ifindex });
    ops.push({ op: { op: 'delete', route: route('198.18.0.0/32', two) }, ix: ifindex });
    ops.push({ op: { op: 'replace', route: route('198.18.0.9/32', two) }, ix: ifindex });
    ops.push({ op: { op: 'replace', route: { prefix: '198.18.2.0/24', type: 'blackhole', metric: 0, nexthops: [] } }, ix: ifindex });
    // the same array through another interface lookup (the next write's): other indexes
    ops.push({ op: { op: 'replace', route: route('198.18.0.10/32', two) }, ix: renamed });
    ops.push({ op: { op: 'replace', route: route('198.18.0.11/32', two) }, ix: renamed });
    for (let i = 0; i < 3; i++)
      ops.push({ op: { op: 'replace', route: { prefix: `2001:db8:${i}::/64`, type: 'unicast', metric: 1024, nexthops: six } }, ix: ifindex });
    const e = new RouteEncoder(254, 12);
    ops.forEach(({ op, ix }, i) => e.add(op, 100 + i, ix, false));
    const alone = Buffer.concat(
      ops.map(({ op, ix }, i) => {
        const one = new RouteEncoder(254, 12);
        one.add(op, 100 + i, ix, false);
        return Buffer.from(one.bytes);
      }),
    );
    expect(e.bytes.equals(alone)).toBe(true);
    // the onlink flag of a single next hop is in rtm_flags of each route that copies it
    let at = 0;
    const flags: number[] = [];
    while (at < e.length) {
      flags.push(e.bytes.readUInt32LE(at + 16 + 8));
      at += e.bytes.readUInt32LE(at);
    }
    expect(flags.slice(6, 8)).toEqual([4, 4]);
    expect(flags.filter((f) => f !== 0)).toHaveLength(2);
  });

  it('IPv4 destinations written from text match the full parser, and bad text is still refused', () => {
    for (const p of ['0.0.0.0/0', '198.18.0.1/32', '255.255.255.255/32', '10.1.2.0/24']) {
      const b = encodeRouteOp({ op: 'delete', route: route(p) }, 254, 12, 1, ifindex);
      expect([...attrs(b, 28, b.length).get(1)!].join('.')).toBe(p.split('/')[0]);
      expect(b[17]).toBe(Number(p.split('/')[1]));
    }
    for (const bad of ['198.18.0.256/32', '198.18.0/24', '198.18.0.1/33', '1.2.3.4.5/32'])
      expect(() => encodeRouteOp({ op: 'delete', route: route(bad) }, 254, 12, 1, ifindex)).toThrow();
  });

  it('a missing interface throws and leaves nothing half written in the chunk', () => {
    const e = new RouteEncoder(254, 12);
    e.add({ op: 'replace', route: route('198.18.0.1/32') }, 1, ifindex);
    const before = Buffer.from(e.bytes);
    expect(() =>
      e.add(
        {
          op: 'replace',
          route: route('198.18.0.2/32', [
            { via: '192.0.2.7', dev: 'eth0' },
            { via: '192.0.2.8', dev: 'tunl0' },
          ]),
        },
        2,
        ifindex,
      ),
    ).toThrow('Cannot find device "tunl0"');
    expect(e.bytes.equals(before)).toBe(true);
    // a chunk larger than the first buffer grows it
    for (let i = 0; i < 2000; i++) e.add({ op: 'replace', route: route(`198.18.${i >> 8}.${i & 255}/32`) }, 10 + i, ifindex);
    expect(e.length).toBe(before.length * 2001);
  });

  it('an error acknowledgement with NLMSGERR_ATTR_MSG gives the kernel message, capped or not', () => {
    const msg = Buffer.from('Nexthop has invalid gateway\0');
    const tlv = Buffer.alloc((4 + msg.length + 3) & ~3);
    tlv.writeUInt16LE(4 + msg.length, 0);
    tlv.writeUInt16LE(1, 2);
    msg.copy(tlv, 4);
    const ack = (seq: number, err: number, echoed: Buffer, flags: number) => {
      const head = Buffer.alloc(20);
      head.writeUInt16LE(NLMSG_ERROR, 4);
      head.writeUInt16LE(flags, 6);
      head.writeUInt32LE(seq, 8);
      head.writeInt32LE(err, 16);
      const b = Buffer.concat([head, echoed, flags & 0x200 ? tlv : Buffer.alloc(0)]);
      b.writeUInt32LE(b.length, 0);
      return b;
    };
    const request = encodeRouteOp({ op: 'replace', route: route('198.18.0.1/32') }, 254, 12, 5, ifindex);
    const capped = ack(5, -101, request.subarray(0, 16), 0x100 | 0x200);
    const full = ack(6, -101, request, 0x200);
    const plain = ack(7, -19, request.subarray(0, 16), 0x100);
    const ok = ack(8, 0, request.subarray(0, 16), 0x100);
    expect([...parseAckDetails(Buffer.concat([capped, full, plain, ok]))]).toEqual([
      [5, { errno: 101, message: 'Nexthop has invalid gateway' }],
      [6, { errno: 101, message: 'Nexthop has invalid gateway' }],
      [7, { errno: 19 }],
      [8, { errno: 0 }],
    ]);
  });
});

describe('IPv6 destinations written from text', () => {
  it('match the full parser for every form (compressed, leading and trailing ::, upper case), and bad text is refused', () => {
    const dst = (p: string) => {
      const b = encodeRouteOp({ op: 'delete', route: { prefix: p, type: 'unicast', metric: 1024, nexthops: [] } }, 254, 12, 1, () => undefined);
      return [b[17], attrs(b, 28, b.length).get(1)!.toString('hex')];
    };
    const hex = (p: string) => [Number(p.split('/')[1]), Buffer.from(Prefix.parse(p).network.toBytes()).toString('hex')];
    for (const p of [
      '::/0',
      '2001:db8::/32',
      '2001:db8:1:2::/64',
      '2001:db8:0:0:1::/80',
      '::1/128',
      '2001:DB8:ABCD::/48',
      '2001:db8:1:2:3:4:5:6/128',
      'fe80::/10',
      '2001:db8::1:0/128',
      '1::/16',
    ])
      expect(dst(p), p).toEqual(hex(p));
    // any address as fast-check writes it (compressed or not, any case), and as we print it
    fc.assert(
      fc.property(fc.ipV6(), (a) => {
        if (a.includes('.')) return; // embedded IPv4: the full parser's case
        const want = Buffer.from(Prefix.parse(`${a}/128`).network.toBytes()).toString('hex');
        expect(dst(`${a}/128`)).toEqual([128, want]);
        expect(dst(`${Prefix.parse(`${a}/128`).network.toString()}/128`)).toEqual([128, want]);
      }),
      { numRuns: 500 },
    );
    for (const bad of [
      '2001:db8:::/48',
      '2001:db8::1::/64',
      '2001:db8:12345::/48',
      '2001:db8:/32',
      ':2001:db8::/32',
      '2001:db8::/129',
      '1:2:3:4:5:6:7:8:9/128',
    ])
      expect(() => dst(bad), bad).toThrow();
  });
});

/**
 * Notifications as the kernel sent them (Linux 6.x, captured with
 * test/kernel/fixtures/capture-rtnl.mts in a scratch namespace: each change
 * made with `ip`, the datagrams a socket joined to LISTENER_GROUPS received).
 */
describe('rtnetlink notifications (captured bytes)', () => {
  const captured = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'rtnl-notifications.json'), 'utf8')) as Record<
    string,
    string[]
  >;
  const steps = Object.entries(captured).map(([what, hex]) => ({ what, datagrams: hex.map((h) => Buffer.from(h, 'hex')) }));
  /** Decodes every step in order with one interface map, as the listener does. */
  const decodeAll = () => {
    const names = new Map<number, string>();
    return { names, events: steps.map((s) => ({ what: s.what, events: s.datagrams.flatMap((d) => decodeNotifications(d, names)) })) };
  };
  const routesOf = (events: KernelEvent[]) => events.filter((e) => e.kind === 'route');

  it('a link appearing and coming up: link events, and its index named from then on', () => {
    const { names, events } = decodeAll();
    expect(events[0].events).toEqual([
      { kind: 'link', name: 'v1', deleted: false },
      { kind: 'link', name: 'v0', deleted: false },
    ]);
    expect([...names.values()].sort()).toEqual(['v0', 'v1']);
    expect(events[2].events[0]).toEqual({ kind: 'link', name: 'v0', deleted: false });
  });

  it("an address: the kernel's own routes (protocol 2) for it; the address message itself is nothing to us", () => {
    const { events } = decodeAll();
    const addr = events[1].events;
    expect(addr[0]).toEqual({ kind: 'other' });
    // the connected network (table main, proto kernel) appears once the link is up
    const connected = routesOf(events[2].events).find((e) => e.kind === 'route' && e.table === 254);
    expect(connected).toEqual({
      kind: 'route',
      deleted: false,
      table: 254,
      protocol: 2,
      route: { prefix: '192.0.2.0/24', type: 'unicast', metric: 0, nexthops: [{ dev: 'v0' }] },
    });
  });

  it('routes: one next hop with a metric, ECMP (sorted), a blackhole, onlink in a table above 255, IPv6, and a delete', () => {
    const { events } = decodeAll();
    const by = (what: string) => events.find((e) => e.what.startsWith(what))!.events;
    expect(by('route add 203.0.113.0/26')).toEqual([
      {
        kind: 'route',
        deleted: false,
        table: 254,
        protocol: 12,
        route: { prefix: '203.0.113.0/26', type: 'unicast', metric: 5, nexthops: [{ via: '192.0.2.7', dev: 'v0' }] },
      },
    ]);
    expect(by('route add 198.18.0.1/32')).toEqual([
      {
        kind: 'route',
        deleted: false,
        table: 100,
        protocol: 12,
        route: {
          prefix: '198.18.0.1/32',
          type: 'unicast',
          metric: 0,
          nexthops: [
            { via: '192.0.2.7', dev: 'v0' },
            { via: '192.0.2.8', dev: 'v0' },
          ],
        },
      },
    ]);
    expect(by('route add blackhole')).toEqual([
      { kind: 'route', deleted: false, table: 254, protocol: 12, route: { prefix: '203.0.113.128/26', type: 'blackhole', metric: 0, nexthops: [] } },
    ]);
    expect(by('route add 203.0.113.64/26')).toEqual([
      {
        kind: 'route',
        deleted: false,
        table: 1000,
        protocol: 12,
        route: { prefix: '203.0.113.64/26', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.9', dev: 'v0', onlink: true }] },
      },
    ]);
    expect(by('route add 2001:db8:1::/64')).toEqual([
      {
        kind: 'route',
        deleted: false,
        table: 254,
        protocol: 12,
        route: { prefix: '2001:db8:1::/64', type: 'unicast', metric: 1024, nexthops: [{ via: '2001:db8::7', dev: 'v0' }] },
      },
    ]);
    expect(by('route del 203.0.113.0/26')).toEqual([
      {
        kind: 'route',
        deleted: true,
        table: 254,
        protocol: 12,
        route: { prefix: '203.0.113.0/26', type: 'unicast', metric: 5, nexthops: [{ via: '192.0.2.7', dev: 'v0' }] },
      },
    ]);
  });

  it('the same change reads the same as `ip monitor` reports it', () => {
    const { events } = decodeAll();
    const ecmp = events.find((e) => e.what.startsWith('route add 198.18.0.1/32'))!.events[0];
    expect(ecmp).toEqual(
      parseMonitorLine('198.18.0.1 table 100 proto 12 \\\tnexthop via 192.0.2.8 dev v0 weight 1 \\\tnexthop via 192.0.2.7 dev v0 weight 1 '),
    );
    const del = events.find((e) => e.what.startsWith('route del'))!.events[0];
    expect(del).toEqual(parseMonitorLine('Deleted 203.0.113.0/26 via 192.0.2.7 dev v0 proto 12 metric 5 '));
  });

  it('an interface index not known yet reads as if#N; a truncated message ends the walk', () => {
    const ecmp = steps.find((s) => s.what.startsWith('route add 198.18.0.1/32'))!.datagrams[0];
    const [ev] = decodeNotifications(ecmp, new Map());
    expect(ev.kind === 'route' && ev.route.nexthops.every((h) => /^if#\d+$/.test(h.dev ?? ''))).toBe(true);
    expect(decodeNotifications(ecmp.subarray(0, ecmp.length - 4), new Map())).toEqual([]);
  });

  it("the same next hops decoded again (a burst of echoes) read the same, and under an interface's new name once it is renamed", () => {
    const { names } = decodeAll();
    const ecmp = steps.find((s) => s.what.startsWith('route add 198.18.0.1/32'))!.datagrams[0];
    const first = decodeNotifications(ecmp, names)[0];
    expect(decodeNotifications(ecmp, names)[0]).toEqual(first);
    const v0 = [...names].find(([, n]) => n === 'v0')![0];
    names.set(v0, 'uplink');
    const renamed = decodeNotifications(ecmp, names)[0];
    expect(renamed.kind === 'route' && renamed.route.nexthops).toEqual([
      { via: '192.0.2.7', dev: 'uplink' },
      { via: '192.0.2.8', dev: 'uplink' },
    ]);
  });

  it('othersMessages leaves out the messages a port caused, by header only', () => {
    const a = steps.find((s) => s.what.startsWith('route add 203.0.113.0/26'))!.datagrams[0];
    const b = steps.find((s) => s.what.startsWith('route add blackhole'))!.datagrams[0];
    const ipPid = firstSender(a)!;
    expect(ipPid).toBeGreaterThan(0); // `ip`'s port: the notification names the requester
    const mine = Buffer.from(b);
    mine.writeUInt32LE(4242, 12);
    expect(othersMessages(a, 4242)).toBe(a);
    expect(othersMessages(mine, 4242)).toBeUndefined();
    const mixed = Buffer.concat([mine, a, mine]);
    expect(Buffer.from(othersMessages(mixed, 4242)!)).toEqual(a);
    expect(decodeNotifications(othersMessages(mixed, 4242)!, new Map()).length).toBe(1);
  });

  it('dropSenderFilter: a classic BPF program that drops exactly the datagrams from one port', () => {
    /** A tiny interpreter of the instructions it uses (ld [k] word, big-endian; jeq #k; ret #k). */
    const run = (program: Uint8Array, pkt: Buffer): number => {
      const v = new DataView(program.buffer, program.byteOffset, program.byteLength);
      let acc = 0;
      for (let pc = 0; pc * 8 < program.length; pc++) {
        const code = v.getUint16(pc * 8, true),
          jt = v.getUint8(pc * 8 + 2),
          jf = v.getUint8(pc * 8 + 3),
          k = v.getUint32(pc * 8 + 4, true);
        if (code === 0x20) acc = pkt.readUInt32BE(k);
        else if (code === 0x15) pc += acc === k ? jt : jf;
        else if (code === 0x06) return k;
        else throw new Error(`unexpected instruction ${code}`);
      }
      throw new Error('fell off the program');
    };
    const pkt = Buffer.from(steps.find((s) => s.what.startsWith('route add blackhole'))!.datagrams[0]);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 0xffffffff }), fc.integer({ min: 1, max: 0xffffffff }), (mine, other) => {
        const f = dropSenderFilter(mine);
        expect(f.count * 8).toBe(f.program.length);
        pkt.writeUInt32LE(mine, 12);
        expect(run(f.program, pkt)).toBe(0);
        pkt.writeUInt32LE(other, 12);
        expect(run(f.program, pkt)).toBe(other === mine ? 0 : 0xffffffff);
      }),
    );
  });
});

describe('viaText (RTA_VIA, a next hop of the other family)', () => {
  const v4 = Buffer.from([2, 0, 192, 0, 2, 7]);
  const v6 = Buffer.concat([Buffer.from([10, 0]), Buffer.from('20010db8000000000000000000000007', 'hex')]);
  it('reads an IPv4 and an IPv6 next hop', () => {
    expect(viaText(v4, 0, v4.length)).toBe('192.0.2.7');
    expect(viaText(v6, 0, v6.length)).toBe('2001:db8::7');
  });
  it('gives nothing for a value cut short at every length, one running past the buffer, or another family, and never reads outside', () => {
    for (const b of [v4, v6]) {
      for (let n = 0; n < b.length; n++) {
        expect(viaText(b, 0, n), `${n} of ${b.length} bytes`).toBeUndefined();
        expect(viaText(b.subarray(0, n), 0, b.length), `a ${n}-byte buffer`).toBeUndefined();
      }
    }
    expect(viaText(v4, 5, 7)).toBeUndefined();
    expect(viaText(Buffer.from([7, 0, 1, 2, 3, 4]), 0, 6)).toBeUndefined();
  });
});
