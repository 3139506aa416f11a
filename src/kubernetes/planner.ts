import { compareRefused, planFrom, planGlobal, planServiceByKey, RouteIndex, sortServiceErrors, type GlobalPart } from './plan.js';
import type { Plan, PlanDiff, PlanError, PlannedRoute, RefusedIP } from './plan-types.js';
import { SERVICE_ANNOTATIONS } from './service-routing.js';
import { EMPTY_CONTRIBUTION, type ServiceContribution } from './services.js';
import { ClusterState, serviceKey, type ClusterEvent } from './state.js';

/** Above this many touched prefixes (or refused IPs) a patch rebuilds the arrays in one pass instead of splicing. */
const SPLICE_LIMIT = 32;

/** Orders refused IPs by Service first, so one Service's entries are contiguous. */
const byService = (r: RefusedIP, namespace: string, name: string): number =>
  r.namespace < namespace ? -1 : r.namespace > namespace ? 1 : r.name < name ? -1 : r.name > name ? 1 : 0;

/**
 * The incremental planner. A Service or EndpointSlice event recomputes only
 * the Services it touches; any other event recomputes the node-wide part
 * (and, when it can change service decisions, every Service). A service
 * event patches only the prefixes and refused IPs it touched in the sorted
 * lists, so its cost does not grow with the cluster beyond a copy of them.
 * `applyAll` takes a batch (a reload, a burst of watch events) and plans
 * once. The result always equals `plan(state, nodeName)` from scratch.
 */
export class Planner {
  readonly state: ClusterState;
  private global: GlobalPart;
  private readonly contributions = new Map<string, ServiceContribution>();
  private index = new RouteIndex();
  /** The current routes in prefix order, patched in place on service events. */
  private sorted: PlannedRoute[] = [];
  /** Every contribution's refused IPs in `compareRefused` order, patched likewise. */
  private refused: RefusedIP[] = [];
  private current: Plan;
  /** Services with bad tsbgp.io annotations: their errors, by key. */
  private readonly serviceErrors = new Map<string, readonly PlanError[]>();
  /** Services that choose peers (tsbgp.io/peers, tsbgp.io/peer-selector): recomputed when the node-wide part (peers) is. */
  private readonly peerScoped = new Set<string>();
  /** How many Service contributions were recomputed by the last `apply` (for tests and metrics). */
  lastRecomputed = 0;

  constructor(
    readonly nodeName: string,
    state: ClusterState = new ClusterState(),
  ) {
    this.state = state;
    this.global = planGlobal(state, nodeName);
    this.recomputeAllServices();
    this.current = this.rebuild();
  }

  get plan(): Plan {
    return this.current;
  }

  apply(ev: ClusterEvent): { plan: Plan; diff: PlanDiff } {
    return this.applyAll([ev]);
  }

  /** Applies the events in order and plans once; the diff is from the plan before the first to the plan after the last. */
  applyAll(events: readonly ClusterEvent[]): { plan: Plan; diff: PlanDiff } {
    this.lastRecomputed = 0;
    const before = this.current;
    const touched = new Set<string>();
    /** 0: services only; 1: the node-wide part too; 2: every Service as well. */
    let scope = 0;
    for (const ev of events) {
      const prev = this.state.apply(ev);
      if (ev.type === 'workload') {
        // A workload's status: its peerings are node-wide.
        scope = Math.max(scope, 1);
        continue;
      }
      const kind = ev.type === 'delete' ? ev.kind : ev.resource.kind;
      if (kind === 'Service') {
        const ns = ev.type === 'delete' ? (ev.namespace ?? 'default') : (ev.resource as { namespace: string }).namespace;
        touched.add(serviceKey(ns, ev.type === 'delete' ? ev.name : ev.resource.name));
      } else if (kind === 'EndpointSlice') {
        if (prev?.kind === 'EndpointSlice' && prev.serviceName) touched.add(serviceKey(prev.namespace, prev.serviceName));
        if (ev.type !== 'delete' && ev.resource.kind === 'EndpointSlice' && ev.resource.serviceName)
          touched.add(serviceKey(ev.resource.namespace, ev.resource.serviceName));
      } else if (kind === 'BGPConfiguration' || (kind === 'Node' && (ev.type === 'delete' ? ev.name : ev.resource.name) === this.nodeName)) {
        // Allow-lists, aggregation, or this node's exclusion label: every service decision may change.
        scope = 2;
      } else {
        // Other nodes, IPPool, BlockAffinity, BGPPeer, BGPFilter: node-wide part only.
        scope = Math.max(scope, 1);
      }
    }
    if (scope === 0) {
      const diff = this.patchServices(touched);
      return { plan: this.current, diff };
    }
    this.global = planGlobal(this.state, this.nodeName);
    if (scope === 2) this.recomputeAllServices();
    else for (const key of new Set([...touched, ...this.peerScoped])) this.recomputeService(key);
    this.current = this.rebuild();
    return { plan: this.current, diff: diffPlans(before, this.current) };
  }

