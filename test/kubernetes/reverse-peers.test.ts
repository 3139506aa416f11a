/**
 * Reference §2, symmetric peerings (confd's second pass over BGPPeers) and
 * route reflection as Calico configures BIRD.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PlannedPeer } from '../../src/kubernetes/plan-types.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { bgpConfig, node, peer, planFor } from './helpers.js';

const v6 = (ip: string) => ({ 'projectcalico.org/IPv6Address': `${ip}/64` });
const rr = (name: string, ip: string, cluster: string, annotations: Record<string, string> = {}) =>
  node(name, ip, { labels: { 'route-reflector': 'true' }, annotations: { 'projectcalico.org/RouteReflectorClusterID': cluster, ...annotations } });
/** The manifests of Calico's route-reflector documentation, unchanged. */
const docsPeer = () => peer('peer-with-route-reflectors', { nodeSelector: 'all()', peerSelector: "route-reflector == 'true'" });
const meshOff = () => bgpConfig({ nodeToNodeMeshEnabled: false });
const row = (p: PlannedPeer) => [p.address.toString(), p.origin, p.from.name, p.routeReflectorClient, p.routeReflectorClusterId ?? null];

describe("§2 reverse peerings: the route-reflector setup of Calico's documentation", () => {
  const cluster = () => [
    rr('rr1', '192.0.2.1', '244.0.0.1'),
    node('n2', '192.0.2.12'),
    node('n3', '192.0.2.13'),
    node('n4', '192.0.2.14'),
    meshOff(),
    docsPeer(),
  ];
  it('a client peers with the reflector only (forward); the reflector peers back with every client (implied reverse) as their reflector', () => {
    expect(planFor(cluster(), 'n2').peers.map(row)).toEqual([['192.0.2.1', 'forward', 'peer-with-route-reflectors', false, null]]);
    const r = planFor(cluster(), 'rr1');
    expect(r.peers.map(row)).toEqual([
      ['192.0.2.12', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
      ['192.0.2.13', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
      ['192.0.2.14', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
    ]);
    expect(r.peers.map((p) => [p.id, p.type, p.asn, p.localAsn, p.port])).toEqual([
      ['Reverse_peer-with-route-reflectors_192_0_2_12', 'node specific', 64512, 64512, 179],
      ['Reverse_peer-with-route-reflectors_192_0_2_13', 'node specific', 64512, 64512, 179],
      ['Reverse_peer-with-route-reflectors_192_0_2_14', 'node specific', 64512, 64512, 179],
    ]);
    expect(r.errors).toEqual([]);
  });
  it('node-specific and reverse peerings are active at both ends (Calico gives only mesh and global peers a passive side)', () => {
    expect(planFor(cluster(), 'rr1').peers.map((p) => [p.type, p.passive])).toEqual([
      ['node specific', false],
      ['node specific', false],
      ['node specific', false],
    ]);
    for (const n of ['n2', 'n3', 'n4']) expect(planFor(cluster(), n).peers.map((p) => [p.type, p.passive])).toEqual([['node specific', false]]);
  });
  it('two reflectors with the same cluster ID peer with each other as non-clients, and each reflects to every client', () => {
    const rs = [
      rr('rr1', '192.0.2.1', '244.0.0.1'),
      rr('rr2', '192.0.2.2', '244.0.0.1'),
      node('n3', '192.0.2.13'),
      node('n4', '192.0.2.14'),
      meshOff(),
      docsPeer(),
    ];
    expect(planFor(rs, 'rr1').peers.map(row)).toEqual([
      ['192.0.2.2', 'forward', 'peer-with-route-reflectors', false, null],
      ['192.0.2.13', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
      ['192.0.2.14', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
    ]);
    expect(planFor(rs, 'rr2').peers.map(row)).toEqual([
      ['192.0.2.1', 'forward', 'peer-with-route-reflectors', false, null],
      ['192.0.2.13', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
      ['192.0.2.14', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
    ]);
    expect(planFor(rs, 'n3').peers.map(row)).toEqual([
      ['192.0.2.1', 'forward', 'peer-with-route-reflectors', false, null],
      ['192.0.2.2', 'forward', 'peer-with-route-reflectors', false, null],
    ]);
  });
  it('two reflectors with different cluster IDs are clients of each other, each with its own cluster ID', () => {
    const rs = [rr('rr1', '192.0.2.1', '244.0.0.1'), rr('rr2', '192.0.2.2', '244.0.0.2'), node('n3', '192.0.2.13'), meshOff(), docsPeer()];
    expect(planFor(rs, 'rr1').peers.map(row)).toEqual([
      ['192.0.2.2', 'forward', 'peer-with-route-reflectors', true, '244.0.0.1'],
      ['192.0.2.13', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.1'],
    ]);
    expect(planFor(rs, 'rr2').peers.map(row)).toEqual([
      ['192.0.2.1', 'forward', 'peer-with-route-reflectors', true, '244.0.0.2'],
      ['192.0.2.13', 'reverse', 'peer-with-route-reflectors', true, '244.0.0.2'],
    ]);
  });
  it('an eBGP reverse peering (the client in another AS) is not a reflector client', () => {
    const rs = [
      rr('rr1', '192.0.2.1', '244.0.0.1'),
      node('n2', '192.0.2.12', { annotations: { 'projectcalico.org/ASNumber': '65002' } }),
      node('n3', '192.0.2.13'),
      meshOff(),
      docsPeer(),
    ];
    expect(planFor(rs, 'rr1').peers.map((p) => [p.address.toString(), p.asn, p.routeReflectorClient])).toEqual([
      ['192.0.2.12', 65002, false],
      ['192.0.2.13', 64512, true],
    ]);
  });
  it('reversePeering: Manual implies nothing', () => {
    const manual = peer('peer-with-route-reflectors', { nodeSelector: 'all()', peerSelector: "route-reflector == 'true'", reversePeering: 'Manual' });
    const rs = [rr('rr1', '192.0.2.1', '244.0.0.1'), node('n2', '192.0.2.12'), meshOff(), manual];
    expect(planFor(rs, 'rr1').peers).toEqual([]);
    expect(planFor(rs, 'n2').peers.map(row)).toEqual([['192.0.2.1', 'forward', 'peer-with-route-reflectors', false, null]]);
  });
});

describe('§2 reverse peerings: which nodes are the local side', () => {
  const nodes = () => [
    node('a', '192.0.2.1', { labels: { role: 'edge' } }),
    node('b', '192.0.2.2', { labels: { role: 'core' } }),
    node('c', '192.0.2.3', { labels: { role: 'core' } }),
  ];
  it('global (no node, no nodeSelector): the matched nodes peer back with every other node', () => {
    const rs = [...nodes(), meshOff(), peer('to-edge', { peerSelector: "role == 'edge'" })];
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.origin, p.type])).toEqual([
      ['192.0.2.2', 'reverse', 'node specific'],
      ['192.0.2.3', 'reverse', 'node specific'],
    ]);
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.origin, p.type])).toEqual([['192.0.2.1', 'forward', 'global']]);
  });
  it('node: only that node', () => {
    const rs = [...nodes(), meshOff(), peer('b-to-edge', { node: 'b', peerSelector: "role == 'edge'" })];
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.origin])).toEqual([['192.0.2.2', 'reverse']]);
    expect(planFor(rs, 'c').peers).toEqual([]);
  });
  it('nodeSelector: the nodes it selects', () => {
    const rs = [...nodes(), meshOff(), peer('core-to-edge', { nodeSelector: "role == 'core'", peerSelector: "role == 'edge'" })];
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.origin])).toEqual([
      ['192.0.2.2', 'reverse'],
      ['192.0.2.3', 'reverse'],
    ]);
  });
  it('a node on both sides peers forward; the reverse duplicate gives way', () => {
    const rs = [...nodes(), meshOff(), peer('core-mesh', { nodeSelector: "role == 'core'", peerSelector: "role == 'core'" })];
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.origin])).toEqual([['192.0.2.3', 'forward']]);
    expect(planFor(rs, 'a').peers).toEqual([]);
  });
});

