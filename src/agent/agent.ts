/**
 * The node agent shell: a ConfigSource (manifests or the Kubernetes API) →
 * ClusterState/Planner → reconcile → speaker, plus the control socket, logs,
 * Events and signals. Every decision lives in the pure modules (planner,
 * reconcile, redistribute, views); this file only moves events in and
 * operations out.
 */
import { formatIssue, newlyRefused, Planner, type ClusterEvent, type ManifestIssue, type Plan } from '../kubernetes/index.js';
import type { Prefix } from '../net/index.js';
import type { PeerState, PeerStatus, ReceivedRoute, SpeakerApi, SpeakerEvents, SpeakerOptions, SpeakerPolicyApi } from '../speaker/types.js';
import { applyOperations, type ApplyFailure } from './apply.js';
import { planFilters } from './filters.js';
import { ControlError, startControlServer, type ControlServer, type Method } from './control.js';
import type { EventSink } from '../kubernetes/events.js';
import { secretNamespace } from '../kubernetes/secrets.js';
import { changeLevel, createLogger, parseLevel, type Level, type Logger } from './log.js';
import type { AgentMetrics } from './metrics.js';
import { PlanEvents } from './plan-events.js';
import { reconcile, runnablePeers, type PeerRefusal } from './reconcile.js';
import { desiredRedistribution, localPeers, redistributedAttributes, redistributionOps } from './redistribute.js';
import { manifestSource, type ConfigSource, type SourceStatus } from './sources.js';
import { observedScheduler, realScheduler, UpdateProbe } from './update-probe.js';
import { explain, formatError, issueJson, planJson, refusalJson, refusedJson, routeJson, sourceJson, type ErrorJson, type PlanJson, type Redistributed, type RefusedJson, type SourceJson } from './views.js';

export const SHUTDOWN_MESSAGE = 'tsbgp agent shutting down';
/** How long a (re)starting agent waits for peers' End-of-RIB before advertising anyway. */
export const AGENT_SELECTION_DEFERRAL_S = 15;

/** A plan's local peers (src/agent/redistribute.ts), once per plan: asked for every received route. */
const localPeerSets = new WeakMap<Plan, Set<string>>();
function localPeersOf(plan: Plan): Set<string> {
  let s = localPeerSets.get(plan);
  if (!s) localPeerSets.set(plan, (s = localPeers(plan)));
  return s;
}

/** A log line names at most this many changes (a first load is 100,000s): the first ones, then a count. */
const MAX_LOGGED_CHANGES = 100;
function capped<T>(items: readonly T[], text: (t: T) => string): string[] {
  if (items.length <= MAX_LOGGED_CHANGES) return items.map(text);
  return [...items.slice(0, MAX_LOGGED_CHANGES).map(text), `… and ${items.length - MAX_LOGGED_CHANGES} more`];
}

export interface AgentOptions {
  readonly node: string;
  /** Manifest layers (`--manifests`); or give `source`. */
  readonly manifests?: readonly string[];
  /** Where the configuration comes from (src/agent/sources.ts); default the `manifests` layers. */
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
  readonly speakerFactory: (opts: SpeakerOptions) => SpeakerApi;
  readonly debounceMs?: number;
  /** Install SIGTERM/SIGINT handlers (default true). */
  readonly signals?: boolean;
  readonly now?: () => Date;
  /** Seconds a (re)starting agent waits for peers' End-of-RIB (default AGENT_SELECTION_DEFERRAL_S). */
  readonly selectionDeferralTime?: number;
  /** Prometheus metrics to keep up to date (src/agent/metrics.ts). */
  readonly metrics?: AgentMetrics;
}

export interface StatusPeerJson {
  readonly id: string | null;
  readonly address: string;
  readonly port: number;
  readonly asn: number | 'any';
  readonly family: 4 | 6;
  readonly type: string;
  readonly state: PeerState;
  readonly since: string;
  readonly info: string | null;
  readonly refused: boolean;
}

