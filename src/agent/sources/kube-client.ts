/**
 * Shell: the agent's Kubernetes API client, on Node's own `https`. It does
 * what the agent needs and nothing else: load a kubeconfig or the in-cluster
 * service account, GET/POST/PATCH JSON, list with pagination, and a
 * list-and-watch loop (bookmarks, 410 Gone relists, backoff with jitter).
 *
 * It replaces `@kubernetes/client-node`, whose import alone cost the agent
 * ~70 MB of RSS (its generated API and dependencies; bench/kube-client-import.ts,
 * docs/agent-memory.md); this file and js-yaml cost a few MB.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { dirname, isAbsolute, join } from 'node:path';
import yaml from 'js-yaml';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from '../../kubernetes/api-known.js';

// ---------------------------------------------------------------- configuration

/** An `exec` credential plugin (client.authentication.k8s.io ExecCredential), run for a bearer token. */
export interface ExecPlugin {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly apiVersion: string;
}

/** Where the API server is and how to authenticate to it: what a kubeconfig or the service account resolves to. */
export interface KubeConnection {
  /** The API server's URL, without a trailing slash. */
  readonly server: string;
  /** The context's or service account's namespace, when one is given. */
  readonly namespace?: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly insecureSkipTlsVerify: boolean;
  /** TLS server name to verify instead of the URL's host. */
  readonly tlsServerName?: string;
  readonly token?: string;
  /** Re-read on use (bound service-account tokens rotate). */
  readonly tokenFile?: string;
  readonly basic?: { readonly username: string; readonly password: string };
  readonly exec?: ExecPlugin;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Yaml = Record<string, unknown>;

function obj(v: unknown, field: string): Yaml {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${field} must be a mapping`);
  return v as Yaml;
}

function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new Error(`${field} must be a string`);
  return v;
}

function named(list: unknown, section: string, name: string, inner: string): Yaml {
  if (list !== undefined && list !== null && !Array.isArray(list)) throw new Error(`${section} must be a list`);
  const entry = ((list as unknown[] | undefined) ?? []).find((e) => (e as Yaml | null)?.name === name);
  if (!entry) throw new Error(`${section}: no entry named "${name}"`);
  return obj((entry as Yaml)[inner], `${section}[${name}].${inner}`);
}

function b64(v: unknown, field: string): Buffer | undefined {
  const s = str(v, field);
  if (s === undefined) return undefined;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(s)) throw new Error(`${field} is not base64`);
  return Buffer.from(s, 'base64');
}

/** Reads a file a kubeconfig names (relative to the kubeconfig's folder), naming the field when it cannot. */
function fileField(v: unknown, field: string, base: string): Buffer | undefined {
  const p = str(v, field);
  if (p === undefined) return undefined;
  const path = isAbsolute(p) ? p : join(base, p);
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${field} ${path}: ${(e as Error).message}`);
  }
}

/**
 * Resolves a kubeconfig's current context. Supported: cluster `server`,
 * `certificate-authority(-data)`, `insecure-skip-tls-verify`,
 * `tls-server-name`; user `client-certificate(-data)` with
 * `client-key(-data)`, `token`, `tokenFile`, `username`/`password`, and an
 * `exec` credential plugin returning a token. `auth-provider` and `proxy-url`
 * are refused, naming the field. Errors name the field (the caller names the file).
 */
