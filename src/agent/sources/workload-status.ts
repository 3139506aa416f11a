/**
 * Felix's endpoint-status directory (shell): one JSON file per workload on
 * this node, naming the BGPPeer whose localWorkloadSelector chose it (the
 * format and the peerings: src/kubernetes/workloads.ts). Read at start,
 * watched (fs.watch, and a rescan every `pollMs` in case a change is missed or
 * the directory comes and goes), and turned into WorkloadEvents.
 *
 * Bad input: a file that does not decode (empty while Felix writes it, not
 * JSON, a bad address) is an error issue naming the file and field, and the
 * file's last valid content stays in force until it decodes again or is
 * removed. A missing directory is no workloads (Felix has not made it yet).
 */
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EndpointStatusError, parseEndpointStatus, type LocalWorkloadEndpoint, type ManifestIssue } from '../../kubernetes/index.js';
import type { ClusterEvent, WorkloadEvent } from '../../kubernetes/index.js';
import type { ConfigSource } from './index.js';

/** Calico's: EndpointStatusPathPrefix (default /var/run/calico) + `endpoint-status`. */
export const DEFAULT_ENDPOINT_STATUS_DIR = '/var/run/calico/endpoint-status';

/** confd's way to move it: $CALICO_ENDPOINT_STATUS_PATH_PREFIX/endpoint-status, else the default. */
export function endpointStatusDirFromEnv(env: NodeJS.ProcessEnv): string {
  const prefix = env.CALICO_ENDPOINT_STATUS_PATH_PREFIX;
  return prefix ? join(prefix, 'endpoint-status') : DEFAULT_ENDPOINT_STATUS_DIR;
}

export interface EndpointStatusWatcher {
  /** Rescans now; resolves once its changes have been delivered. */
  reload(): Promise<void>;
  /** The files that do not decode now (their last valid content is in force). */
  issues(): ManifestIssue[];
  close(): void;
}

interface Known {
  readonly text: string;
  readonly endpoint: LocalWorkloadEndpoint;
}

/** Reads every file of `dir` once: the endpoints and the issues (for `tsbgp plan`). */
export async function loadEndpointStatus(dir: string): Promise<{ events: WorkloadEvent[]; issues: ManifestIssue[] }> {
  const known = new Map<string, Known>();
  const bad = new Map<string, ManifestIssue>();
  const events = await scan(dir, known, bad);
  return { events, issues: [...bad.values()] };
}

function issueOf(dir: string, e: unknown, file: string): ManifestIssue {
  const path = join(dir, file);
  if (e instanceof EndpointStatusError)
    return { severity: 'error', file: path, ...(e.field ? { path: e.field } : {}), message: `${e.detail}; its last valid content stays in force` };
  return { severity: 'error', file: path, message: `cannot read: ${(e as Error).message}; its last valid content stays in force` };
}

/** One pass: compares the directory with `known`, updates it and `bad`, returns the changes. */
async function scan(dir: string, known: Map<string, Known>, bad: Map<string, ManifestIssue>): Promise<WorkloadEvent[]> {
  const events: WorkloadEvent[] = [];
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() && !d.name.startsWith('.')).map((d) => d.name);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ENOTDIR') throw e;
    names = [];
  }
  const present = new Set(names);
  for (const name of names.sort()) {
    let text: string;
    try {
      text = await readFile(join(dir, name), 'utf8');
    } catch (e) {
      // Removed between the listing and the read: the next pass sees it gone.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        present.delete(name);
        continue;
      }
      bad.set(name, issueOf(dir, e, name));
      continue;
    }
    if (known.get(name)?.text === text) {
      bad.delete(name);
      continue;
    }
    try {
      const endpoint = parseEndpointStatus(name, text);
      known.set(name, { text, endpoint });
      bad.delete(name);
      events.push({ type: 'workload', file: name, endpoint });
    } catch (e) {
      bad.set(name, issueOf(dir, e, name));
    }
  }
  for (const name of [...known.keys()]) {
    if (present.has(name)) continue;
    known.delete(name);
    events.push({ type: 'workload', file: name });
  }
  for (const name of [...bad.keys()]) if (!present.has(name)) bad.delete(name);
  return events;
}

/** Watches `dir`; `onChange` gets each pass's changes with the current issues (also when only the issues changed). */
export async function watchEndpointStatus(
  dir: string,
  opts: { debounceMs?: number; pollMs?: number; onChange: (events: WorkloadEvent[], issues: ManifestIssue[]) => void; onError?: (e: Error) => void },
): Promise<EndpointStatusWatcher> {
  const known = new Map<string, Known>();
  const bad = new Map<string, ManifestIssue>();
  const debounceMs = opts.debounceMs ?? 100;
  let closed = false;
  let chain: Promise<void> = Promise.resolve();
  let lastIssues = '[]';
  let fsw: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;

  const pass = (): Promise<void> =>
    (chain = chain.then(async () => {
      if (closed) return;
      try {
        const events = await scan(dir, known, bad);
        const issues = [...bad.values()];
        const key = JSON.stringify(issues);
        if (events.length > 0 || key !== lastIssues) {
          lastIssues = key;
          if (!closed) opts.onChange(events, issues);
        }
      } catch (e) {
        opts.onError?.(new Error(`endpoint-status directory ${dir}: ${(e as Error).message}`));
      }
      ensureWatch();
    }));

  const soon = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void pass();
    }, debounceMs);
  };

  // fs.watch needs the directory: until it exists (or after it goes) the poll finds it.
  const ensureWatch = () => {
    if (fsw || closed) return;
    try {
      fsw = watch(dir, { persistent: false }, soon);
      fsw.on('error', () => {
        fsw?.close();
        fsw = undefined;
        soon();
      });
    } catch {
      fsw = undefined;
    }
  };

  const poll = setInterval(() => void pass(), opts.pollMs ?? 10_000);
  poll.unref();
  await pass();
  return {
    reload: () => pass(),
    issues: () => [...bad.values()],
    close: () => {
      closed = true;
      clearInterval(poll);
      if (timer) clearTimeout(timer);
      fsw?.close();
    },
  };
}

/**
 * A ConfigSource that adds this node's workloads (from `dir`) to `base`'s
 * resources: the directory is read once `base` has synced, its events go to
 * the same sink, and each batch carries both sources' current issues.
 */
export function withEndpointStatus(base: ConfigSource, dir: string, opts: { debounceMs?: number; pollMs?: number } = {}): ConfigSource {
  let watcher: EndpointStatusWatcher | undefined;
  let baseIssues: ManifestIssue[] = [];
  let workloadIssues: ManifestIssue[] = [];
  let closed = false;
  return {
    async start(sink) {
      await base.start({
        ...sink,
        onChange: (events: ClusterEvent[], issues) => {
          baseIssues = issues;
          sink.onChange(events, [...issues, ...workloadIssues]);
        },
      });
      const w = await watchEndpointStatus(dir, {
        ...opts,
        onChange: (events, issues) => {
          workloadIssues = issues;
          sink.onChange(events, [...baseIssues, ...issues]);
        },
        onError: (e) => sink.onError?.(e),
      });
      if (closed) w.close();
      else watcher = w;
    },
    status: () => base.status(),
    settle: async () => {
      await base.settle();
      await watcher?.reload();
    },
    close: async () => {
      closed = true;
      watcher?.close();
      await base.close();
    },
  };
}
