/**
 * The node agent shell: a ConfigSource (manifests or the Kubernetes API) →
 * ClusterState/Planner → reconcile → speaker, plus the control socket, logs,
 * Events and signals. Every decision lives in the pure modules (planner,
 * reconcile, redistribute, views); this file only moves events in and
 * operations out.
 */
import { formatIssue, newlyRefused, Planner, type ClusterEvent, type ManifestIssue, type Plan } from '../kubernetes/index.js';
import { type EventSink, ROUTER_ID_ENV, routerIdSetting, secretNamespace } from '../kubernetes/index.js';
import type { Prefix } from '../net/index.js';
import type { PeerOptions, PeerState, PeerStatus, ReceivedRoute, SpeakerOptions } from '../speaker/index.js';
import { defaultMaxPrefixes } from './max-prefixes.js';
import { applyOperations, type ApplyFailure } from './apply.js';
import { ControlError, startControlServer, type ControlServer, type Method } from './control.js';
import { filterWarnings, planFilters, reconcile, servicePolicy, type PeerRefusal } from '../kubernetes/index.js';
import { desiredRedistribution, localPeers, redistributedAttributes, redistributedOptions } from '../kubernetes/index.js';
import { changeLevel, ChangeMemo, createLogger, parseLevel, type Level, type Logger } from './log.js';
import type { AgentMetrics } from './metrics.js';
import { PlanEvents } from './plan-events.js';
import { kernelRoutesJson, kernelSpeakerOptions, kernelStatusJson, learnedRoutes, syncKernel, type AgentKernelOptions } from './kernel.js';
import { Redistribution } from './redistribution.js';
import { manifestSource, type ConfigSource, type SourceStatus } from './sources/index.js';
import { DEFAULT_ENDPOINT_STATUS_DIR, withEndpointStatus } from './sources/workload-status.js';
import type { AgentSpeaker, SpeakerFactory } from './speaker-api.js';
import { observedScheduler, realScheduler, UpdateProbe } from './update-probe.js';
import { withSessions } from './explain-sessions.js';
import {
  DEFAULT_DRAIN_SECONDS,
  drainedMessage,
  DEFAULT_DRAIN_CLOSE,
  type DrainClose,
  drainStatusJson,
  onSignalAction,
  remainingSeconds,
  startDrain,
  type DrainKind,
  type DrainState,
} from './drain.js';
import { listenHint } from './help.js';
import { receivedFor } from './received-view.js';
import { SessionLog } from './session-log.js';
import type { NodeStatusInput } from './node-status.js';
import {
  agentPlanJson,
  currentErrors,
  explain,
  formatError,
  NoSuchPeer,
  planErrorJson,
  refusalJson,
  routesJson,
  statusJson,
  type AgentSnapshot,
  type ErrorJson,
  type RoutesJson,
  type StatusJson,
} from './views.js';

export type { AdvertisedJson, RoutesJson, StatusJson, StatusPeerJson } from './views.js';
export type { AgentSpeaker, SpeakerFactory } from './speaker-api.js';

export const SHUTDOWN_MESSAGE = 'tsbgp agent shutting down';
/** How long a (re)starting agent waits for peers' End-of-RIB before advertising anyway. */
const AGENT_SELECTION_DEFERRAL_S = 15;

/** A log line names at most this many changes (a first load is 100,000s): the first ones, then a count. */
const MAX_LOGGED_CHANGES = 100;
function capped<T>(items: readonly T[], text: (t: T) => string): string[] {
  if (items.length <= MAX_LOGGED_CHANGES) return items.map(text);
  return [...items.slice(0, MAX_LOGGED_CHANGES).map(text), `… and ${items.length - MAX_LOGGED_CHANGES} more`];
}

