import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesApiSource } from '../../../src/agent/sources/api-source.js';
import { loadKubeConfig, type ListWatch } from '../../../src/agent/sources/kube-client.js';
import { ClusterState } from '../../../src/kubernetes/state.js';
import type { ResourceEvent } from '../../../src/kubernetes/state.js';
import type { ManifestIssue } from '../../../src/kubernetes/validate.js';
import { RESOURCE_KINDS, type Node } from '../../../src/kubernetes/resources.js';
import { FakeApiServer, defaultResources } from '../../kubernetes/fake-apiserver.js';
import {
  CRD,
  everyKind,
  rawBgpFilter,
  rawBgpPeer,
  rawBlockAffinity,
  rawIpPool,
  rawNode,
  rawService,
  rawSlice,
  rawBgpConfiguration,
} from '../../kubernetes/api-fixtures.js';

const until = FakeApiServer.until;

interface Harness {
  server: FakeApiServer;
  source: KubernetesApiSource;
  state: ClusterState;
  events: ResourceEvent[];
  issues: ManifestIssue[];
  batches: { n: number };
}

const open: Harness[] = [];

async function setup(opts: { calicoV3?: boolean; seed?: Record<string, unknown>[]; idleMs?: number } = {}): Promise<Harness> {
  const server = new FakeApiServer(defaultResources({ calicoV3: opts.calicoV3 }));
  for (const o of opts.seed ?? everyKind()) server.apply(o);
  await server.start();
  const client = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
  const state = new ClusterState();
  const events: ResourceEvent[] = [];
  const issues: ManifestIssue[] = [];
  const batches = { n: 0 };
  const source = new KubernetesApiSource({
    client,
    backoff: { initialMs: 20, maxMs: 100, jitter: 0.5 },
    watchIdleMs: opts.idleMs,
    watchdogIntervalMs: 25,
    onChange: (evs, iss) => {
      batches.n++;
      for (const e of evs) state.apply(e);
      events.push(...evs);
      issues.push(...iss);
    },
  });
  const h = { server, source, state, events, issues, batches };
  open.push(h);
  source.start();
  await source.synced();
  return h;
}

afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.source.close();
    await h.server.stop();
  }
});

/** Waits for every watch to be open (so changes made now arrive through the watch). */
/**
 * Every resource has listed again and watches again (its watch restarted at least once): a relist's events are
 * delivered before its watch starts, so nothing of the relists is still to come (no waiting on the clock).
 */
async function relisted(h: Harness): Promise<void> {
  const all = () => Object.values(h.source.status().watchRestarts);
  await until(() => all().length === 8 && all().every((n) => n >= 1), 5000, 'every resource relisted');
}

/**
 * Every collection has been listed again since request `mark` and watched after that list: a list's events are
 * delivered before its watch is asked for, so nothing of the relists is still to come.
 */
async function relistedSince(h: Harness, mark: number): Promise<void> {
  const paths = [
    ...new Set(
      h.server.requests
        .slice(0, mark)
        .filter((r) => r.query.watch === 'true')
        .map((r) => r.path),
    ),
  ];
  expect(paths).toHaveLength(8);
  const done = (path: string) => {
    const since = h.server.requests.slice(mark).filter((r) => r.path === path);
    const list = since.findIndex((r) => r.method === 'GET' && r.query.watch === undefined);
    return list >= 0 && since.slice(list + 1).some((r) => r.query.watch === 'true');
  };
  await until(() => paths.every(done), 5000, 'every collection listed and watched again');
}

async function watching(h: Harness, n = 8): Promise<void> {
  await until(() => h.server.openWatches() >= n, 15_000, 'watches open');
}

