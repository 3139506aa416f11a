/**
 * Calico conformance: scenarios where tsbgp already plans what Calico's
 * confd renders (peers, their passive side and settings, what each is sent,
 * originated routes, the kernel). Expected values follow confd
 * (confd/pkg/backends/calico/bgp_processor.go and client.go, the bird*.cfg
 * templates), read and restated here, never copied.
 */
import { describe, expect, it } from 'vitest';
import { affinity, bgpConfiguration, bgpFilter, bgpPeer, ipPool, node, peerDefaults, planOf, secret, whole } from './harness.js';
import { builtinExport } from '../../../src/kubernetes/export.js';
import { Prefix } from '../../../src/net/index.js';
import { BLOCKS, FAR, N1, N1_BLOCKS, NEAR, NODES, POOL } from './cluster.js';

const MESH_OFF = bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512 });
const TOR = bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001 });
const blackholes = (prefixes: readonly string[]) => prefixes.map((p) => `${p} blackhole`);

describe('conformance: peers outside the cluster', () => {
  it('a global peer (a ToR): active, from the node address, sent the confirmed blocks only', () => {
    expect(whole('n1', [...NODES, ...BLOCKS, POOL, MESH_OFF, TOR], [`198.18.2.0/26 via ${NEAR}`, `198.18.2.0/26 via ${FAR}`])).toEqual({
      peers: { '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: N1_BLOCKS }) },
      routes: N1_BLOCKS,
      kernel: {
        // An unencapsulated pool's routes are BIRD's to program under the default programClusterRoutes.
        decisions: { [`198.18.2.0/26 via ${NEAR}`]: 'programmed', [`198.18.2.0/26 via ${FAR}`]: 'programmed' },
        statics: blackholes(N1_BLOCKS),
        priority: { v4: 1024, v6: 1024 },
      },
      errors: [],
    });
  });

  it('node-specific peers: TTL security, a password, next-hop self and keep, local AS, allowed local AS, restart time, no source address', () => {
    const objects = [
      ...NODES,
      ...BLOCKS,
      POOL,
      MESH_OFF,
      secret('bgp-passwords', { rack: 's3cret' }),
      bgpPeer('rack-a', {
        node: 'n1',
        peerIP: '203.0.113.1',
        asNumber: 65010,
        ttlSecurity: 2,
        password: { secretKeyRef: { name: 'bgp-passwords', key: 'rack' } },
        maxRestartTime: '30s',
        nextHopMode: 'Self',
      }),
      bgpPeer('rack-b', { node: 'n1', peerIP: '203.0.113.2', asNumber: 65011, keepOriginalNextHop: true, sourceAddress: 'None', numAllowedLocalASNumbers: 2 }),
      bgpPeer('rack-d', { node: 'n1', peerIP: '203.0.113.4', asNumber: 65012, localASNumber: 65100, nextHopMode: 'Keep' }),
      // Not this node's.
      bgpPeer('other', { node: 'n2', peerIP: '203.0.113.7', asNumber: 65013 }),
    ];
    expect(whole('n1', objects).peers).toEqual({
      '203.0.113.1:179': peerDefaults({
        type: 'node',
        asn: 65010,
        sourceAddress: N1,
        password: 's3cret',
        ttlSecurity: 2,
        nextHop: 'self',
        restartTime: 30,
        sent: N1_BLOCKS,
      }),
      // keepOriginalNextHop keeps the next hop toward an eBGP peer.
      '203.0.113.2:179': peerDefaults({ type: 'node', asn: 65011, nextHop: 'keep', allowLocalAs: 2, sent: N1_BLOCKS }),
      '203.0.113.4:179': peerDefaults({ type: 'node', asn: 65012, localAsn: 65100, sourceAddress: N1, nextHop: 'keep', sent: N1_BLOCKS }),
    });
    expect(whole('n1', objects).errors).toEqual([]);
  });

  it('reachableBy: a kernel route to each such peer through its gateway, global and node-specific', () => {
    const objects = [
      ...NODES,
      ...BLOCKS,
      POOL,
      MESH_OFF,
      bgpPeer('far-global', { peerIP: '203.0.113.5', asNumber: 65020, reachableBy: '192.0.2.1' }),
      bgpPeer('far-node', { node: 'n1', peerIP: '203.0.113.6', asNumber: 65021, reachableBy: '192.0.2.254' }),
    ];
    const w = whole('n1', objects);
    expect(w.kernel.statics).toEqual([...blackholes(N1_BLOCKS), '203.0.113.5/32 via 192.0.2.1', '203.0.113.6/32 via 192.0.2.254']);
    expect(w.peers).toEqual({
      '203.0.113.5:179': peerDefaults({ type: 'global', asn: 65020, sourceAddress: N1, sent: N1_BLOCKS }),
      '203.0.113.6:179': peerDefaults({ type: 'node', asn: 65021, sourceAddress: N1, sent: N1_BLOCKS }),
    });
  });
});

describe('conformance: what a node originates', () => {
  it('service ranges: advertised by every node and sent to peers, never programmed into the kernel', () => {
    const cfg = bgpConfiguration({
      nodeToNodeMeshEnabled: false,
      asNumber: 64512,
      serviceClusterIPs: [{ cidr: '198.19.0.0/20' }],
      serviceExternalIPs: [{ cidr: '203.0.113.64/26' }],
      serviceLoadBalancerIPs: [{ cidr: '203.0.113.128/26' }],
    });
    const probes = [`198.19.0.5/32 via ${NEAR}`, `203.0.113.70/32 via ${NEAR}`, `203.0.113.130/32 via ${FAR}`, `198.18.2.0/26 via ${NEAR}`];
    const routes = [...N1_BLOCKS, '198.19.0.0/20', '203.0.113.128/26', '203.0.113.64/26'].sort();
    expect(whole('n1', [...NODES, ...BLOCKS, POOL, cfg, TOR], probes)).toEqual({
      peers: { '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: routes }) },
      routes,
      kernel: {
        decisions: {
          [`198.19.0.5/32 via ${NEAR}`]: 'not programmed',
          [`203.0.113.70/32 via ${NEAR}`]: 'not programmed',
          [`203.0.113.130/32 via ${FAR}`]: 'not programmed',
          [`198.18.2.0/26 via ${NEAR}`]: 'programmed',
        },
        statics: blackholes(N1_BLOCKS),
        priority: { v4: 1024, v6: 1024 },
      },
      errors: [],
    });
  });

  it('a Service with externalTrafficPolicy Local: its cluster and load-balancer IPs as /32s from the nodes with an endpoint only', () => {
    const cfg = bgpConfiguration({
      nodeToNodeMeshEnabled: false,
      asNumber: 64512,
      serviceClusterIPs: [{ cidr: '198.19.0.0/20' }],
      serviceLoadBalancerIPs: [{ cidr: '203.0.113.128/26' }],
    });
    const service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', clusterIP: '198.19.0.10', ports: [{ port: 80 }] },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.130' }] } },
    };
    const endpoints = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['198.18.1.5'], nodeName: 'n1' }],
    };
    const objects = [...NODES, ...BLOCKS, POOL, cfg, TOR, service, endpoints];
    const ranges = ['198.19.0.0/20', '203.0.113.128/26'];
    const onN1 = [...N1_BLOCKS, ...ranges, '198.19.0.10/32', '203.0.113.130/32'].sort();
    expect(whole('n1', objects).routes).toEqual(onN1);
    expect(whole('n1', objects).peers['198.51.100.1:179'].sent).toEqual(onN1);
    expect(whole('n2', objects).routes).toEqual(['198.18.2.0/26', ...ranges].sort());
  });

  it('a pool with disableBGPExport: its blocks are blackholed but sent to no one; routes into it are still programmed', () => {
    const pools = [ipPool('open', { cidr: '198.18.0.0/17' }), ipPool('hidden', { cidr: '198.18.128.0/17', disableBGPExport: true })];
    const blocks = [affinity('n1', '198.18.1.0/26'), affinity('n1', '198.18.129.0/26')];
    const w = whole('n1', [...NODES, ...blocks, ...pools, MESH_OFF, TOR], [`198.18.130.0/26 via ${NEAR}`]);
    expect(w.peers['198.51.100.1:179'].sent).toEqual(['198.18.1.0/26']);
    expect(w.routes).toEqual(['198.18.1.0/26']);
    expect(w.kernel).toEqual({
      decisions: { [`198.18.130.0/26 via ${NEAR}`]: 'programmed' },
      statics: ['198.18.1.0/26 blackhole', '198.18.129.0/26 blackhole'],
      priority: { v4: 1024, v6: 1024 },
    });
  });

  it('communities: every prefixAdvertisement whose cidr contains a route adds its communities, names resolved, large ones included', () => {
    const cfg = bgpConfiguration({
      nodeToNodeMeshEnabled: false,
      asNumber: 64512,
      communities: [{ name: 'transit', value: '65000:300:1' }],
      prefixAdvertisements: [
        { cidr: '198.18.1.0/26', communities: ['65000:100', 'transit'] },
        { cidr: '198.18.0.0/16', communities: ['65000:200'] },
      ],
    });
    const sent = ['198.18.1.0/26[65000:100 65000:200 65000:300:1]', '198.18.1.64/26[65000:200]'];
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, cfg, TOR]);
    expect(w.routes).toEqual(sent);
    expect(w.peers['198.51.100.1:179'].sent).toEqual(sent);
  });
});