export interface AgentOptions {
  readonly node: string;
  /** calico-node's CALICO_ROUTER_ID (`hash` or an IPv4 address); default: read from the environment. */
  readonly routerIdSetting?: string;
  /** Manifest layers (`--manifests`); or give `source`. */
  readonly manifests?: readonly string[];
  /** Where the configuration comes from (src/agent/sources/); default the `manifests` layers. */
  readonly source?: ConfigSource;
  /** Kubernetes Events (NotAdvertised, PeerRefused); none when absent. */
  readonly events?: EventSink;
  /** How often repeated Events' counts are sent (default 60 s). */
  readonly eventsFlushMs?: number;
  /** Control socket path; `false` for none. */
  readonly control?: string | false;
  /** Overrides the BGPConfiguration's logSeverityScreen. */
  readonly logLevel?: Level;
  readonly logger?: Logger;
  /** Overrides the BGPConfiguration's listenPort. */
  readonly listenPort?: number;
  readonly speakerFactory: SpeakerFactory;
  readonly debounceMs?: number;
  /** Install SIGTERM/SIGINT handlers (default true). */
  readonly signals?: boolean;
  readonly now?: () => Date;
  /** Seconds a (re)starting agent waits for peers' End-of-RIB (default AGENT_SELECTION_DEFERRAL_S). */
  readonly selectionDeferralTime?: number;
  /** Prometheus metrics to keep up to date (src/agent/metrics.ts). */
  readonly metrics?: AgentMetrics;
  /** Max-prefix limits of every peer (default: defaultMaxPrefixes(), src/agent/max-prefixes.ts); null for none. */
  readonly maxPrefixes?: PeerOptions['maxPrefixes'] | null;
  /** Program learned routes into the kernel (src/agent/kernel.ts); default off. */
  readonly kernel?: AgentKernelOptions;
  /** Answers CalicoNodeStatus requests for this node (src/agent/sources/node-status-reporter.ts); none when absent. */
  readonly nodeStatus?: NodeStatusSink;
  /** The agent's version, as CalicoNodeStatus reports it (`tsbgp <version>`). */
  readonly version?: string;
  /** Felix's endpoint-status directory, for local workload peering (sources/workload-status.ts); default Calico's; `false`: not read. */
  readonly endpointStatusDir?: string | false;
  /**
   * RFC 8326 drain time, seconds (default DEFAULT_DRAIN_SECONDS, src/agent/drain.ts):
   * on SIGTERM the agent marks its routes GRACEFUL_SHUTDOWN and keeps its
   * sessions up this long before closing them. 0: no drain; SIGTERM stops at
   * once with graceful restart (peers keep our routes as stale).
   */
  readonly drainTime?: number;
  /** Drain (and hold) while this node is cordoned (spec.unschedulable); also per node with the tsbgp.io/drain-on-cordon annotation. */
  readonly drainOnCordon?: boolean;
  /** How sessions close at the end of a SIGTERM drain (src/agent/drain.ts); default DEFAULT_DRAIN_CLOSE. */
  readonly drainClose?: DrainClose;
}

/** Where the agent's state goes for CalicoNodeStatus: started with a reader of that state, closed on stop. */
export interface NodeStatusSink {
  start(read: () => NodeStatusInput): Promise<void> | void;
  close(): void;
}

/** Node annotation that turns drain-on-cordon on ("true") or off ("false") for that node, over --drain-on-cordon. */
const DRAIN_ON_CORDON_ANNOTATION = 'tsbgp.io/drain-on-cordon';

export interface Agent {
  /** Resolves once the agent has stopped. */
  readonly done: Promise<void>;
  readonly controlPath?: string;
  plan(): Plan;
  status(): StatusJson;
  routes(peer?: string): RoutesJson;
  explain(query: string): ReturnType<typeof explain>;
  /** Waits until every change seen so far has reached the speaker (for tests and orderly shutdown). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

function describeEvent(ev: ClusterEvent): string {
  if (ev.type === 'workload')
    return `${ev.endpoint ? 'update' : 'delete'} endpoint status ${ev.file}${ev.endpoint?.bgpPeerName ? ` (BGPPeer ${ev.endpoint.bgpPeerName})` : ''}`;
  if (ev.type === 'delete') return `delete ${ev.kind} ${ev.namespace ? `${ev.namespace}/` : ''}${ev.name}`;
  const r = ev.resource;
  return `${ev.type} ${r.kind} ${'namespace' in r ? `${r.namespace}/` : ''}${r.name}`;
}

export async function runAgent(opts: AgentOptions): Promise<Agent> {
  if ((opts.source === undefined) === (opts.manifests === undefined)) throw new Error('runAgent: give exactly one of `manifests` and `source`');
  return new AgentLoop(opts).start();
}

/**
 * The loop: the source's changes go into the planner (`onChange`); a
 * reconcile, queued once for any number of changes, gives the speaker what
 * the plan changed (`reconcile`); the speaker's events ask for
 * redistribution passes. Everything runs one step at a time on `work`.
 */
class AgentLoop {
  private readonly now: () => Date;
  private readonly log: Logger;
  private readonly startedAt: Date;
  private readonly source: ConfigSource;
  private readonly planner: Planner;
  private readonly planEvents: PlanEvents | undefined;
  /** Conditions that last (errors, refusals) are logged when they appear or change. */
  private readonly memo = new ChangeMemo();
  private readonly redistribution: Redistribution;
  /** Event → UPDATE on the socket, for tsbgp_update_latency_seconds: the speaker's timers are watched. */
  private readonly probe: UpdateProbe;
  private readonly done: Promise<void>;
  private resolveDone!: () => void;
  private work: Promise<void> = Promise.resolve();
  private running = true;
  private reconcileQueued = false;

  // What the source said last.
  private issues: ManifestIssue[] = [];
  private disconnectedAt: Date | undefined;

  // The speaker, once the node has an IPv4 address.
  private speaker: AgentSpeaker | undefined;
  private speakerOpts: SpeakerOptions | undefined;
  /** When the speaker was last given a changed configuration (CalicoNodeStatus lastReconfigurationTime). */
  private reconfiguredAt: Date | undefined;
  private startError: Error | undefined;