export interface StatusJson {
  readonly version: 1;
  readonly node: string;
  readonly running: boolean;
  readonly startedAt: string;
  readonly speaker: { readonly asn: number; readonly routerId: string; readonly listenPort: number } | null;
  readonly peers: readonly StatusPeerJson[];
  readonly errors: readonly ErrorJson[];
  /** Fields of valid resources that tsbgp ignored (unknown, or a Calico feature it lacks). */
  readonly warnings?: readonly ErrorJson[];
  readonly refused: readonly RefusedJson[];
  /** Where the configuration comes from and whether it is reachable (added compatibly to version 1). */
  readonly source: SourceJson;
}

export interface AdvertisedJson {
  readonly prefix: string;
  readonly nextHop: string | null;
  readonly asPath: readonly number[];
  readonly med: number | null;
  readonly localPref: number | null;
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
  /** What caused the route: the plan's reasons, or the local peer it was re-advertised from. */
  readonly reasons: readonly unknown[];
}

export type RoutesJson = PlanJson & { readonly peers: readonly (PlanJson['peers'][number] & { readonly state: PeerState | null; readonly advertised: readonly AdvertisedJson[] })[] };

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

type EventSource = { on<E extends keyof SpeakerEvents>(event: E, fn: SpeakerEvents[E]): unknown; off?<E extends keyof SpeakerEvents>(event: E, fn: SpeakerEvents[E]): unknown };
const hasEvents = (s: SpeakerApi): s is SpeakerApi & EventSource => typeof (s as Partial<EventSource>).on === 'function';
const hasPolicies = (s: SpeakerApi): s is SpeakerApi & Pick<SpeakerPolicyApi, 'definePolicies'> => typeof (s as Partial<SpeakerPolicyApi>).definePolicies === 'function';

function describeEvent(ev: ClusterEvent): string {
  if (ev.type === 'delete') return `delete ${ev.kind} ${ev.namespace ? `${ev.namespace}/` : ''}${ev.name}`;
  const r = ev.resource;
  return `${ev.type} ${r.kind} ${'namespace' in r ? `${r.namespace}/` : ''}${r.name}`;
}

