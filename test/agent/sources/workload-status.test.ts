import { mkdir, mkdtemp, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  endpointStatusDirFromEnv,
  loadEndpointStatus,
  watchEndpointStatus,
  withEndpointStatus,
  type EndpointStatusWatcher,
} from '../../../src/agent/sources/workload-status.js';
import type { ConfigSource, SourceSink } from '../../../src/agent/sources/index.js';
import type { ManifestIssue } from '../../../src/kubernetes/validate.js';
import type { ClusterEvent, WorkloadEvent } from '../../../src/kubernetes/state.js';
import type { LocalWorkloadEndpoint } from '../../../src/kubernetes/workloads.js';

/** Felix's endpoint-status JSON for one workload. */
const status = (ip: string, peerName?: string) =>
  JSON.stringify({ ifaceName: 'cali0123456789a', ipv4Nets: [`${ip}/32`], ...(peerName ? { bgpPeerName: peerName } : {}) });

let root: string;
let dir: string;
let w: EndpointStatusWatcher | undefined;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tsbgp-epstatus-'));
  dir = join(root, 'endpoint-status');
});
afterEach(async () => {
  w?.close();
  w = undefined;
  await rm(root, { recursive: true, force: true });
});

/** What the events say the directory holds, and the last issues, as a sink sees them. */
function collector() {
  const state = new Map<string, LocalWorkloadEndpoint>();
  const log: { events: WorkloadEvent[]; issues: ManifestIssue[] }[] = [];
  let waiters: (() => void)[] = [];
  return {
    state,
    log,
    issues: () => log.at(-1)?.issues ?? [],
    onChange: (events: WorkloadEvent[], issues: ManifestIssue[]) => {
      log.push({ events, issues });
      for (const e of events) {
        if (e.endpoint) state.set(e.file, e.endpoint);
        else state.delete(e.file);
      }
      const ws = waiters;
      waiters = [];
      for (const f of ws) f();
    },
    /** Resolves at the next delivery. */
    next: () => new Promise<void>((r) => waiters.push(r)),
  };
}
const ips = (state: Map<string, LocalWorkloadEndpoint>) => Object.fromEntries([...state].map(([f, e]) => [f, `${e.ipv4Nets[0]} ${e.bgpPeerName ?? '-'}`]));