describe('KubernetesApiSource', () => {
  it('initial sync emits one batch with an add per object of every kind, through the kubeconfig token', async () => {
    const h = await setup();
    expect(h.batches.n).toBe(1);
    expect(h.events.every((e) => e.type === 'add')).toBe(true);
    expect(h.events.map((e) => (e.type === 'delete' ? e.kind : e.resource.kind)).sort()).toEqual(RESOURCE_KINDS.filter((k) => k !== 'Secret').sort());
    expect(h.state.all()).toHaveLength(8);
    expect(h.state.slicesOf('default', 'web').map((s) => s.name)).toEqual(['web-abc']);
    const st = h.source.status();
    expect(st.connected).toBe(true);
    expect(st.calicoApi).toBe(CRD);
    expect(st.lastSyncAt).toBeTypeOf('number');
    expect(Object.keys(st.watchRestarts).sort()).toEqual([
      'bgpconfigurations',
      'bgpfilters',
      'bgppeers',
      'blockaffinities',
      'endpointslices',
      'ippools',
      'nodes',
      'services',
    ]);
    // The watch starts from the list's resourceVersion and asks for bookmarks.
    await watching(h);
    const w = h.server.requests.find((r) => r.path === '/api/v1/nodes' && r.query.watch === 'true');
    expect(w?.query.resourceVersion).toBe(String(108));
    expect(h.server.requests.some((r) => r.path === '/apis/crd.projectcalico.org/v1/bgppeers')).toBe(true);
  });

  it('add, update and delete of every watched kind reach the events and the state', async () => {
    const h = await setup({ seed: [] });
    await watching(h);
    const objs = [
      rawNode('n2', '192.168.1.20'),
      rawService('api', '10.96.0.20'),
      rawSlice('api-1', 'api', ['n2']),
      rawBgpConfiguration(64513),
      rawBgpPeer('p2', '192.168.1.2', 65002),
      rawIpPool('pool-b', '10.245.0.0/16'),
      rawBgpFilter('f2', '10.98.0.0/16'),
      rawBlockAffinity('n2-blk', 'n2', '10.245.0.0/26'),
    ];
    for (const o of objs) h.server.apply(o);
    await until(() => h.events.length === 8, 5000, '8 adds');
    expect(h.events.map((e) => e.type)).toEqual(Array(8).fill('add'));
    h.events.length = 0;

    // One real change per kind.
    const changed = [
      rawNode('n2', '192.168.1.21'),
      rawService('api', '10.96.0.21'),
      rawSlice('api-1', 'api', ['n2', 'n3']),
      rawBgpConfiguration(64514),
      rawBgpPeer('p2', '192.168.1.3', 65002),
      rawIpPool('pool-b', '10.246.0.0/16'),
      rawBgpFilter('f2', '10.97.0.0/16'),
      rawBlockAffinity('n2-blk', 'n2', '10.245.0.64/26'),
    ];
    for (const o of changed) h.server.apply(o);
    await until(() => h.events.length === 8, 5000, '8 updates');
    expect(h.events.every((e) => e.type === 'update')).toBe(true);
    expect((h.state.get('Node', 'n2') as Node).internalIPs.map(String)).toEqual(['192.168.1.21']);
    expect(h.state.get('BGPConfiguration', 'default')).toMatchObject({ asNumber: 64514 });
    expect(h.state.slicesOf('default', 'api')[0].endpoints).toHaveLength(2);
    h.events.length = 0;

    // Re-applying an identical object (new resourceVersion, same content) is no change.
    h.server.apply(rawBgpPeer('p2', '192.168.1.3', 65002));
    for (const o of changed) {
      const meta = o.metadata as { name: string; namespace?: string };
      h.server.remove(o.apiVersion, o.kind, meta.name, meta.namespace);
    }
    await until(() => h.events.length === 8, 5000, '8 deletes');
    expect(h.events.every((e) => e.type === 'delete')).toBe(true);
    expect(h.events.map((e) => (e.type === 'delete' ? e.kind : '')).sort()).toEqual(RESOURCE_KINDS.filter((k) => k !== 'Secret').sort());
    expect(h.state.all()).toEqual([]);
  });

  it('the watch loops keep no object, only where to resume: the full objects live once, validated, in the source', async () => {
    const h = await setup();
    await watching(h);
    h.server.apply(rawService('late', '10.96.0.30'));
    await until(() => h.state.get('Service', 'late') !== undefined, 5000, 'the watched Service');
    // The loops are private to the source: looked at here for what they hold.
    const loops = (h.source as unknown as { watches: { def: { plural: string }; lw: ListWatch }[] }).watches;
    expect(loops).toHaveLength(8);
    expect(loops.find((w) => w.def.plural === 'services')!.lw.resourceVersion).toBe(String(h.server.resourceVersion));
    for (const { lw } of loops) {
      expect(lw.resourceVersion).toMatch(/^\d+$/);
      // besides its options (callbacks, client) a loop holds numbers, flags, a timer and the open request: no object of the cluster
      const held = Object.entries(lw).filter(
        ([k, v]) => k !== 'opts' && k !== 'backoff' && k !== 'current' && k !== 'timer' && typeof v === 'object' && v !== null,
      );
      expect(held).toEqual([]);
    }
  });

  it('asks for bookmarks and re-watches from the bookmarked resourceVersion after a clean close', async () => {
    const h = await setup();
    await watching(h);
    // Other kinds move the global resourceVersion on; the nodes watch learns it only from a bookmark.
    h.server.apply(rawIpPool('pool-z', '10.251.0.0/16'));
    h.server.apply(rawIpPool('pool-y', '10.252.0.0/16'));
    await until(() => h.events.length === 10, 5000, 'pool adds');
    h.server.bookmark();
    const rv = String(h.server.resourceVersion);
    // The nodes loop has read the bookmark (it is private to the source: looked at here for where it resumes).
    const loops = (h.source as unknown as { watches: { def: { plural: string }; lw: ListWatch }[] }).watches;
    await until(() => loops.find((w) => w.def.plural === 'nodes')!.lw.resourceVersion === rv, 5000, 'the bookmark read');
    h.server.dropConnections({ clean: true, plural: 'nodes' });
    await until(() => h.server.openWatches('nodes') === 1, 5000, 'nodes re-watch');
    const watches = h.server.requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === 'true');
    expect(watches.every((w) => w.query.allowWatchBookmarks === 'true')).toBe(true);
    expect(watches.map((w) => w.query.resourceVersion)).toEqual(['108', rv]);
    // No relist: a clean re-watch continues where it was.
    expect(h.server.requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === undefined)).toHaveLength(1);
    expect(h.source.status().watchRestarts.nodes).toBe(1);
    expect(h.source.status().connected).toBe(true);
  });

  it('on 410 Gone relists without events for unchanged objects', async () => {
    const h = await setup();
    await watching(h);
    // A change nobody watches yet, then history expires: watches get ERROR 410 and must relist.
    h.server.expireHistory();
    await until(() => h.server.openWatches() === 0 || h.source.status().watchRestarts.nodes > 0, 5000, 'watches closed');
    h.server.apply(rawNode('node-b', '192.168.1.11'));
    await until(() => h.events.length === 9, 5000, 'node-b after relist');
    await watching(h);
    expect(h.events.slice(8)).toEqual([expect.objectContaining({ type: 'add', resource: expect.objectContaining({ kind: 'Node', name: 'node-b' }) })]);
    // Every resource relisted (a list request after the first one per path).
    const lists = h.server.requests.filter((r) => r.path === '/apis/crd.projectcalico.org/v1/ippools' && r.query.watch === undefined);
    expect(lists.length).toBe(2);
    expect(h.source.status().watchRestarts.ippools).toBeGreaterThanOrEqual(1);
    // Nothing else moved.
    await relisted(h);
    expect(h.events).toHaveLength(9);
  });

  it('a deletion missed during a 410 arrives as a delete after the relist', async () => {
    const h = await setup();
    await watching(h);
    h.server.dropConnections();
    h.server.expireHistory();
    h.server.remove('v1', 'Service', 'web', 'default');
    await until(() => h.events.length === 9, 5000, 'delete after relist');
    expect(h.events[8]).toEqual({ type: 'delete', kind: 'Service', name: 'web', namespace: 'default' });
    expect(h.state.get('Service', 'web', 'default')).toBeUndefined();
  });

  it('reconnects after the watch stream drops, replaying from its resourceVersion', async () => {
    const h = await setup();
    await watching(h);
    h.server.dropConnections();
    h.server.apply(rawIpPool('pool-a', '10.250.0.0/16'));
    await until(() => h.events.length === 9, 5000, 'update after drop');
    expect(h.events[8]).toMatchObject({ type: 'update', resource: { kind: 'IPPool', name: 'pool-a' } });
    expect(h.source.status().watchRestarts.ippools).toBeGreaterThanOrEqual(1);
  });

  it('API server down: reports disconnected, keeps state; after restart reconciles only the real changes', async () => {
    const h = await setup();
    await watching(h);
    const before = h.state.all();
    await h.server.stop();
    await until(() => !h.source.status().connected, 5000, 'disconnected');
    const st = h.source.status();
    expect(st.connected).toBe(false);
    expect(st.lastError).toMatch(/ECONNREFUSED|socket|closed|connect/i);
    expect(h.state.all()).toEqual(before);
    expect(h.events).toHaveLength(8);
    // Every retry is counted, per resource and in all: each resource fails again and again while the server is away.
    await until(() => Object.values(h.source.status().resources).every((r) => r.failures >= 2), 5000, 'two failures of every resource');
    const failing = h.source.status();
    expect(failing.failures).toBe(Object.values(failing.resources).reduce((n, r) => n + r.failures, 0));

    // Changes "while down" (written straight to storage), then the server comes back with history compacted.
    h.server.apply(rawBgpPeer('tor', '192.168.1.1', 65099));
    h.server.remove(CRD, 'BGPFilter', 'no-lab');
    h.server.apply(rawNode('node-a', '192.168.1.10')); // same content, new resourceVersion
    const mark = h.server.requests.length;
    await h.server.restart({ expireHistory: true });
    await until(() => h.source.status().connected, 5000, 'reconnected');
    await until(() => h.events.length === 10, 5000, 'two changes');
    await relistedSince(h, mark);
    expect(h.events.slice(8)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'update', resource: expect.objectContaining({ kind: 'BGPPeer', name: 'tor', asNumber: 65099 }) }),
        { type: 'delete', kind: 'BGPFilter', name: 'no-lab', namespace: undefined },
      ]),
    );
    expect(h.events).toHaveLength(10);
    expect(h.source.status().watchRestarts.bgppeers).toBeGreaterThanOrEqual(1);
    expect(h.source.status().lastError).toBeDefined();
  });

  it('keeps retrying while the API server answers 503, then syncs', async () => {
    const h = await setup();
    await watching(h);
    h.server.failWith = 503;
    h.server.dropConnections();
    await until(() => /: 503 /.test(h.source.status().lastError ?? ''), 5000, '503 seen');
    expect(h.source.status().connected).toBe(false);
    h.server.failWith = undefined;
    h.server.apply(rawService('web', '10.96.0.11'));
    await until(() => h.source.status().connected && h.events.length === 9, 5000, 'recovered');
    expect(h.events[8]).toMatchObject({ type: 'update', resource: { kind: 'Service', name: 'web' } });
  });

  it('reports an invalid object with kind, name and field; an invalid update keeps the last valid version', async () => {
    const h = await setup();
    await watching(h);
    h.server.apply({ ...rawBgpPeer('tor', 'not-an-ip', 65001) });
    await until(() => h.issues.length === 1, 5000, 'issue');
    expect(h.issues[0]).toMatchObject({ severity: 'error', kind: 'BGPPeer', name: 'tor', path: 'spec.peerIP' });
    expect(h.events).toHaveLength(8);
    expect(h.state.get('BGPPeer', 'tor')).toMatchObject({ asNumber: 65001 });
    expect(h.source.issues()).toHaveLength(1);
    // A brand-new invalid object: reported, never added.
    h.server.apply({ apiVersion: CRD, kind: 'IPPool', metadata: { name: 'bad' }, spec: { cidr: '10.0.0.1/8' } });
    await until(() => h.issues.length === 2, 5000, 'second issue');
    expect(h.issues[1]).toMatchObject({ kind: 'IPPool', name: 'bad', path: 'spec.cidr' });
    expect(h.state.get('IPPool', 'bad')).toBeUndefined();
    // Fixed: the issue clears and the update applies.
    h.server.apply(rawBgpPeer('tor', '192.168.1.5', 65001));
    await until(() => h.events.length === 9, 5000, 'fixed update');
    expect(h.source.issues().map((i) => i.name)).toEqual(['bad']);
  });

  it('reconnects a watch that went silent (half-open connection) and catches up', async () => {
    const h = await setup({ idleMs: 300 });
    await watching(h);
    h.server.freezeWatches();
    h.server.apply(rawBgpPeer('tor', '192.168.1.1', 65042));
    await until(() => h.events.length === 9, 5000, 'change after idle reconnect');
    expect(h.events[8]).toMatchObject({ type: 'update', resource: { kind: 'BGPPeer', asNumber: 65042 } });
    expect(h.source.status().lastError).toMatch(/silent/);
    await until(() => h.source.status().connected, 5000, 'all reconnected');
    expect(h.events).toHaveLength(9);
  });

  it('reads projectcalico.org/v3 when discovery shows the Calico API server', async () => {
    const v3 = 'projectcalico.org/v3';
    const h = await setup({ calicoV3: true, seed: everyKind(v3) });
    expect(h.source.status().calicoApi).toBe(v3);
    expect(h.state.all()).toHaveLength(8);
    expect(h.server.requests.some((r) => r.path === '/apis/projectcalico.org/v3/bgppeers')).toBe(true);
    expect(h.server.requests.some((r) => r.path.startsWith('/apis/crd.projectcalico.org'))).toBe(false);
  });
});