  // What the last reconcile did.
  private applied: Plan | undefined;
  private refusals: readonly PeerRefusal[] = [];
  private failures: ApplyFailure[] = [];
  private restartNeeded: ErrorJson[] = [];
  /** The BGPFilter policies the speaker holds (their key), so a change is defined once. */
  private filterKey: string | undefined;
  private servicePolicyKey: string | undefined;
  /** Session changes in the log: down once with its reason, retries at debug (session-log.ts). */
  private readonly sessionLog: SessionLog;
  /** The kernel rules and statics the speaker holds (their key). */
  private kernelKey: string | undefined;

  private control: ControlServer | undefined;

  /** RFC 8326 drain in progress (src/agent/drain.ts), and the timer that ends a `stop` drain. */
  private drainState: DrainState | undefined;
  private drainTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: AgentOptions) {
    this.now = opts.now ?? (() => new Date());
    this.log = opts.logger ?? createLogger({ level: opts.logLevel ?? 'info', now: this.now });
    this.startedAt = this.now();
    const base = opts.source ?? manifestSource(opts.manifests ?? [], { debounceMs: opts.debounceMs ?? 100, now: this.now });
    this.source =
      opts.endpointStatusDir === false
        ? base
        : withEndpointStatus(base, opts.endpointStatusDir ?? DEFAULT_ENDPOINT_STATUS_DIR, { debounceMs: opts.debounceMs ?? 100 });
    this.planEvents = opts.events ? new PlanEvents(opts.events, opts.node, opts.eventsFlushMs) : undefined;
    this.planner = new Planner(opts.node);
    this.planner.state.secretNamespace = secretNamespace(); // where password secretKeyRefs point (env NAMESPACE)
    this.planner.state.routerIdSetting = opts.routerIdSetting ?? routerIdSetting(); // calico-node's CALICO_ROUTER_ID
    this.sessionLog = new SessionLog(this.log);
    this.probe = new UpdateProbe(
      () => this.speaker?.status() ?? [],
      () => this.now().getTime(),
    );
    this.redistribution = new Redistribution(
      { enqueue: (step) => void this.enqueue(step), setTimer: (fn, ms) => setTimeout(fn, ms).unref(), now: () => performance.now() },
      () => this.redistribute(),
    );
    this.done = new Promise<void>((r) => (this.resolveDone = r));
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.work = this.work.then(step).catch((e: Error) => this.log.error('internal error', { error: e.message, stack: e.stack }));
    return this.work;
  }

  // ---- the source's side ----

  private readonly onChange = (events: ClusterEvent[], issues: ManifestIssue[]): void => {
    const issuesChanged = this.memo.changed('issues', issues);
    const newIssues = this.memo.added('issue', issues);
    this.issues = issues;
    if (events.length === 0 && !issuesChanged) return;
    const log = this.log;
    if (events.length > 0) {
      const before = this.planner.plan;
      // One plan for the whole batch (a reload, a burst of watch events).
      const plan = this.planner.applyAll(events).plan;
      // A first load of a large cluster is 100,000s of events: name the first ones and count the rest.
      log.info('configuration changed', {
        changes: capped(events, describeEvent),
        changeCount: events.length,
        routes: plan.routes.length,
        peers: plan.peers.length,
      });
      // Only the IPs this change refused (or refused for another reason).
      for (const r of newlyRefused(before.refused, plan.refused))
        log.warn(`not advertising ${r.source} ${r.ip} of Service ${r.namespace}/${r.name}: ${r.reason}`, {
          service: `${r.namespace}/${r.name}`,
          ip: r.ip,
          reason: r.reason,
          detail: r.message,
        });
      if (this.memo.changed('plan errors', plan.errors)) for (const e of plan.errors) log.error(formatError(planErrorJson(e)));
    }
    for (const i of newIssues) {
      const fields = { file: i.file, kind: i.kind, name: i.name, field: i.path };
      if (i.severity === 'error') log.error(`invalid ${i.file ? 'manifest' : 'resource'}: ${formatIssue(i)}`, fields);
      else if (i.severity === 'warning') log.warn(`ignored in ${i.file ? 'manifest' : 'resource'}: ${formatIssue(i)}`, fields);
      else log.debug(`ignored: ${formatIssue(i)}`);
    }
    if (events.length > 0) this.opts.metrics?.eventReceived();
    if (events.length > 0) this.checkCordon();
    if (events.length > 0 || !this.applied) this.requestReconcile();
  };

  // ---- drain (RFC 8326) ----

  private get drainSeconds(): number {
    return this.opts.drainTime ?? DEFAULT_DRAIN_SECONDS;
  }

