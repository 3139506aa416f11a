import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A small Kubernetes API server speaking the real wire protocol over HTTP on
 * 127.0.0.1: discovery, lists with resourceVersion, chunked JSON-line watches
 * (ADDED/MODIFIED/DELETED/BOOKMARK/ERROR 410), events create/patch. Tests
 * drive it: change objects, send bookmarks, expire resource versions, drop
 * connections, stop and restart on the same port.
 *
 * Script mode, for tests that drive a client step by step: `inject` answers
 * the next matching requests with a fault (401, 429 or 5xx with Retry-After,
 * a Status with causes), `hold`/`release` park requests so changes happen
 * while a client is reconnecting, `rotateToken` changes the accepted token,
 * `sendRaw` writes bytes to open watches. `watchCache` makes lists answer as
 * a real API server's watch cache does: resourceVersion "0" ignores `limit`
 * and answers in one piece. A resourceVersion ahead of the server answers
 * 504 "Too large resource version" (cause ResourceVersionTooLarge). A list
 * at an old resourceVersion with `limit`, or any without the cache, is an
 * etcd read at that version and answers 410 Expired once history is
 * expired. A continue token with a resourceVersion is refused (400), as the
 * real server does.
 */

/** A fault `inject` answers with: the HTTP status, an optional Retry-After (s), the Status reason and causes. */
export interface Fault {
  readonly status: number;
  readonly retryAfterSeconds?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly causes?: readonly string[];
  /** Which requests it applies to. Default any. */
  readonly match?: (r: RequestLog) => boolean;
  /** How many matching requests get it. Default 1. */
  readonly times?: number;
}

export interface FakeResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
  readonly shortNames?: readonly string[];
  /** Served with a `status` subresource: a PATCH of `…/NAME/status` changes only `.status`, and one of the object leaves `.status` alone. */
  readonly statusSubresource?: boolean;
}

const RO = ['get', 'list', 'watch'];
const CALICO = [
  ['bgpconfigurations', 'BGPConfiguration'],
  ['bgppeers', 'BGPPeer'],
  ['ippools', 'IPPool'],
  ['bgpfilters', 'BGPFilter'],
  ['blockaffinities', 'BlockAffinity'],
] as const;

/** CalicoNodeStatus as Calico's CRD serves it (cluster-scoped, with a status subresource). */
export function calicoNodeStatusResource(group: 'crd.projectcalico.org' | 'projectcalico.org' = 'crd.projectcalico.org'): FakeResource {
  return {
    group,
    version: group === 'crd.projectcalico.org' ? 'v1' : 'v3',
    plural: 'caliconodestatuses',
    kind: 'CalicoNodeStatus',
    namespaced: false,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    statusSubresource: true,
  };
}

export function defaultResources(opts: { calicoV3?: boolean } = {}): FakeResource[] {
  const out: FakeResource[] = [
    { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false, verbs: RO, shortNames: ['no'] },
    { group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true, verbs: RO, shortNames: ['svc'] },
    { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true, verbs: ['create', 'get', 'list', 'patch'], shortNames: ['ev'] },
    { group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true, verbs: RO },
    { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true, verbs: RO },
    ...CALICO.map(([plural, kind]) => ({ group: 'crd.projectcalico.org', version: 'v1', plural, kind, namespaced: false, verbs: RO })),
  ];
  if (opts.calicoV3) out.push(...CALICO.map(([plural, kind]) => ({ group: 'projectcalico.org', version: 'v3', plural, kind, namespaced: false, verbs: RO })));
  return out;
}

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };
type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface HistoryEntry {
  readonly rv: number;
  readonly res: FakeResource;
  readonly type: WatchType;
  readonly object: Obj;
}

interface Watcher {
  readonly res: FakeResource;
  readonly namespace?: string;
  /** fieldSelector `metadata.name=NAME` (the only field selector served). */
  readonly name?: string;
  readonly bookmarks: boolean;
  readonly out: http.ServerResponse;
  /** A frozen watch stays open but receives nothing (a half-open connection). */
  frozen?: boolean;
}

export interface RequestLog {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly contentType?: string;
  readonly accept?: string;
}

const gv = (r: FakeResource) => (r.group === '' ? r.version : `${r.group}/${r.version}`);

