/**
 * Shell: one collection kept in sync by list and watch, as client-go's
 * reflector does it (tools/cache/reflector.go).
 *
 * - The first list asks for resourceVersion "0", so the API server answers
 *   from its watch cache, not with a quorum read from etcd. A relist asks for
 *   the last resourceVersion seen (events, bookmarks, the list): also served
 *   from the cache (the answer is at least that fresh, so never older than
 *   what was seen) and not paginated then (a cache list with a resourceVersion
 *   other than "0" is served only without `limit`), so after an API server
 *   restart the nodes relisting at once do not all reach etcd. A list at "0"
 *   is asked in pages of `pageSize`; the cache ignores the limit, and a
 *   server that honoured it (no watch cache) keeps being asked in pages.
 * - A list whose resourceVersion is expired (410) or ahead of the server's
 *   cache ("Too large resource version") is asked again at once with
 *   resourceVersion "" (a quorum read), and the next list starts over at the
 *   last resourceVersion seen.
 * - The watch starts from the list's resourceVersion with bookmarks; a watch
 *   that ends cleanly (the server's timeout) is re-opened from the last
 *   resourceVersion seen; a 410 Gone (an ERROR event or the status) relists
 *   at once; a watch refused with 429 or by a closed port (an API server
 *   restarting) is reported and asked again from the same resourceVersion
 *   after the backoff; any other error is reported and relists after a
 *   backoff with jitter (reset once a watch delivers a line), at least the
 *   `Retry-After` the server asked for.
 *
 * It keeps no object, only where to resume.
 */
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from '../../kubernetes/index.js';
import { ApiError, isExpired, isTooLargeResourceVersion, type KubeClient } from './kube-http.js';

export interface ListWatchOptions {
  readonly client: KubeClient;
  /** The collection path, e.g. `/api/v1/nodes`. */
  readonly path: string;
  readonly fieldSelector?: string;
  /** Asked of the API server for each watch; it then ends the watch cleanly and it is re-opened. Default 300. */
  readonly timeoutSeconds?: number;
  /**
   * Page size of a list. Given, every list is asked in pages of it (client-go's
   * WatchListPageSize); else lists at "0" are asked in pages of 500 (client-go's
   * pager default) and relists at a resourceVersion in one piece, unless the
   * server paginated a list at "0".
   */
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
  /** The clock (ms) of `checkIdle` and of a watch that ends at once. Default the client's. */
  readonly now?: () => number;
  /** Schedules the retry after a backoff. Default setTimeout. */
  readonly setTimer?: (fn: () => void, ms: number) => { cancel(): void };
  /** An error: the loop waits (backoff with jitter) and then lists again. */
  readonly onError: (err: Error) => void;
}

/** client-go's pager default. */
const DEFAULT_PAGE = 500;

const realTimer = (fn: () => void, ms: number) => {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
};

export class ListWatch {
  /** The resourceVersion the next watch starts from ("" = list first). */
  resourceVersion = '';
  /** The last resourceVersion seen (list, events, bookmarks): where a relist asks from. */
  private lastSync = '';
  /** `lastSync` proved unusable (expired, too large): the next list is a quorum read. */
  private lastSyncUnavailable = false;
  /** A list at "0" came in pages: the server has no watch cache for it, keep paging. */
  private paginated = false;
  private gen = 0;
  private stopped = true;
  private attempt = 0;
  private timer?: { cancel(): void };
  private current?: { abort(): void };
  private readonly backoff: BackoffOptions;
  private readonly now: () => number;
  /** A watch is open (not listing, not waiting out a backoff). */
  private watching = false;
  /** When the open watch started or last delivered a line (ms, from `now`). */
  private lastActivity = 0;

  constructor(private readonly opts: ListWatchOptions) {
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.now = opts.now ?? opts.client.now;
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
    const silent = this.now() - this.lastActivity;
    if (silent < idleMs) return false;
    this.fail(new Error(`watch silent for ${Math.round(silent / 1000)} s; reconnecting`));
    return true;
  }

  /** The resourceVersion the next list asks for (client-go's relistResourceVersion). */
  get relistResourceVersion(): string {
    if (this.lastSyncUnavailable) return '';
    return this.lastSync === '' ? '0' : this.lastSync;
  }

  private halt(): void {
    this.gen++;
    this.watching = false;
    this.timer?.cancel();
    this.timer = undefined;
    this.current?.abort();
    this.current = undefined;
  }

  private live(gen: number): boolean {
    return !this.stopped && gen === this.gen;
  }

