/** Manifest files and folders: listing, reading and watching them (the shell around src/kubernetes/manifests.ts). */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { eventsBetween, mergeWithPrevious, parseManifestText, type LoadResult } from '../../kubernetes/manifests.js';
import type { Resource } from '../../kubernetes/resources.js';
import type { ClusterEvent } from '../../kubernetes/state.js';
import { validateAll, type ManifestIssue, type SourcedObject } from '../../kubernetes/validate.js';

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

/** Expands files and folders (recursively, `.yaml`/`.yml`/`.json`, sorted) into file paths. */
export async function listManifestFiles(paths: readonly string[]): Promise<{ files: string[]; issues: ManifestIssue[] }> {
  const files: string[] = [];
  const issues: ManifestIssue[] = [];
  const walk = async (p: string, top: boolean): Promise<void> => {
    let st;
    try {
      st = await stat(p);
    } catch (e) {
      issues.push({ severity: 'error', file: p, message: `cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` });
      return;
    }
    if (st.isDirectory()) {
      const entries = (await readdir(p)).filter((n) => !n.startsWith('.')).sort();
      for (const n of entries) await walk(join(p, n), false);
    } else if (top || MANIFEST_EXT.test(p)) files.push(p);
  };
  for (const p of paths) await walk(p, true);
  return { files, issues };
}

/** Loads and validates every manifest under `paths`; invalid resources are reported and skipped. */
export async function loadManifests(paths: readonly string[]): Promise<LoadResult> {
  const { files, issues } = await listManifestFiles(paths);
  const objects: SourcedObject[] = [];
  const brokenFiles = new Set<string>();
  for (const f of files) {
    let text: string;
    try {
      text = await readFile(f, 'utf8');
    } catch (e) {
      issues.push({ severity: 'error', file: f, message: `cannot read: ${(e as Error).message}` });
      brokenFiles.add(f);
      continue;
    }
    const parsed = parseManifestText(text, f);
    if (parsed.issues.length > 0) brokenFiles.add(f);
    issues.push(...parsed.issues);
    objects.push(...parsed.objects);
  }
  for (const i of issues) if (i.file && i.severity === 'error' && !i.kind) brokenFiles.add(i.file);
  const v = validateAll(objects);
  return { resources: v.resources, files: v.files, issues: [...issues, ...v.issues], invalidKeys: v.invalidKeys, brokenFiles };
}

export interface ManifestWatcher {
  /** The running set, by resource key. */
  readonly current: ReadonlyMap<string, { resource: Resource; file?: string }>;
  /** Reloads now (also what a file change triggers after the debounce). */
  reload(): Promise<void>;
  close(): void;
}

export interface WatchOptions {
  readonly debounceMs?: number;
  /** Called after each reload with the events to apply and the issues of that load. */
  readonly onChange: (events: ClusterEvent[], issues: ManifestIssue[]) => void;
  readonly onError?: (err: Error) => void;
}

/**
 * Watches files/folders, reloading after changes settle (debounced), and
 * reports the events since the last load. The first load runs at once.
 */
export async function watchManifests(paths: readonly string[], opts: WatchOptions): Promise<ManifestWatcher> {
  const debounceMs = opts.debounceMs ?? 200;
  let current = new Map<string, { resource: Resource; file?: string }>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  const watchers: FSWatcher[] = [];

  const reloadOnce = async () => {
    const next = await loadManifests(paths);
    const merged = mergeWithPrevious(current, next);
    const events = eventsBetween(current, merged);
    current = merged;
    opts.onChange(events, next.issues);
  };
  // Serialise reloads so two never interleave.
  const reload = () => (running = running.then(reloadOnce).catch((e: Error) => opts.onError?.(e)));
  const schedule = () => {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void reload();
    }, debounceMs);
  };

  await reload();
  const trees: FolderTree[] = [];
  for (const p of paths) {
    try {
      const st = await stat(p);
      if (st.isDirectory()) trees.push(await watchFolderTree(p, schedule, (e) => opts.onError?.(e)));
      else {
        // Watch the folder: editors that save by rename would orphan a watch on the file itself.
        const name = basename(p);
        watchers.push(watch(dirname(p), (_e, f) => (f === null || f === name) && schedule()));
      }
    } catch (e) {
      opts.onError?.(e as Error);
    }
  }
  return {
    get current() {
      return current;
    },
    reload: () => reload(),
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
      for (const t of trees) t.close();
    },
  };
}

interface FolderTree {
  close(): void;
}

/**
 * Watches a folder and every folder below it that the loader reads (not
 * hidden ones), each with its own plain watch, re-listed after every change
 * so new folders are covered and removed ones let go. Node 20's recursive
 * watch on Linux follows files by inode and misses a file replaced a second
 * time by one renamed in from elsewhere; a watch on the folder itself sees
 * every entry change. A ConfigMap volume's `..data` symlink swap is an entry
 * change of the top folder.
 */
async function watchFolderTree(root: string, onChange: () => void, onError: (e: Error) => void): Promise<FolderTree> {
  const watched = new Map<string, FSWatcher>();
  let closed = false;
  let syncing: Promise<void> = Promise.resolve();
  const folders = async (dir: string, out: Set<string>): Promise<void> => {
    out.add(dir);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return; // gone meanwhile: the next change re-lists
    }
    for (const n of names) {
      if (n.startsWith('.')) continue;
      const p = join(dir, n);
      const st = await stat(p).catch(() => undefined);
      if (st?.isDirectory()) await folders(p, out);
    }
  };
  const sync = async () => {
    const want = new Set<string>();
    await folders(root, want);
    if (closed) return;
    for (const [dir, w] of watched) {
      if (want.has(dir)) continue;
      w.close();
      watched.delete(dir);
    }
    for (const dir of want) {
      if (watched.has(dir)) continue;
      try {
        const w = watch(dir, () => {
          onChange();
          resync();
        });
        w.on('error', () => {
          // The folder went away (its watch dies with it); re-listing drops it.
          w.close();
          watched.delete(dir);
          resync();
        });
        watched.set(dir, w);
      } catch (e) {
        if (dir === root) onError(e as Error);
      }
    }
  };
  // A burst of changes re-lists once: a re-list still waiting to start covers them all.
  let queued = false;
  const resync = () => {
    if (queued) return;
    queued = true;
    syncing = syncing
      .then(() => {
        queued = false;
        return sync();
      })
      .catch((e: Error) => onError(e));
  };
  resync();
  await syncing;
  return {
    close() {
      closed = true;
      for (const w of watched.values()) w.close();
      watched.clear();
    },
  };
}
