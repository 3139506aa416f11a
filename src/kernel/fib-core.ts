/**
 * The kernel FIB's pure core: what routing wants (desired routes per
 * prefix, static routes, blackholes) against what the kernel holds for our
 * protocol in our table (installed), turned into operations (replace,
 * delete). No I/O: the shell feeds kernel facts in (dumps, monitor events,
 * connected networks, `ip route get` answers) and carries the operations
 * out, reporting each one's outcome back with `applied`.
 *
 * Restarts: the first kernel dump of a `restarting` core adopts every route
 * of ours as stale. Stale routes stay until `endRestart` (every peer's
 * End-of-RIB, or the selection deferral) unless routing learns them again
 * (then they are routing's: replaced, and removed if withdrawn); new and
 * changed routes are written meanwhile. After it, a route nobody wants any
 * more is deleted.
 */
import { Address } from '../net/address.js';
import { Prefix } from '../net/prefix.js';
import type { ConnectedRoute, DesiredRoute, Gateway, KernelOp, KernelRoute, Lookup, NextHop, Refusal } from './types.js';

export interface FibCoreOptions {
  /** Most next hops in one route (BIRD's `merge paths` limit); default 16. */
  readonly ecmp?: number;
  /** Metric written on IPv4 routes (default 0, the kernel's) and IPv6 routes (default 1024, the kernel's). */
  readonly metricV4?: number;
  readonly metricV6?: number;
  /** Resolve a next hop that is not on a connected network through the kernel's lookup (BIRD's `gateway recursive`); default true. */
  readonly recursive?: boolean;
  /** Adopt the routes of the first dump as stale, kept until `endRestart`. Default true. */
  readonly restarting?: boolean;
}

interface Conn {
  readonly prefix: Prefix;
  readonly dev: string;
}

type Resolved = { readonly ok: true; readonly route: KernelRoute; readonly partial?: string } | { readonly ok: false; readonly reason: string } | { readonly ok: 'pending' };

export class FibCore {
  readonly ecmp: number;
  readonly metricV4: number;
  readonly metricV6: number;
  readonly recursive: boolean;
  private restarting: boolean;
  private dumped = false;
  /** Routing's wishes (from the Loc-RIB through the export policy). */
  private readonly bgp = new Map<string, DesiredRoute>();
  /** Static routes and blackholes: they win over `bgp` for the same prefix (BIRD's static preference 200 > BGP 100). */
  private readonly statics = new Map<string, DesiredRoute>();
  /** Prefixes in both `bgp` and `statics` (so that `counts` is O(1)). */
  private overlap = 0;
  /**
   * prefix → our route(s) in the kernel: the route itself when there is one
   * (nearly always), an array when the prefix has routes of ours at several
   * metrics — no Map per prefix (see `Installed`).
   */
  private readonly installed = new Map<string, Installed>();
  private installedCount = 0;
  private readonly stale = new Set<string>();
  private connected: Conn[] = [];
  private links: ReadonlySet<string> | undefined;
  private readonly lookups = new Map<string, Lookup>();
  private readonly refused = new Map<string, Refusal>();
  /** Non-fatal notes per prefix (an ECMP member that did not resolve). */
  private readonly notes = new Map<string, string>();
  private dirty = new Set<string>();
  /** Prefixes a plan left as they were, waiting for a next-hop lookup. */
  private readonly waiting = new Set<string>();
  private allDirty = false;
  /** Prefixes the kernel told us about since the last plan (their outcome comes from the kernel, not from `applied`). */
  private readonly seen = new Set<string>();
  /**
   * Gateway resolutions within one plan: a next hop is shared by many routes,
   * and its answer depends only on the connected networks, the interfaces
   * and the lookups, which do not change during a plan.
   */
  private readonly resolvedGateways = new Map<string, { readonly g: Gateway; readonly h: NextHop | string | 'pending' }[]>();
  /** Sorted next-hop sets within one plan, by the identity of the resolved NextHops (see `sortedHops`). */
  private readonly hopSets = new Map<NextHop, { readonly alone: readonly NextHop[]; readonly with: Map<NextHop, readonly NextHop[]> }>();

