/**
 * The agent when the Kubernetes API goes away and comes back: routes stay
 * advertised and sessions up, status/readyz/metrics say so, and the relist
 * changes only what really changed (a router on 127.0.0.2 sees no withdraw
 * or re-announce of an unchanged route). Also: 410 relists, de-duplicated
 * Events, the latency metrics, and a first sync that waits for the API server.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent, type StatusJson } from '../../src/agent/agent.js';
import { kubernetesSource } from '../../src/agent/sources/kube-source.js';
import { createLogger } from '../../src/agent/log.js';
import { startMetricsServer, type MetricsServer } from '../../src/agent/metrics-server.js';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { loadKubeConfig } from '../../src/agent/sources/kube-client.js';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import { FakeApiServer } from '../kubernetes/fake-apiserver.js';
import { run } from './cli-helpers.js';
import { scrapeUrl } from './exposition.js';
import {
  bgpConfiguration,
  bgpPeer,
  endpointSlice,
  node,
  NODE,
  Router,
  service,
  startCluster,
  until,
  type Cluster,
  type ClusterOptions,
} from './k8s-harness.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function cluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const c = await startCluster(opts);
  cleanup.push(() => c.stop());
  return c;
}

async function metricsOf(c: { metrics: AgentMetrics }): Promise<{ server: MetricsServer; url: string }> {
  const server = await startMetricsServer(c.metrics, { host: '127.0.0.1', port: 0 });
  cleanup.push(() => server.close());
  return { server, url: `http://127.0.0.1:${server.address.port}` };
}

const POD = '10.244.1.0/24';
const RANGE = '198.18.0.0/16';
const WEB = '203.0.113.10/32';
const MARKER = '198.18.0.61/32';

/**
 * A change made after every watch is open again (a Local service with an endpoint here) and awaited at the
 * router with `routes`: the agent applies changes in order and the router hears them in order, so whatever
 * the relists changed has reached the router by then (instead of waiting some time and seeing nothing).
 */
async function marker(c: Cluster, routes: string[]): Promise<void> {
  c.server.apply(service('marker', { clusterIP: '198.18.0.61', externalTrafficPolicy: 'Local' }));
  c.server.apply(endpointSlice('marker-1', 'marker', [NODE]));
  await c.routes([...routes, MARKER]);
}

