/**
 * Kubernetes Events written through the API: the shell around the pure
 * deduper of src/kubernetes/events.ts, which decides what to create and patch.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { EventDeduper, eventObject, type DeduperOptions, type DesiredEvent, type EventAction, type EventSink } from '../../kubernetes/events.js';

export interface ApiEventRecorderOptions extends DeduperOptions {
  readonly kubeConfig: KubeConfig;
  readonly now?: () => number;
  readonly onError?: (err: Error) => void;
}

/** Writes the deduper's actions through CoreV1Api; failures are reported, never thrown at the caller. */
export class ApiEventRecorder implements EventSink {
  readonly deduper: EventDeduper;
  private readonly api: CoreV1Api;
  private readonly now: () => number;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ApiEventRecorderOptions) {
    this.deduper = new EventDeduper(opts);
    this.api = opts.kubeConfig.makeApiClient(CoreV1Api);
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
    if (a.type === 'create') {
      try {
        await this.api.createNamespacedEvent({ namespace: a.event.namespace, body: eventObject(a.event) });
      } catch (e) {
        if ((e as { code?: number }).code !== 409) throw e;
        // Already there: this node's agent before a restart, or another node's for a shared
        // Event. Count this occurrence on top of it rather than writing a second Event.
        const old = await this.api.readNamespacedEvent({ name: a.event.name, namespace: a.event.namespace });
        const patch = this.deduper.adopt(a.key, old.count ?? 1, this.now());
        if (patch) await this.apply(patch);
      }
      return;
    }
    await this.api.patchNamespacedEvent(
      { name: a.name, namespace: a.namespace, body: { count: a.count, lastTimestamp: new Date(a.lastTimestamp).toISOString() } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
}