  /** Starts a drain (or turns a `hold` into a `stop` one with the same end); returns the drain now in force. */
  private beginDrain(kind: DrainKind, reason: string): DrainState {
    const now = this.now().getTime();
    const was = this.drainState;
    if (was !== undefined && (was.kind === kind || was.kind === 'stop')) return was;
    const d: DrainState =
      was !== undefined ? { ...was, kind, reason: `${reason} (draining since ${was.reason})` } : startDrain(kind, reason, now, this.drainSeconds);
    this.drainState = d;
    if (was === undefined) {
      this.speaker?.drain();
      const sessions = kind === 'stop' ? `sessions close in ${this.drainSeconds} s` : 'sessions stay up until the drain is cancelled';
      this.recordDrainEvent(`draining: routes re-advertised with GRACEFUL_SHUTDOWN (${reason}); ${sessions}`);
    }
    this.log.warn(kind === 'stop' ? 'draining before shutdown (RFC 8326 graceful shutdown)' : 'draining (RFC 8326 graceful shutdown), holding', {
      reason,
      drainSeconds: Math.max(0, Math.round((d.until - now) / 1000)),
    });
    if (kind === 'stop') {
      if (this.drainTimer !== undefined) clearTimeout(this.drainTimer);
      this.drainTimer = setTimeout(() => void this.stop(), Math.max(0, d.until - now));
    }
    this.opts.metrics?.refresh();
    return d;
  }

  /** Ends a `hold` drain (a `stop` drain cannot be cancelled: the agent is leaving). */
  private cancelDrain(reason: string): boolean {
    const d = this.drainState;
    if (d === undefined || d.kind !== 'hold') return false;
    this.drainState = undefined;
    this.speaker?.undrain();
    this.log.info('drain cancelled: routes re-advertised without GRACEFUL_SHUTDOWN', { reason });
    this.recordDrainEvent(`drain cancelled (${reason}): routes re-advertised without GRACEFUL_SHUTDOWN`);
    this.opts.metrics?.refresh();
    return true;
  }

  private recordDrainEvent(message: string): void {
    void this.opts.events?.record([{ involved: { kind: 'Node', name: this.opts.node }, reason: 'Draining', message }]);
  }

  /** Cordoned with drain-on-cordon: drain and hold; uncordoned: the cordon's drain ends. */
  private checkCordon(): void {
    const node = this.planner.state.nodes.get(this.opts.node);
    const annotation = node?.annotations[DRAIN_ON_CORDON_ANNOTATION];
    const enabled = annotation === 'true' || (annotation !== 'false' && this.opts.drainOnCordon === true);
    const cordoned = enabled && node?.unschedulable === true;
    if (cordoned && this.drainState === undefined && this.running) this.beginDrain('hold', 'node cordoned');
    else if (!cordoned && this.drainState?.kind === 'hold' && this.drainState.reason === 'node cordoned') this.cancelDrain('node uncordoned');
  }

  /** The API server went away or came back: nothing is withdrawn meanwhile, and the log says so. */
  private readonly onConnectionChange = (connected: boolean, st: SourceStatus): void => {
    this.opts.metrics?.refresh();
    if (!connected && st.synced && !this.disconnectedAt) {
      this.disconnectedAt = st.since;
      this.log.warn('Kubernetes API unreachable: keeping the last known configuration and its routes', { server: st.server, lastError: st.lastError });
    } else if (connected && this.disconnectedAt) {
      this.log.info('Kubernetes API reachable again: relisted, only real changes apply', {
        server: st.server,
        disconnectedSeconds: Math.round((st.since.getTime() - this.disconnectedAt.getTime()) / 1000),
      });
      this.disconnectedAt = undefined;
    }
  };

  /** A reconcile reads the planner's plan when it runs: one queued is enough for any number of changes before it starts. */
  private requestReconcile(): void {
    if (this.reconcileQueued) return;
    this.reconcileQueued = true;
    void this.enqueue(async () => {
      this.reconcileQueued = false;
      await this.reconcile();
      // Not awaited: a slow API server must not hold back the next reconcile.
      if (this.running) void this.planEvents?.update(this.planner.state, this.planner.plan, this.refusals);
    });
  }

  // ---- the speaker's side ----

