/**
 * Prometheus metrics of the node agent, on a registry of their own (never
 * prom-client's global one, so several agents in one process — tests — do
 * not share series). The agent attaches a state source; every scrape and
 * every reconcile or session change reads it, so gauges are current and the
 * message counters follow the speaker's own.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Plan } from '../kubernetes/index.js';
import type { PeerState, SpeakerApi } from '../speaker/index.js';
import type { SourceStatus } from './sources/index.js';
import { BfdMetrics } from './bfd-metrics.js';
import { counterDelta } from './counter-delta.js';
import { peerKey, plannedPeerKey } from '../kubernetes/index.js';

const PEER_STATES: readonly PeerState[] = ['Idle', 'Connect', 'Active', 'OpenSent', 'OpenConfirm', 'Established'];

/** The planner's reasons for not advertising a Service IP; always exported, 0 when none. */
const REFUSED_REASONS = ['outside allow-list', 'not-local', 'not ready', 'node excluded', 'bad annotation', 'range only'] as const;

/** What the metrics read from the agent. */
export interface MetricsInput {
  /** False once the agent is shutting down. */
  readonly running: boolean;
  /** The started speaker; undefined until it is. Only `status()` is read: its counters are kept as routes change, so a scrape is O(peers). */
  readonly speaker?: Pick<SpeakerApi, 'status'>;
  /** The plan last applied to the speaker; undefined before the first one. */
  readonly plan?: Plan;
  /** Configuration errors the agent reports in `status` (manifests, plan, refused peers, speaker refusals). */
  readonly configErrors: number;
  /** Refused routes beyond the plan's refused IPs, by reason (e.g. "rejected by filter"). */
  readonly refusedExtra?: Readonly<Record<string, number>>;
  /** Where the configuration comes from, and whether it is reachable. */
  readonly source?: SourceStatus;
  /** An RFC 8326 drain in progress (src/agent/drain.ts): seconds left (0 once routers are taken to have converged). */
  readonly draining?: { readonly remainingSeconds: number };
}

export interface AgentMetricsOptions {
  /** Milliseconds, for session uptime and reconcile durations; default Date.now. */
  readonly now?: () => number;
  /** Also export process_* and nodejs_* metrics (default true). */
  readonly processMetrics?: boolean;
}

/** `detail` on a ready answer says what is degraded without being a reason to take the node out. */
export type Readiness = { readonly ready: true; readonly detail?: string } | { readonly ready: false; readonly reason: string };

type CounterName = 'messagesIn' | 'messagesOut' | 'updatesIn' | 'updatesOut';
const COUNTERS: readonly CounterName[] = ['messagesIn', 'messagesOut', 'updatesIn', 'updatesOut'];

export class AgentMetrics {
  readonly registry = new Registry();
  private readonly now: () => number;
  private source?: () => MetricsInput;
  private pendingSince?: number;
  /** Start of the event whose UPDATE the agent is waiting to see on a socket. */
  private updateSince?: number;
  /** Last raw speaker counter per peer, to turn snapshots into increments. */
  private readonly lastCounters = new Map<string, Record<CounterName, number>>();
  /** Label sets exported last time, to drop the series of peers that are gone. */
  private peerLabels = new Map<string, { peer: string; type: string }>();
  private familyLabels = new Set<string>();

  private readonly sessionState: Gauge<'peer' | 'type' | 'state'>;
  private readonly sessionUptime: Gauge<'peer' | 'type'>;
  private readonly counters: Record<CounterName, Counter<'peer'>>;
  private readonly prefixesAdvertised: Gauge<'peer' | 'family'>;
  private readonly prefixesReceived: Gauge<'peer' | 'family'>;
  private readonly prefixesReceivedPre: Gauge<'peer' | 'family'>;
  private readonly prefixLimit: Gauge<'peer' | 'family'>;
  private readonly prefixLimitReached: Gauge<'peer' | 'family'>;
  private readonly prefixesRefused: Gauge<'peer' | 'family'>;
  private readonly sendQueue: Gauge<'peer'>;
  private readonly refused: Gauge<'reason'>;
  private readonly configErrors: Gauge;
  private readonly up: Gauge;
  private readonly draining: Gauge;
  private readonly drainRemaining: Gauge;
  private readonly reconcileSeconds: Histogram;
  private readonly updateSeconds: Histogram;
  private readonly watchRestarts: Counter<'resource'>;
  /** Registered on first use, so an agent reading manifests exports no Kubernetes API series. */
  private api?: { readonly connected: Gauge; readonly lastSync: Gauge };
  private readonly bfd: BfdMetrics;

