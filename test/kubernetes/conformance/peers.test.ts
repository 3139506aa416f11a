/**
 * Calico conformance, peers: the passive side, the mesh, global and
 * node-specific peerings of cluster nodes, route reflectors, and the
 * BGPPeer/BGPConfiguration details confd treats its own way (two ports on
 * one address, a peerIP without an AS, empty service range entries,
 * node-specific community names). Expected values follow confd's
 * bgp_processor.go and client.go, restated.
 */
import { describe, expect, it } from 'vitest';
import { affinity, bgpConfiguration, bgpPeer, ipPool, node, peerDefaults, planOf, secret, whole } from './harness.js';
import { peerOptions } from '../../../src/kubernetes/reconcile.js';
import { BLOCKS, N1, N1_BLOCKS, NODES, POOL } from './cluster.js';

const MESH_OFF = bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512 });

describe('conformance: the node-to-node mesh', () => {
  it('peers with every other node but reflectors; waits for those whose address is greater as a string, dials the others', () => {
    const objects = [...NODES, node('rr', { ipv4: '192.0.2.30/24', rrClusterId: '224.0.0.1' }), node('no-ip'), ...BLOCKS, POOL, bgpConfiguration({})];
    const mesh = (passive: boolean) => peerDefaults({ type: 'mesh', asn: 64512, passive, sourceAddress: N1, sent: N1_BLOCKS });
    expect(whole('n1', objects)).toMatchObject({
      peers: {
        // "192.0.2.1" < "192.0.2.10": this node dials.
        '192.0.2.1:179': mesh(false),
        // "192.0.2.11" and "192.0.2.2" > "192.0.2.10" (the latter only as strings): this node waits.
        '192.0.2.11:179': mesh(true),
        '192.0.2.2:179': mesh(true),
      },
      routes: N1_BLOCKS,
      errors: [],
    });
    expect(Object.keys(whole('n1', objects).peers).sort()).toEqual(['192.0.2.1:179', '192.0.2.11:179', '192.0.2.2:179'].sort());
  });

  it("IPv6: the same rule over the nodes' IPv6 addresses, each family its own peerings", () => {
    const objects = [
      node('n1', { ipv4: `${N1}/24`, ipv6: '2001:db8::10/64' }),
      node('n2', { ipv4: '192.0.2.2/24', ipv6: '2001:db8::2/64' }),
      node('n3', { ipv4: '192.0.2.1/24', ipv6: '2001:db8::1/64' }),
      affinity('n1', '2001:db8:1::/122'),
      ipPool('pool6', { cidr: '2001:db8:1::/48' }),
      ...BLOCKS,
      POOL,
      bgpConfiguration({}),
    ];
    const mesh = (passive: boolean, v6: boolean) =>
      peerDefaults({ type: 'mesh', asn: 64512, passive, sourceAddress: v6 ? '2001:db8::10' : N1, sent: v6 ? ['2001:db8:1::/122'] : N1_BLOCKS });
    expect(whole('n1', objects).peers).toEqual({
      '192.0.2.2:179': mesh(true, false),
      '192.0.2.1:179': mesh(false, false),
      // "2001:db8::2" > "2001:db8::10" as strings; "2001:db8::1" is a prefix of it, so smaller.
      '2001:db8::2:179': mesh(true, true),
      '2001:db8::1:179': mesh(false, true),
    });
  });

  it('the mesh password, restart time and listen port apply to every mesh peering', () => {
    const cfg = bgpConfiguration({ nodeMeshPassword: { secretKeyRef: { name: 'mesh', key: 'pw' } }, nodeMeshMaxRestartTime: '45s', listenPort: 1179 });
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, cfg, secret('mesh', { pw: 'm3sh' })]);
    const mesh = (passive: boolean) =>
      peerDefaults({ type: 'mesh', asn: 64512, passive, sourceAddress: N1, password: 'm3sh', restartTime: 45, sent: N1_BLOCKS });
    expect(w.peers).toEqual({ '192.0.2.1:1179': mesh(false), '192.0.2.11:1179': mesh(true), '192.0.2.2:1179': mesh(true) });
  });
});

