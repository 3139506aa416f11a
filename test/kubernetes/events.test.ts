import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { loadKubeConfig } from '../../src/agent/sources/kube-client.js';
import { effectiveConfig } from '../../src/kubernetes/config.js';
import { ApiEventRecorder } from '../../src/agent/sources/event-recorder.js';
import { EventDeduper, eventsFromPlan, newlyDesired, type DesiredEvent, type EventAction } from '../../src/kubernetes/events.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { FakeApiServer } from './fake-apiserver.js';
import { bgpConfig, node, peer, planFor, slice, svc } from './helpers.js';

function clusterResources() {
  return [
    node('worker1', '192.0.2.10'),
    bgpConfig({ asNumber: 64512, serviceExternalIPs: [{ cidr: '203.0.113.0/24' }, { cidr: '198.18.0.0/15' }] }),
    svc('inside', { clusterIP: '10.96.0.5', externalIPs: ['203.0.113.9'] }),
    svc('outside', { ns: 'shop', clusterIP: '10.96.0.6', externalIPs: ['198.51.100.7'] }),
    slice('inside-1', 'inside', [{ node: 'worker1' }]),
    slice('outside-1', 'outside', [{ node: 'worker1' }], { ns: 'shop' }),
    peer('tor', { peerIP: '192.0.2.1', asNumber: 65001, password: { secretKeyRef: { name: 'bgp', key: 'tor' } } }),
    peer('plain', { peerIP: '192.0.2.2', asNumber: 65002 }),
  ];
}
const clusterPlan = () => planFor(clusterResources(), 'worker1');
const allowList = () => effectiveConfig(stateOf(clusterResources()), 'worker1');

describe('eventsFromPlan', () => {
  it('NotAdvertised on a Service outside the allow-list, PeerRefused on the Node for a refused BGPPeer', () => {
    const evs = eventsFromPlan(clusterPlan(), 'worker1', allowList());
    expect(evs).toHaveLength(2);
    const [notAdv, refused] = evs;
    expect(notAdv.involved).toEqual({ kind: 'Service', name: 'outside', namespace: 'shop' });
    expect(notAdv.reason).toBe('NotAdvertised');
    expect(notAdv.message).toContain('198.51.100.7');
    expect(notAdv.message).toContain('[203.0.113.0/24, 198.18.0.0/15]');
    expect(refused.involved).toEqual({ kind: 'Node', name: 'worker1' });
    expect(refused.reason).toBe('PeerRefused');
    expect(refused.message).toMatch(/BGPPeer tor .*192\.0\.2\.1.*spec\.password: Secret kube-system\/bgp not found/);
  });
});

describe('eventsFromPlan allow-list and agent refusals', () => {
  it('names every allow-list entry the IP missed, single IPs included, and adds the agent refusals on the Node', () => {
    const resources = [
      node('worker1', '192.0.2.10'),
      bgpConfig({ asNumber: 64512, serviceLoadBalancerIPs: [{ cidr: '203.0.113.10/32' }, { cidr: '198.18.0.0/15' }] }),
      svc('lb', { clusterIP: '10.96.0.7', type: 'LoadBalancer', lbIngress: [{ ip: '198.51.100.9' }] }),
      slice('lb-1', 'lb', [{ node: 'worker1' }]),
    ];
    const p = planFor(resources, 'worker1');
    const evs = eventsFromPlan(p, 'worker1', effectiveConfig(stateOf(resources), 'worker1'), [
      { kind: 'BGPPeer', name: 'edge', address: '192.0.2.1', field: 'spec.filters', message: 'BGPFilter f cannot be compiled' },
    ]);
    expect(evs.map((e) => [e.involved.kind, e.reason, e.message])).toEqual([
      [
        'Service',
        'NotAdvertised',
        'load-balancer IP 198.51.100.9 is not advertised: outside the allow-list BGPConfiguration serviceLoadBalancerIPs [203.0.113.10/32, 198.18.0.0/15]',
      ],
      ['Node', 'PeerRefused', 'BGPPeer edge (peer 192.0.2.1) is refused: spec.filters: BGPFilter f cannot be compiled'],
    ]);
  });

  it('newlyDesired: only events the previous plan did not call for', () => {
    const a = ev('a');
    const b = ev('b');
    expect(newlyDesired([], [a, b])).toEqual([a, b]);
    expect(newlyDesired([a], [a, b])).toEqual([b]);
    expect(newlyDesired([a, b], [a])).toEqual([]);
    expect(newlyDesired([a], [{ ...a, message: 'a, changed' }])).toHaveLength(1);
  });
});

