/**
 * Where the agent's configuration comes from. A `ConfigSource` turns files or
 * the Kubernetes API into batches of ClusterEvents plus the current issues;
 * the agent feeds both kinds to the same planner and cannot tell them apart.
 *
 * Manifest paths are layers: each `--manifests PATH` is loaded on its own and
 * a resource in a later layer replaces the same kind/namespace/name from an
 * earlier one, as if the files were applied in order (`base/` then the lab's
 * `steps/`). Within one layer a second definition is an error (first wins).
 */
import {
  eventsBetween,
  keyOf,
  mergeWithPrevious,
  resourceKey,
  type ClusterEvent,
  type ResourceEvent,
  type ManifestIssue,
  type Resource,
} from '../../kubernetes/index.js';
import { loadManifests, loadLayer, watchPath, type LayerLoad } from './manifest-files.js';

import type { Entries } from './manifest-files.js';

/** Later layers win; key order, so events come out the same whatever the layer order. */
export function combineLayers(layers: readonly Entries[]): Map<string, { resource: Resource; file?: string }> {
  const out = new Map<string, { resource: Resource; file?: string }>();
  for (const l of layers) for (const [k, v] of l) out.set(k, v);
  return new Map([...out.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/** One-shot load (for `tsbgp plan`). */
export async function loadLayers(paths: readonly string[]): Promise<{ resources: Resource[]; issues: ManifestIssue[] }> {
  const layers: Entries[] = [];
  const issues: ManifestIssue[] = [];
  for (const p of paths) {
    const loaded = await loadManifests([p]);
    layers.push(mergeWithPrevious(new Map(), loaded));
    issues.push(...loaded.issues);
  }
  return { resources: [...combineLayers(layers).values()].map((e) => e.resource), issues };
}

export interface LayerWatcher {
  readonly current: ReadonlyMap<string, { resource: Resource; file?: string }>;
  /** What keeps layers as they were now (a path missing, a folder emptied), one line each; [] when every layer loaded. */
  readonly faults: readonly string[];
  /** Loads every layer again now. */
  reload(): Promise<void>;
  close(): void;
}

/** The resource key an event is about. */
function eventKey(ev: ResourceEvent): string {
  return ev.type === 'delete' ? resourceKey(ev.kind, ev.name, ev.namespace) : keyOf(ev.resource);
}

/**
 * One watcher over every layer, with one diff. A change under a layer's
 * path reloads that layer (debounced; reloads never interleave); the events
 * reported turn the previous combined set into the new one, and the issues
 * are every layer's. Only the keys the reloaded layers changed are looked at
 * again (the topmost layer holding a key wins), so a small layer's edit
 * costs the same however large the others are. A layer that goes missing or
 * empties keeps its resources (`loadLayer`), and a path that appears later
 * is picked up when it does (`watchPath`).
 */
export async function watchLayers(
  paths: readonly string[],
  opts: { debounceMs?: number; onChange: (events: ResourceEvent[], issues: ManifestIssue[]) => void; onError?: (e: Error) => void },
): Promise<LayerWatcher> {
  const debounceMs = opts.debounceMs ?? 200;
  const layers: LayerLoad[] = paths.map(() => ({ entries: new Map(), issues: [], fault: undefined }));
  /** Every layer's resources, the topmost winning; with one layer, that layer's own map (not a copy of it). */
  let combined: ReadonlyMap<string, { resource: Resource; file?: string }> = new Map();
  const dirty = new Set<number>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const topmost = (key: string) => {
    for (let i = layers.length - 1; i >= 0; i--) {
      const e = layers[i].entries.get(key);
      if (e) return e;
    }
    return undefined;
  };
  const issues = () => layers.flatMap((l) => l.issues);
  /** Reloads the given layers; the events between the combined sets before and after. */
  const reloadLayers = async (which: readonly number[]): Promise<ResourceEvent[]> => {
    const changed = new Set<string>();
    for (const i of which) {
      const before = layers[i].entries;
      layers[i] = await loadLayer(paths[i], before);
      const after = layers[i].entries;
      if (after === before) continue;
      for (const [k, v] of after) if (before.get(k) !== v) changed.add(k);
      for (const k of before.keys()) if (!after.has(k)) changed.add(k);
    }
    const before = new Map<string, { resource: Resource; file?: string }>();
    const after = new Map<string, { resource: Resource; file?: string }>();
    const single = layers.length === 1;
    for (const key of [...changed].sort()) {
      const old = combined.get(key);
      const now = topmost(key);
      if (old) before.set(key, old);
      if (now) after.set(key, now);
      if (single) continue;
      if (now) (combined as Map<string, { resource: Resource; file?: string }>).set(key, now);
      else (combined as Map<string, { resource: Resource; file?: string }>).delete(key);
    }
    // One layer: its new map is the combined set (in key order, as mergeWithPrevious leaves it).
    if (single) combined = layers[0].entries;
    return eventsBetween(before, after);
  };
  // The first load, then every reload, one at a time.
  let running: Promise<void> = (async () => {
    for (const [i, p] of paths.entries()) layers[i] = await loadLayer(p, new Map());
    combined = layers.length === 1 ? layers[0].entries : combineLayers(layers.map((l) => l.entries));
    opts.onChange(eventsBetween(new Map(), combined), issues());
  })();
  const reload = (which: readonly number[]) =>
    (running = running
      .then(async () => {
        if (closed) return;
        const events = await reloadLayers(which);
        if (!closed) opts.onChange(events, issues());
      })
      .catch((e: Error) => opts.onError?.(e)));
  const schedule = (i: number) => {
    if (closed) return;
    dirty.add(i);
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      const which = [...dirty].sort((a, b) => a - b);
      dirty.clear();
      void reload(which);
    }, debounceMs);
  };
  // Watching starts before the first load completes, so no change in between is missed.
  const watches = await Promise.all(
    paths.map((p, i) =>
      watchPath(
        p,
        () => schedule(i),
        (e) => opts.onError?.(e),
      ),
    ),
  );
  try {
    await running;
  } catch (e) {
    for (const w of watches) w.close();
    throw e;
  }
  return {
    get current() {
      return combined;
    },
    get faults() {
      return layers.flatMap((l) => (l.fault ? [l.fault] : []));
    },
    reload: () => reload(paths.map((_p, i) => i)),
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watches) w.close();
    },
  };
}