export function parseKubeconfig(text: string, file: string, opts: { readonly context?: string } = {}): KubeConnection {
  const base = dirname(file);
  let doc: Yaml;
  try {
    doc = obj(yaml.load(text), 'the kubeconfig');
  } catch (e) {
    throw new Error(`not a kubeconfig: ${(e as Error).message}`);
  }
  const ctxName = opts.context ?? str(doc['current-context'], 'current-context');
  {
    if (!ctxName) throw new Error('no current-context');
    const ctx = named(doc.contexts, 'contexts', ctxName, 'context');
    const clusterName = str(ctx.cluster, `contexts[${ctxName}].context.cluster`);
    if (!clusterName) throw new Error(`contexts[${ctxName}].context.cluster is missing`);
    const cluster = named(doc.clusters, 'clusters', clusterName, 'cluster');
    const cf = (k: string) => `clusters[${clusterName}].cluster.${k}`;
    const server = str(cluster.server, cf('server'));
    if (!server) throw new Error(`${cf('server')} is missing`);
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new Error(`${cf('server')} "${server}" is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${cf('server')} "${server}" must be http or https`);
    if (cluster['proxy-url'] !== undefined) throw new Error(`${cf('proxy-url')} is not supported`);
    const insecure = cluster['insecure-skip-tls-verify'];
    if (insecure !== undefined && typeof insecure !== 'boolean') throw new Error(`${cf('insecure-skip-tls-verify')} must be true or false`);
    const ca = b64(cluster['certificate-authority-data'], cf('certificate-authority-data')) ?? fileField(cluster['certificate-authority'], cf('certificate-authority'), base);

    const userName = str(ctx.user, `contexts[${ctxName}].context.user`);
    const user = userName ? named(doc.users, 'users', userName, 'user') : {};
    const uf = (k: string) => `users[${userName}].user.${k}`;
    if (user['auth-provider'] !== undefined) {
      const provider = str(obj(user['auth-provider'], uf('auth-provider')).name, uf('auth-provider.name')) ?? '?';
      throw new Error(`${uf('auth-provider')} (${provider}) is not supported: use an exec credential plugin, a token or a client certificate`);
    }
    const cert = b64(user['client-certificate-data'], uf('client-certificate-data')) ?? fileField(user['client-certificate'], uf('client-certificate'), base);
    const key = b64(user['client-key-data'], uf('client-key-data')) ?? fileField(user['client-key'], uf('client-key'), base);
    if (cert && !key) throw new Error(`${uf('client-certificate')} is given without client-key(-data)`);
    if (key && !cert) throw new Error(`${uf('client-key')} is given without client-certificate(-data)`);
    const tokenFileRaw = str(user.tokenFile, uf('tokenFile'));
    const tokenFile = tokenFileRaw === undefined ? undefined : isAbsolute(tokenFileRaw) ? tokenFileRaw : join(base, tokenFileRaw);
    if (tokenFile) fileField(tokenFile, uf('tokenFile'), base); // readable now: fail at start, not at the first request
    const username = str(user.username, uf('username'));
    const password = str(user.password, uf('password'));
    if ((username === undefined) !== (password === undefined)) throw new Error(`${uf(username === undefined ? 'password' : 'username')} is given without ${username === undefined ? 'username' : 'password'}`);
    let exec: ExecPlugin | undefined;
    if (user.exec !== undefined) {
      const e = obj(user.exec, uf('exec'));
      const command = str(e.command, uf('exec.command'));
      if (!command) throw new Error(`${uf('exec.command')} is missing`);
      const args = e.args ?? [];
      if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new Error(`${uf('exec.args')} must be a list of strings`);
      const envList = e.env ?? [];
      if (!Array.isArray(envList)) throw new Error(`${uf('exec.env')} must be a list of {name, value}`);
      const env: Record<string, string> = {};
      for (const [i, v] of envList.entries()) {
        const n = str((v as Yaml | null)?.name, `${uf('exec.env')}[${i}].name`);
        if (!n) throw new Error(`${uf('exec.env')}[${i}].name is missing`);
        env[n] = String((v as Yaml).value ?? '');
      }
      exec = { command: isAbsolute(command) || !command.includes('/') ? command : join(base, command), args: args as string[], env, apiVersion: str(e.apiVersion, uf('exec.apiVersion')) ?? 'client.authentication.k8s.io/v1' };
    }
    return {
      server: server.replace(/\/+$/, ''),
      namespace: str(ctx.namespace, `contexts[${ctxName}].context.namespace`),
      ca,
      cert,
      key,
      insecureSkipTlsVerify: insecure === true,
      tlsServerName: str(cluster['tls-server-name'], cf('tls-server-name')),
      token: str(user.token, uf('token')),
      tokenFile,
      basic: username !== undefined && password !== undefined ? { username, password } : undefined,
      exec,
    };
  }
}

/** The pod's service account: KUBERNETES_SERVICE_HOST/PORT, its CA, token (re-read as it rotates) and namespace. */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env, root = ''): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('not running in a cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset) and no --kubeconfig given');
  const dir = join(root, SA_DIR);
  const read = (name: string): Buffer => {
    try {
      return readFileSync(join(dir, name));
    } catch (e) {
      throw new Error(`in-cluster service account: ${(e as Error).message}`);
    }
  };
  read('token');
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined;
  }
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    namespace,
    ca: read('ca.crt'),
    insecureSkipTlsVerify: false,
    tokenFile: join(dir, 'token'),
  };
}

