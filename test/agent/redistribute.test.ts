import { describe, expect, it } from 'vitest';
import {
  desiredRedistribution,
  isLocalPeer,
  MAX_PASS_DELAY_MS,
  redistributedOptions,
  Redistribution,
  redistributionOps,
} from '../../src/agent/redistribute.js';
import type { LearnedJson, Redistributed } from '../../src/agent/views.js';
import type { Plan } from '../../src/kubernetes/index.js';
import { Prefix } from '../../src/net/index.js';
import type { ReceivedRoute } from '../../src/speaker/types.js';
import { peer, plan, route } from './plans.js';

function withPool(p: Plan): Plan {
  return {
    ...p,
    exportAllowList: {
      ...p.exportAllowList,
      pools: [{ name: 'lb', cidr: Prefix.parse('198.51.100.0/24'), disabled: true, disableBGPExport: false }],
      serviceRanges: [{ prefix: Prefix.parse('198.18.0.0/16'), field: 'serviceClusterIPs' }],
    },
  };
}

const rx = (peerAddr: string, prefix: string, over: Partial<ReceivedRoute> = {}): ReceivedRoute => ({
  peer: peerAddr,
  prefix: Prefix.parse(prefix),
  asPath: [],
  communities: [],
  largeCommunities: [],
  best: false,
  stale: false,
  ...over,
});

describe('redistribution', () => {
  const p = withPool(plan([route('198.18.0.0/16')], [peer('127.0.0.1'), peer('192.0.2.1', { id: 'Node_self' }), peer('192.0.2.20'), peer('::1')]));

  it('local peers: loopback (v4 and v6) and the node’s own address', () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', '192.0.2.1', '192.0.2.20', '2001:db8::1', 'junk'].map((a) => isLocalPeer(p, a))).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('takes what the built-in export accepts from local peers only; a disabled pool is the allow-list', () => {
    const got = desiredRedistribution(p, [
      rx('127.0.0.1', '198.51.100.7/32', { communities: ['65000:1'] }),
      rx('192.0.2.20', '198.51.100.8/32'), // not local
      rx('127.0.0.1', '10.0.0.1/32'), // outside every pool and range
      rx('127.0.0.1', '198.18.0.0/16'), // the plan originates it itself
      rx('127.0.0.1', '198.18.5.5/32', { stale: true }), // inside a service range; stale kept
    ]);
    expect(got).toEqual([
      { prefix: Prefix.parse('198.18.5.5/32'), from: '127.0.0.1', communities: [] },
      { prefix: Prefix.parse('198.51.100.7/32'), from: '127.0.0.1', communities: ['65000:1'] },
    ]);
  });

  it('a peering with another cluster node is never local, even on loopback (several agents on one host)', () => {
    const q = withPool(
      plan(
        [],
        [
          peer('127.0.0.11', { id: 'Mesh_127_0_0_11', type: 'node-to-node mesh', remoteNode: 'worker2' }),
          peer('127.0.0.12', { remoteNode: 'master1' }),
          peer('127.0.0.1'),
        ],
      ),
    );
    const got = desiredRedistribution(q, [rx('127.0.0.11', '198.51.100.7/32'), rx('127.0.0.12', '198.51.100.8/32'), rx('127.0.0.1', '198.51.100.9/32')]);
    expect(got.map((r) => r.from)).toEqual(['127.0.0.1']);
  });

  it('one route per prefix: the best one wins', () => {
    const got = desiredRedistribution(p, [
      rx('127.0.0.1', '198.51.100.7/32', { communities: ['1:1'] }),
      rx('192.0.2.1', '198.51.100.7/32', { communities: ['2:2'], best: true }),
    ]);
    expect(got.map((r) => [r.from, r.communities])).toEqual([['192.0.2.1', ['2:2']]]);
  });

  it('ops: originate new and changed, withdraw gone, forget (no withdraw) what the plan now originates', () => {
    const cur = new Map([
      ['198.51.100.1/32', { prefix: Prefix.parse('198.51.100.1/32'), from: '127.0.0.1', communities: [] }],
      ['198.51.100.2/32', { prefix: Prefix.parse('198.51.100.2/32'), from: '127.0.0.1', communities: ['1:1'] }],
      ['198.51.100.3/32', { prefix: Prefix.parse('198.51.100.3/32'), from: '127.0.0.1', communities: [] }],
    ]);
    const next = withPool(plan([route('198.51.100.3/32')], [...p.peers]));
    const ops = redistributionOps(
      cur,
      [
        { prefix: Prefix.parse('198.51.100.2/32'), from: '127.0.0.1', communities: ['1:2'] },
        { prefix: Prefix.parse('198.51.100.4/32'), from: '127.0.0.1', communities: [] },
      ],
      next,
    );
    expect(ops.originate.map((r) => r.prefix.toString())).toEqual(['198.51.100.2/32', '198.51.100.4/32']);
    expect(ops.withdraw.map(String)).toEqual(['198.51.100.1/32']);
    expect(ops.forget).toEqual(['198.51.100.3/32']);
  });
});

