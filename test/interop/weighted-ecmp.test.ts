/**
 * Weighted ECMP by local endpoints, end to end (issue 30,
 * docs/service-annotations.md): three `tsbgp agent` processes on the real
 * speaker, one shared manifest, a LoadBalancer Service with
 * externalTrafficPolicy Local and tsbgp.io/weighted-ecmp, ready endpoints
 * 3/1/0 on node1/node2/node3. FRR 8.4 (maximum-paths) installs the Service
 * /32 with next-hop weights 3:1 (node3 advertises nothing under Local);
 * scaling to 2/2 makes them 1:1 within 2 s, with no session reset. BIRD,
 * which ignores the link bandwidth community, keeps equal ECMP throughout.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterManifest } from '../lab/cluster-manifest.js';
import { eventually } from '../lab/eventually.js';
import type { KernelRoute, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { bringUp } from '../lab/topology.js';
import { sleep } from '../lab/shell.js';
import { TOPOLOGIES } from './harness.js';

const available = requireLab(['frr', 'bird', 'tsbgp', 'bridge'], { binaries: ['node'] });

const VIP = '198.51.100.10';
const NODES = { node1: '192.0.2.1', node2: '192.0.2.2', node3: '192.0.2.3' } as const;
const FRR = '192.0.2.11';

/** The cluster every agent reads: three nodes, the routers as global BGPPeers, the Service and its endpoints per node. */
function manifest(endpoints: Record<keyof typeof NODES, number>): string {
  return clusterManifest({
    nodes: NODES,
    bgp: {
      asNumber: 64512,
      nodeToNodeMeshEnabled: false,
      serviceLoadBalancerIPs: [{ cidr: '198.51.100.0/24' }],
      serviceLoadBalancerAggregation: 'Disabled',
    },
    peers: { frr: { peerIP: FRR, asNumber: 65000 }, bird: { peerIP: '192.0.2.12', asNumber: 65001 } },
    services: [{ name: 'web', vip: VIP, policy: 'Local', annotations: { 'tsbgp.io/weighted-ecmp': 'true' }, endpoints }],
  });
}

