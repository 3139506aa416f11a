import { cp, mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import type { PlanJson } from '../../src/agent/views.js';
import type { SpeakerOptions } from '../../src/speaker/types.js';
import { run } from './cli-helpers.js';
import { FakeSpeaker } from './fake-speaker.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));

/** A BGPPeer choosing BGP-speaking pods, and Felix's status file for one it chose. */
const bgpPeer = `apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: vm-routers }
spec:
  localWorkloadSelector: app == 'router'
  asNumber: 64516
`;
const statusFile = (ip: string) => JSON.stringify({ ifaceName: 'cali7d1c4ab3f0e', ipv4Nets: [`${ip}/32`], bgpPeerName: 'vm-routers' });

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'tsbgp-wl-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const manifests = join(dir, 'manifests');
  await cp(join(yb, 'base'), manifests, { recursive: true });
  await writeFile(join(manifests, 'workload-peer.yaml'), bgpPeer);
  const status = join(dir, 'endpoint-status');
  await mkdir(status);
  return { manifests, status };
}

describe('local workload peering in the agent', () => {
  it('peers passively with a pod Felix names, re-advertises what it sends inside a pool, and drops it when the file goes', async () => {
    const { manifests, status } = await setup();
    await writeFile(join(status, 'k8s-pod-router'), statusFile('198.19.0.70'));
    let speaker: FakeSpeaker | undefined;
    const agent: Agent = await runAgent({
      node: 'worker1',
      manifests: [manifests],
      endpointStatusDir: status,
      control: false,
      signals: false,
      debounceMs: 20,
      logger: createLogger({ write: () => undefined }),
      speakerFactory: (o: SpeakerOptions) => (speaker = new FakeSpeaker(o)),
    });
    cleanup.unshift(() => agent.stop());
    await agent.settled();
    const s = speaker!;
    expect(s.peers.get('198.19.0.70')).toMatchObject({
      asn: 64516,
      localAsn: 64512,
      passive: true,
      description: 'Local_Workload_198_19_0_70 (local workload)',
    });
    expect(s.peers.get('198.19.0.70')?.localAddress).toBeUndefined();
    // What the pod sends: inside the pool (re-advertised, as BIRD's built-in export), and outside any pool (kept to itself).
    s.setState('198.19.0.70', 'Established');
    s.receive('198.19.0.70', '198.19.200.0/24', [], [64516]);
    s.receive('198.19.0.70', '203.0.113.0/24', [], [64516]);
    await agent.settled();
    expect([...s.routes.keys()].sort()).toEqual(['198.19.0.64/26', '198.19.200.0/24']);
    // Passed on with the pod's AS path behind the node's, as BIRD does.
    expect(s.routes.get('198.19.200.0/24')?.attrs).toMatchObject({ asPath: [64516] });
    // The pod goes: its peering and what it sent go with it.
    await unlink(join(status, 'k8s-pod-router'));
    await agent.settled();
    expect(s.peers.has('198.19.0.70')).toBe(false);
    expect([...s.routes.keys()].sort()).toEqual(['198.19.0.64/26']);
  });

  it('a malformed status file is reported naming the file, and the last valid one stays in force', async () => {
    const { manifests, status } = await setup();
    await writeFile(join(status, 'k8s-pod-router'), statusFile('198.19.0.70'));
    let speaker: FakeSpeaker | undefined;
    const lines: string[] = [];
    const agent = await runAgent({
      node: 'worker1',
      manifests: [manifests],
      endpointStatusDir: status,
      control: false,
      signals: false,
      debounceMs: 20,
      logger: createLogger({ write: (l) => void lines.push(l) }),
      speakerFactory: (o) => (speaker = new FakeSpeaker(o)),
    });
    cleanup.unshift(() => agent.stop());
    await agent.settled();
    await writeFile(join(status, 'k8s-pod-router'), '{"ifaceName":');
    await agent.settled();
    expect(speaker!.peers.has('198.19.0.70')).toBe(true);
    expect(lines.some((l) => l.includes(join(status, 'k8s-pod-router')) && l.includes('not JSON'))).toBe(true);
  });

  it('tsbgp plan --endpoint-status-dir shows the workload peers in --json', async () => {
    const { manifests, status } = await setup();
    await writeFile(join(status, 'k8s-pod-router'), statusFile('198.19.0.70'));
    const res = await run(['plan', '--node', 'worker1', '--json', '--manifests', manifests, '--endpoint-status-dir', status]);
    expect(res.code).toBe(0);
    const v = JSON.parse(res.stdout) as PlanJson;
    const p = v.peers.find((x) => x.address === '198.19.0.70');
    expect(p).toMatchObject({
      id: 'Local_Workload_198_19_0_70',
      type: 'local workload',
      asn: 64516,
      passive: true,
      sourceAddress: null,
      ttlSecurity: null,
      password: null,
      origin: 'BGPPeer vm-routers localWorkloadSelector (endpoint status k8s-pod-router)',
    });
    // Without the directory, no workload is known.
    const offline = JSON.parse((await run(['plan', '--node', 'worker1', '--json', '--manifests', manifests])).stdout) as PlanJson;
    expect(offline.peers.some((x) => x.type === 'local workload')).toBe(false);
  });
});