describe('§2 reverse peerings: a peerIP that is a cluster node', () => {
  const nodes = () => [node('a', '192.0.2.1'), node('b', '192.0.2.2', { annotations: v6('2001:db8::2') }), node('c', '192.0.2.3')];
  it('the node with that IP and AS peers back with the local side, in that family only', () => {
    const rs = [...nodes(), meshOff(), peer('a-to-b', { node: 'a', peerIP: '192.0.2.2', asNumber: 64512 })];
    expect(planFor(rs, 'a').peers.map((p) => [p.address.toString(), p.origin, p.port, p.remoteNode])).toEqual([['192.0.2.2', 'forward', 179, 'b']]);
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.origin, p.from.name])).toEqual([['192.0.2.1', 'reverse', 'a-to-b']]);
    expect(planFor(rs, 'c').peers).toEqual([]);
  });
  it('another AS, or a port the node does not listen on: not that node, no reverse peering', () => {
    expect(planFor([...nodes(), meshOff(), peer('x', { node: 'a', peerIP: '192.0.2.2', asNumber: 65000 })], 'b').peers).toEqual([]);
    expect(planFor([...nodes(), meshOff(), peer('x', { node: 'a', peerIP: '192.0.2.2:1790', asNumber: 64512 })], 'b').peers).toEqual([]);
    const listens = [...nodes(), meshOff(), bgpConfig({ listenPort: 1790 }, 'node.b'), peer('x', { node: 'a', peerIP: '192.0.2.2:1790', asNumber: 64512 })];
    expect(planFor(listens, 'b').peers.map((p) => [p.address.toString(), p.origin])).toEqual([['192.0.2.1', 'reverse']]);
  });
  it('without a port, the forward side dials the port that node listens on', () => {
    const rs = [...nodes(), meshOff(), bgpConfig({ listenPort: 1790 }, 'node.b'), peer('x', { node: 'a', peerIP: '192.0.2.2', asNumber: 64512 })];
    expect(planFor(rs, 'a').peers.map((p) => p.port)).toEqual([1790]);
  });
  it('an IPv6 peerIP reverses in IPv6 only; a node without an address in that family has nothing to peer from', () => {
    const dual = [node('a', '192.0.2.1', { annotations: v6('2001:db8::1') }), node('b', '192.0.2.2', { annotations: v6('2001:db8::2') })];
    const rs = [...dual, meshOff(), peer('x', { node: 'a', peerIP: '2001:db8::2', asNumber: 64512 })];
    expect(planFor(rs, 'b').peers.map((p) => [p.address.toString(), p.origin])).toEqual([['2001:db8::1', 'reverse']]);
    const v4only = [node('a', '192.0.2.1'), dual[1], meshOff(), peer('x', { node: 'a', peerIP: '2001:db8::2', asNumber: 64512 })];
    expect(planFor(v4only, 'b').peers).toEqual([]);
  });
});