/** What a source tells `tsbgp status`, the metrics and /readyz. */
export interface SourceStatus {
  readonly kind: 'manifests' | 'kubernetes';
  /** The manifest paths (layers, in order); [] for the Kubernetes API. */
  readonly paths: readonly string[];
  /** The API server URL; null for manifests. */
  readonly server: string | null;
  /** The Calico API read (`crd.projectcalico.org/v1` or `projectcalico.org/v3`); null for manifests or before discovery. */
  readonly calicoApi: string | null;
  /** Manifests: always true. API: every resource listed and watching. */
  readonly connected: boolean;
  /** The first complete load (API: list of every resource) is done. */
  readonly synced: boolean;
  /** When `connected` last changed (the start for a source that never changed). */
  readonly since: Date;
  /** The last complete list of any resource (API), or the last load (manifests); null before the first. */
  readonly lastSyncAt: Date | null;
  readonly lastError: string | null;
  /** API watches restarted since the start (drops, timeouts, 410 relists); 0 for manifests. */
  readonly watchRestarts: number;
  /** API requests (discovery, lists, watches) that failed since the start, every retry counted; absent for manifests. */
  readonly failedRequests?: number;
}

export interface SourceSink {
  /** A batch of changes, and every issue (invalid object or file) the source currently has. */
  readonly onChange: (events: ClusterEvent[], issues: ManifestIssue[]) => void;
  /** The source lost or regained its upstream (the API server); its last state stays in force meanwhile. */
  readonly onConnectionChange?: (connected: boolean, status: SourceStatus) => void;
  readonly onWatchRestart?: (resource: string) => void;
  readonly onError?: (e: Error) => void;
}

export interface ConfigSource {
  /** Starts delivering to `sink`; resolves after the first complete load (API: first sync). */
  start(sink: SourceSink): Promise<void>;
  status(): SourceStatus;
  /** Resolves once changes already made at the source have been delivered (manifests: a reload). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/** `--manifests PATH...`: the layers, watched; a file source is always "connected". */
export function manifestSource(paths: readonly string[], opts: { debounceMs?: number; now?: () => Date } = {}): ConfigSource {
  const now = opts.now ?? (() => new Date());
  const startedAt = now();
  let watcher: LayerWatcher | undefined;
  let lastLoad: Date | null = null;
  let lastError: string | null = null;
  let closed = false;
  return {
    async start(sink) {
      const w = await watchLayers(paths, {
        debounceMs: opts.debounceMs,
        onChange: (events, issues) => {
          lastLoad = now();
          sink.onChange(events, issues);
        },
        onError: (e) => {
          lastError = e.message;
          sink.onError?.(e);
        },
      });
      // Closed while loading: do not leave file watches behind.
      if (closed) w.close();
      else watcher = w;
    },
    // A missing or emptied layer is the current error (its resources stay in force meanwhile).
    status: () => ({
      kind: 'manifests',
      paths: [...paths],
      server: null,
      calicoApi: null,
      connected: true,
      synced: lastLoad !== null,
      since: startedAt,
      lastSyncAt: lastLoad,
      lastError: watcher?.faults.join('; ') || lastError,
      watchRestarts: 0,
    }),
    settle: async () => {
      await watcher?.reload();
    },
    close: async () => {
      closed = true;
      watcher?.close();
    },
  };
}
