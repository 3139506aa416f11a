import { describe, expect, it } from 'vitest';
import type { PlannedPeer } from '../../src/kubernetes/plan-types.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { bgpConfig, filter, node, peer, planFor, secret, threeNodes } from './helpers.js';

const brief = (p: PlannedPeer) => ({ address: p.address.toString(), port: p.port, asn: p.asn, localAsn: p.localAsn, type: p.type, passive: p.passive });

describe('§2 node-to-node mesh', () => {
  it('peers with every other node; a node waits for peers whose IP is greater than its own (string order)', () => {
    // "192.0.2.9" > "192.0.2.10" as strings although 9 < 10 as numbers: Calico compares strings.
    // The lower address (as a string) listens, the greater one dials: a's peers are both lower, so a dials both.
    const rs = [node('a', '192.0.2.9'), node('b', '192.0.2.10'), node('c', '192.0.2.100')];
    expect(planFor(rs, 'a').peers.map(brief)).toEqual([
      { address: '192.0.2.10', port: 179, asn: 64512, localAsn: 64512, type: 'node-to-node mesh', passive: false },
      { address: '192.0.2.100', port: 179, asn: 64512, localAsn: 64512, type: 'node-to-node mesh', passive: false },
    ]);
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.passive])).toEqual([
      ['192.0.2.9', true],
      ['192.0.2.100', true],
    ]);
    expect(planFor(rs, 'c').peers.map((p) => [p.address.toString(), p.passive])).toEqual([
      ['192.0.2.9', true],
      ['192.0.2.10', false],
    ]);
  });
  it('IPv6 mesh peers compare as text too: 2001:db8::10 is the lower and waits for 2001:db8::2', () => {
    const v6 = (a: string) => ({ annotations: { 'projectcalico.org/IPv6Address': `${a}/64` } });
    const rs = [node('a', '192.0.2.1', v6('2001:db8::2')), node('b', '192.0.2.2', v6('2001:db8::10'))];
    const a = planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.passive]);
    const b = planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.passive]);
    // "2001:db8::10" < "2001:db8::2" as strings: a dials over IPv6; over IPv4 192.0.2.1 is the lower and waits.
    expect(a).toEqual([
      ['192.0.2.2', true],
      ['2001:db8::10', false],
    ]);
    expect(b).toEqual([
      ['192.0.2.1', false],
      ['2001:db8::2', true],
    ]);
  });
  it('uses node AS annotations, the IPv4Address annotation, per-node listen ports, 120 s restart time', () => {
    const rs = [
      node('a', '192.0.2.9', { annotations: { 'projectcalico.org/ASNumber': '65001' } }),
      node('b', '192.0.2.10', { annotations: { 'projectcalico.org/IPv4Address': '10.1.0.2/24' } }),
      bgpConfig({ listenPort: 1179 }, 'node.b'),
    ];
    const [p] = planFor(rs, 'a').peers;
    // "10.1.0.2" < "192.0.2.9": the peer's address is the lower, so a dials.
    expect(brief(p)).toEqual({ address: '10.1.0.2', port: 1179, asn: 64512, localAsn: 65001, type: 'node-to-node mesh', passive: false });
    expect(p.maxRestartTime).toBe(120);
    expect(p.gracefulRestart).toBe(true);
    expect(p.sourceAddress?.toString()).toBe('192.0.2.9');
  });
  it('nodeToNodeMeshEnabled false: no mesh; nodeMeshMaxRestartTime applies; nodeMeshPassword refuses the peering', () => {
    expect(planFor([...threeNodes(), bgpConfig({ nodeToNodeMeshEnabled: false })], 'worker1').peers).toEqual([]);
    const p = planFor([...threeNodes(), bgpConfig({ nodeMeshMaxRestartTime: '5m', nodeMeshPassword: { secretKeyRef: { name: 's', key: 'k' } } })], 'worker1');
    expect(p.peers.map((x) => [x.maxRestartTime, x.refused])).toEqual([
      [300, true],
      [300, true],
    ]);
    expect(p.errors[0]).toMatchObject({ kind: 'BGPConfiguration', name: 'default', field: 'BGPConfiguration default spec.nodeMeshPassword' });
  });
});