  private recomputeService(key: string): void {
    this.lastRecomputed++;
    const c = planServiceByKey(this.state, key, this.global.serviceContext);
    // A Service that contributes nothing is not kept (most ClusterIP Services).
    if (c && c !== EMPTY_CONTRIBUTION) this.contributions.set(key, c);
    else this.contributions.delete(key);
    if (c?.errors) this.serviceErrors.set(key, c.errors);
    else this.serviceErrors.delete(key);
    const a = this.state.services.get(key)?.annotations;
    if (a && (a[SERVICE_ANNOTATIONS.peers] !== undefined || a[SERVICE_ANNOTATIONS.peerSelector] !== undefined)) this.peerScoped.add(key);
    else this.peerScoped.delete(key);
  }

  private errorList(): PlanError[] {
    return this.serviceErrors.size === 0 ? [] : sortServiceErrors([...this.serviceErrors.values()].flat());
  }

  private recomputeAllServices(): void {
    this.contributions.clear();
    this.serviceErrors.clear();
    this.peerScoped.clear();
    for (const key of this.state.services.keys()) this.recomputeService(key);
  }

  /** Full rebuild of the route index from the global part and every contribution. */
  private rebuild(): Plan {
    this.index = new RouteIndex();
    for (const r of this.global.routes) this.index.add(r.prefix, r.reason);
    for (const c of this.contributions.values()) for (const r of c.routes) this.index.add(r.prefix, r.reason);
    this.sorted = this.index.routes(this.global.config);
    this.refused = this.collectRefused();
    return planFrom(this.global, this.sorted.slice(), this.refused.slice(), this.errorList());
  }

  private collectRefused(): RefusedIP[] {
    const out: RefusedIP[] = [];
    for (const c of this.contributions.values()) out.push(...c.refused);
    return out.sort(compareRefused);
  }

  /** Recomputes some services and patches only the prefixes and refused IPs they touch. */
  private patchServices(keys: Iterable<string>): PlanDiff {
    const prefixes = new Map<number | string, PlannedRoute['prefix']>();
    const refusedOf: { old: readonly RefusedIP[]; now: readonly RefusedIP[] }[] = [];
    let refusedTouched = 0;
    for (const key of keys) {
      const old = this.contributions.get(key);
      if (old) for (const r of old.routes) (this.index.remove(r.prefix, r.reason), prefixes.set(r.prefix.key, r.prefix));
      this.recomputeService(key);
      const now = this.contributions.get(key);
      if (now) for (const r of now.routes) (this.index.add(r.prefix, r.reason), prefixes.set(r.prefix.key, r.prefix));
      const oldRefused = old?.refused ?? [];
      const nowRefused = now?.refused ?? [];
      if (oldRefused.length + nowRefused.length > 0) {
        refusedOf.push({ old: oldRefused, now: nowRefused });
        refusedTouched += oldRefused.length + nowRefused.length;
      }
    }
    const diff = prefixes.size <= SPLICE_LIMIT ? this.spliceRoutes(prefixes) : this.mergeRoutes(prefixes);
    if (refusedTouched > SPLICE_LIMIT) this.mergeRefused(refusedOf);
    else for (const r of refusedOf) this.spliceRefused(r.old, r.now);
    this.current = planFrom(this.global, this.sorted.slice(), this.refused.slice(), this.errorList());
    return diff;
  }

  /** A few prefixes: each found by binary search and replaced, removed or inserted in place. */
  private spliceRoutes(prefixes: Map<number | string, PlannedRoute['prefix']>): PlanDiff {
    const added: PlannedRoute[] = [];
    const removed: PlannedRoute[] = [];
    const changed: PlannedRoute[] = [];
    for (const [key, prefix] of prefixes) {
      const next = this.index.route(key, this.global.config);
      const at = this.find(prefix);
      const prev = at.found ? this.sorted[at.i] : undefined;
      if (prev && next) {
        // Communities depend on the prefix and global config, not on services; a Service's shaping does.
        if (!sameShaping(prev, next)) changed.push(next);
        this.sorted[at.i] = next;
      } else if (prev) {
        removed.push(prev);
        this.sorted.splice(at.i, 1);
      } else if (next) {
        added.push(next);
        this.sorted.splice(at.i, 0, next);
      }
    }
    return { added, removed, changed };
  }

