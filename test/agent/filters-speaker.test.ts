/**
 * BGPFilters end to end: the agent driving a real BgpSpeaker toward a second
 * BgpSpeaker (the router) over loopback. Editing the filter takes effect live
 * (the route is withdrawn at the router, then comes back) with no session
 * reset, and `routes`/`explain` show the filter's verdict.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { clusterManifests } from './cluster-manifests.js';
import { learnedBy, startAgent, startRouter, stopAfterEach, within } from './loopback.js';

stopAfterEach();

/** Node `agent` peering with the router on `router`:`routerPort`, the filter rejecting `rejectCidr`. */
const manifests = (routerPort: number, rejectCidr: string, peerFilters = ['no-external'], agent = '127.0.0.31', router = '127.0.0.32') =>
  clusterManifests({
    nodeAddress: agent,
    pools: ['198.19.0.0/16'],
    bgp: { serviceClusterIPs: [{ cidr: '198.18.0.0/16' }], serviceExternalIPs: [{ cidr: '203.0.113.0/24' }] },
    more: [
      {
        apiVersion: 'projectcalico.org/v3',
        kind: 'BGPFilter',
        metadata: { name: 'no-external' },
        spec: { exportV4: [{ action: 'Reject', matchOperator: 'Equal', cidr: rejectCidr }] },
      },
    ],
    peers: { router: { peerIP: `${router}:${routerPort}`, asNumber: 65000, filters: peerFilters } },
  });

describe('BGPFilters on a real speaker', () => {
  it('a filter rejecting a CIDR toward the router takes effect live, without a session reset', async () => {
    const router = await startRouter('127.0.0.32', '127.0.0.31');
    // At first the filter rejects a prefix nobody advertises.
    const { agent, file, logs } = await startAgent(manifests(router.port!, '192.0.2.0/24'), { logLevel: 'debug' });
    const learned = learnedBy(router, '127.0.0.31');
    await within(10_000, () => learned().length === 2);
    expect(learned()).toEqual(['198.18.0.0/16', '203.0.113.0/24']);
    const routerSince = router.status()[0].since.getTime();
    const agentSince = agent.status().peers[0].since;
    expect(agent.status().peers[0]).toMatchObject({ state: 'Established', refused: false });
    expect(agent.routes('127.0.0.32').peers[0].exports).toEqual(['198.18.0.0/16', '203.0.113.0/24']);

    // The filter now rejects the external range: withdrawn at the router, session untouched.
    await writeFile(file, manifests(router.port!, '203.0.113.0/24'));
    await within(3_000, () => !learned().includes('203.0.113.0/24'));
    expect(learned()).toEqual(['198.18.0.0/16']);
    expect(router.status()[0]).toMatchObject({ state: 'Established' });
    expect(router.status()[0].since.getTime()).toBe(routerSince);
    expect(agent.status().peers[0].since).toBe(agentSince);
    expect(agent.routes('127.0.0.32').peers[0].exports).toEqual(['198.18.0.0/16']);
    const x = agent.explain('203.0.113.0/24').prefixes[0].peers[0];
    expect(x).toMatchObject({ address: '127.0.0.32', exported: false, why: 'BGPFilter no-external exportV4[0] rejects', filter: { verdict: 'reject' } });
    expect(agent.explain('198.18.0.0/16').prefixes[0].peers[0]).toMatchObject({ exported: true, filter: { verdict: 'none' } });
    expect(logs.some((l) => l.includes('BGPFilters applied to the speaker'))).toBe(true);

    // And back: the route returns, still on the same session.
    await writeFile(file, manifests(router.port!, '192.0.2.0/24'));
    await within(3_000, () => learned().includes('203.0.113.0/24'));
    expect(router.status()[0].since.getTime()).toBe(routerSince);
  }, 20_000);

  it('a peer that starts naming a filter gets it live, without a session reset', async () => {
    const router = await startRouter('127.0.0.34', '127.0.0.33');
    const text = (filters: string[]) => manifests(router.port!, '203.0.113.0/24', filters, '127.0.0.33', '127.0.0.34');
    const { file } = await startAgent(text([]));
    const learned = learnedBy(router, '127.0.0.33');
    await within(10_000, () => learned().length === 2);
    const since = router.status()[0].since.getTime();
    await writeFile(file, text(['no-external']));
    await within(3_000, () => !learned().includes('203.0.113.0/24'));
    expect(learned()).toEqual(['198.18.0.0/16']);
    expect(router.status()[0].since.getTime()).toBe(since);
  }, 20_000);

  it('operations reach the router; an interface rule (refused before) no longer keeps the peer down', async () => {
    const router = await startRouter('127.0.0.36', '127.0.0.35');
    const ops = {
      apiVersion: 'projectcalico.org/v3',
      kind: 'BGPFilter',
      metadata: { name: 'ops' },
      spec: {
        exportV4: [
          // The node's own routes have no interface, here as in Calico: this rule never matches them (the peer, eBGP one hop away, gets no warning).
          { action: 'Reject', interface: 'eth*' },
          // The node's routes carry the normal route priority (1024) as LOCAL_PREF; toward this eBGP router too, as the policy runs before the session drops it.
          { action: 'Reject', matchOperator: 'Equal', cidr: '198.19.0.0/16', priority: 1024 },
          {
            action: 'Accept',
            matchOperator: 'Equal',
            cidr: '203.0.113.0/24',
            operations: [{ addCommunity: { value: '65000:7' } }, { addCommunity: { value: '65000:1:2' } }, { prependASPath: { prefix: [64999, 64998] } }],
          },
        ],
      },
    };
    const text = clusterManifests({
      nodeAddress: '127.0.0.35',
      pools: ['198.19.0.0/16'],
      bgp: { serviceClusterIPs: [{ cidr: '198.18.0.0/16' }, { cidr: '198.19.0.0/16' }], serviceExternalIPs: [{ cidr: '203.0.113.0/24' }] },
      more: [ops],
      peers: { router: { peerIP: `127.0.0.36:${router.port!}`, asNumber: 65000, filters: ['ops'] } },
    });
    const { agent } = await startAgent(text);
    const learned = learnedBy(router, '127.0.0.35');
    // The agent's End-of-RIB: its initial table, one plan's routes, is all in.
    await within(10_000, () => router.status()[0].negotiated?.endOfRibReceived.includes('ipv4') === true);
    expect(agent.status().peers[0]).toMatchObject({ state: 'Established', refused: false });
    expect((agent.status().warnings ?? []).filter((w) => w.kind === 'BGPFilter')).toEqual([]);
    expect(learned()).toEqual(['198.18.0.0/16', '203.0.113.0/24']);
    expect(agent.explain('198.19.0.0/16').prefixes[0].peers[0]).toMatchObject({
      exported: false,
      filter: { verdict: 'reject', reason: 'BGPFilter ops exportV4[1] rejects' },
    });
    const got = router.received('127.0.0.35').find((r) => r.prefix.toString() === '203.0.113.0/24')!;
    expect({ asPath: got.asPath, communities: got.communities, large: got.largeCommunities }).toEqual({
      asPath: [64512, 64999, 64998],
      communities: ['65000:7'],
      large: ['65000:1:2'],
    });
    const plain = router.received('127.0.0.35').find((r) => r.prefix.toString() === '198.18.0.0/16')!;
    expect({ asPath: plain.asPath, communities: plain.communities }).toEqual({ asPath: [64512], communities: [] });
  }, 20_000);
});