describe('endpoint-status directory source', () => {
  it('a missing directory is no workloads; files appear, change and vanish as events', async () => {
    const c = collector();
    w = await watchEndpointStatus(dir, { debounceMs: 5, pollMs: 3_600_000, onChange: c.onChange });
    expect(c.log).toEqual([]);
    await mkdir(dir);
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    await writeFile(join(dir, 'pod-b'), status('198.51.100.8'));
    await w.reload();
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.7/32 vm-routers', 'pod-b': '198.51.100.8/32 -' });
    const before = c.log.length;
    // Rewritten with the same content: no event.
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    await w.reload();
    expect(c.log.slice(before).flatMap((l) => l.events)).toEqual([]);
    await writeFile(join(dir, 'pod-a'), status('198.51.100.9', 'vm-routers'));
    await unlink(join(dir, 'pod-b'));
    await w.reload();
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.9/32 vm-routers' });
    // The directory goes (Felix's state cleared): its workloads go with it.
    await rm(dir, { recursive: true });
    await w.reload();
    expect(c.state.size).toBe(0);
    expect(c.issues()).toEqual([]);
  });

  it('a malformed file is an error naming the file and field; its last valid content stays until it decodes again or goes', async () => {
    await mkdir(dir);
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    const c = collector();
    w = await watchEndpointStatus(dir, { debounceMs: 5, pollMs: 3_600_000, onChange: c.onChange });
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.7/32 vm-routers' });
    // Half written (Felix writes in place), and a new file that never decoded.
    await writeFile(join(dir, 'pod-a'), '{"ifaceName":"cali0123456789a","ipv4N');
    await writeFile(join(dir, 'pod-c'), JSON.stringify({ ipv4Nets: ['2001:db8::1/128'], bgpPeerName: 'vm-routers' }));
    await w.reload();
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.7/32 vm-routers' });
    expect(c.issues().map((i) => [i.severity, i.file, i.path])).toEqual([
      ['error', join(dir, 'pod-a'), undefined],
      ['error', join(dir, 'pod-c'), 'ipv4Nets[0]'],
    ]);
    expect(c.issues()[0].message).toMatch(/not JSON.*last valid content stays in force/);
    expect(c.issues()[1].message).toContain('is not an IPv4 network');
    expect(w.issues()).toEqual(c.issues());
    // Fixed: the new content applies and the issue clears; the bad file removed: its issue clears.
    await writeFile(join(dir, 'pod-a'), status('198.51.100.10', 'vm-routers'));
    await unlink(join(dir, 'pod-c'));
    await w.reload();
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.10/32 vm-routers' });
    expect(c.issues()).toEqual([]);
  });

  it('a change is picked up by the directory watch, without a reload or a poll', async () => {
    await mkdir(dir);
    const c = collector();
    w = await watchEndpointStatus(dir, { debounceMs: 5, pollMs: 3_600_000, onChange: c.onChange });
    const delivered = c.next();
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    await delivered;
    // The file may be seen mid-write (an issue) before it is whole: wait for the endpoint.
    while (!c.state.has('pod-a')) await c.next();
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.7/32 vm-routers' });
  });

  it('a directory created after the start is found by the poll', async () => {
    const c = collector();
    w = await watchEndpointStatus(dir, { debounceMs: 5, pollMs: 20, onChange: c.onChange });
    await mkdir(dir);
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    while (!c.state.has('pod-a')) await c.next();
    expect(ips(c.state)).toEqual({ 'pod-a': '198.51.100.7/32 vm-routers' });
  });

  it('loadEndpointStatus reads a directory once (tsbgp plan)', async () => {
    await mkdir(dir);
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    await writeFile(join(dir, 'pod-b'), '');
    const r = await loadEndpointStatus(dir);
    expect(r.events.map((e) => [e.file, e.endpoint?.bgpPeerName])).toEqual([['pod-a', 'vm-routers']]);
    expect(r.issues.map((i) => [i.file, i.message.split(';')[0]])).toEqual([[join(dir, 'pod-b'), 'empty (being written?)']]);
  });

  it("the directory follows confd's CALICO_ENDPOINT_STATUS_PATH_PREFIX, else Calico's default", () => {
    expect(endpointStatusDirFromEnv({ CALICO_ENDPOINT_STATUS_PATH_PREFIX: '/run/x' })).toBe('/run/x/endpoint-status');
    expect(endpointStatusDirFromEnv({})).toBe('/var/run/calico/endpoint-status');
  });

  it("withEndpointStatus adds the workloads to another source, each batch carrying both sources' issues", async () => {
    await mkdir(dir);
    await writeFile(join(dir, 'pod-a'), status('198.51.100.7', 'vm-routers'));
    await writeFile(join(dir, 'pod-z'), 'nonsense');
    const baseIssue: ManifestIssue = { severity: 'warning', file: 'm.yaml', message: 'from the base' };
    let baseSink: SourceSink | undefined;
    let closed = false;
    const base: ConfigSource = {
      start: async (sink) => {
        baseSink = sink;
        sink.onChange([], [baseIssue]);
      },
      status: () => ({
        kind: 'manifests',
        paths: [],
        server: null,
        calicoApi: null,
        connected: true,
        synced: true,
        since: new Date(0),
        lastSyncAt: null,
        lastError: null,
        watchRestarts: 0,
      }),
      settle: async () => {},
      close: async () => {
        closed = true;
      },
    };
    const batches: { events: ClusterEvent[]; issues: ManifestIssue[] }[] = [];
    const src = withEndpointStatus(base, dir, { debounceMs: 5, pollMs: 3_600_000 });
    await src.start({ onChange: (events, issues) => batches.push({ events, issues }) });
    expect(batches.map((b) => [b.events.map((e) => (e.type === 'workload' ? e.file : e.type)), b.issues.map((i) => i.file)])).toEqual([
      [[], ['m.yaml']],
      [['pod-a'], ['m.yaml', join(dir, 'pod-z')]],
    ]);
    baseSink!.onChange([], []);
    expect(batches.at(-1)!.issues.map((i) => i.file)).toEqual([join(dir, 'pod-z')]);
    await unlink(join(dir, 'pod-z'));
    await src.settle();
    expect(batches.at(-1)!.issues).toEqual([]);
    await src.close();
    expect(closed).toBe(true);
  });
});
