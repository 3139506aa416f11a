import type { Prefix } from '../net/index.js';
import type { EffectiveConfig } from './config.js';
import { filterWarnings } from './filters.js';
import type { Plan } from './plan-types.js';

/**
 * Kubernetes Events for what the agent will not do: a Service IP outside the
 * allow-list (`NotAdvertised`, on the Service), a refused BGPPeer
 * (`PeerRefused`, on this Node), and a peer that runs without a BGPFilter
 * it names because the filter does not exist (`FilterMissing`, on this Node). The planning part is pure (plan + time in,
 * create/patch actions out); `ApiEventRecorder` (src/agent/sources/event-recorder.ts)
 * carries the actions out.
 */

/** `Draining`: the agent started or ended an RFC 8326 drain (src/agent/drain.ts). */
export type EventReason = 'NotAdvertised' | 'PeerRefused' | 'FilterMissing' | 'BadAnnotation' | 'Draining';

export interface InvolvedObject {
  readonly kind: 'Service' | 'Node';
  readonly name: string;
  /** Set for Services; Node events live in `default`, as the kubelet's do. */
  readonly namespace?: string;
  readonly uid?: string;
}

export interface DesiredEvent {
  readonly involved: InvolvedObject;
  readonly reason: EventReason;
  readonly message: string;
  /**
   * Every node's agent reports the same (a Service IP outside the allow-list
   * is refused everywhere): the Event gets a name derived from its content,
   * so the cluster holds one, not one per node; the first agent creates it.
   */
  readonly shared?: boolean;
}

/** A peer the agent (not the planner) refused, e.g. a BGPFilter the speaker cannot compile. */
export interface OtherRefusal {
  readonly kind: 'BGPPeer' | 'Node';
  readonly name: string;
  readonly address: string;
  readonly field: string;
  readonly message: string;
}

/** The allow-list entries a refused IP missed: every entry, single IPs included (the plan's ranges leave those out). */
export type AllowList = Pick<EffectiveConfig, 'serviceExternalIPs' | 'serviceLoadBalancerIPs'>;

/**
 * The events a plan (and the agent's own peer refusals) call for on
 * `nodeName`, in a stable order. `allowList`: the node's effective
 * BGPConfiguration (`effectiveConfig(state, node)`).
 */
export function eventsFromPlan(plan: Plan, nodeName: string, allowList: AllowList, others: readonly OtherRefusal[] = []): DesiredEvent[] {
  const out: DesiredEvent[] = [];
  for (const r of plan.refused) {
    if (r.reason !== 'outside allow-list') continue;
    const field = r.source === 'externalIP' ? 'serviceExternalIPs' : 'serviceLoadBalancerIPs';
    const ranges = (allowList[field] as readonly Prefix[]).map((p) => p.toString());
    out.push({
      involved: { kind: 'Service', name: r.name, namespace: r.namespace },
      reason: 'NotAdvertised',
      message:
        `${r.source === 'externalIP' ? 'external' : 'load-balancer'} IP ${r.ip} is not advertised: ` +
        `outside the allow-list BGPConfiguration ${field} [${ranges.join(', ')}]`,
      shared: true,
    });
  }
  // A Service's tsbgp.io annotation that does not read (src/kubernetes/service-routing.ts), on the Service.
  for (const e of plan.errors) {
    if (e.kind !== 'Service' || e.name === undefined) continue;
    out.push({
      involved: { kind: 'Service', name: e.name, namespace: e.namespace ?? 'default' },
      reason: 'BadAnnotation',
      message: `${e.field ?? 'metadata.annotations'}: ${e.message}`,
      shared: true,
    });
  }
  for (const p of plan.peers) {
    if (!p.refused) continue;
    const why = p.refusedSettings.map((s) => `${s.field}: ${s.message}`).join('; ');
    out.push({
      involved: { kind: 'Node', name: nodeName },
      reason: 'PeerRefused',
      message: `${p.from.kind} ${p.from.name} (peer ${p.address.toString()} AS ${p.asn}) is refused: ${why}`,
    });
  }
  for (const w of filterWarnings(plan)) {
    if (!w.peer) continue;
    out.push({
      involved: { kind: 'Node', name: nodeName },
      reason: 'FilterMissing',
      message: `${w.kind} ${w.name} (peer ${w.peer.address} AS ${w.peer.asn}) ${w.field}: ${w.message.replace(/^peer \S+: /, '')}`,
    });
  }
  for (const r of others) {
    out.push({
      involved: { kind: 'Node', name: nodeName },
      reason: 'PeerRefused',
      message: `${r.kind} ${r.name} (peer ${r.address}) is refused: ${r.field ? `${r.field}: ` : ''}${r.message}`,
    });
  }
  return out;
}

