import { planFrom, planGlobal, planServiceByKey, RouteIndex, type GlobalPart } from './plan.js';
import type { Plan, PlanDiff, PlannedRoute, RefusedIP } from './plan-types.js';
import type { ServiceContribution } from './services.js';
import { ClusterState, serviceKey, type ClusterEvent } from './state.js';

/**
 * The incremental planner. A Service or EndpointSlice event recomputes only
 * the Services it touches; any other event recomputes the node-wide part
 * (and, when it can change service decisions, every Service). A service
 * event patches only the prefixes it touched in the sorted route list. The
 * result always equals `plan(state, nodeName)` from scratch.
 */
export class Planner {
  readonly state: ClusterState;
  private global: GlobalPart;
  private readonly contributions = new Map<string, ServiceContribution>();
  private index = new RouteIndex();
  /** The current routes in prefix order, patched in place on service events. */
  private sorted: PlannedRoute[] = [];
  private current: Plan;
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
    const prev = this.state.apply(ev);
    const kind = ev.type === 'delete' ? ev.kind : ev.resource.kind;
    this.lastRecomputed = 0;
    const before = this.current;
    if (kind === 'Service' || kind === 'EndpointSlice') {
      const touched = new Set<string>();
      if (kind === 'Service') {
        const ns = ev.type === 'delete' ? (ev.namespace ?? 'default') : (ev.resource as { namespace: string }).namespace;
        touched.add(serviceKey(ns, ev.type === 'delete' ? ev.name : ev.resource.name));
      } else {
        if (prev?.kind === 'EndpointSlice' && prev.serviceName) touched.add(serviceKey(prev.namespace, prev.serviceName));
        if (ev.type !== 'delete' && ev.resource.kind === 'EndpointSlice' && ev.resource.serviceName) touched.add(serviceKey(ev.resource.namespace, ev.resource.serviceName));
      }
      const diff = this.patchServices(touched);
      return { plan: this.current, diff };
    }
    if (kind === 'BGPConfiguration' || (kind === 'Node' && (ev.type === 'delete' ? ev.name : ev.resource.name) === this.nodeName)) {
      // Allow-lists, aggregation, or this node's exclusion label: every service decision may change.
      this.global = planGlobal(this.state, this.nodeName);
      this.recomputeAllServices();
    } else {
      // Other nodes, IPPool, BlockAffinity, BGPPeer, BGPFilter: node-wide part only.
      this.global = planGlobal(this.state, this.nodeName);
    }
    this.current = this.rebuild();
    return { plan: this.current, diff: diffPlans(before, this.current) };
  }

  private recomputeService(key: string): void {
    this.lastRecomputed++;
    const c = planServiceByKey(this.state, key, this.global.serviceContext);
    if (c) this.contributions.set(key, c);
    else this.contributions.delete(key);
  }

  private recomputeAllServices(): void {
    this.contributions.clear();
    for (const key of this.state.services.keys()) this.recomputeService(key);
  }

  /** Full rebuild of the route index from the global part and every contribution. */
  private rebuild(): Plan {
    this.index = new RouteIndex();
    for (const r of this.global.routes) this.index.add(r.prefix, r.reason);
    for (const c of this.contributions.values()) for (const r of c.routes) this.index.add(r.prefix, r.reason);
    this.sorted = this.index.routes(this.global.config);
    return planFrom(this.global, this.sorted.slice(), this.collectRefused());
  }

  private collectRefused(): RefusedIP[] {
    const out: RefusedIP[] = [];
    for (const c of this.contributions.values()) out.push(...c.refused);
    return out;
  }

  /** Recomputes some services and patches only the prefixes they touch. */
  private patchServices(keys: Iterable<string>): PlanDiff {
    const prefixes = new Map<number | string, PlannedRoute['prefix']>();
    for (const key of keys) {
      const old = this.contributions.get(key);
      if (old) for (const r of old.routes) (this.index.remove(r.prefix, r.reason), prefixes.set(r.prefix.key, r.prefix));
      this.recomputeService(key);
      const now = this.contributions.get(key);
      if (now) for (const r of now.routes) (this.index.add(r.prefix, r.reason), prefixes.set(r.prefix.key, r.prefix));
    }
    const added: PlannedRoute[] = [];
    const removed: PlannedRoute[] = [];
    for (const [key, prefix] of prefixes) {
      const next = this.index.route(key, this.global.config);
      const at = this.find(prefix);
      const prev = at.found ? this.sorted[at.i] : undefined;
      if (prev && next) {
        // Reasons changed only: communities depend on the prefix and global config, not on services.
        this.sorted[at.i] = next;
      } else if (prev) {
        removed.push(prev);
        this.sorted.splice(at.i, 1);
      } else if (next) {
        added.push(next);
        this.sorted.splice(at.i, 0, next);
      }
    }
    this.current = planFrom(this.global, this.sorted.slice(), this.collectRefused());
    return { added, removed, changed: [] };
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

function sameCommunities(a: PlannedRoute, b: PlannedRoute): boolean {
  return a.communities.length === b.communities.length && a.communities.every((c, i) => c.text === b.communities[i].text);
}

/** Routes added, removed, or re-attributed with other communities between two plans. */
export function diffPlans(before: Plan, after: Plan): PlanDiff {
  const old = new Map(before.routes.map((r) => [r.prefix.key, r]));
  const added: PlannedRoute[] = [];
  const changed: PlannedRoute[] = [];
  for (const r of after.routes) {
    const o = old.get(r.prefix.key);
    if (!o) added.push(r);
    else {
      if (!sameCommunities(o, r)) changed.push(r);
      old.delete(r.prefix.key);
    }
  }
  return { added, removed: [...old.values()], changed };
}