  constructor(opts: FibCoreOptions = {}) {
    const ecmp = opts.ecmp ?? 16;
    if (!Number.isInteger(ecmp) || ecmp < 1 || ecmp > 256) throw new RangeError(`kernel ecmp must be 1..256 next hops, got ${ecmp}`);
    for (const [k, v] of [['metricV4', opts.metricV4], ['metricV6', opts.metricV6]] as const) {
      if (v !== undefined && !(Number.isInteger(v) && v >= 0 && v <= 0xffffffff)) throw new RangeError(`kernel ${k} must be 0..4294967295, got ${v}`);
    }
    this.ecmp = ecmp;
    this.metricV4 = opts.metricV4 ?? 0;
    this.metricV6 = opts.metricV6 ?? 1024;
    this.recursive = opts.recursive ?? true;
    this.restarting = opts.restarting ?? true;
  }

  // ------------------------------------------------------------ routing's side

  /**
   * What routing wants for `prefix` (undefined: nothing). A route learned
   * again is routing's from then on: no longer stale, so a withdrawal later
   * in the restart removes it.
   */
  setRoute(prefix: string, route: DesiredRoute | undefined): void {
    if (route === undefined) {
      if (!this.bgp.delete(prefix)) return;
      if (this.statics.has(prefix)) this.overlap--;
    } else {
      const size = this.bgp.size;
      this.bgp.set(prefix, route);
      if (this.bgp.size !== size && this.statics.size > 0 && this.statics.has(prefix)) this.overlap++;
      if (this.stale.size > 0) this.stale.delete(prefix);
    }
    this.dirty.add(prefix);
  }

  /** Replaces the whole set of static routes and blackholes. */
  setStatics(routes: ReadonlyMap<string, DesiredRoute>): void {
    for (const p of this.statics.keys()) if (!routes.has(p)) this.dirty.add(p);
    for (const [p, r] of routes) if (!sameDesired(this.statics.get(p), r)) this.dirty.add(p);
    this.statics.clear();
    this.overlap = 0;
    for (const [p, r] of routes) {
      this.statics.set(p, r);
      if (this.bgp.has(p)) this.overlap++;
    }
  }

  /** The restart is over: stale routes nobody wants any more go. */
  endRestart(): void {
    if (!this.restarting) return;
    this.restarting = false;
    for (const p of this.stale) this.dirty.add(p);
    this.stale.clear();
  }

  get isRestarting(): boolean {
    return this.restarting;
  }

  // ------------------------------------------------------------ the kernel's side

  /** A full dump of our routes in our table (at start and at each resync). */
  kernelTable(routes: Iterable<KernelRoute>): void {
    const before = this.installed;
    const now = new Map<string, Installed>();
    let n = 0;
    for (const r of routes) if (putInstalled(now, r)) n++;
    for (const p of before.keys()) if (!now.has(p)) this.dirty.add(p);
    for (const [p, m] of now) {
      const old = before.get(p);
      if (old === undefined || !sameInstalled(old, m)) this.dirty.add(p);
    }
    this.installed.clear();
    for (const [p, m] of now) this.installed.set(p, m);
    this.installedCount = n;
    if (!this.dumped) {
      this.dumped = true;
      if (this.restarting) for (const p of now.keys()) this.stale.add(p);
      this.allDirty = true;
    }
  }

  /** The kernel added or replaced a route of ours (monitor). */
  kernelAdded(route: KernelRoute): void {
    if (putInstalled(this.installed, route)) this.installedCount++;
    this.seen.add(route.prefix);
    this.dirty.add(route.prefix);
  }

  /** A route of ours left the kernel (monitor): deleted by someone, or by us. */
  kernelDeleted(prefix: string, metric: number): void {
    if (dropInstalled(this.installed, prefix, metric)) this.installedCount--;
    this.seen.add(prefix);
    this.dirty.add(prefix);
  }