  constructor(opts: AgentMetricsOptions = {}) {
    // Wall clock: session `since` is a Date. A step backwards clamps a duration to 0.
    this.now = opts.now ?? Date.now;
    const registers = [this.registry];
    this.sessionState = new Gauge({
      name: 'tsbgp_bgp_session_state',
      help: 'BGP session state per peer: 1 for the current state, 0 for the others',
      labelNames: ['peer', 'type', 'state'],
      registers,
    });
    this.sessionUptime = new Gauge({
      name: 'tsbgp_bgp_session_uptime_seconds',
      help: 'Seconds since the session reached Established; 0 when it is not established',
      labelNames: ['peer', 'type'],
      registers,
    });
    const counter = (name: string, help: string) => new Counter({ name, help, labelNames: ['peer'], registers });
    this.counters = {
      messagesIn: counter('tsbgp_bgp_messages_received_total', 'BGP messages received from the peer, across session resets'),
      messagesOut: counter('tsbgp_bgp_messages_sent_total', 'BGP messages sent to the peer, across session resets'),
      updatesIn: counter('tsbgp_bgp_updates_received_total', 'BGP UPDATE messages received from the peer, across session resets'),
      updatesOut: counter('tsbgp_bgp_updates_sent_total', 'BGP UPDATE messages sent to the peer, across session resets'),
    };
    this.prefixesAdvertised = new Gauge({
      name: 'tsbgp_bgp_prefixes_advertised',
      help: 'Prefixes currently advertised to the peer, per address family',
      labelNames: ['peer', 'family'],
      registers,
    });
    this.prefixesReceived = new Gauge({
      name: 'tsbgp_bgp_prefixes_received',
      help: 'Prefixes currently accepted from the peer, per address family',
      labelNames: ['peer', 'family'],
      registers,
    });
    this.prefixesReceivedPre = new Gauge({
      name: 'tsbgp_bgp_prefixes_received_pre_policy',
      help: 'Prefixes currently in the Adj-RIB-In from the peer before import policy (what a max-prefix limit counts), per address family',
      labelNames: ['peer', 'family'],
      registers,
    });
    this.prefixLimit = new Gauge({
      name: 'tsbgp_bgp_prefix_limit',
      help: 'The max-prefix limit configured for the peer and family (series absent without one)',
      labelNames: ['peer', 'family'],
      registers,
    });
    this.prefixLimitReached = new Gauge({
      name: 'tsbgp_bgp_prefix_limit_state',
      help: 'Max-prefix state: 0 under the warning threshold, 1 at or over it, 2 over the limit (routes refused, or the session torn down)',
      labelNames: ['peer', 'family'],
      registers,
    });
    this.prefixesRefused = new Gauge({
      name: 'tsbgp_bgp_prefixes_refused',
      help: 'New prefixes refused on the current session by a max-prefix limit with action block',
      labelNames: ['peer', 'family'],
      registers,
    });
    this.sendQueue = new Gauge({
      name: 'tsbgp_bgp_send_queue_bytes',
      help: 'Bytes of ours the peer has not taken yet (our queue plus the socket buffer); grows while the peer does not read',
      labelNames: ['peer'],
      registers,
    });
    this.refused = new Gauge({
      name: 'tsbgp_routes_refused',
      help: 'Service IPs (and routes) this node does not advertise, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.configErrors = new Gauge({ name: 'tsbgp_config_errors', help: 'Configuration errors currently reported by tsbgp status', registers });
    this.up = new Gauge({ name: 'tsbgp_agent_ready', help: '1 once the first configuration was applied and the speaker started (as /readyz)', registers });
    this.reconcileSeconds = new Histogram({
      name: 'tsbgp_reconcile_duration_seconds',
      help: 'From a configuration event received to the speaker calls done',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.updateSeconds = new Histogram({
      name: 'tsbgp_update_latency_seconds',
      help: 'From a configuration event received to the first UPDATE carrying the change handed to a peer socket',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.watchRestarts = new Counter({
      name: 'tsbgp_kubernetes_watch_restarts_total',
      help: 'Kubernetes API watches restarted (expired resourceVersion, dropped connection)',
      labelNames: ['resource'],
      registers,
    });
    for (const r of REFUSED_REASONS) this.refused.set({ reason: r }, 0);
    this.draining = new Gauge({
      name: 'tsbgp_draining',
      help: '1 while the agent drains (RFC 8326 graceful shutdown: routes sent with GRACEFUL_SHUTDOWN)',
      registers,
    });
    this.drainRemaining = new Gauge({
      name: 'tsbgp_drain_remaining_seconds',
      help: 'Seconds left of the drain time (0 when not draining or once passed)',
      registers,
    });
    this.configErrors.set(0);
    this.up.set(0);
    this.draining.set(0);
    this.drainRemaining.set(0);
    this.bfd = new BfdMetrics(registers);
    if (opts.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Where the metrics read the agent's state (the agent calls this once it has one). */
  attach(source: () => MetricsInput): void {
    this.source = source;
    this.refresh();
  }

  /** A configuration event arrived: starts the reconcile clock unless one is already running. */
  eventReceived(): void {
    this.pendingSince ??= this.now();
  }

  /**
   * The speaker calls for the pending events are done: records the duration,
   * then refreshes. `awaitUpdate`: they changed routes with a session up, so
   * `updateSent` or `updateAbandoned` follows.
   */
  reconciled(opts: { awaitUpdate?: boolean } = {}): void {
    if (this.pendingSince !== undefined) {
      this.reconcileSeconds.observe(Math.max(0, this.now() - this.pendingSince) / 1000);
      if (opts.awaitUpdate) this.updateSince ??= this.pendingSince;
      this.pendingSince = undefined;
    }
    this.refresh();
  }

  /** The first UPDATE after `reconciled({ awaitUpdate: true })` reached a socket. */
  updateSent(): void {
    if (this.updateSince === undefined) return;
    this.updateSeconds.observe(Math.max(0, this.now() - this.updateSince) / 1000);
    this.updateSince = undefined;
  }

  /** No UPDATE followed (filtered from every peer, sessions down): nothing to measure. */
  updateAbandoned(): void {
    this.updateSince = undefined;
  }

  /** For the Kubernetes API source: a watch of `resource` was restarted. */
  watchRestarted(resource: string): void {
    this.watchRestarts.inc({ resource });
  }

  /** 503 reasons for /readyz, in the order they are checked. */
  readiness(): Readiness {
    const s = this.source?.();
    if (!s) return { ready: false, reason: 'agent starting' };
    if (!s.running) return { ready: false, reason: 'agent shutting down' };
    if (s.source && !s.source.synced)
      return {
        ready: false,
        reason:
          `waiting for the first ${s.source.kind === 'kubernetes' ? 'sync of the Kubernetes API' : 'load of the manifests'}` +
          `${s.source.lastError ? ` (${s.source.lastError})` : ''}`,
      };
    if (!s.speaker) return { ready: false, reason: 'BGP speaker not started' };
    if (!s.plan) return { ready: false, reason: 'no configuration applied yet' };
    // Still ready while the API server is away: the node keeps advertising
    // what it last knew, and taking every node out at once would tell nothing
    // node-specific (docs/metrics.md). The body says so.
    if (s.source && !s.source.connected)
      return {
        ready: true,
        detail: `serving the last known configuration; Kubernetes API unreachable since ${s.source.since.toISOString()}`,
      };
    return { ready: true };
  }

  /** /healthz: alive unless the agent stopped. */
  liveness(): Readiness {
    const s = this.source?.();
    return s && !s.running ? { ready: false, reason: 'agent stopped' } : { ready: true };
  }

  /** Reads the source and updates every gauge and counter. */
  refresh(): void {
    const s = this.source?.();
    if (!s) return;
    this.up.set(this.readiness().ready ? 1 : 0);
    this.configErrors.set(s.configErrors);
    this.draining.set(s.draining !== undefined ? 1 : 0);
    this.drainRemaining.set(s.draining?.remainingSeconds ?? 0);
    const byReason = new Map<string, number>(REFUSED_REASONS.map((r) => [r, 0]));
    for (const r of s.plan?.refused ?? []) byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
    for (const [r, n] of Object.entries(s.refusedExtra ?? {})) byReason.set(r, (byReason.get(r) ?? 0) + n);
    for (const [reason, n] of byReason) this.refused.set({ reason }, n);
    if (s.source?.kind === 'kubernetes') this.refreshApi(s.source);
    this.refreshPeers(s);
    this.bfd.update(s.speaker?.status() ?? []);
  }

  private refreshApi(src: SourceStatus): void {
    const registers = [this.registry];
    this.api ??= {
      connected: new Gauge({
        name: 'tsbgp_kubernetes_api_connected',
        help: '1 while every watched resource is listed and watching, 0 while the API server is unreachable (the last known configuration stays advertised)',
        registers,
      }),
      lastSync: new Gauge({
        name: 'tsbgp_kubernetes_api_last_sync_timestamp_seconds',
        help: 'Unix time of the last complete list of a watched resource; 0 before the first',
        registers,
      }),
    };
    this.api.connected.set(src.connected ? 1 : 0);
    this.api.lastSync.set(src.lastSyncAt ? src.lastSyncAt.getTime() / 1000 : 0);
  }

  async metrics(): Promise<string> {
    this.refresh();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private refreshPeers(s: MetricsInput): void {
    const types = new Map((s.plan?.peers ?? []).map((p) => [plannedPeerKey(p), p.type as string]));
    const peers = new Map<string, { peer: string; type: string }>();
    const families = new Set<string>();
    const now = this.now();
    const status = s.speaker?.status() ?? [];
    // The `peer` label is the address; with two sessions to one address (different ports), address:port.
    const seen = new Map<string, number>();
    for (const st of status) seen.set(st.address, (seen.get(st.address) ?? 0) + 1);
    for (const st of status) {
      const peer = (seen.get(st.address) ?? 0) > 1 ? peerKey(st.address, st.port) : st.address;
      const labels = { peer, type: types.get(peerKey(st.address, st.port)) ?? 'unknown' };
      peers.set(peer, labels);
      const old = this.peerLabels.get(peer);
      if (old && old.type !== labels.type) this.dropSessionSeries(old);
      for (const state of PEER_STATES) this.sessionState.set({ ...labels, state }, state === st.state ? 1 : 0);
      this.sessionUptime.set(labels, st.state === 'Established' ? Math.max(0, now - st.since.getTime()) / 1000 : 0);
      const last = this.lastCounters.get(peer);
      const cur = {} as Record<CounterName, number>;
      for (const c of COUNTERS) {
        cur[c] = st.counters[c];
        const d = counterDelta(last?.[c], cur[c]);
        // inc(0) still creates the series, so a quiet peer shows 0 rather than nothing.
        this.counters[c].inc({ peer }, d);
      }
      this.lastCounters.set(peer, cur);
      this.sendQueue.set({ peer }, st.counters.sendQueueBytes ?? 0);
      // Counters the speaker keeps as routes change: never a walk of the tables.
      for (const family of ['ipv4', 'ipv6'] as const) {
        const f = st.counters.families?.[family];
        const labels = { peer, family };
        families.add(`${peer} ${family}`);
        this.prefixesAdvertised.set(labels, f?.advertised ?? 0);
        this.prefixesReceived.set(labels, f?.accepted ?? 0);
        this.prefixesReceivedPre.set(labels, f?.received ?? 0);
        if (f?.limit !== undefined) {
          this.prefixLimit.set(labels, f.limit);
          this.prefixLimitReached.set(labels, f.limitState === 'exceeded' ? 2 : f.limitState === 'warning' ? 1 : 0);
          this.prefixesRefused.set(labels, f.refused ?? 0);
        } else {
          this.prefixLimit.remove(labels);
          this.prefixLimitReached.remove(labels);
          this.prefixesRefused.remove(labels);
        }
      }
    }
    for (const [addr, labels] of this.peerLabels) {
      if (peers.has(addr)) continue;
      this.dropSessionSeries(labels);
      for (const c of COUNTERS) this.counters[c].remove({ peer: addr });
      this.lastCounters.delete(addr);
      this.sendQueue.remove({ peer: addr });
    }
    for (const key of this.familyLabels) {
      if (families.has(key)) continue;
      const [peer, family] = key.split(' ');
      for (const g of [
        this.prefixesAdvertised,
        this.prefixesReceived,
        this.prefixesReceivedPre,
        this.prefixLimit,
        this.prefixLimitReached,
        this.prefixesRefused,
      ])
        g.remove({ peer, family });
    }
    this.peerLabels = peers;
    this.familyLabels = families;
  }

  private dropSessionSeries(labels: { peer: string; type: string }): void {
    for (const state of PEER_STATES) this.sessionState.remove({ ...labels, state });
    this.sessionUptime.remove(labels);
  }
}