describe('conformance: global and node-specific peerings of cluster nodes', () => {
  it('a global peerIP that is a Calico node follows the mesh rule; a peerSelector peering never waits', () => {
    const objects = [
      ...NODES.map((n) => ((n as { metadata: { name: string } }).metadata.name === 'n2' ? node('n2', { ipv4: '192.0.2.2/24', labels: { rack: 'a' } }) : n)),
      ...BLOCKS,
      POOL,
      MESH_OFF,
      bgpPeer('to-n3', { peerIP: '192.0.2.11', asNumber: 64512 }),
      bgpPeer('to-n4', { peerIP: '192.0.2.1', asNumber: 64512 }),
      bgpPeer('to-rack-a', { peerSelector: "rack == 'a'" }),
    ];
    expect(whole('n1', objects).peers).toEqual({
      '192.0.2.11:179': peerDefaults({ type: 'global', asn: 64512, passive: true, sourceAddress: N1, sent: N1_BLOCKS }),
      '192.0.2.1:179': peerDefaults({ type: 'global', asn: 64512, passive: false, sourceAddress: N1, sent: N1_BLOCKS }),
      '192.0.2.2:179': peerDefaults({ type: 'global', asn: 64512, passive: false, sourceAddress: N1, sent: N1_BLOCKS }),
    });
  });

  it('route reflectors: clients are the iBGP peers outside the cluster ID, reflectors of the same ID are not; no mesh on a reflector; no peering waits', () => {
    const objects = [
      node('n1', { ipv4: `${N1}/24`, rrClusterId: '224.0.0.1', labels: { 'route-reflector': 'true' } }),
      node('n5', { ipv4: '192.0.2.20/24', rrClusterId: '224.0.0.1', labels: { 'route-reflector': 'true' } }),
      node('n2', { ipv4: '192.0.2.2/24' }),
      node('n4', { ipv4: '192.0.2.1/24' }),
      ...BLOCKS,
      POOL,
      bgpConfiguration({ asNumber: 64512 }),
      bgpPeer('clients-to-rr', { nodeSelector: '!has(route-reflector)', peerSelector: 'has(route-reflector)' }),
      bgpPeer('rr-to-rr', { nodeSelector: 'has(route-reflector)', peerSelector: 'has(route-reflector)' }),
    ];
    const client = peerDefaults({ type: 'node', asn: 64512, sourceAddress: N1, rrClient: true, sent: N1_BLOCKS });
    expect(whole('n1', objects).peers).toEqual({
      '192.0.2.1:179': client,
      '192.0.2.2:179': client,
      '192.0.2.20:179': peerDefaults({ type: 'node', asn: 64512, sourceAddress: N1, sent: N1_BLOCKS }),
    });
  });

  it('keepOriginalNextHop toward an iBGP peer changes nothing (Calico applies it to eBGP peers only)', () => {
    const objects = [
      ...NODES,
      ...BLOCKS,
      POOL,
      MESH_OFF,
      bgpPeer('ibgp-tor', { nodeSelector: 'all()', peerIP: '203.0.113.3', asNumber: 64512, keepOriginalNextHop: true }),
    ];
    expect(whole('n1', objects).peers).toEqual({ '203.0.113.3:179': peerDefaults({ type: 'node', asn: 64512, sourceAddress: N1, sent: N1_BLOCKS }) });
  });
});

describe('conformance: ADD-PATH', () => {
  it("every peering offers ADD-PATH send and receive for its family (confd's bgp_template: add paths on), in the plan and in plan --json", () => {
    const objects = [
      node('n1', { ipv4: `${N1}/24`, ipv6: '2001:db8::10/64', labels: { rack: 'a' } }),
      node('n2', { ipv4: '192.0.2.2/24', ipv6: '2001:db8::2/64', labels: { rack: 'a' } }),
      node('n3', { ipv4: '192.0.2.11/24' }),
      ...BLOCKS,
      POOL,
      bgpConfiguration({ asNumber: 64512 }),
      bgpPeer('tor', { peerIP: '203.0.113.3', asNumber: 65001 }),
      bgpPeer('tor-n1', { node: 'n1', peerIP: '2001:db8:ff::1', asNumber: 65002 }),
      bgpPeer('rack', { nodeSelector: "rack == 'a'", peerSelector: "rack == 'a'" }),
    ];
    const { plan, json } = planOf('n1', objects);
    const kinds = plan.peers.map((p) => `${p.type} ${p.address}`).sort();
    expect(kinds).toEqual([
      'global 203.0.113.3',
      'node specific 192.0.2.2',
      'node specific 2001:db8::2',
      'node specific 2001:db8:ff::1',
      'node-to-node mesh 192.0.2.11',
    ]);
    expect(plan.peers.map((p) => p.addPaths)).toEqual(plan.peers.map(() => 'both'));
    expect(json.peers.map((p) => p.addPaths)).toEqual(plan.peers.map(() => 'both'));
    // what the speaker is handed: the peer's own family, send and receive
    for (const p of plan.peers) expect(peerOptions(p)).toMatchObject({ addPath: 'both', families: [p.address.family === 4 ? 'ipv4' : 'ipv6'] });
  });
});

