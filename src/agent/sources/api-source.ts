import { ListWatch, type KubeClient } from './kube-client.js';
import {
  backoffDelay,
  DEFAULT_BACKOFF,
  KnownObjects,
  type BackoffOptions,
  type KnownStep,
  type Resource,
  type ResourceKind,
  keyOf,
  KINDS,
  type ResourceEvent,
  isKnownKind,
  type ManifestIssue,
} from '../../kubernetes/index.js';

/**
 * The Kubernetes API source: list+watch (list-watch.ts ListWatch) of
 * every resource the planner reads, validated into ClusterEvents exactly like
 * the manifest source. Relists are diffed against what is known, so a
 * reconnect or a 410 Gone produces only the real differences.
 */

export type CalicoApi = 'crd.projectcalico.org/v1' | 'projectcalico.org/v3';

export interface WatchedResource {
  readonly kind: ResourceKind;
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

const CORE: readonly WatchedResource[] = [
  { kind: 'Node', group: '', version: 'v1', plural: 'nodes', namespaced: false },
  { kind: 'Service', group: '', version: 'v1', plural: 'services', namespaced: true },
  { kind: 'EndpointSlice', group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true },
];

/** The Calico kinds and their plurals: schema.ts, the one list (the CRDs and the validator read it too). */
const CALICO_KINDS: readonly { kind: ResourceKind; plural: string }[] = KINDS.map((k) => {
  if (!isKnownKind(k.kind)) throw new Error(`schema.ts kind ${k.kind} has no validator`);
  return { kind: k.kind, plural: k.plural };
});

/** The resources watched when Calico is read through `calicoApi`. */
export function watchedResources(calicoApi: CalicoApi): WatchedResource[] {
  const [group, version] = calicoApi.split('/');
  return [...CORE, ...CALICO_KINDS.map((c) => ({ kind: c.kind, group, version, plural: c.plural, namespaced: false }))];
}

/** Every (apiGroup, resource) the source may read, whichever Calico API it picks: what RBAC must grant. */
export const WATCHED_RBAC: readonly { readonly apiGroup: string; readonly resource: string }[] = [
  ...watchedResources('crd.projectcalico.org/v1'),
  ...watchedResources('projectcalico.org/v3').slice(CORE.length),
].map((w) => ({ apiGroup: w.group, resource: w.plural }));

function apiVersionOf(w: WatchedResource): string {
  return w.group === '' ? w.version : `${w.group}/${w.version}`;
}

/** The collection path across all namespaces. */
function collectionPath(w: WatchedResource): string {
  return w.group === '' ? `/api/${w.version}/${w.plural}` : `/apis/${w.group}/${w.version}/${w.plural}`;
}

/** Asks API discovery once whether `projectcalico.org/v3` (the Calico API server) is served with the resources we need. */
export async function probeCalicoApi(kc: KubeClient): Promise<CalicoApi> {
  const groups = (await kc.getJson('/apis')) as { groups?: { name?: string; versions?: { groupVersion?: string }[] }[] };
  const v3 = groups.groups?.find((g) => g.name === 'projectcalico.org')?.versions?.some((v) => v.groupVersion === 'projectcalico.org/v3');
  if (!v3) return 'crd.projectcalico.org/v1';
  try {
    const list = (await kc.getJson('/apis/projectcalico.org/v3')) as { resources?: { name?: string }[] };
    const names = new Set((list.resources ?? []).map((r) => r.name));
    return CALICO_KINDS.every((c) => names.has(c.plural)) ? 'projectcalico.org/v3' : 'crd.projectcalico.org/v1';
  } catch {
    return 'crd.projectcalico.org/v1';
  }
}

export interface ResourceStatus {
  readonly connected: boolean;
  readonly synced: boolean;
  readonly watchRestarts: number;
  /** Requests (list, watch) of this resource that failed since the start; every retry counts. */
  readonly failures: number;
  readonly objects: number;
  readonly lastError?: string;
}

export interface ApiSourceStatus {
  /** The API server's URL, from the kubeconfig. */
  readonly server?: string;
  /** Every watched resource is listed and watching. */
  readonly connected: boolean;
  /** Every resource was listed at least once: the first complete sync is done. */
  readonly synced: boolean;
  /** Wall-clock ms when `connected` last changed (or the source started). */
  readonly since: number;
  /** Wall-clock ms of the last complete list of any resource. */
  readonly lastSyncAt?: number;
  readonly calicoApi?: CalicoApi;
  /** Keyed by plural, e.g. `bgppeers`. */
  readonly resources: Readonly<Record<string, ResourceStatus>>;
  /** Per plural: watch (re)starts after the first one (drops, 410 relists, reconnects). */
  readonly watchRestarts: Readonly<Record<string, number>>;
  /** Requests that failed since the start (discovery, lists, watches); every retry counts. */
  readonly failures: number;
  readonly lastError?: string;
}

export interface ApiSourceOptions {
  readonly client: KubeClient;
  /** Called with each batch of changes and the new issues (invalid objects) found with them. */
  readonly onChange: (events: ResourceEvent[], issues: ManifestIssue[]) => void;
  readonly backoff?: Partial<BackoffOptions>;
  /** Skip the discovery probe. */
  readonly calicoApi?: CalicoApi;
  readonly now?: () => number;
  readonly random?: () => number;
  readonly onError?: (err: Error, resource?: string) => void;
  /** Asked of the API server for each watch; it then ends the watch cleanly and it is re-opened. Default 300. */
  readonly watchTimeoutSeconds?: number;
  /** A watch silent for this long (no line, no restart) is presumed half-open and reconnected. Default: the watch timeout + 60 s. */
  readonly watchIdleMs?: number;
  /** How often the idle watchdog looks. Default 10 s. */
  readonly watchdogIntervalMs?: number;
  /** Called when `status().connected` changes (every resource listed and watching, or not). */
  readonly onConnectionChange?: (connected: boolean) => void;
  /** Called each time a watch is restarted after its first start (drop, timeout, 410, reconnect), with the resource's plural. */
  readonly onWatchRestart?: (resource: string) => void;
}

class ResourceWatch {
  lw?: ListWatch;
  connected = false;
  synced = false;
  connects = 0;
  failures = 0;
  lastError?: string;
  constructor(
    readonly def: WatchedResource,
    readonly known: KnownObjects,
  ) {}
}

export class KubernetesApiSource {
  private readonly backoff: BackoffOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private watches: ResourceWatch[] = [];
  private calicoApi?: CalicoApi;
  private lastSyncAt?: number;
  private lastError?: string;
  private failures = 0;
  private closed = false;
  private connected = false;
  private since: number;
  private probeAttempt = 0;
  private probeTimer?: NodeJS.Timeout;
  private syncWaiters: (() => void)[] = [];
  private watchdog?: NodeJS.Timeout;
  /** Until the first complete sync, changes are held back and delivered as one batch. */
  private initial: KnownStep | undefined = { events: [], issues: [] };

