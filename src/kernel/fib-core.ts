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
import { sameHops, sameRoute } from './next-hops.js';
import { NextHopResolver } from './resolver.js';
import type { ConnectedRoute, DesiredRoute, Gateway, KernelOp, KernelRoute, Lookup, NextHop, Refusal, RouteType } from './types.js';

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

type Resolved =
  { readonly ok: true; readonly route: KernelRoute; readonly partial?: string } | { readonly ok: false; readonly reason: string } | { readonly ok: 'pending' };

export class FibCore {
  readonly ecmp: number;
  readonly metricV4: number;
  readonly metricV6: number;
  readonly recursive: boolean;
  private restarting: boolean;
  private dumped = false;
  /** Next hops resolved against the connected networks, interfaces and the kernel's lookups (`resolver.ts`). */
  private readonly hops: NextHopResolver;
  /**
   * One slot per prefix we know anything about (wanted by routing or a
   * static, installed, adopted, refused): routing's wish, our route(s) in
   * the kernel, and the bookkeeping of the plan, in one object found by
   * one lookup. A million routes cost one map entry and one slot each; the
   * plan walks slots (the touched ones are kept in an array, not a set of
   * prefix strings), and an operation it hands out remembers its slot, so
   * that `applied` needs no lookup at all. A slot goes once nothing is
   * left in it.
   */
  private readonly slots = new Map<string, Slot>();
  /** Prefixes with a route from routing (`setRoute`). */
  private bgpCount = 0;
  /** Static routes and blackholes: they win over routing's for the same prefix (BIRD's static preference 200 > BGP 100). Each has a slot. */
  private readonly statics = new Map<string, DesiredRoute>();
  /** Prefixes wanted by both routing and `statics` (so that `counts` is O(1)). */
  private overlap = 0;
  private installedCount = 0;
  /** Slots adopted at start and kept until the restart ends (`Slot.stale`). */
  private staleCount = 0;
  private readonly refused = new Map<string, Refusal>();
  /** Non-fatal notes per prefix (an ECMP member that did not resolve). */
  private readonly notes = new Map<string, string>();
  /**
   * Slots touched since the last plan began, each once: a slot is in it
   * when its `mark` is the current `epoch`. A plan takes the array and
   * moves to the next epoch, so a slot touched meanwhile goes into the next
   * plan's array even if this plan has it too.
   */
  private dirty: Slot[] = [];
  private epoch = 1;
  /**
   * `setRoute` calls not yet taken to their slots (prefix, route), in
   * order: a million calls in a row cost two array pushes each, and the
   * plan does the map work (finding or making the slot) as it plans each
   * one — while the kernel installs the pieces before. A plan takes the
   * log when it starts (`planLog*`, `planLogAt` how far it got); calls
   * meanwhile go to a new log, for the next plan. A prefix set twice in
   * one plan's log is planned at the first and again in the next plan.
   */
  private logP: string[] = [];
  private logR: (DesiredRoute | undefined)[] = [];
  private planLogP: string[] = [];
  private planLogR: (DesiredRoute | undefined)[] = [];
  private planLogAt = 0;
  /** Plans begun; a slot's `planned` is the plan that last planned it. */
  private plans = 0;
  /** Prefixes a plan left as they were, waiting for a next-hop lookup. */
  private readonly waiting = new Set<string>();
  private allDirty = false;
  /** Prefixes the kernel told us about since the last plan (their outcome comes from the kernel, not from `applied`). */
  private readonly seen = new Set<string>();

  constructor(opts: FibCoreOptions = {}) {
    const ecmp = opts.ecmp ?? 16;
    if (!Number.isInteger(ecmp) || ecmp < 1 || ecmp > 256) throw new RangeError(`kernel ecmp must be 1..256 next hops, got ${ecmp}`);
    for (const [k, v] of [
      ['metricV4', opts.metricV4],
      ['metricV6', opts.metricV6],
    ] as const) {
      if (v !== undefined && !(Number.isInteger(v) && v >= 0 && v <= 0xffffffff)) throw new RangeError(`kernel ${k} must be 0..4294967295, got ${v}`);
    }
    this.ecmp = ecmp;
    this.metricV4 = opts.metricV4 ?? 0;
    this.metricV6 = opts.metricV6 ?? 1024;
    this.recursive = opts.recursive ?? true;
    this.restarting = opts.restarting ?? true;
    this.hops = new NextHopResolver(this.ecmp, this.recursive);
  }