  private async reconcile(): Promise<void> {
    if (!this.running) return;
    const plan = this.planner.plan;
    // BGPConfiguration logSeverityScreen, unless --log-level was given; the change is logged where it shows.
    if (!this.opts.logLevel) changeLevel(this.log, parseLevel(plan.logSeverity), 'BGPConfiguration logSeverityScreen');
    const speaker = this.speaker ?? (await this.createSpeaker(plan));
    if (!speaker) return;
    this.checkRestart(plan);
    // Filter policies first: peers added or updated below name them.
    const filterFailures = [...this.defineFilters(speaker, plan), ...this.defineServicePolicy(speaker, plan)];
    const ops = reconcile(this.applied, plan, { maxPrefixes: this.opts.maxPrefixes === null ? undefined : (this.opts.maxPrefixes ?? defaultMaxPrefixes()) });
    // A prefix leaving the plan but still received from a local peer is handed over, not withdrawn.
    const keep =
      ops.withdraw.length > 0
        ? new Set(desiredRedistribution(plan, this.localReceived(speaker, plan), learnedRoutes(speaker)).map((r) => r.prefix.toString()))
        : new Set<string>();
    const withdraw = ops.withdraw.filter((p: Prefix) => !keep.has(p.toString()));
    for (const r of ops.originate) this.redistribution.forget(r.prefix);
    const awaitUpdate = this.opts.metrics !== undefined && ops.originate.length + withdraw.length > 0 && this.probe.arm();
    const ks = syncKernel(speaker, plan, this.kernelKey);
    this.kernelKey = ks.key;
    if (ks.error !== undefined) filterFailures.push({ op: 'setKernelRules', target: 'kernel', message: ks.error });
    // BFD runs before the first peer that uses it is added (a worker start takes ~0.5 s, by when a
    // BGP session may be Established): its BFD session starts with the BGP connection, as BIRD and
    // FRR request it from the neighbour's configuration. Resolves at once once BFD runs.
    if ([...ops.addPeers, ...ops.updatePeers].some((p) => p.options.bfd !== undefined && p.options.bfd !== false)) await speaker.startBfd();
    this.failures = [...filterFailures, ...(await applyOperations(speaker, { ...ops, withdraw }))];
    for (const f of this.failures) this.log.error(`speaker refused ${f.op} ${f.target}: ${f.message}`);
    for (const address of ops.removePeers) this.sessionLog.forget(address);
    if (this.memo.changed('refused peers', ops.refusedPeers)) for (const r of ops.refusedPeers) this.log.error(formatError(refusalJson(r)));
    this.refusals = ops.refusedPeers;
    const changes = ops.addPeers.length + ops.updatePeers.length + ops.removePeers.length + ops.originate.length + withdraw.length;
    if (changes > 0 && this.applied) {
      this.log.info('applied configuration to the speaker', {
        originated: capped(ops.originate, (r) => r.prefix.toString()),
        withdrawn: capped(withdraw, String),
        originatedCount: ops.originate.length,
        withdrawnCount: withdraw.length,
        peersAdded: ops.addPeers.map((p) => p.options.address),
        peersUpdated: ops.updatePeers.map((p) => ({ peer: p.options.address, changed: p.changed })),
        peersRemoved: ops.removePeers,
      });
    }
    if (changes > 0 || !this.applied) this.reconfiguredAt = this.now();
    const before = this.applied;
    this.applied = plan;
    // What to re-advertise depends on the received routes (their events ask
    // for a pass), and on the plan's peers, allow-list and withdrawals (a
    // hand-over). A Service change that only originates leaves all that as it
    // was: no pass over what the local peers sent.
    if (!before || before.peers !== plan.peers || before.exportAllowList !== plan.exportAllowList || before.kernel !== plan.kernel || ops.withdraw.length > 0)
      await this.redistribute();
    this.opts.metrics?.reconciled({ awaitUpdate });
  }

  /** Service prepends and peer choices as one speaker policy (src/kubernetes/service-policy.ts), defined when it changes: no session reset. */
  private defineServicePolicy(speaker: AgentSpeaker, plan: Plan): ApplyFailure[] {
    const sp = servicePolicy(plan);
    if (sp.key === this.servicePolicyKey) return [];
    try {
      speaker.definePolicies(sp.config);
      this.servicePolicyKey = sp.key;
      return [];
    } catch (e) {
      return [{ op: 'definePolicies', target: 'Service routing annotations', message: (e as Error).message }];
    }
  }

  /** BGPFilters as speaker policies, defined when they change; a redefinition re-evaluates the peers using them, without a session reset. */
  private defineFilters(speaker: AgentSpeaker, plan: Plan): ApplyFailure[] {
    const pf = planFilters(plan);
    const failures: ApplyFailure[] = [];
    if (pf.key !== this.filterKey) {
      try {
        speaker.definePolicies(pf.config);
        this.filterKey = pf.key;
        if (this.applied) this.log.info('BGPFilters applied to the speaker', { filters: plan.filters.map((f) => f.name) });
      } catch (e) {
        failures.push({ op: 'definePolicies', target: 'BGPFilters', message: (e as Error).message });
      }
    }
    if (this.memo.changed('filter errors', [...pf.errors])) for (const [name, message] of pf.errors) this.log.error(`BGPFilter ${name}: ${message}`);
    // A missing filter (the peer runs without it, as Calico's), an interface rule BGP routes cannot match: once, when it appears.
    const warnings = filterWarnings(plan);
    if (this.memo.changed('filter warnings', warnings)) for (const w of warnings) this.log.warn(`${w.kind} ${w.name} ${w.field}: ${w.message}`);
    return failures;
  }