  /** Many prefixes (a burst): the changes are sorted and merged into the route list in one pass. */
  private mergeRoutes(prefixes: Map<number | string, PlannedRoute['prefix']>): PlanDiff {
    const added: PlannedRoute[] = [];
    const removed: PlannedRoute[] = [];
    const changed: PlannedRoute[] = [];
    const drop = new Set<number>();
    for (const [key, prefix] of prefixes) {
      const next = this.index.route(key, this.global.config);
      const at = this.find(prefix);
      const prev = at.found ? this.sorted[at.i] : undefined;
      if (prev && next) {
        if (!sameShaping(prev, next)) changed.push(next);
        this.sorted[at.i] = next;
      } else if (prev) (removed.push(prev), drop.add(at.i));
      else if (next) added.push(next);
    }
    const insert = added.slice().sort((a, b) => a.prefix.compare(b.prefix));
    const out: PlannedRoute[] = [];
    let j = 0;
    for (let i = 0; i < this.sorted.length; i++) {
      if (drop.has(i)) continue;
      const r = this.sorted[i];
      while (j < insert.length && insert[j].prefix.compare(r.prefix) < 0) out.push(insert[j++]);
      out.push(r);
    }
    while (j < insert.length) out.push(insert[j++]);
    this.sorted = out;
    return { added, removed, changed: changed.sort((a, b) => a.prefix.compare(b.prefix)) };
  }

  /** Many Services' refused IPs replaced at once: the old ones dropped by identity, the new ones sorted and merged in one pass. */
  private mergeRefused(changes: readonly { old: readonly RefusedIP[]; now: readonly RefusedIP[] }[]): void {
    const gone = new Set<RefusedIP>();
    const insert: RefusedIP[] = [];
    for (const c of changes) {
      for (const r of c.old) gone.add(r);
      insert.push(...c.now);
    }
    insert.sort(compareRefused);
    const out: RefusedIP[] = [];
    let j = 0;
    for (const r of this.refused) {
      if (gone.has(r)) continue;
      while (j < insert.length && compareRefused(insert[j], r) < 0) out.push(insert[j++]);
      out.push(r);
    }
    while (j < insert.length) out.push(insert[j++]);
    this.refused = out;
  }

  /** Replaces one Service's refused IPs (contiguous in the sorted list) with its new ones. */
  private spliceRefused(old: readonly RefusedIP[], now: readonly RefusedIP[]): void {
    const { namespace, name } = old[0] ?? now[0];
    let lo = 0;
    let hi = this.refused.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byService(this.refused[mid], namespace, name) < 0) lo = mid + 1;
      else hi = mid;
    }
    let end = lo;
    while (end < this.refused.length && byService(this.refused[end], namespace, name) === 0) end++;
    this.refused.splice(lo, end - lo, ...now.slice().sort(compareRefused));
  }

  /** Binary search in the sorted routes. */
  private find(prefix: PlannedRoute['prefix']): { found: boolean; i: number } {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.sorted[mid].prefix.compare(prefix);
      if (c === 0) return { found: true, i: mid };
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return { found: false, i: lo };
  }
}

/** The same shaping from a Service's annotations and weighted ECMP (what the route's attributes and export policy come from). */
function sameShaping(a: PlannedRoute, b: PlannedRoute): boolean {
  if (a.shaping === b.shaping) return true;
  if (a.shaping === undefined || b.shaping === undefined) return false;
  return JSON.stringify(a.shaping) === JSON.stringify(b.shaping);
}

function sameCommunities(a: PlannedRoute, b: PlannedRoute): boolean {
  return a.communities.length === b.communities.length && a.communities.every((c, i) => c.text === b.communities[i].text);
}

/**
 * Routes added, removed, or re-attributed with other communities between two
 * plans. Both route lists are in prefix order (every Plan's are), so one
 * merge walk does it; a route object the planner carried over unchanged is
 * skipped by identity, without comparing prefixes.
 */
export function diffPlans(before: Plan, after: Plan): PlanDiff {
  const a = before.routes;
  const b = after.routes;
  const added: PlannedRoute[] = [];
  const removed: PlannedRoute[] = [];
  const changed: PlannedRoute[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x === y) {
      i++;
      j++;
      continue;
    }
    const c = x.prefix.compare(y.prefix);
    if (c < 0) (removed.push(x), i++);
    else if (c > 0) (added.push(y), j++);
    else {
      if (!sameCommunities(x, y) || !sameShaping(x, y)) changed.push(y);
      i++;
      j++;
    }
  }
  for (; i < a.length; i++) removed.push(a[i]);
  for (; j < b.length; j++) added.push(b[j]);
  return { added, removed, changed };
}

/**
 * The refused IPs of `after` that `before` did not have in the same form
 * (what to log once per change). Both lists are in `compareRefused` order,
 * as every Plan's are.
 */
export function newlyRefused(before: readonly RefusedIP[], after: readonly RefusedIP[]): RefusedIP[] {
  const out: RefusedIP[] = [];
  let i = 0;
  for (const r of after) {
    while (i < before.length && before[i] !== r && compareRefused(before[i], r) < 0) i++;
    const o = before[i];
    if (o === r || (o !== undefined && compareRefused(o, r) === 0 && o.reason === r.reason && o.message === r.message)) {
      i++;
      continue;
    }
    out.push(r);
  }
  return out;
}