describe('§2 global and node-specific BGPPeers', () => {
  it('a global peer applies to every node; node and nodeSelector peers only where they match', () => {
    const rs = [
      node('worker1', '192.0.2.10', { labels: { rack: 'r1' } }),
      node('worker2', '192.0.2.11', { labels: { rack: 'r2' } }),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('tor', { peerIP: '192.0.2.20', asNumber: 65000 }),
      peer('w1-only', { node: 'worker1', peerIP: '192.0.2.21:1790', asNumber: 65001 }),
      peer('rack2', { nodeSelector: "rack == 'r2'", peerIP: '192.0.2.22', asNumber: 65002 }),
    ];
    expect(planFor(rs, 'worker1').peers.map(brief)).toEqual([
      { address: '192.0.2.20', port: 179, asn: 65000, localAsn: 64512, type: 'global', passive: false },
      { address: '192.0.2.21', port: 1790, asn: 65001, localAsn: 64512, type: 'node specific', passive: false },
    ]);
    expect(planFor(rs, 'worker2').peers.map((p) => [p.address.toString(), p.type, p.id])).toEqual([
      ['192.0.2.20', 'global', 'Global_tor_192_0_2_20'],
      ['192.0.2.22', 'node specific', 'Node_rack2_192_0_2_22'],
    ]);
  });
  it('a node-specific peering is dropped when a global one to the same ip:port exists', () => {
    const rs = [
      ...threeNodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('a-node', { node: 'worker1', peerIP: '192.0.2.20', asNumber: 65009 }),
      peer('z-global', { peerIP: '192.0.2.20', asNumber: 65000 }),
    ];
    expect(planFor(rs, 'worker1').peers.map((p) => [p.from.name, p.type, p.asn])).toEqual([['z-global', 'global', 65000]]);
  });
  it('session options: localASNumber, keepOriginalNextHop → Keep, numAllowedLocalASNumbers, maxRestartTime, keepalive, ordered filters, sourceAddress None', () => {
    const rs = [
      ...threeNodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      filter('f-b', { exportV4: [{ action: 'Reject', cidr: '10.0.0.0/8', matchOperator: 'In' }] }),
      filter('f-a', {}),
      peer('up', {
        peerIP: '[2001:db8::1]:1179',
        asNumber: 65000,
        localASNumber: 65100,
        keepOriginalNextHop: true,
        numAllowedLocalASNumbers: 2,
        maxRestartTime: '90s',
        keepaliveTime: '10s',
        filters: ['f-b', 'f-a'],
        sourceAddress: 'None',
      }),
    ];
    const withV6 = [node('worker1', '192.0.2.10', { annotations: { 'projectcalico.org/IPv6Address': '2001:db8::10/64' } }), ...rs.slice(1)];
    const [p] = planFor(withV6, 'worker1').peers;
    expect(p).toMatchObject({
      port: 1179,
      asn: 65000,
      localAsn: 65100,
      nextHopMode: 'Keep',
      keepOriginalNextHop: true,
      numAllowedLocalASNumbers: 2,
      maxRestartTime: 90,
      keepaliveTime: 10,
      filters: ['f-b', 'f-a'],
      sourceAddress: undefined,
      refused: false,
    });
    expect(p.address.toString()).toBe('2001:db8::1');
    // The plan carries the named filters themselves, so it is self-contained.
    expect(planFor(withV6, 'worker1').filters.map((f) => [f.name, f.exportV4.length])).toEqual([
      ['f-a', 0],
      ['f-b', 1],
    ]);
    // worker2 has no IPv6 address: the peering cannot be planned and says so.
    const p2 = planFor(rs, 'worker2');
    expect(p2.peers).toEqual([]);
    expect(p2.errors[0]).toMatchObject({ kind: 'BGPPeer', name: 'up', message: expect.stringContaining('no IPv6 address') });
  });
  it("password from a Secret in tsbgp's namespace and ttlSecurity are planned; the value prints only as a digest", () => {
    const rs = [
      ...threeNodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      secret('bgp', { pw: 's3cret' }),
      peer('sec', { peerIP: '192.0.2.20', asNumber: 65000, password: { secretKeyRef: { name: 'bgp', key: 'pw' } }, ttlSecurity: 1 }),
    ];
    const p = planFor(rs, 'worker1');
    expect(p.peers[0]).toMatchObject({ refused: false, refusedSettings: [], ttlSecurity: 1, password: { name: 'bgp', key: 'pw' } });
    expect(p.peers[0].passwordValue?.reveal()).toBe('s3cret');
    expect(JSON.stringify(p)).not.toContain('s3cret');
    expect(JSON.stringify(p.peers[0].passwordValue)).toMatch(/^"sha256:[0-9a-f]{12}"$/);
    expect(p.errors).toEqual([]);
  });
  it('a Secret validates from data (base64) and stringData; its JSON shows digests that change with the value, never the value', () => {
    const v = (data: Record<string, unknown>, stringData?: Record<string, unknown>) =>
      validateObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'kube-system' }, data, stringData });
    const a = v({ k: Buffer.from('one').toString('base64') });
    const b = v({ k: Buffer.from('two').toString('base64') });
    if (!a.ok || !b.ok || a.resource.kind !== 'Secret' || b.resource.kind !== 'Secret') throw new Error('expected valid Secrets');
    expect(a.resource.data.k.reveal()).toBe('one');
    expect(JSON.stringify(a.resource)).not.toBe(JSON.stringify(b.resource)); // how the sources see an update
    expect(JSON.stringify(a.resource)).not.toContain('one');
    const c = v({}, { k: 'plain' });
    expect(c.ok && c.resource.kind === 'Secret' && c.resource.data.k.reveal()).toBe('plain');
    const bad = v({ k: 'not base64!' });
    expect(bad.ok ? undefined : bad.issue).toMatchObject({ path: 'data.k', message: 'expected a base64 string (the value is not shown)' });
  });
  it('a missing Secret, key, or a Secret in another namespace refuses the peering (never run unprotected)', () => {
    const ref = (name: string, key: string) => ({ peerIP: '192.0.2.20', asNumber: 65000, password: { secretKeyRef: { name, key } } });
    const base = [...threeNodes(), bgpConfig({ nodeToNodeMeshEnabled: false })];
    for (const [extra, msg] of [
      [[], 'Secret kube-system/bgp not found; the peering is refused until it exists (running without the password would leave the session unprotected)'],
      [
        [secret('bgp', { other: 'x' })],
        'Secret kube-system/bgp has no key "pw"; the peering is refused until it does (running without the password would leave the session unprotected)',
      ],
      [
        [secret('bgp', { pw: 'x' }, 'default')],
        'Secret kube-system/bgp not found; the peering is refused until it exists (running without the password would leave the session unprotected)',
      ],
      [[secret('bgp', { pw: 'x'.repeat(81) })], 'Secret kube-system/bgp key "pw" is 81 bytes; TCP-MD5 takes at most 80; the peering is refused'],
    ] as const) {
      const p = planFor([...base, ...extra, peer('sec', ref('bgp', 'pw'))], 'worker1');
      expect(p.peers[0].refusedSettings).toEqual([{ field: 'spec.password', message: msg }]);
      expect(p.peers[0].refused).toBe(true);
      expect(p.peers[0].passwordValue).toBeUndefined();
    }
  });
  it('nodeMeshPassword applies to every mesh peer; a missing one refuses the mesh peerings', () => {
    const mesh = (extra: Resource[]) =>
      planFor([...threeNodes(), bgpConfig({ nodeMeshPassword: { secretKeyRef: { name: 'mesh', key: 'pw' } } }), ...extra], 'worker1').peers.filter(
        (x) => x.type === 'node-to-node mesh',
      );
    const ok = mesh([secret('mesh', { pw: 'meshpw' })]);
    expect(ok.length).toBeGreaterThan(0);
    for (const x of ok) expect({ refused: x.refused, pw: x.passwordValue?.reveal() }).toEqual({ refused: false, pw: 'meshpw' });
    for (const x of mesh([]))
      expect(x.refusedSettings).toEqual([
        { field: 'BGPConfiguration default spec.nodeMeshPassword', message: expect.stringMatching(/^Secret kube-system\/mesh not found/) },
      ]);
  });
  it('a missing BGPFilter does not refuse the peer: it runs without it, as Calico (bgpfilter/filter_deletion)', () => {
    const p = planFor(
      [...threeNodes(), bgpConfig({ nodeToNodeMeshEnabled: false }), peer('f', { peerIP: '192.0.2.20', asNumber: 65000, filters: ['absent'] })],
      'worker1',
    );
    expect(p.peers[0]).toMatchObject({ refused: false, refusedSettings: [], filters: ['absent'] });
    expect(p.errors).toEqual([]);
  });
});

