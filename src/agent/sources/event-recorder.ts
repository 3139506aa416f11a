/**
 * Kubernetes Events written through the API: the shell around the pure
 * deduper of src/kubernetes/events.ts, which decides what to create and patch.
 */
import { EventDeduper, eventObject, type DeduperOptions, type DesiredEvent, type EventAction, type EventSink } from '../../kubernetes/index.js';
import { ApiError, type KubeClient } from './kube-client.js';

export interface ApiEventRecorderOptions extends DeduperOptions {
  readonly client: KubeClient;
  readonly now?: () => number;
  readonly onError?: (err: Error) => void;
}

const eventsPath = (namespace: string) => `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`;

/** Writes the deduper's actions through the core/v1 events API; failures are reported, never thrown at the caller. */
export class ApiEventRecorder implements EventSink {
  readonly deduper: EventDeduper;
  private readonly now: () => number;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ApiEventRecorderOptions) {
    this.deduper = new EventDeduper(opts);
    this.now = opts.now ?? Date.now;
  }

  /** Records one occurrence of each event; resolves when the writes are done. */
  record(events: readonly DesiredEvent[]): Promise<void> {
    return this.run(this.deduper.observe(events, this.now()));
  }

  /** Sends pending count bumps whose interval has passed. */
  flush(): Promise<void> {
    return this.run(this.deduper.flush(this.now()));
  }

  private run(actions: EventAction[]): Promise<void> {
    // Serialised, so a patch never overtakes the create it refers to.
    this.queue = this.queue.then(async () => {
      for (const a of actions) {
        try {
          await this.apply(a);
        } catch (e) {
          if (a.type === 'patch') this.deduper.forget(a.key);
          this.opts.onError?.(e as Error);
        }
      }
    });
    return this.queue;
  }

  private async apply(a: EventAction): Promise<void> {
    const api = this.opts.client;
    if (a.type === 'create') {
      try {
        await api.request('POST', eventsPath(a.event.namespace), { body: eventObject(a.event) });
      } catch (e) {
        if (!(e instanceof ApiError && e.statusCode === 409)) throw e;
        // Already there: this node's agent before a restart, or another node's for a shared
        // Event. Count this occurrence on top of it rather than writing a second Event.
        const old = (await api.getJson(`${eventsPath(a.event.namespace)}/${encodeURIComponent(a.event.name)}`)) as { count?: unknown };
        const patch = this.deduper.adopt(a.key, typeof old.count === 'number' ? old.count : 1, this.now());
        if (patch) await this.apply(patch);
      }
      return;
    }
    await api.request('PATCH', `${eventsPath(a.namespace)}/${encodeURIComponent(a.name)}`, {
      body: { count: a.count, lastTimestamp: new Date(a.lastTimestamp).toISOString() },
      contentType: 'application/merge-patch+json',
    });
  }
}
