/**
 * Kubernetes Events from the applied plan: NotAdvertised on a Service whose
 * external or load-balancer IP is outside the allow-list, PeerRefused on the
 * Node for a refused BGPPeer. Edge-triggered (an Event when a refusal
 * appears, not at every reconcile while it lasts) and de-duplicated by the
 * sink (a refusal that comes back bumps the count of the same Event).
 */
import { effectiveConfig, eventsFromPlan, newlyDesired, type DesiredEvent, type EventSink, type Plan, type ClusterState } from '../kubernetes/index.js';
import type { PeerRefusal } from '../kubernetes/index.js';

export class PlanEvents {
  private last: DesiredEvent[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly sink: EventSink,
    private readonly node: string,
    /** How often pending count bumps are sent (the sink sends at most one per Event per interval). */
    flushMs = 60_000,
  ) {
    this.timer = setInterval(() => void this.sink.flush(), flushMs);
    this.timer.unref();
  }

  /** Records the events this plan calls for that the previous one did not; resolves when written. */
  update(state: ClusterState, plan: Plan, refusals: readonly PeerRefusal[]): Promise<void> {
    // The planner's refusals are in the plan already; add the agent's own (e.g. a filter that does not compile).
    const desired = eventsFromPlan(
      plan,
      this.node,
      effectiveConfig(state, this.node),
      refusals.filter((r) => !r.byPlanner),
    );
    const fresh = newlyDesired(this.last, desired);
    this.last = desired;
    return fresh.length > 0 ? this.sink.record(fresh) : Promise.resolve();
  }

  close(): void {
    clearInterval(this.timer);
  }
}
