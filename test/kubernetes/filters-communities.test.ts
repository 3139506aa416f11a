/**
 * BGPFilter rules on communities against prefixAdvertisements communities,
 * as Calico renders them: confd's export filter calls the BGPFilter
 * functions first and `calico_export_to_bgp_peers` (whose
 * `apply_communities()` adds the prefixAdvertisements communities) after,
 * so a rule never sees those communities; a rule that accepts ends the
 * filter (BIRD's `accept`) and the route goes without them.
 *
 * The scenario, on the plan (routes/explain views) and on the wire (the
 * agent's real speaker toward an eBGP and an iBGP router over loopback):
 * prefixAdvertisements [{198.18.1.64/26: [65000:100]}]; BGPFilter exportV4
 * [Reject peerType eBGP cidr Equal 198.18.1.0/26, Reject communities
 * [65000:100]]. The eBGP peer gets 198.18.1.64/26 with 65000:100 and not
 * 198.18.1.0/26; the iBGP peer gets both, the .64/26 with 65000:100.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { clusterManifests } from '../agent/cluster-manifests.js';
import { startAgent, startRouter, stopAfterEach, within } from '../agent/loopback.js';
import { routeAttributes } from '../../src/kubernetes/reconcile.js';
import { exportsTo } from '../../src/agent/views.js';
import { exportFilterVerdict, type Plan } from '../../src/kubernetes/index.js';
import { Prefix } from '../../src/net/index.js';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import { bgpConfig, filter, node, peer, planFor } from './helpers.js';

stopAfterEach();

const RULES = [
  { action: 'Reject', peerType: 'eBGP', matchOperator: 'Equal', cidr: '198.18.1.0/26' },
  { action: 'Reject', communities: { values: ['65000:100'] } },
];
const BGP = {
  serviceClusterIPs: [{ cidr: '198.18.1.0/26' }, { cidr: '198.18.1.64/26' }],
  prefixAdvertisements: [{ cidr: '198.18.1.64/26', communities: ['65000:100'] }],
};

function scenario(rules: unknown[] = RULES): Plan {
  return planFor(
    [
      node('worker1', '192.0.2.10'),
      bgpConfig({ asNumber: 64512, nodeToNodeMeshEnabled: false, ...BGP }),
      filter('comm', { exportV4: rules }),
      peer('upstream', { peerIP: '192.0.2.20', asNumber: 65000, filters: ['comm'] }),
      peer('reflector', { peerIP: '192.0.2.21', asNumber: 64512, filters: ['comm'] }),
    ],
    'worker1',
  );
}

const peerAt = (p: Plan, address: string) => p.peers.find((x) => x.address.toString() === address)!;

describe('BGPFilter communities rules and prefixAdvertisements communities (plan)', () => {
  it('a rule never sees prefixAdvertisements communities: eBGP gets the .64/26 only, iBGP both', () => {
    const p = scenario();
    const ebgp = peerAt(p, '192.0.2.20');
    const ibgp = peerAt(p, '192.0.2.21');
    expect(exportsTo(p, ebgp).map(String)).toEqual(['198.18.1.64/26']);
    expect(exportsTo(p, ibgp).map(String)).toEqual(['198.18.1.0/26', '198.18.1.64/26']);
    expect(exportFilterVerdict(p, ebgp, Prefix.parse('198.18.1.0/26'))).toEqual({ verdict: 'reject', reason: 'BGPFilter comm exportV4[0] rejects' });
    expect(exportFilterVerdict(p, ebgp, Prefix.parse('198.18.1.64/26')).verdict).toBe('none');
    // The agent originates them after the export policy.
    const r = p.routes.find((x) => x.prefix.toString() === '198.18.1.64/26')!;
    expect(r.communities.map((c) => c.text)).toEqual(['65000:100']);
    expect(routeAttributes(r)).toEqual({ origin: 'igp', communities: [], exportCommunities: ['65000:100'] });
  });

  it('a rule that accepts the route ends the filter: the verdict says it goes without its prefixAdvertisements communities', () => {
    const p = scenario([{ action: 'Accept', matchOperator: 'Equal', cidr: '198.18.1.64/26' }, ...RULES]);
    expect(exportFilterVerdict(p, peerAt(p, '192.0.2.20'), Prefix.parse('198.18.1.64/26'))).toEqual({
      verdict: 'accept',
      reason: 'BGPFilter comm exportV4[0] accepts',
      withoutPrefixCommunities: true,
    });
  });
});

/** The manifests of the scenario with the agent on 127.0.0.61 and routers on loopback ports. */
function manifests(ebgpPort: number, ibgpPort: number, rules: unknown[] = RULES): string {
  return clusterManifests({
    nodeAddress: '127.0.0.61',
    bgp: BGP,
    more: [{ apiVersion: 'projectcalico.org/v3', kind: 'BGPFilter', metadata: { name: 'comm' }, spec: { exportV4: rules } }],
    peers: {
      upstream: { peerIP: `127.0.0.62:${ebgpPort}`, asNumber: 65000, filters: ['comm'] },
      reflector: { peerIP: `127.0.0.63:${ibgpPort}`, asNumber: 64512, filters: ['comm'] },
    },
  });
}

async function startIbgpRouter(): Promise<BgpSpeaker> {
  const router = new BgpSpeaker({ asn: 64512, routerId: '127.0.0.63', listen: { port: 0, addresses: ['127.0.0.63'] } });
  router.addPeer({ address: '127.0.0.61', asn: 64512, passive: true, families: ['ipv4'] });
  await router.start();
  return router;
}

/** What `router` holds from the agent: prefix → communities. */
const held = (router: BgpSpeaker) => Object.fromEntries(router.received('127.0.0.61').map((r) => [r.prefix.toString(), r.communities]));

describe('BGPFilter communities rules and prefixAdvertisements communities (on the wire)', () => {
  it('the eBGP router gets 198.18.1.64/26 with 65000:100 and not the .0/26; the iBGP router gets both; a rule accepting the .64/26 sends it without 65000:100', async () => {
    const ebgp = await startRouter('127.0.0.62', '127.0.0.61');
    const ibgp = await startIbgpRouter();
    try {
      const { file, agent } = await startAgent(manifests(ebgp.port!, ibgp.port!));
      await within(10_000, () => Object.keys(held(ibgp)).length === 2 && Object.keys(held(ebgp)).length === 1);
      expect(held(ebgp)).toEqual({ '198.18.1.64/26': ['65000:100'] });
      expect(held(ibgp)).toEqual({ '198.18.1.0/26': [], '198.18.1.64/26': ['65000:100'] });

      await writeFile(file, manifests(ebgp.port!, ibgp.port!, [{ action: 'Accept', matchOperator: 'Equal', cidr: '198.18.1.64/26' }, ...RULES]));
      await within(5_000, () => held(ebgp)['198.18.1.64/26']?.length === 0 && held(ibgp)['198.18.1.64/26']?.length === 0);
      expect(held(ebgp)).toEqual({ '198.18.1.64/26': [] });
      expect(held(ibgp)).toEqual({ '198.18.1.0/26': [], '198.18.1.64/26': [] });
      // explain (the plan's view) says the same.
      expect(agent.explain('198.18.1.64/26').prefixes[0].peers.map((x) => x.filter)).toEqual(
        [0, 1].map(() => ({ verdict: 'accept', reason: 'BGPFilter comm exportV4[0] accepts', withoutPrefixCommunities: true })),
      );
    } finally {
      await ibgp.stop();
    }
  }, 25_000);
});