describe('KubernetesApiSource.close', () => {
  it('closes every watch connection', async () => {
    const h = await setup();
    await watching(h);
    await h.source.close();
    // the server drops a watch when its client goes away
    await until(() => h.server.openWatches() === 0, 5000, 'watches closed');
    expect(h.server.openWatches()).toBe(0);
  });

  it('closes a watch that was still opening when the source closed (its watch requests were not answered yet)', async () => {
    const h = await setup();
    await watching(h);
    h.server.watchDelayMs = 400;
    const mark = h.server.requests.length;
    const lateWatches = () => h.server.requests.slice(mark).filter((r) => r.query.watch === 'true').length;
    const late = new KubernetesApiSource({ client: loadKubeConfig({ kubeconfig: await h.server.writeKubeconfig() }), onChange: () => undefined });
    late.start();
    await late.synced();
    // every list is done; every watch request waits for the server
    await late.close();
    // the server has answered (or found abandoned) every late watch request that reached it; any it opened joined its watchers then
    await until(() => lateWatches() > 0 && h.server.delayedWatchesDue === lateWatches(), 5000, 'the late watch requests answered');
    // only h's own 8 watches are left: the late ones were aborted as soon as they opened
    await until(() => h.server.openWatches() === 8, 5000, 'only the first source watching');
    expect(h.server.openWatches()).toBe(8);
  });
});