  /** The directly connected networks (and, when known, the interfaces that exist). Every route is re-resolved. */
  setConnected(routes: readonly ConnectedRoute[], links?: ReadonlySet<string>): void {
    const conn: Conn[] = [];
    for (const r of routes) {
      try {
        conn.push({ prefix: Prefix.parse(r.prefix), dev: r.dev });
      } catch {
        // not a network (a kernel-internal entry): not a place next hops live
      }
    }
    conn.sort((a, b) => b.prefix.length - a.prefix.length);
    this.connected = conn;
    this.links = links;
    this.lookups.clear();
    this.allDirty = true;
  }

  /** Next hops that are on no connected network and that the kernel has not been asked about yet (`ip route get`). */
  neededLookups(): string[] {
    if (!this.recursive) return [];
    const out = new Set<string>();
    const checked = new Set<string>();
    const want = (g: Gateway) => {
      if (g.onlink || checked.has(g.address)) return;
      checked.add(g.address);
      if (this.lookups.has(g.address)) return;
      let a: Address;
      try {
        a = Address.parse(g.address);
      } catch {
        return;
      }
      if (a.isLinkLocal) return;
      if (this.connectedFor(a) === undefined) out.add(g.address);
    };
    // Only the prefixes touched since the last plan and those a plan left waiting: the others' next hops resolved
    // when they were planned, and every answer, or a change of connected networks, makes every prefix touched (allDirty).
    // Routes often share one DesiredRoute (a batch from one update): its gateways are looked at once in a row.
    let last: DesiredRoute | undefined;
    const each = (p: string, d: DesiredRoute | undefined) => {
      if (d === undefined || d === last || d.kind !== 'unicast' || (this.statics.size > 0 && this.statics.has(p))) return;
      last = d;
      const n = Math.min(d.gateways.length, this.ecmp);
      for (let i = 0; i < n; i++) want(d.gateways[i]);
    };
    if (this.allDirty) for (const [p, d] of this.bgp) each(p, d);
    else {
      for (const p of this.dirty) each(p, this.bgp.get(p));
      for (const p of this.waiting) each(p, this.bgp.get(p));
    }
    for (const d of this.statics.values()) if (d.kind === 'unicast') for (const g of d.gateways) want(g);
    return [...out];
  }

  /** The kernel's answer for a next hop (from `neededLookups`). Routes through it are re-resolved. */
  setLookup(address: string, answer: Lookup): void {
    this.lookups.set(address, answer);
    this.allDirty = true;
  }

  // ------------------------------------------------------------ planning

  /** True when `plan` may have something to do. */
  get pending(): boolean {
    return this.allDirty || this.dirty.size > 0;
  }

  /** The operations that take the kernel to what is desired, for every prefix touched since the last plan. */
  plan(): KernelOp[] {
    const ops: KernelOp[] = [];
    for (const piece of this.planPieces(Number.MAX_SAFE_INTEGER)) for (const op of piece) ops.push(op);
    return ops;
  }

  /**
   * `plan` in pieces, so that a shell can write the first replaces while the
   * rest is planned: arrays of at most `size` replaces, in the order of
   * `plan`, then every delete in one last piece (ordered as `orderOps`
   * orders them: the concatenation is exactly what `plan` returns). The
   * prefixes planned are those touched when it starts: a change meanwhile
   * (setRoute, a kernel event, `applied`) touches its prefix for the next
   * plan. Stopped early (`return`, or an error where it is consumed), the
   * prefixes not planned yet stay touched.
   */
  *planPieces(size: number): Generator<KernelOp[], void, undefined> {
    if (!(size >= 1)) throw new RangeError(`plan piece size must be at least 1, got ${size}`);
    let keys: Iterable<string>;
    if (this.allDirty) {
      keys = this.everyPrefix();
      this.dirty.clear();
    } else {
      keys = this.dirty;
      this.dirty = new Set();
    }
    this.allDirty = false;
    this.seen.clear();
    this.resolvedGateways.clear();
    this.hopSets.clear();
    const it = keys[Symbol.iterator]();
    let done = false;
    let deletesOut = false;
    const deletes: KernelOp[] = [];
    try {
      let replaces: KernelOp[] = [];
      for (let k = it.next(); !k.done; k = it.next()) {
        this.planPrefix(k.value, replaces, deletes);
        if (replaces.length >= size) {
          const piece = replaces;
          replaces = [];
          yield piece;
        }
      }
      done = true;
      if (replaces.length > 0) yield replaces;
      deletesOut = true;
      if (deletes.length > 0) yield orderOps(deletes);
    } finally {
      if (!done) for (let k = it.next(); !k.done; k = it.next()) this.dirty.add(k.value);
      // Deletes planned and never handed out: planned again next time.
      if (!deletesOut) for (const op of deletes) this.dirty.add(op.route.prefix);
      this.resolvedGateways.clear();
      this.hopSets.clear();
    }
  }