  private async createSpeaker(plan: Plan): Promise<AgentSpeaker | undefined> {
    const opts = this.opts;
    const routerId = plan.node.routerId;
    if (!routerId) {
      if (plan.peers.length > 0 || plan.routes.length > 0)
        this.log.warn(
          `no router ID for this node yet: the speaker takes the node's IPv4 address, or ${ROUTER_ID_ENV} ` +
            '(an IPv4 address, or "hash" to derive one from the node name)',
          { node: opts.node },
        );
      return undefined;
    }
    const speakerOpts: SpeakerOptions = {
      asn: plan.node.asn,
      routerId: routerId.toString(),
      listen: {
        port: opts.listenPort ?? plan.listen.port,
        ...(plan.listen.address ? { addresses: [plan.listen.address, plan.listen.addressV6].filter((a) => a !== undefined).map(String) } : {}),
      },
      ...(plan.node.routeReflectorClusterId ? { clusterId: plan.node.routeReflectorClusterId } : {}),
      // As calico-node runs BIRD (-R): every start may be a restart (a crash, an
      // upgrade), so peers holding our routes as stale keep them until our
      // End-of-RIB. Safe on a first start too: the first reconcile originates
      // every route before it adds the peers, so the initial dump is complete.
      restarting: true,
      // RFC 4724 §4.1 holds our advertisements until every graceful-restart
      // peer has sent End-of-RIB. The agent's own routes are complete from the
      // first reconcile, so waiting only serves routes learned from peers; a
      // router that is down must not keep the node silent toward the others
      // for long (the speaker's default is 120 s).
      selectionDeferralTime: opts.selectionDeferralTime ?? AGENT_SELECTION_DEFERRAL_S,
      // The reconciler hands the speaker each change as one synchronous batch,
      // so a long coalescing window only delays it: 1 ms instead of 5 (the
      // 50 ms bound still packs a stream of changes).
      coalesceMs: 1,
      log: (level, msg, fields) => this.log.log(level, msg, { component: 'speaker', ...fields }),
      ...(opts.metrics ? { scheduler: observedScheduler(realScheduler, () => this.afterSpeakerTimer()) } : {}),
      ...(opts.kernel
        ? { kernel: kernelSpeakerOptions(opts.kernel, plan, opts.selectionDeferralTime ?? AGENT_SELECTION_DEFERRAL_S, () => this.redistribution.request()) }
        : {}),
    };
    const s = opts.speakerFactory(speakerOpts);
    // A drain that began before the speaker existed (no IPv4 address yet) applies from its first session.
    if (this.drainState !== undefined) s.drain();
    try {
      await s.start();
    } catch (e) {
      // At start-up this ends runAgent; later (the node appeared afterwards) the next change retries.
      this.startError = new Error(`cannot start the BGP speaker: ${(e as Error).message}${listenHint(e as Error)}`);
      this.log.error(this.startError.message);
      return undefined;
    }
    this.speaker = s;
    this.speakerOpts = speakerOpts;
    this.log.info('BGP speaker started', { asn: speakerOpts.asn, routerId: speakerOpts.routerId, listenPort: opts.listenPort ?? plan.listen.port });
    s.on('stateChange', (st: PeerStatus, from: PeerState) => this.sessionChanged(st, from));
    // Established → Idle comes as peerDown (the speaker's state is Idle before the FSM's stateChange).
    s.on('peerDown', (st: PeerStatus) => this.sessionLog.observe(st, 'Established', this.now().getTime()));
    // One event per UPDATE, not per prefix (routeReceived builds a route for each of a router's
    // million): only a local peer's routes ask for a redistribution pass, and one pass serves all
    // that arrived meanwhile.
    s.on('updateReceived', (peer: string) => this.redistribution.request(this.applied, peer));
    return s;
  }

  private afterSpeakerTimer(): void {
    if (!this.probe.armed) return;
    const r = this.probe.check();
    if (r === 'sent') this.opts.metrics?.updateSent();
    else if (r === 'abandoned') this.opts.metrics?.updateAbandoned();
  }

  private sessionChanged(st: PeerStatus, from: PeerState): void {
    if (from === st.state) return;
    this.opts.metrics?.refresh();
    this.sessionLog.observe(st, from, this.now().getTime());
  }

  /** Settings that need a new speaker: reported, never applied half-way. (The route-reflector cluster ID is applied live.) */
  private checkRestart(plan: Plan): void {
    let so = this.speakerOpts;
    if (!so) return;
    // Becoming, or ceasing to be, a route reflector: applied in place; the peers whose client role changes reset in the reconcile that follows.
    const clusterId = plan.node.routeReflectorClusterId;
    if (clusterId !== so.clusterId && this.speaker) {
      this.speaker.setClusterId(clusterId);
      this.log.info(clusterId ? 'route reflector cluster ID set' : 'no longer a route reflector', { from: so.clusterId ?? null, to: clusterId ?? null });
      so = this.speakerOpts = { ...so, clusterId };
    }
    const node = this.opts.node;
    const out: ErrorJson[] = [];
    const port = this.opts.listenPort ?? plan.listen.port;
    const was = so.listen === false ? undefined : so.listen?.port;
    if (plan.node.asn !== so.asn)
      out.push({
        file: null,
        kind: 'Node',
        namespace: null,
        name: node,
        field: 'asNumber',
        message: `AS number changed from ${so.asn} to ${plan.node.asn}: restart the agent to apply (peers already use the new local AS)`,
      });
    if (plan.node.routerId && plan.node.routerId.toString() !== so.routerId)
      out.push({
        file: null,
        kind: 'Node',
        namespace: null,
        name: node,
        field: this.planner.state.routerIdSetting === undefined ? 'addresses' : ROUTER_ID_ENV,
        message: `router ID would change from ${so.routerId} to ${plan.node.routerId}: restart the agent to apply`,
      });
    if (port !== was)
      out.push({
        file: null,
        kind: 'BGPConfiguration',
        namespace: null,
        name: 'default',
        field: 'spec.listenPort',
        message: `listen port changed from ${was} to ${port}: restart the agent to apply`,
      });
    if (this.memo.changed('restart needed', out)) for (const e of out) this.log.error(formatError(e));
    this.restartNeeded = out;
  }

