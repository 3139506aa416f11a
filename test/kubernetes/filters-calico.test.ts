/**
 * BGPFilters in whole plans, in the shapes of Calico's confd scenarios
 * (confd/tests bgpfilter/*), as tsbgp plans them: which peers run, with
 * which chains, and what is reported. Written from reading confd's
 * bgp_processor.go and its expected BIRD configurations; the manifests here
 * are our own.
 */
import { describe, expect, it } from 'vitest';
import { peerOptions, reconcile } from '../../src/kubernetes/reconcile.js';
import { planJson } from '../../src/agent/views.js';
import { effectiveConfig } from '../../src/kubernetes/config.js';
import { eventsFromPlan } from '../../src/kubernetes/events.js';
import { filterWarnings, peerChain } from '../../src/kubernetes/filters.js';
import type { Node, Resource } from '../../src/kubernetes/resources.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { bgpConfig, filter, node, peer, planFor } from './helpers.js';

const dual = (name: string, i: number, labels: Record<string, string> = { 'global-peer': 'yes' }): Node =>
  node(name, `192.0.2.${i}`, {
    labels,
    annotations: { 'projectcalico.org/IPv4Address': `192.0.2.${i}/24`, 'projectcalico.org/IPv6Address': `2001:db8::${i}/64` },
  });
const nodes = () => [dual('n1', 10), dual('n2', 11), dual('n3', 12)];

/** A filter with V4 rules only, an interface rule among them. */
const v4Only = () =>
  filter('v4-only', {
    exportV4: [
      { action: 'Accept', matchOperator: 'In', cidr: '198.18.0.0/16', interface: 'eth0' },
      { action: 'Reject', source: 'RemotePeers', matchOperator: 'In', cidr: '198.19.0.0/16' },
      { action: 'Accept', source: 'RemotePeers' },
      { action: 'Reject' },
    ],
    importV4: [{ action: 'Accept', matchOperator: 'In', cidr: '203.0.113.0/24' }, { action: 'Reject' }],
  });