  /**
   * Every prefix wanted, installed or refused, once each, without building
   * a set of them all (the first plan after a dump covers the whole table).
   * The maps are read as they are when each is reached.
   */
  private *everyPrefix(): Generator<string, void, undefined> {
    const { bgp, statics, installed, refused } = this;
    yield* bgp.keys();
    if (statics.size > 0) for (const p of statics.keys()) if (!bgp.has(p)) yield p;
    for (const p of installed.keys()) if (!bgp.has(p) && !statics.has(p)) yield p;
    if (refused.size > 0) for (const p of refused.keys()) if (!bgp.has(p) && !statics.has(p) && !installed.has(p)) yield p;
  }

  private planPrefix(prefix: string, ops: KernelOp[], deletes: KernelOp[]): void {
    // (Empty maps are not asked: most plans have no statics, notes or refusals, and every lookup of a 100,000-key map costs.)
    const want = (this.statics.size > 0 ? this.statics.get(prefix) : undefined) ?? this.bgp.get(prefix);
    const have = this.installed.get(prefix);
    let keep: KernelRoute | undefined;
    if (this.notes.size > 0) this.notes.delete(prefix);
    if (this.waiting.size > 0) this.waiting.delete(prefix);
    if (want !== undefined) {
      const r = this.resolve(prefix, want);
      if (r.ok === 'pending') {
        this.waiting.add(prefix); // waiting for the kernel's lookup: leave the prefix as it is
        return;
      }
      if (r.ok) {
        keep = r.route;
        if (r.partial !== undefined) this.notes.set(prefix, r.partial);
        const cur = have !== undefined ? atMetric(have, keep.metric) : undefined;
        const same = cur !== undefined && sameRoute(cur, keep);
        // A route the kernel refused is retried only when something changed (it is dirty again) — which is now.
        if (!same) ops.push({ op: 'replace', route: keep });
        if (this.refused.size > 0) {
          const prior = this.refused.get(prefix);
          if (prior?.by === 'resolve' || same) this.refused.delete(prefix);
        }
      } else {
        this.refused.set(prefix, { prefix, reason: r.reason, by: 'resolve' });
      }
    } else if (this.refused.size > 0) this.refused.delete(prefix);
    if (have === undefined) return;
    if (this.restarting && this.stale.has(prefix)) return; // adopted: kept until the restart ends
    if (!Array.isArray(have)) {
      if (keep === undefined || have.metric !== keep.metric) deletes.push({ op: 'delete', route: have });
    } else for (const route of have) if (keep === undefined || route.metric !== keep.metric) deletes.push({ op: 'delete', route });
  }

  /** Reports one operation's outcome (`error`: the kernel's reason). */
  applied(op: KernelOp, error?: string): void {
    const p = op.route.prefix;
    if (error !== undefined) {
      if (op.op === 'replace') this.refused.set(p, { prefix: p, reason: error, by: 'kernel' });
      return;
    }
    if (op.op === 'replace' && this.refused.size > 0) this.refused.delete(p);
    // The listener told us the truth about this prefix meanwhile: keep that.
    if (this.seen.size > 0 && this.seen.has(p)) return;
    if (op.op === 'replace') {
      if (putInstalled(this.installed, op.route)) this.installedCount++;
    } else if (dropInstalled(this.installed, p, op.route.metric)) this.installedCount--;
  }

