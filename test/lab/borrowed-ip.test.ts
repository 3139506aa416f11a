/**
 * Borrowed pod IPs and /32 blocks through tsbgp's routes (issue 28, points 2
 * and 3), in namespaces: topologies/borrowed-ip.clab.yml — three nodes
 * running `tsbgp agent --kernel on` in a full mesh, pods wired as Calico
 * wires them. pod1 runs on node1 with an IP from node2's block: node1 learns
 * Felix's `/32 dev caliA proto boot metric 1024` from the kernel and
 * advertises it (calico_export_to_bgp_peers), so node3 and node2 install it
 * more specific than the block's route and the block's blackhole, and the
 * other pods reach pod1. podh has node3's /32 block: no blackhole, advertised
 * only while node3's kernel holds a route to it. Without learning (tsbgp
 * before issue 28) node3 sends pod1's traffic to node2, whose blackhole drops it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlanJson } from '../../src/agent/views.js';
import { controlRequest } from '../../src/agent/control.js';
import { eventually } from './eventually.js';
import { routeDst, type KernelRoute, type Lab } from './netns.js';
import { requireLab } from './require.js';
import { bringUp, REPO } from './topology.js';

const available = requireLab(['tsbgp', 'bridge', 'host'], { binaries: ['ping', 'node'] });
const [N1, N2, N3] = ['192.0.2.11', '192.0.2.12', '192.0.2.13'];

describe.skipIf(!available.ok)("a pod with a borrowed IP, and a /32 block, reached through tsbgp's routes", () => {
  let lab: Lab;
  const ours = (node: string) => lab.kernelBirdRoutes(node);
  const ping = (from: string, to: string) => lab.pings(from, to);
  const plan = async (node: string) => (await controlRequest(join(lab.node(node).work, 'tsbgp.sock'), 'plan')) as PlanJson;

  const NODE3 = {
    '198.19.0.0/26': [N1],
    '198.19.0.64/26': [N2],
    '198.19.0.70/32': [N1], // pod1's borrowed IP: from node1, more specific than node2's block
    '198.19.0.128/26': 'blackhole',
  };
  const NODE1 = {
    '198.19.0.0/26': 'blackhole',
    '198.19.0.64/26': [N2],
    '198.19.0.128/26': [N3],
    '198.19.2.5/32': [N3], // node3's /32 block: its kernel holds a route to podh
  };

  beforeAll(async () => {
    lab = await bringUp(join(REPO, 'test', 'lab', 'topologies', 'borrowed-ip.clab.yml'), { runId: `b${process.pid}` });
  }, 90_000);
  afterAll(() => lab?.teardown());

  it('the borrowed /32 is advertised by the node the pod runs on and installed by the others; the /32 block gets no blackhole', async () => {
    await eventually(() => expect(ours('node3')).toEqual(NODE3), 120_000, 500);
    await eventually(() => expect(ours('node1')).toEqual(NODE1), 60_000, 500);
    // node2 owns the block: its blackhole stays, pod1's /32 via node1 goes over it
    await eventually(
      () =>
        expect(ours('node2')).toEqual({
          '198.19.0.0/26': [N1],
          '198.19.0.64/26': 'blackhole',
          '198.19.0.70/32': [N1],
          '198.19.0.128/26': [N3],
          '198.19.2.5/32': [N3],
        }),
      60_000,
      500,
    );
  }, 250_000);

  it('every pod reaches pod1 (borrowed IP) and podh (/32 block), over those routes', () => {
    for (const [from, to] of [
      ['pod3', '198.19.0.70'],
      ['pod2', '198.19.0.70'],
      ['pod1', '198.19.2.5'],
      ['pod2', '198.19.2.5'],
      ['pod1', '198.19.0.130'],
      ['pod1', '198.19.0.66'],
    ])
      expect(ping(from, to), `${from} → ${to}`).toBe(true);
    const covering = JSON.parse(lab.mustExec('node3', ['ip', '-j', 'route', 'show', 'match', '198.19.0.70'])) as KernelRoute[];
    expect(covering.map((r) => `${routeDst(r)} ${r.protocol}`).sort()).toEqual(['198.19.0.64/26 bird', '198.19.0.70/32 bird']);
  });

  it('`plan` from the agent says what it learned and why it advertises it, and its kernel plan', async () => {
    const p1 = await plan('node1');
    const learned = p1.kernel.learned!.find((r) => r.prefix === '198.19.0.70/32');
    expect(learned).toEqual({
      prefix: '198.19.0.70/32',
      source: 'kernel',
      protocol: 3,
      type: 'unicast',
      dev: 'caliA',
      metric: 1024,
      exported: true,
      why: "inside IPPool pods (198.19.0.0/18) and outside this node's blocks",
    });
    expect(p1.kernel.exported).toEqual(['198.19.0.70/32']);
    expect(p1.redistributed.map((r) => [r.prefix, r.from])).toEqual([['198.19.0.70/32', 'kernel']]);
    expect(p1.peers.map((p) => [p.address, p.exports])).toEqual([
      [N2, ['198.19.0.0/26', '198.19.0.70/32']],
      [N3, ['198.19.0.0/26', '198.19.0.70/32']],
    ]);
    expect(p1.kernel.programmed!.find((r) => r.prefix === '198.19.2.5/32')).toMatchObject({ source: 'bgp', state: 'installed', peers: [N3] });
    const p3 = await plan('node3');
    expect(p3.kernel.blackholes).toEqual(['198.19.0.128/26']);
    expect(p3.kernel.aggregation).toEqual([
      { block: '198.19.0.128/26', from: 'BlockAffinity node3-pods', hostBlock: false },
      { block: '198.19.2.5/32', from: 'BlockAffinity node3-host', hostBlock: true },
    ]);
    expect(p3.kernel.exported).toEqual(['198.19.2.5/32']);
    expect(p3.kernel.learned!.find((r) => r.prefix === '198.19.0.130/32')).toMatchObject({
      exported: false,
      why: 'more specific than the local block 198.19.0.128/26, which is exported instead',
    });
  });

  it('the pod goes, the route goes; it comes back, the route comes back (/32 block alike)', async () => {
    lab.mustExec('node1', 'ip route del 198.19.0.70/32 dev caliA');
    lab.mustExec('node3', 'ip route del 198.19.2.5/32 dev caliH');
    await eventually(() => expect(ours('node3')['198.19.0.70/32']).toBeUndefined(), 30_000, 200);
    await eventually(() => expect(ours('node1')['198.19.2.5/32']).toBeUndefined(), 30_000, 200);
    lab.mustExec('node1', 'ip route add 198.19.0.70/32 dev caliA proto boot metric 1024');
    lab.mustExec('node3', 'ip route add 198.19.2.5/32 dev caliH proto boot metric 1024');
    await eventually(() => expect(ours('node3')).toEqual(NODE3), 30_000, 200);
    await eventually(() => expect(ours('node1')).toEqual(NODE1), 30_000, 200);
    expect(ping('pod3', '198.19.0.70')).toBe(true);
    expect(ping('pod1', '198.19.2.5')).toBe(true);
  }, 120_000);
});