describe('§2 reverse peerings: dual-stack, precedence and settings', () => {
  it('a peerSelector reverses in both families', () => {
    const rs = [
      rr('rr1', '192.0.2.1', '244.0.0.1', v6('2001:db8::1')),
      node('n2', '192.0.2.12', { annotations: v6('2001:db8::12') }),
      node('n3', '192.0.2.13'),
      meshOff(),
      docsPeer(),
    ];
    expect(planFor(rs, 'rr1').peers.map((p) => [p.address.toString(), p.origin, p.routeReflectorClient, p.sourceAddress?.toString()])).toEqual([
      ['192.0.2.12', 'reverse', true, '192.0.2.1'],
      ['192.0.2.13', 'reverse', true, '192.0.2.1'],
      ['2001:db8::12', 'reverse', true, '2001:db8::1'],
    ]);
    expect(planFor(rs, 'n2').peers.map((p) => [p.address.toString(), p.origin])).toEqual([
      ['192.0.2.1', 'forward'],
      ['2001:db8::1', 'forward'],
    ]);
  });
  it('an explicit peering (global or node-specific) always wins over an implied one; an implied one wins over the mesh', () => {
    const base = [rr('rr1', '192.0.2.1', '244.0.0.1'), node('n2', '192.0.2.12'), node('n3', '192.0.2.13'), docsPeer()];
    const explicit = [
      ...base,
      meshOff(),
      peer('rr1-n2', { node: 'rr1', peerIP: '192.0.2.12', asNumber: 64512, keepaliveTime: '10s' }),
      peer('z-all-n3', { peerIP: '192.0.2.13', asNumber: 64512 }),
    ];
    expect(planFor(explicit, 'rr1').peers.map((p) => [p.address.toString(), p.origin, p.from.name, p.type, p.keepaliveTime ?? null])).toEqual([
      ['192.0.2.12', 'forward', 'rr1-n2', 'node specific', 10],
      ['192.0.2.13', 'forward', 'z-all-n3', 'global', null],
    ]);
    expect(planFor(explicit, 'rr1').errors).toEqual([]);
    // Mesh on: n2 and n3 mesh with each other; a BGPPeer between them (n3 → n2) wins on both ends.
    const meshed = [...base, peer('n3-n2', { node: 'n3', peerSelector: "kubernetes.io/hostname == 'n2'", maxRestartTime: '30s' })];
    const n2 = [node('n2', '192.0.2.12', { labels: { 'kubernetes.io/hostname': 'n2' } })];
    const rs = [...meshed.filter((r) => !(r.kind === 'Node' && r.name === 'n2')), ...n2];
    expect(planFor(rs, 'n2').peers.map((p) => [p.address.toString(), p.origin, p.maxRestartTime])).toEqual([
      ['192.0.2.1', 'forward', 120],
      ['192.0.2.13', 'reverse', 30],
    ]);
    expect(planFor(rs, 'n3').peers.map((p) => [p.address.toString(), p.origin, p.maxRestartTime])).toEqual([
      ['192.0.2.1', 'forward', 120],
      ['192.0.2.12', 'forward', 30],
    ]);
  });
  it("the reverse side of a peerIP BGPPeer expects the forward side's localASNumber, and carries the BGPPeer's session settings", () => {
    const rs = [
      node('a', '192.0.2.1'),
      node('b', '192.0.2.2'),
      meshOff(),
      peer('p', {
        node: 'a',
        peerIP: '192.0.2.2',
        asNumber: 64512,
        localASNumber: 65100,
        keepaliveTime: '20s',
        maxRestartTime: '60s',
        sourceAddress: 'None',
        nextHopMode: 'Self',
      }),
    ];
    expect(planFor(rs, 'a').peers.map((p) => [p.asn, p.localAsn])).toEqual([[64512, 65100]]);
    expect(planFor(rs, 'b').peers).toMatchObject([
      { asn: 65100, localAsn: 64512, keepaliveTime: 20, maxRestartTime: 60, sourceAddress: undefined, nextHopMode: 'Self', origin: 'reverse' },
    ]);
  });
  it('with a peerSelector, localASNumber and numAllowedLocalASNumbers are left out (as Calico) with a warning: each node speaks its own AS', () => {
    const raw = {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPPeer',
      metadata: { name: 'p' },
      spec: { node: 'a', peerSelector: "x == 'y'", localASNumber: 65100, numAllowedLocalASNumbers: 1, keepaliveTime: '20s' },
    };
    const r = validateObject(raw, 'p.yaml');
    if (!r.ok) throw new Error(r.issue.message);
    expect(r.notes.map((n) => [n.severity, n.path])).toEqual([
      ['warning', 'spec.localASNumber'],
      ['warning', 'spec.numAllowedLocalASNumbers'],
    ]);
    const rs = [node('a', '192.0.2.1'), node('b', '192.0.2.2', { labels: { x: 'y' } }), meshOff(), r.resource];
    expect(planFor(rs, 'a').peers.map((p) => [p.asn, p.localAsn, p.numAllowedLocalASNumbers, p.keepaliveTime])).toEqual([[64512, 64512, undefined, 20]]);
    expect(planFor(rs, 'b').peers.map((p) => [p.asn, p.localAsn, p.origin, p.keepaliveTime])).toEqual([[64512, 64512, 'reverse', 20]]);
  });
});