describe('§2 peerSelector peerings and route reflectors', () => {
  const rr = (name: string, ip: string, cluster = '244.0.0.1') =>
    node(name, ip, { labels: { 'route-reflector': 'true' }, annotations: { 'projectcalico.org/RouteReflectorClusterID': cluster } });
  const rs = () => [
    rr('rr1', '192.0.2.1'),
    rr('rr2', '192.0.2.2'),
    node('worker1', '192.0.2.10', { annotations: { 'projectcalico.org/ASNumber': '64512' } }),
    node('worker2', '192.0.2.11'),
    peer('to-rr', { nodeSelector: '!has(route-reflector)', peerSelector: 'has(route-reflector)' }),
    peer('rr-mesh', { nodeSelector: 'has(route-reflector)', peerSelector: 'has(route-reflector)' }),
    peer('rr-clients', { nodeSelector: 'has(route-reflector)', peerSelector: '!has(route-reflector)' }),
  ];
  it('a client peers with the reflectors (not with the mesh to RRs); node-specific peerings are active at both ends', () => {
    const p = planFor(rs(), 'worker1');
    expect(p.peers.map((x) => [x.address.toString(), x.type, x.passive, x.routeReflectorClient])).toEqual([
      ['192.0.2.1', 'node specific', false, false],
      ['192.0.2.2', 'node specific', false, false],
      ['192.0.2.11', 'node-to-node mesh', true, false], // "192.0.2.10" < "192.0.2.11": the lower waits
    ]);
  });
  it('a reflector has no mesh; its non-RR iBGP peers are clients with its cluster ID; same-cluster RRs are not', () => {
    const p = planFor(rs(), 'rr1');
    expect(p.peers.map((x) => [x.address.toString(), x.from.name, x.routeReflectorClient, x.routeReflectorClusterId, x.passive])).toEqual([
      ['192.0.2.2', 'rr-mesh', false, undefined, false],
      ['192.0.2.10', 'rr-clients', true, '244.0.0.1', false],
      ['192.0.2.11', 'rr-clients', true, '244.0.0.1', false],
    ]);
    expect(p.peers.every((x) => x.type !== 'node-to-node mesh')).toBe(true);
  });
  it('a peering made eBGP by localASNumber is not a route-reflector client session', () => {
    const list = [
      ...rs(),
      peer('rr-ebgp', { node: 'rr1', peerIP: '192.0.2.20', asNumber: 64512, localASNumber: 65100 }),
      peer('rr-ibgp', { node: 'rr1', peerIP: '192.0.2.21', asNumber: 64512 }),
    ];
    const p = planFor(list, 'rr1');
    expect(p.peers.filter((x) => ['rr-ebgp', 'rr-ibgp'].includes(x.from.name)).map((x) => [x.from.name, x.localAsn, x.routeReflectorClient])).toEqual([
      ['rr-ebgp', 65100, false],
      ['rr-ibgp', 64512, true],
    ]);
  });
  it('the remote AS of a peerSelector peering comes from the remote node, else the global AS', () => {
    const list = [
      node('a', '192.0.2.10'),
      node('b', '192.0.2.11', { annotations: { 'projectcalico.org/ASNumber': '65020' } }),
      bgpConfig({ asNumber: 65010, nodeToNodeMeshEnabled: false }),
      peer('all', { peerSelector: 'all()' }),
    ];
    expect(planFor(list, 'a').peers.map((p) => [p.asn, p.localAsn])).toEqual([[65020, 65010]]);
    expect(planFor(list, 'b').peers.map((p) => [p.asn, p.localAsn])).toEqual([[65010, 65020]]);
  });
});

