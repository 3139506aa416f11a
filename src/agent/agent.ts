/**
 * The node agent shell: manifests → ClusterState/Planner → reconcile →
 * speaker, plus the control socket, logs and signals. Every decision lives
 * in the pure modules (planner, reconcile, redistribute, views); this file
 * only moves events in and operations out.
 */
import { formatIssue, newlyRefused, Planner, type ClusterEvent, type ManifestIssue, type Plan } from '../kubernetes/index.js';
import type { Prefix } from '../net/index.js';
import type { PeerState, PeerStatus, ReceivedRoute, SpeakerApi, SpeakerEvents, SpeakerOptions, SpeakerPolicyApi } from '../speaker/types.js';
import { applyOperations, type ApplyFailure } from './apply.js';
import { planFilters } from './filters.js';
import { ControlError, startControlServer, type ControlServer, type Method } from './control.js';
import { createLogger, parseLevel, type Level, type Logger } from './log.js';
import type { AgentMetrics } from './metrics.js';
import { reconcile, runnablePeers, type PeerRefusal } from './reconcile.js';
import { desiredRedistribution, localPeers, redistributedAttributes, redistributionOps } from './redistribute.js';
import { watchLayers, type LayerWatcher } from './sources.js';
import { explain, formatError, issueJson, planJson, refusalJson, refusedJson, routeJson, type ErrorJson, type PlanJson, type Redistributed, type RefusedJson } from './views.js';

export const SHUTDOWN_MESSAGE = 'tsbgp agent shutting down';

/** A plan's local peers (src/agent/redistribute.ts), once per plan: asked for every received route. */
const localPeerSets = new WeakMap<Plan, Set<string>>();
function localPeersOf(plan: Plan): Set<string> {
  let s = localPeerSets.get(plan);
  if (!s) localPeerSets.set(plan, (s = localPeers(plan)));
  return s;
}

/** The "configuration changed" log line names at most this many changes. */
const MAX_LOGGED_CHANGES = 100;

export interface AgentOptions {
  readonly node: string;
  readonly manifests: readonly string[];
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
  readonly refused: readonly RefusedJson[];
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
  const planner = new Planner(opts.node);
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