describe('Calico bgpfilter scenarios', () => {
  it('v4_only (global peer): IPv6 peers of a filter with only V4 rules run unfiltered for IPv6, not refused', () => {
    const resources: Resource[] = [
      ...nodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      v4Only(),
      peer('global', { peerSelector: 'has(global-peer)', filters: ['v4-only'] }),
    ];
    const p = planFor(resources, 'n1');
    expect(p.peers.map((x) => [x.address.toString(), x.refused])).toEqual([
      ['192.0.2.11', false],
      ['192.0.2.12', false],
      ['2001:db8::11', false],
      ['2001:db8::12', false],
    ]);
    const ops = reconcile(undefined, p);
    expect(ops.refusedPeers).toEqual([]);
    expect(ops.addPeers.map((o) => [o.options.address, o.options.exportPolicies, o.options.importPolicies])).toEqual([
      ['192.0.2.11', ['bgpfilter:v4-only:exportV4'], ['bgpfilter:v4-only:importV4']],
      ['192.0.2.12', ['bgpfilter:v4-only:exportV4'], ['bgpfilter:v4-only:importV4']],
      ['2001:db8::11', [], []],
      ['2001:db8::12', [], []],
    ]);
    const json = planJson(p);
    const v6 = json.peers.find((x) => x.address === '2001:db8::11')!;
    expect(v6).toMatchObject({
      refused: false,
      exportChain: { filters: [], skipped: [{ name: 'v4-only', reason: 'no rules' }], otherwise: 'builtin' },
      importChain: { filters: [], otherwise: 'accept' },
    });
    const v4 = json.peers.find((x) => x.address === '192.0.2.11')!;
    expect(v4.exportChain.filters.map((f) => [f.name, f.list, f.rules.map((r) => r.action)])).toEqual([
      ['v4-only', 'exportV4', ['Accept', 'Reject', 'Accept', 'Reject']],
    ]);
    expect(v4.exportChain.filters[0].rules[0]).toEqual({
      index: 0,
      action: 'Accept',
      cidr: '198.18.0.0/16',
      matchOperator: 'In',
      prefixLength: { min: 16, max: 32 },
      interface: 'eth0',
      operations: [],
    });
    expect(json.errors).toEqual([]);
  });

  it('v6_only (explicit peers): the same with the families swapped', () => {
    const only6 = filter('v6-only', {
      exportV6: [{ action: 'Reject', matchOperator: 'In', cidr: '2001:db8:1::/48' }],
      importV6: [{ action: 'Reject', interface: '*' }],
    });
    const resources: Resource[] = [
      ...nodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      only6,
      peer('up-v4', { node: 'n1', peerIP: '198.51.100.1', asNumber: 64517, filters: ['v6-only'] }),
      peer('up-v6', { node: 'n1', peerIP: '2001:db8:ff::1', asNumber: 64517, filters: ['v6-only'] }),
    ];
    const p = planFor(resources, 'n1');
    expect(p.peers.map((x) => [x.address.toString(), x.refused])).toEqual([
      ['198.51.100.1', false],
      ['2001:db8:ff::1', false],
    ]);
    const [o4, o6] = p.peers.map((x) => peerOptions(x, undefined, p.filters));
    expect([o4.exportPolicies, o4.importPolicies, o6.exportPolicies, o6.importPolicies]).toEqual([
      [],
      [],
      ['bgpfilter:v6-only:exportV6'],
      ['bgpfilter:v6-only:importV6'],
    ]);
  });

  it('node_mesh: mesh peers get no BGPFilters, while a BGPPeer’s peers do', () => {
    const resources: Resource[] = [
      ...nodes(),
      bgpConfig({ nodeToNodeMeshEnabled: true }),
      v4Only(),
      peer('tor', { peerIP: '198.51.100.1', asNumber: 64600, filters: ['v4-only'] }),
    ];
    const p = planFor(resources, 'n1');
    const mesh = p.peers.filter((x) => x.type === 'node-to-node mesh');
    expect(mesh.length).toBe(4);
    for (const m of mesh) expect([m.filters, peerChain(m, 'export', p.filters).policies]).toEqual([[], []]);
    const tor = p.peers.find((x) => x.from.name === 'tor')!;
    expect(peerChain(tor, 'export', p.filters).policies).toEqual(['bgpfilter:v4-only:exportV4']);
  });

  it('filter_deletion: a peer whose filter is deleted runs without it, with a warning and a FilterMissing Event', () => {
    const base: Resource[] = [
      ...nodes(),
      bgpConfig({ nodeToNodeMeshEnabled: false }),
      peer('tor', { node: 'n1', peerIP: '198.51.100.1', asNumber: 64600, filters: ['v4-only'] }),
    ];
    const before = planFor([...base, v4Only()], 'n1');
    const after = planFor(base, 'n1');
    expect(after.peers.map((x) => [x.address.toString(), x.refused, x.refusedSettings])).toEqual([['198.51.100.1', false, []]]);
    // The speaker keeps the session: only the policy lists change (no session reset).
    const ops = reconcile(before, after);
    expect(ops.removePeers).toEqual([]);
    expect(ops.updatePeers.map((u) => [u.options.address, u.changed, u.options.exportPolicies])).toEqual([
      ['198.51.100.1', ['exportPolicies', 'importPolicies'], []],
    ]);
    const warning = {
      kind: 'BGPPeer',
      name: 'tor',
      field: 'spec.filters',
      message: "peer 198.51.100.1: BGPFilter v4-only not found (deleted, never created, or invalid); the peer runs without it, as Calico's does",
    };
    expect(filterWarnings(after)).toEqual([{ ...warning, peer: { address: '198.51.100.1', asn: 64600 } }]);
    // Its interface rule warns no more: an eBGP peer one hop away sends next hops on the session's network, whose interface tsbgp knows.
    expect(filterWarnings(before)).toEqual([]);
    const json = planJson(after);
    expect(json.warnings).toContainEqual({ file: null, namespace: null, ...warning });
    expect(json.peers[0].exportChain.skipped).toEqual([{ name: 'v4-only', reason: 'not found' }]);
    const events = eventsFromPlan(after, 'n1', effectiveConfig(stateOf(base), 'n1'));
    expect(events).toEqual([
      {
        involved: { kind: 'Node', name: 'n1' },
        reason: 'FilterMissing',
        message:
          "BGPPeer tor (peer 198.51.100.1 AS 64600) spec.filters: BGPFilter v4-only not found (deleted, never created, or invalid); the peer runs without it, as Calico's does",
      },
    ]);
    expect(eventsFromPlan(before, 'n1', effectiveConfig(stateOf([...base, v4Only()]), 'n1'))).toEqual([]);
  });
});