  // ------------------------------------------------------------ routing's side

  /**
   * What routing wants for `prefix` (undefined: nothing). A route learned
   * again is routing's from then on: no longer stale, so a withdrawal later
   * in the restart removes it.
   */
  setRoute(prefix: string, route: DesiredRoute | undefined): void {
    // Only written down: the next plan takes it to its slot as it plans (see `log`).
    this.logP.push(prefix);
    this.logR.push(route);
  }

  /** One `setRoute` taken to its slot; the slot, or undefined when nothing changed (a withdrawal of what routing did not want). Touches nothing. */
  private applyRoute(prefix: string, route: DesiredRoute | undefined): Slot | undefined {
    if (route === undefined) {
      const s = this.slots.get(prefix);
      if (s === undefined || s.bgp === undefined) return undefined;
      s.bgp = undefined;
      this.bgpCount--;
      if (this.statics.size > 0 && this.statics.has(prefix)) this.overlap--;
      return s;
    }
    const s = this.slotFor(prefix);
    if (s.bgp === undefined) {
      this.bgpCount++;
      if (this.statics.size > 0 && this.statics.has(prefix)) this.overlap++;
    }
    s.bgp = route;
    if (s.stale) {
      s.stale = false;
      this.staleCount--;
    }
    return s;
  }

  /**
   * Every `setRoute` not taken to its slot yet, in order: what a plan
   * stopped before reaching, then the log. Everything but `setRoute` and
   * the plan itself does this first, so that the log is never seen.
   */
  private absorb(): void {
    const P = this.planLogP;
    if (this.planLogAt < P.length) {
      const R = this.planLogR;
      for (let j = this.planLogAt; j < P.length; j++) {
        const s = this.applyRoute(P[j], R[j]);
        if (s !== undefined) this.touch(s);
      }
      this.planLogAt = P.length;
    }
    if (this.logP.length === 0) return;
    const LP = this.logP;
    const LR = this.logR;
    this.logP = [];
    this.logR = [];
    for (let j = 0; j < LP.length; j++) {
      const s = this.applyRoute(LP[j], LR[j]);
      if (s !== undefined) this.touch(s);
    }
  }

  /** Replaces the whole set of static routes and blackholes. */
  setStatics(routes: ReadonlyMap<string, DesiredRoute>): void {
    this.absorb();
    for (const p of this.statics.keys()) if (!routes.has(p)) this.touch(this.slotFor(p));
    for (const [p, r] of routes) if (!sameDesired(this.statics.get(p), r)) this.touch(this.slotFor(p));
    this.statics.clear();
    this.overlap = 0;
    for (const [p, r] of routes) {
      this.statics.set(p, r);
      if (this.slotFor(p).bgp !== undefined) this.overlap++;
    }
  }

  /** The restart is over: stale routes nobody wants any more go. */
  endRestart(): void {
    if (!this.restarting) return;
    this.absorb();
    this.restarting = false;
    if (this.staleCount > 0) {
      for (const s of this.slots.values()) {
        if (!s.stale) continue;
        s.stale = false;
        this.touch(s);
      }
    }
    this.staleCount = 0;
  }

  get isRestarting(): boolean {
    return this.restarting;
  }

  /** The slot of `prefix`, made if there is none. */
  private slotFor(prefix: string): Slot {
    let s = this.slots.get(prefix);
    if (s === undefined) {
      s = new Slot(prefix);
      this.slots.set(prefix, s);
    }
    return s;
  }

  /** Marks a slot for the next plan (once). */
  private touch(s: Slot): void {
    if (s.mark === this.epoch) return;
    s.mark = this.epoch;
    this.dirty.push(s);
  }

