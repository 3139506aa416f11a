/**
 * Shell: HTTP to the API server on Node's own `http`/`https`. JSON requests,
 * paginated lists (client-go's pager), and watches read as newline-delimited
 * JSON. What it does on a failure, as client-go does:
 *
 * - 401: a token from a file (in-cluster, kubeconfig `tokenFile`) or an exec
 *   plugin is read again and the request retried once;
 * - 429, or 5xx with `Retry-After`: waits as asked and retries (up to
 *   `maxRetries`, client-go's 10); the last answer's `Retry-After` is kept on
 *   the `ApiError` for the caller's backoff;
 * - CA or client certificate and key read from files: re-read every
 *   `tlsRecheckMs` (client-go's 5 minutes) and after a TLS failure; when they
 *   changed, a new connection pool is used (the old one is closed, so open
 *   watches reconnect with the new certificate) and a request that failed on
 *   TLS is retried once.
 *
 * Time comes from the injected `now` and `sleep` (tests drive both).
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { runExecPlugin, type KubeConnection } from './kube-config.js';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** The Status `reason` (e.g. `Expired`, `AlreadyExists`), when the server sent one. */
    readonly reason?: string,
    /** The answer's `Retry-After` (ms), when it had one. */
    readonly retryAfterMs?: number,
    /** The Status `details.causes[].type` (e.g. `ResourceVersionTooLarge`). */
    readonly causes: readonly string[] = [],
  ) {
    super(message);
  }
}

/** 410 Gone / `Expired`: a resourceVersion or continue token too old (client-go's isExpiredError). */
export function isExpired(e: unknown): boolean {
  return e instanceof ApiError && (e.statusCode === 410 || e.reason === 'Expired' || e.reason === 'Gone');
}

/** The API server's watch cache has not reached the resourceVersion asked for (client-go's isTooLargeResourceVersionError). */
export function isTooLargeResourceVersion(e: unknown): boolean {
  if (!(e instanceof ApiError)) return false;
  if (e.causes.includes('ResourceVersionTooLarge')) return true;
  return (e.statusCode === 504 || e.reason === 'Timeout') && /too large resource version/i.test(e.message);
}

export interface ListResult {
  readonly resourceVersion: string;
  readonly items: unknown[];
  /** The server answered in more than one page (it honoured `limit`). */
  readonly paginated: boolean;
}

export interface WatchEvent {
  readonly type: string;
  readonly object: unknown;
}

export interface KubeClientOptions {
  /** The clock (ms): token lifetimes, TLS file re-reads, `Retry-After` dates. Default Date.now. */
  readonly now?: () => number;
  /** Waits `ms` (a `Retry-After`); resolves early when `signal` aborts. Default a timer. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Retries of one request the server asked to wait for (`Retry-After`). Default 10 (client-go's). */
  readonly maxRetries?: number;
  /** A watch line (one event) longer than this is an error that ends the watch. Default 16 MiB. */
  readonly maxWatchLineBytes?: number;
  /** How often CA and client certificate files are re-read (ms). Default 5 minutes. */
  readonly tlsRecheckMs?: number;
}

/** How long a token read from a file or an exec plugin is reused (client-go re-reads its token file each minute). */
const TOKEN_TTL_MS = 60_000;
const DEFAULT_MAX_LINE = 16 << 20;
const DEFAULT_TLS_RECHECK_MS = 5 * 60_000;

/** Reads a Status body's message (or the text's start), reason and causes. */
function statusOf(text: string): { message: string; reason?: string; causes: string[] } {
  try {
    const s = JSON.parse(text) as { message?: unknown; reason?: unknown; details?: { causes?: unknown } };
    const causes = Array.isArray(s.details?.causes)
      ? s.details.causes.map((c) => (c as { type?: unknown } | null)?.type).filter((t): t is string => typeof t === 'string')
      : [];
    if (typeof s.message === 'string') return { message: s.message, reason: typeof s.reason === 'string' ? s.reason : undefined, causes };
  } catch {
    /* not JSON */
  }
  return { message: text.slice(0, 200), causes: [] };
}

/** `Retry-After` (delay-seconds or an HTTP-date) in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now: number): number | undefined {
  const h = Array.isArray(header) ? header[0] : header;
  if (h === undefined || h.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(h)) return Number(h) * 1000;
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** Words for a connection cut before its response ended. */
const CUT = 'connection cut by the server or the network';

/** Node's error codes for a failed TLS handshake or certificate check. */
function isTlsFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code);
}

const timerSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

