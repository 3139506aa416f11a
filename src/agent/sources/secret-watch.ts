/**
 * Shell: the Secrets that passwords name, read from the Kubernetes API in
 * tsbgp's own namespace, one list+watch per Secret name (a field selector
 * `metadata.name=NAME`), as Calico's confd runs one informer per Secret. So
 * RBAC can grant exactly those Secrets (`resourceNames`) and nothing else in
 * the namespace. Which names: every `password.secretKeyRef.name` of the
 * BGPPeers and `nodeMeshPassword` of the BGPConfigurations seen (`namesIn`).
 * A name no longer referenced is unwatched and its Secret forgotten (a
 * delete event), so a stale value never lingers in the state.
 */
import { KnownObjects, type KnownStep, type Resource, type ResourceEvent, type ManifestIssue } from '../../kubernetes/index.js';
import { ListWatch, type KubeClient } from './kube-client.js';

export interface SecretWatchOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly onChange: (events: ResourceEvent[], issues: ManifestIssue[]) => void;
  readonly onError?: (err: Error, name: string) => void;
  readonly random?: () => number;
  /** A watch silent this long is presumed half-open and relisted (ListWatch.checkIdle). Default 360 s (the 300 s watch timeout + 60). */
  readonly watchIdleMs?: number;
  /** How often the idle watchdog looks. Default 10 s. */
  readonly watchdogIntervalMs?: number;
}

/** The Secret names BGPPeers and BGPConfigurations refer to (sorted). */
export function namesIn(resources: Iterable<Resource>): string[] {
  const out = new Set<string>();
  for (const r of resources) {
    if (r.kind === 'BGPPeer' && r.password) out.add(r.password.name);
    if (r.kind === 'BGPConfiguration' && r.nodeMeshPassword) out.add(r.nodeMeshPassword.name);
  }
  return [...out].sort();
}

interface One {
  readonly known: KnownObjects;
  lw?: ListWatch;
  stopped: boolean;
  /** Listed (or failed) at least once. */
  settled: boolean;
}

export class SecretWatch {
  private readonly watches = new Map<string, One>();
  private closed = false;

  private watchdog?: NodeJS.Timeout;

  constructor(private readonly opts: SecretWatchOptions) {}

  /** Secret names currently watched. */
  get names(): string[] {
    return [...this.watches.keys()].sort();
  }

  /** Watches exactly these names: new ones start, dropped ones stop and their Secret is deleted from the state. */
  setNames(names: Iterable<string>): void {
    if (this.closed) return;
    const want = new Set(names);
    for (const [name, w] of this.watches) {
      if (want.has(name)) continue;
      this.stop(w);
      this.watches.delete(name);
      this.emit(w.known.replaceAll([]));
    }
    if (!this.watchdog && want.size > 0) {
      const idleMs = this.opts.watchIdleMs ?? 360_000;
      this.watchdog = setInterval(() => {
        for (const w of this.watches.values()) w.lw?.checkIdle(idleMs);
      }, this.opts.watchdogIntervalMs ?? 10_000);
      this.watchdog.unref();
    }
    for (const name of want) {
      if (this.watches.has(name)) continue;
      const w: One = { known: new KnownObjects('Secret', 'v1'), stopped: false, settled: false };
      this.watches.set(name, w);
      this.connect(name, w);
    }
  }

  /**
   * Resolves once every watched name has been listed or has failed once (so
   * the first plan does not refuse a peering whose Secret is merely not read
   * yet), or after `timeoutMs`.
   */
  async settled(timeoutMs = 10_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!this.closed && [...this.watches.values()].some((w) => !w.settled) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }

  close(): void {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    for (const w of this.watches.values()) this.stop(w);
    this.watches.clear();
  }

  private stop(w: One): void {
    w.stopped = true;
    w.lw?.stop();
  }

  private emit(step: KnownStep): void {
    if (step.events.length > 0 || step.issues.length > 0) this.opts.onChange(step.events, step.issues);
  }

  private connect(name: string, w: One): void {
    if (this.closed || w.stopped) return;
    const live = () => !this.closed && !w.stopped;
    w.lw = new ListWatch({
      client: this.opts.client,
      path: `/api/v1/namespaces/${encodeURIComponent(this.opts.namespace)}/secrets`,
      fieldSelector: `metadata.name=${name}`,
      random: this.opts.random,
      onListStart: () => w.known.beginList(),
      onListPage: (items) => {
        if (live()) this.emit(w.known.listPage(items));
      },
      onListEnd: () => {
        if (!live()) return;
        w.settled = true;
        this.emit(w.known.endList());
      },
      onEvent: (type, o) => {
        if (live()) this.emit(type === 'DELETED' ? w.known.remove(o) : w.known.upsert(o));
      },
      onError: (err) => {
        if (!live()) return;
        w.settled = true;
        this.opts.onError?.(err, name);
      },
    });
    w.lw.start();
  }
}