  constructor(private readonly opts: ApiSourceOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.since = this.now();
  }

  /** Starts probing and watching; retries with backoff while the API server is unreachable. */
  start(): void {
    this.closed = false;
    this.since = this.now();
    void this.probe();
    const idleMs = this.opts.watchIdleMs ?? ((this.opts.watchTimeoutSeconds ?? 300) + 60) * 1000;
    this.watchdog = setInterval(() => this.checkIdle(idleMs), this.opts.watchdogIntervalMs ?? 10_000);
    this.watchdog.unref();
  }

  /** Reconnects watches that have been silent too long (a dead peer can leave TCP open for many minutes). */
  private checkIdle(idleMs: number): void {
    for (const w of this.watches) if (w.connected) w.lw?.checkIdle(idleMs);
  }

  /** Forces a relist of every resource (the diff emits only real changes). */
  resync(): void {
    for (const w of this.watches) w.lw?.restart();
  }

  /** The valid resources currently known, by resource key. */
  current(): Map<string, Resource> {
    const out = new Map<string, Resource>();
    for (const w of this.watches) for (const r of w.known.resources()) out.set(keyOf(r), r);
    return out;
  }

  /** The Kubernetes UID of a known object (for Events that `kubectl describe` finds), by kind and name. */
  uidOf(kind: ResourceKind, name: string, namespace?: string): string | undefined {
    return this.watches.find((w) => w.def.kind === kind)?.known.uidOf(name, namespace);
  }