class Aborted extends Error {}

/**
 * Splits a byte stream into lines without re-slicing what is buffered: the
 * chunks of an unfinished line are kept as they came and joined once, when
 * its newline arrives. A line longer than `maxBytes` throws (a server, or
 * something between, sending without end must not grow the buffer without end).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes of an unfinished line held. */
  get pending(): number {
    return this.size;
  }

  /** Each complete line (without its newline) goes to `onLine`; it returns false to stop reading this chunk. */
  push(chunk: Buffer, onLine: (line: string) => boolean | void): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      const len = this.size + (nl - start);
      if (len > this.maxBytes) throw this.tooLong();
      let line: string;
      if (this.parts.length === 0) line = chunk.toString('utf8', start, nl);
      else {
        this.parts.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.parts, len).toString('utf8');
        this.parts = [];
        this.size = 0;
      }
      start = nl + 1;
      if (onLine(line) === false) return;
    }
    if (start >= chunk.length) return;
    this.size += chunk.length - start;
    if (this.size > this.maxBytes) throw this.tooLong();
    this.parts.push(start === 0 ? chunk : chunk.subarray(start));
  }

  private tooLong(): Error {
    this.parts = [];
    this.size = 0;
    return new Error(`a watch line over ${this.maxBytes} bytes (maxWatchLineBytes); restarting the watch`);
  }
}

interface Tls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export class KubeClient {
  readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly maxRetries: number;
  private readonly maxLine: number;
  private readonly tlsRecheckMs: number;
  private readonly mod: typeof http | typeof https;
  private agent: http.Agent;
  private tls: Tls;
  private nextTlsCheck: number;
  private tlsPending?: Promise<boolean>;
  private cachedToken?: { value: string; until: number };
  private tokenPending?: Promise<string | undefined>;
  /** Times the TLS files were found changed and a new connection pool made. */
  tlsReloads = 0;

  constructor(
    readonly conn: KubeConnection,
    opts: KubeClientOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? timerSleep;
    this.maxRetries = opts.maxRetries ?? 10;
    this.maxLine = opts.maxWatchLineBytes ?? DEFAULT_MAX_LINE;
    this.tlsRecheckMs = opts.tlsRecheckMs ?? DEFAULT_TLS_RECHECK_MS;
    this.mod = conn.server.startsWith('https:') ? https : http;
    this.tls = { ca: conn.ca, cert: conn.cert, key: conn.key };
    this.agent = this.makeAgent();
    this.nextTlsCheck = this.now() + this.tlsRecheckMs;
  }

  get server(): string {
    return this.conn.server;
  }

  private makeAgent(): http.Agent {
    const c = this.conn;
    if (this.mod === http) return new http.Agent({ keepAlive: true });
    return new https.Agent({
      keepAlive: true,
      ca: this.tls.ca,
      cert: this.tls.cert,
      key: this.tls.key,
      rejectUnauthorized: !c.insecureSkipTlsVerify,
      servername: c.tlsServerName,
    });
  }

  /**
   * Re-reads the CA and client certificate files; when any changed, later
   * requests use a new connection pool and the old one is closed. True when
   * they changed. A file that cannot be read (mid-rotation) keeps the old material.
   */
  reloadTls(): Promise<boolean> {
    const files = this.conn.tlsFiles;
    if (!files || this.mod !== https) return Promise.resolve(false);
    this.tlsPending ??= (async () => {
      this.nextTlsCheck = this.now() + this.tlsRecheckMs;
      const read = async (p: string | undefined, old: Buffer | undefined) => (p === undefined ? old : await readFile(p).catch(() => old));
      const next: Tls = { ca: await read(files.ca, this.tls.ca), cert: await read(files.cert, this.tls.cert), key: await read(files.key, this.tls.key) };
      const same = (a?: Buffer, b?: Buffer) => (a === undefined ? b === undefined : b !== undefined && a.equals(b));
      if (same(next.ca, this.tls.ca) && same(next.cert, this.tls.cert) && same(next.key, this.tls.key)) return false;
      const old = this.agent;
      this.tls = next;
      this.agent = this.makeAgent();
      this.tlsReloads++;
      old.destroy();
      return true;
    })().finally(() => (this.tlsPending = undefined));
    return this.tlsPending;
  }

