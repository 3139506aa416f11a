/**
 * BGPFilters end to end: the agent driving a real BgpSpeaker toward a second
 * BgpSpeaker (the router) over loopback. Editing the filter takes effect live
 * (the route is withdrawn at the router, then comes back) with no session
 * reset, and `routes`/`explain` show the filter's verdict.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import { BgpSpeaker } from '../../src/speaker.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function within(ms: number, fn: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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
    const router = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.32', listen: { port: 0, addresses: ['127.0.0.32'] } });
    router.addPeer({ address: '127.0.0.31', asn: 64512, passive: true, families: ['ipv4'] });
    await router.start();
    cleanup.push(() => router.stop());

    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-filter-'));
    const file = join(dir, 'cluster.yaml');
    // At first the filter rejects a prefix nobody advertises.
    await writeFile(file, manifests(router.port!, '192.0.2.0/24'));
    const logs: string[] = [];
    const agent = await runAgent({
      node: 'worker1',
      manifests: [file],
      control: false,
      listenPort: 0,
      signals: false,
      debounceMs: 30,
      logger: createLogger({ level: 'debug', write: (l) => void logs.push(l) }),
      speakerFactory: (o) => new BgpSpeaker(o),
    });
    cleanup.push(() => agent.stop());

    const learned = () => router.received('127.0.0.31').map((r) => r.prefix.toString()).sort();
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
    const router = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.34', listen: { port: 0, addresses: ['127.0.0.34'] } });
    router.addPeer({ address: '127.0.0.33', asn: 64512, passive: true, families: ['ipv4'] });
    await router.start();
    cleanup.push(() => router.stop());
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-filter-'));
    const file = join(dir, 'cluster.yaml');
    const text = (filters: string) => manifests(router.port!, '203.0.113.0/24', filters).replaceAll('127.0.0.31', '127.0.0.33').replaceAll('127.0.0.32', '127.0.0.34');
    await writeFile(file, text('[]'));
    const agent = await runAgent({ node: 'worker1', manifests: [file], control: false, listenPort: 0, signals: false, debounceMs: 30, logger: createLogger({ level: 'error', write: () => {} }), speakerFactory: (o) => new BgpSpeaker(o) });
    cleanup.push(() => agent.stop());
    const learned = () => router.received('127.0.0.33').map((r) => r.prefix.toString()).sort();
    await within(10_000, () => learned().length === 2);
    const since = router.status()[0].since.getTime();
    await writeFile(file, text('[no-external]'));
    await within(3_000, () => !learned().includes('203.0.113.0/24'));
    expect(learned()).toEqual(['198.18.0.0/16']);
    expect(router.status()[0].since.getTime()).toBe(since);
  }, 20_000);
});
