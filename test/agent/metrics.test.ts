import { spawn } from 'node:child_process';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import { parseMetricsAddress, startMetricsServer, type MetricsServer } from '../../src/agent/metrics-server.js';
import { counterDelta } from '../../src/agent/counter-delta.js';
import { AgentMetrics, type MetricsInput } from '../../src/agent/metrics.js';
import type { Plan, RefusedIP } from '../../src/kubernetes/index.js';
import { Prefix } from '../../src/net/index.js';
import type { AdvertisedRoute, PeerState, PeerStatus, ReceivedRoute, SpeakerOptions } from '../../src/speaker/types.js';
import { freePort, run } from './cli-helpers.js';
import { parseExposition, Scrape } from './exposition.js';
import { FakeSpeaker } from './fake-speaker.js';
import type { SourceStatus } from '../../src/agent/sources/index.js';
import { peer, plan, route } from './plans.js';

async function get(server: MetricsServer, path: string, method = 'GET'): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${server.address.port}${path}`, { method });
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

async function scrape(server: MetricsServer): Promise<Scrape> {
  const r = await get(server, '/metrics');
  expect(r.status).toBe(200);
  expect(r.type).toContain('text/plain');
  const { samples, types } = parseExposition(r.body);
  return new Scrape(samples, types);
}

// ---- a speaker whose state the test sets directly ----

interface FakePeer {
  state: PeerState;
  since: Date;
  counters: { messagesIn: number; messagesOut: number; updatesIn: number; updatesOut: number };
  advertised: string[];
  received: string[];
}

const count = (prefixes: readonly string[], fam: 4 | 6) => prefixes.filter((x) => Prefix.parse(x).family === fam).length;

class StateSpeaker {
  readonly peers = new Map<string, FakePeer>();
  add(address: string): FakePeer {
    const p: FakePeer = {
      state: 'Idle',
      since: new Date(0),
      counters: { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 },
      advertised: [],
      received: [],
    };
    this.peers.set(address, p);
    return p;
  }
  status(): readonly PeerStatus[] {
    return [...this.peers].map(([address, p]) => ({
      address,
      port: 179,
      asn: 65000,
      state: p.state,
      since: p.since,
      counters: {
        ...p.counters,
        prefixesReceived: p.received.length,
        prefixesAccepted: p.received.length,
        prefixesAdvertised: p.advertised.length,
        families: {
          ipv4: { received: count(p.received, 4), accepted: count(p.received, 4), advertised: count(p.advertised, 4) },
          ipv6: { received: count(p.received, 6), accepted: count(p.received, 6), advertised: count(p.advertised, 6) },
        },
      },
    }));
  }
  advertised(peerAddr: string): readonly AdvertisedRoute[] {
    return (this.peers.get(peerAddr)?.advertised ?? []).map((x) => ({ prefix: Prefix.parse(x), asPath: [], communities: [], largeCommunities: [] }));
  }
  received(peerAddr?: string): readonly ReceivedRoute[] {
    const out: ReceivedRoute[] = [];
    for (const [a, p] of this.peers)
      if (peerAddr === undefined || a === peerAddr)
        for (const x of p.received) out.push({ peer: a, prefix: Prefix.parse(x), asPath: [], communities: [], largeCommunities: [], best: true, stale: false });
    return out;
  }
}

const refusedIP = (ip: string, reason: RefusedIP['reason']): RefusedIP => ({ namespace: 'ns', name: 'svc', ip, source: 'externalIP', reason, message: reason });

const servers: MetricsServer[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  for (const s of servers.splice(0)) await s.close();
});

async function serve(metrics: AgentMetrics): Promise<MetricsServer> {
  const s = await startMetricsServer(metrics, { host: '127.0.0.1', port: 0 });
  servers.push(s);
  return s;
}

/** Metrics over a mutable state, a controllable clock, and a server on an ephemeral port. */
async function harness() {
  let clock = Date.parse('2026-12-02T10:00:00Z');
  const speaker = new StateSpeaker();
  const state: { running: boolean; speaker?: StateSpeaker; plan?: Plan; configErrors: number; refusedExtra?: Record<string, number>; source?: SourceStatus } = {
    running: true,
    configErrors: 0,
  };
  const metrics = new AgentMetrics({ now: () => clock });
  const server = await serve(metrics);
  return {
    metrics,
    server,
    speaker,
    state,
    attach: () => metrics.attach(() => state as MetricsInput),
    advance: (ms: number) => (clock += ms),
    at: () => clock,
  };
}

describe('AgentMetrics over HTTP', () => {
  it('exports session state, uptime, prefixes per family; a session going up and down; a removed peer loses its series', async () => {
    const h = await harness();
    const a = h.speaker.add('192.0.2.20');
    h.speaker.add('2001:db8::1');
    h.state.speaker = h.speaker;
    h.state.plan = plan([route('198.19.0.64/26')], [peer('192.0.2.20'), peer('2001:db8::1', { type: 'node-to-node mesh' })]);
    h.attach();

    let m = await scrape(h.server);
    expect(m.types.get('tsbgp_bgp_session_state')).toBe('gauge');
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', type: 'global', state: 'Idle' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', type: 'global', state: 'Established' })).toBe(0);
    expect(m.series('tsbgp_bgp_session_state').filter((s) => s.labels.peer === '192.0.2.20')).toHaveLength(6);
    expect(m.get('tsbgp_bgp_session_state', { peer: '2001:db8::1', type: 'node-to-node mesh', state: 'Idle' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_uptime_seconds', { peer: '192.0.2.20' })).toBe(0);

    // Up: established 90 s ago, two IPv4 and one IPv6 prefix out, one received.
    a.state = 'Established';
    a.since = new Date(h.at());
    a.advertised = ['198.19.0.64/26', '198.18.0.0/16', '2001:db8:1::/64'];
    a.received = ['10.0.0.0/8'];
    h.advance(90_000);
    m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', state: 'Established' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', state: 'Idle' })).toBe(0);
    expect(m.get('tsbgp_bgp_session_uptime_seconds', { peer: '192.0.2.20', type: 'global' })).toBe(90);
    expect(m.get('tsbgp_bgp_prefixes_advertised', { peer: '192.0.2.20', family: 'ipv4' })).toBe(2);
    expect(m.get('tsbgp_bgp_prefixes_advertised', { peer: '192.0.2.20', family: 'ipv6' })).toBe(1);
    expect(m.get('tsbgp_bgp_prefixes_received', { peer: '192.0.2.20', family: 'ipv4' })).toBe(1);
    expect(m.get('tsbgp_bgp_prefixes_received', { peer: '192.0.2.20', family: 'ipv6' })).toBe(0);

    // Down: Active, uptime back to 0.
    a.state = 'Active';
    a.since = new Date(h.at());
    a.advertised = [];
    m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', state: 'Active' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', state: 'Established' })).toBe(0);
    expect(m.get('tsbgp_bgp_session_uptime_seconds', { peer: '192.0.2.20' })).toBe(0);
    expect(m.get('tsbgp_bgp_prefixes_advertised', { peer: '192.0.2.20', family: 'ipv4' })).toBe(0);

    h.speaker.peers.delete('192.0.2.20');
    m = await scrape(h.server);
    for (const name of ['tsbgp_bgp_session_state', 'tsbgp_bgp_session_uptime_seconds', 'tsbgp_bgp_messages_received_total', 'tsbgp_bgp_prefixes_advertised'])
      expect(m.series(name).filter((s) => s.labels.peer === '192.0.2.20')).toEqual([]);
    expect(m.get('tsbgp_bgp_session_state', { peer: '2001:db8::1', state: 'Idle' })).toBe(1);
  });

  it('message and UPDATE counters never go backwards across a session reset', async () => {
    const h = await harness();
    const a = h.speaker.add('192.0.2.20');
    h.state.speaker = h.speaker;
    h.attach();
    let m = await scrape(h.server);
    expect(m.types.get('tsbgp_bgp_messages_received_total')).toBe('counter');
    expect(m.get('tsbgp_bgp_messages_received_total', { peer: '192.0.2.20' })).toBe(0);

    a.counters = { messagesIn: 10, messagesOut: 12, updatesIn: 4, updatesOut: 5 };
    m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_messages_received_total', { peer: '192.0.2.20' })).toBe(10);
    a.counters = { messagesIn: 25, messagesOut: 30, updatesIn: 6, updatesOut: 9 };
    m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_messages_received_total', { peer: '192.0.2.20' })).toBe(25);
    expect(m.get('tsbgp_bgp_messages_sent_total', { peer: '192.0.2.20' })).toBe(30);
    // The session resets: the speaker's counters start again from 0.
    a.counters = { messagesIn: 3, messagesOut: 2, updatesIn: 1, updatesOut: 0 };
    m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_messages_received_total', { peer: '192.0.2.20' })).toBe(28);
    expect(m.get('tsbgp_bgp_messages_sent_total', { peer: '192.0.2.20' })).toBe(32);
    expect(m.get('tsbgp_bgp_updates_received_total', { peer: '192.0.2.20' })).toBe(7);
    expect(m.get('tsbgp_bgp_updates_sent_total', { peer: '192.0.2.20' })).toBe(9);
    a.counters = { messagesIn: 8, messagesOut: 2, updatesIn: 1, updatesOut: 4 };
    m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_messages_received_total', { peer: '192.0.2.20' })).toBe(33);
    expect(m.get('tsbgp_bgp_updates_sent_total', { peer: '192.0.2.20' })).toBe(13);
  });

  it('counterDelta: the exported total is monotonic and equals the raw value while there is no reset', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 30 }), (raw) => {
        let total = 0;
        let last: number | undefined;
        let prevTotal = 0;
        let resets = false;
        for (const v of raw) {
          if (last !== undefined && v < last) resets = true;
          total += counterDelta(last, v);
          last = v;
          expect(total).toBeGreaterThanOrEqual(prevTotal);
          expect(total).toBeGreaterThanOrEqual(v);
          prevTotal = total;
        }
        if (!resets) expect(total).toBe(raw[raw.length - 1]);
      }),
    );
  });

  it('refused routes by reason (every planner reason exported, extra reasons added) and configuration errors', async () => {
    const h = await harness();
    h.attach();
    let m = await scrape(h.server);
    for (const reason of ['outside allow-list', 'not-local', 'not ready', 'node excluded']) expect(m.get('tsbgp_routes_refused', { reason })).toBe(0);
    expect(m.get('tsbgp_config_errors')).toBe(0);

    h.state.plan = {
      ...plan([]),
      refused: [refusedIP('203.0.113.10', 'not-local'), refusedIP('203.0.113.11', 'not-local'), refusedIP('198.51.100.1', 'outside allow-list')],
    };
    h.state.refusedExtra = { 'rejected by filter': 3 };
    h.state.configErrors = 2;
    m = await scrape(h.server);
    expect(m.get('tsbgp_routes_refused', { reason: 'not-local' })).toBe(2);
    expect(m.get('tsbgp_routes_refused', { reason: 'outside allow-list' })).toBe(1);
    expect(m.get('tsbgp_routes_refused', { reason: 'not ready' })).toBe(0);
    expect(m.get('tsbgp_routes_refused', { reason: 'rejected by filter' })).toBe(3);
    expect(m.get('tsbgp_config_errors')).toBe(2);

    h.state.plan = plan([]);
    h.state.configErrors = 0;
    m = await scrape(h.server);
    expect(m.get('tsbgp_routes_refused', { reason: 'not-local' })).toBe(0);
    expect(m.get('tsbgp_config_errors')).toBe(0);
  });

  it('reconcile duration runs from the first pending event to the speaker calls; watch restarts count per resource; process metrics are there', async () => {
    const h = await harness();
    h.attach();
    h.metrics.eventReceived();
    h.advance(30);
    h.metrics.eventReceived(); // a second event before the reconcile ran: the clock keeps the first
    h.advance(20);
    h.metrics.reconciled();
    h.metrics.reconciled(); // nothing pending: not observed
    h.metrics.watchRestarted('services');
    h.metrics.watchRestarted('services');
    h.metrics.watchRestarted('nodes');
    const m = await scrape(h.server);
    expect(m.types.get('tsbgp_reconcile_duration_seconds')).toBe('histogram');
    expect(m.get('tsbgp_reconcile_duration_seconds_count')).toBe(1);
    expect(m.get('tsbgp_reconcile_duration_seconds_sum')).toBeCloseTo(0.05, 9);
    expect(m.get('tsbgp_reconcile_duration_seconds_bucket', { le: '0.025' })).toBe(0);
    expect(m.get('tsbgp_reconcile_duration_seconds_bucket', { le: '0.05' })).toBe(1);
    expect(m.get('tsbgp_kubernetes_watch_restarts_total', { resource: 'services' })).toBe(2);
    expect(m.get('tsbgp_kubernetes_watch_restarts_total', { resource: 'nodes' })).toBe(1);
    // prom-client counts CPU from when its collector was registered (a delta, tick-sampled by the kernel): present, not necessarily above 0 yet.
    expect(m.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(m.get('process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
    expect(m.get('process_start_time_seconds')).toBeGreaterThan(0);
  });

  it('two AgentMetrics do not share series (each has its own registry)', async () => {
    const a = new AgentMetrics({ processMetrics: false });
    const b = new AgentMetrics({ processMetrics: false });
    a.watchRestarted('services');
    const pa = new Scrape(parseExposition(await a.metrics()).samples, new Map());
    const pb = new Scrape(parseExposition(await b.metrics()).samples, new Map());
    expect(pa.get('tsbgp_kubernetes_watch_restarts_total', { resource: 'services' })).toBe(1);
    expect(pb.get('tsbgp_kubernetes_watch_restarts_total', { resource: 'services' })).toBeUndefined();
    expect(pa.get('process_cpu_user_seconds_total')).toBeUndefined();
  });

  it('/healthz and /readyz follow the agent: starting, no speaker, no configuration, ready, shutting down; 404 and 405 otherwise', async () => {
    const h = await harness();
    expect(await get(h.server, '/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get(h.server, '/readyz')).toMatchObject({ status: 503, body: 'agent starting\n' });
    h.attach();
    expect(await get(h.server, '/readyz')).toMatchObject({ status: 503, body: 'BGP speaker not started\n' });
    h.state.speaker = h.speaker;
    expect(await get(h.server, '/readyz')).toMatchObject({ status: 503, body: 'no configuration applied yet\n' });
    expect((await scrape(h.server)).get('tsbgp_agent_ready')).toBe(0);
    h.state.plan = plan([]);
    expect(await get(h.server, '/readyz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get(h.server, '/readyz?verbose=1')).toMatchObject({ status: 200 });
    expect((await scrape(h.server)).get('tsbgp_agent_ready')).toBe(1);
    h.state.running = false;
    expect(await get(h.server, '/readyz')).toMatchObject({ status: 503, body: 'agent shutting down\n' });
    expect(await get(h.server, '/healthz')).toMatchObject({ status: 503, body: 'agent stopped\n' });
    expect(await get(h.server, '/')).toMatchObject({ status: 404 });
    expect(await get(h.server, '/metricsx')).toMatchObject({ status: 404 });
    expect(await get(h.server, '/metrics', 'POST')).toMatchObject({ status: 405 });
  });

  it('with the Kubernetes API: not ready before the first sync, still ready (saying why) while unreachable; API series only then', async () => {
    const h = await harness();
    const since = new Date('2026-12-02T09:59:00Z');
    const api: SourceStatus = {
      kind: 'kubernetes',
      paths: [],
      server: 'https://10.96.0.1:443',
      calicoApi: null,
      connected: false,
      synced: false,
      since,
      lastSyncAt: null,
      lastError: 'nodes: connect ECONNREFUSED',
      watchRestarts: 0,
    };
    h.state.source = { ...api, kind: 'manifests', server: null, connected: true, synced: true };
    h.attach();
    expect((await scrape(h.server)).get('tsbgp_kubernetes_api_connected')).toBeUndefined();
    h.state.source = api;
    expect(await get(h.server, '/readyz')).toMatchObject({
      status: 503,
      body: 'waiting for the first sync of the Kubernetes API (nodes: connect ECONNREFUSED)\n',
    });
    let m = await scrape(h.server);
    expect([m.get('tsbgp_kubernetes_api_connected'), m.get('tsbgp_kubernetes_api_last_sync_timestamp_seconds')]).toEqual([0, 0]);
    h.state.speaker = h.speaker;
    h.state.plan = plan([]);
    h.state.source = { ...api, synced: true, connected: true, lastSyncAt: since };
    expect(await get(h.server, '/readyz')).toMatchObject({ status: 200, body: 'ok\n' });
    m = await scrape(h.server);
    expect([m.get('tsbgp_kubernetes_api_connected'), m.get('tsbgp_kubernetes_api_last_sync_timestamp_seconds')]).toEqual([1, since.getTime() / 1000]);
    h.state.source = { ...api, synced: true, connected: false, since, lastSyncAt: since };
    expect(await get(h.server, '/readyz')).toMatchObject({
      status: 200,
      body: 'ok: serving the last known configuration; Kubernetes API unreachable since 2026-12-02T09:59:00.000Z\n',
    });
    expect(await get(h.server, '/healthz')).toMatchObject({ status: 200 });
    m = await scrape(h.server);
    expect([m.get('tsbgp_kubernetes_api_connected'), m.get('tsbgp_agent_ready')]).toEqual([0, 1]);
  });

  it('update latency: from the first pending event to the UPDATE on a socket; abandoned when none follows', async () => {
    const h = await harness();
    h.attach();
    h.metrics.eventReceived();
    h.advance(20);
    h.metrics.eventReceived(); // a second event while pending: still timed from the first
    h.advance(10);
    h.metrics.reconciled({ awaitUpdate: true });
    h.advance(15);
    h.metrics.updateSent();
    h.metrics.updateSent(); // nothing pending: no second sample
    h.metrics.eventReceived();
    h.metrics.reconciled({ awaitUpdate: true });
    h.metrics.updateAbandoned();
    h.metrics.updateSent();
    h.metrics.eventReceived();
    h.metrics.reconciled();
    h.metrics.updateSent();
    const m = await scrape(h.server);
    expect(m.get('tsbgp_update_latency_seconds_count')).toBe(1);
    expect(m.get('tsbgp_update_latency_seconds_sum')).toBeCloseTo(0.045, 6);
    expect(m.get('tsbgp_reconcile_duration_seconds_count')).toBe(3);
    expect(m.get('tsbgp_update_latency_seconds_bucket', { le: '0.05' })).toBe(1);
    expect(m.get('tsbgp_update_latency_seconds_bucket', { le: '0.025' })).toBe(0);
  });
});

describe('--metrics ADDR:PORT', () => {
  it('accepts IPv4, bracketed IPv6, host names and :PORT', () => {
    expect(parseMetricsAddress('127.0.0.1:9091')).toEqual({ host: '127.0.0.1', port: 9091 });
    expect(parseMetricsAddress('0.0.0.0:0')).toEqual({ host: '0.0.0.0', port: 0 });
    expect(parseMetricsAddress('[::1]:9090')).toEqual({ host: '::1', port: 9090 });
    expect(parseMetricsAddress('[::]:65535')).toEqual({ host: '::', port: 65535 });
    expect(parseMetricsAddress('localhost:9091')).toEqual({ host: 'localhost', port: 9091 });
    expect(parseMetricsAddress(':9091')).toEqual({ host: '', port: 9091 });
  });

  it.each([
    ['9091', 'no port'],
    ['127.0.0.1', 'no port'],
    ['127.0.0.1:', 'port "" is not 0-65535'],
    ['127.0.0.1:65536', 'port "65536" is not 0-65535'],
    ['127.0.0.1:-1', 'port "-1" is not 0-65535'],
    ['127.0.0.1:http', 'port "http" is not 0-65535'],
    ['::1:9090', 'put an IPv6 address in brackets'],
    ['[127.0.0.1]:9090', '"127.0.0.1" is not an IPv6 address'],
    ['[::1]9090', 'no port'],
    ['bad_host!:9090', '"bad_host!" is not an IP address or host name'],
  ])('rejects %j', (text, why) => {
    expect(() => parseMetricsAddress(text)).toThrow(`--metrics: expected ADDR:PORT (e.g. 0.0.0.0:9900 or [::1]:9900), got ${JSON.stringify(text)}`);
    expect(() => parseMetricsAddress(text)).toThrow(why);
  });

  it('tsbgp agent reports a bad --metrics as a usage error (exit 2) before starting anything', async () => {
    let started = false;
    const r = await run(['agent', '--node', 'n', '--manifests', '/nonexistent', '--metrics', 'localhost'], {
      speakerFactory: (o: SpeakerOptions) => {
        started = true;
        return new FakeSpeaker(o);
      },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tsbgp agent: --metrics: expected ADDR:PORT');
    expect(r.stderr).toContain('got "localhost"');
    expect(started).toBe(false);
  });

  it('an address already in use is a clear error', async () => {
    const first = await serve(new AgentMetrics({ processMetrics: false }));
    await expect(startMetricsServer(new AgentMetrics({ processMetrics: false }), { host: '127.0.0.1', port: first.address.port })).rejects.toThrow(
      `--metrics: cannot listen on 127.0.0.1:${first.address.port}`,
    );
  });

  it('listens on IPv6 loopback', async () => {
    const s = await startMetricsServer(new AgentMetrics({ processMetrics: false }), parseMetricsAddress('[::1]:0')).catch((e: Error) => e);
    // Hosts without IPv6 loopback cannot run this; the error must still name the address.
    if (s instanceof Error) return expect(s.message).toContain('cannot listen on [::1]:0');
    servers.push(s);
    const res = await fetch(`http://[::1]:${s.address.port}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('runAgent with --metrics', () => {
  const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));

  it('is ready once the speaker started and the plan applied; session changes and reconciles show up; not ready once stopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-metrics-'));
    await cp(join(yb, 'base'), join(dir, 'base'), { recursive: true });
    const metrics = new AgentMetrics({ processMetrics: false });
    const server = await serve(metrics);
    expect((await get(server, '/readyz')).status).toBe(503);
    let speaker: FakeSpeaker | undefined;
    const agent = await runAgent({
      node: 'worker1',
      manifests: [join(dir, 'base')],
      control: false,
      signals: false,
      debounceMs: 20,
      logger: createLogger({ level: 'error', write: () => {} }),
      speakerFactory: (o: SpeakerOptions) => (speaker = new FakeSpeaker(o)),
      metrics,
    });
    agents.push(agent);
    await agent.settled();
    expect(await get(server, '/readyz')).toMatchObject({ status: 200 });
    let m = await scrape(server);
    expect(m.get('tsbgp_agent_ready')).toBe(1);
    expect(m.get('tsbgp_reconcile_duration_seconds_count')).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', type: 'global', state: 'Idle' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.11', type: 'node-to-node mesh', state: 'Idle' })).toBe(1);
    expect(m.get('tsbgp_bgp_prefixes_advertised', { peer: '192.0.2.20', family: 'ipv4' })).toBe(1);
    expect(m.get('tsbgp_config_errors')).toBe(agent.status().errors.length);

    speaker!.setState('192.0.2.20', 'Established');
    m = await scrape(server);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20', state: 'Established' })).toBe(1);

    await agent.stop();
    expect(await get(server, '/readyz')).toMatchObject({ status: 503, body: 'agent shutting down\n' });
    expect((await get(server, '/healthz')).status).toBe(503);
  });
});