describe('conformance: BGPPeer and BGPConfiguration details', () => {
  it('two peerings to one address on different ports both run', () => {
    const objects = [
      ...NODES,
      ...BLOCKS,
      POOL,
      MESH_OFF,
      bgpPeer('tor-150', { peerIP: '198.51.100.1:150', asNumber: 65001 }),
      bgpPeer('tor-166', { peerIP: '198.51.100.1:166', asNumber: 65002 }),
    ];
    const w = whole('n1', objects);
    expect(w.peers).toEqual({
      '198.51.100.1:150': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: N1_BLOCKS }),
      '198.51.100.1:166': peerDefaults({ type: 'global', asn: 65002, sourceAddress: N1, sent: N1_BLOCKS }),
    });
    expect(w.errors).toEqual([]);
  });

  it('a peerIP without asNumber takes the cluster AS, and the node with that IP peers back with the nodes of the local side', () => {
    const objects = [
      ...NODES,
      ...BLOCKS,
      POOL,
      MESH_OFF,
      bgpPeer('to-external', { node: 'n1', peerIP: '198.51.100.2' }),
      bgpPeer('everyone-to-n1', { peerIP: N1 }),
    ];
    const w = whole('n1', objects);
    const reverse = peerDefaults({ type: 'node', asn: 64512, sourceAddress: N1, sent: N1_BLOCKS });
    expect(w.peers).toEqual({
      '198.51.100.2:179': peerDefaults({ type: 'node', asn: 64512, sourceAddress: N1, sent: N1_BLOCKS }),
      '192.0.2.1:179': reverse,
      '192.0.2.11:179': reverse,
      '192.0.2.2:179': reverse,
    });
    expect(w.errors).toEqual([]);
  });

  it('an empty entry in a service range list is skipped; the others are advertised', () => {
    const cfg = bgpConfiguration({
      nodeToNodeMeshEnabled: false,
      asNumber: 64512,
      serviceClusterIPs: [{ cidr: '198.19.0.0/20' }, {}],
      serviceLoadBalancerIPs: [{}],
    });
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, cfg, bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001 })]);
    expect(w.routes).toEqual([...N1_BLOCKS, '198.19.0.0/20']);
    expect(w.peers['198.51.100.1:179'].sent).toEqual([...N1_BLOCKS, '198.19.0.0/20']);
    expect(w.errors).toEqual([]);
  });

  it("community names of a node-specific BGPConfiguration resolve in that resource's own communities", () => {
    const objects = [
      ...NODES,
      ...BLOCKS,
      POOL,
      bgpConfiguration({
        nodeToNodeMeshEnabled: false,
        asNumber: 64512,
        communities: [{ name: 'site', value: '65000:1' }],
        prefixAdvertisements: [{ cidr: '198.18.0.0/16', communities: ['site'] }],
      }),
      bgpConfiguration(
        { communities: [{ name: 'site', value: '65000:2:3' }], prefixAdvertisements: [{ cidr: '198.18.1.0/26', communities: ['site'] }] },
        'node.n1',
      ),
      bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001 }),
    ];
    const w = whole('n1', objects);
    // The node-specific list replaces the default's for this node.
    expect(w.routes).toEqual(['198.18.1.0/26[65000:2:3]', '198.18.1.64/26']);
    expect(w.errors).toEqual([]);
  });
});
