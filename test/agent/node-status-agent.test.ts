import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import { nodeStatus, type NodeStatusInput } from '../../src/agent/node-status.js';
import type { SpeakerOptions } from '../../src/speaker/types.js';
import { FakeSpeaker } from './fake-speaker.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));
const running: Agent[] = [];
afterEach(async () => {
  for (const a of running.splice(0)) await a.stop();
});

describe('the agent and CalicoNodeStatus', () => {
  it('starts the reporter with a reader of its state once running, and closes it on stop', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-nodestatus-'));
    await cp(join(yb, 'base'), join(dir, 'base'), { recursive: true });
    let read: (() => NodeStatusInput) | undefined;
    let closed = 0;
    const agent = await runAgent({
      node: 'worker1',
      manifests: [join(dir, 'base')],
      control: false,
      signals: false,
      version: '7.7.7',
      logger: createLogger({ level: 'error', write: () => undefined }),
      speakerFactory: (opts: SpeakerOptions) => new FakeSpeaker(opts),
      nodeStatus: { start: (r) => void (read = r), close: () => void closed++ },
    });
    running.push(agent);
    await agent.settled();
    expect(read).toBeDefined();
    const input = read!();
    expect(input).toMatchObject({ running: true, version: 'tsbgp 7.7.7', routerId: '192.0.2.10' });
    expect(input.reconfiguredAt).toBeInstanceOf(Date);
    expect([...input.peerTypes.keys()].sort()).toEqual(['192.0.2.11', '192.0.2.12', '192.0.2.20']);
    expect(input.originated.map(String)).toEqual(['198.19.0.64/26']);
    const s = nodeStatus(input, ['BGP', 'Agent']);
    expect(s.agent?.birdV4.state).toBe('Ready');
    expect(s.bgp?.peersV4?.map((p) => [p.peerIP, p.type])).toEqual([
      ['192.0.2.11', 'NodeMesh'],
      ['192.0.2.12', 'NodeMesh'],
      ['192.0.2.20', 'GlobalPeer'],
    ]);
    await agent.stop();
    expect(closed).toBe(1);
  });
});
