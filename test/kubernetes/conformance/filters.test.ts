/**
 * Calico conformance, BGPFilters: every kind of export rule over what a
 * node originates, filters for one family, rules tsbgp must not refuse
 * (interface, priority, source), and a filter deleted under its peers.
 * Expected values follow confd's filter functions (a rule that matches
 * decides; a route no rule matches goes on to Calico's built-in export),
 * restated.
 */
import { describe, expect, it } from 'vitest';
import { bgpConfiguration, bgpFilter, bgpPeer, peerDefaults, whole } from './harness.js';
import { BLOCKS, N1, N1_BLOCKS, NODES, POOL } from './cluster.js';

const CFG = bgpConfiguration({ nodeToNodeMeshEnabled: false, asNumber: 64512, serviceClusterIPs: [{ cidr: '198.19.0.0/20' }] });
const tor = (filters: string[]) => bgpPeer('tor', { peerIP: '198.51.100.1', asNumber: 65001, filters });
const ALL = [...N1_BLOCKS, '198.19.0.0/20'];

describe('conformance: BGPFilter export rules', () => {
  it('interface, source and priority rules are honoured, not refused: none matches what the node originates itself', () => {
    const f = bgpFilter('kernel-aware', {
      exportV4: [
        { action: 'Reject', interface: 'eth*' },
        { action: 'Reject', source: 'RemotePeers' },
        { action: 'Reject', priority: 512 },
      ],
    });
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, CFG, f, tor(['kernel-aware'])]);
    expect(w.peers).toEqual({ '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: ALL }) });
    expect(w.errors).toEqual([]);
  });

  it('peerType selects eBGP or iBGP peers; a communities match never sees the communities prefixAdvertisements add (Calico adds them after the filters)', () => {
    const cfg = bgpConfiguration({
      nodeToNodeMeshEnabled: false,
      asNumber: 64512,
      prefixAdvertisements: [{ cidr: '198.18.1.64/26', communities: ['65000:100'] }],
    });
    const f = bgpFilter('typed', {
      exportV4: [
        { action: 'Reject', peerType: 'eBGP', matchOperator: 'Equal', cidr: '198.18.1.0/26' },
        { action: 'Reject', communities: { values: ['65000:100'] } },
      ],
    });
    const objects = [...NODES, ...BLOCKS, POOL, cfg, f, tor(['typed']), bgpPeer('ibgp', { peerIP: '198.51.100.2', asNumber: 64512, filters: ['typed'] })];
    const w = whole('n1', objects);
    expect(w.peers).toEqual({
      '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: ['198.18.1.64/26[65000:100]'] }),
      '198.51.100.2:179': peerDefaults({ type: 'global', asn: 64512, sourceAddress: N1, sent: ['198.18.1.0/26', '198.18.1.64/26[65000:100]'] }),
    });
    expect(w.errors).toEqual([]);
  });

  it('a peer whose filter was deleted runs without it', () => {
    const w = whole('n1', [...NODES, ...BLOCKS, POOL, CFG, tor(['gone'])]);
    expect(w.peers).toEqual({ '198.51.100.1:179': peerDefaults({ type: 'global', asn: 65001, sourceAddress: N1, sent: ALL }) });
  });
});