// ---------------------------------------------------------------- requests

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** The Status `reason` (e.g. `Expired`, `AlreadyExists`), when the server sent one. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

export interface ListResult {
  readonly resourceVersion: string;
  readonly items: unknown[];
}

export interface WatchEvent {
  readonly type: string;
  readonly object: unknown;
}

/** How long a token read from a file or an exec plugin is reused (client-go re-reads its token file each minute). */
const TOKEN_TTL_MS = 60_000;

/** Reads a Status body's message (or the text's start). */
function statusMessage(text: string): { message: string; reason?: string } {
  try {
    const s = JSON.parse(text) as { message?: unknown; reason?: unknown };
    if (typeof s.message === 'string') return { message: s.message, reason: typeof s.reason === 'string' ? s.reason : undefined };
  } catch {
    /* not JSON */
  }
  return { message: text.slice(0, 200) };
}

/** Words for a connection cut before its response ended. */
const CUT = 'connection cut by the server or the network';

export class KubeClient {
  private readonly agent: http.Agent;
  private readonly mod: typeof http | typeof https;
  private cachedToken?: { value: string; until: number };
  private tokenPending?: Promise<string | undefined>;

  constructor(
    readonly conn: KubeConnection,
    private readonly now: () => number = Date.now,
  ) {
    const tls = conn.server.startsWith('https:');
    this.mod = tls ? https : http;
    this.agent = tls
      ? new https.Agent({ keepAlive: true, ca: conn.ca, cert: conn.cert, key: conn.key, rejectUnauthorized: !conn.insecureSkipTlsVerify, servername: conn.tlsServerName })
      : new http.Agent({ keepAlive: true });
  }

  get server(): string {
    return this.conn.server;
  }

  /** The Authorization header value, or undefined for none. */
  async authorization(): Promise<string | undefined> {
    const c = this.conn;
    if (c.token) return `Bearer ${c.token}`;
    if (c.basic) return `Basic ${Buffer.from(`${c.basic.username}:${c.basic.password}`).toString('base64')}`;
    if (!c.tokenFile && !c.exec) return undefined;
    const cached = this.cachedToken;
    if (cached && this.now() < cached.until) return `Bearer ${cached.value}`;
    this.tokenPending ??= this.freshToken().finally(() => (this.tokenPending = undefined));
    const t = await this.tokenPending;
    return t === undefined ? undefined : `Bearer ${t}`;
  }

  private async freshToken(): Promise<string | undefined> {
    const c = this.conn;
    if (c.tokenFile) {
      let value: string;
      try {
        value = (await readFile(c.tokenFile, 'utf8')).trim();
      } catch (e) {
        throw new Error(`token file ${c.tokenFile}: ${(e as Error).message}`);
      }
      this.cachedToken = { value, until: this.now() + TOKEN_TTL_MS };
      return value;
    }
    const { token, expires } = await runExecPlugin(c.exec!);
    this.cachedToken = { value: token, until: Math.min(expires ?? Infinity, this.now() + TOKEN_TTL_MS) };
    return token;
  }

  private async options(method: string, headers: Record<string, string>, signal?: AbortSignal): Promise<http.RequestOptions> {
    const auth = await this.authorization();
    return { method, agent: this.agent, signal, headers: { Accept: 'application/json', 'User-Agent': 'tsbgp', ...headers, ...(auth ? { Authorization: auth } : {}) } };
  }