describe('Kubernetes API outage', () => {
  it('API server stopped: routes stay advertised and sessions up, status/readyz/metrics say so; restarted: only the real change reaches the router', async () => {
    const c = await cluster({ extra: [service('web', { externalIPs: ['203.0.113.10'] })] });
    const m = await metricsOf(c);
    await c.routes([POD, RANGE, WEB]);
    const session = c.router.session()!;
    expect(session.state).toBe('Established');
    const mark = c.router.log.length;

    await c.server.stop();
    await until('disconnected', () => !c.agent.status().source.connected);
    // Retries keep failing (two more rounds of all eight resources, counted in status): nothing moves.
    const failed = c.agent.status().source.failedRequests ?? 0;
    await until('retries failed', () => (c.agent.status().source.failedRequests ?? 0) >= failed + 16);
    // A withdraw these retries caused would still be on its way here; the marker check after the restart catches it.
    await c.agent.settled();
    expect(c.router.log.slice(mark)).toEqual([]);
    expect(c.router.learned()).toEqual([POD, RANGE, WEB].sort());
    expect(c.router.session()).toMatchObject({ state: 'Established', since: session.since });

    // tsbgp status, text and JSON, over the control socket.
    const json = JSON.parse((await run(['status', '--json', '--control', c.control])).stdout) as StatusJson;
    expect(json.source).toMatchObject({ kind: 'kubernetes', server: c.server.url, connected: false, synced: true });
    expect(json.source.lastError).toMatch(/ECONNREFUSED|socket|closed|connect/i);
    expect(Date.parse(json.source.since)).toBeLessThanOrEqual(Date.now());
    const text = (await run(['status', '--control', c.control])).stdout;
    expect(text).toMatch(
      new RegExp(
        `Configuration: Kubernetes API ${c.server.url} \\(crd\\.projectcalico\\.org/v1\\): UNREACHABLE since ${json.source.since.replace(/\./g, '\\.')} \\(\\d+s\\); still advertising the last known configuration`,
      ),
    );
    expect(text).toMatch(/127\.0\.0\.2 +\| global +\| up /);
    // Still ready (documented in docs/metrics.md), and saying why.
    const ready = await fetch(`${m.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toBe(`ok: serving the last known configuration; Kubernetes API unreachable since ${json.source.since}\n`);
    const down = await scrapeUrl(`${m.url}/metrics`);
    expect(down.get('tsbgp_kubernetes_api_connected')).toBe(0);
    expect(down.get('tsbgp_agent_ready')).toBe(1);
    expect(c.logs.filter((l) => String(l.msg).startsWith('Kubernetes API unreachable'))).toEqual([
      expect.objectContaining({ level: 'warning', server: c.server.url, lastError: expect.any(String) }),
    ]);
    // Repeated connection failures are logged once per resource, not once per retry.
    const errors = c.logs.filter((l) => String(l.msg).startsWith('Kubernetes API: services:'));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(new Set(errors.map((l) => l.msg)).size).toBe(errors.length);

    // Meanwhile, in etcd: a new Local service with an endpoint here, an unchanged Node rewritten.
    c.server.apply(service('api', { clusterIP: '198.18.0.60', externalTrafficPolicy: 'Local' }));
    c.server.apply(endpointSlice('api-1', 'api', [NODE]));
    c.server.apply(node(NODE, '127.0.0.1', { podCIDRs: [POD] }));
    await c.server.restart({ expireHistory: true });
    await until('reconnected', () => c.agent.status().source.connected, 10_000);
    await c.routes([POD, RANGE, WEB, '198.18.0.60/32']);
    await until('all watching again', () => c.server.openWatches() === 8);
    await marker(c, [POD, RANGE, WEB, '198.18.0.60/32']);
    expect(c.router.log.slice(mark)).toEqual([
      { type: 'announce', prefix: '198.18.0.60/32' },
      { type: 'announce', prefix: MARKER },
    ]);
    expect(c.router.session()).toMatchObject({ state: 'Established', since: session.since });
    expect(c.logs.filter((l) => String(l.msg).startsWith('Kubernetes API reachable again'))).toHaveLength(1);
    const up = await scrapeUrl(`${m.url}/metrics`);
    expect(up.get('tsbgp_kubernetes_api_connected')).toBe(1);
    for (const r of ['nodes', 'services', 'endpointslices', 'bgppeers'])
      expect(up.get('tsbgp_kubernetes_watch_restarts_total', { resource: r })).toBeGreaterThanOrEqual(1);
    expect(up.get('tsbgp_kubernetes_api_last_sync_timestamp_seconds')).toBeGreaterThan(Date.parse(json.source.since) / 1000);
    expect(c.agent.status().source.watchRestarts).toBeGreaterThanOrEqual(8);
  });

  it('410 Gone: every watch relists; only the change made meanwhile reaches the router', async () => {
    const c = await cluster({ extra: [service('web', { externalIPs: ['203.0.113.10'] })] });
    await c.routes([POD, RANGE, WEB]);
    await until('watches open', () => c.server.openWatches() === 8);
    const mark = c.router.log.length;
    const lists = () => c.server.requests.filter((r) => r.method === 'GET' && r.query.watch === undefined && r.path.endsWith('/services')).length;
    const listed = lists();
    c.server.expireHistory();
    c.server.remove('v1', 'Service', 'web', 'default');
    await c.routes([POD, RANGE]);
    await until('all watching again', () => c.server.openWatches() === 8);
    await marker(c, [POD, RANGE]);
    expect(lists()).toBeGreaterThan(listed);
    expect(c.router.log.slice(mark)).toEqual([
      { type: 'withdraw', prefix: WEB },
      { type: 'announce', prefix: MARKER },
    ]);
    expect(c.agent.status().source).toMatchObject({ connected: true, synced: true });
  });
});

describe('Kubernetes Events from the agent', () => {
  it('NotAdvertised once for a steady refusal, however many unrelated changes; a refusal that comes back bumps the same Event', async () => {
    const c = await cluster({ eventsIntervalMs: 100, extra: [service('web', { externalIPs: ['198.51.100.7'] }), endpointSlice('web-1', 'web', [NODE])] });
    await until('event created', () => c.server.list('events').length === 1);
    expect(c.server.list('events')[0]).toMatchObject({ reason: 'NotAdvertised', count: 1, involvedObject: { kind: 'Service', name: 'web' } });
    // Unrelated churn: endpoints come and go, the refusal stays. Each change is seen (logged) and reconciled on its own.
    const changes = () => c.logs.filter((l) => l.msg === 'configuration changed').length;
    for (const nodes of [[NODE, 'worker2'], ['worker2'], [NODE]]) {
      const seen = changes();
      c.apply(endpointSlice('web-1', 'web', nodes));
      await until('change seen', () => changes() > seen);
      await c.agent.settled();
    }
    // The Events clock past the interval: a flush now sends any count bump the churn made.
    c.events.advance(100);
    await c.events.flush();
    expect(c.server.list('events')).toHaveLength(1);
    expect(c.server.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
    // The IP moves inside the allow-list, then out again: a second occurrence of the same Event.
    c.apply(service('web', { externalIPs: ['203.0.113.10'] }));
    await c.routes([POD, RANGE, WEB]);
    c.apply(service('web', { externalIPs: ['198.51.100.7'] }));
    await c.routes([POD, RANGE]);
    await until('count patched', () => c.server.list('events')[0]?.count === 2, 5000);
    expect(c.server.list('events')).toHaveLength(1);
    expect(c.server.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });
});

describe('latency metrics with real sessions', () => {
  it('a Service change is timed to the speaker calls and to the UPDATE on the socket', async () => {
    const c = await cluster();
    const m = await metricsOf(c);
    await c.routes([POD, RANGE]);
    const before = await scrapeUrl(`${m.url}/metrics`);
    c.apply(service('web', { externalIPs: ['203.0.113.10'] }));
    await c.routes([POD, RANGE, WEB]);
    await expect
      .poll(async () => (await scrapeUrl(`${m.url}/metrics`)).get('tsbgp_update_latency_seconds_count'))
      .toBe((before.get('tsbgp_update_latency_seconds_count') ?? 0) + 1);
    const after = await scrapeUrl(`${m.url}/metrics`);
    expect(after.get('tsbgp_reconcile_duration_seconds_count')).toBe((before.get('tsbgp_reconcile_duration_seconds_count') ?? 0) + 1);
    // The UPDATE leaves after the speaker calls (coalescing), and within a second here.
    const sum = (s: typeof after, name: string) => (s.get(`${name}_sum`) ?? 0) - (before.get(`${name}_sum`) ?? 0);
    expect(sum(after, 'tsbgp_update_latency_seconds')).toBeGreaterThanOrEqual(sum(after, 'tsbgp_reconcile_duration_seconds'));
    expect(sum(after, 'tsbgp_update_latency_seconds')).toBeLessThan(1);
  });
});

describe('first sync', () => {
  it('waits while the API server is down at start: status answers, /readyz says why; then syncs and advertises', async () => {
    const router = new Router('127.0.0.2');
    await router.speaker.start();
    cleanup.push(() => router.speaker.stop());
    const server = new FakeApiServer();
    server.apply(node(NODE, '127.0.0.1', { podCIDRs: [POD] }));
    server.apply(bgpConfiguration());
    server.apply(bgpPeer('router', `127.0.0.2:${router.port}`));
    await server.start();
    const kubeconfig = await server.writeKubeconfig();
    await server.stop(); // the port is kept for the restart
    cleanup.push(() => server.stop());
    const metrics = new AgentMetrics({ processMetrics: false });
    const m = await metricsOf({ metrics });
    const control = join(await mkdtemp(join(tmpdir(), 'tsbgp-k8s-')), 'tsbgp.sock');
    const source = kubernetesSource(loadKubeConfig({ kubeconfig }), { backoff: { initialMs: 20, maxMs: 100, jitter: 0.5 } });
    const starting = runAgent({
      node: NODE,
      source,
      control,
      listenPort: 0,
      signals: false,
      logger: createLogger({ write: () => undefined }),
      speakerFactory: (o) => new BgpSpeaker(o),
      metrics,
    });
    let agent: Agent | undefined;
    cleanup.push(async () => (await starting).stop());
    void starting.then((a) => (agent = a));

    await until('an API error seen', () => source.status().lastError !== null);
    const ready = await fetch(`${m.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/^waiting for the first sync of the Kubernetes API \(.*(ECONNREFUSED|connect).*\)\n$/);
    const text = (await run(['status', '--control', control])).stdout;
    expect(text).toContain(`Configuration: Kubernetes API ${server.url}: waiting for the first sync`);
    expect(text).toContain('No IPv4 peers found.');
    expect(agent).toBeUndefined();

    await server.start();
    await until('agent started', () => agent !== undefined, 10_000);
    await expect.poll(() => router.learned(), { timeout: 5000 }).toEqual([POD, RANGE]);
    expect((await fetch(`${m.url}/readyz`)).status).toBe(200);
  });
});