  /** Reports `err` and, after the backoff, lists again (or, `rewatch`, watches again from where it was). */
  private failed(gen: number, err: Error, rewatch = false): void {
    if (!this.live(gen)) return;
    if (!rewatch) this.resourceVersion = '';
    this.opts.onError(err);
    if (!this.live(gen)) return;
    const backoff = backoffDelay(this.attempt++, this.backoff, (this.opts.random ?? Math.random)());
    const asked = err instanceof ApiError ? (err.retryAfterMs ?? 0) : 0;
    this.timer = (this.opts.setTimer ?? realTimer)(
      () => {
        if (this.live(gen)) void this.run(gen);
      },
      Math.max(backoff, asked),
    );
  }

  /** Lists at relistResourceVersion, falling back to a quorum read when that version is unusable. */
  private async list(gen: number): Promise<void> {
    const o = this.opts;
    const ac = new AbortController();
    this.current = ac;
    const live = () => this.live(gen);
    const page = (items: unknown[]) => {
      if (live()) o.onListPage(items);
    };
    const restart = () => {
      if (live()) o.onListStart();
    };
    o.onListStart();
    for (;;) {
      const rv = this.relistResourceVersion;
      const limit = o.pageSize ?? (this.paginated || rv === '' || rv === '0' ? DEFAULT_PAGE : undefined);
      let list;
      try {
        list = await o.client.list(o.path, { fieldSelector: o.fieldSelector, limit, resourceVersion: rv, signal: ac.signal, onPage: page, onRestart: restart });
      } catch (e) {
        if (rv !== '' && live() && (isExpired(e) || isTooLargeResourceVersion(e))) {
          this.lastSyncUnavailable = true;
          continue;
        }
        throw e;
      }
      if (!live()) return;
      if (rv === '0' && list.paginated) this.paginated = true;
      this.lastSyncUnavailable = false;
      this.lastSync = list.resourceVersion;
      this.resourceVersion = list.resourceVersion;
      o.onListEnd();
      return;
    }
  }

  private async run(gen: number): Promise<void> {
    const o = this.opts;
    try {
      for (;;) {
        if (this.resourceVersion === '') {
          await this.list(gen);
          if (!this.live(gen)) return;
        }
        let gone = false;
        let lines = 0;
        const opened = this.now();
        const w = o.client.watch(
          o.path,
          { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: o.timeoutSeconds ?? 300, fieldSelector: o.fieldSelector },
          (ev) => {
            if (!this.live(gen) || gone) return;
            // the watch works: the next error starts the backoff over (not a good list alone,
            // or a watch refused every time would relist every initialMs)
            if (lines++ === 0) this.attempt = 0;
            this.lastActivity = this.now();
            const object = ev.object as { metadata?: { resourceVersion?: unknown }; code?: unknown; message?: unknown } | null;
            if (ev.type === 'ERROR') {
              if (object?.code === 410) {
                gone = true;
                w.abort();
              } else throw new ApiError(Number(object?.code ?? 0), `watch ${o.path}: ${String(object?.code ?? '')} ${String(object?.message ?? 'error')}`);
              return;
            }
            const rv = object?.metadata?.resourceVersion;
            if (typeof rv === 'string' && rv !== '') this.resourceVersion = this.lastSync = rv;
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') o.onEvent(ev.type, object);
          },
        );
        this.current = w;
        this.watching = true;
        this.lastActivity = this.now();
        o.onWatch?.();
        try {
          await w.done;
        } catch (e) {
          if (!(e instanceof ApiError && e.statusCode === 410)) {
            // a watch the server did not take (429, or nothing listening: an API server restarting) is asked
            // again from the same resourceVersion after the backoff, without a relist (client-go's isWatchErrorRetriable)
            const retriable = lines === 0 && ((e instanceof ApiError && e.statusCode === 429) || /ECONNREFUSED/.test((e as Error).message));
            if (retriable) return this.failed(gen, e as Error, true);
            throw e;
          }
          gone = true;
        }
        if (!this.live(gen)) return;
        this.watching = false;
        // 410: relist at the last resourceVersion seen (the cache answers at least as fresh; client-go does not
        // give up on it here, only when the list itself says it is expired)
        if (gone) this.resourceVersion = '';
        // a server that ends every watch at once would otherwise be asked again and again without a pause
        else if (lines === 0 && this.now() - opened < 1000) throw new Error(`watch ${o.path}: ended at once without an event`);
      }
    } catch (e) {
      this.failed(gen, e instanceof Error ? e : new Error(String(e)));
    }
  }
}
