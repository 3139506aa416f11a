/**
 * The agent driving the real BgpSpeaker (src/speaker.ts) against a second
 * BgpSpeaker playing the upstream router, over loopback. It needs the
 * speaker branch: until that is merged the import fails and says so.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import type { SpeakerApi, SpeakerOptions } from '../../src/speaker/types.js';

type Speaker = SpeakerApi & { readonly port: number | undefined };

async function speakerClass(): Promise<new (o: SpeakerOptions) => Speaker> {
  const specifier = '../../src/speaker.js';
  const mod = (await import(specifier).catch((e: Error) => {
    throw new Error(`BgpSpeaker (src/speaker.ts) is not in this tree yet: ${e.message}`);
  })) as { BgpSpeaker: new (o: SpeakerOptions) => Speaker };
  return mod.BgpSpeaker;
}

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

function manifests(routerPort: number, clusterRange: string): string {
  return `apiVersion: v1
kind: Node
metadata: { name: worker1 }
spec: { podCIDRs: [10.244.1.0/24] }
status: { addresses: [{ type: InternalIP, address: 127.0.0.1 }] }
---
apiVersion: projectcalico.org/v3
kind: IPPool
metadata: { name: pool }
spec: { cidr: 198.19.0.0/16, blockSize: 26 }
---
apiVersion: projectcalico.org/v3
kind: BGPConfiguration
metadata: { name: default }
spec: { asNumber: 64512, nodeToNodeMeshEnabled: false, serviceClusterIPs: [{ cidr: ${clusterRange} }] }
---
apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: router }
spec: { peerIP: "127.0.0.2:${routerPort}", asNumber: 65000 }
`;
}

/** The upstream router on 127.0.0.2, AS 65000, waiting for the agent on 127.0.0.1. */
async function startRouter() {
  const BgpSpeaker = await speakerClass();
  const router = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.2', listen: { port: 0, addresses: ['127.0.0.2'] } });
  router.addPeer({ address: '127.0.0.1', asn: 64512, passive: true, families: ['ipv4'] });
  await router.start();
  cleanup.push(() => router.stop());
  return { BgpSpeaker, router };
}

describe('agent + BgpSpeaker over loopback', () => {
  it('the router learns the plan; a manifest edit reaches it; stop keeps graceful restart', async () => {
    const { BgpSpeaker, router } = await startRouter();

    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-int-'));
    const file = join(dir, 'cluster.yaml');
    await writeFile(file, manifests(router.port!, '198.18.0.0/16'));
    const logs: string[] = [];
    const agent: Agent = await runAgent({
      node: 'worker1',
      manifests: [file],
      control: join(dir, 'tsbgp.sock'),
      listenPort: 0,
      signals: false,
      debounceMs: 50,
      logger: createLogger({ level: 'debug', write: (l) => void logs.push(l) }),
      speakerFactory: (o) => new BgpSpeaker(o),
    });
    cleanup.push(() => agent.stop());

    const learned = () => router.received('127.0.0.1').map((r) => r.prefix.toString()).sort();
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
    const { BgpSpeaker, router } = await startRouter();

    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-int-'));
    const file = join(dir, 'cluster.yaml');
    // A second router that never answers (nothing listens on 127.0.0.3): it sends no End-of-RIB.
    const down = `---
apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: down }
spec: { peerIP: "127.0.0.3:${router.port!}", asNumber: 65001 }
`;
    await writeFile(file, manifests(router.port!, '198.18.0.0/16') + down);
    const t0 = Date.now();
    const agent: Agent = await runAgent({
      node: 'worker1',
      manifests: [file],
      control: join(dir, 'tsbgp.sock'),
      listenPort: 0,
      signals: false,
      debounceMs: 50,
      selectionDeferralTime: 2,
      logger: createLogger({ level: 'error', write: () => undefined }),
      speakerFactory: (o) => new BgpSpeaker(o),
    });
    cleanup.push(() => agent.stop());

    const learned = () => router.received('127.0.0.1').map((r) => r.prefix.toString()).sort();
    await within(1_000, () => agent.status().peers.some((p) => p.address === '127.0.0.2' && p.state === 'Established'));
    expect(learned()).toEqual([]); // held back: the router that is down owes its End-of-RIB
    await within(10_000, () => learned().length === 2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_900);
    expect(learned()).toEqual(['10.244.1.0/24', '198.18.0.0/16']);
  });
});