describe('tsbgp agent --metrics (a real process, the real speaker)', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));

  it('serves /readyz and /metrics once configured, and closes on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-metrics-cli-'));
    const [bgpPort, httpPort] = [await freePort(), await freePort()];
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/agent/main.ts',
        'agent',
        '--node',
        'worker1',
        '--manifests',
        'examples/yaobank/base',
        '--listen-port',
        String(bgpPort),
        '--control',
        join(dir, 'tsbgp.sock'),
        '--metrics',
        `127.0.0.1:${httpPort}`,
        '--drain-time',
        '0',
      ],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    try {
      const url = `http://127.0.0.1:${httpPort}`;
      const t0 = Date.now();
      let ready = 0;
      while (ready !== 200) {
        if (Date.now() - t0 > 120_000) throw new Error(`not ready within 120 s; stderr: ${err}`);
        ready = await fetch(`${url}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (ready !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      const m = new Scrape(parseExposition(await (await fetch(`${url}/metrics`)).text()).samples, new Map());
      expect(m.get('tsbgp_agent_ready')).toBe(1);
      expect(m.get('tsbgp_reconcile_duration_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(m.series('tsbgp_bgp_session_state').filter((s) => s.labels.peer === '192.0.2.20' && s.labels.type === 'global')).toHaveLength(6);
      expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    await expect(fetch(`http://127.0.0.1:${httpPort}/healthz`)).rejects.toThrow();
  }, 180_000);
});