const ev = (msg: string): DesiredEvent => ({ involved: { kind: 'Node', name: 'n1' }, reason: 'PeerRefused', message: msg });

describe('EventDeduper', () => {
  it('creates once, then bumps the count by patch at most once per interval', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 2000 }), (gaps, interval) => {
        const d = new EventDeduper({ host: 'n1', intervalMs: interval, forgetAfterMs: 1e12 });
        let t = 1_000_000;
        const actions: { at: number; a: EventAction }[] = [];
        for (const g of gaps) {
          t += g;
          for (const a of d.observe([ev('same')], t)) actions.push({ at: t, a });
        }
        t += interval;
        for (const a of d.flush(t)) actions.push({ at: t, a });
        const creates = actions.filter((x) => x.a.type === 'create');
        const patches = actions.filter((x) => x.a.type === 'patch');
        expect(creates).toHaveLength(1);
        const sendTimes = actions.map((x) => x.at);
        for (let i = 1; i < sendTimes.length; i++) expect(sendTimes[i] - sendTimes[i - 1]).toBeGreaterThanOrEqual(interval);
        // After the final flush the server holds the full count.
        const last = patches.at(-1)?.a;
        expect(last?.type === 'patch' ? last.count : 1).toBe(gaps.length);
      }),
    );
  });

  it('a different message is a different Event; forgotten entries are created again', () => {
    const d = new EventDeduper({ host: 'n1', intervalMs: 1000, forgetAfterMs: 10_000 });
    const a = d.observe([ev('one'), ev('two')], 0);
    expect(a.map((x) => x.type)).toEqual(['create', 'create']);
    const names = a.map((x) => (x.type === 'create' ? x.event.name : ''));
    expect(new Set(names).size).toBe(2);
    expect(d.observe([ev('one')], 50_000).map((x) => x.type)).toEqual(['create']);
    expect(d.size).toBe(1);
  });
});

