/**
 * Local workload peering end to end, in namespaces
 * (topologies/workload-peering.clab.yml): node1 runs `tsbgp agent` with a
 * BGPPeer `localWorkloadSelector` and an endpoint-status file written as
 * Felix writes it; pod1, wired as Calico wires a pod, runs BIRD and dials the
 * node at its localWorkloadPeeringIPV4 (169.254.0.179). Checks: the session
 * comes up with the node passive; the pod gets the node's block (Calico's
 * export to peers); a BGPFilter `interface` rule matches the pod's routes
 * (their next hop resolved through the kernel's routes, as BIRD's `gateway
 * recursive`); what the pod announces inside the IP pool is passed on
 * to the node's other peer (the ToR) and what it announces outside any pool
 * is not, as Calico's BIRD does; the file's removal ends the peering and
 * withdraws the pod's network from the ToR.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as cli } from '../agent/cli-helpers.js';
import type { StatusJson } from '../../src/agent/agent.js';
import { eventually } from './eventually.js';
import { cleanupStale, Lab } from './netns.js';
import { requireLab } from './require.js';
import { sleep } from './shell.js';
import { loadTopology } from './topology.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const available = requireLab(['bird', 'tsbgp', 'bridge'], { binaries: ['node'] });

describe.skipIf(!available.ok)('local workload peering: a BGP-speaking pod peers with its node', () => {
  let lab: Lab;
  const status = async () => JSON.parse((await cli(['status', '--json', '--control', join(lab.node('node1').work, 'tsbgp.sock')])).stdout) as StatusJson;
  const podSession = () => lab.birdProtocols('pod1').find((p) => p.name === 'node');
  const torRoutes = () =>
    lab
      .birdRoutes('tor')
      .filter((r) => r.protocol === 'node1')
      .map((r) => r.prefix)
      .sort();
  const podRoutes = () =>
    lab
      .birdRoutes('pod1')
      .filter((r) => r.protocol === 'node')
      .map((r) => r.prefix)
      .sort();

  beforeAll(async () => {
    cleanupStale();
    const topo = loadTopology(join(repo, 'test', 'lab', 'topologies', 'workload-peering.clab.yml'));
    for (const n of topo.nodes) if (n.kind === 'tsbgp') n.env = { ...n.env, TSBGP_REPO: repo };
    lab = await Lab.up(topo, { ephemeral: true, runId: `w${process.pid}` });
  }, 90_000);
  afterAll(() => lab?.teardown());

  it('the pod dials the node at 169.254.0.179 and the session comes up, the node passive', async () => {
    await eventually(() => expect(podSession()?.details['BGP state']).toBe('Established'), 120_000, 500);
    const s = await status();
    const peer = s.peers.find((p) => p.address === '198.19.0.2');
    expect(peer).toMatchObject({ id: 'Local_Workload_198_19_0_2', type: 'local workload', state: 'Established', asn: 64516 });
    // The pod's session is to the local workload peering address, from its own.
    expect(podSession()?.details['Neighbor address']).toBe('169.254.0.179');
    const plan = JSON.parse(
      (
        await cli([
          'plan',
          '--node',
          'node1',
          '--json',
          '--manifests',
          join(repo, 'test/lab/topologies/workload-peering/cluster.yaml'),
          '--endpoint-status-dir',
          join(lab.node('node1').work, 'endpoint-status'),
        ])
      ).stdout,
    ) as { peers: { address: string; passive: boolean; sourceAddress: string | null }[] };
    expect(plan.peers.find((p) => p.address === '198.19.0.2')).toMatchObject({ passive: true, sourceAddress: null });
  }, 150_000);

  it('the pod learns the node block; the ToR gets the pod network inside the pool, not the one outside any pool', async () => {
    // The pod's own networks do not come back to it: they carry its AS (BIRD does not send them back at all).
    await eventually(() => expect(podRoutes()).toEqual(['198.19.0.0/26']), 60_000, 500);
    await eventually(() => expect(torRoutes()).toEqual(['198.19.0.0/26', '198.19.200.0/24']), 60_000, 500);
    // As BIRD passes it on: the pod's AS behind the node's.
    expect(lab.birdRoutes('tor').find((r) => r.prefix === '198.19.200.0/24')?.attrs['BGP.as_path']).toBe('64512 64516');
    // Its next hop (the pod, 198.19.0.2) is off the session's network; the kernel sends it out of caliA (Felix's route), so
    // the BGPFilter's `interface: cali*` rule matched on import, as with Calico's BIRD, and added its community.
    expect(lab.birdRoutes('tor').find((r) => r.prefix === '198.19.200.0/24')?.attrs['BGP.community']).toBe('(64512,100)');
    // 203.0.113.0/24 reached node1 (it is in its received routes) but is not passed on.
    const received = JSON.parse(
      (await cli(['routes', '--received', '198.19.0.2', '--json', '--control', join(lab.node('node1').work, 'tsbgp.sock')])).stdout,
    ) as unknown;
    expect(JSON.stringify(received)).toContain('203.0.113.0/24');
    expect(torRoutes()).not.toContain('203.0.113.0/24');
  }, 150_000);

  it('the endpoint-status file going (the pod deleted) ends the peering and withdraws the pod network', async () => {
    rmSync(join(lab.node('node1').work, 'endpoint-status', 'default.pod1-eth0'));
    for (const deadline = Date.now() + 60_000; (await status()).peers.some((p) => p.address === '198.19.0.2');) {
      if (Date.now() > deadline) throw new Error('the workload peer is still there 60 s after its endpoint-status file went');
      await sleep(500);
    }
    await eventually(() => expect(torRoutes()).toEqual(['198.19.0.0/26']), 60_000, 500);
    expect(podSession()?.details['BGP state']).not.toBe('Established');
  }, 150_000);
});
