/**
 * Differential test: the thin client (kube-client.ts ListWatch) and
 * @kubernetes/client-node's informer run the same script against the fake
 * API server, and must see the same objects and the same add/update/delete
 * events per object, equal to what the script did.
 *
 * Each client gets its own FakeApiServer instance driven by the same steps
 * (the state and resourceVersions evolve identically), so an injected fault
 * ("the next request gets 429") hits the client it is meant for and each
 * client's reconnection can be waited on separately. Nothing sleeps: every
 * step waits on the servers' view of the clients (open watches, parked
 * requests, faults served) and on the clients' stores. The thin client's
 * Retry-After waits and backoff go through its injected sleep and timer,
 * which record the delay asked and return at once.
 *
 * client-node's informer lists in one request (it does not page); the thin
 * client pages, and the script checks its continue requests.
 *
 * One script rule keeps the comparison exact: while a client is away, an
 * object changes at most once. client-node re-watches from its last
 * resourceVersion after a cut (it sees each change), client-go and the thin
 * client relist (they see the outcome); with one change both are the same event.
 */
import { CoreV1Api, KubeConfig, makeInformer, type Informer, type V1Node } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ListWatch, loadKubeConfig } from '../../../src/agent/sources/kube-client.js';
import { FakeApiServer } from '../../kubernetes/fake-apiserver.js';
import { rawNode } from '../../kubernetes/api-fixtures.js';

const until = FakeApiServer.until;

type Meta = { metadata?: { name?: string; namespace?: string; resourceVersion?: string } };
const keyOf = (o: Meta) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const rvOf = (o: Meta) => String(o.metadata?.resourceVersion ?? '');

/** What one client saw: its store (key → resourceVersion) and the events per object. */
class Seen {
  readonly store = new Map<string, string>();
  readonly events = new Map<string, string[]>();
  readonly errors: string[] = [];

  private push(key: string, ev: string): void {
    const l = this.events.get(key) ?? [];
    l.push(ev);
    this.events.set(key, l);
  }

  add(o: Meta): void {
    this.store.set(keyOf(o), rvOf(o));
    this.push(keyOf(o), `add ${rvOf(o)}`);
  }

  update(o: Meta): void {
    this.store.set(keyOf(o), rvOf(o));
    this.push(keyOf(o), `update ${rvOf(o)}`);
  }

  delete(o: Meta): void {
    this.store.delete(keyOf(o));
    this.push(keyOf(o), 'delete');
  }
}

interface Side {
  readonly server: FakeApiServer;
  readonly seen: Seen;
  stop(): Promise<void> | void;
}

/**
 * The thin client as the agent uses it: a ListWatch whose lists are diffed
 * against what it knows (as api-source.ts does), the same rule as
 * client-node's cache: an object whose resourceVersion did not change is no event.
 */
async function thinClient(
  server: FakeApiServer,
  clock: { now: number; sleeps: number[]; timers: number[] },
  pageSize?: number,
): Promise<Side & { lw: ListWatch }> {
  const seen = new Seen();
  // a kubeconfig whose token is read from a file (re-read on a 401)
  const kc = await server.writeKubeconfig({ tokenFile: true });
  const client = loadKubeConfig({
    kubeconfig: kc,
    client: {
      now: () => clock.now,
      sleep: async (ms) => {
        clock.sleeps.push(ms);
        clock.now += ms;
      },
    },
  });
  let listing = new Map<string, Meta>();
  const lw = new ListWatch({
    client,
    path: '/api/v1/nodes',
    pageSize,
    random: () => 0,
    setTimer: (fn, ms) => {
      clock.timers.push(ms);
      const t = setImmediate(fn);
      return { cancel: () => clearImmediate(t) };
    },
    onListStart: () => (listing = new Map()),
    onListPage: (items) => {
      for (const o of items as Meta[]) listing.set(keyOf(o), o);
    },
    onListEnd: () => {
      for (const k of [...seen.store.keys()]) if (!listing.has(k)) seen.delete({ metadata: { name: k.split('/')[1] } });
      for (const [k, o] of listing) {
        if (!seen.store.has(k)) seen.add(o);
        else if (seen.store.get(k) !== rvOf(o)) seen.update(o);
      }
    },
    onEvent: (type, object) => {
      const o = object as Meta;
      const had = seen.store.get(keyOf(o));
      if (type === 'DELETED') {
        if (had !== undefined) seen.delete(o);
      } else if (had === undefined) seen.add(o);
      else if (had !== rvOf(o)) seen.update(o);
    },
    onError: (e) => seen.errors.push(e.message),
  });
  lw.start();
  return { server, seen, lw, stop: () => lw.stop() };
}