describe('§2 symmetry', () => {
  const labels = fc.record({ role: fc.constantFrom('a', 'b', 'c'), rr: fc.boolean() });
  const sel = fc.constantFrom('all()', "role == 'a'", "role == 'b'", "role != 'c'", 'has(rr)', '!has(rr)');
  const bgpPeer = fc.record({
    scope: fc.constantFrom('global', 'node', 'nodeSelector'),
    node: fc.integer({ min: 0, max: 4 }),
    nodeSelector: sel,
    peerSelector: sel,
  });
  it('for any nodes and peerSelector BGPPeers: every peering between two nodes is planned on both ends, never passive at both', () => {
    fc.assert(
      fc.property(
        fc.array(labels, { minLength: 2, maxLength: 5 }),
        fc.array(bgpPeer, { maxLength: 4 }),
        fc.boolean(),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        (ls, ps, mesh, dual) => {
          const rs: Resource[] = ls.map((l, i) =>
            node(`n${i}`, `192.0.2.${i + 1}`, {
              labels: { role: l.role, ...(l.rr ? { rr: '' } : {}) },
              annotations: { ...(l.rr ? { 'projectcalico.org/RouteReflectorClusterID': '244.0.0.1' } : {}), ...(dual[i] ? v6(`2001:db8::${i + 1}`) : {}) },
            }),
          );
          rs.push(bgpConfig({ nodeToNodeMeshEnabled: mesh }));
          ps.forEach((p, i) =>
            rs.push(
              peer(`p${i}`, {
                ...(p.scope === 'node' ? { node: `n${p.node}` } : p.scope === 'nodeSelector' ? { nodeSelector: p.nodeSelector } : {}),
                peerSelector: p.peerSelector,
              }),
            ),
          );
          const plans = new Map(ls.map((_, i) => [`n${i}`, planFor(rs, `n${i}`)]));
          const addrOf = new Map<string, string>();
          for (const pl of plans.values()) for (const a of [pl.node.ipv4, pl.node.ipv6]) if (a) addrOf.set(a.toString(), pl.node.name);
          for (const [name, pl] of plans) {
            const mine = (f: 4 | 6) => (f === 4 ? pl.node.ipv4 : pl.node.ipv6)!.toString();
            for (const p of pl.peers) {
              const other = plans.get(addrOf.get(p.address.toString())!)!;
              const back = other.peers.find((q) => q.address.toString() === mine(p.address.family));
              expect(back, `${name} → ${p.address} (${p.id}) has no peering back`).toBeDefined();
              // Never both waiting; a mesh peering has exactly one passive end (the lower address, as a string),
              // the peerSelector ones (global or node-specific) none, as Calico does.
              expect(p.passive && back!.passive).toBe(false);
              expect(p.passive).toBe(p.type === 'node-to-node mesh' && p.address.toString() > mine(p.address.family));
              if (p.type === 'node-to-node mesh' && back!.type === 'node-to-node mesh') expect(back!.passive).toBe(!p.passive);
              // A reflector's session is a client one exactly when the far end is outside its cluster.
              expect(p.routeReflectorClient).toBe(pl.node.routeReflectorClusterId !== undefined && other.node.routeReflectorClusterId === undefined);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