export class FakeApiServer {
  /** The bearer token accepted (`rotateToken` changes it). */
  token = 'fake-token';
  readonly resources: FakeResource[];
  readonly requests: RequestLog[] = [];
  private rv = 100;
  /** Watches from a resourceVersion below this get 410 Gone. */
  private oldestRv = 0;
  private readonly store = new Map<FakeResource, Map<string, Obj>>();
  private history: HistoryEntry[] = [];
  private readonly watchers = new Set<Watcher>();
  private server?: http.Server;
  private portNumber = 0;
  /** When set, every request gets this HTTP status (e.g. 503) instead of an answer. */
  failWith?: number;
  /** Accept requests without the bearer token (kubectl sends no token over plain http). */
  allowAnonymous = false;
  /** When set, every watch request gets this HTTP status (lists still work): e.g. RBAC without `watch`. */
  failWatchesWith?: number;
  /** Answer watch requests this late (ms): a slow or distant API server. */
  watchDelayMs = 0;
  /** Watch requests whose `watchDelayMs` is over (answered, or found abandoned by the client): tests wait on it. */
  delayedWatchesDue = 0;
  /** Lists served as from the API server's watch cache (see the class comment). */
  watchCache = false;
  private faults: { fault: Fault; left: number }[] = [];
  /** Requests answered with an injected fault. */
  readonly faulted: RequestLog[] = [];
  /** Requests refused for a wrong or missing token. */
  unauthorized = 0;
  private holding = false;
  private parked: (() => void)[] = [];

  constructor(
    resources: FakeResource[] = defaultResources(),
    /** Serve HTTPS with this key and certificate (the kubeconfig then carries the certificate as its CA). */
    private readonly tls?: { readonly key: string; readonly cert: string },
  ) {
    this.resources = resources;
    for (const r of resources) this.store.set(r, new Map());
  }