describe('two sessions to one address on different ports', () => {
  it('each has its own series, labelled address:port; a lone session keeps the address as its label', async () => {
    const h = await harness();
    const base = new StateSpeaker();
    base.add('192.0.2.20');
    base.add('192.0.2.30');
    const [one, lone] = base.status();
    const two = (port: number, updatesIn: number): PeerStatus => ({ ...one, port, state: 'Established', counters: { ...one.counters, updatesIn } });
    const speaker = { status: (): readonly PeerStatus[] => [two(150, 3), two(166, 5), { ...lone, port: 1790 }] };
    h.state.speaker = speaker as unknown as StateSpeaker;
    h.state.plan = plan(
      [],
      [
        peer('192.0.2.20', { port: 150 }),
        peer('192.0.2.20', { port: 166, id: 'Global_q_192.0.2.20', type: 'node specific' }),
        peer('192.0.2.30', { port: 1790 }),
      ],
    );
    h.attach();
    const m = await scrape(h.server);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20:150', type: 'global', state: 'Established' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.20:166', type: 'node specific', state: 'Established' })).toBe(1);
    expect(m.get('tsbgp_bgp_session_state', { peer: '192.0.2.30', type: 'global', state: 'Idle' })).toBe(1);
    expect(m.get('tsbgp_bgp_updates_received_total', { peer: '192.0.2.20:150' })).toBe(3);
    expect(m.get('tsbgp_bgp_updates_received_total', { peer: '192.0.2.20:166' })).toBe(5);
  });
});