/** client-node's informer, restarted after each error (it stops on one, by design). */
async function clientNode(server: FakeApiServer): Promise<Side> {
  const seen = new Seen();
  const kc = new KubeConfig();
  kc.loadFromFile(await server.writeKubeconfig());
  const api = kc.makeApiClient(CoreV1Api);
  const informer: Informer<V1Node> = makeInformer(kc, '/api/v1/nodes', () => api.listNode());
  let stopped = false;
  informer.on('add', (o) => seen.add(o as Meta));
  informer.on('update', (o) => seen.update(o as Meta));
  informer.on('delete', (o) => seen.delete(o as Meta));
  informer.on('error', (e) => {
    seen.errors.push(String((e as Error)?.message ?? e));
    setImmediate(() => {
      if (!stopped) void informer.start();
    });
  });
  await informer.start();
  return {
    server,
    seen,
    stop: async () => {
      stopped = true;
      await informer.stop();
    },
  };
}

/** The script's own record of what it did: the events each client must report. */
class Truth {
  readonly events = new Map<string, string[]>();
  readonly store = new Map<string, string>();

  private push(key: string, ev: string): void {
    const l = this.events.get(key) ?? [];
    l.push(ev);
    this.events.set(key, l);
  }

  applied(o: Meta): void {
    this.push(keyOf(o), `${this.store.has(keyOf(o)) ? 'update' : 'add'} ${rvOf(o)}`);
    this.store.set(keyOf(o), rvOf(o));
  }

  removed(name: string): void {
    this.push(`/${name}`, 'delete');
    this.store.delete(`/${name}`);
  }
}