describe('the interface of a re-advertised route (BGPFilter interface rules)', () => {
  const learned = (dev: string | null): LearnedJson => ({
    prefix: '198.51.100.9/32',
    source: 'kernel',
    protocol: 3,
    type: 'unicast',
    dev,
    metric: 1024,
    exported: true,
    why: 'test',
  });
  const kernel = (dev: string | null): Redistributed => ({ prefix: Prefix.parse('198.51.100.9/32'), from: 'kernel', communities: [], kernel: learned(dev) });
  const p = withPool(plan([], [peer('127.0.0.1')]));

  it("a kernel route is originated with its device; a local peer's route and a device-less kernel route with none", () => {
    expect(redistributedOptions(kernel('cali12'))).toEqual({ iface: 'cali12' });
    expect(redistributedOptions(kernel(null))).toEqual({});
    expect(redistributedOptions({ prefix: Prefix.parse('198.51.100.7/32'), from: '127.0.0.1', communities: [] })).toEqual({});
  });

  it('a kernel route that moved to another interface is originated again; one that did not is left alone', () => {
    const cur = new Map([['198.51.100.9/32', kernel('cali1')]]);
    expect(redistributionOps(cur, [kernel('cali2')], p).originate.map((r) => redistributedOptions(r))).toEqual([{ iface: 'cali2' }]);
    expect(redistributionOps(cur, [kernel('cali1')], p).originate).toEqual([]);
  });
});

describe('Redistribution: the record of what is re-advertised and the pacing of passes', () => {
  /** A queue, timers and a clock the test drives by hand (virtual time). */
  function pacing() {
    const queue: (() => Promise<void>)[] = [];
    const timers: { at: number; fn: () => void }[] = [];
    let now = 0;
    return {
      queue,
      timers,
      pacing: {
        enqueue: (step: () => Promise<void>) => void queue.push(step),
        setTimer: (fn: () => void, ms: number) => void timers.push({ at: now + ms, fn }),
        now: () => now,
      },
      advance: (ms: number) => (now += ms),
      runQueue: async () => {
        while (queue.length > 0) await queue.shift()!();
      },
    };
  }

  it('one queued pass serves every request before it starts; a slow pass spaces the next (4x, at most 1 s); settled waits for a paced pass', async () => {
    const t = pacing();
    let passes = 0;
    let passMs = 0;
    const r = new Redistribution(t.pacing, async () => {
      passes++;
      t.advance(passMs);
    });
    r.request();
    r.request();
    r.request();
    expect([t.queue.length, t.timers.length]).toEqual([1, 0]);
    passMs = 100;
    await t.runQueue();
    expect(passes).toBe(1);
    // The last pass took 100 ms: the next waits 400 ms on a timer, outside the queue.
    r.request();
    r.request();
    expect([t.queue.length, t.timers.length, t.timers[0].at - t.pacing.now()]).toEqual([0, 1, 400]);
    let settled = false;
    const waiting = r.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    passMs = 10_000;
    t.timers.shift()!.fn();
    await t.runQueue();
    await waiting;
    expect([passes, settled]).toEqual([2, true]);
    r.request();
    expect(t.timers[0].at - t.pacing.now()).toBe(MAX_PASS_DELAY_MS);
  });

  it('requests from peers that are not local to the plan ask for nothing', () => {
    const t = pacing();
    const r = new Redistribution(t.pacing, async () => undefined);
    const p = plan([], [peer('127.0.0.1'), peer('192.0.2.20')]);
    r.request(p, '192.0.2.20');
    expect(t.queue).toHaveLength(0);
    r.request(p, '127.0.0.1');
    expect(t.queue).toHaveLength(1);
  });

  it('next() records what it originates and withdraws; forget() lets the plan take a prefix over', () => {
    const t = pacing();
    const r = new Redistribution(t.pacing, async () => undefined);
    const p = withPool(plan([], [peer('127.0.0.1')]));
    expect(r.next(p, [rx('127.0.0.1', '198.51.100.7/32', { communities: ['65000:1'] })]).originate.map((x) => x.prefix.toString())).toEqual([
      '198.51.100.7/32',
    ]);
    expect(r.list().map((x) => [x.prefix.toString(), x.from])).toEqual([['198.51.100.7/32', '127.0.0.1']]);
    expect(r.next(p, [rx('127.0.0.1', '198.51.100.7/32', { communities: ['65000:1'] })])).toEqual({ originate: [], withdraw: [] });
    expect(r.next(p, []).withdraw.map(String)).toEqual(['198.51.100.7/32']);
    expect(r.list()).toEqual([]);
    r.next(p, [rx('127.0.0.1', '198.51.100.8/32')]);
    r.forget(Prefix.parse('198.51.100.8/32'));
    expect(r.list()).toEqual([]);
  });
});
