/** Manifest files and folders: listing, reading and watching them (the shell around src/kubernetes/manifests.ts). */
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { loadTexts, mergeWithPrevious, type LoadResult, type Resource, type ManifestIssue } from '../../kubernetes/index.js';

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

/** Loads and validates every manifest under `paths`; invalid resources are reported and skipped (src/kubernetes/manifests.ts `loadTexts`). */
export async function loadManifests(paths: readonly string[]): Promise<LoadResult> {
  const { files, issues } = await listManifestFiles(paths);
  return readAndLoad(files, issues);
}

async function readAndLoad(files: readonly string[], issues: ManifestIssue[]): Promise<LoadResult> {
  // Read as they are parsed and validated (loadTexts): one file's text in memory at a time.
  // Reading is synchronous like the parsing and validating around it (a file is read in about the time it takes to parse).
  function* texts(): Generator<{ file: string; text: string }> {
    for (const f of files) {
      let text: string;
      try {
        text = readFileSync(f, 'utf8');
      } catch (e) {
        issues.push({ severity: 'error', file: f, message: `cannot read: ${(e as Error).message}` });
        continue;
      }
      yield { file: f, text };
    }
  }
  return loadTexts(texts(), issues);
}

export type Entries = ReadonlyMap<string, { resource: Resource; file?: string }>;

/** One `--manifests` path: its running set, the issues of its last load, and the fault that keeps it as it was (missing, emptied). */
export interface LayerLoad {
  readonly entries: Entries;
  readonly issues: readonly ManifestIssue[];
  readonly fault: string | undefined;
}

/**
 * Loads one layer on top of what it held. A path that is missing or
 * unreadable, or a folder with no manifest file left of those that defined
 * resources, is a fault, never a
 * deletion (a folder being replaced, a volume not mounted yet, `rm -rf` by
 * mistake): the layer keeps every resource it had, and the fault is an error
 * naming the path until it returns. Within the layer, `loadTexts` keeps what
 * a broken or emptied file defined.
 */
export async function loadLayer(path: string, prev: Entries): Promise<LayerLoad> {
  const keep = (why: string): LayerLoad => {
    const fault =
      prev.size === 0
        ? `${why}: picked up when it appears`
        : `${why}: keeping the ${prev.size} resource${prev.size === 1 ? '' : 's'} last loaded from it until it returns`;
    return { entries: prev, issues: [{ severity: 'error', file: path, message: fault }], fault: `${path}: ${fault}` };
  };
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    return keep(`cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const { files, issues } = await listManifestFiles([path]);
  // An empty folder is a fault only when it held something: one created empty (an overlay to fill later) is just empty.
  if (st.isDirectory() && files.length === 0 && issues.length === 0 && prev.size > 0) return keep('no manifest files in this folder');
  const loaded = await readAndLoad(files, issues);
  return { entries: mergeWithPrevious(prev, loaded), issues: loaded.issues, fault: undefined };
}

export interface PathWatch {
  close(): void;
}

/** The nearest folder above `path` that exists, and the name under it that leads to `path`. */
async function anchorOf(path: string): Promise<{ dir: string; name: string } | undefined> {
  let child = resolve(path);
  for (;;) {
    const dir = dirname(child);
    if (dir === child) return undefined;
    const st = await stat(dir).catch(() => undefined);
    if (st?.isDirectory()) return { dir, name: basename(child) };
    child = dir;
  }
}

/**
 * Watches one `--manifests` path, whatever becomes of it: its folder and
 * every folder below that the loader reads (not hidden ones), and the
 * nearest existing folder above it for the path itself coming, going or
 * being replaced. So a path that does not exist yet, or that is deleted and
 * created again, is picked up when it appears, by events, without polling.
 * The set of watches is worked out again after every change.
 *
 * Each folder has its own plain watch: Node 20's recursive watch on Linux
 * follows files by inode and misses a file replaced a second time by one
 * renamed in from elsewhere; a watch on the folder itself sees every entry
 * change (an editor saving by rename, a ConfigMap volume's `..data` symlink
 * swap in the top folder).
 */
export async function watchPath(path: string, onChange: () => void, onError: (e: Error) => void): Promise<PathWatch> {
  /** Folder → the one entry name that matters in it (the way to `path`), or every entry (null). */
  const watched = new Map<string, { w: FSWatcher; only: string | null }>();
  let closed = false;
  let syncing: Promise<void> = Promise.resolve();
  const folders = async (dir: string, out: Map<string, string | null>): Promise<void> => {
    out.set(dir, null);
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
    const want = new Map<string, string | null>();
    const anchor = await anchorOf(path);
    if (anchor) want.set(anchor.dir, anchor.name);
    const st = await stat(path).catch(() => undefined);
    if (st?.isDirectory()) await folders(resolve(path), want);
    if (closed) return;
    for (const [dir, { w, only }] of watched) {
      if (want.has(dir) && want.get(dir) === only) continue;
      w.close();
      watched.delete(dir);
    }
    for (const [dir, only] of want) {
      if (watched.has(dir)) continue;
      try {
        const w = watch(dir, (_e, name) => {
          // Any event may mean the folder itself went (its own deletion names it): look again.
          if (only === null || name === null || name === only) onChange();
          resync();
        });
        w.on('error', () => {
          // The folder went away (its watch dies with it); re-listing drops it.
          w.close();
          watched.delete(dir);
          onChange();
          resync();
        });
        watched.set(dir, { w, only });
      } catch (e) {
        // Gone between the listing and the watch: the watch above it sees that.
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') onError(e as Error);
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
      for (const { w } of watched.values()) w.close();
      watched.clear();
    },
  };
}