describe.skipIf(!available.ok)('weighted ECMP: agents → FRR weighs next hops by ready endpoints; BIRD keeps equal ECMP', () => {
  let lab: Lab;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbgp-wecmp-'));
    file = join(dir, 'cluster.yaml');
    writeFileSync(file, manifest({ node1: 3, node2: 1, node3: 0 }));
    lab = await bringUp(join(TOPOLOGIES, 'weighted-ecmp.clab.yml'), { env: { TSBGP_MANIFEST: file } });
  }, 60_000);
  afterAll(() => {
    lab?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The router's kernel route to the Service /32 (`ip -j route show VIP`), or undefined. */
  const kernelRoute = (router: 'r1' | 'r2'): KernelRoute | undefined =>
    (JSON.parse(lab.mustExec(router, ['ip', '-j', 'route', 'show', `${VIP}/32`]) || '[]') as KernelRoute[])[0];
  /** gateway → weight of a multipath route. */
  const weights = (r: KernelRoute | undefined): Record<string, number> => Object.fromEntries((r?.nexthops ?? []).map((h) => [h.gateway ?? '?', h.weight ?? 1]));
  const line = (router: 'r1' | 'r2') =>
    lab
      .mustExec(router, ['ip', 'route', 'show', `${VIP}/32`])
      .trim()
      .replace(/\s+/g, ' ');
  /** BIRD's BGP sessions: name, state, and when it last changed (ms of the day, from birdc's `since`). */
  const birdSessions = () =>
    lab
      .birdProtocols('r2')
      .filter((p) => p.proto === 'BGP')
      .map((p) => {
        const [h, m, sec] = p.since.split(':').map(Number);
        return { name: p.name, state: `${p.name} ${p.state}`, sinceMs: Math.round(((h * 60 + m) * 60 + sec) * 1000) };
      });
  /** FRR's view of each node session: state and how many times it came up (a reset counts one more). */
  const frrSessions = () => {
    const n = lab.frrNeighbors('r1');
    return Object.fromEntries(Object.values(NODES).map((a) => [a, `${n[a]?.bgpState} ${String(n[a]?.connectionsEstablished)}`]));
  };

  it('3/1/0 ready endpoints: FRR installs weights 3:1 (node3 advertises nothing); BIRD installs equal ECMP', async () => {
    const t0 = Date.now();
    await eventually(
      () => expect(frrSessions()).toEqual({ [NODES.node1]: 'Established 1', [NODES.node2]: 'Established 1', [NODES.node3]: 'Established 1' }),
      60_000,
      250,
    );
    await eventually(() => expect(Object.keys(weights(kernelRoute('r1'))).sort()).toEqual([NODES.node1, NODES.node2]), 20_000, 100);
    const w = weights(kernelRoute('r1'));
    console.log(`FRR r1 (3/1/0, ${Date.now() - t0} ms after the lab came up): ${line('r1')}`);
    expect(w[NODES.node1] / w[NODES.node2]).toBe(3);
    // FRR's own view: two multipaths, each with its link bandwidth.
    const rib = JSON.parse(lab.mustExec('r1', ['vtysh', '-c', `show bgp ipv4 unicast ${VIP}/32 json`])) as {
      paths: { nexthops: { ip: string }[]; extendedCommunity?: { string: string } }[];
    };
    expect(rib.paths.map((p) => [p.nexthops[0].ip, p.extendedCommunity?.string]).sort()).toEqual([
      [NODES.node1, expect.stringMatching(/LB:64512:375000 \(3\.000 Mbps\)/)],
      [NODES.node2, expect.stringMatching(/LB:64512:125000 \(1\.000 Mbps\)/)],
    ]);
    // BIRD: the same two paths, equal weights (it ignores the community; nothing breaks).
    await eventually(() => expect(weights(kernelRoute('r2'))).toEqual({ [NODES.node1]: 1, [NODES.node2]: 1 }), 20_000, 100);
    console.log(`BIRD r2 (3/1/0): ${line('r2')}`);
  }, 85_000);

  it('2/2/0: FRR re-weighs to 1:1 within 2 s, with no session reset; BIRD stays equal', async () => {
    const sessions = frrSessions();
    const birdSince = birdSessions();
    const t0 = Date.now();
    writeFileSync(file, manifest({ node1: 2, node2: 2, node3: 0 }));
    let elapsed = 0;
    for (;;) {
      const w = weights(kernelRoute('r1'));
      elapsed = Date.now() - t0;
      if (w[NODES.node1] !== undefined && w[NODES.node1] === w[NODES.node2]) break;
      if (elapsed > 10_000) break;
      await sleep(25);
    }
    console.log(`FRR r1 (2/2/0, ${elapsed} ms after the manifest changed): ${line('r1')}`);
    const w = weights(kernelRoute('r1'));
    expect(w[NODES.node1]).toBe(w[NODES.node2]);
    expect(Object.keys(w).sort()).toEqual([NODES.node1, NODES.node2]);
    expect(elapsed).toBeLessThan(2_000);
    expect(frrSessions()).toEqual(sessions);
    expect(weights(kernelRoute('r2'))).toEqual({ [NODES.node1]: 1, [NODES.node2]: 1 });
    // No reset at BIRD: each session still up since the same moment (birdc prints it to the
    // millisecond from a monotonic clock, so two readings of one instant can differ by 1 ms).
    const now = birdSessions();
    expect(now.map((p) => p.state)).toEqual(birdSince.map((p) => p.state));
    now.forEach((p, i) => expect(Math.abs(p.sinceMs - birdSince[i].sinceMs), p.name).toBeLessThan(20));
  }, 30_000);
});