describe('ApiEventRecorder against the fake API server', () => {
  let server: FakeApiServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('creates the Event, dedupes repeats and patches the count once the interval passes', async () => {
    server = new FakeApiServer();
    await server.start();
    let now = Date.UTC(2026, 0, 1);
    const errors: Error[] = [];
    const rec = new ApiEventRecorder({
      client: loadKubeConfig({ kubeconfig: await server.writeKubeconfig() }),
      host: 'worker1',
      intervalMs: 60_000,
      now: () => now,
      onError: (e) => errors.push(e),
    });
    const desired = eventsFromPlan(clusterPlan(), 'worker1', allowList());

    await rec.record(desired);
    now += 1000;
    await rec.record(desired);
    const stored = server.list('events');
    expect(stored).toHaveLength(2);
    const svcEvent = stored.find((e) => (e.involvedObject as { kind: string }).kind === 'Service')!;
    expect(svcEvent.metadata.namespace).toBe('shop');
    expect(svcEvent).toMatchObject({
      reason: 'NotAdvertised',
      type: 'Warning',
      count: 1,
      involvedObject: { kind: 'Service', name: 'outside', namespace: 'shop' },
      source: { component: 'tsbgp', host: 'worker1' },
    });
    const nodeEvent = stored.find((e) => (e.involvedObject as { kind: string }).kind === 'Node')!;
    expect(nodeEvent.metadata.namespace).toBe('default');
    expect(nodeEvent.reason).toBe('PeerRefused');
    expect(server.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);

    now += 60_000;
    await rec.record(desired);
    const patches = server.requests.filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(2);
    expect(patches[0].contentType).toBe('application/merge-patch+json');
    expect(server.list('events').map((e) => e.count)).toEqual([3, 3]);
    expect(server.list('events')).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('a shared event (NotAdvertised) is one Event cluster-wide however many agents report it; a per-node one is not', async () => {
    server = new FakeApiServer();
    await server.start();
    const client = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
    const errors: Error[] = [];
    const desired = eventsFromPlan(clusterPlan(), 'worker1', allowList());
    expect(desired.map((e) => [e.reason, e.shared === true])).toEqual([
      ['NotAdvertised', true],
      ['PeerRefused', false],
    ]);
    for (const host of ['worker1', 'worker2', 'worker3']) await new ApiEventRecorder({ client, host, onError: (e) => errors.push(e) }).record(desired);
    expect(errors).toEqual([]);
    const stored = server.list('events');
    expect(stored.filter((e) => e.reason === 'NotAdvertised')).toHaveLength(1);
    expect(stored.filter((e) => e.reason === 'PeerRefused')).toHaveLength(3);
    expect(stored.find((e) => e.reason === 'NotAdvertised')!.metadata.name).toMatch(/^outside\.[0-9a-f]{8}$/);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(6);
  });

  it('re-creates an Event the server no longer has, reporting the failed patch', async () => {
    server = new FakeApiServer();
    await server.start();
    let now = Date.UTC(2026, 0, 1);
    const errors: Error[] = [];
    const rec = new ApiEventRecorder({
      client: loadKubeConfig({ kubeconfig: await server.writeKubeconfig() }),
      host: 'worker1',
      intervalMs: 10,
      now: () => now,
      onError: (e) => errors.push(e),
    });
    const one = [ev('peer refused')];
    await rec.record(one);
    const name = server.list('events')[0].metadata.name as string;
    server.remove('v1', 'Event', name, 'default');
    now += 100;
    await rec.record(one);
    expect(errors).toHaveLength(1);
    now += 100;
    await rec.record(one);
    expect(server.list('events')).toHaveLength(1);
    expect(server.list('events')[0]).toMatchObject({ metadata: { name }, count: 1 });
  });

  it('an agent restarted finds its Events and counts on from them instead of adding new ones', async () => {
    server = new FakeApiServer();
    await server.start();
    const client = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
    let now = Date.UTC(2026, 0, 1);
    const errors: Error[] = [];
    const desired = eventsFromPlan(clusterPlan(), 'worker1', allowList());
    const first = new ApiEventRecorder({ client, host: 'worker1', intervalMs: 10, now: () => now, onError: (e) => errors.push(e) });
    await first.record(desired);
    now += 100;
    await first.record(desired);
    expect(server.list('events').map((e) => e.count)).toEqual([2, 2]);
    // the agent restarts: a fresh recorder, nothing remembered
    now += 100;
    const second = new ApiEventRecorder({ client, host: 'worker1', intervalMs: 10, now: () => now, onError: (e) => errors.push(e) });
    await second.record(desired);
    expect(errors).toEqual([]);
    expect(server.list('events')).toHaveLength(2);
    expect(server.list('events').map((e) => e.count)).toEqual([3, 3]);
    // another node's agent: the shared NotAdvertised counts on, its own PeerRefused is its own Event
    await new ApiEventRecorder({ client, host: 'worker2', now: () => now, onError: (e) => errors.push(e) }).record(desired);
    expect(errors).toEqual([]);
    expect(
      server
        .list('events')
        .map((e) => `${e.reason} ${e.count} ${(e.source as { host: string }).host}`)
        .sort(),
    ).toEqual(['NotAdvertised 4 worker1', 'PeerRefused 1 worker2', 'PeerRefused 3 worker1']);
  });
});