  /** Routes received from the plan's local peers only (what the upstream router sends is not looked at). */
  private localReceived(speaker: AgentSpeaker, plan: Plan): ReceivedRoute[] {
    const out: ReceivedRoute[] = [];
    for (const a of localPeers(plan)) {
      try {
        out.push(...speaker.received(a));
      } catch {
        // Not added to the speaker yet (this reconcile adds it): nothing received from it.
      }
    }
    return out;
  }

  /** One redistribution pass, carried out on the speaker. */
  private async redistribute(): Promise<void> {
    const { speaker, applied } = this;
    if (!speaker || !applied || !this.running) return;
    const ops = this.redistribution.next(applied, this.localReceived(speaker, applied), learnedRoutes(speaker));
    for (const r of ops.originate) {
      speaker.originate(r.prefix, redistributedAttributes(r), redistributedOptions(r));
      if (r.kernel !== undefined)
        this.log.info('advertising a route learned from the kernel', {
          prefix: r.prefix.toString(),
          dev: r.kernel.dev,
          protocol: r.kernel.protocol,
          metric: r.kernel.metric,
          why: r.kernel.why,
        });
      else this.log.info('re-advertising a route from a local peer', { prefix: r.prefix.toString(), peer: r.from });
    }
    for (const p of ops.withdraw) {
      speaker.withdraw(p);
      this.log.info('withdrawing a re-advertised route', { prefix: p.toString() });
    }
  }

  // ---- views, control socket ----

  private snapshot(): AgentSnapshot {
    const { speaker, redistribution, applied } = this;
    const planned = this.planner.plan;
    return {
      node: this.opts.node,
      running: this.running,
      startedAt: this.startedAt,
      planned: this.planner.plan,
      applied: this.applied,
      issues: this.issues,
      failures: this.failures,
      restartNeeded: this.restartNeeded,
      get redistributed() {
        return redistribution.list();
      },
      listenPort: this.opts.listenPort,
      maxPrefixes: this.opts.maxPrefixes,
      speakerOptions: this.speakerOpts,
      source: this.source.status(),
      sessions: speaker?.status() ?? [],
      advertised: (peer) => speaker?.advertised(peer) ?? [],
      kernel: kernelStatusJson(speaker, this.applied ?? this.planner.plan),
      get kernelLive() {
        const plan = applied ?? planned;
        if (kernelStatusJson(speaker, plan) === null) return undefined;
        return { learned: learnedRoutes(speaker), routes: kernelRoutesJson(speaker, plan).routes };
      },
      ...(this.drainState !== undefined ? { draining: drainStatusJson(this.drainState, this.now().getTime()) } : {}),
    };
  }

  /** The agent's state for a CalicoNodeStatus (src/agent/node-status.ts). */
  private nodeStatusInput(): NodeStatusInput {
    const plan = this.applied ?? this.planner.plan;
    const speaker = this.speaker;
    return {
      running: this.running && speaker !== undefined,
      version: `tsbgp ${this.opts.version ?? 'unknown'}`,
      routerId: this.speakerOpts?.routerId,
      startedAt: this.startedAt,
      reconfiguredAt: this.reconfiguredAt,
      sessions: speaker?.status() ?? [],
      peerTypes: new Map(plan.peers.map((p) => [p.address.toString(), p.type])),
      received: speaker?.received() ?? [],
      originated: plan.routes.map((r) => r.prefix),
    };
  }

  private explain(query: string): ReturnType<typeof explain> {
    const x = explain(this.applied ?? this.planner.plan, query, this.redistribution.list(), (ns, name) => this.planner.state.services.get(`${ns}/${name}`));
    return withSessions(x, this.speaker?.status() ?? []);
  }

  private readonly handle = (method: Method, params: Record<string, unknown>): unknown => {
    switch (method) {
      case 'status':
        return statusJson(this.snapshot());
      case 'routes': {
        if (params.peer !== undefined && typeof params.peer !== 'string') throw new ControlError('bad-params', '"peer" must be a string');
        try {
          return routesJson(this.snapshot(), params.peer as string | undefined);
        } catch (e) {
          throw e instanceof NoSuchPeer ? new ControlError('bad-params', e.message) : e;
        }
      }
      case 'explain': {
        if (typeof params.query !== 'string') throw new ControlError('bad-params', '"query" must be a prefix or NAMESPACE/SERVICE');
        try {
          return this.explain(params.query);
        } catch (e) {
          throw new ControlError('bad-params', (e as Error).message);
        }
      }
      case 'plan':
        return agentPlanJson(this.snapshot());
      case 'received':
        return receivedFor(this.speaker, params.peer);
      case 'kernel':
        return kernelRoutesJson(this.speaker, this.applied ?? this.planner.plan);
      case 'drain': {
        if (params.cancel !== undefined && typeof params.cancel !== 'boolean') throw new ControlError('bad-params', '"cancel" must be a boolean');
        if (params.cancel === true) {
          const d = this.drainState;
          if (d?.kind === 'stop') throw new ControlError('bad-params', `the agent is shutting down (${d.reason}): its drain cannot be cancelled`);
          this.cancelDrain('tsbgp drain --cancel');
        } else if (this.running) this.beginDrain('hold', 'tsbgp drain');
        const d = this.drainState;
        return { draining: d !== undefined ? drainStatusJson(d, this.now().getTime()) : null };
      }
    }
  };