/**
 * The events of `next` that `prev` did not call for: an Event is an
 * occurrence, recorded when a refusal appears (or its message changes), not
 * again at every unrelated reconcile while it lasts. One that goes and comes
 * back is an occurrence again, and the deduper counts it on the same Event.
 */
export function newlyDesired(prev: readonly DesiredEvent[], next: readonly DesiredEvent[]): DesiredEvent[] {
  const before = new Set(prev.map(eventKey));
  return next.filter((e) => !before.has(eventKey(e)));
}

/** Where the agent sends Events (ApiEventRecorder, or a test double). */
export interface EventSink {
  /** One occurrence of each event; never rejects. */
  record(events: readonly DesiredEvent[]): Promise<void>;
  /** Sends count bumps whose interval has passed; the agent calls it on a timer. */
  flush(): Promise<void>;
}

export type EventAction =
  /** The Event may exist already (a restart, another node): the create then counts on from it. */
  | { readonly type: 'create'; readonly key: string; readonly event: EventBody }
  | { readonly type: 'patch'; readonly key: string; readonly namespace: string; readonly name: string; readonly count: number; readonly lastTimestamp: number };

/** A core/v1 Event with times as ms (the shell converts). */
export interface EventBody {
  readonly name: string;
  readonly namespace: string;
  readonly involved: InvolvedObject;
  readonly reason: EventReason;
  readonly message: string;
  readonly count: number;
  readonly firstTimestamp: number;
  readonly lastTimestamp: number;
  readonly component: string;
  readonly host: string;
}

interface Seen {
  readonly namespace: string;
  readonly name: string;
  count: number;
  /** The count the API server has. */
  sentCount: number;
  lastSentAt: number;
  lastSeenAt: number;
}

export interface DeduperOptions {
  /** At most one patch per event per interval. */
  readonly intervalMs?: number;
  /** Forget an event not seen for this long (the API server drops Events after an hour by default). */
  readonly forgetAfterMs?: number;
  /** Bound on remembered events. */
  readonly maxEntries?: number;
  readonly component?: string;
  readonly host: string;
}

export function eventKey(e: DesiredEvent): string {
  return JSON.stringify([e.involved.kind, e.involved.namespace ?? '', e.involved.name, e.reason, e.message]);
}

/**
 * Turns observations into Event writes: a new (object, reason, message) is
 * created; seeing it again bumps a count, sent as one patch per interval at
 * most, never as a new Event.
 */
export class EventDeduper {
  private readonly seen = new Map<string, Seen>();
  private readonly intervalMs: number;
  private readonly forgetAfterMs: number;
  private readonly maxEntries: number;

  constructor(private readonly opts: DeduperOptions) {
    this.intervalMs = opts.intervalMs ?? 60_000;
    this.forgetAfterMs = opts.forgetAfterMs ?? 3_600_000;
    this.maxEntries = opts.maxEntries ?? 4096;
  }

  get size(): number {
    return this.seen.size;
  }

