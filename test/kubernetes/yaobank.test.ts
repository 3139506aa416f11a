import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listManifestFiles, loadManifests } from '../../src/agent/sources/manifest-files.js';
import { plan } from '../../src/kubernetes/plan.js';
import { Planner } from '../../src/kubernetes/planner.js';
import { stateOf } from '../../src/kubernetes/state.js';

const dir = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));
const NODES = ['worker1', 'worker2', 'master1'] as const;

const blocks = { worker1: '198.19.0.64/26', worker2: '198.19.0.128/26', master1: '198.19.0.0/26' };

/** Expected routes per step and node (the table in examples/yaobank/README.md). */
const expected: Record<number, Record<(typeof NODES)[number], string[]>> = {
  0: { worker1: [blocks.worker1], worker2: [blocks.worker2], master1: [blocks.master1] },
  1: { worker1: ['198.18.0.0/16', blocks.worker1], worker2: ['198.18.0.0/16', blocks.worker2], master1: ['198.18.0.0/16', blocks.master1] },
  2: { worker1: ['198.18.0.0/16', '198.18.217.62/32', blocks.worker1], worker2: ['198.18.0.0/16', blocks.worker2], master1: ['198.18.0.0/16', blocks.master1] },
  3: {
    worker1: ['198.18.0.0/16', '198.18.217.62/32', blocks.worker1, '203.0.113.0/24'],
    worker2: ['198.18.0.0/16', blocks.worker2, '203.0.113.0/24'],
    master1: ['198.18.0.0/16', blocks.master1, '203.0.113.0/24'],
  },
  4: {
    worker1: ['198.18.0.0/16', '198.18.217.62/32', blocks.worker1, '203.0.113.0/24', '203.0.113.10/32'],
    worker2: ['198.18.0.0/16', blocks.worker2, '203.0.113.0/24'],
    master1: ['198.18.0.0/16', blocks.master1, '203.0.113.0/24'],
  },
};

describe('examples/yaobank', () => {
  it('the base set loads cleanly: only the pool’s natOutgoing (ipipMode is read for kernel programming) and the Namespace and Deployment kinds are reported as ignored', async () => {
    const base = await loadManifests([`${dir}base`]);
    expect(base.issues.map((i) => [i.severity, i.kind, i.path])).toEqual([
      ['ignored', 'IPPool', 'spec.natOutgoing'],
      ['ignored', 'Namespace', undefined],
      ['ignored', 'Deployment', undefined],
    ]);
    expect(base.resources.filter((r) => r.kind === 'BlockAffinity')).toHaveLength(4);
    expect(base.resources.filter((r) => r.kind === 'Service').map((r) => r.name)).toEqual(['customer', 'summary', 'database']);
  });

  it('plans each step for each node as the lab describes, from scratch and incrementally', async () => {
    const base = await loadManifests([`${dir}base`]);
    const { files: steps } = await listManifestFiles([`${dir}steps`]);
    expect(steps).toHaveLength(4);
    const state = stateOf(base.resources);
    const planners = NODES.map((n) => new Planner(n, stateOf(base.resources)));
    const check = (step: number) => {
      for (const [i, n] of NODES.entries()) {
        const p = plan(state, n);
        expect(
          p.routes.map((r) => r.prefix.toString()),
          `step ${step} node ${n}`,
        ).toEqual(expected[step][n]);
        expect(planners[i].plan).toEqual(p);
        expect(p.errors).toEqual([]);
      }
    };
    check(0);
    for (const [s, file] of steps.entries()) {
      const loaded = await loadManifests([file]);
      expect(loaded.issues).toEqual([]);
      for (const r of loaded.resources) {
        state.apply({ type: 'update', resource: r });
        for (const p of planners) p.apply({ type: 'update', resource: r });
      }
      check(s + 1);
    }
    // Step 4: the external IP is refused where no customer pod runs.
    expect(plan(state, 'worker2').refused).toEqual([
      {
        namespace: 'yaobank',
        name: 'customer',
        ip: '203.0.113.10',
        source: 'externalIP',
        reason: 'not-local',
        message: 'externalTrafficPolicy=Local and no endpoint runs on node worker2',
      },
    ]);
    const w1 = plan(state, 'worker1');
    expect(w1.refused).toEqual([]);
    expect(w1.routes.find((r) => r.prefix.toString() === '203.0.113.10/32')!.reasons).toEqual([
      {
        kind: 'Service',
        namespace: 'yaobank',
        name: 'customer',
        ip: '203.0.113.10',
        source: 'externalIP',
        rule: 'externalTrafficPolicy=Local with a ready local endpoint',
      },
    ]);
  });

  it('every node peers with host1 (global) and the two other nodes (mesh)', async () => {
    const base = await loadManifests([`${dir}base`]);
    const state = stateOf(base.resources);
    const w1 = plan(state, 'worker1');
    expect(w1.peers.map((p) => [p.address.toString(), p.type, p.asn, p.localAsn, p.passive])).toEqual([
      // worker1 (192.0.2.10) is the lower address of both its mesh peerings: it waits; host1 is no node.
      ['192.0.2.11', 'node-to-node mesh', 64512, 64512, true],
      ['192.0.2.12', 'node-to-node mesh', 64512, 64512, true],
      ['192.0.2.20', 'global', 65000, 64512, false],
    ]);
    const m1 = plan(state, 'master1');
    expect(m1.peers.map((p) => [p.address.toString(), p.passive])).toEqual([
      ['192.0.2.10', false],
      ['192.0.2.11', false],
      ['192.0.2.20', false],
    ]);
    expect(m1.node).toMatchObject({ name: 'master1', asn: 64512 });
    expect(m1.node.ipv4?.toString()).toBe('192.0.2.12');
  });
});
