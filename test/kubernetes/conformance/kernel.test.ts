/**
 * Calico conformance, the kernel and IPAM: /32 blocks, borrowed IPs, the
 * default programClusterRoutes, and the block blackholes of pools whose
 * routes Felix programs. Expected values follow confd's bird_aggr and
 * bird_ipam templates and bgp_processor.go's pool statements, restated.
 */
import { describe, expect, it } from 'vitest';
import { affinity, bgpConfiguration, bgpPeer, ipPool, planOf, whole } from './harness.js';
import { builtinExport } from '../../../src/kubernetes/export.js';
import { Prefix } from '../../../src/net/index.js';
import { BLOCKS, FAR, N1_BLOCKS, NEAR, NODES, POOL } from './cluster.js';

const MESH_OFF = bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512 });
const TOR = bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001 });

describe('conformance: /32 blocks and borrowed IPs', () => {
  it('a /32 block is never blackholed nor originated on its own: it is sent only while the kernel holds the route', () => {
    const objects = [...NODES, ...BLOCKS, affinity('n1', '198.18.5.7/32'), POOL, MESH_OFF, TOR];
    const w = whole('n1', objects);
    expect(w.routes).toEqual(N1_BLOCKS);
    expect(w.peers['198.51.100.1:179'].sent).toEqual(N1_BLOCKS);
    expect(w.kernel.statics).toEqual(N1_BLOCKS.map((p) => `${p} blackhole`));
    // The workload's kernel route, once there, is exported as the block itself.
    expect(builtinExport(planOf('n1', objects).plan, Prefix.parse('198.18.5.7/32')).accept).toBe(true);
  });
});

describe('conformance: who programs cluster routes', () => {
  const pools = [
    ipPool('ipip', { cidr: '198.18.0.0/18', ipipMode: 'Always' }),
    ipPool('vxlan', { cidr: '198.18.128.0/18', vxlanMode: 'Always' }),
    ipPool('plain', { cidr: '198.18.192.0/18' }),
  ];
  const blocks = [affinity('n1', '198.18.0.0/26'), affinity('n1', '198.18.128.0/26'), affinity('n1', '198.18.192.0/26')];
  const probes = ['198.18.1.0/26', '198.18.129.0/26', '198.18.193.0/26'].flatMap((p) => [`${p} via ${NEAR}`, `${p} via ${FAR}`]);

  // The default follows the latest Calico release (v3.32: `programClusterRoutes` default Enabled, Felix's
  // own default Disabled, so BIRD programs IPIP pools through tunl0). Calico's unreleased master moves
  // both defaults (BGP EnabledNoEncapOnly, Felix EnabledIPIPOnly); a node must agree with the Felix it
  // runs beside, and a cluster migrating to tsbgp runs a released Felix (docs/calico-conformance.md).
  it('by default (Enabled, as in Calico v3.32) BIRD programs unencapsulated and IPIP pools; Felix owns VXLAN', () => {
    const w = whole('n1', [...NODES, ...blocks, ...pools, MESH_OFF, TOR], probes);
    expect(w.kernel).toEqual({
      decisions: {
        [`198.18.1.0/26 via ${NEAR}`]: 'programmed via tunl0',
        [`198.18.1.0/26 via ${FAR}`]: 'programmed via tunl0',
        [`198.18.129.0/26 via ${NEAR}`]: 'not programmed',
        [`198.18.129.0/26 via ${FAR}`]: 'not programmed',
        [`198.18.193.0/26 via ${NEAR}`]: 'programmed',
        [`198.18.193.0/26 via ${FAR}`]: 'programmed',
      },
      // The kernel filter applies to the block blackholes too: none for the VXLAN pool's block.
      statics: ['198.18.0.0/26 blackhole', '198.18.192.0/26 blackhole'],
      priority: { v4: 1024, v6: 1024 },
    });
    // What peers are sent does not depend on who programs the kernel.
    expect(w.peers['198.51.100.1:179'].sent).toEqual(['198.18.0.0/26', '198.18.128.0/26', '198.18.192.0/26']);
  });

  it.each([
    ['EnabledIPIPOnly', ['198.18.0.0/26 blackhole']],
    ['EnabledNoEncapOnly', ['198.18.192.0/26 blackhole']],
  ])('%s: only the blocks of the pools BIRD programs get their blackhole into the kernel', (pcr, statics) => {
    const w = whole('n1', [...NODES, ...blocks, ...pools, bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512, programClusterRoutes: pcr }), TOR]);
    expect(w.kernel.statics).toEqual(statics);
  });

  it('Disabled: no blackhole either', () => {
    const w = whole('n1', [
      ...NODES,
      ...blocks,
      ...pools,
      bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512, programClusterRoutes: 'Disabled' }),
      TOR,
    ]);
    expect(w.kernel.statics).toEqual([]);
  });
});