  /** Resolves once every resource has been listed at least once. */
  synced(): Promise<void> {
    if (this.isSynced()) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Every resource listed at least once and currently watching. */
  private isSynced(): boolean {
    return this.watches.length > 0 && this.watches.every((w) => w.synced);
  }

  status(): ApiSourceStatus {
    const resources: Record<string, ResourceStatus> = {};
    const watchRestarts: Record<string, number> = {};
    for (const w of this.watches) {
      const restarts = Math.max(0, w.connects - 1);
      resources[w.def.plural] = {
        connected: w.connected,
        synced: w.synced,
        watchRestarts: restarts,
        failures: w.failures,
        objects: w.known.size,
        lastError: w.lastError,
      };
      watchRestarts[w.def.plural] = restarts;
    }
    return {
      server: this.opts.client.server,
      connected: this.connected,
      synced: this.isSynced(),
      since: this.since,
      lastSyncAt: this.lastSyncAt,
      calicoApi: this.calicoApi,
      resources,
      watchRestarts,
      failures: this.failures,
      lastError: this.lastError,
    };
  }

  /** Issues of every object whose newest version is invalid. */
  issues(): ManifestIssue[] {
    return this.watches.flatMap((w) => w.known.issues());
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    for (const w of this.watches) {
      w.connected = false;
      w.lw?.stop();
    }
    this.connected = false;
  }

  /** Recomputes `connected`; on a change notes the time and tells `onConnectionChange`. */
  private noteConnection(): void {
    const now = this.watches.length > 0 && this.watches.every((w) => w.connected);
    if (now === this.connected || this.closed) return;
    this.connected = now;
    this.since = this.now();
    this.opts.onConnectionChange?.(now);
  }

  private async probe(): Promise<void> {
    if (this.closed) return;
    try {
      this.calicoApi = this.opts.calicoApi ?? (await probeCalicoApi(this.opts.client));
    } catch (e) {
      this.noteError(e as Error);
      const delay = backoffDelay(this.probeAttempt++, this.backoff, this.random());
      this.probeTimer = setTimeout(() => void this.probe(), delay);
      return;
    }
    if (this.closed) return;
    const api = this.calicoApi;
    this.watches = watchedResources(api).map((d) => new ResourceWatch(d, new KnownObjects(d.kind, apiVersionOf(d))));
    for (const w of this.watches) this.connect(w);
  }

  private noteError(err: Error, w?: ResourceWatch): void {
    const message = err.message;
    const text = w ? `${w.def.plural}: ${message}` : message;
    this.lastError = text;
    this.failures++;
    if (w) {
      w.lastError = message;
      w.failures++;
    }
    this.opts.onError?.(err, w?.def.plural);
  }

  private emit(step: KnownStep): void {
    if (this.initial) {
      this.initial.events.push(...step.events);
      this.initial.issues.push(...step.issues);
      if (!this.isSynced()) return;
      step = this.initial;
      this.initial = undefined;
    }
    if (step.events.length > 0 || step.issues.length > 0) this.opts.onChange(step.events, step.issues);
  }

  /**
   * One ListWatch per resource (list-watch.ts): each list is diffed against
   * what is known (KnownObjects.replaceAll), each watch event's object goes to
   * KnownObjects in full; the loop itself keeps only the resourceVersion.
   */
  private connect(w: ResourceWatch): void {
    if (this.closed) return;
    const lw = new ListWatch({
      client: this.opts.client,
      path: collectionPath(w.def),
      timeoutSeconds: this.opts.watchTimeoutSeconds ?? 300,
      backoff: this.backoff,
      random: this.random,
      now: this.now,
      // a list's pages are validated as they arrive (no list is held whole), its deletions come at its end
      onListStart: () => w.known.beginList(),
      onListPage: (items) => {
        if (!this.closed) this.emit(w.known.listPage(items));
      },
      onListEnd: () => {
        if (this.closed) return;
        w.connected = true;
        w.synced = true;
        w.lastError = undefined;
        this.lastSyncAt = this.now();
        this.noteConnection();
        this.emit(w.known.endList());
        if (this.isSynced()) for (const r of this.syncWaiters.splice(0)) r();
      },
      onEvent: (type, obj) => {
        if (!this.closed) this.emit(type === 'DELETED' ? w.known.remove(obj) : w.known.upsert(obj));
      },
      onWatch: () => {
        w.connects++;
        if (w.connects > 1) this.opts.onWatchRestart?.(w.def.plural);
      },
      onError: (e) => {
        w.connected = false;
        this.noteError(e, w);
        this.noteConnection();
      },
    });
    w.lw = lw;
    lw.start();
  }
}