  /** One occurrence of each event, at `now`; returns what to write. */
  observe(events: readonly DesiredEvent[], now: number): EventAction[] {
    this.evict(now);
    const actions: EventAction[] = [];
    for (const e of events) {
      const key = eventKey(e);
      const s = this.seen.get(key);
      if (!s) {
        const namespace = e.involved.namespace ?? 'default';
        // Named from the content (and the node, unless shared): an agent restarted, or another
        // node's agent for a shared event, finds the Event already there instead of adding one.
        const name = `${e.involved.name}.${fnv1a(e.shared ? key : `${this.opts.host ?? ''}\n${key}`)}`;
        this.seen.set(key, { namespace, name, count: 1, sentCount: 1, lastSentAt: now, lastSeenAt: now });
        actions.push({
          type: 'create',
          key,
          event: {
            name,
            namespace,
            involved: e.involved,
            reason: e.reason,
            message: e.message,
            count: 1,
            firstTimestamp: now,
            lastTimestamp: now,
            component: this.opts.component ?? 'tsbgp',
            host: this.opts.host,
          },
        });
        continue;
      }
      s.count++;
      s.lastSeenAt = now;
      // Re-insert: Map order is then least-recently-seen first, for eviction.
      this.seen.delete(key);
      this.seen.set(key, s);
    }
    actions.push(...this.flush(now));
    return actions;
  }

  /** Patches for counts not yet sent whose interval has passed (call on a timer to send the last bump). */
  flush(now: number): EventAction[] {
    const out: EventAction[] = [];
    for (const [key, s] of this.seen) {
      if (s.count === s.sentCount || now - s.lastSentAt < this.intervalMs) continue;
      out.push(patchOf(key, s, now));
    }
    return out;
  }

  /** The server lost the Event (expired): forget it so the next occurrence creates a new one. */
  forget(key: string): void {
    this.seen.delete(key);
  }

  /**
   * The create found the Event already there with `count` (an earlier run,
   * another node): go on from it. Returns the patch that sends the sum now.
   */
  adopt(key: string, count: number, now: number): EventAction | undefined {
    const s = this.seen.get(key);
    if (!s) return undefined;
    if (count > 0) s.count += count;
    return patchOf(key, s, now);
  }

  private evict(now: number): void {
    for (const [key, s] of this.seen) {
      if (this.seen.size <= this.maxEntries && now - s.lastSeenAt < this.forgetAfterMs) break;
      this.seen.delete(key);
    }
  }
}

/** The patch sending `s`'s count, noted as sent at `now`. */
function patchOf(key: string, s: Seen, now: number): EventAction {
  s.sentCount = s.count;
  s.lastSentAt = now;
  return { type: 'patch', key, namespace: s.namespace, name: s.name, count: s.count, lastTimestamp: s.lastSeenAt };
}

/** 32-bit FNV-1a of a string, as 8 hex digits: a short stable name suffix. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The core/v1 Event object for a create (the fields tsbgp writes). */
export interface EventObject {
  readonly apiVersion: 'v1';
  readonly kind: 'Event';
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly involvedObject: { readonly apiVersion: string; readonly kind: string; readonly name: string; readonly namespace?: string; readonly uid?: string };
  readonly reason: string;
  readonly message: string;
  readonly type: 'Warning';
  readonly count: number;
  /** RFC 3339. */
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly source: { readonly component: string; readonly host: string };
  readonly reportingComponent: string;
  readonly reportingInstance: string;
}

/** The core/v1 Event object for a create. */
export function eventObject(b: EventBody): EventObject {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: b.name, namespace: b.namespace },
    involvedObject: { apiVersion: 'v1', kind: b.involved.kind, name: b.involved.name, namespace: b.involved.namespace, uid: b.involved.uid },
    reason: b.reason,
    message: b.message,
    type: 'Warning',
    count: b.count,
    firstTimestamp: new Date(b.firstTimestamp).toISOString(),
    lastTimestamp: new Date(b.lastTimestamp).toISOString(),
    source: { component: b.component, host: b.host },
    reportingComponent: b.component,
    reportingInstance: b.host,
  };
}