  get port(): number {
    return this.portNumber;
  }

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.portNumber}`;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  async start(): Promise<void> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => this.handle(req, res);
    const server = this.tls ? https.createServer({ key: this.tls.key, cert: this.tls.cert }, handler) : http.createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.portNumber, '127.0.0.1', () => resolve());
    });
    this.portNumber = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening and cuts every connection; the stored objects survive (as etcd would). */
  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    for (const w of this.watchers) w.out.destroy();
    this.watchers.clear();
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Restarts on the same port; `expireHistory` makes older resourceVersions answer 410 (a compacted etcd). */
  async restart(opts: { expireHistory?: boolean } = {}): Promise<void> {
    await this.stop();
    if (opts.expireHistory) this.expireHistory(false);
    await this.start();
  }

  /**
   * Writes a kubeconfig pointing at this server (token auth) into a fresh temp
   * dir; returns its path. With `tokenFile`, the token is in the file `token`
   * beside it, named by the user's `tokenFile`.
   */
  async writeKubeconfig(opts: { tokenFile?: boolean } = {}): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'fake-apiserver-'));
    const file = join(dir, 'kubeconfig');
    if (opts.tokenFile) await writeFile(join(dir, 'token'), `${this.token}\n`);
    const text = [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: fake',
      '  cluster:',
      `    server: ${this.url}`,
      // plain http: no CA to give, verification off as kubectl wants it said
      this.tls ? `    certificate-authority-data: ${Buffer.from(this.tls.cert).toString('base64')}` : '    insecure-skip-tls-verify: true',
      'users:',
      '- name: fake',
      '  user:',
      opts.tokenFile ? `    tokenFile: ${join(dir, 'token')}` : `    token: ${this.token}`,
      'contexts:',
      '- name: fake',
      '  context:',
      '    cluster: fake',
      '    user: fake',
      'current-context: fake',
      '',
    ].join('\n');
    await writeFile(file, text);
    return file;
  }

  // ---------- script mode ----------

  /** The next `times` requests matching `fault.match` get `fault` instead of an answer. */
  inject(fault: Fault): void {
    this.faults.push({ fault, left: fault.times ?? 1 });
  }

  /** Injected faults not yet served. */
  get pendingFaults(): number {
    return this.faults.reduce((n, f) => n + f.left, 0);
  }

  /** Parks every request from now on (unanswered) until `release`. */
  hold(): void {
    this.holding = true;
  }

  /** Requests parked by `hold`. */
  get held(): number {
    return this.parked.length;
  }

  /** Answers the parked requests, in order, and stops parking. */
  release(): void {
    this.holding = false;
    for (const go of this.parked.splice(0)) go();
  }

  /** From now on only `token` is accepted (a rotated service-account token). */
  rotateToken(token: string): void {
    this.token = token;
  }

  /** Writes `text` as it is to every open watch (e.g. a line longer than a client accepts). */
  sendRaw(text: string, plural?: string): void {
    for (const w of this.watchers) if (plural === undefined || w.res.plural === plural) w.out.write(text);
  }

  // ---------- test commands ----------

  private resourceFor(obj: { apiVersion?: unknown; kind?: unknown }): FakeResource {
    const r = this.resources.find((x) => gv(x) === obj.apiVersion && x.kind === obj.kind);
    if (!r) throw new Error(`fake apiserver does not serve ${String(obj.apiVersion)} ${String(obj.kind)}`);
    return r;
  }

  private keyOf(res: FakeResource, ns: string | undefined, name: string): string {
    return res.namespaced ? `${ns ?? 'default'}/${name}` : name;
  }

  /** Adds or replaces an object (ADDED or MODIFIED); returns the stored copy with its new resourceVersion. */
  apply(input: Record<string, unknown>): Obj {
    const res = this.resourceFor(input);
    const meta = { ...((input.metadata as Record<string, unknown>) ?? {}) };
    const name = String(meta.name);
    if (res.namespaced) meta.namespace = meta.namespace ?? 'default';
    else delete meta.namespace;
    const map = this.store.get(res)!;
    const key = this.keyOf(res, meta.namespace as string | undefined, name);
    const prev = map.get(key);
    meta.resourceVersion = String(++this.rv);
    meta.uid = (prev?.metadata.uid as string | undefined) ?? `uid-${this.rv}`;
    meta.creationTimestamp = (prev?.metadata.creationTimestamp as string | undefined) ?? '2026-01-01T00:00:00Z';
    if (prev && res.plural === 'events') meta.generation = Number(prev.metadata.generation ?? 1) + 1;
    const obj = { ...input, metadata: meta } as Obj;
    map.set(key, obj);
    this.record(res, prev ? 'MODIFIED' : 'ADDED', obj);
    return obj;
  }

  /** Deletes an object; true when it existed. */
  remove(apiVersion: string, kind: string, name: string, namespace?: string): boolean {
    const res = this.resourceFor({ apiVersion, kind });
    const map = this.store.get(res)!;
    const key = this.keyOf(res, namespace, name);
    const prev = map.get(key);
    if (!prev) return false;
    map.delete(key);
    const obj = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(++this.rv) } } as Obj;
    this.record(res, 'DELETED', obj);
    return true;
  }

  get(apiVersion: string, kind: string, name: string, namespace?: string): Obj | undefined {
    const res = this.resourceFor({ apiVersion, kind });
    return this.store.get(res)!.get(this.keyOf(res, namespace, name));
  }

  list(plural: string): Obj[] {
    const res = this.resources.find((r) => r.plural === plural);
    return res ? [...this.store.get(res)!.values()] : [];
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      this.send(w, { type: 'BOOKMARK', object: { kind: w.res.kind, apiVersion: gv(w.res), metadata: { resourceVersion: String(this.rv) } } });
    }
  }

  /**
   * Forgets the history: every resourceVersion up to now is too old. Open
   * watches get an ERROR 410 event and are closed (when `closeWatches`), so
   * the client must relist.
   */
  expireHistory(closeWatches = true): void {
    this.oldestRv = this.rv + 1;
    this.history = [];
    if (!closeWatches) return;
    for (const w of [...this.watchers]) {
      this.send(w, { type: 'ERROR', object: goneStatus() });
      this.watchers.delete(w);
      w.out.end();
    }
  }

  /**
   * Cuts open watch streams (the server stays up): abruptly (a reset, the
   * client sees an error) or `clean` (the stream ends, as on a server-side
   * watch timeout, and the client re-watches from its last resourceVersion).
   */
  dropConnections(opts: { clean?: boolean; plural?: string } = {}): void {
    for (const w of [...this.watchers]) {
      if (opts.plural && w.res.plural !== opts.plural) continue;
      this.watchers.delete(w);
      if (opts.clean) w.out.end();
      else w.out.destroy();
    }
  }

  /** Number of open watch streams, per plural. */
  openWatches(plural?: string): number {
    return [...this.watchers].filter((w) => plural === undefined || w.res.plural === plural).length;
  }

  /** Waits until `cond` holds (polling), failing after `timeoutMs`. */
  static async until(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private record(res: FakeResource, type: WatchType, object: Obj): void {
    this.history.push({ rv: this.rv, res, type, object });
    for (const w of this.watchers) {
      if (w.res !== res) continue;
      if (w.namespace && object.metadata.namespace !== w.namespace) continue;
      if (w.name !== undefined && object.metadata.name !== w.name) continue;
      this.send(w, { type, object });
    }
  }

  /** Open watches go silent but stay connected, as behind a dead network path; new watches work. */
  freezeWatches(): void {
    for (const w of this.watchers) w.frozen = true;
  }

  private send(w: Watcher, ev: unknown): void {
    if (w.frozen) return;
    w.out.write(JSON.stringify(ev) + '\n');
  }

  // ---------- HTTP ----------

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.holding) {
      this.parked.push(() => (res.destroyed ? undefined : this.handle(req, res)));
      return;
    }
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams.entries());
    const log: RequestLog = { method: req.method ?? 'GET', path: url.pathname, query, contentType: req.headers['content-type'], accept: req.headers.accept };
    this.requests.push(log);
    const f = this.faults.find((x) => x.left > 0 && (x.fault.match?.(log) ?? true));
    if (f) {
      f.left--;
      this.faults = this.faults.filter((x) => x.left > 0);
      this.faulted.push(log);
      const { status: code, retryAfterSeconds, reason, message, causes } = f.fault;
      const body = {
        ...status(code, reason ?? STATUS_REASON[code] ?? 'InternalError', message ?? `injected ${code}`),
        ...(causes ? { details: { causes: causes.map((type) => ({ type, message })) } } : {}),
      };
      return json(res, code, body, retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) });
    }
    if (req.headers.authorization !== `Bearer ${this.token}` && !(this.allowAnonymous && req.headers.authorization === undefined)) {
      this.unauthorized++;
      return json(res, 401, status(401, 'Unauthorized', 'Unauthorized'));
    }
    if (this.failWith) return json(res, this.failWith, status(this.failWith, 'ServiceUnavailable', 'injected failure'));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        this.route(req.method ?? 'GET', url, Buffer.concat(chunks).toString('utf8'), res);
      } catch (e) {
        json(res, 500, status(500, 'InternalError', (e as Error).message));
      }
    });
  }

  private route(method: string, url: URL, body: string, res: http.ServerResponse): void {
    const p = url.pathname.replace(/\/$/, '');
    if (p === '/version') return json(res, 200, { major: '1', minor: '31', gitVersion: 'v1.31.0-fake', platform: 'linux/amd64' });
    if (p === '/api')
      return json(res, 200, {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.port}` }],
      });
    if (p === '/apis') return json(res, 200, this.groupList());
    const parts = p.split('/').filter(Boolean);
    // /api/v1/... or /apis/<group>/<version>/...
    let group: string;
    let version: string;
    let rest: string[];
    if (parts[0] === 'api' && parts.length >= 2) [group, version, rest] = ['', parts[1], parts.slice(2)];
    else if (parts[0] === 'apis' && parts.length >= 3) [group, version, rest] = [parts[1], parts[2], parts.slice(3)];
    else if (parts[0] === 'apis' && parts.length === 2) {
      const g = this.groupList().groups.find((x) => x.name === parts[1]);
      return g ? json(res, 200, { kind: 'APIGroup', apiVersion: 'v1', ...g }) : notFound(res, p);
    } else return notFound(res, p);
    const served = this.resources.filter((r) => r.group === group && r.version === version);
    if (served.length === 0) return notFound(res, p);
    if (rest.length === 0) return json(res, 200, this.resourceList(group, version, served));
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const r = served.find((x) => x.plural === rest[0]);
    if (!r || (namespace && !r.namespaced)) return notFound(res, p);
    const name = rest[1];
    if (name === undefined) {
      if (method === 'POST' && (namespace || !r.namespaced)) return this.create(r, namespace, body, res);
      if (method !== 'GET') return json(res, 405, status(405, 'MethodNotAllowed', `${method} not allowed`));
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
        if (this.failWatchesWith) return json(res, this.failWatchesWith, status(this.failWatchesWith, 'Forbidden', 'injected watch failure'));
        if (this.watchDelayMs > 0) {
          setTimeout(() => {
            this.delayedWatchesDue++;
            if (!res.destroyed) this.watch(r, namespace, url.searchParams, res);
          }, this.watchDelayMs);
          return;
        }
        return this.watch(r, namespace, url.searchParams, res);
      }
      return this.listResponse(r, namespace, res, url.searchParams);
    }
    const key = this.keyOf(r, namespace, name);
    const obj = this.store.get(r)!.get(key);
    const sub = rest[2];
    if (sub !== undefined && !(sub === 'status' && r.statusSubresource && rest.length === 3)) return notFound(res, p);
    if (method === 'PATCH') {
      if (!obj) return notFound(res, `${r.plural} "${name}"`);
      return this.patch(r, obj, body, res, sub === 'status' ? 'status' : r.statusSubresource ? 'object' : 'all');
    }
    if (method !== 'GET') return json(res, 405, status(405, 'MethodNotAllowed', `${method} not allowed`));
    return obj ? json(res, 200, obj) : notFound(res, `${r.plural} "${name}"`);
  }

  private groupList() {
    const groups = new Map<string, string[]>();
    for (const r of this.resources) {
      if (r.group === '') continue;
      const v = groups.get(r.group) ?? [];
      if (!v.includes(r.version)) v.push(r.version);
      groups.set(r.group, v);
    }
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...groups].map(([name, versions]) => ({
        name,
        versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
        preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
      })),
    };
  }

  private resourceList(group: string, version: string, served: FakeResource[]) {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: group === '' ? version : `${group}/${version}`,
      resources: served.map((r) => ({
        name: r.plural,
        singularName: r.kind.toLowerCase(),
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: r.verbs,
        ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      })),
    };
  }

  private visible(r: FakeResource, namespace: string | undefined, name?: string): Obj[] {
    return [...this.store.get(r)!.values()].filter(
      (o) => (!namespace || o.metadata.namespace === namespace) && (name === undefined || o.metadata.name === name),
    );
  }

  /**
   * A list; with `limit`, one page and a `continue` token for the next (the
   * token is `RV:OFFSET`; a token from before the last `expireHistory`
   * answers 410, as an expired one does on the real server).
   */
  private listResponse(r: FakeResource, namespace: string | undefined, res: http.ServerResponse, q: URLSearchParams): void {
    // Like the real server: built-in types' list items carry no kind/apiVersion, custom resources' do.
    const builtIn = r.group === '' || r.group === 'discovery.k8s.io';
    let items = this.visible(r, namespace, nameSelector(q)).map((o) => (builtIn ? withoutType(o) : o));
    let rv = this.rv;
    let offset = 0;
    const cont = q.get('continue');
    const asked = q.get('resourceVersion') ?? '';
    let limit = Number(q.get('limit') ?? 0);
    if (cont && asked !== '') return json(res, 400, status(400, 'BadRequest', 'specifying resource version is not allowed when using continue'));
    if (cont) {
      const [crv, coff] = cont.split(':').map(Number);
      if (!(crv >= this.oldestRv)) return json(res, 410, status(410, 'Expired', 'The provided continue parameter is too old'));
      [rv, offset] = [crv, coff];
    } else if (asked !== '' && asked !== '0') {
      const n = Number(asked);
      if (!Number.isInteger(n) || n < 0) return json(res, 400, status(400, 'BadRequest', `invalid resourceVersion ${asked}`));
      if (n > this.rv) {
        const body = {
          ...status(504, 'Timeout', `Too large resource version: ${n}, current: ${this.rv}`),
          details: { causes: [{ type: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
        };
        return json(res, 504, body, { 'Retry-After': '1' });
      }
      // the cache serves a list at a resourceVersion only without limit; with one, it is an etcd read at that version
      const fromEtcd = !this.watchCache || limit > 0;
      if (fromEtcd && n < this.oldestRv - 1) return json(res, 410, status(410, 'Expired', `too old resource version: ${n} (${this.oldestRv - 1})`));
    } else if (asked === '0' && this.watchCache) limit = 0; // the watch cache ignores limit at resourceVersion 0

    const metadata: Record<string, string> = { resourceVersion: String(rv) };
    if (limit > 0) {
      if (offset + limit < items.length) metadata.continue = `${rv}:${offset + limit}`;
      items = items.slice(offset, offset + limit);
    }
    json(res, 200, { kind: `${r.kind}List`, apiVersion: gv(r), metadata, items });
  }

  private watch(r: FakeResource, namespace: string | undefined, q: URLSearchParams, res: http.ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    // the real server flushes the headers at once, before any event (kubectl get -w shows nothing yet, but is watching)
    res.flushHeaders();
    const w: Watcher = { res: r, namespace, name: nameSelector(q), bookmarks: q.get('allowWatchBookmarks') === 'true', out: res };
    const from = q.get('resourceVersion');
    if (from === null || from === '' || from === '0') {
      // No version: start with the current objects as ADDED, as the real server does.
      for (const o of this.visible(r, namespace, w.name)) this.send(w, { type: 'ADDED', object: o });
    } else {
      const n = Number(from);
      if (!Number.isFinite(n) || n < this.oldestRv - 1 || n > this.rv) {
        this.send(w, { type: 'ERROR', object: goneStatus(from) });
        res.end();
        return;
      }
      for (const h of this.history) {
        if (h.rv > n && h.res === r && (!namespace || h.object.metadata.namespace === namespace) && (w.name === undefined || h.object.metadata.name === w.name))
          this.send(w, { type: h.type, object: h.object });
      }
    }
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
  }

  private create(r: FakeResource, namespace: string | undefined, body: string, res: http.ServerResponse): void {
    const obj = JSON.parse(body) as Record<string, unknown>;
    const meta: Record<string, unknown> = { ...((obj.metadata as Record<string, unknown>) ?? {}), ...(namespace ? { namespace } : {}) };
    // With a status subresource, a create sets no status (as the real server).
    if (r.statusSubresource) delete obj.status;
    if (typeof meta.name !== 'string' || meta.name === '') return json(res, 422, status(422, 'Invalid', 'metadata.name: Required value'));
    if (this.store.get(r)!.has(this.keyOf(r, namespace, meta.name as string)))
      return json(res, 409, status(409, 'AlreadyExists', `${r.plural} "${meta.name}" already exists`));
    json(res, 201, this.apply({ ...obj, apiVersion: gv(r), kind: r.kind, metadata: meta }));
  }

  /**
   * Merge patch (JSON merge patch and strategic merge patch behave alike for
   * the fields used here). `status`: only `.status` changes (the status
   * subresource); `object`: everything but `.status`; `all`: no subresource.
   */
  private patch(r: FakeResource, obj: Obj, body: string, res: http.ServerResponse, part: 'status' | 'object' | 'all'): void {
    const patch = JSON.parse(body) as Record<string, unknown>;
    let next = mergePatch(obj, patch) as Record<string, unknown>;
    if (part === 'status') next = { ...obj, ...(next.status === undefined ? {} : { status: next.status }) };
    else if (part === 'object') next = { ...next, status: obj.status };
    if (next.status === undefined) delete next.status;
    json(res, 200, this.apply(next));
  }
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function withoutType(o: Obj): Obj {
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest as Obj;
}

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function goneStatus(rv?: string) {
  return status(410, 'Expired', `too old resource version: ${rv ?? 'unknown'}`);
}

function notFound(res: http.ServerResponse, what: string): void {
  json(res, 404, status(404, 'NotFound', `${what} not found`));
}

const STATUS_REASON: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function json(res: http.ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** `fieldSelector=metadata.name=NAME` → NAME (the only field selector this fake serves). */
function nameSelector(q: URLSearchParams): string | undefined {
  const m = /^metadata\.name=(.+)$/.exec(q.get('fieldSelector') ?? '');
  return m?.[1];
}
