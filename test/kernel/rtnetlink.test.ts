import { describe, expect, it } from 'vitest';
import { encodeRouteOp, errnoReason, NLMSG_ERROR, parseAcks, RTM_DELROUTE, RTM_NEWROUTE } from '../../src/kernel/rtnetlink.js';
import type { KernelRoute } from '../../src/kernel/types.js';

/** Attributes after the rtmsg: type → value bytes. */
function attrs(b: Buffer, from: number, to: number): Map<number, Buffer> {
  const m = new Map<number, Buffer>();
  for (let at = from; at + 4 <= to; ) {
    const len = b.readUInt16LE(at);
    m.set(b.readUInt16LE(at + 2), b.subarray(at + 4, at + len));
    at += (len + 3) & ~3;
  }
  return m;
}

const ifindex = (d: string) => ({ eth0: 2, eth1: 3 })[d];

describe('rtnetlink encoding', () => {
  it('a two-next-hop replace: RTM_NEWROUTE with create|replace|ack, table, dst, metric and RTA_MULTIPATH', () => {
    const route: KernelRoute = { prefix: '198.18.0.0/15', type: 'unicast', metric: 1024, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }, { via: '192.0.2.8', dev: 'eth1', onlink: true }] };
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
    const one = encodeRouteOp({ op: 'replace', route: { prefix: '2001:db8::/32', type: 'unicast', metric: 5, nexthops: [{ via: 'fe80::1', dev: 'eth1' }] } }, 254, 12, 1, ifindex);
    expect([...one.subarray(16, 24)]).toEqual([10, 32, 0, 0, 254, 12, 0, 1]);
    const a = attrs(one, 28, one.length);
    expect(a.get(1)!.length).toBe(16);
    expect(a.get(5)!.toString('hex')).toBe('fe800000000000000000000000000001'); // RTA_GATEWAY
    expect(a.get(4)!.readUInt32LE(0)).toBe(3); // RTA_OIF
    const bh = encodeRouteOp({ op: 'replace', route: { prefix: '198.19.0.0/26', type: 'blackhole', metric: 0, nexthops: [] } }, 254, 12, 2, ifindex);
    expect(bh[23]).toBe(6);
    expect(attrs(bh, 28, bh.length).has(9)).toBe(false);
    const del = encodeRouteOp({ op: 'delete', route: { prefix: '198.19.0.0/26', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'eth0' }] } }, 254, 12, 3, ifindex);
    expect(del.readUInt16LE(4)).toBe(RTM_DELROUTE);
    expect(del.readUInt16LE(6)).toBe(0x1 | 0x4);
    expect([del[22], del[23]]).toEqual([255, 0]); // scope nowhere, any type: matched by dst, table, protocol, metric
    expect(attrs(del, 28, del.length).has(5)).toBe(false);
  });

  it('an interface that does not exist is an error naming it', () => {
    expect(() => encodeRouteOp({ op: 'replace', route: { prefix: '198.19.0.0/26', type: 'unicast', metric: 0, nexthops: [{ via: '192.0.2.7', dev: 'tunl0', onlink: true }] } }, 254, 12, 1, ifindex)).toThrow('Cannot find device "tunl0"');
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
    expect([...got]).toEqual([[1, 0], [2, 101], [3, 3]]);
    expect(errnoReason(101)).toBe('Network is unreachable');
    expect(errnoReason(3)).toBe('No such process');
    expect(errnoReason(999)).toBe('errno 999');
    // a truncated datagram stops the walk instead of reading past it
    expect(parseAcks(ack(9, 0).subarray(0, 30)).size).toBe(0);
  });
});
