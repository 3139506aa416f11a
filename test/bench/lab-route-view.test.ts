import { describe, expect, it } from 'vitest';
import { ipStamp, isOverrun, parseRouteLine, routeEventLine, RouteView } from '../../bench/lab/route-view.js';

const two = '198.18.0.1 proto bgp metric 32 \tnexthop via 192.0.2.7 dev d0 weight 1 \tnexthop via 192.0.2.8 dev d0 weight 1 ';
const one = (dst: string) => `${dst} via 192.0.2.7 dev d0 proto bird metric 32 `;
const ours = (dst: string) => dst.startsWith('198.1');

describe('bench/lab/route-view: parsing `ip -o [-ts] monitor route` and `ip -o route show` lines', () => {
  it('reads the timestamp to the microsecond, the prefix, deletion and next hops', () => {
    const r = parseRouteLine(`[2026-12-04T17:46:45.141511] ${two}`)!;
    expect(r.at).toBeCloseTo(new Date('2026-12-04T17:46:45.141').getTime() + 0.511, 6);
    expect(r).toMatchObject({ dst: '198.18.0.1', deleted: false, hops: 2, probe: false });
    expect(parseRouteLine(`[2026-12-04T17:46:45.141511] Deleted ${one('198.18.0.2')}`)).toMatchObject({ dst: '198.18.0.2', deleted: true, hops: 0 });
    expect(parseRouteLine(one('198.18.0.3'))).toMatchObject({ at: undefined, dst: '198.18.0.3', hops: 1 });
    expect(parseRouteLine('[2026-12-04T17:46:45.141511] 203.0.113.99 dev d0 scope link ')).toMatchObject({ probe: true });
  });

  it('leaves out what is not a main-table IPv4 route', () => {
    expect(parseRouteLine('local 192.0.2.1 dev d0 table local proto kernel scope host src 192.0.2.1 ')).toBeUndefined();
    expect(parseRouteLine('198.18.0.1 via 192.0.2.7 dev d0 table 200 ')).toBeUndefined();
    expect(parseRouteLine('[not a time] 198.18.0.1 via 192.0.2.7 dev d0')).toBeUndefined();
    expect(parseRouteLine('')).toBeUndefined();
  });

  it('knows an overrun from another error', () => {
    expect(isOverrun('netlink receive error No buffer space available (105)')).toBe(true);
    expect(isOverrun('Cannot open network namespace "x": No such file or directory')).toBe(false);
  });
});

describe('bench/lab/route-view: the view, and its resync from a dump after lost notifications', () => {
  it('counts routes with two next hops as notifications come', () => {
    const v = new RouteView(ours);
    expect(v.line(one('198.18.0.1'))).toBe(true);
    expect(v.two).toBe(0);
    v.line(two);
    expect([v.two, v.hops.size, v.events]).toEqual([1, 1, 2]);
    expect(v.line(one('10.0.0.1'))).toBe(false);
    v.line(`Deleted ${two}`);
    expect([v.two, v.hops.size, v.events]).toEqual([0, 0, 3]);
  });

  it('a dump replaces what lost notifications would have said, and later lines still apply', () => {
    const v = new RouteView(ours);
    v.line(one('198.18.0.1'));
    v.line(one('198.18.0.9')); // deleted while notifications were lost
    // lost: 198.18.0.1 gets its second next hop, 198.18.0.2 arrives with two, 198.18.0.9 goes
    v.resync([two, two.replace('198.18.0.1', '198.18.0.2'), 'default via 192.0.2.254 dev d0 ', ''].join('\n'));
    expect([...v.hops.entries()].sort()).toEqual([
      ['198.18.0.1', 2],
      ['198.18.0.2', 2],
    ]);
    expect([v.two, v.resyncs]).toEqual([2, 1]);
    // a line written while the dump was read, applied after it: the route's latest state wins
    v.line(`Deleted ${two}`);
    expect([v.two, v.hops.size]).toEqual([1, 1]);
  });

  it('an empty dump empties the view (everything was withdrawn while the monitor was deaf)', () => {
    const v = new RouteView(ours);
    v.line(two);
    v.resync('');
    expect([v.two, v.hops.size]).toEqual([0, 0]);
  });
});

describe('bench/lab/route-view: rtnl-monitor.ts writes what the parser reads', () => {
  it('round-trips a notification, its time to the microsecond', () => {
    const at = new Date(2026, 11, 4, 17, 46, 45, 141).getTime() + 0.511;
    const line = routeEventLine(at, {
      deleted: false,
      table: 254,
      route: {
        prefix: '198.18.0.1/32',
        nexthops: [
          { via: '192.0.2.7', dev: 'd0' },
          { via: '192.0.2.8', dev: 'd0' },
        ],
      },
    });
    expect(line.startsWith('[2026-12-04T17:46:45.141511] 198.18.0.1 ')).toBe(true);
    const r = parseRouteLine(line)!;
    expect(r.at).toBeCloseTo(at, 3);
    expect(r).toMatchObject({ dst: '198.18.0.1', hops: 2, deleted: false });
    expect(
      parseRouteLine(routeEventLine(at, { deleted: true, table: 254, route: { prefix: '198.18.0.2/32', nexthops: [{ via: '192.0.2.7' }] } })),
    ).toMatchObject({ dst: '198.18.0.2', deleted: true, hops: 0 });
    expect(
      parseRouteLine(routeEventLine(at, { deleted: false, table: 200, route: { prefix: '198.18.0.3/32', nexthops: [{ via: '192.0.2.7' }] } })),
    ).toBeUndefined();
    expect(ipStamp(at + 1001.000999)).toBe('2026-12-04T17:46:46.142512');
  });
});