  /** A request whose JSON answer is parsed; a non-2xx answer throws ApiError naming the method, path, code and message. */
  async request(method: string, path: string, opts: { body?: unknown; contentType?: string; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<unknown> {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> = body === undefined ? {} : { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
    const ro = await this.options(method, headers, opts.signal);
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const what = `${method} ${path}`;
    return new Promise((resolve, reject) => {
      const req = this.mod.request(this.conn.server + path, { ...ro, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new Error(`${what}: ${e.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) {
            const s = statusMessage(text);
            reject(new ApiError(code, `${what}: ${code} ${s.message}`, s.reason));
            return;
          }
          try {
            resolve(JSON.parse(text));
          } catch (e) {
            reject(new Error(`${what}: invalid JSON (${(e as Error).message})`));
          }
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${what}: timed out after ${timeoutMs} ms`)));
      req.on('error', (e) => reject(e.message.startsWith(what) ? e : new Error(`${what}: ${e.message}`)));
      req.end(body);
    });
  }

  getJson(path: string, timeoutMs?: number): Promise<unknown> {
    return this.request('GET', path, { timeoutMs });
  }

  /**
   * Lists a collection in pages of `limit` (following `continue`), so no
   * single answer holds the whole collection. A continue token that expired
   * (410) starts the list over in one piece, as client-go's pager does.
   * With `onPage`, each page's items go there as it arrives (and `onRestart`
   * says the list starts over) instead of into the result: the whole
   * collection is then never held at once.
   */
  async list(path: string, opts: { fieldSelector?: string; limit?: number; timeoutMs?: number; signal?: AbortSignal; onPage?: (items: unknown[]) => void; onRestart?: () => void } = {}): Promise<ListResult> {
    const items: unknown[] = [];
    let cont: string | undefined;
    let limit = opts.limit;
    for (;;) {
      const q = new URLSearchParams();
      if (opts.fieldSelector) q.set('fieldSelector', opts.fieldSelector);
      if (limit) q.set('limit', String(limit));
      if (cont) q.set('continue', cont);
      const qs = q.toString();
      let page: { metadata?: { resourceVersion?: unknown; continue?: unknown }; items?: unknown };
      try {
        page = (await this.request('GET', qs ? `${path}?${qs}` : path, { timeoutMs: opts.timeoutMs, signal: opts.signal })) as typeof page;
      } catch (e) {
        if (cont && e instanceof ApiError && e.statusCode === 410) {
          items.length = 0;
          cont = undefined;
          limit = undefined;
          opts.onRestart?.();
          continue;
        }
        throw e;
      }
      if (!Array.isArray(page.items)) throw new Error(`GET ${path}: the answer has no items list`);
      if (opts.onPage) opts.onPage(page.items);
      else for (const it of page.items) items.push(it);
      cont = typeof page.metadata?.continue === 'string' && page.metadata.continue !== '' ? page.metadata.continue : undefined;
      if (!cont) return { resourceVersion: String(page.metadata?.resourceVersion ?? ''), items };
    }
  }

  /**
   * Opens a watch (`?watch=true`) and calls `onEvent` for each line of its
   * newline-delimited JSON stream. The promise settles when the stream ends:
   * resolved on a clean end, rejected on an error (an HTTP error status
   * rejects with ApiError). `abort()` ends it at once, also while it is
   * still opening; the promise then resolves.
   */
  watch(path: string, query: Record<string, string | number | boolean | undefined>, onEvent: (ev: WatchEvent) => void): { readonly done: Promise<void>; abort(): void } {
    const ac = new AbortController();
    const q = new URLSearchParams({ watch: 'true' });
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
    const what = `watch ${path}`;
    const done = (async () => {
      const ro = await this.options('GET', {}, ac.signal);
      if (ac.signal.aborted) return;
      await new Promise<void>((resolve, reject) => {
        const req = this.mod.request(`${this.conn.server}${path}?${q.toString()}`, ro, (res) => {
          const code = res.statusCode ?? 0;
          if (code !== 200) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('error', () => undefined);
            res.on('end', () => {
              const s = statusMessage(Buffer.concat(chunks).toString('utf8'));
              reject(new ApiError(code, `${what}: ${code} ${s.message}`, s.reason));
            });
            return;
          }
          res.setEncoding('utf8');
          let buf = '';
          let failed = false;
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl = buf.indexOf('\n');
            while (nl >= 0 && !failed && !ac.signal.aborted) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              nl = buf.indexOf('\n');
              if (line === '') continue;
              let ev: WatchEvent;
              try {
                ev = JSON.parse(line) as WatchEvent;
              } catch (e) {
                failed = true;
                req.destroy();
                reject(new Error(`${what}: invalid JSON line (${(e as Error).message})`));
                return;
              }
              try {
                onEvent(ev);
              } catch (e) {
                failed = true;
                req.destroy();
                reject(e);
                return;
              }
            }
          });
          res.on('error', () => undefined); // 'close' tells
          res.on('close', () => {
            if (failed) return;
            if (ac.signal.aborted || res.complete) resolve();
            else reject(new Error(`${what}: ${CUT}`));
          });
        });
        req.on('error', (e) => (ac.signal.aborted ? resolve() : reject(new Error(`${what}: ${e.message}`))));
        req.end();
      });
    })();
    return { done, abort: () => ac.abort() };
  }
}

