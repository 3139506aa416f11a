/**
 * Issue 13's lost route, end to end: `tsbgp agent` (a real process on the
 * real speaker) advertises a service range whose prefixAdvertisement names
 * a standard, a large (Calico's `aa:nn:mm`) and a well-known community,
 * plus literal standard and large ones, to BIRD in a namespace; BIRD's
 * table must show the range with every one of them. Before the fix the
 * agent put the large community into `communities`, the speaker refused
 * the whole route, and BIRD never saw 198.51.100.0/24. The session is eBGP,
 * so no-export on our own route must not hold it back (src/rib/export.ts).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../lab/eventually.js';
import { cleanupStale, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { loadTopology } from '../lab/topology.js';
import { TOPOLOGIES } from './harness.js';
import { birdViews } from './readers.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const available = requireLab(['bird', 'tsbgp'], { binaries: ['node'] });

describe.skipIf(!available.ok)('agent → speaker → BIRD: every community of a prefixAdvertisement arrives', () => {
  let lab: Lab;

  beforeAll(async () => {
    cleanupStale();
    const topo = loadTopology(join(TOPOLOGIES, 'agent-bird.clab.yml'));
    const node = topo.nodes.find((n) => n.name === 'node1')!;
    node.env = { ...node.env, TSBGP_REPO: repo, TSBGP_MANIFEST: join(TOPOLOGIES, 'agent-bird', 'cluster.yaml') };
    lab = await Lab.up(topo, { ephemeral: true });
  }, 60_000);
  afterAll(() => lab?.teardown());

  const routes = () => birdViews(lab.birdRoutes('r1').filter((r) => r.protocol === 'node1')).map(({ protocol: _p, ...v }) => v);

  it('BIRD holds both ranges with their standard, large and well-known communities', async () => {
    await eventually(
      () =>
        expect(routes().sort((a, b) => (a.prefix < b.prefix ? -1 : 1))).toEqual([
          {
            prefix: '198.51.100.0/24',
            origin: 'igp',
            asPath: [64512],
            nextHop: '192.0.2.1',
            med: undefined,
            localPref: 100, // BIRD's default on import
            // std, the literal 64512:300, and no-export (65535:65281) as BIRD prints it
            communities: ['64512:100', '64512:300', '65535:65281'],
            // the literal 64512:1:2 and the named big = 64512:7:9
            largeCommunities: ['64512:1:2', '64512:7:9'],
          },
          {
            prefix: '203.0.113.0/24',
            origin: 'igp',
            asPath: [64512],
            nextHop: '192.0.2.1',
            med: undefined,
            localPref: 100,
            communities: ['64512:100'],
            largeCommunities: [],
          },
        ]),
      45_000,
      300,
    );
  }, 60_000);
});