describe('§2 passive side, as Calico (confd bgp_processor.go)', () => {
  it('a global BGPPeer whose peerIP is a Calico node: the lower address waits; a non-node peerIP never waits', () => {
    const rs = [
      node('a', '192.0.2.10'),
      node('b', '192.0.2.2'),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('to-b', { peerIP: '192.0.2.2', asNumber: 64512 }),
      peer('tor', { peerIP: '192.0.2.9', asNumber: 65000 }),
    ];
    // "192.0.2.2" > "192.0.2.10": a is the lower and waits for b.
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.type, p.passive])).toEqual([
      ['192.0.2.2', 'global', true],
      ['192.0.2.9', 'global', false],
    ]);
    // b is the global BGPPeer's peerIP itself: it peers back (node specific, active) and dials.
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.type, p.origin, p.passive])).toEqual([
      ['192.0.2.9', 'global', 'forward', false],
      ['192.0.2.10', 'node specific', 'reverse', false],
    ]);
  });
  it('a node-specific BGPPeer to a node address is active at both ends', () => {
    const rs = [
      node('a', '192.0.2.10'),
      node('b', '192.0.2.2'),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('a-to-b', { node: 'a', peerIP: '192.0.2.2', asNumber: 64512 }),
    ];
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.type, p.passive])).toEqual([['192.0.2.2', 'node specific', false]]);
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.type, p.passive])).toEqual([['192.0.2.10', 'node specific', false]]);
  });
  it('a global BGPPeer with a peerSelector is active (Calico marks only peerIP peers as Calico nodes)', () => {
    const rs = [
      node('a', '192.0.2.1', { labels: { rr: 'true' } }),
      node('b', '192.0.2.2'),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('all-to-rr', { peerSelector: "rr == 'true'" }),
    ];
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.type, p.passive])).toEqual([['192.0.2.1', 'global', false]]);
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.type, p.passive])).toEqual([['192.0.2.2', 'node specific', false]]);
  });
});

