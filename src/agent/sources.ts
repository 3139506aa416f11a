/**
 * Manifest paths as layers: each `--manifests PATH` is loaded on its own and
 * a resource in a later layer replaces the same kind/namespace/name from an
 * earlier one, as if the files were applied in order (`base/` then the lab's
 * `steps/`). Within one layer a second definition is an error (first wins).
 */
import { eventsBetween, loadManifests, mergeWithPrevious, watchManifests, type ClusterEvent, type ManifestIssue, type ManifestWatcher, type Resource } from '../kubernetes/index.js';

type Entries = ReadonlyMap<string, { resource: Resource; file?: string }>;

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
  reload(): Promise<void>;
  close(): void;
}

/**
 * Watches every layer; after any layer reloads, reports the events that turn
 * the previous combined set into the new one, and every layer's issues.
 */
export async function watchLayers(paths: readonly string[], opts: { debounceMs?: number; onChange: (events: ClusterEvent[], issues: ManifestIssue[]) => void; onError?: (e: Error) => void }): Promise<LayerWatcher> {
  const watchers: (ManifestWatcher | undefined)[] = paths.map(() => undefined);
  const issues: ManifestIssue[][] = paths.map(() => []);
  let combined: Map<string, { resource: Resource; file?: string }> = new Map();
  let ready = false;
  const recombine = () => {
    const next = combineLayers(watchers.map((w) => w?.current ?? new Map()));
    const events = eventsBetween(combined, next);
    combined = next;
    opts.onChange(events, issues.flat());
  };
  for (const [i, p] of paths.entries()) {
    watchers[i] = await watchManifests([p], {
      debounceMs: opts.debounceMs,
      onChange: (_events, layerIssues) => {
        issues[i] = layerIssues;
        // During start-up the layers load one by one; report once, combined.
        if (ready) recombine();
      },
      onError: opts.onError,
    });
  }
  ready = true;
  recombine();
  return {
    get current() {
      return combined;
    },
    reload: async () => {
      for (const w of watchers) await w?.reload();
    },
    close: () => {
      for (const w of watchers) w?.close();
    },
  };
}