/** Runs an exec credential plugin (ExecCredential) and returns its token and expiry. */
export async function runExecPlugin(p: ExecPlugin, timeoutMs = 30_000): Promise<{ token: string; expires?: number }> {
  const what = `exec credential plugin ${p.command}`;
  const info = JSON.stringify({ apiVersion: p.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(p.command, [...p.args], { env: { ...process.env, ...p.env, KUBERNETES_EXEC_INFO: info }, timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, out, errOut) => {
      if (err) reject(new Error(`${what}: ${err.message.split('\n')[0]}${errOut ? `: ${String(errOut).trim().slice(0, 200)}` : ''}`));
      else resolve(String(out));
    });
  });
  let cred: { status?: { token?: unknown; expirationTimestamp?: unknown; clientCertificateData?: unknown } };
  try {
    cred = JSON.parse(stdout) as typeof cred;
  } catch (e) {
    throw new Error(`${what}: its output is not an ExecCredential (${(e as Error).message})`);
  }
  const token = cred.status?.token;
  if (typeof token !== 'string' || token === '') {
    throw new Error(cred.status?.clientCertificateData !== undefined ? `${what}: returns a client certificate, which is not supported (only status.token)` : `${what}: its ExecCredential has no status.token`);
  }
  const exp = typeof cred.status?.expirationTimestamp === 'string' ? Date.parse(cred.status.expirationTimestamp) : NaN;
  return { token, expires: Number.isFinite(exp) ? exp : undefined };
}

// ---------------------------------------------------------------- list and watch

export interface ListWatchOptions {
  readonly client: KubeClient;
  /** The collection path, e.g. `/api/v1/nodes`. */
  readonly path: string;
  readonly fieldSelector?: string;
  /** Asked of the API server for each watch; it then ends the watch cleanly and it is re-opened. Default 300. */
  readonly timeoutSeconds?: number;
  /** Page size of a list. Default 500 (client-go's). */
  readonly pageSize?: number;
  readonly backoff?: Partial<BackoffOptions>;
  readonly random?: () => number;
  /** A list starts (again): its pages follow, then `onListEnd`. */
  readonly onListStart: () => void;
  /** Each page of a list, its objects in full. */
  readonly onListPage: (items: unknown[]) => void;
  /** The list is complete (what it did not hold is gone); the watch starts next. */
  readonly onListEnd: () => void;
  /** Each ADDED, MODIFIED or DELETED object, in full. */
  readonly onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: unknown) => void;
  /** Each watch request sent (the first and every re-watch). */
  readonly onWatch?: () => void;
  /** The clock of `checkIdle` (ms). Default Date.now. */
  readonly now?: () => number;
  /** An error: the loop waits (backoff with jitter) and then lists again. */
  readonly onError: (err: Error) => void;
}

/**
 * One collection kept in sync: list (paginated), then watch from the list's
 * resourceVersion with bookmarks; a watch that ends cleanly (server timeout)
 * is re-opened from the last resourceVersion seen (events and bookmarks), a
 * 410 Gone (an ERROR event or status) relists at once, any other error is
 * reported and relists after a backoff with jitter (reset once a watch
 * delivers a line).
 * It keeps no object, only where to resume.
 */
export class ListWatch {
  /** The resourceVersion the next watch starts from ("" = list first). */
  resourceVersion = '';
  private gen = 0;
  private stopped = true;
  private attempt = 0;
  private timer?: NodeJS.Timeout;
  private current?: { abort(): void };
  private readonly backoff: BackoffOptions;
  /** A watch is open (not listing, not waiting out a backoff). */
  private watching = false;
  /** When the open watch started or last delivered a line (ms, from `now`). */
  private lastActivity = 0;

  constructor(private readonly opts: ListWatchOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
  }

  start(): void {
    this.stopped = false;
    this.restart();
  }

  /** Drops the current list or watch and lists again now (a forced resync). */
  restart(): void {
    this.halt();
    if (this.stopped) return;
    this.resourceVersion = '';
    void this.run(this.gen);
  }

  /** Drops the current watch, reports `err` and relists after a backoff (a watch presumed dead). */
  fail(err: Error): void {
    if (this.stopped) return;
    this.halt();
    this.failed(this.gen, err);
  }