  // ------------------------------------------------------------ resolution

  private metricOf(prefix: string): number {
    return prefix.includes(':') ? this.metricV6 : this.metricV4;
  }

  private connectedFor(a: Address): Conn | undefined {
    for (const c of this.connected) if (c.prefix.family === a.family && c.prefix.contains(a)) return c;
    return undefined;
  }

  /** One desired route → the kernel route to write, or why not. */
  resolve(prefix: string, want: DesiredRoute): Resolved {
    const metric = want.metric ?? this.metricOf(prefix);
    if (want.kind === 'blackhole') return { ok: true, route: { prefix, type: 'blackhole', metric, nexthops: [] } };
    const hops: NextHop[] = [];
    const reasons: string[] = [];
    let pending = false;
    const n = Math.min(want.gateways.length, this.ecmp);
    for (let i = 0; i < n; i++) {
      const h = this.gatewayHop(want.gateways[i]);
      if (h === 'pending') pending = true;
      else if (typeof h === 'string') reasons.push(h);
      else if (!hasHop(hops, h)) hops.push(h);
    }
    if (hops.length === 0) {
      if (pending) return { ok: 'pending' };
      return { ok: false, reason: reasons.length > 0 ? reasons.join('; ') : 'no next hop' };
    }
    const route: KernelRoute = { prefix, type: 'unicast', metric, nexthops: this.sortedHops(hops) };
    return reasons.length > 0 ? { ok: true, route, partial: `next hop(s) left out: ${reasons.join('; ')}` } : { ok: true, route };
  }

  /** A gateway resolved, once per plan for every route through it (the same NextHop object each time). */
  private gatewayHop(g: Gateway): NextHop | string | 'pending' {
    let known = this.resolvedGateways.get(g.address);
    if (known === undefined) this.resolvedGateways.set(g.address, (known = []));
    for (const x of known) if (x.g === g || (x.g.dev === g.dev && !x.g.onlink === !g.onlink && x.g.peer === g.peer)) return x.h;
    const h = this.resolveGateway(g);
    known.push({ g, h });
    return h;
  }

  /**
   * The sorted next hops of a route, shared within a plan by every route
   * with the same (resolved, so identical) one or two next hops: most routes
   * share their next hops, and a sort builds keys. Larger sets are sorted
   * each time.
   */
  private sortedHops(hops: NextHop[]): readonly NextHop[] {
    if (hops.length > 2) return sortNextHops(hops);
    let one = this.hopSets.get(hops[0]);
    if (one === undefined) this.hopSets.set(hops[0], (one = { alone: [hops[0]], with: new Map() }));
    if (hops.length === 1) return one.alone;
    let two = one.with.get(hops[1]);
    if (two === undefined) one.with.set(hops[1], (two = sortNextHops(hops)));
    return two;
  }

  private resolveGateway(g: Gateway): NextHop | string | 'pending' {
    let a: Address;
    try {
      a = Address.parse(g.address);
    } catch {
      return `next hop "${g.address}" is not an IP address`;
    }
    if (g.dev !== undefined && this.links !== undefined && !this.links.has(g.dev)) return `interface ${g.dev} does not exist (next hop ${g.address})`;
    if (g.onlink) {
      if (g.dev === undefined) return `onlink next hop ${g.address} needs an interface`;
      return { via: g.address, dev: g.dev, onlink: true };
    }
    if (a.isLinkLocal && a.family === 6) {
      if (g.dev !== undefined) return { via: g.address, dev: g.dev };
      const peer = g.peer !== undefined ? safeAddress(g.peer) : undefined;
      const c = peer !== undefined ? this.connectedFor(peer) : undefined;
      if (c !== undefined) return { via: g.address, dev: c.dev };
      return `IPv6 link-local next hop ${g.address} needs its interface (the peer${g.peer !== undefined ? ` ${g.peer}` : ''} is on no connected network)`;
    }
    const c = this.connectedFor(a);
    if (c !== undefined) return { via: g.address, dev: g.dev ?? c.dev };
    if (!this.recursive) return `next hop ${g.address} is on no connected network (recursive resolution is off)`;
    const l = this.lookups.get(g.address);
    if (l === undefined) return 'pending';
    if (!l.ok) return `next hop ${g.address} is on no connected network and the kernel cannot reach it: ${l.reason}`;
    // Recursive (BIRD's `gateway recursive`): through the gateway of the route covering the next hop.
    if (l.via === undefined) return { via: g.address, dev: l.dev };
    return { via: l.via, dev: l.dev };
  }