  /** The token is read from a file or an exec plugin, so a 401 may be cured by reading it again. */
  private get tokenRefreshable(): boolean {
    const c = this.conn;
    return !c.token && !c.basic && (c.tokenFile !== undefined || c.exec !== undefined);
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

  private async options(method: string, headers: Record<string, string>): Promise<http.RequestOptions> {
    if (this.conn.tlsFiles && this.now() >= this.nextTlsCheck) await this.reloadTls();
    const auth = await this.authorization();
    return {
      method,
      agent: this.agent,
      headers: { Accept: 'application/json', 'User-Agent': 'tsbgp', ...headers, ...(auth ? { Authorization: auth } : {}) },
    };
  }

  /**
   * One request: resolves with the response once its headers are in.
   * `signal` destroys the request (and its response) without an error: Node's
   * own `signal` option destroys the socket with an AbortError, which is
   * emitted with no listener when the abort comes from a 'data' handler of a
   * response that already ended on a kept-alive socket (an uncaught exception).
   */
  private once(
    path: string,
    ro: http.RequestOptions,
    body: string | undefined,
    timeoutMs: number | undefined,
    signal?: AbortSignal,
  ): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.mod.request(this.conn.server + path, timeoutMs ? { ...ro, timeout: timeoutMs } : ro, resolve);
      if (timeoutMs) req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
      req.on('error', reject);
      if (signal) {
        const onAbort = () => {
          req.destroy();
          reject(new Aborted());
        };
        signal.addEventListener('abort', onAbort, { once: true });
        req.once('close', () => signal.removeEventListener('abort', onAbort));
      }
      req.end(body);
    });
  }

  /**
   * Sends a request until its answer is final: a 401 with a rotating token
   * is retried once with the token read again, a TLS failure once after the
   * TLS files changed, a 429 or 5xx with `Retry-After` after the wait asked
   * (up to maxRetries). Throws `Aborted` when `signal` aborts.
   */
  private async open(
    method: string,
    path: string,
    o: { body?: string; headers?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<http.IncomingMessage> {
    let authRetried = false;
    let tlsRetried = false;
    let retries = 0;
    for (;;) {
      const ro = await this.options(method, o.headers ?? {});
      if (o.signal?.aborted) throw new Aborted();
      let res: http.IncomingMessage;
      try {
        res = await this.once(path, ro, o.body, o.timeoutMs, o.signal);
      } catch (e) {
        if (o.signal?.aborted) throw new Aborted();
        if (!tlsRetried && isTlsFailure(e) && (await this.reloadTls())) {
          tlsRetried = true;
          continue;
        }
        throw e;
      }
      const code = res.statusCode ?? 0;
      if (code === 401 && !authRetried && this.tokenRefreshable) {
        authRetried = true;
        res.resume();
        this.cachedToken = undefined;
        continue;
      }
      const wait = code === 429 || code >= 500 ? retryAfterMs(res.headers['retry-after'], this.now()) : undefined;
      if (wait !== undefined && retries < this.maxRetries) {
        retries++;
        res.resume();
        await this.sleep(wait, o.signal);
        if (o.signal?.aborted) throw new Aborted();
        continue;
      }
      return res;
    }
  }

  /** Reads a whole response body; rejects when the connection is cut before its end. */
  private body(res: http.IncomingMessage): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => reject(e));
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('close', () => {
        if (!res.complete) reject(new Error(CUT));
      });
    });
  }

  private async apiError(res: http.IncomingMessage, what: string): Promise<ApiError> {
    const code = res.statusCode ?? 0;
    const text = (await this.body(res).catch(() => Buffer.alloc(0))).toString('utf8');
    const s = statusOf(text);
    return new ApiError(code, `${what}: ${code} ${s.message}`, s.reason, retryAfterMs(res.headers['retry-after'], this.now()), s.causes);
  }

  /** A request whose JSON answer is parsed; a non-2xx answer throws ApiError naming the method, path, code and message. */
  async request(method: string, path: string, opts: { body?: unknown; contentType?: string; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<unknown> {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const headers: Record<string, string> =
      body === undefined ? {} : { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': String(Buffer.byteLength(body)) };
    const what = `${method} ${path}`;
    let text: string;
    try {
      const res = await this.open(method, path, { body, headers, timeoutMs: opts.timeoutMs ?? 30_000, signal: opts.signal });
      const code = res.statusCode ?? 0;
      if (code < 200 || code > 299) throw await this.apiError(res, what);
      text = (await this.body(res)).toString('utf8');
    } catch (e) {
      if (e instanceof ApiError) throw e;
      if (e instanceof Aborted) throw new Error(`${what}: aborted`);
      throw new Error(`${what}: ${(e as Error).message}`);
    }
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new Error(`${what}: invalid JSON (${(e as Error).message})`);
    }
  }

  getJson(path: string, timeoutMs?: number): Promise<unknown> {
    return this.request('GET', path, { timeoutMs });
  }

  /**
   * Lists a collection in pages of `limit` (following `continue`), so no
   * single answer holds the whole collection, as client-go's pager does: the
   * first page asks for `resourceVersion` (given and not "": "0" lets the API
   * server answer from its watch cache, which may ignore `limit` and answer
   * in one piece); the pages after it carry only the continue token (the
   * server refuses both). A continue token that expired (410) starts the
   * list over in one piece, without a resourceVersion.
   * With `onPage`, each page's items go there as it arrives (and `onRestart`
   * says the list starts over) instead of into the result: the whole
   * collection is then never held at once.
   */
  async list(
    path: string,
    opts: {
      fieldSelector?: string;
      limit?: number;
      resourceVersion?: string;
      timeoutMs?: number;
      signal?: AbortSignal;
      onPage?: (items: unknown[]) => void;
      onRestart?: () => void;
    } = {},
  ): Promise<ListResult> {
    const items: unknown[] = [];
    let cont: string | undefined;
    let limit = opts.limit;
    let rv = opts.resourceVersion;
    let paginated = false;
    for (;;) {
      const q = new URLSearchParams();
      if (opts.fieldSelector) q.set('fieldSelector', opts.fieldSelector);
      if (limit) q.set('limit', String(limit));
      if (rv) q.set('resourceVersion', rv);
      if (cont) q.set('continue', cont);
      const qs = q.toString();
      let page: { metadata?: { resourceVersion?: unknown; continue?: unknown }; items?: unknown };
      try {
        page = (await this.request('GET', qs ? `${path}?${qs}` : path, { timeoutMs: opts.timeoutMs, signal: opts.signal })) as typeof page;
      } catch (e) {
        if (cont && isExpired(e)) {
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
      if (!cont) return { resourceVersion: String(page.metadata?.resourceVersion ?? ''), items, paginated };
      paginated = true;
      rv = undefined;
    }
  }

  /**
   * Opens a watch (`?watch=true`) and calls `onEvent` for each line of its
   * newline-delimited JSON stream. The promise settles when the stream ends:
   * resolved on a clean end, rejected on an error (an HTTP error status
   * rejects with ApiError; a line over maxWatchLineBytes ends the watch
   * with an error saying so). `abort()` ends it at once, also while it is
   * still opening; the promise then resolves.
   */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (ev: WatchEvent) => void,
  ): { readonly done: Promise<void>; abort(): void } {
    const ac = new AbortController();
    const q = new URLSearchParams({ watch: 'true' });
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
    const what = `watch ${path}`;
    const done = (async () => {
      let res: http.IncomingMessage;
      try {
        res = await this.open('GET', `${path}?${q.toString()}`, { signal: ac.signal });
      } catch (e) {
        if (e instanceof Aborted || ac.signal.aborted) return;
        throw new Error(`${what}: ${(e as Error).message}`);
      }
      if (ac.signal.aborted) {
        res.destroy();
        return;
      }
      if (res.statusCode !== 200) throw await this.apiError(res, what);
      await new Promise<void>((resolve, reject) => {
        const lines = new LineSplitter(this.maxLine);
        let failed = false;
        const fail = (e: Error) => {
          failed = true;
          res.destroy();
          reject(e);
        };
        const onLine = (raw: string): boolean => {
          if (failed || ac.signal.aborted) return false;
          const line = raw.trim();
          if (line === '') return true;
          let ev: WatchEvent;
          try {
            ev = JSON.parse(line) as WatchEvent;
          } catch (e) {
            fail(new Error(`${what}: invalid JSON line (${(e as Error).message})`));
            return false;
          }
          try {
            onEvent(ev);
          } catch (e) {
            fail(e instanceof Error ? e : new Error(String(e)));
            return false;
          }
          return true;
        };
        res.on('data', (chunk: Buffer) => {
          if (failed || ac.signal.aborted) return;
          try {
            lines.push(chunk, onLine);
          } catch (e) {
            fail(new Error(`${what}: ${(e as Error).message}`));
          }
        });
        res.on('error', () => undefined); // 'close' tells
        res.on('close', () => {
          if (failed) return;
          if (ac.signal.aborted || res.complete) resolve();
          else reject(new Error(`${what}: ${CUT}`));
        });
      });
    })();
    return { done, abort: () => ac.abort() };
  }
}
