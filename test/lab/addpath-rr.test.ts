/**
 * ADD-PATH (RFC 7911) with a route reflector that sends every path, in
 * namespaces: topologies/addpath-rr.clab.yml — three `tsbgp agent --kernel on`
 * nodes, node-to-node mesh off, each peering over iBGP with FRR 8.4 as its
 * route reflector (addpath-tx-all-paths). Calico's BIRD offers ADD-PATH on
 * every peering (`add paths on`) and so does tsbgp: a LoadBalancer Service
 * with externalTrafficPolicy Local and endpoints on node1 and node2 reaches
 * node3 as two paths on its one session, with distinct path identifiers,
 * and so does a pod block affine to both, which node3 installs as one ECMP
 * route (the Service /32 it does not install: Calico programs no route in
 * the service CIDRs). When node1 loses its endpoint
 * the reflector withdraws that path by its identifier and node3 keeps the
 * other. FRR, receiving, keeps each node's path apart by the identifier the
 * node sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlRequest } from '../../src/agent/control.js';
import type { ReceivedJson } from '../../src/agent/received-view.js';
import { clusterManifest } from './cluster-manifest.js';
import { eventually } from './eventually.js';
import type { Lab } from './netns.js';
import { requireLab } from './require.js';
import { bringUp, REPO } from './topology.js';

const available = requireLab(['frr', 'tsbgp', 'bridge'], { binaries: ['node'] });

const VIP = '198.51.100.10';
const NODES = { node1: '192.0.2.1', node2: '192.0.2.2', node3: '192.0.2.3' } as const;
const RR = '192.0.2.11';
const SHARED = '198.19.1.0/26';

/** The cluster every agent reads: three nodes, mesh off, the reflector as a global BGPPeer, a pool with a block affine to node1 and node2, the Service and its ready endpoints per node. */
function manifest(endpoints: Partial<Record<keyof typeof NODES, number>>): string {
  return clusterManifest({
    nodes: NODES,
    bgp: { asNumber: 64512, nodeToNodeMeshEnabled: false, serviceLoadBalancerIPs: [{ cidr: '198.51.100.0/24' }] },
    peers: { rr: { peerIP: RR, asNumber: 64512 } },
    services: [{ name: 'web', vip: VIP, policy: 'Local', endpoints }],
    extra: [
      { apiVersion: 'projectcalico.org/v3', kind: 'IPPool', metadata: { name: 'pods' }, spec: { cidr: '198.19.0.0/18', blockSize: 26 } },
      // One block affine to node1 and node2: both advertise it, node3 installs it with both next hops.
      ...(['node1', 'node2'] as const).map((node) => ({
        apiVersion: 'crd.projectcalico.org/v1',
        kind: 'BlockAffinity',
        metadata: { name: `${node}-shared` },
        spec: { node, cidr: SHARED, state: 'confirmed' },
      })),
    ],
  });
}

interface FrrNeighborCaps {
  neighborCapabilities?: { addPath?: { ipv4Unicast?: Record<string, boolean> } };
}

describe.skipIf(!available.ok)('ADD-PATH through an FRR route reflector: every path reaches every node', () => {
  let lab: Lab;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbgp-addpath-'));
    file = join(dir, 'cluster.yaml');
    writeFileSync(file, manifest({ node1: 1, node2: 1 }));
    lab = await bringUp(join(REPO, 'test', 'lab', 'topologies', 'addpath-rr.clab.yml'), { env: { TSBGP_MANIFEST: file }, runId: `a${process.pid}` });
  }, 60_000);
  afterAll(() => {
    lab?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** What node3's agent holds from the reflector for `prefix` (the Service /32 unless named): next hop → path identifier. */
  const atNode3 = async (prefix = `${VIP}/32`): Promise<Record<string, number | null>> => {
    const r = (await controlRequest(join(lab.node('node3').work, 'tsbgp.sock'), 'received', { peer: RR })) as ReceivedJson;
    return Object.fromEntries(r.routes.filter((x) => x.prefix === prefix).map((x) => [x.received.nextHop ?? '?', x.pathId]));
  };

  it('negotiates ADD-PATH both ways with the reflector on every node', async () => {
    await eventually(
      () => {
        const n = lab.frrNeighbors('r1');
        for (const a of Object.values(NODES)) expect(n[a]?.bgpState).toBe('Established');
      },
      60_000,
      250,
    );
    const n = lab.frrNeighbors('r1') as Record<string, FrrNeighborCaps>;
    for (const a of Object.values(NODES)) {
      const ap = n[a].neighborCapabilities?.addPath?.ipv4Unicast ?? {};
      // FRR: it sends paths and the node receives them; the node sends paths and FRR receives them.
      expect(ap).toMatchObject({ txAdvertisedAndReceived: true, rxAdvertisedAndReceived: true });
    }
  }, 75_000);

  it("node3 holds both nodes' paths on its one session, with distinct identifiers, and installs the shared block with both next hops", async () => {
    for (const prefix of [`${VIP}/32`, SHARED]) {
      const held = await eventually(
        async () => {
          const h = await atNode3(prefix);
          expect(Object.keys(h).sort()).toEqual([NODES.node1, NODES.node2]);
          return h;
        },
        30_000,
        250,
      );
      const ids = Object.values(held);
      for (const id of ids) expect(id).toEqual(expect.any(Number));
      expect(new Set(ids).size).toBe(2);
    }
    await eventually(() => expect(lab.kernelBirdRoutes('node3')[SHARED]).toEqual([NODES.node1, NODES.node2]), 20_000, 250);
    // As calico_kernel_programming does: a route inside the service CIDRs is never programmed.
    expect(lab.kernelBirdRoutes('node3')[`${VIP}/32`]).toBeUndefined();
    // FRR, receiving from the nodes: one path from each, told apart by the identifier each node sent.
    const paths = lab.frrRib('r1')[`${VIP}/32`] ?? [];
    expect(paths.map((p) => p.peerId).sort()).toEqual([NODES.node1, NODES.node2]);
  }, 60_000);

  it("node1 loses its endpoint: the reflector withdraws that path by its identifier, node3 keeps node2's", async () => {
    const before = await atNode3();
    writeFileSync(file, manifest({ node2: 1 }));
    await eventually(async () => expect(Object.keys(await atNode3())).toEqual([NODES.node2]), 20_000, 100);
    expect((await atNode3())[NODES.node2]).toBe(before[NODES.node2]);
    // Back: node1's path returns beside node2's, which stays as it was.
    writeFileSync(file, manifest({ node1: 1, node2: 1 }));
    await eventually(async () => expect(Object.keys(await atNode3()).sort()).toEqual([NODES.node1, NODES.node2]), 20_000, 100);
    expect((await atNode3())[NODES.node2]).toBe(before[NODES.node2]);
  }, 60_000);
});