  /** Forgets a slot with nothing left in it: not wanted, nothing installed, not adopted, not refused, not touched for the next plan. */
  private dropIfEmpty(s: Slot): void {
    if (s.bgp !== undefined || s.have !== undefined || s.stale || s.mark === this.epoch || s.dead) return;
    const p = s.prefix;
    if ((this.statics.size > 0 && this.statics.has(p)) || (this.refused.size > 0 && this.refused.has(p))) return;
    this.slots.delete(p);
    s.dead = true;
  }

  // ------------------------------------------------------------ the kernel's side

  /** A full dump of our routes in our table (at start and at each resync). */
  kernelTable(routes: Iterable<KernelRoute>): void {
    this.absorb();
    const now = new Map<string, Installed>();
    let n = 0;
    for (const r of routes) {
      const had = now.get(r.prefix);
      if (had === undefined || atMetric(had, r.metric) === undefined) n++;
      now.set(r.prefix, withRoute(had, r));
    }
    for (const s of this.slots.values()) {
      if (s.have === undefined || now.has(s.prefix)) continue;
      s.have = undefined;
      this.touch(s);
    }
    for (const [p, m] of now) {
      const s = this.slotFor(p);
      if (s.have === undefined || !sameInstalled(s.have, m)) this.touch(s);
      s.have = m;
    }
    this.installedCount = n;
    if (!this.dumped) {
      this.dumped = true;
      if (this.restarting) {
        for (const p of now.keys()) {
          const s = this.slotFor(p);
          if (s.stale) continue;
          s.stale = true;
          this.staleCount++;
        }
      }
      this.allDirty = true;
    }
  }

  /** The kernel added or replaced a route of ours (monitor). */
  kernelAdded(route: KernelRoute): void {
    this.absorb();
    const s = this.slotFor(route.prefix);
    if (putHave(s, route)) this.installedCount++;
    this.seen.add(route.prefix);
    this.touch(s);
  }

  /** A route of ours left the kernel (monitor): deleted by someone, or by us. */
  kernelDeleted(prefix: string, metric: number): void {
    this.absorb();
    const s = this.slotFor(prefix);
    if (dropHave(s, metric)) this.installedCount--;
    this.seen.add(prefix);
    this.touch(s);
  }

  /** The directly connected networks (and, when known, the interfaces that exist). Every route is re-resolved. */
  setConnected(routes: readonly ConnectedRoute[], links?: ReadonlySet<string>): void {
    this.hops.setConnected(routes, links);
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
      if (this.hops.needsLookup(g)) out.add(g.address);
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
    if (this.allDirty) this.absorb();
    if (this.allDirty) for (const s of this.slots.values()) each(s.prefix, s.bgp);
    else {
      for (const s of this.dirty) each(s.prefix, s.bgp);
      for (const p of this.waiting) each(p, this.slots.get(p)?.bgp);
      // setRoute calls not taken to their slots yet (a superseded route's gateways asked about too: harmless)
      for (let j = this.planLogAt; j < this.planLogP.length; j++) each(this.planLogP[j], this.planLogR[j]);
      for (let j = 0; j < this.logP.length; j++) each(this.logP[j], this.logR[j]);
    }
    for (const d of this.statics.values()) if (d.kind === 'unicast') for (const g of d.gateways) want(g);
    return [...out];
  }

  /** The kernel's answer for a next hop (from `neededLookups`). Routes through it are re-resolved. */
  setLookup(address: string, answer: Lookup): void {
    this.hops.setLookup(address, answer);
    this.allDirty = true;
  }

  // ------------------------------------------------------------ planning