describe('conformance: IPIP pools and programClusterRoutes', () => {
  const pools = [
    ipPool('always', { cidr: '198.18.0.0/18', ipipMode: 'Always' }),
    ipPool('cross', { cidr: '198.18.64.0/18', ipipMode: 'CrossSubnet' }),
    ipPool('plain', { cidr: '198.18.192.0/18' }),
  ];
  const blocks = [affinity('n1', '198.18.0.0/26'), affinity('n1', '198.18.64.0/26'), affinity('n1', '198.18.192.0/26')];
  const probes = ['198.18.1.0/26', '198.18.65.0/26', '198.18.193.0/26'].flatMap((p) => [`${p} via ${NEAR}`, `${p} via ${FAR}`]);
  const decide = (pcr: string) =>
    whole('n1', [...NODES, ...blocks, ...pools, bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512, programClusterRoutes: pcr }), TOR], probes);

  it('Enabled: IPIP Always through tunl0, CrossSubnet through tunl0 only beyond the subnet, unencapsulated as learned', () => {
    const w = decide('Enabled');
    expect(w.kernel.decisions).toEqual({
      [`198.18.1.0/26 via ${NEAR}`]: 'programmed via tunl0',
      [`198.18.1.0/26 via ${FAR}`]: 'programmed via tunl0',
      [`198.18.65.0/26 via ${NEAR}`]: 'programmed',
      [`198.18.65.0/26 via ${FAR}`]: 'programmed via tunl0',
      [`198.18.193.0/26 via ${NEAR}`]: 'programmed',
      [`198.18.193.0/26 via ${FAR}`]: 'programmed',
    });
    expect(w.kernel.statics).toEqual(['198.18.0.0/26 blackhole', '198.18.192.0/26 blackhole', '198.18.64.0/26 blackhole']);
    expect(w.peers['198.51.100.1:179'].sent).toEqual(['198.18.0.0/26', '198.18.192.0/26', '198.18.64.0/26']);
  });

  it('EnabledIPIPOnly: the IPIP pools programmed, the unencapsulated one left to Felix', () => {
    expect(decide('EnabledIPIPOnly').kernel.decisions).toEqual({
      [`198.18.1.0/26 via ${NEAR}`]: 'programmed via tunl0',
      [`198.18.1.0/26 via ${FAR}`]: 'programmed via tunl0',
      [`198.18.65.0/26 via ${NEAR}`]: 'programmed',
      [`198.18.65.0/26 via ${FAR}`]: 'programmed via tunl0',
      [`198.18.193.0/26 via ${NEAR}`]: 'not programmed',
      [`198.18.193.0/26 via ${FAR}`]: 'not programmed',
    });
  });

  it('EnabledNoEncapOnly: the unencapsulated pool programmed, the IPIP ones left to Felix', () => {
    expect(decide('EnabledNoEncapOnly').kernel.decisions).toEqual({
      [`198.18.1.0/26 via ${NEAR}`]: 'not programmed',
      [`198.18.1.0/26 via ${FAR}`]: 'not programmed',
      [`198.18.65.0/26 via ${NEAR}`]: 'not programmed',
      [`198.18.65.0/26 via ${FAR}`]: 'not programmed',
      [`198.18.193.0/26 via ${NEAR}`]: 'programmed',
      [`198.18.193.0/26 via ${FAR}`]: 'programmed',
    });
  });

  it('Disabled: no pool is programmed; the peers are sent the same blocks', () => {
    const w = decide('Disabled');
    expect(Object.values(w.kernel.decisions)).toEqual(Array(6).fill('not programmed'));
    expect(w.peers['198.51.100.1:179'].sent).toEqual(['198.18.0.0/26', '198.18.192.0/26', '198.18.64.0/26']);
  });
});

