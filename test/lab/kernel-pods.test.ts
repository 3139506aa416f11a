/**
 * Pod-to-pod traffic between nodes through the routes tsbgp puts into the
 * kernel (issue 15), in namespaces: topologies/kernel-pods.clab.yml — three
 * nodes running `tsbgp agent --kernel on` in a full mesh with a BIRD ToR, two
 * pods per node wired as Calico wires them. Checks: the routes (proto bird)
 * and that pings between pods ride on them; ECMP for a block two nodes
 * advertise; each node's blackhole for its own block; none for the VXLAN
 * pool or the service range; the IPIP pool's route refused on a node with
 * no tunl0 (this kernel has no IPIP) with the reason in `tsbgp status`, every
 * other route installed; a route deleted by hand put back; kill -9 of an
 * agent keeping its routes and the pings going, and after the restart a
 * route no peer sends any more removed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as cli } from '../agent/cli-helpers.js';
import { eventually } from './eventually.js';
import { routeDst, type KernelRoute, type Lab } from './netns.js';
import { requireLab } from './require.js';
import { alive } from './shell.js';
import { bringUp, REPO } from './topology.js';
import type { StatusJson } from '../../src/agent/agent.js';
import type { KernelRoutesJson } from '../../src/agent/kernel.js';

const available = requireLab(['bird', 'tsbgp', 'bridge', 'host'], { binaries: ['ping', 'node'] });
const [N1, N2, N3, TOR] = ['192.0.2.11', '192.0.2.12', '192.0.2.13', '192.0.2.20'];

describe.skipIf(!available.ok)('kernel routes from tsbgp carry pod traffic between nodes', () => {
  let lab: Lab;
  const ours = (node: string) => lab.kernelBirdRoutes(node);
  const ping = (from: string, to: string) => lab.pings(from, to);
  const status = async (node: string) =>
    JSON.parse((await cli(['status', '--json', '--control', join(lab.node(node).work, 'tsbgp.sock')])).stdout) as StatusJson;

  const NODE1 = {
    '198.19.0.0/26': 'blackhole', // its own block
    '198.19.0.64/26': [N2],
    '198.19.0.128/26': [N3],
    '198.19.1.0/26': [N2, N3], // advertised by two peers: ECMP
    '203.0.113.0/24': [TOR], // from the ToR
  };

  beforeAll(async () => {
    lab = await bringUp(join(REPO, 'test', 'lab', 'topologies', 'kernel-pods.clab.yml'), { runId: `k${process.pid}` });
  }, 90_000);
  afterAll(() => lab?.teardown());

  it('installs the learned routes (proto bird), ECMP and blackholes included, nothing for VXLAN or services', async () => {
    await eventually(() => expect(ours('node1')).toEqual(NODE1), 120_000, 500);
    await eventually(
      () =>
        expect(ours('node2')).toEqual({
          '198.19.0.0/26': [N1],
          '198.19.0.64/26': 'blackhole',
          '198.19.0.128/26': [N3],
          '198.19.1.0/26': 'blackhole',
          '198.19.64.0/26': 'blackhole',
          '203.0.113.0/24': [TOR],
        }),
      60_000,
      500,
    );
    // node3's VXLAN block: advertised, but no blackhole (Felix's job) and nobody programs a route for it
    await eventually(
      () =>
        expect(ours('node3')).toEqual({
          '198.19.0.0/26': [N1],
          '198.19.0.64/26': [N2],
          '198.19.0.128/26': 'blackhole',
          '198.19.1.0/26': 'blackhole',
          '203.0.113.0/24': [TOR],
        }),
      60_000,
      500,
    );
  }, 250_000);

  it('pods on node1 reach pods on nodes 2 and 3, over those routes only', () => {
    for (const [from, to] of [
      ['pod1a', '198.19.0.66'],
      ['pod1b', '198.19.0.67'],
      ['pod1a', '198.19.0.130'],
      ['pod1b', '198.19.0.131'],
      ['pod3a', '198.19.0.2'],
    ])
      expect(ping(from, to), `${from} → ${to}`).toBe(true);
    // node1 has no default route: what covers a remote pod is tsbgp's route and nothing else
    for (const pod of ['198.19.0.66', '198.19.0.130']) {
      const covering = JSON.parse(lab.mustExec('node1', ['ip', '-j', 'route', 'show', 'match', pod])) as KernelRoute[];
      expect(covering.map((r) => [routeDst(r), r.protocol])).toEqual([[pod === '198.19.0.66' ? '198.19.0.64/26' : '198.19.0.128/26', 'bird']]);
    }
    console.log(`node1: ip route show proto bird\n${lab.mustExec('node1', 'ip route show proto bird')}`);
  });

  it('a pool needing tunl0 on a node without one is a per-route error in `tsbgp status`; every other route is installed', async () => {
    const s = await status('node1');
    // written over rtnetlink from the agent's process (koffi loads here)
    expect(s.kernel).toMatchObject({
      enabled: true,
      protocol: 12,
      table: 254,
      writer: 'netlink',
      writerNote: null,
      listener: 'netlink',
      listenerNote: null,
      programClusterRoutes: 'Enabled',
      installed: 5,
    });
    expect(s.kernel!.refused).toEqual([{ prefix: '198.19.64.0/26', reason: 'interface tunl0 does not exist (next hop 192.0.2.12)' }]);
    const text = (await cli(['status', '--control', join(lab.node('node1').work, 'tsbgp.sock')])).stdout;
    expect(text).toContain('refused 198.19.64.0/26: interface tunl0 does not exist (next hop 192.0.2.12)');
    expect(ours('node1')).toEqual(NODE1);
    // `tsbgp routes --kernel`: per prefix; Calico v3.32's metrics (mesh 2147483647 − LOCAL_PREF 2147482623 = 1024; the ToR's routes 2147483547)
    const k = JSON.parse((await cli(['routes', '--kernel', '--json', '--control', join(lab.node('node1').work, 'tsbgp.sock')])).stdout) as KernelRoutesJson;
    expect(Object.fromEntries(k.routes.map((r) => [r.prefix, [r.state, r.source, r.installed.map((x) => x.metric).join(','), r.reason]]))).toEqual({
      '198.19.0.0/26': ['installed', 'static', '0', null],
      '198.19.0.64/26': ['installed', 'bgp', '1024', null],
      '198.19.0.128/26': ['installed', 'bgp', '1024', null],
      '198.19.1.0/26': ['installed', 'bgp', '1024', null],
      '198.19.64.0/26': ['refused', 'bgp', '', 'interface tunl0 does not exist (next hop 192.0.2.12)'],
      '203.0.113.0/24': ['installed', 'bgp', '2147483547', null],
    });
    const ktext = (await cli(['routes', '--kernel', '--control', join(lab.node('node1').work, 'tsbgp.sock')])).stdout;
    expect(ktext).toMatch(/198\.19\.1\.0\/26\s+installed\s+bgp\s+metric 1024 via 192\.0\.2\.12 dev \S+, via 192\.0\.2\.13 dev \S+/);
    expect(ktext).toMatch(/198\.19\.64\.0\/26\s+refused\s+bgp\s+interface tunl0 does not exist/);
  });

  it('a route deleted by hand comes back', async () => {
    lab.mustExec('node1', 'ip route del 198.19.0.64/26 proto bird');
    await eventually(() => expect(ours('node1')['198.19.0.64/26']).toEqual([N2]), 10_000, 100);
    expect(ping('pod1a', '198.19.0.66')).toBe(true);
  });

  it('kill -9 of an agent leaves its routes and the pings work on; after the restart a route no peer sends is gone', async () => {
    const pid = Number(readFileSync(join(lab.node('node1').work, 'agent.pid'), 'utf8'));
    expect(alive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    // while node1's agent is down, the ToR stops sending its network
    lab.mustExec('tor', ['birdc', 'disable', 'behind']);
    expect(ours('node1')).toEqual(NODE1); // nothing removed by the dying agent
    // Pings both ways all along, until the restarted agent has adopted the routes, kept them
    // through the restart and then dropped what no peer sends any more (the ToR's network).
    const { '203.0.113.0/24': _gone, ...rest } = NODE1;
    const deadline = Date.now() + 150_000;
    let pings = 0;
    let sawOld = false;
    for (;;) {
      expect(ping('pod1a', '198.19.0.66'), `ping ${pings} pod1a → pod2a`).toBe(true);
      expect(ping('pod2a', '198.19.0.2'), `ping ${pings} pod2a → pod1a`).toBe(true);
      pings++;
      const t = ours('node1');
      if (t['203.0.113.0/24'] !== undefined) sawOld = true;
      if (t['203.0.113.0/24'] === undefined) {
        expect(t).toEqual(rest);
        break;
      }
      expect(Date.now() < deadline, 'the restart ends within 150 s').toBe(true);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(sawOld).toBe(true);
    const next = Number(readFileSync(join(lab.node('node1').work, 'agent.pid'), 'utf8'));
    expect(next).not.toBe(pid);
    expect(alive(next)).toBe(true);
    console.log(`kill -9 of node1's agent: ${pings} ping pairs during its restart, none lost`);
    for (const [from, to] of [
      ['pod1a', '198.19.0.66'],
      ['pod1b', '198.19.0.131'],
    ])
      expect(ping(from, to)).toBe(true);
    const s = await status('node1');
    expect(s.kernel).toMatchObject({ enabled: true, restarting: false, installed: 4 });
  }, 200_000);
});