  stop(): void {
    this.stopped = true;
    this.halt();
  }

  /**
   * The idle watchdog's look: a watch silent for `idleMs` (no line, though the
   * server sends bookmarks and ends a watch after `timeoutSeconds`) is presumed
   * half-open (a dead peer can leave TCP open for many minutes) and fails,
   * so it relists after the backoff. True when it did.
   */
  checkIdle(idleMs: number): boolean {
    if (!this.watching) return false;
    const silent = (this.opts.now ?? Date.now)() - this.lastActivity;
    if (silent < idleMs) return false;
    this.fail(new Error(`watch silent for ${Math.round(silent / 1000)} s; reconnecting`));
    return true;
  }

  private halt(): void {
    this.gen++;
    this.watching = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.current?.abort();
    this.current = undefined;
  }

  private live(gen: number): boolean {
    return !this.stopped && gen === this.gen;
  }

  private failed(gen: number, err: Error): void {
    if (!this.live(gen)) return;
    this.resourceVersion = '';
    this.opts.onError(err);
    if (!this.live(gen)) return;
    const delay = backoffDelay(this.attempt++, this.backoff, (this.opts.random ?? Math.random)());
    this.timer = setTimeout(() => {
      if (this.live(gen)) void this.run(gen);
    }, delay);
  }

  private async run(gen: number): Promise<void> {
    const o = this.opts;
    try {
      for (;;) {
        if (this.resourceVersion === '') {
          const ac = new AbortController();
          this.current = ac;
          o.onListStart();
          const live = () => this.live(gen);
          const page = (items: unknown[]) => {
            if (live()) o.onListPage(items);
          };
          const restart = () => {
            if (live()) o.onListStart();
          };
          const list = await o.client.list(o.path, { fieldSelector: o.fieldSelector, limit: o.pageSize ?? 500, signal: ac.signal, onPage: page, onRestart: restart });
          if (!this.live(gen)) return;
          this.resourceVersion = list.resourceVersion;
          o.onListEnd();
          if (!this.live(gen)) return;
        }
        let gone = false;
        let lines = 0;
        const opened = Date.now();
        const w = o.client.watch(o.path, { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: o.timeoutSeconds ?? 300, fieldSelector: o.fieldSelector }, (ev) => {
          if (!this.live(gen) || gone) return;
          // the watch works: the next error starts the backoff over (not a good list alone,
          // or a watch refused every time would relist every initialMs)
          if (lines++ === 0) this.attempt = 0;
          this.lastActivity = (o.now ?? Date.now)();
          const object = ev.object as { metadata?: { resourceVersion?: unknown }; code?: unknown; message?: unknown } | null;
          if (ev.type === 'ERROR') {
            if (object?.code === 410) {
              gone = true;
              w.abort();
            } else throw new ApiError(Number(object?.code ?? 0), `watch ${o.path}: ${String(object?.code ?? '')} ${String(object?.message ?? 'error')}`);
            return;
          }
          const rv = object?.metadata?.resourceVersion;
          if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') o.onEvent(ev.type, object);
        });
        this.current = w;
        this.watching = true;
        this.lastActivity = (o.now ?? Date.now)();
        o.onWatch?.();
        try {
          await w.done;
        } catch (e) {
          if (!(e instanceof ApiError && e.statusCode === 410)) throw e;
          gone = true;
        }
        if (!this.live(gen)) return;
        this.watching = false;
        if (gone) this.resourceVersion = '';
        // a server that ends every watch at once would otherwise be asked again and again without a pause
        else if (lines === 0 && Date.now() - opened < 1000) throw new Error(`watch ${o.path}: ended at once without an event`);
      }
    } catch (e) {
      this.failed(gen, e instanceof Error ? e : new Error(String(e)));
    }
  }
}

/** `--kubeconfig PATH` when given, else the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT). */
export function loadKubeConfig(opts: {
  readonly kubeconfig?: string;
  /** Prefix of /var/run/secrets/kubernetes.io/serviceaccount (tests). */
  readonly serviceAccountRoot?: string;
  /** Where KUBERNETES_SERVICE_HOST/PORT are read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}): KubeClient {
  if (opts.kubeconfig) return new KubeClient(parseKubeconfig(readFileSync(opts.kubeconfig, 'utf8'), opts.kubeconfig));
  return new KubeClient(inClusterConnection(opts.env ?? process.env, opts.serviceAccountRoot));
}
