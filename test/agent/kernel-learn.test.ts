/**
 * The agent's side of learning the kernel's routes (issue 28): the speaker
 * reports what it learned (`kernelLearned`, `onLearned`), the agent
 * advertises what Calico's export takes — a pod whose IP is borrowed from
 * another node's block — with LOCAL_PREF from the route's metric, withdraws
 * it when the route goes, and `plan` shows the kernel side.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { controlRequest } from '../../src/agent/control.js';
import { createLogger } from '../../src/agent/log.js';
import type { PlanJson } from '../../src/agent/views.js';
import type { KernelStatus } from '../../src/kernel/kernel-fib.js';
import type { LearnedKernelRoute } from '../../src/kernel/types.js';
import type { KernelOptions } from '../../src/speaker/kernel.js';
import type { SpeakerOptions } from '../../src/speaker/types.js';
import { FakeSpeaker } from './fake-speaker.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/base/', import.meta.url));

/** A fake speaker with a kernel side whose learned routes a test sets. */
class KernelFake extends FakeSpeaker {
  learned: LearnedKernelRoute[] = [];
  kernelStatus(): KernelStatus {
    return {
      enabled: true,
      table: 254,
      protocol: 12,
      restarting: false,
      routes: { desired: 0, installed: 0, refused: 0, stale: 0 },
      refused: [],
      counters: { written: 0, batches: 0, failed: 0, resyncs: 0, putBack: 0, foreign: 0, lost: 0 },
    };
  }
  kernelRoute(): undefined {
    return undefined;
  }
  kernelRoutes(): [] {
    return [];
  }
  kernelLearned(): LearnedKernelRoute[] {
    return this.learned;
  }
  setKernelRules(): void {}
  setKernelStatics(): void {}
  /** The kernel's table changed: tell the agent, as KernelFib's onLearned does. */
  learn(routes: LearnedKernelRoute[]): void {
    this.learned = routes;
    (this.options?.kernel as KernelOptions | undefined)?.onLearned?.();
  }
}

const felix = (prefix: string, dev: string, metric = 1024): LearnedKernelRoute => ({
  source: 'kernel',
  protocol: 3,
  route: { prefix, type: 'unicast', metric, nexthops: [{ dev }] },
});

const running: Agent[] = [];
afterEach(async () => {
  for (const a of running.splice(0)) await a.stop();
});

describe('the agent advertises the kernel routes Calico would (borrowed pod IPs)', () => {
  it("a pod with an IP from another node's block: advertised with LOCAL_PREF 2147483647 − metric, withdrawn when its route goes; one in the own block: not", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-klearn-'));
    let speaker: KernelFake | undefined;
    const control = join(dir, 'tsbgp.sock');
    const agent = await runAgent({
      node: 'worker1',
      manifests: [yb],
      control,
      signals: false,
      debounceMs: 50,
      kernel: {},
      logger: createLogger({ level: 'error', write: () => {} }),
      speakerFactory: (opts: SpeakerOptions) => (speaker = new KernelFake(opts)),
    });
    running.push(agent);
    await agent.settled();
    const s = speaker!;
    expect(s.options?.kernel).toMatchObject({ learn: true });
    const own = () => [...s.routes.keys()].sort();
    const before = own();
    expect(before).toContain('198.19.0.64/26'); // worker1's block in yaobank
    s.learn([felix('198.19.0.200/32', 'cali1'), felix('198.19.0.70/32', 'cali2'), felix('198.19.0.201/32', 'cali3', 512), felix('10.9.9.9/32', 'eth0')]);
    await agent.settled();
    expect(own()).toEqual([...before, '198.19.0.200/32', '198.19.0.201/32'].sort());
    expect(s.routes.get('198.19.0.200/32')!.attrs).toEqual({ origin: 'igp', localPref: 2147483647 - 1024 });
    expect(s.routes.get('198.19.0.201/32')!.attrs).toEqual({ origin: 'igp', localPref: 2147483647 - 512 });
    // Each carries its device into the speaker, for BGPFilter `interface` export rules (BIRD's ifname).
    expect([s.routes.get('198.19.0.200/32')!.iface, s.routes.get('198.19.0.201/32')!.iface]).toEqual(['cali1', 'cali3']);
    expect(before.map((k) => s.routes.get(k)!.iface)).toEqual(before.map(() => undefined)); // the node's own routes have none, as in Calico
    const plan = (await controlRequest(control, 'plan')) as PlanJson;
    expect(plan.kernel.exported).toEqual(['198.19.0.200/32', '198.19.0.201/32']);
    expect(plan.kernel.learned!.map((r) => [r.prefix, r.exported, r.why])).toEqual([
      ['10.9.9.9/32', false, 'not inside any IP pool or service range'],
      ['198.19.0.70/32', false, 'more specific than the local block 198.19.0.64/26, which is exported instead'],
      ['198.19.0.200/32', true, "inside IPPool default-ipv4-ippool (198.19.0.0/16) and outside this node's blocks"],
      ['198.19.0.201/32', true, "inside IPPool default-ipv4-ippool (198.19.0.0/16) and outside this node's blocks"],
    ]);
    expect(plan.kernel.learn.enabled).toBe(true);
    expect(plan.redistributed.filter((r) => r.from === 'kernel').map((r) => [r.prefix, r.kernel?.dev, r.export.accept])).toEqual([
      ['198.19.0.200/32', 'cali1', true],
      ['198.19.0.201/32', 'cali3', true],
    ]);
    // every peer is sent it
    for (const p of plan.peers.filter((x) => !x.refused)) expect(p.exports).toContain('198.19.0.200/32');
    // the pod goes: its route goes; the other moves to another interface: originated again with it
    const originated = s.calls.filter((c) => c.op === 'originate').length;
    s.learn([felix('198.19.0.201/32', 'cali4', 512)]);
    await agent.settled();
    expect(own()).toEqual([...before, '198.19.0.201/32'].sort());
    expect(s.calls.filter((c) => c.op === 'originate').slice(originated)).toEqual([
      { op: 'originate', prefix: '198.19.0.201/32', attrs: { origin: 'igp', localPref: 2147483647 - 512 }, options: { iface: 'cali4' } },
    ]);
    expect(s.routes.get('198.19.0.201/32')!.iface).toBe('cali4');
    expect(s.calls.filter((c) => c.op === 'withdraw').map((c) => (c as { prefix: string }).prefix)).toEqual(['198.19.0.200/32']);
  });
});