  // ------------------------------------------------------------ views (O(1) or O(refused))

  get counts(): { desired: number; installed: number; refused: number; stale: number } {
    const desired = this.statics.size + this.bgp.size - this.overlap;
    return { desired, installed: this.installedCount, refused: this.refused.size, stale: this.restarting ? this.stale.size : 0 };
  }

  get refusedCount(): number {
    return this.refused.size;
  }

  /** Up to `limit` refusals, sorted by prefix. */
  refusals(limit = 100): Refusal[] {
    const all = [...this.refused.values()];
    all.sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
    return all.slice(0, limit);
  }

  refusal(prefix: string): Refusal | undefined {
    return this.refused.get(prefix);
  }

  note(prefix: string): string | undefined {
    return this.notes.get(prefix);
  }

  /** Our routes in the kernel for `prefix` (every metric). */
  installedFor(prefix: string): KernelRoute[] {
    const m = this.installed.get(prefix);
    return m === undefined ? [] : Array.isArray(m) ? [...m] : [m];
  }

  *installedRoutes(): IterableIterator<KernelRoute> {
    for (const m of this.installed.values()) {
      if (Array.isArray(m)) yield* m;
      else yield m;
    }
  }

  /** Every prefix wanted, installed or refused, with its kernel side (unordered; O(routes): for listings, not status). */
  *entries(): IterableIterator<KernelEntry> {
    const keys = new Set([...this.statics.keys(), ...this.bgp.keys(), ...this.installed.keys(), ...this.refused.keys()]);
    for (const prefix of keys) {
      const source = this.statics.has(prefix) ? 'static' : this.bgp.has(prefix) ? 'bgp' : undefined;
      const refused = this.refused.get(prefix);
      const note = this.notes.get(prefix);
      yield { prefix, source, installed: this.installedFor(prefix), stale: this.stale.has(prefix), ...(refused !== undefined ? { refused } : {}), ...(note !== undefined ? { note } : {}) };
    }
  }
}

/** One prefix's kernel side: who wants it (`source`; none: installed and no longer wanted, or adopted), what is in the kernel, and why not. */
export interface KernelEntry {
  readonly prefix: string;
  readonly source: 'bgp' | 'static' | undefined;
  readonly installed: readonly KernelRoute[];
  /** Adopted at start and kept until the restart ends. */
  readonly stale: boolean;
  readonly refused?: Refusal;
  readonly note?: string;
}

/**
 * The order operations are written in: every replace first (a route moving
 * to another metric is written before the old one goes), then the deletes,
 * most specific prefix first. Each operation touches its own (prefix,
 * metric), so the order changes no outcome, only the kernel's cost: deleting
 * a covering prefix before the routes inside it made the kernel take 8×
 * longer for the 262,143 prefixes of 198.18.0.0/15 (src/kernel/README.md).
 */
export function orderOps(ops: KernelOp[]): KernelOp[] {
  const replaces: KernelOp[] = [];
  const byLength: KernelOp[][] = [];
  for (const op of ops) {
    if (op.op === 'replace') {
      replaces.push(op);
      continue;
    }
    const slash = op.route.prefix.lastIndexOf('/');
    const len = slash < 0 ? 128 : Number(op.route.prefix.slice(slash + 1)) || 0;
    (byLength[len] ??= []).push(op);
  }
  for (let len = byLength.length - 1; len >= 0; len--) if (byLength[len] !== undefined) for (const op of byLength[len]) replaces.push(op);
  return replaces;
}

