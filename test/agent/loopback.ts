/**
 * The agent on a real BgpSpeaker against a second BgpSpeaker playing the
 * upstream router, over loopback: what the end-to-end agent tests share.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { runAgent, type Agent, type AgentOptions } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import { BgpSpeaker } from '../../src/speaker/speaker.js';

const cleanup: (() => Promise<void>)[] = [];

/** Stops, after each test, what the helpers below started (last first). */
export function stopAfterEach(): void {
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });
}

export async function within(ms: number, fn: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The router (AS 65000) on `routerAddress`, waiting for the agent's node on `agentAddress` (AS 64512). */
export async function startRouter(routerAddress: string, agentAddress: string): Promise<BgpSpeaker> {
  const router = new BgpSpeaker({ asn: 65000, routerId: routerAddress, listen: { port: 0, addresses: [routerAddress] } });
  router.addPeer({ address: agentAddress, asn: 64512, passive: true, families: ['ipv4'] });
  await router.start();
  cleanup.push(() => router.stop());
  return router;
}

export interface LoopbackAgent {
  readonly agent: Agent;
  /** The manifest file the agent watches: write to it to change the cluster. */
  readonly file: string;
  readonly dir: string;
  /** Log lines, when `logLevel` is given. */
  readonly logs: string[];
}

/** `tsbgp agent --node worker1` on a real speaker, reading `manifests` from a file of its own. */
export async function startAgent(
  manifests: string,
  opts: Partial<Omit<AgentOptions, 'control' | 'manifests'>> & { logLevel?: 'debug' | 'error'; control?: boolean } = {},
): Promise<LoopbackAgent> {
  const { logLevel = 'error', control = false, ...rest } = opts;
  const dir = await mkdtemp(join(tmpdir(), 'tsbgp-loopback-'));
  const file = join(dir, 'cluster.yaml');
  await writeFile(file, manifests);
  const logs: string[] = [];
  const agent = await runAgent({
    node: 'worker1',
    manifests: [file],
    control: control ? join(dir, 'tsbgp.sock') : false,
    listenPort: 0,
    signals: false,
    debounceMs: 30,
    logger: createLogger({ level: logLevel, write: (l) => void logs.push(l) }),
    speakerFactory: (o) => new BgpSpeaker(o),
    ...rest,
  });
  cleanup.push(() => agent.stop());
  return { agent, file, dir, logs };
}

/** The prefixes `router` holds from `agentAddress`, sorted. */
export const learnedBy = (router: BgpSpeaker, agentAddress: string) => (): string[] =>
  router
    .received(agentAddress)
    .map((r) => r.prefix.toString())
    .sort();
