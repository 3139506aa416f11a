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
  /** prefix → metric → route of ours in the kernel. */
  private readonly installed = new Map<string, Map<number, KernelRoute>>();
  private installedCount = 0;
  private readonly stale = new Set<string>();
  private connected: Conn[] = [];
  private links: ReadonlySet<string> | undefined;
  private readonly lookups = new Map<string, Lookup>();
  private readonly refused = new Map<string, Refusal>();
  /** Non-fatal notes per prefix (an ECMP member that did not resolve). */
  private readonly notes = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private allDirty = false;
  /** Prefixes the kernel told us about since the last plan (their outcome comes from the kernel, not from `applied`). */
  private readonly seen = new Set<string>();
  /**
   * Gateway resolutions within one plan: a next hop is shared by many routes,
   * and its answer depends only on the connected networks, the interfaces
   * and the lookups, which do not change during a plan.
   */
  private readonly resolvedGateways = new Map<string, { readonly g: Gateway; readonly h: NextHop | string | 'pending' }[]>();

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
    } else {
      this.bgp.set(prefix, route);
      this.stale.delete(prefix);
    }
    this.dirty.add(prefix);
  }

  /** Replaces the whole set of static routes and blackholes. */
  setStatics(routes: ReadonlyMap<string, DesiredRoute>): void {
    for (const p of this.statics.keys()) if (!routes.has(p)) this.dirty.add(p);
    for (const [p, r] of routes) if (!sameDesired(this.statics.get(p), r)) this.dirty.add(p);
    this.statics.clear();
    for (const [p, r] of routes) this.statics.set(p, r);
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
    const now = new Map<string, Map<number, KernelRoute>>();
    let n = 0;
    for (const r of routes) {
      let m = now.get(r.prefix);
      if (m === undefined) now.set(r.prefix, (m = new Map()));
      if (!m.has(r.metric)) n++;
      m.set(r.metric, r);
    }
    for (const p of before.keys()) if (!now.has(p)) this.dirty.add(p);
    for (const [p, m] of now) {
      const old = before.get(p);
      if (old === undefined || !sameMetricMap(old, m)) this.dirty.add(p);
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
    let m = this.installed.get(route.prefix);
    if (m === undefined) this.installed.set(route.prefix, (m = new Map()));
    if (!m.has(route.metric)) this.installedCount++;
    m.set(route.metric, route);
    this.seen.add(route.prefix);
    this.dirty.add(route.prefix);
  }

  /** A route of ours left the kernel (monitor): deleted by someone, or by us. */
  kernelDeleted(prefix: string, metric: number): void {
    const m = this.installed.get(prefix);
    if (m !== undefined && m.delete(metric)) {
      this.installedCount--;
      if (m.size === 0) this.installed.delete(prefix);
    }
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
    for (const [p, d] of this.bgp) if (d.kind === 'unicast' && !this.statics.has(p)) for (const g of d.gateways.slice(0, this.ecmp)) want(g);
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
    const keys: Iterable<string> = this.allDirty ? new Set([...this.installed.keys(), ...this.bgp.keys(), ...this.statics.keys(), ...this.refused.keys()]) : this.dirty;
    const ops: KernelOp[] = [];
    this.resolvedGateways.clear();
    try {
      for (const p of keys) this.planPrefix(p, ops);
    } finally {
      this.resolvedGateways.clear();
    }
    this.allDirty = false;
    this.dirty.clear();
    this.seen.clear();
    return orderOps(ops);
  }

  private planPrefix(prefix: string, ops: KernelOp[]): void {
    const want = this.statics.get(prefix) ?? this.bgp.get(prefix);
    const have = this.installed.get(prefix);
    let keep: KernelRoute | undefined;
    this.notes.delete(prefix);
    if (want !== undefined) {
      const r = this.resolve(prefix, want);
      if (r.ok === 'pending') return; // waiting for the kernel's lookup: leave the prefix as it is
      if (r.ok) {
        keep = r.route;
        if (r.partial !== undefined) this.notes.set(prefix, r.partial);
        const cur = have?.get(keep.metric);
        const prior = this.refused.get(prefix);
        // A route the kernel refused is retried only when something changed (it is dirty again) — which is now.
        if (cur === undefined || !sameRoute(cur, keep)) ops.push({ op: 'replace', route: keep });
        if (prior?.by === 'resolve') this.refused.delete(prefix);
        if (cur !== undefined && sameRoute(cur, keep)) this.refused.delete(prefix);
      } else {
        this.refused.set(prefix, { prefix, reason: r.reason, by: 'resolve' });
      }
    } else this.refused.delete(prefix);
    if (have === undefined) return;
    if (this.restarting && this.stale.has(prefix)) return; // adopted: kept until the restart ends
    for (const route of have.values()) if (keep === undefined || route.metric !== keep.metric) ops.push({ op: 'delete', route });
  }

  /** Reports one operation's outcome (`error`: the kernel's reason). */
  applied(op: KernelOp, error?: string): void {
    const p = op.route.prefix;
    if (error !== undefined) {
      if (op.op === 'replace') this.refused.set(p, { prefix: p, reason: error, by: 'kernel' });
      return;
    }
    if (op.op === 'replace') this.refused.delete(p);
    // The monitor told us the truth about this prefix meanwhile: keep that.
    if (this.seen.has(p)) return;
    if (op.op === 'replace') {
      let m = this.installed.get(p);
      if (m === undefined) this.installed.set(p, (m = new Map()));
      if (!m.has(op.route.metric)) this.installedCount++;
      m.set(op.route.metric, op.route);
    } else {
      const m = this.installed.get(p);
      if (m !== undefined && m.delete(op.route.metric)) {
        this.installedCount--;
        if (m.size === 0) this.installed.delete(p);
      }
    }
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
      const g = want.gateways[i];
      let known = this.resolvedGateways.get(g.address);
      if (known === undefined) this.resolvedGateways.set(g.address, (known = []));
      let h = known.find((x) => x.g === g || (x.g.dev === g.dev && !x.g.onlink === !g.onlink && x.g.peer === g.peer))?.h;
      if (h === undefined) {
        h = this.resolveGateway(g);
        known.push({ g, h });
      }
      if (h === 'pending') pending = true;
      else if (typeof h === 'string') reasons.push(h);
      else if (!hops.some((x) => x.via === (h as NextHop).via && x.dev === (h as NextHop).dev && !x.onlink === !(h as NextHop).onlink)) hops.push(h);
    }
    if (hops.length === 0) {
      if (pending) return { ok: 'pending' };
      return { ok: false, reason: reasons.length > 0 ? reasons.join('; ') : 'no next hop' };
    }
    const route: KernelRoute = { prefix, type: 'unicast', metric, nexthops: sortNextHops(hops) };
    return reasons.length > 0 ? { ok: true, route, partial: `next hop(s) left out: ${reasons.join('; ')}` } : { ok: true, route };
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
    let desired = this.statics.size;
    for (const p of this.bgp.keys()) if (!this.statics.has(p)) desired++;
    return { desired, installed: this.installedCount, refused: this.refused.size, stale: this.restarting ? this.stale.size : 0 };
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
    return [...(this.installed.get(prefix)?.values() ?? [])];
  }

  *installedRoutes(): IterableIterator<KernelRoute> {
    for (const m of this.installed.values()) yield* m.values();
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

function sameMetricMap(a: ReadonlyMap<number, KernelRoute>, b: ReadonlyMap<number, KernelRoute>): boolean {
  if (a.size !== b.size) return false;
  for (const [m, r] of a) {
    const o = b.get(m);
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