function hasHop(hops: readonly NextHop[], h: NextHop): boolean {
  for (const x of hops) if (x === h || (x.via === h.via && x.dev === h.dev && !x.onlink === !h.onlink)) return true;
  return false;
}

function safeAddress(s: string): Address | undefined {
  try {
    return Address.parse(s.replace(/%.*$/, ''));
  } catch {
    return undefined;
  }
}

export function hopKey(h: NextHop): string {
  return `${h.via ?? ''}|${h.dev ?? ''}|${h.onlink ? 1 : 0}`;
}

/** Sorts in place by `hopKey` (each key built once). */
export function sortNextHops(hops: NextHop[]): NextHop[] {
  if (hops.length < 2) return hops;
  if (hops.length === 2) {
    if (hopKey(hops[0]) > hopKey(hops[1])) hops.reverse();
    return hops;
  }
  const keyed = hops.map((h) => ({ h, k: hopKey(h) }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  for (let i = 0; i < hops.length; i++) hops[i] = keyed[i].h;
  return hops;
}

export function sameRoute(a: KernelRoute, b: KernelRoute): boolean {
  if (a.prefix !== b.prefix || a.type !== b.type || a.metric !== b.metric || a.nexthops.length !== b.nexthops.length) return false;
  for (let i = 0; i < a.nexthops.length; i++) {
    const x = a.nexthops[i];
    const y = b.nexthops[i];
    // as hopKey(x) === hopKey(y), without building the keys
    if ((x.via ?? '') !== (y.via ?? '') || (x.dev ?? '') !== (y.dev ?? '') || !x.onlink !== !y.onlink) return false;
  }
  return true;
}

/** One prefix's routes of ours in the kernel: one route, or (several metrics) an array of them, one per metric. */
type Installed = KernelRoute | KernelRoute[];

function atMetric(m: Installed, metric: number): KernelRoute | undefined {
  if (!Array.isArray(m)) return m.metric === metric ? m : undefined;
  for (const r of m) if (r.metric === metric) return r;
  return undefined;
}

/** Puts a route in (replacing the one at its metric); true when the prefix had none at that metric. */
function putInstalled(map: Map<string, Installed>, r: KernelRoute): boolean {
  const m = map.get(r.prefix);
  if (m === undefined) {
    map.set(r.prefix, r);
    return true;
  }
  if (!Array.isArray(m)) {
    if (m.metric === r.metric) {
      map.set(r.prefix, r);
      return false;
    }
    map.set(r.prefix, [m, r]);
    return true;
  }
  const i = m.findIndex((x) => x.metric === r.metric);
  if (i >= 0) {
    m[i] = r;
    return false;
  }
  m.push(r);
  return true;
}

/** Takes the route at `metric` out; true when there was one. */
function dropInstalled(map: Map<string, Installed>, prefix: string, metric: number): boolean {
  const m = map.get(prefix);
  if (m === undefined) return false;
  if (!Array.isArray(m)) {
    if (m.metric !== metric) return false;
    map.delete(prefix);
    return true;
  }
  const i = m.findIndex((x) => x.metric === metric);
  if (i < 0) return false;
  m.splice(i, 1);
  if (m.length === 1) map.set(prefix, m[0]);
  return true;
}

function sameInstalled(a: Installed, b: Installed): boolean {
  const x = Array.isArray(a) ? a : [a];
  const y = Array.isArray(b) ? b : [b];
  if (x.length !== y.length) return false;
  for (const r of x) {
    const o = atMetric(b, r.metric);
    if (o === undefined || !sameRoute(o, r)) return false;
  }
  return true;
}

function sameDesired(a: DesiredRoute | undefined, b: DesiredRoute): boolean {
  if (a === undefined || a.kind !== b.kind) return false;
  if (a.kind === 'blackhole' || b.kind === 'blackhole') return true;
  return a.gateways.length === b.gateways.length && a.gateways.every((g, i) => {
    const h = b.gateways[i];
    return g.address === h.address && g.dev === h.dev && g.onlink === h.onlink && g.peer === h.peer;
  });
}