  /** True when `plan` may have something to do. */
  get pending(): boolean {
    return this.allDirty || this.dirty.length > 0 || this.logP.length > 0 || this.planLogAt < this.planLogP.length;
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
    // Every slot after a dump or a change of connected networks or lookups (the map read as it is when each is reached), else the touched ones.
    // What an earlier plan left of its log (a plan dropped unfinished) is touched first; after a dump and the like, the log too.
    if (this.planLogAt < this.planLogP.length || this.allDirty) this.absorb();
    const every = this.allDirty ? this.slots.values() : undefined;
    const list = this.dirty;
    this.dirty = [];
    // The log since the last plan, planned after the touched slots (it is what was touched after them).
    const P = (this.planLogP = this.logP);
    const R = (this.planLogR = this.logR);
    this.planLogAt = 0;
    this.logP = [];
    this.logR = [];
    const plan = ++this.plans;
    this.epoch++;
    this.allDirty = false;
    this.seen.clear();
    this.hops.forget();
    let i = 0;
    let done = false;
    let deletesOut = false;
    const deletes: KernelOp[] = [];
    try {
      let replaces: KernelOp[] = [];
      for (;;) {
        let s: Slot;
        if (every !== undefined) {
          const k = every.next();
          if (k.done) break;
          s = k.value;
        } else if (i < list.length) {
          s = list[i++];
          s.planned = plan;
        } else if (this.planLogAt < P.length) {
          // absorb() may have taken the rest meanwhile (then planLogAt is at the end)
          const j = this.planLogAt++;
          const t = this.applyRoute(P[j], R[j]);
          if (t === undefined) continue;
          s = t;
          if (s.planned === plan) {
            // already planned in this plan (before this change): again in the next
            this.touch(s);
            continue;
          }
          s.planned = plan;
        } else break;
        this.planSlot(s, replaces, deletes);
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
      if (!done) {
        if (every !== undefined) for (let k = every.next(); !k.done; k = every.next()) this.touch(k.value);
        else for (; i < list.length; i++) if (!list[i].dead) this.touch(list[i]);
        // The log not reached: back in front of the calls made meanwhile.
        if (this.planLogP === P && this.planLogAt < P.length) {
          this.logP = P.slice(this.planLogAt).concat(this.logP);
          this.logR = R.slice(this.planLogAt).concat(this.logR);
        }
      }
      if (this.planLogP === P) {
        this.planLogP = [];
        this.planLogR = [];
        this.planLogAt = 0;
      }
      // Deletes planned and never handed out: planned again next time.
      if (!deletesOut) for (const op of deletes) this.touch(this.slotOf(op));
      this.hops.forget();
    }
  }

  private planSlot(s: Slot, ops: KernelOp[], deletes: KernelOp[]): void {
    // A slot forgotten since it was touched: nothing was left in it (a slot made again for the prefix is in the next plan).
    if (s.dead) return;
    const prefix = s.prefix;
    // (Empty maps are not asked: most plans have no statics, notes or refusals, and every lookup of a 100,000-key map costs.)
    const want = (this.statics.size > 0 ? this.statics.get(prefix) : undefined) ?? s.bgp;
    const have = s.have;
    if (this.notes.size > 0) this.notes.delete(prefix);
    if (this.waiting.size > 0) this.waiting.delete(prefix);
    // What goes in: its type, metric and next hops (keepHops undefined: nothing, refused or not wanted).
    let keepHops: readonly NextHop[] | undefined;
    let keepMetric = 0;
    let keepType: RouteType = 'unicast';
    if (want !== undefined) {
      keepMetric = want.metric ?? (isV6(prefix) ? this.metricV6 : this.metricV4);
      let reason: string | undefined;
      if (want.kind === 'blackhole') {
        keepHops = NO_HOPS;
        keepType = 'blackhole';
      } else {
        const r = this.hops;
        r.resolve(want);
        if (r.hops === undefined) {
          if (r.pending) {
            this.waiting.add(prefix); // waiting for the kernel's lookup: leave the prefix as it is
            return;
          }
          reason = r.reason;
        } else {
          keepHops = r.hops;
          if (r.partial !== undefined) this.notes.set(prefix, r.partial);
        }
      }
      if (keepHops !== undefined) {
        const cur = have !== undefined ? atMetric(have, keepMetric) : undefined;
        const same = cur !== undefined && cur.type === keepType && sameHops(cur.nexthops, keepHops);
        // A route the kernel refused is retried only when something changed (it is dirty again) — which is now.
        if (!same) ops.push(new PlannedOp('replace', { prefix, type: keepType, metric: keepMetric, nexthops: keepHops }, s, this));
        if (this.refused.size > 0) {
          const prior = this.refused.get(prefix);
          if (prior?.by === 'resolve' || same) this.refused.delete(prefix);
        }
      } else this.refused.set(prefix, { prefix, reason: reason!, by: 'resolve' });
    } else if (this.refused.size > 0) this.refused.delete(prefix);
    if (have === undefined) {
      if (want === undefined) this.dropIfEmpty(s); // nothing wanted, nothing of ours in the kernel
      return;
    }
    if (this.restarting && s.stale) return; // adopted: kept until the restart ends
    if (!Array.isArray(have)) {
      if (keepHops === undefined || have.metric !== keepMetric) deletes.push(new PlannedOp('delete', have, s, this));
    } else for (const route of have) if (keepHops === undefined || route.metric !== keepMetric) deletes.push(new PlannedOp('delete', route, s, this));
  }

  /** The slot an operation is about: the one it was planned for when that is still ours, else the prefix's. */
  private slotOf(op: KernelOp): Slot {
    const s = PlannedOp.slotIn(op, this);
    return s !== undefined && !s.dead ? s : this.slotFor(op.route.prefix);
  }

  /** Reports one operation's outcome (`error`: the kernel's reason). */
  applied(op: KernelOp, error?: string): void {
    const p = op.route.prefix;
    if (error !== undefined) {
      if (op.op === 'replace') {
        this.slotOf(op); // a refused prefix has a slot
        this.refused.set(p, { prefix: p, reason: error, by: 'kernel' });
      }
      return;
    }
    if (op.op === 'replace' && this.refused.size > 0) this.refused.delete(p);
    // The listener told us the truth about this prefix meanwhile: keep that.
    if (this.seen.size > 0 && this.seen.has(p)) return;
    const s = this.slotOf(op);
    if (op.op === 'replace') {
      if (putHave(s, op.route)) this.installedCount++;
    } else if (dropHave(s, op.route.metric)) {
      this.installedCount--;
      this.dropIfEmpty(s);
    }
  }

  /** One desired route → the kernel route to write, or why not. */
  resolve(prefix: string, want: DesiredRoute): Resolved {
    const metric = want.metric ?? (isV6(prefix) ? this.metricV6 : this.metricV4);
    if (want.kind === 'blackhole') return { ok: true, route: { prefix, type: 'blackhole', metric, nexthops: [] } };
    const r = this.hops;
    r.resolve(want);
    if (r.hops === undefined) return r.pending ? { ok: 'pending' } : { ok: false, reason: r.reason };
    const route: KernelRoute = { prefix, type: 'unicast', metric, nexthops: r.hops };
    return r.partial !== undefined ? { ok: true, route, partial: r.partial } : { ok: true, route };
  }

  // ------------------------------------------------------------ views (O(1) or O(refused))

  get counts(): { desired: number; installed: number; refused: number; stale: number } {
    this.absorb();
    const desired = this.statics.size + this.bgpCount - this.overlap;
    return { desired, installed: this.installedCount, refused: this.refused.size, stale: this.restarting ? this.staleCount : 0 };
  }

  /** Prefixes the core holds anything for (wanted, installed, adopted, refused, or touched and not planned yet): what it keeps in memory. */
  get known(): number {
    this.absorb();
    return this.slots.size;
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
    const m = this.slots.get(prefix)?.have;
    return m === undefined ? [] : Array.isArray(m) ? [...m] : [m];
  }

  *installedRoutes(): IterableIterator<KernelRoute> {
    for (const s of this.slots.values()) {
      const m = s.have;
      if (m === undefined) continue;
      if (Array.isArray(m)) yield* m;
      else yield m;
    }
  }

  /** Every prefix wanted, installed or refused, with its kernel side (unordered; O(routes): for listings, not status). */
  *entries(): IterableIterator<KernelEntry> {
    this.absorb();
    for (const s of this.slots.values()) {
      const prefix = s.prefix;
      const source = this.statics.has(prefix) ? 'static' : s.bgp !== undefined ? 'bgp' : undefined;
      const refused = this.refused.get(prefix);
      if (source === undefined && s.have === undefined && refused === undefined) continue;
      const note = this.notes.get(prefix);
      const peers =
        source === 'bgp' && s.bgp?.kind === 'unicast' ? [...new Set(s.bgp.gateways.flatMap((g) => (g.peer !== undefined ? [g.peer] : [])))] : undefined;
      yield {
        prefix,
        source,
        installed: this.installedFor(prefix),
        stale: s.stale,
        ...(refused !== undefined ? { refused } : {}),
        ...(note !== undefined ? { note } : {}),
        ...(peers !== undefined ? { peers } : {}),
      };
    }
  }
}

/** Everything FibCore knows about one prefix (see `FibCore.slots`). */
class Slot {
  /** Routing's wish (`setRoute`). */
  bgp: DesiredRoute | undefined = undefined;
  /** Our route(s) in the kernel. */
  have: Installed | undefined = undefined;
  /** The epoch in which the slot was last touched (see `FibCore.dirty`). */
  mark = 0;
  /** Adopted at start, kept until the restart ends. */
  stale = false;
  /** Forgotten (out of the map): a slot made again for the prefix is another one. */
  dead = false;
  /** The plan that last planned it (see `FibCore.plans`). */
  planned = 0;
  constructor(readonly prefix: string) {}
}

/**
 * An operation as `planPieces` hands it out: a KernelOp (and equal to the
 * plain object with the same `op` and `route`) that also remembers, out of
 * sight, the slot and the core it was planned for, so that `applied` finds
 * the slot without a lookup.
 */
class PlannedOp {
  readonly #slot: Slot;
  readonly #core: FibCore;
  constructor(
    readonly op: 'replace' | 'delete',
    readonly route: KernelRoute,
    slot: Slot,
    core: FibCore,
  ) {
    this.#slot = slot;
    this.#core = core;
  }