describe('thin client and @kubernetes/client-node against the same script', () => {
  const sides: Side[] = [];
  afterEach(async () => {
    for (const s of sides.splice(0)) {
      await s.stop();
      s.server.release();
      await s.server.stop();
    }
  });

  it.each([
    ['without a watch cache (lists in pages, relists read etcd)', false],
    ['with a watch cache (resourceVersion 0 answered in one piece)', true],
  ])('lists, pages, watches, bookmarks, 410, 401, 429 and 503 with Retry-After, dropped connections: %s', async (_what, watchCache) => {
    const servers = [new FakeApiServer(), new FakeApiServer()];
    const truth = new Truth();
    /** Applies one change to both servers (identically), and to the record. */
    const apply = (name: string, ip: string) => {
      const objs = servers.map((s) => s.apply(rawNode(name, ip)));
      expect(rvOf(objs[0])).toBe(rvOf(objs[1]));
      truth.applied(objs[0]);
    };
    const remove = (name: string) => {
      for (const s of servers) expect(s.remove('v1', 'Node', name)).toBe(true);
      truth.removed(name);
    };
    const each = (f: (s: FakeApiServer) => void) => servers.forEach(f);
    for (const s of servers) s.watchCache = watchCache;
    for (let i = 0; i < 7; i++) apply(`n${i}`, `192.0.2.${i + 1}`);
    await Promise.all(servers.map((s) => s.start()));

    const clock = { now: 1_000_000, sleeps: [] as number[], timers: [] as number[] };
    // without a cache the server pages (here in 3s, as client-go's WatchListPageSize); with one, the default 500 is ignored
    const thin = await thinClient(servers[0], clock, watchCache ? undefined : 3);
    const node = await clientNode(servers[1]);
    sides.push(thin, node);

    /** Both clients hold what the server holds, watch it, and nothing is pending. */
    const settled = async (what: string) => {
      for (const side of [thin, node]) {
        const s = side.server;
        await until(
          () =>
            s.openWatches('nodes') === 1 &&
            s.pendingFaults === 0 &&
            s.held === 0 &&
            side.seen.store.size === truth.store.size &&
            [...truth.store].every(([k, rv]) => side.seen.store.get(k) === rv),
          10_000,
          `${what} (${side === thin ? 'thin client' : 'client-node'})`,
        );
      }
      clock.now += 10_000; // the thin client's clock moves on between steps (no watch "ends at once")
    };
    /** Parks both clients' next requests and waits until each has sent one (it is reconnecting). */
    const away = async (cut: (s: FakeApiServer) => void) => {
      each((s) => s.hold());
      each(cut);
      for (const s of servers) await until(() => s.held >= 1, 10_000, 'a client reconnecting');
    };

    await settled('first list');
    // pages: the thin client's first list asks resourceVersion 0 in pages of 3; the continue pages carry no resourceVersion
    const lists0 = servers[0].requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === undefined);
    expect(lists0[0].query).toMatchObject({ resourceVersion: '0', limit: watchCache ? '500' : '3' });
    expect(lists0.length).toBe(watchCache ? 1 : 3);
    expect(lists0.slice(1).every((r) => r.query.continue !== undefined && r.query.resourceVersion === undefined)).toBe(true);

    // watch events
    apply('n7', '192.0.2.8');
    apply('n1', '192.0.2.101');
    remove('n2');
    await settled('watch events');

    // a bookmark (the thin client asks for them), then a change
    each((s) => s.bookmark());
    apply('n3', '192.0.2.103');
    await settled('bookmark');

    // a watch ended by the server's timeout: both re-watch from where they were
    each((s) => s.dropConnections({ clean: true }));
    apply('n4', '192.0.2.104');
    await settled('clean end');

    // a dropped connection, and changes while both are away
    await away((s) => s.dropConnections());
    apply('n5', '192.0.2.105');
    remove('n6');
    apply('n8', '192.0.2.9');
    each((s) => s.release());
    await settled('dropped connection with changes');

    // 410 Gone: history expired while both were away (the thin client relists at its resourceVersion;
    // without a cache that read is expired and it falls back to resourceVersion "")
    await away((s) => s.dropConnections());
    apply('n0', '192.0.2.100');
    remove('n7');
    apply('n9', '192.0.2.10');
    each((s) => s.expireHistory(false));
    each((s) => s.release());
    await settled('410 while away');
    // 410 Gone as an ERROR event on an open watch
    each((s) => s.expireHistory(true));
    await settled('410 on the watch');
    apply('n5', '192.0.2.205');
    await settled('after 410');

    // 401 on the next request (the thin client reads its token file again and retries)
    each((s) => s.inject({ status: 401 }));
    each((s) => s.dropConnections({ clean: true }));
    await settled('401');
    apply('n1', '192.0.2.201');
    await settled('after 401');

    // 429 with Retry-After on the next two requests
    const sleeps0 = clock.sleeps.length;
    each((s) => s.inject({ status: 429, retryAfterSeconds: 1, times: 2 }));
    each((s) => s.dropConnections({ clean: true }));
    await settled('429');
    expect(clock.sleeps.slice(sleeps0)).toEqual([1000, 1000]);
    apply('n3', '192.0.2.203');
    await settled('after 429');

    // 503 with Retry-After, after a dropped connection
    each((s) => s.inject({ status: 503, retryAfterSeconds: 2 }));
    each((s) => s.dropConnections());
    await settled('503');
    expect(clock.sleeps.slice(sleeps0)).toEqual([1000, 1000, 2000]);
    apply('n4', '192.0.2.204');
    remove('n0');
    await settled('after 503');

    // the same objects, the same events, and both what the script did
    const sorted = (m: Map<string, string[]>) => [...m].sort(([a], [b]) => a.localeCompare(b));
    expect(sorted(thin.seen.events)).toEqual(sorted(truth.events));
    expect(sorted(node.seen.events)).toEqual(sorted(truth.events));
    expect([...thin.seen.store].sort()).toEqual([...node.seen.store].sort());
    // every fault was served to each client, and the thin client got through the 401 without an error
    for (const s of servers) expect(s.faulted.map((r) => r.query.watch ?? 'list')).toHaveLength(4);
    expect(thin.seen.errors.some((e) => e.includes('401'))).toBe(false);
    // no continue request ever carried a resourceVersion (the server refuses those with 400)
    expect(thin.seen.errors.filter((e) => e.includes(' 400 '))).toEqual([]);
    // relists asked the last resourceVersion seen, or "" after it proved expired
    const relists = servers[0].requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === undefined && r.query.continue === undefined).slice(1);
    expect(relists.length).toBeGreaterThan(0);
    expect(relists.every((r) => r.query.resourceVersion !== '0')).toBe(true);
    if (!watchCache) expect(relists.some((r) => r.query.resourceVersion === undefined)).toBe(true);
  });
});
