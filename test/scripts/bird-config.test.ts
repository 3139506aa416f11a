import { describe, expect, it } from 'vitest';
import {
  bgpPeers,
  communitiesOf,
  FilterRunner,
  parseItems,
  prefixWithin,
  staticRoute,
  staticRoutes,
  bgpRoute,
  tokenize,
} from '../../scripts/corpus/bird-config.js';

// Small configurations written for these tests, in the shape confd renders.
const CONFIG = `
router id 192.0.2.1;
template bgp base {
  local as 65010;
  add paths on;
  graceful restart;
}
function tag_routes() {
  if (net ~ 198.51.100.0/24) then { bgp_community.add((65010, 7)); }
}
function export_all(bool internal) {
  if (net ~ 203.0.113.0/24) then { reject; } # hidden pool
  tag_routes();
  if ( net = 198.51.100.0/26 ) then { accept; }
  if ( net ~ 198.51.100.0/26 && krt_metric < 1024 ) then { accept; }
  if (net ~ 198.51.100.0/24) then { accept; }
}
protocol bgp Peer_a from base {
  neighbor 192.0.2.2 port 1179 as 65020;
  source address 192.0.2.1;
  password "s3cret";
  multihop 2;
  ttl security on;
  next hop keep;
  passive on;
  rr client;
  rr cluster id 192.0.2.1;
  graceful restart time 30;
  export filter {
    if (!defined(krt_metric)) then { krt_metric = 1024; }
    export_all(true);
    reject;
  };
  import all;
}
protocol bgp Peer_b from base {
  neighbor 192.0.2.3 as 65010;
  add paths rx;
  local as 65011;
  allow local as 2;
  export none;
}
template static statics {
  route 198.51.100.0/26 blackhole;
  route 203.0.113.0/25 blackhole;
  route 192.0.2.99/32 via 192.0.2.254;
}
protocol static from statics {
}
filter calico_kernel_programming {
  if (net ~ 198.51.100.0/24) then { if (defined(bgp_next_hop)&&(bgp_next_hop ~ 192.0.2.0/24)) then krt_tunnel=""; else krt_tunnel="tunl0"; accept; }
  if (net ~ 203.0.113.0/24) then { reject; }
  accept;
}
`;