describe('§2 a BGPPeer with peerIP and no asNumber (Calico case explicit_peering/route_reflector_v6_by_ip)', () => {
  const rs = () => [
    node('master', '10.192.0.2', {
      labels: { rr: 'true' },
      annotations: { 'projectcalico.org/IPv6Address': '2001:db8:a::2/96', 'projectcalico.org/RouteReflectorClusterID': '10.0.0.1' },
    }),
    node('n1', '10.192.0.3', { annotations: { 'projectcalico.org/IPv6Address': '2001:db8:a::3/96' } }),
    node('n2', '10.192.0.4', { annotations: { 'projectcalico.org/IPv6Address': '2001:db8:a::4/96' } }),
    bgpConfig({ asNumber: 64532, nodeToNodeMeshEnabled: false }),
    peer('to-master', { peerIP: '2001:db8:a::2' }),
  ];
  it('takes the cluster AS; the other nodes peer with that address over IPv6 only', () => {
    expect(planFor(rs(), 'n1').peers.map((p) => [p.id, p.address.toString(), p.asn, p.localAsn, p.type, p.passive])).toEqual([
      // A Calico node's address, but "2001:db8:a::2" < "2001:db8:a::3": n1 is the greater and dials.
      ['Global_to-master_2001_db8_a__2', '2001:db8:a::2', 64532, 64532, 'global', false],
    ]);
  });
  it('the node at that address (its AS the cluster one) peers back with every node, as reflector clients', () => {
    const m = planFor(rs(), 'master');
    expect(m.peers.map((p) => [p.id, p.address.toString(), p.asn, p.type, p.origin, p.routeReflectorClient, p.passive])).toEqual([
      ['Reverse_to-master_2001_db8_a__3', '2001:db8:a::3', 64532, 'node specific', 'reverse', true, false],
      ['Reverse_to-master_2001_db8_a__4', '2001:db8:a::4', 64532, 'node specific', 'reverse', true, false],
    ]);
    expect(m.errors).toEqual([]);
  });
  it('no reverse peering when that node has an AS of its own other than the cluster one', () => {
    const list = rs().map((r) =>
      r.kind === 'Node' && r.name === 'master'
        ? node('master', '10.192.0.2', { annotations: { 'projectcalico.org/IPv6Address': '2001:db8:a::2/96', 'projectcalico.org/ASNumber': '65001' } })
        : r,
    );
    expect(planFor(list, 'master').peers).toEqual([]);
  });
});

