/**
 * The agent in a cluster, for tests: the fake API server (test/kubernetes/
 * fake-apiserver.ts) holds the cluster's objects, the agent reads them through
 * the real client library (kubernetesSource, as `tsbgp agent --kubeconfig`
 * does), drives a real BgpSpeaker, and a second BgpSpeaker on 127.0.0.2 plays
 * the upstream router and records every announce and withdraw it receives.
 */
import { mkdtemp } from 'node:fs/promises';
import { expect } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { kubernetesEvents, kubernetesSource, type KubernetesSource } from '../../src/agent/sources/kube-source.js';
import { createLogger, type Level } from '../../src/agent/log.js';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { loadKubeConfig } from '../../src/agent/sources/kube-client.js';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import { FakeApiServer } from '../kubernetes/fake-apiserver.js';

export const CRD = 'crd.projectcalico.org/v1';
export const NODE = 'worker1';

// ---- raw API objects, as `kubectl apply` would store them ----

export function node(name: string, ip: string, opts: { podCIDRs?: string[]; labels?: Record<string, string> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: opts.labels ?? {} },
    spec: { podCIDRs: opts.podCIDRs ?? [] },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  };
}

export function bgpConfiguration(spec: Record<string, unknown> = {}) {
  return {
    apiVersion: CRD,
    kind: 'BGPConfiguration',
    metadata: { name: 'default' },
    spec: {
      asNumber: 64512,
      nodeToNodeMeshEnabled: false,
      serviceClusterIPs: [{ cidr: '198.18.0.0/16' }],
      serviceExternalIPs: [{ cidr: '203.0.113.10/32' }],
      ...spec,
    },
  };
}

export function bgpPeer(name: string, peerIP: string, spec: Record<string, unknown> = {}) {
  return { apiVersion: CRD, kind: 'BGPPeer', metadata: { name }, spec: { peerIP, asNumber: 65000, ...spec } };
}

export function service(
  name: string,
  spec: { clusterIP?: string; externalIPs?: string[]; externalTrafficPolicy?: 'Cluster' | 'Local'; type?: string },
  namespace = 'default',
) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: {
      type: spec.type ?? 'LoadBalancer',
      clusterIP: spec.clusterIP ?? '10.96.0.10',
      externalIPs: spec.externalIPs ?? [],
      externalTrafficPolicy: spec.externalTrafficPolicy ?? 'Cluster',
    },
    status: { loadBalancer: {} },
  };
}

export function endpointSlice(name: string, svc: string, nodes: string[], namespace = 'default') {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints: nodes.map((n, i) => ({ addresses: [`10.244.9.${i + 1}`], nodeName: n, conditions: { ready: true } })),
  };
}

export function ipPool(name: string, cidr: string, spec: Record<string, unknown> = {}) {
  return { apiVersion: CRD, kind: 'IPPool', metadata: { name }, spec: { cidr, blockSize: 26, ...spec } };
}

export function bgpFilter(name: string, rejectCidr: string) {
  return { apiVersion: CRD, kind: 'BGPFilter', metadata: { name }, spec: { exportV4: [{ action: 'Reject', cidr: rejectCidr, matchOperator: 'In' }] } };
}

export function blockAffinity(name: string, nodeName: string, cidr: string) {
  return { apiVersion: CRD, kind: 'BlockAffinity', metadata: { name }, spec: { node: nodeName, cidr, state: 'confirmed' } };
}

// ---- the router ----

export interface RouterLogEntry {
  readonly type: 'announce' | 'withdraw';
  readonly prefix: string;
}

export class Router {
  readonly log: RouterLogEntry[] = [];
  readonly speaker: BgpSpeaker;

  constructor(readonly address: string) {
    this.speaker = new BgpSpeaker({ asn: 65000, routerId: address, listen: { port: 0, addresses: [address] } });
    // Passive, and quick to accept again after the agent removes and re-adds the peer.
    this.speaker.addPeer({ address: '127.0.0.1', asn: 64512, passive: true, families: ['ipv4'], idleHoldTime: 0.05 });
    this.speaker.on('routeReceived', (r) => this.log.push({ type: 'announce', prefix: r.prefix.toString() }));
    this.speaker.on('routeWithdrawn', (_peer, prefix) => this.log.push({ type: 'withdraw', prefix: prefix.toString() }));
  }