  /** The slot `op` was planned for by `core`, if it is one of `core`'s operations. */
  static slotIn(op: KernelOp, core: FibCore): Slot | undefined {
    return #slot in op && op.#core === core ? op.#slot : undefined;
  }
}

const NO_HOPS: readonly NextHop[] = Object.freeze([]);

/** IPv6 prefix text (IPv4 has no ':'). */
function isV6(prefix: string): boolean {
  return prefix.includes(':');
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
  /** A route from routing: the BGP peers whose paths it is made of. */
  readonly peers?: readonly string[];
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

/** One prefix's routes of ours in the kernel: one route, or (several metrics) an array of them, one per metric. */
type Installed = KernelRoute | KernelRoute[];

function atMetric(m: Installed, metric: number): KernelRoute | undefined {
  if (!Array.isArray(m)) return m.metric === metric ? m : undefined;
  for (const r of m) if (r.metric === metric) return r;
  return undefined;
}

/** `m` with `r` put in, replacing the route at its metric (an array is changed in place). */
function withRoute(m: Installed | undefined, r: KernelRoute): Installed {
  if (m === undefined) return r;
  if (!Array.isArray(m)) return m.metric === r.metric ? r : [m, r];
  const i = m.findIndex((x) => x.metric === r.metric);
  if (i >= 0) m[i] = r;
  else m.push(r);
  return m;
}

/** Puts a route in a slot (replacing the one at its metric); true when the slot had none at that metric. */
function putHave(s: Slot, r: KernelRoute): boolean {
  const added = s.have === undefined || atMetric(s.have, r.metric) === undefined;
  s.have = withRoute(s.have, r);
  return added;
}

/** Takes a slot's route at `metric` out; true when there was one. */
function dropHave(s: Slot, metric: number): boolean {
  const m = s.have;
  if (m === undefined) return false;
  if (!Array.isArray(m)) {
    if (m.metric !== metric) return false;
    s.have = undefined;
    return true;
  }
  const i = m.findIndex((x) => x.metric === metric);
  if (i < 0) return false;
  m.splice(i, 1);
  if (m.length === 1) s.have = m[0];
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
  return (
    a.gateways.length === b.gateways.length &&
    a.gateways.every((g, i) => {
      const h = b.gateways[i];
      return g.address === h.address && g.dev === h.dev && g.onlink === h.onlink && g.peer === h.peer;
    })
  );
}