  const followLevel = (plan: Plan) => {
    if (!opts.logLevel && !opts.logger) log.level = parseLevel(plan.logSeverity);
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
      // The reconciler hands the speaker each change as one synchronous batch,
      // so a long coalescing window only delays it: 1 ms instead of 5 (the
      // 50 ms bound still packs a stream of changes).
      coalesceMs: 1,
      log: (level, msg, fields) => log.log(level, msg, { component: 'speaker', ...fields }),
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
    let filterDefined = false;
    if (canFilter) {
      const pf = planFilters(plan);
      if (pf.key !== filterKey) {
        try {
          (sp as SpeakerApi & Pick<SpeakerPolicyApi, 'definePolicies'>).definePolicies(pf.config);
          filterKey = pf.key;
          filterDefined = true;
          if (applied) log.info('BGPFilters applied to the speaker', { filters: plan.filters.map((f) => f.name) });
          for (const w of pf.warnings) log.warn(`BGPFilter: ${w}`);
        } catch (e) {
          filterFailures.push({ op: 'definePolicies', target: 'BGPFilters', message: (e as Error).message });
        }
      }
      for (const [name, message] of pf.errors) if (!applied || JSON.stringify([...pf.errors]) !== JSON.stringify([...planFilters(applied).errors])) log.error(`BGPFilter ${name}: ${message}`);
    }
    const ops = reconcile(applied, plan, { filters: canFilter });
    // Workaround (RIB bug, reported): a peer that changes update group twice
    // before a flush (definePolicies above, then its own new policy list)
    // loses the pending difference, so withdrawals are not sent. Let the
    // speaker flush the first change (its hard latency bound is 50 ms).
    if (filterDefined && ops.updatePeers.some((u) => u.changed.includes('exportPolicies') || u.changed.includes('importPolicies'))) await new Promise((r) => setTimeout(r, 120));
    // A prefix leaving the plan but still received from a local peer is handed over, not withdrawn.
    const keep = ops.withdraw.length > 0 ? new Set(desiredRedistribution(plan, localReceived(speaker, plan)).map((r) => r.prefix.toString())) : new Set<string>();
    const withdraw = ops.withdraw.filter((p: Prefix) => !keep.has(p.toString()));
    for (const r of ops.originate) redistributed.delete(r.prefix.toString());
    failures = [...filterFailures, ...(await applyOperations(speaker, { ...ops, withdraw }))];
    for (const f of failures) log.error(`speaker refused ${f.op} ${f.target}: ${f.message}`);
    const refusedNow = JSON.stringify(ops.refusedPeers);
    if (refusedNow !== JSON.stringify(refusals)) for (const r of ops.refusedPeers) log.error(formatError(refusalJson(r)));
    refusals = [...ops.refusedPeers];
    const changes = ops.addPeers.length + ops.updatePeers.length + ops.removePeers.length + ops.originate.length + withdraw.length;
    if (changes > 0 && applied) {
      log.info('applied configuration to the speaker', {
        originated: ops.originate.map((r) => r.prefix.toString()),
        withdrawn: withdraw.map(String),
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
    opts.metrics?.reconciled();
  };

  const onChange = (events: ClusterEvent[], newIssues: ManifestIssue[]) => {
    const text = JSON.stringify(newIssues);
    const issuesChanged = text !== issueText;
    issues = newIssues;
    issueText = text;
    if (events.length === 0 && !issuesChanged) return;
    const before = planner.plan;
    // One plan for the whole batch (a reload, a burst of watch events).
    const plan = events.length > 0 ? planner.applyAll(events).plan : before;
    if (events.length > 0) {
      // A first load of a large cluster is 100,000s of events: name the first ones and count the rest.
      const changes = events.length <= MAX_LOGGED_CHANGES ? events.map(describeEvent) : [...events.slice(0, MAX_LOGGED_CHANGES).map(describeEvent), `… and ${events.length - MAX_LOGGED_CHANGES} more`];
      log.info('configuration changed', { changes, changeCount: events.length, routes: plan.routes.length, peers: plan.peers.length });
      // Refused IPs and plan errors, once per change: only the IPs this change refused (or refused for another reason).
      for (const r of newlyRefused(before.refused, plan.refused)) log.warn(`not advertising ${r.source} ${r.ip} of Service ${r.namespace}/${r.name}: ${r.reason}`, { service: `${r.namespace}/${r.name}`, ip: r.ip, reason: r.reason, detail: r.message });
      for (const e of plan.errors) log.error(formatError(planJsonError(e)));
    }
    for (const i of newIssues) {
      if (i.severity === 'error') log.error(`invalid manifest: ${formatIssue(i)}`, { file: i.file, kind: i.kind, name: i.name, field: i.path });
      else if (issuesChanged) log.debug(`ignored: ${formatIssue(i)}`);
    }
    if (events.length > 0) opts.metrics?.eventReceived();
    if (events.length > 0 || !applied) void enqueue(reconcileNow);
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
        info: s.lastError?.text ?? null,
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
      refused: planner.plan.refused.map(refusedJson),
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
  opts.metrics?.attach(() => ({ running, speaker, plan: applied, configErrors: currentErrors().length }));
  log.info('tsbgp agent starting', { node: opts.node, manifests: opts.manifests });
  let watcher: LayerWatcher | undefined;
  let control: ControlServer | undefined;
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
    watcher?.close();
    if (poll) clearInterval(poll);
    await work;
    await control?.close();
    // Graceful: peers keep our routes as stale while we are away (RFC 4724).
    if (speaker) await speaker.stop({ message: SHUTDOWN_MESSAGE, graceful: true });
    resolveDone();
    return done;
  };
  try {
    watcher = await watchLayers(opts.manifests, { debounceMs: opts.debounceMs ?? 100, onChange, onError: (e) => log.error(`manifest watch: ${e.message}`) });
    await work;
    if (startError) throw startError;
    if (opts.control !== false && opts.control !== undefined) {
      control = await startControlServer(opts.control, handle, (e) => log.error(`control socket: ${e.message}`));
      log.info('control socket listening', { path: opts.control });
    }
  } catch (e) {
    await stop();
    throw e;
  }
  if (opts.signals !== false) {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  return {
    done,
    controlPath: control?.path,
    plan: () => planner.plan,
    status,
    routes,
    explain: explainNow,
    settled: async () => {
      await watcher?.reload();
      await work;
    },
    stop,
  };
}
