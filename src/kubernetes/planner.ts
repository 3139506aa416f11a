import { assemble, planGlobal, planServiceByKey, type GlobalPart } from './plan.js';
import type { Plan, PlanDiff, PlannedRoute } from './plan-types.js';
import type { ServiceContribution } from './services.js';
import { ClusterState, serviceKey, type ClusterEvent } from './state.js';

/**
 * The incremental planner. A Service or EndpointSlice event recomputes only
 * the Services it touches; any other event recomputes the node-wide part
 * (and, when it can change service decisions, every Service). The result is
 * always equal to `plan(state, nodeName)` from scratch.
 */
export class Planner {
  readonly state: ClusterState;
  private global: GlobalPart;
  private readonly contributions = new Map<string, ServiceContribution>();
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
    this.current = this.build();
  }

  get plan(): Plan {
    return this.current;
  }

  apply(ev: ClusterEvent): { plan: Plan; diff: PlanDiff } {
    const prev = this.state.apply(ev);
    const kind = ev.type === 'delete' ? ev.kind : ev.resource.kind;
    this.lastRecomputed = 0;
    switch (kind) {
      case 'Service': {
        const ns = ev.type === 'delete' ? (ev.namespace ?? 'default') : (ev.resource as { namespace: string }).namespace;
        const name = ev.type === 'delete' ? ev.name : ev.resource.name;
        this.recomputeService(serviceKey(ns, name));
        break;
      }
      case 'EndpointSlice': {
        const touched = new Set<string>();
        if (prev?.kind === 'EndpointSlice' && prev.serviceName) touched.add(serviceKey(prev.namespace, prev.serviceName));
        if (ev.type !== 'delete' && ev.resource.kind === 'EndpointSlice' && ev.resource.serviceName) touched.add(serviceKey(ev.resource.namespace, ev.resource.serviceName));
        for (const k of touched) this.recomputeService(k);
        break;
      }
      case 'Node': {
        const name = ev.type === 'delete' ? ev.name : ev.resource.name;
        this.global = planGlobal(this.state, this.nodeName);
        // Only this node's labels (exclusion) feed service decisions.
        if (name === this.nodeName) this.recomputeAllServices();
        break;
      }
      case 'BGPConfiguration':
        this.global = planGlobal(this.state, this.nodeName);
        this.recomputeAllServices();
        break;
      default:
        // IPPool, BlockAffinity, BGPPeer, BGPFilter: node-wide part only.
        this.global = planGlobal(this.state, this.nodeName);
    }
    const before = this.current;
    this.current = this.build();
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

  private build(): Plan {
    // Sorted so the plan does not depend on event order.
    const keys = [...this.contributions.keys()].sort();
    return assemble(
      this.global,
      keys.map((k) => this.contributions.get(k)!),
    );
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