describe('BIRD configuration reader', () => {
  it('tokenizes addresses and prefixes of both families as one token, and skips comments', () => {
    const t = tokenize('neighbor 2001:db8::1 as 65000; # a comment\nif (net ~ 2001:db8::/32) then { accept; }');
    expect(t.filter((x) => x.t === 'num').map((x) => x.v)).toEqual(['2001:db8::1', '65000', '2001:db8::/32']);
    expect(t.some((x) => x.v.includes('comment'))).toBe(false);
  });

  it("reads every BGP protocol's settings, its template's applied", () => {
    const peers = bgpPeers(parseItems(CONFIG));
    expect(peers.map((p) => ({ ...p, importFilter: p.importFilter?.kind, exportFilter: p.exportFilter?.kind }))).toEqual([
      {
        protocol: 'Peer_a',
        address: '192.0.2.2',
        port: 1179,
        asn: 65020,
        localAsn: 65010,
        passive: true,
        multihop: 2,
        sourceAddress: '192.0.2.1',
        password: 's3cret',
        ttlSecurity: 2,
        nextHop: 'keep',
        rrClient: true,
        rrClusterId: '192.0.2.1',
        gracefulRestartTime: 30,
        addPaths: 'both',
        importFilter: 'all',
        exportFilter: 'inline',
      },
      {
        protocol: 'Peer_b',
        address: '192.0.2.3',
        port: 179,
        asn: 65010,
        localAsn: 65011,
        passive: false,
        multihop: false,
        ttlSecurity: 0,
        nextHop: 'auto',
        rrClient: false,
        allowLocalAs: 2,
        addPaths: 'receive',
        importFilter: undefined,
        exportFilter: 'none',
      },
    ]);
  });

  it('reads static routes from the template a static protocol uses', () => {
    expect(staticRoutes(parseItems(CONFIG))).toEqual([
      { prefix: '198.51.100.0/26', blackhole: true },
      { prefix: '203.0.113.0/25', blackhole: true },
      { prefix: '192.0.2.99/32', blackhole: false, via: '192.0.2.254' },
    ]);
  });

  it('runs an export filter: functions with arguments, communities added, first accept or reject wins', () => {
    const items = parseItems(CONFIG);
    const run = new FilterRunner(items);
    const [a, b] = bgpPeers(items);
    const block = staticRoute('198.51.100.0/26');
    expect(run.run(a.exportFilter, block)).toBe('accept');
    expect(communitiesOf(block)).toEqual(['65010:7']);
    // Inside the hidden pool: rejected before anything else.
    expect(run.run(a.exportFilter, staticRoute('203.0.113.0/25'))).toBe('reject');
    // Outside every rule: the filter's own final reject.
    expect(run.run(a.exportFilter, staticRoute('192.0.2.99/32'))).toBe('reject');
    expect(run.run(b.exportFilter, staticRoute('198.51.100.0/26'))).toBe('reject');
  });

  it('runs the kernel filter: a tunnel unless the next hop is in the subnet, rejects, and the default accept', () => {
    const run = new FilterRunner(parseItems(CONFIG));
    const kp = { kind: 'named' as const, name: 'calico_kernel_programming' };
    const far = bgpRoute('198.51.100.64/26', '198.18.0.1');
    expect(run.run(kp, far)).toBe('accept');
    expect(far.attrs.get('krt_tunnel')).toEqual({ k: 'str', v: 'tunl0' });
    const near = bgpRoute('198.51.100.64/26', '192.0.2.7');
    expect(run.run(kp, near)).toBe('accept');
    expect(near.attrs.get('krt_tunnel')).toEqual({ k: 'str', v: '' });
    expect(run.run(kp, bgpRoute('203.0.113.128/25', '192.0.2.7'))).toBe('reject');
    expect(run.run(kp, bgpRoute('198.18.0.0/15', '192.0.2.7'))).toBe('accept');
  });

  it('matches AS paths, sets of route sources, interface globs and negated prefix matches', () => {
    const text = `
function f() {
  if ((bgp_path ~ [= 65000 * =])) then { bgp_large_community.add((65000, 1, 2)); accept; }
  if (((defined(source))&&(source ~ [ RTS_STATIC ]))&&(net !~ 198.51.100.0/24)) then { accept; }
  if (((defined(ifname))&&(ifname ~ "eth*"))) then { accept; }
  reject;
}
filter outer { f(); }`;
    const run = new FilterRunner(parseItems(text));
    const outer = { kind: 'named' as const, name: 'outer' };
    const r = bgpRoute('198.51.100.0/24', '192.0.2.1');
    r.attrs.set('bgp_path', { k: 'path', v: [65000, 65001, 65002] });
    expect(run.run(outer, r)).toBe('accept');
    expect(communitiesOf(r)).toEqual(['65000:1:2']);
    expect(run.run(outer, staticRoute('192.0.2.0/24'))).toBe('accept');
    expect(run.run(outer, staticRoute('198.51.100.0/25'))).toBe('reject');
    const viaEth = staticRoute('198.51.100.0/25');
    viaEth.attrs.set('ifname', { k: 'str', v: 'eth1' });
    expect(run.run(outer, viaEth)).toBe('accept');
  });

  it('compares prefixes of both families by containment', () => {
    expect(prefixWithin('2001:db8:1::/48', '2001:db8::/32')).toBe(true);
    expect(prefixWithin('2001:db9::/48', '2001:db8::/32')).toBe(false);
    expect(prefixWithin('192.0.2.128/25', '192.0.2.0/24')).toBe(true);
    expect(prefixWithin('192.0.2.0/23', '192.0.2.0/24')).toBe(false);
  });

  it('names the line of what it cannot read', () => {
    expect(() => parseItems('protocol bgp x {\n  neighbor 192.0.2.1 as 1;\n  @;\n}')).toThrow(/line 3/);
    const run = new FilterRunner(parseItems('filter g {\n  frobnicate ++;\n}'));
    expect(() => run.run({ kind: 'named', name: 'g' }, staticRoute('192.0.2.0/24'))).toThrow(/line 2/);
    expect(() => bgpPeers(parseItems('protocol bgp x {\n  neighbor 192.0.2.1 as 1;\n  add paths sideways;\n}'))).toThrow(
      'cannot read protocol bgp x: add paths sideways',
    );
  });
});