  // ---- start and stop ----

  private readonly onSignal = (sig: NodeJS.Signals): void => {
    this.log.info(`received ${sig}`);
    const action = onSignalAction(sig === 'SIGINT' ? 'SIGINT' : 'SIGTERM', this.drainState, this.drainSeconds);
    // No speaker yet (the first sync still waits, or no IPv4 address): nothing to drain.
    if (action === 'stop-now' || !this.running || this.speaker === undefined) void this.stop();
    else this.beginDrain('stop', sig);
  };

  readonly stop = async (): Promise<void> => {
    if (!this.running) return this.done;
    this.running = false;
    this.log.info(SHUTDOWN_MESSAGE);
    process.off('SIGTERM', this.onSignal);
    process.off('SIGINT', this.onSignal);
    await this.source.close();
    this.opts.nodeStatus?.close();
    this.planEvents?.close();
    await this.work;
    await this.control?.close();
    if (this.drainTimer !== undefined) clearTimeout(this.drainTimer);
    const d = this.drainState;
    // After a drain: a Cease with why (RFC 9003); traffic has moved away. By default Administrative
    // Shutdown, a Hard Reset (the routes go); with --drain-close keep-stale, kept as stale (still marked).
    // Without a drain (--drain-time 0): graceful, peers keep our routes as stale while we are away (RFC 4724).
    if (this.speaker)
      await this.speaker.stop(
        d !== undefined
          ? { message: drainedMessage(d, this.now().getTime()), ...((this.opts.drainClose ?? DEFAULT_DRAIN_CLOSE) === 'keep-stale' ? { graceful: true } : {}) }
          : { message: SHUTDOWN_MESSAGE, graceful: true },
      );
    this.resolveDone();
    return this.done;
  };

  async start(): Promise<Agent> {
    const { opts, log, source } = this;
    opts.metrics?.attach(() => ({
      running: this.running,
      speaker: this.speaker,
      plan: this.applied,
      configErrors: currentErrors(this.snapshot()).length,
      source: source.status(),
      ...(this.drainState !== undefined ? { draining: { remainingSeconds: remainingSeconds(this.drainState, this.now().getTime()) } } : {}),
    }));
    const origin = source.status();
    log.info('tsbgp agent starting', {
      node: opts.node,
      source: origin.kind,
      ...(origin.kind === 'manifests' ? { manifests: origin.paths } : { server: origin.server }),
    });
    try {
      // The control socket and signals come first, so `tsbgp status` and SIGTERM work while the first sync waits on the API server.
      if (opts.control !== false && opts.control !== undefined) {
        this.control = await startControlServer(opts.control, this.handle, (e) => log.error(`control socket: ${e.message}`));
        log.info('control socket listening', { path: opts.control });
      }
      if (opts.signals !== false) {
        // `on`, not `once`: a second SIGTERM (during the drain) stops at once.
        process.on('SIGTERM', this.onSignal);
        process.on('SIGINT', this.onSignal);
      }
      if (origin.kind === 'kubernetes') log.info('waiting for the first sync of the Kubernetes API', { server: origin.server });
      const started = source.start({
        onChange: this.onChange,
        onConnectionChange: this.onConnectionChange,
        onWatchRestart: (resource) => opts.metrics?.watchRestarted(resource),
        // API errors come with the retries (once per resource and text); the outage itself is the warning above.
        onError: (e) => (origin.kind === 'manifests' ? log.error(`manifest watch: ${e.message}`) : log.warn(`Kubernetes API: ${e.message}`)),
      });
      // A signal during a long first sync ends the wait; the agent then simply stops.
      started.catch(() => undefined);
      await Promise.race([started, this.done]);
      await this.work;
      if (this.running && this.startError) throw this.startError;
      // CalicoNodeStatus answers start once the configuration is in; they never hold up the start.
      if (this.running && opts.nodeStatus)
        void Promise.resolve(opts.nodeStatus.start(() => this.nodeStatusInput())).catch((e: Error) => log.warn(`CalicoNodeStatus: ${e.message}`));
    } catch (e) {
      await this.stop();
      throw e;
    }
    return {
      done: this.done,
      controlPath: this.control?.path,
      plan: () => this.planner.plan,
      status: () => statusJson(this.snapshot()),
      routes: (peer) => routesJson(this.snapshot(), peer),
      explain: (query) => this.explain(query),
      settled: async () => {
        await source.settle();
        await this.work;
        await this.redistribution.settled();
        await this.work;
      },
      stop: this.stop,
    };
  }
}