export async function runAgent(opts: AgentOptions): Promise<Agent> {
  const now = opts.now ?? (() => new Date());
  const log = opts.logger ?? createLogger({ level: opts.logLevel ?? 'info', now });
  const startedAt = now();
  if ((opts.source === undefined) === (opts.manifests === undefined)) throw new Error('runAgent: give exactly one of `manifests` and `source`');
  const source = opts.source ?? manifestSource(opts.manifests ?? [], { debounceMs: opts.debounceMs ?? 100, now });
  const planEvents = opts.events ? new PlanEvents(opts.events, opts.node, opts.eventsFlushMs) : undefined;
  const planner = new Planner(opts.node);
  planner.state.secretNamespace = secretNamespace(); // where password secretKeyRefs point (env NAMESPACE)
  let issues: ManifestIssue[] = [];
  let issueText = '';
  let applied: Plan | undefined;
  let refusals: PeerRefusal[] = [];
  let failures: ApplyFailure[] = [];
  let restartNeeded: ErrorJson[] = [];
  let speaker: SpeakerApi | undefined;
  let speakerOpts: SpeakerOptions | undefined;
  /** The BGPFilter policies the speaker holds (their key), so a change is defined once. */
  let filterKey: string | undefined;
  const redistributed = new Map<string, Redistributed>();
  const lastStates = new Map<string, PeerState>();
  let running = true;
  let work: Promise<void> = Promise.resolve();
  let poll: NodeJS.Timeout | undefined;
  let startError: Error | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));

  const enqueue = (step: () => Promise<void>) => {
    work = work.then(step).catch((e: Error) => log.error('internal error', { error: e.message, stack: e.stack }));
    return work;
  };

  /** BGPConfiguration logSeverityScreen, unless --log-level was given; the change is logged where it shows. */
  const followLevel = (plan: Plan) => {
    if (!opts.logLevel) changeLevel(log, parseLevel(plan.logSeverity), 'BGPConfiguration logSeverityScreen');
  };

  // Event → UPDATE on the socket, for tsbgp_update_latency_seconds: the speaker's timers are watched.
  const probe = new UpdateProbe(() => speaker?.status() ?? [], () => now().getTime());
  const afterSpeakerTimer = () => {
    if (!probe.armed) return;
    const r = probe.check();
    if (r === 'sent') opts.metrics?.updateSent();
    else if (r === 'abandoned') opts.metrics?.updateAbandoned();
  };

  const createSpeaker = async (plan: Plan): Promise<void> => {
    if (!plan.node.ipv4) {
      if (plan.peers.length > 0 || plan.routes.length > 0) log.warn('no IPv4 address for this node yet: the speaker needs one as its router ID', { node: opts.node });
      return;
    }
    speakerOpts = {
      asn: plan.node.asn,
      routerId: plan.node.ipv4.toString(),
      listen: { port: opts.listenPort ?? plan.listen.port, ...(plan.listen.address ? { addresses: [plan.listen.address.toString()] } : {}) },
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
      log: (level, msg, fields) => log.log(level, msg, { component: 'speaker', ...fields }),
      ...(opts.metrics ? { scheduler: observedScheduler(realScheduler, afterSpeakerTimer) } : {}),
    };
    const s = opts.speakerFactory(speakerOpts);
    try {
      await s.start();
    } catch (e) {
      // At start-up this ends runAgent; later (the node appeared afterwards) the next change retries.
      startError = new Error(`cannot start the BGP speaker: ${(e as Error).message}`);
      log.error(startError.message);
      speakerOpts = undefined;
      return;
    }
    speaker = s;
    log.info('BGP speaker started', { asn: speakerOpts.asn, routerId: speakerOpts.routerId, listenPort: opts.listenPort ?? plan.listen.port });
    if (hasEvents(s)) {
      s.on('stateChange', (st: PeerStatus, from: PeerState) => sessionChanged(st, from));
      // One event per prefix (a router's full table is a million): only a local peer's
      // routes ask for a redistribution pass, and one pass serves all that arrived meanwhile.
      s.on('routeReceived', (r: ReceivedRoute) => requestRedistribute(r.peer));
      s.on('routeWithdrawn', (peer: string) => requestRedistribute(peer));
    } else {
      // A speaker without events: poll once a second for session changes and received routes.
      poll = setInterval(() => {
        for (const st of s.status()) if (lastStates.get(st.address) !== st.state) sessionChanged(st, lastStates.get(st.address) ?? 'Idle');
        requestRedistribute();
      }, 1000);
      poll.unref();
    }
  };

  const sessionChanged = (st: PeerStatus, from: PeerState) => {
    if (from === st.state) return;
    lastStates.set(st.address, st.state);
    opts.metrics?.refresh();
    const fields = { peer: st.address, from, to: st.state, ...(st.lastError ? { lastError: st.lastError.text } : {}) };
    if (st.state === 'Established') log.info('BGP session established', fields);
    else if (from === 'Established') log.warn('BGP session down', fields);
    else log.info('BGP session state changed', fields);
  };

  /** Settings that need a new speaker: reported, never applied half-way. */
  const checkRestart = (plan: Plan) => {
    if (!speakerOpts) return;
    const out: ErrorJson[] = [];
    const port = opts.listenPort ?? plan.listen.port;
    const was = speakerOpts.listen === false ? undefined : speakerOpts.listen?.port;
    if (plan.node.asn !== speakerOpts.asn) out.push({ file: null, kind: 'Node', namespace: null, name: opts.node, field: 'asNumber', message: `AS number changed from ${speakerOpts.asn} to ${plan.node.asn}: restart the agent to apply (peers already use the new local AS)` });
    if (plan.node.ipv4 && plan.node.ipv4.toString() !== speakerOpts.routerId) out.push({ file: null, kind: 'Node', namespace: null, name: opts.node, field: 'addresses', message: `router ID would change from ${speakerOpts.routerId} to ${plan.node.ipv4}: restart the agent to apply` });
    if (port !== was) out.push({ file: null, kind: 'BGPConfiguration', namespace: null, name: 'default', field: 'spec.listenPort', message: `listen port changed from ${was} to ${port}: restart the agent to apply` });
    if (JSON.stringify(out) !== JSON.stringify(restartNeeded)) for (const e of out) log.error(formatError(e));
    restartNeeded = out;
  };

  /** Routes received from the plan's local peers only (what the upstream router sends is not looked at). */
  const localReceived = (sp: SpeakerApi, plan: Plan): ReceivedRoute[] => {
    const out: ReceivedRoute[] = [];
    for (const a of localPeersOf(plan)) {
      try {
        out.push(...sp.received(a));
      } catch {
        // Not added to the speaker yet (this reconcile adds it): nothing received from it.
      }
    }
    return out;
  };

  let redistributeQueued = false;
  /** How long the last redistribution pass took: while local peers stream a large table, passes are spaced by a few of these. */
  let lastPassMs = 0;
  const requestRedistribute = (peer?: string) => {
    if (peer !== undefined && applied && !localPeersOf(applied).has(peer)) return;
    if (redistributeQueued) return;
    redistributeQueued = true;
    const pass = () =>
      void enqueue(async () => {
        redistributeQueued = false;
        const t0 = performance.now();
        await redistribute();
        lastPassMs = performance.now() - t0;
      });
    const delay = Math.min(1000, 4 * lastPassMs);
    if (delay < 1) pass();
    else setTimeout(pass, delay).unref();
  };

  const redistribute = async (): Promise<void> => {
    if (!speaker || !applied || !running) return;
    const desired = desiredRedistribution(applied, localReceived(speaker, applied));
    const ops = redistributionOps(redistributed, desired, applied);
    for (const k of ops.forget) redistributed.delete(k);
    for (const r of ops.originate) {
      speaker.originate(r.prefix, redistributedAttributes(r));
      redistributed.set(r.prefix.toString(), r);
      log.info('re-advertising a route from a local peer', { prefix: r.prefix.toString(), peer: r.from });
    }
    for (const p of ops.withdraw) {
      speaker.withdraw(p);
      redistributed.delete(p.toString());
      log.info('withdrawing a re-advertised route', { prefix: p.toString() });
    }
  };

  const reconcileNow = async (): Promise<void> => {
    if (!running) return;
    const plan = planner.plan;
    followLevel(plan);
    if (!speaker) await createSpeaker(plan);
    if (!speaker) return;
    checkRestart(plan);
    const sp = speaker;
    const canFilter = hasPolicies(sp);
    // Filter policies first: peers added or updated below name them. A
    // redefinition re-evaluates the peers using them, without a session reset.
    const filterFailures: ApplyFailure[] = [];
    if (canFilter) {
      const pf = planFilters(plan);
      if (pf.key !== filterKey) {
        try {
          (sp as SpeakerApi & Pick<SpeakerPolicyApi, 'definePolicies'>).definePolicies(pf.config);
          filterKey = pf.key;
          if (applied) log.info('BGPFilters applied to the speaker', { filters: plan.filters.map((f) => f.name) });
          for (const w of pf.warnings) log.warn(`BGPFilter: ${w}`);
        } catch (e) {
          filterFailures.push({ op: 'definePolicies', target: 'BGPFilters', message: (e as Error).message });
        }
      }
      for (const [name, message] of pf.errors) if (!applied || JSON.stringify([...pf.errors]) !== JSON.stringify([...planFilters(applied).errors])) log.error(`BGPFilter ${name}: ${message}`);
    }
    const ops = reconcile(applied, plan, { filters: canFilter });
    // A prefix leaving the plan but still received from a local peer is handed over, not withdrawn.
    const keep = ops.withdraw.length > 0 ? new Set(desiredRedistribution(plan, localReceived(speaker, plan)).map((r) => r.prefix.toString())) : new Set<string>();
    const withdraw = ops.withdraw.filter((p: Prefix) => !keep.has(p.toString()));
    for (const r of ops.originate) redistributed.delete(r.prefix.toString());
    const awaitUpdate = opts.metrics !== undefined && ops.originate.length + withdraw.length > 0 && probe.arm();
    failures = [...filterFailures, ...(await applyOperations(speaker, { ...ops, withdraw }))];
    for (const f of failures) log.error(`speaker refused ${f.op} ${f.target}: ${f.message}`);
    const refusedNow = JSON.stringify(ops.refusedPeers);
    if (refusedNow !== JSON.stringify(refusals)) for (const r of ops.refusedPeers) log.error(formatError(refusalJson(r)));
    refusals = [...ops.refusedPeers];
    const changes = ops.addPeers.length + ops.updatePeers.length + ops.removePeers.length + ops.originate.length + withdraw.length;
    if (changes > 0 && applied) {
      log.info('applied configuration to the speaker', {
        originated: capped(ops.originate, (r) => r.prefix.toString()),
        withdrawn: capped(withdraw, String),
        originatedCount: ops.originate.length,
        withdrawnCount: withdraw.length,
        peersAdded: ops.addPeers.map((p) => p.options.address),
        peersUpdated: ops.updatePeers.map((p) => ({ peer: p.options.address, changed: p.changed })),
        peersRemoved: ops.removePeers,
      });
    }
    const before = applied;
    applied = plan;
    // What to re-advertise depends on the received routes (their events ask
    // for a pass), and on the plan's peers, allow-list and withdrawals (a
    // hand-over). A Service change that only originates leaves all that as it
    // was: no pass over what the local peers sent.
    if (!before || before.peers !== plan.peers || before.exportAllowList !== plan.exportAllowList || ops.withdraw.length > 0) await redistribute();
    opts.metrics?.reconciled({ awaitUpdate });
  };

  /** A reconcile, then the Events the current plan calls for (also before the speaker exists). */
  const reconcileStep = async (): Promise<void> => {
    await reconcileNow();
    // Not awaited: a slow API server must not hold back the next reconcile.
    if (running) void planEvents?.update(planner.state, planner.plan, refusals);
  };

  const onChange = (events: ClusterEvent[], newIssues: ManifestIssue[]) => {
    const text = JSON.stringify(newIssues);
    const issuesChanged = text !== issueText;
    const known = new Set(issues.map((i) => JSON.stringify(i)));
    issues = newIssues;
    issueText = text;
    if (events.length === 0 && !issuesChanged) return;
    const before = planner.plan;
    // One plan for the whole batch (a reload, a burst of watch events).
    const plan = events.length > 0 ? planner.applyAll(events).plan : before;
    if (events.length > 0) {
      // A first load of a large cluster is 100,000s of events: name the first ones and count the rest.
      const changes = capped(events, describeEvent);
      log.info('configuration changed', { changes, changeCount: events.length, routes: plan.routes.length, peers: plan.peers.length });
      // Refused IPs and plan errors, once per change: only the IPs this change refused (or refused for another reason).
      for (const r of newlyRefused(before.refused, plan.refused)) log.warn(`not advertising ${r.source} ${r.ip} of Service ${r.namespace}/${r.name}: ${r.reason}`, { service: `${r.namespace}/${r.name}`, ip: r.ip, reason: r.reason, detail: r.message });
      if (!applied || JSON.stringify(before.errors) !== JSON.stringify(plan.errors)) for (const e of plan.errors) log.error(formatError(planJsonError(e)));
    }
    // Issues once each, when they appear.
    for (const i of newIssues) {
      if (known.has(JSON.stringify(i))) continue;
      if (i.severity === 'error') log.error(`invalid ${i.file ? 'manifest' : 'resource'}: ${formatIssue(i)}`, { file: i.file, kind: i.kind, name: i.name, field: i.path });
      else if (i.severity === 'warning') log.warn(`ignored in ${i.file ? 'manifest' : 'resource'}: ${formatIssue(i)}`, { file: i.file, kind: i.kind, name: i.name, field: i.path });
      else log.debug(`ignored: ${formatIssue(i)}`);
    }
    if (events.length > 0) opts.metrics?.eventReceived();
    if (events.length > 0 || !applied) requestReconcile();
  };

  // A reconcile reads the planner's plan when it runs: one queued is enough
  // for any number of changes that come before it starts.
  let reconcileQueued = false;
  const requestReconcile = () => {
    if (reconcileQueued) return;
    reconcileQueued = true;
    void enqueue(async () => {
      reconcileQueued = false;
      await reconcileStep();
    });
  };

  const planJsonError = (e: Plan['errors'][number]): ErrorJson => ({ file: null, kind: e.kind ?? null, namespace: e.namespace ?? null, name: e.name ?? null, field: e.field ?? null, message: e.message });

  const redistributedList = () => [...redistributed.values()].sort((a, b) => a.prefix.compare(b.prefix));

  const currentErrors = (): ErrorJson[] => {
    const plan = planner.plan;
    return [
      ...issues.filter((i) => i.severity === 'error').map(issueJson),
      ...plan.errors.map(planJsonError),
      ...runnablePeers(plan).refused.filter((r) => !r.byPlanner).map(refusalJson),
      ...failures.map((f) => ({ file: null, kind: null, namespace: null, name: null, field: null, message: `speaker refused ${f.op} ${f.target}: ${f.message}` })),
      ...restartNeeded,
    ];
  };

  const status = (): StatusJson => {
    const plan = applied ?? planner.plan;
    const byAddr = new Map(plan.peers.map((p) => [p.address.toString(), p]));
    const live = speaker?.status() ?? [];
    const seen = new Set(live.map((s) => s.address));
    const peers: StatusPeerJson[] = live.map((s) => {
      const p = byAddr.get(s.address);
      return {
        id: p?.id ?? null,
        address: s.address,
        port: s.port,
        asn: s.asn,
        family: s.address.includes(':') ? 6 : 4,
        type: p?.type ?? 'unknown',
        state: s.state,
        since: s.since.toISOString(),
        info: s.hint ?? s.lastError?.text ?? null,
        refused: false,
      };
    });
    const refused = runnablePeers(planner.plan).refused;
    for (const r of refused) {
      if (seen.has(r.address)) continue;
      seen.add(r.address);
      const p = planner.plan.peers.find((x) => x.id === r.id)!;
      peers.push({ id: r.id, address: r.address, port: p.port, asn: p.asn, family: p.address.family, type: p.type, state: 'Idle', since: startedAt.toISOString(), info: `Not started: ${r.message}`, refused: true });
    }
    return {
      version: 1,
      node: opts.node,
      running,
      startedAt: startedAt.toISOString(),
      speaker: speakerOpts ? { asn: speakerOpts.asn, routerId: speakerOpts.routerId, listenPort: speakerOpts.listen === false ? 0 : (speakerOpts.listen?.port ?? 179) } : null,
      peers,
      errors: currentErrors(),
      warnings: issues.filter((i) => i.severity === 'warning').map(issueJson),
      refused: planner.plan.refused.map(refusedJson),
      source: sourceJson(source.status()),
    };
  };

  const routes = (peer?: string): RoutesJson => {
    const plan = applied ?? planner.plan;
    const base = planJson(plan, { issues, redistributed: redistributedList(), listenPort: opts.listenPort });
    const live = new Map((speaker?.status() ?? []).map((s) => [s.address, s]));
    const reasonsFor = (prefix: Prefix): readonly unknown[] => {
      const r = plan.routes.find((x) => x.prefix.equals(prefix));
      if (r) return routeJson(r, plan).reasons;
      const d = redistributed.get(prefix.toString());
      return d ? [{ kind: 'Redistributed', peer: d.from, text: `re-advertised from local peer ${d.from}` }] : [];
    };
    const peers = base.peers
      .filter((p) => peer === undefined || p.address === peer)
      .map((p) => ({
        ...p,
        state: live.get(p.address)?.state ?? null,
        advertised: p.refused
          ? []
          : (speaker?.advertised(p.address) ?? []).map((a) => ({
              prefix: a.prefix.toString(),
              nextHop: a.nextHop ?? null,
              asPath: [...a.asPath],
              med: a.med ?? null,
              localPref: a.localPref ?? null,
              communities: [...a.communities],
              largeCommunities: [...a.largeCommunities],
              reasons: reasonsFor(a.prefix),
            })),
      }));
    if (peer !== undefined && peers.length === 0) throw new ControlError('bad-params', `no planned peer ${peer} (peers: ${base.peers.map((p) => p.address).join(', ') || 'none'})`);
    return { ...base, errors: currentErrors(), peers };
  };

  const handle = (method: Method, params: Record<string, unknown>): unknown => {
    switch (method) {
      case 'status':
        return status();
      case 'routes': {
        if (params.peer !== undefined && typeof params.peer !== 'string') throw new ControlError('bad-params', '"peer" must be a string');
        return routes(params.peer as string | undefined);
      }
      case 'explain': {
        if (typeof params.query !== 'string') throw new ControlError('bad-params', '"query" must be a prefix or NAMESPACE/SERVICE');
        try {
          return explainNow(params.query);
        } catch (e) {
          throw new ControlError('bad-params', (e as Error).message);
        }
      }
      case 'plan':
        return { ...planJson(planner.plan, { issues, redistributed: redistributedList(), listenPort: opts.listenPort }), errors: currentErrors() };
    }
  };

  const explainNow = (query: string) => explain(applied ?? planner.plan, query, redistributedList(), (ns, name) => planner.state.services.has(`${ns}/${name}`));

  // ---- start ----
  opts.metrics?.attach(() => ({ running, speaker, plan: applied, configErrors: currentErrors().length, source: source.status() }));
  const origin = source.status();
  log.info('tsbgp agent starting', { node: opts.node, source: origin.kind, ...(origin.kind === 'manifests' ? { manifests: origin.paths } : { server: origin.server }) });
  let control: ControlServer | undefined;
  let disconnectedAt: Date | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    log.info(`received ${sig}`);
    void stop();
  };
  const stop = async (): Promise<void> => {
    if (!running) return done;
    running = false;
    log.info(SHUTDOWN_MESSAGE);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await source.close();
    planEvents?.close();
    if (poll) clearInterval(poll);
    await work;
    await control?.close();
    // Graceful: peers keep our routes as stale while we are away (RFC 4724).
    if (speaker) await speaker.stop({ message: SHUTDOWN_MESSAGE, graceful: true });
    resolveDone();
    return done;
  };
  /** The API server went away or came back: nothing is withdrawn meanwhile, and the log says so. */
  const onConnectionChange = (connected: boolean, st: SourceStatus) => {
    opts.metrics?.refresh();
    if (!connected && st.synced && !disconnectedAt) {
      disconnectedAt = st.since;
      log.warn('Kubernetes API unreachable: keeping the last known configuration and its routes', { server: st.server, lastError: st.lastError });
    } else if (connected && disconnectedAt) {
      log.info('Kubernetes API reachable again: relisted, only real changes apply', { server: st.server, disconnectedSeconds: Math.round((st.since.getTime() - disconnectedAt.getTime()) / 1000) });
      disconnectedAt = undefined;
    }
  };
  try {
    // The control socket and signals come first, so `tsbgp status` and SIGTERM work while the first sync waits on the API server.
    if (opts.control !== false && opts.control !== undefined) {
      control = await startControlServer(opts.control, handle, (e) => log.error(`control socket: ${e.message}`));
      log.info('control socket listening', { path: opts.control });
    }
    if (opts.signals !== false) {
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    }
    if (origin.kind === 'kubernetes') log.info('waiting for the first sync of the Kubernetes API', { server: origin.server });
    const started = source.start({
      onChange,
      onConnectionChange,
      onWatchRestart: (resource) => opts.metrics?.watchRestarted(resource),
      // API errors come with the retries (once per resource and text); the outage itself is the warning above.
      onError: (e) => (origin.kind === 'manifests' ? log.error(`manifest watch: ${e.message}`) : log.warn(`Kubernetes API: ${e.message}`)),
    });
    // A signal during a long first sync ends the wait; the agent then simply stops.
    started.catch(() => undefined);
    await Promise.race([started, done]);
    await work;
    if (running && startError) throw startError;
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    done,
    controlPath: control?.path,
    plan: () => planner.plan,
    status,
    routes,
    explain: explainNow,
    settled: async () => {
      await source.settle();
      await work;
    },
    stop,
  };
}