describe('§2 next-hop mode, as Calico', () => {
  it('the deprecated keepOriginalNextHop keeps the next hop on eBGP sessions only; nextHopMode applies to any', () => {
    const rs = [
      ...threeNodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('ebgp', { peerIP: '192.0.2.20', asNumber: 65000, keepOriginalNextHop: true }),
      peer('ibgp', { peerIP: '192.0.2.21', asNumber: 64512, keepOriginalNextHop: true }),
      peer('ibgp-keep', { peerIP: '192.0.2.22', asNumber: 64512, nextHopMode: 'Keep' }),
      peer('self', { peerIP: '192.0.2.23', asNumber: 65000, nextHopMode: 'Self' }),
    ];
    expect(planFor(rs, 'worker1').peers.map((p) => [p.from.name, p.nextHopMode])).toEqual([
      ['ebgp', 'Keep'],
      ['ibgp', 'Auto'],
      ['ibgp-keep', 'Keep'],
      ['self', 'Self'],
    ]);
  });
});

describe('§2 global peers to node addresses on several ports (Calico case explicit_peering/global)', () => {
  const rs = () => [
    bgpConfig({ nodeToNodeMeshEnabled: false, asNumber: 64567, listenPort: 150, bindMode: 'NodeIP' }),
    peer('bgppeer-1', { peerIP: '10.192.0.3', asNumber: 64567, sourceAddress: 'None' }),
    peer('bgppeer-2', { peerIP: '10.192.0.1:166', asNumber: 64567 }),
    peer('bgppeer-3', { peerIP: '10.192.0.1', asNumber: 64567 }),
    node('kube-master', '10.192.0.2'),
    node('kube-node-1', '10.192.0.3'),
    node('kube-node-2', '10.192.0.1'),
  ];
  it('kube-master: both ports of 10.192.0.1 run; the node listens on its address; the lower address waits for 10.192.0.3', () => {
    const p = planFor(rs(), 'kube-master');
    expect(p.listen.port).toBe(150);
    expect(p.listen.address?.toString()).toBe('10.192.0.2');
    expect(p.peers.map((x) => [x.from.name, x.address.toString(), x.port, x.asn, x.type, x.sourceAddress?.toString(), x.passive])).toEqual([
      ['bgppeer-3', '10.192.0.1', 150, 64567, 'global', '10.192.0.2', false],
      ['bgppeer-2', '10.192.0.1', 166, 64567, 'global', '10.192.0.2', false],
      ['bgppeer-1', '10.192.0.3', 150, 64567, 'global', undefined, true],
    ]);
    expect(p.errors).toEqual([]);
  });
});
