/**
 * BGPFilters end to end: the agent driving a real BgpSpeaker toward a second
 * BgpSpeaker (the router) over loopback. Editing the filter takes effect live
 * (the route is withdrawn at the router, then comes back) with no session
 * reset, and `routes`/`explain` show the filter's verdict.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { learnedBy, startAgent, startRouter, stopAfterEach, within } from './loopback.js';

stopAfterEach();

function manifests(routerPort: number, rejectCidr: string, peerFilters = '[no-external]'): string {
  return `apiVersion: v1
kind: Node
metadata: { name: worker1 }
status: { addresses: [{ type: InternalIP, address: 127.0.0.31 }] }
---
apiVersion: projectcalico.org/v3
kind: IPPool
metadata: { name: pool }
spec: { cidr: 198.19.0.0/16, blockSize: 26 }
---
apiVersion: projectcalico.org/v3
kind: BGPConfiguration
metadata: { name: default }
spec:
  asNumber: 64512
  nodeToNodeMeshEnabled: false
  serviceClusterIPs: [{ cidr: 198.18.0.0/16 }]
  serviceExternalIPs: [{ cidr: 203.0.113.0/24 }]
---
apiVersion: projectcalico.org/v3
kind: BGPFilter
metadata: { name: no-external }
spec:
  exportV4:
    - { action: Reject, matchOperator: Equal, cidr: ${rejectCidr} }
---
apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: router }
spec: { peerIP: "127.0.0.32:${routerPort}", asNumber: 65000, filters: ${peerFilters} }
`;
}

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
    const text = (filters: string) => manifests(router.port!, '203.0.113.0/24', filters).replaceAll('127.0.0.31', '127.0.0.33').replaceAll('127.0.0.32', '127.0.0.34');
    const { file } = await startAgent(text('[]'));
    const learned = learnedBy(router, '127.0.0.33');
    await within(10_000, () => learned().length === 2);
    const since = router.status()[0].since.getTime();
    await writeFile(file, text('[no-external]'));
    await within(3_000, () => !learned().includes('203.0.113.0/24'));
    expect(learned()).toEqual(['198.18.0.0/16']);
    expect(router.status()[0].since.getTime()).toBe(since);
  }, 20_000);
});