describe('conformance: node-specific peerings of cluster nodes', () => {
  it('node-specific peerings of cluster nodes: both ends dial', () => {
    const objects = [...NODES, ...BLOCKS, POOL, MESH_OFF, bgpPeer('n1-n3', { node: 'n1', peerIP: '192.0.2.11', asNumber: 64512, reversePeering: 'Manual' })];
    expect(whole('n1', objects).peers).toEqual({ '192.0.2.11:179': peerDefaults({ type: 'node', asn: 64512, sourceAddress: N1, sent: N1_BLOCKS }) });
  });
});

describe('conformance: BGPFilter export rules', () => {
  const CFG = bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512, serviceClusterIPs: [{ cidr: '198.19.0.0/20' }] });
  const tor = (filters: string[]) => bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001, filters });

  it('Equal, In with a prefix length, NotIn: the first rule that matches decides', () => {
    const f = bgpFilter('shape', {
      exportV4: [
        { action: 'Reject', matchOperator: 'Equal', cidr: '198.18.1.0/26' },
        { action: 'Accept', matchOperator: 'In', cidr: '198.18.0.0/16', prefixLength: { min: 26 } },
        { action: 'Reject', matchOperator: 'NotIn', cidr: '198.18.0.0/16' },
      ],
    });
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, CFG, f, tor(['shape'])]);
    expect(w.peers).toEqual({ '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: ['198.18.1.64/26'] }) });
    expect(w.errors).toEqual([]);
  });

  it('NotEqual; a route no rule matches goes on to the built-in export', () => {
    const f = bgpFilter('only-one', { exportV4: [{ action: 'Reject', matchOperator: 'NotEqual', cidr: '198.18.1.64/26' }] });
    const g = bgpFilter('no-services', { exportV4: [{ action: 'Reject', matchOperator: 'In', cidr: '198.19.0.0/16' }] });
    expect(whole('n1', [...NODES, ...BLOCKS, POOL, CFG, f, tor(['only-one'])]).peers['198.51.100.1:179'].sent).toEqual(['198.18.1.64/26']);
    expect(whole('n1', [...NODES, ...BLOCKS, POOL, CFG, g, tor(['no-services'])]).peers['198.51.100.1:179'].sent).toEqual(N1_BLOCKS);
  });

  it('several filters apply in the order the peer lists them', () => {
    const accept = bgpFilter('accept-first', { exportV4: [{ action: 'Accept', matchOperator: 'Equal', cidr: '198.18.1.0/26' }] });
    const reject = bgpFilter('reject-blocks', { exportV4: [{ action: 'Reject', matchOperator: 'In', cidr: '198.18.0.0/16' }] });
    expect(whole('n1', [...NODES, ...BLOCKS, POOL, CFG, accept, reject, tor(['accept-first', 'reject-blocks'])]).peers['198.51.100.1:179'].sent).toEqual([
      '198.18.1.0/26',
      '198.19.0.0/20',
    ]);
    expect(whole('n1', [...NODES, ...BLOCKS, POOL, CFG, accept, reject, tor(['reject-blocks', 'accept-first'])]).peers['198.51.100.1:179'].sent).toEqual([
      '198.19.0.0/20',
    ]);
  });

  it('a filter with rules for one family leaves the peers of the other family unfiltered', () => {
    const objects = [
      node('n1', { ipv4: `${N1}/24`, ipv6: '2001:db8::10/64' }),
      ...NODES.slice(1),
      ...BLOCKS,
      affinity('n1', '2001:db8:1::/122'),
      POOL,
      ipPool('pool6', { cidr: '2001:db8:1::/48' }),
      CFG,
      bgpFilter('v4-only', { exportV4: [{ action: 'Reject', matchOperator: 'Equal', cidr: '198.18.1.0/26' }] }),
      bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001, filters: ['v4-only'] }),
      bgpPeer('tor6', { peerIP: '2001:db8:ff::1', asNumber: 65001, filters: ['v4-only'] }),
    ];
    const w = whole('n1', objects);
    expect(w.peers).toEqual({
      '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: ['198.18.1.64/26', '198.19.0.0/20'] }),
      '2001:db8:ff::1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: '2001:db8::10', sent: ['2001:db8:1::/122'] }),
    });
  });
});

describe('conformance: borrowed IPs', () => {
  it("borrowed IPs: a local workload's /32 from another node's block is exported, one inside the node's own block is not; other nodes' /32s are programmed", () => {
    const { plan } = planOf('n1', [...NODES, ...BLOCKS, POOL, MESH_OFF, TOR]);
    expect(builtinExport(plan, Prefix.parse('198.18.2.7/32')).accept).toBe(true);
    expect(builtinExport(plan, Prefix.parse('198.18.1.7/32')).accept).toBe(false);
    // Outside every pool: not Calico's to export.
    expect(builtinExport(plan, Prefix.parse('203.0.113.7/32')).accept).toBe(false);
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, MESH_OFF, TOR], [`198.18.1.7/32 via ${NEAR}`]);
    expect(w.kernel.decisions).toEqual({ [`198.18.1.7/32 via ${NEAR}`]: 'programmed' });
  });
});
