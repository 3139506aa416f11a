/**
 * The agent driving the real BgpSpeaker (src/speaker/speaker.ts) against a second
 * BgpSpeaker playing the upstream router, over loopback.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { clusterManifests } from './cluster-manifests.js';
import { learnedBy, startAgent, startRouter, stopAfterEach, within } from './loopback.js';

stopAfterEach();

const manifests = (routerPort: number, clusterRange: string) =>
  clusterManifests({
    nodeAddress: '127.0.0.1',
    podCIDRs: ['10.244.1.0/24'],
    pools: ['198.19.0.0/16'],
    bgp: { serviceClusterIPs: [{ cidr: clusterRange }] },
    peers: { router: { peerIP: `127.0.0.2:${routerPort}`, asNumber: 65000 } },
  });

describe('agent + BgpSpeaker over loopback', () => {
  it('the router learns the plan; a manifest edit reaches it; stop keeps graceful restart', async () => {
    const router = await startRouter('127.0.0.2', '127.0.0.1');
    const { agent, file, logs } = await startAgent(manifests(router.port!, '198.18.0.0/16'), { control: true, debounceMs: 50, logLevel: 'debug' });

    const learned = learnedBy(router, '127.0.0.1');
    await within(10_000, () => learned().length === 2);
    expect(learned()).toEqual(['10.244.1.0/24', '198.18.0.0/16']);
    expect(agent.status().peers).toEqual([expect.objectContaining({ address: '127.0.0.2', type: 'global', state: 'Established' })]);
    expect(logs.some((l) => l.includes('BGP session established'))).toBe(true);

    await writeFile(file, manifests(router.port!, '198.20.0.0/16'));
    await within(2_000, () => learned().includes('198.20.0.0/16') && !learned().includes('198.18.0.0/16'));
    expect(learned()).toEqual(['10.244.1.0/24', '198.20.0.0/16']);

    await agent.stop();
    expect(logs.some((l) => l.includes('tsbgp agent shutting down'))).toBe(true);
    // Graceful restart: the router keeps the routes, marked stale.
    await within(2_000, () => router.received('127.0.0.1').every((r) => r.stale));
    expect(learned()).toEqual(['10.244.1.0/24', '198.20.0.0/16']);
  });

  it('a configured router that is down holds the first advertisement only for the selection deferral time', async () => {
    const router = await startRouter('127.0.0.2', '127.0.0.1');
    // A second router that never answers (nothing listens on 127.0.0.3): it sends no End-of-RIB.
    const down = `---
apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: down }
spec: { peerIP: "127.0.0.3:${router.port!}", asNumber: 65001 }
`;
    const t0 = Date.now();
    const { agent } = await startAgent(manifests(router.port!, '198.18.0.0/16') + down, { control: true, debounceMs: 50, selectionDeferralTime: 2 });
    const learned = learnedBy(router, '127.0.0.1');
    await within(1_000, () => agent.status().peers.some((p) => p.address === '127.0.0.2' && p.state === 'Established'));
    expect(learned()).toEqual([]); // held back: the router that is down owes its End-of-RIB
    await within(10_000, () => learned().length === 2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_900);
    expect(learned()).toEqual(['10.244.1.0/24', '198.18.0.0/16']);
  });
});
