/**
 * The CalicoNodeStatus shell: a list-watch of the CalicoNodeStatus objects,
 * keeping those whose `spec.node` is this node, and for each a timer that
 * writes its status subresource (a JSON merge patch of `status` only) as
 * `reportSchedule` decides: at once for a new or changed request, then at
 * most once per `updatePeriodSeconds`, and only when the status changed.
 * What the status says is the pure `nodeStatus` (src/agent/node-status.ts).
 */
import { nodeStatus, readNodeStatusRequest, reportSchedule, statusPatch, type NodeStatusInput, type NodeStatusRequest } from '../node-status.js';
import { probeCalicoApi, type CalicoApi } from './api-source.js';
import { ApiError, ListWatch, type KubeClient } from './kube-client.js';

/** What RBAC must grant the reporter, in both Calico APIs (deploy/clusterrole.yaml; test/kubernetes/rbac.test.ts keeps them in step). */
export const NODE_STATUS_RBAC: readonly { readonly apiGroup: string; readonly resource: string; readonly verbs: readonly string[] }[] = [
  'crd.projectcalico.org',
  'projectcalico.org',
].flatMap((apiGroup) => [
  { apiGroup, resource: 'caliconodestatuses', verbs: ['get', 'list', 'watch'] },
  { apiGroup, resource: 'caliconodestatuses/status', verbs: ['patch'] },
]);

export interface NodeStatusReporterOptions {
  readonly client: KubeClient;
  readonly node: string;
  /** Which Calico API serves CalicoNodeStatus; default: asked of discovery, as the API source does. */
  readonly calicoApi?: CalicoApi;
  readonly now?: () => number;
  /** Failures (a request that does not validate, a write refused); never thrown. */
  readonly onError?: (err: Error) => void;
  /** Each report made: whether a changed status was written, or there was nothing new to write (for logs and tests). */
  readonly onReport?: (name: string, wrote: boolean) => void;
  readonly watchTimeoutSeconds?: number;
  /** After a failed write, the next attempt (ms). Default 5000. */
  readonly retryMs?: number;
}

interface Tracked {
  request: NodeStatusRequest;
  last?: { specKey: string; at: number };
  /** The status as it stands on the server, as far as this reporter knows. */
  written: unknown;
  timer?: NodeJS.Timeout;
  /** A write that failed is tried again after `retryMs` (whatever the period, 0 included). */
  retry?: NodeJS.Timeout;
}

export class NodeStatusReporter {
  private readonly tracked = new Map<string, Tracked>();
  private readonly now: () => number;
  private listWatch?: ListWatch;
  private read?: () => NodeStatusInput;
  private path = '';
  private closed = false;
  private queue: Promise<void> = Promise.resolve();
  private seen = new Set<string>();
  private readonly invalid = new Map<string, string>();

  constructor(private readonly opts: NodeStatusReporterOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Starts watching; `read` gives the agent's state at the moment of each report. */
  async start(read: () => NodeStatusInput): Promise<void> {
    this.read = read;
    let api: CalicoApi = 'crd.projectcalico.org/v1';
    try {
      api = this.opts.calicoApi ?? (await probeCalicoApi(this.opts.client));
    } catch (e) {
      this.opts.onError?.(new Error(`CalicoNodeStatus: API discovery failed (${(e as Error).message}); using ${api}`));
    }
    if (this.closed) return;
    this.path = `/apis/${api}/caliconodestatuses`;
    this.listWatch = new ListWatch({
      client: this.opts.client,
      path: this.path,
      timeoutSeconds: this.opts.watchTimeoutSeconds,
      onListStart: () => (this.seen = new Set()),
      onListPage: (items) => {
        for (const o of items) this.upsert(o);
      },
      onListEnd: () => {
        for (const name of [...this.tracked.keys()]) if (!this.seen.has(name)) this.drop(name);
      },
      onEvent: (type, o) => {
        if (type === 'DELETED') this.drop(readNodeStatusRequest(o).name);
        else this.upsert(o);
      },
      onError: (e) => this.opts.onError?.(new Error(`CalicoNodeStatus watch: ${e.message}`)),
    });
    this.listWatch.start();
  }

  /** The requests for this node being answered, by name. */
  names(): string[] {
    return [...this.tracked.keys()].sort();
  }

  /** Resolves once the writes queued so far are done. */
  settled(): Promise<void> {
    return this.queue;
  }

  close(): void {
    this.closed = true;
    this.listWatch?.stop();
    for (const t of this.tracked.values()) {
      clearTimeout(t.timer);
      clearTimeout(t.retry);
    }
    this.tracked.clear();
  }

  private upsert(raw: unknown): void {
    const r = readNodeStatusRequest(raw);
    this.seen.add(r.name);
    if (!r.ok) {
      // Reported once per object and message (a watch redelivers it on every change).
      if (this.invalid.get(r.name) !== r.error) this.opts.onError?.(new Error(r.error));
      this.invalid.set(r.name, r.error);
      this.drop(r.name);
      return;
    }
    this.invalid.delete(r.name);
    if (r.request.node !== this.opts.node) return this.drop(r.request.name);
    const t = this.tracked.get(r.request.name);
    if (t) {
      t.request = r.request;
      t.written = r.request.currentStatus;
    } else this.tracked.set(r.request.name, { request: r.request, written: r.request.currentStatus });
    this.schedule(r.request.name);
  }

  private drop(name: string): void {
    const t = this.tracked.get(name);
    if (!t) return;
    clearTimeout(t.timer);
    clearTimeout(t.retry);
    this.tracked.delete(name);
  }

  private schedule(name: string): void {
    const t = this.tracked.get(name);
    if (!t || this.closed) return;
    clearTimeout(t.timer);
    t.timer = undefined;
    const now = this.now();
    const s = reportSchedule(t.last, t.request, now);
    if (s.now) {
      t.last = { specKey: t.request.specKey, at: now };
      this.enqueue(name);
    }
    if (s.nextInMs !== undefined) {
      t.timer = setTimeout(() => this.schedule(name), s.nextInMs);
      t.timer.unref?.();
    }
  }

  private enqueue(name: string): void {
    this.queue = this.queue.then(() => this.report(name));
  }

  private async report(name: string): Promise<void> {
    const t = this.tracked.get(name);
    if (!t || !this.read || this.closed) return;
    const patch = statusPatch(t.written, nodeStatus(this.read(), t.request.classes), new Date(this.now()));
    if (!patch) {
      this.opts.onReport?.(name, false);
      return;
    }
    try {
      const updated = (await this.opts.client.request('PATCH', `${this.path}/${encodeURIComponent(name)}/status`, {
        body: patch,
        contentType: 'application/merge-patch+json',
      })) as { status?: unknown };
      const now = this.tracked.get(name);
      if (now) now.written = updated.status ?? patch.status;
      this.opts.onReport?.(name, true);
    } catch (e) {
      // Deleted meanwhile: its DELETED event drops it.
      if (e instanceof ApiError && e.statusCode === 404) return;
      const retryMs = this.opts.retryMs ?? 5000;
      this.opts.onError?.(new Error(`CalicoNodeStatus ${name}: status not written (trying again in ${retryMs} ms): ${(e as Error).message}`));
      const again = this.tracked.get(name);
      if (again && !this.closed) {
        clearTimeout(again.retry);
        again.retry = setTimeout(() => {
          again.retry = undefined;
          this.enqueue(name);
        }, retryMs);
        again.retry.unref?.();
      }
    }
  }
}