  get port(): number {
    return this.speaker.port!;
  }

  /** What the router holds from the agent, sorted. */
  learned(): string[] {
    return this.speaker
      .received('127.0.0.1')
      .map((r) => r.prefix.toString())
      .sort();
  }

  session() {
    return this.speaker.status().find((s) => s.address === '127.0.0.1');
  }
}

// ---- the whole thing ----

export interface Cluster {
  readonly server: FakeApiServer;
  readonly router: Router;
  readonly agent: Agent;
  readonly source: KubernetesSource;
  readonly metrics: AgentMetrics;
  readonly logs: Record<string, unknown>[];
  readonly control: string;
  /**
   * The Events recorder's clock, driven by the test: the agent's own flush timer is left at a minute, so a
   * count bump goes out only when the test moves this clock past the interval and calls `flush()`.
   */
  readonly events: { advance(ms: number): void; flush(): Promise<void> };
  /** Writes an object to the API server (ADDED/MODIFIED to the watches). */
  apply(o: Record<string, unknown>): void;
  remove(o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): void;
  /** Waits until the router holds exactly `prefixes`. */
  routes(prefixes: string[], ms?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface ClusterOptions {
  /** Objects besides the Node, the BGPConfiguration and the router's BGPPeer. */
  readonly extra?: Record<string, unknown>[];
  readonly node?: Record<string, unknown>;
  readonly bgp?: Record<string, unknown>;
  /** The router's BGPPeer spec beyond peerIP and asNumber. */
  readonly peer?: Record<string, unknown>;
  readonly logLevel?: Level;
  readonly eventsIntervalMs?: number;
}

export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const router = new Router('127.0.0.2');
    await router.speaker.start();
    cleanup.push(() => router.speaker.stop());
    const server = new FakeApiServer();
    server.apply(opts.node ?? node(NODE, '127.0.0.1', { podCIDRs: ['10.244.1.0/24'] }));
    server.apply(opts.bgp ?? bgpConfiguration());
    server.apply(bgpPeer('router', `127.0.0.2:${router.port}`, opts.peer));
    for (const o of opts.extra ?? []) server.apply(o);
    await server.start();
    cleanup.push(() => server.stop());
    const kc = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
    const source = kubernetesSource(kc, { backoff: { initialMs: 20, maxMs: 200, jitter: 0.5 }, watchdogIntervalMs: 50 });
    let eventsNow = Date.now();
    const events = kubernetesEvents(kc, source, { host: NODE, intervalMs: opts.eventsIntervalMs ?? 60_000, now: () => eventsNow });
    const metrics = new AgentMetrics({ processMetrics: false });
    const logs: Record<string, unknown>[] = [];
    const control = join(await mkdtemp(join(tmpdir(), 'tsbgp-k8s-')), 'tsbgp.sock');
    const agent = await runAgent({
      node: NODE,
      source,
      events,
      eventsFlushMs: 60_000,
      control,
      listenPort: 0,
      signals: false,
      logLevel: opts.logLevel,
      logger: createLogger({ level: opts.logLevel ?? 'info', write: (l) => void logs.push(JSON.parse(l) as Record<string, unknown>) }),
      speakerFactory: (o) => new BgpSpeaker(o),
      metrics,
    });
    cleanup.push(() => agent.stop());
    const routes = async (prefixes: string[], ms = 5000) => {
      await expect.poll(() => router.learned(), { timeout: ms, interval: 10 }).toEqual([...prefixes].sort());
    };
    return {
      server,
      router,
      agent,
      source,
      metrics,
      logs,
      control,
      events: { advance: (ms) => void (eventsNow += ms), flush: () => events.flush() },
      apply: (o) => void server.apply(o),
      remove: (o) => void server.remove(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace),
      routes,
      stop: async () => {
        for (const f of cleanup.reverse()) await f();
      },
    };
  } catch (e) {
    for (const f of cleanup.reverse()) await f().catch(() => undefined);
    throw e;
  }
}
