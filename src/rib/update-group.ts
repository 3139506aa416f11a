/**
 * An update group: peers that would be sent exactly the same bytes (same
 * encoding context, families, export settings and policy). Changes are
 * evaluated and packed once per group; the group owns the Adj-RIB-Out
 * (one attribute-set reference per prefix) and the pending-change set.
 * Pure: time comes in as `now` (milliseconds), output comes back as data.
 */
import { PackArena, type CodecContext, type PathAttributes } from '../wire/index.js';
import type { AttrSet, AttrStore } from './attr-store.js';
import { AdjRibOut } from './adj-rib-out.js';
import { KeyTable } from './key-table.js';
import { KeySlots } from './slots.js';
import { endOfRib } from './eor.js';
import { exportAttrs, sentAttrs, withLate, type ExportSettings } from './export.js';
import { withGracefulShutdown } from './gshut.js';
import { keyedPolicyRoute, type Path, type PathSource } from './path.js';
import type { ExportPolicy, Packer, PeerRef, PolicyContext } from './ports.js';
import { familyOfKey, prefixFromKey, sortKeysInPlace, type PrefixKey } from './prefix-key.js';

export interface CoalesceOptions {
  /** Quiet time after the last change before sending (default 5 ms). */
  readonly delayMs: number;
  /** Longest a change waits however busy the RIB is (default 50 ms). */
  readonly maxDelayMs: number;
  /** Pending changes beyond which a group re-scans the whole Loc-RIB instead of keeping a change list. */
  readonly scanThreshold: number;
}

export const DEFAULT_COALESCE: CoalesceOptions = Object.freeze({ delayMs: 5, maxDelayMs: 50, scanThreshold: 200_000 });

/** What a group reads from the Loc-RIB. */
export interface RouteView {
  best(key: PrefixKey): Path | undefined;
  forEachBest(fn: (best: Path, key: PrefixKey) => void): void;
  has(key: PrefixKey): boolean;
  size(): number;
}

/** Planned output before packing: withdrawals, and announcements bucketed by attribute set (ascending set id). */
export interface Batch {
  readonly withdraw: PrefixKey[];
  readonly announce: { readonly attrs: AttrSet; readonly keys: PrefixKey[] }[];
}

export interface GroupPlan {
  readonly group: UpdateGroup;
  /** Changes for members already in sync. */
  readonly delta: Batch;
  readonly deltaTo: readonly string[];
  /** The whole Adj-RIB-Out, for members that joined (then End-of-RIB) or asked for a refresh. */
  /** The whole Adj-RIB-Out, for members that hold nothing yet (a new session), packed once for all of them. */
  readonly dump?: Batch;
  readonly dumpTo: readonly string[];
  /** Members owed End-of-RIB after this plan's messages, and for which families. */
  readonly eorTo: ReadonlyMap<string, readonly (4 | 6)[]>;
  /** Members that hold something else than the group's routes (moved here) or asked for a refresh: their own batch. */
  readonly resync: readonly { readonly peerId: string; readonly batch: Batch }[];
}

export interface Send {
  readonly peerId: string;
  readonly messages: readonly Uint8Array[];
}

/** Export results of one plan, per family, source and attribute set, plus the last hit (runs of one set are common). */
interface Memo {
  readonly byFamily: [Map<PathSource, Map<AttrSet, AttrSet | null>>, Map<PathSource, Map<AttrSet, AttrSet | null>>];
  lastPath: Path | undefined;
  lastFam: number;
  lastOut: AttrSet | null;
}

/**
 * A member that needs more than the group's next changes: a new session, a
 * ROUTE-REFRESH, or a peer that moved here from another group.
 */
export interface Resync {
  /** What the peer holds: a copy, or undefined for this group's Adj-RIB-Out as last planned. */
  readonly has: ReadonlyMap<PrefixKey, AttrSet> | undefined;
  /** Families to send in full whatever the peer holds (ROUTE-REFRESH). */
  readonly resend: readonly (4 | 6)[];
  /**
   * Families whose End-of-RIB is still owed (the session's initial dump has
   * not been sent): every family of the session, also one we send no routes
   * in, so that a peer waiting for it (RFC 4724) is not left waiting.
   */
  readonly eor: readonly (4 | 6)[];
}

type MemberState = 'live' | Resync;

/** See `UpdateGroup.exports`. */
interface ExportCache {
  /** The member list the results were computed for. */
  readonly members: readonly string[];
  readonly byFamily: [Map<PathSource, SourceExports>, Map<PathSource, SourceExports>];
}

interface SourceExports {
  /** The source's router ID when the results were computed (reflection puts it in ORIGINATOR_ID). */
  readonly routerId: string | undefined;
  readonly out: WeakMap<AttrSet, AttrSet | null>;
}

function newExportCache(members: readonly string[]): ExportCache {
  return { members, byFamily: [new Map(), new Map()] };
}

/** Stands for "holds something for this key, unknown what" in a Resync's `has`. */
const UNKNOWN = Object.freeze({ id: -1 }) as unknown as AttrSet;

/** A new session: holds nothing, owed End-of-RIB for `families`. */
export function newSession(families: readonly (4 | 6)[]): Resync {
  return { has: new Map<PrefixKey, AttrSet>(), resend: [], eor: families };
}

export interface GroupConfig {
  readonly key: string;
  readonly ctx: CodecContext;
  readonly families: readonly (4 | 6)[];
  readonly settings: Omit<ExportSettings, 'members'>;
  readonly policy?: ExportPolicy;
  /** RFC 8326: mark every route sent (after the export policy) with GRACEFUL_SHUTDOWN (src/rib/gshut.ts). */
  readonly gracefulShutdown?: boolean;
  readonly peerRef: PeerRef;
  readonly coalesce: CoalesceOptions;
}

export class UpdateGroup {
  readonly key: string;
  readonly ctx: CodecContext;
  readonly families: ReadonlySet<4 | 6>;
  private readonly cfg: GroupConfig;
  private readonly adjOut: AdjRibOut;
  /**
   * Keys whose best path changed since the last plan; duplicates are harmless (the second visit finds nothing to do).
   * In chunks (Slots): a burst's list of 100,000s of keys grown as one array left each outgrown copy in V8's
   * large-object space until a full collection.
   */
  private pending = new KeySlots();
  private fullScan = true;
  private readonly members = new Map<string, MemberState>();
  private memberList: string[] = [];
  private firstPendingAt: number | undefined;
  private lastChangeAt = 0;
  /**
   * The pending changes began after a quiet window with nothing pending:
   * they go out at the first flush (deadline: when the first came), so an
   * isolated change pays no coalescing delay at each hop. Changes that
   * follow within the window coalesce as before, up to maxDelayMs. (A route
   * reflector paid the window on every probe: 20 against BIRD's 16 ms p50
   * at 60 nodes, bench/rr-scale.ts --quick; docs/route-reflectors.md.)
   */
  private leading = false;
  /**
   * Live members whose socket could not take more when a plan was made:
   * the keys changed since, not the changes themselves. However many times
   * the table churns meanwhile, a member is owed at most one entry per
   * prefix, and gets the routes as they are when it can read again (BIRD's
   * pull-based TX: send the latest state, not every change).
   */
  private readonly behind = new Map<string, KeyTable>();
  /**
   * Export results kept across plans (the per-plan memo's second level), per
   * family and source: input set → output set (null: refused). An output is
   * reused only while the store still has it (`live`); the entry goes with the
   * input set (WeakMap). Reset when the members change (split horizon) or a
   * source's router ID does (reflection), see `exportCache`.
   */
  private exports: ExportCache = newExportCache(this.memberList);
  /** What the export policy is told of the peer and direction: fixed per group. */
  private readonly policyCtx: PolicyContext;
  /** Graceful shutdown: the marked set per exported set (the mark depends only on the set and the peer type). */
  private readonly shutdownMarks = new WeakMap<AttrSet, AttrSet>();

  constructor(
    cfg: GroupConfig,
    private readonly store: AttrStore,
    now: number,
  ) {
    this.cfg = cfg;
    this.policyCtx = Object.freeze({ peer: cfg.peerRef, direction: 'export' });
    this.adjOut = new AdjRibOut(store);
    this.key = cfg.key;
    this.ctx = cfg.ctx;
    this.families = new Set(cfg.families);
    this.firstPendingAt = now;
    this.lastChangeAt = now;
  }

  get size(): number {
    return this.members.size;
  }

  memberIds(): string[] {
    return [...this.members.keys()];
  }

  /** A copy of the routes as last planned for this group's peers. */
  get adjRibOut(): Map<PrefixKey, AttrSet> {
    return this.adjOut.snapshot();
  }

  get adjRibOutSize(): number {
    return this.adjOut.size;
  }

  /** Routes of one family in the Adj-RIB-Out: O(1). */
  adjRibOutSizeOf(family: 4 | 6): number {
    return this.adjOut.sizeOf(family);
  }

  /**
   * A new member: a new session (nothing given), or a peer moving here from
   * another group with what `leave` returned there (a policy or settings change).
   */
  join(peerId: string, now: number, carried: Resync = newSession([...this.families])): void {
    this.members.set(peerId, carried);
    this.memberList = [...this.members.keys()];
    this.touchTime(now);
  }

  /**
   * Removes a member and returns what it holds and is still owed, for the
   * group it moves to. A member that moves again before a flush still holds
   * what it held before its first move, not this group's routes.
   */
  leave(peerId: string): Resync {
    const st = this.members.get(peerId);
    this.members.delete(peerId);
    this.memberList = [...this.members.keys()];
    const owed = this.behind.get(peerId);
    this.behind.delete(peerId);
    if (owed !== undefined) return { has: this.heldBy(owed), resend: [], eor: [] };
    if (st === undefined || st === 'live') return { has: this.adjOut.snapshot(), resend: [], eor: [] };
    return st.has === undefined ? { ...st, has: this.adjOut.snapshot() } : st;
  }

  /** ROUTE-REFRESH: send the Adj-RIB-Out (of one family, or all) to this member again. */
  refresh(peerId: string, now: number, family?: 4 | 6): void {
    const st = this.members.get(peerId);
    if (st === undefined) return;
    const fams = family === undefined ? [...this.families] : this.families.has(family) ? [family] : [];
    const resend = st === 'live' ? [] : st.resend;
    const more = fams.filter((f) => !resend.includes(f));
    if (more.length === 0) return;
    const owed = this.behind.get(peerId);
    this.behind.delete(peerId);
    const has = owed === undefined ? undefined : this.heldBy(owed);
    this.members.set(peerId, st === 'live' ? { has, resend: more, eor: [] } : { ...st, resend: [...resend, ...more] });
    this.touchTime(now);
  }

  /** Members waiting for their socket, and how many prefixes each is owed. */
  behindCounts(): Map<string, number> {
    return new Map([...this.behind].map(([id, t]) => [id, t.size]));
  }

  /** A member that fell behind can take UPDATEs again: plan its owed routes at the next flush. */
  wake(peerId: string, now: number): void {
    if (this.behind.has(peerId)) this.touchTime(now);
  }

  /** The best path of `key` changed. */
  touch(key: PrefixKey, now: number): void {
    if (!this.fullScan) {
      // A burst touching a large part of the table is cheaper as one scan than as a change list.
      if (this.pending.push(key) >= this.cfg.coalesce.scanThreshold) {
        this.fullScan = true;
        this.pending = new KeySlots();
      }
    }
    this.touchTime(now);
  }

  /** Re-evaluate everything at the next flush (policy or settings change). */
  rescan(now: number): void {
    this.exports = newExportCache(this.memberList);
    this.fullScan = true;
    this.pending = new KeySlots();
    this.touchTime(now);
  }

  private touchTime(now: number): void {
    if (this.firstPendingAt === undefined) {
      this.firstPendingAt = now;
      this.leading = now >= this.lastChangeAt + this.cfg.coalesce.delayMs;
    }
    this.lastChangeAt = now;
  }

  /** When the group wants to be flushed next, or undefined when idle. */
  deadline(): number | undefined {
    if (this.firstPendingAt === undefined) return undefined;
    if (this.leading) return this.firstPendingAt;
    return Math.min(this.lastChangeAt + this.cfg.coalesce.delayMs, this.firstPendingAt + this.cfg.coalesce.maxDelayMs);
  }

  isDue(now: number): boolean {
    const d = this.deadline();
    return d !== undefined && now >= d;
  }

  /**
   * Brings the Adj-RIB-Out up to date with `view` and says what to send to
   * whom. `canSend(id)` false: the member's socket is still full; it is sent
   * nothing now and owed the keys of this delta (see `behind`).
   */
  plan(view: RouteView, canSend: (peerId: string) => boolean = () => true): GroupPlan {
    const delta = this.computeDelta(view);
    this.firstPendingAt = undefined;
    const deltaTo: string[] = [];
    const dumpTo: string[] = [];
    const eorTo = new Map<string, readonly (4 | 6)[]>();
    const resync: { peerId: string; batch: Batch }[] = [];
    // No change to send (e.g. a plan for a member that just joined): a live member owed nothing gets nothing, and
    // its socket need not be asked about (with 1,000 members, asking at every join made session setup quadratic).
    const nothingNew = delta.withdraw.length === 0 && delta.announce.length === 0;
    for (const [id, st] of this.members) {
      if (st === 'live') {
        const owed = this.behind.get(id);
        if (owed === undefined && nothingNew) continue;
        const ready = canSend(id);
        if (owed === undefined && ready) {
          deltaTo.push(id);
          continue;
        }
        const t = owed ?? new KeyTable();
        for (const k of delta.withdraw) t.set(k, 1);
        for (const b of delta.announce) for (const k of b.keys) t.set(k, 1);
        if (!ready) {
          if (owed === undefined && t.size > 0) this.behind.set(id, t);
          continue;
        }
        this.behind.delete(id);
        resync.push({ peerId: id, batch: this.owedBatch(t) });
        continue;
      }
      if (st.has !== undefined && st.has.size === 0) dumpTo.push(id);
      else resync.push({ peerId: id, batch: st.has === undefined ? this.refreshBatch(delta, st.resend) : this.diffBatch(st.has, st.resend) });
      if (st.eor.length > 0) eorTo.set(id, st.eor);
      this.members.set(id, 'live');
    }
    return { group: this, delta, deltaTo, dump: dumpTo.length > 0 ? this.dumpBatch() : undefined, dumpTo, eorTo, resync };
  }

  /** Packs a plan once and hands every member the same message objects. */
  pack(plan: GroupPlan, packer: Packer): Send[] {
    const out: Send[] = [];
    if (plan.deltaTo.length > 0 && (plan.delta.withdraw.length > 0 || plan.delta.announce.length > 0)) {
      const msgs = packBatch(plan.delta, this.ctx, packer);
      for (const id of plan.deltaTo) out.push({ peerId: id, messages: msgs });
    }
    const withEor = (id: string, msgs: Uint8Array[]) => {
      const fams = plan.eorTo.get(id);
      return fams === undefined ? msgs : [...msgs, ...[...fams].sort().map((f) => endOfRib(f))];
    };
    if (plan.dump !== undefined) {
      const dump = packBatch(plan.dump, this.ctx, packer);
      for (const id of plan.dumpTo) out.push({ peerId: id, messages: withEor(id, dump) });
    }
    for (const r of plan.resync) {
      const msgs = withEor(r.peerId, packBatch(r.batch, this.ctx, packer));
      if (msgs.length > 0) out.push({ peerId: r.peerId, messages: msgs });
    }
    return out;
  }

  /** Drops every Adj-RIB-Out reference (the group is going away). */
  dispose(): void {
    this.adjOut.clear();
    this.pending = new KeySlots();
    this.behind.clear();
    this.exports = newExportCache(this.memberList);
  }

  private computeDelta(view: RouteView): Batch {
    const buckets = new Map<AttrSet, PrefixKey[]>();
    const withdraw: PrefixKey[] = [];
    const memo: Memo = { byFamily: [new Map(), new Map()], lastPath: undefined, lastFam: 0, lastOut: null };
    const held: AttrSet[] = [];
    const step = (path: Path | undefined, key: PrefixKey): void => {
      const fam = familyOfKey(key);
      const next = path !== undefined && this.families.has(fam) ? this.exportFor(path, key, fam, memo, held) : null;
      if (next === null) {
        if (this.adjOut.delete(key)) withdraw.push(key);
        return;
      }
      // One probe: store, and look at what was there.
      if (this.adjOut.set(key, next) === next) return;
      if (next !== lastSet) {
        lastSet = next;
        lastBucket = buckets.get(next);
        if (lastBucket === undefined) buckets.set(next, (lastBucket = []));
      }
      lastBucket!.push(key);
    };
    let lastSet: AttrSet | undefined;
    let lastBucket: PrefixKey[] | undefined;
    if (this.fullScan) {
      this.fullScan = false;
      this.pending = new KeySlots();
      const hadRoutes = this.adjOut.size > 0;
      view.forEachBest(step);
      if (hadRoutes) {
        const gone: PrefixKey[] = [];
        this.adjOut.forEach((_set, key) => {
          if (!view.has(key)) gone.push(key);
        });
        for (const key of gone) step(undefined, key);
      }
    } else {
      // Visiting a key twice is a no-op the second time.
      const pending = this.pending;
      this.pending = new KeySlots();
      pending.forEach((key) => step(view.best(key), key));
    }
    for (const s of held) this.store.release(s);
    const announce = [...buckets].sort((a, b) => a[0].id - b[0].id).map(([attrs, keys]) => ({ attrs, keys: sortKeysInPlace(keys) }));
    return { withdraw: sortKeysInPlace(withdraw), announce };
  }

  private exportFor(path: Path, key: PrefixKey, fam: 4 | 6, memo: Memo, held: AttrSet[]): AttrSet | null {
    // The export rules do not look at the prefix: memoise per (family, source, attribute set as sent).
    // A local route with late communities (Path.late) goes through the rules with them.
    const sent = path.late ?? path.attrs;
    let out: AttrSet | null | undefined;
    if (memo.lastPath === path && memo.lastFam === fam) out = memo.lastOut;
    else {
      const m = memo.byFamily[fam === 4 ? 0 : 1];
      let bySrc = m.get(path.source);
      if (bySrc === undefined) m.set(path.source, (bySrc = new Map()));
      out = bySrc.get(sent);
      if (out === undefined) {
        const kept = this.exportCache(path.source, fam);
        out = kept.get(sent);
        if (out === undefined || (out !== null && !out.live)) {
          const attrs = exportAttrs(sent === path.attrs ? path : { source: path.source, attrs: sent, pathId: path.pathId }, fam, {
            ...this.cfg.settings,
            members: this.memberList,
          });
          out = attrs === null ? null : this.store.acquire(attrs);
          kept.set(sent, out);
        } else if (out !== null) this.store.retain(out);
        if (out !== null) held.push(out);
        bySrc.set(sent, out);
      }
      memo.lastPath = path;
      memo.lastFam = fam;
      memo.lastOut = out;
    }
    // What the rules refuse (own routes, no-export as received, iBGP rules) never reaches the policy.
    if (out !== null && this.cfg.policy !== undefined) out = this.applyPolicy(path, key, fam, out, held);
    if (out === null || this.cfg.gracefulShutdown !== true) return out;
    return this.shutdownMark(out, held);
  }

  /**
   * The export policy sees the route as the RIB holds it, before the session's rules (our AS
   * prepended and LOCAL_PREF dropped toward eBGP, next hop self) and without its late
   * communities, as BIRD's export filters do; what it returns gets the late communities and
   * goes through the rules (sentAttrs). Unchanged, that is `out` again.
   */
  private applyPolicy(path: Path, key: number | string, fam: 4 | 6, out: AttrSet, held: AttrSet[]): AttrSet | null {
    const res = this.cfg.policy!(keyedPolicyRoute(key, path), this.policyCtx);
    if (res.verdict === 'reject') return null;
    // A statement's accept ends the filter (BIRD's `accept`): the late communities are not added.
    const late = path.late !== undefined && res.decided !== true;
    if (res.attrs === path.attrs.attrs && (late || path.late === undefined)) return out;
    const s = this.store.acquire(sentAttrs(path, late ? withLate(path, res.attrs) : res.attrs, fam, { ...this.cfg.settings, members: this.memberList }));
    held.push(s);
    return s;
  }

  /** Last, after the export policy, so no policy undoes the drain (RFC 8326). */
  private shutdownMark(set: AttrSet, held: AttrSet[]): AttrSet {
    const kept = this.shutdownMarks.get(set);
    if (kept !== undefined && kept.live) {
      this.store.retain(kept);
      held.push(kept);
      return kept;
    }
    const attrs = withGracefulShutdown(set.attrs, this.cfg.settings.type);
    if (attrs === set.attrs) return set;
    const marked = this.store.acquire(attrs);
    held.push(marked);
    this.shutdownMarks.set(set, marked);
    return marked;
  }

  /** The kept export results for one source and family (see `exports`), reset when what they depend on changed. */
  private exportCache(source: PathSource, fam: 4 | 6): WeakMap<AttrSet, AttrSet | null> {
    if (this.exports.members !== this.memberList) this.exports = newExportCache(this.memberList);
    const bySource = this.exports.byFamily[fam === 4 ? 0 : 1];
    const routerId = source.kind === 'peer' ? source.routerId : undefined;
    let e = bySource.get(source);
    if (e === undefined || e.routerId !== routerId) bySource.set(source, (e = { routerId, out: new WeakMap() }));
    return e.out;
  }

  /** What a member that fell behind holds: the Adj-RIB-Out, with an unknown set for each owed key (so a diff withdraws or re-announces it). */
  private heldBy(owed: KeyTable): Map<PrefixKey, AttrSet> {
    const has = this.adjOut.snapshot();
    owed.forEach((_v, key) => has.set(key, UNKNOWN));
    return has;
  }

  /** The current routes of the owed keys: withdrawn where the Adj-RIB-Out has none. */
  private owedBatch(owed: KeyTable): Batch {
    const withdraw: PrefixKey[] = [];
    const buckets = new Map<AttrSet, PrefixKey[]>();
    owed.forEach((_v, key) => {
      const set = this.adjOut.get(key);
      if (set === undefined) {
        withdraw.push(key);
        return;
      }
      let b = buckets.get(set);
      if (b === undefined) buckets.set(set, (b = []));
      b.push(key);
    });
    return {
      withdraw: sortKeysInPlace(withdraw),
      announce: [...buckets].sort((a, b) => a[0].id - b[0].id).map(([attrs, keys]) => ({ attrs, keys: sortKeysInPlace(keys) })),
    };
  }

  /** What a member holding `has` needs to hold the Adj-RIB-Out, with the `resend` families in full. */
  private diffBatch(has: ReadonlyMap<PrefixKey, AttrSet>, resend: readonly (4 | 6)[]): Batch {
    const withdraw: PrefixKey[] = [];
    for (const key of has.keys()) if (!this.adjOut.has(key)) withdraw.push(key);
    return { withdraw: sortKeysInPlace(withdraw), announce: this.buckets((set, key) => has.get(key) !== set || resend.includes(familyOfKey(key))) };
  }

  /** For a member that held the Adj-RIB-Out before this plan's `delta`: the delta, with the `resend` families in full. */
  private refreshBatch(delta: Batch, resend: readonly (4 | 6)[]): Batch {
    const changed = new Set<PrefixKey>();
    for (const b of delta.announce) for (const key of b.keys) changed.add(key);
    return { withdraw: delta.withdraw, announce: this.buckets((_set, key) => changed.has(key) || resend.includes(familyOfKey(key))) };
  }

  private dumpBatch(): Batch {
    return { withdraw: [], announce: this.buckets(() => true) };
  }

  /** The Adj-RIB-Out routes `want` picks, bucketed by attribute set (ascending id), prefixes in canonical order. */
  private buckets(want: (set: AttrSet, key: PrefixKey) => boolean): Batch['announce'] {
    const buckets = new Map<AttrSet, PrefixKey[]>();
    this.adjOut.forEach((set, key) => {
      if (!want(set, key)) return;
      let b = buckets.get(set);
      if (b === undefined) buckets.set(set, (b = []));
      b.push(key);
    });
    return [...buckets].sort((a, b) => a[0].id - b[0].id).map(([attrs, keys]) => ({ attrs, keys: sortKeysInPlace(keys) }));
  }
}

/**
 * A batch's messages, in order, written back to back into shared buffers
 * (one arena per batch): a flush of thousands of small buckets makes a few
 * allocations, and the session sends runs of adjacent messages as one write.
 */
function packBatch(batch: Batch, ctx: CodecContext, packer: Packer): Uint8Array[] {
  const out: Uint8Array[] = [];
  const addPath = ctx.addPathV4 || ctx.addPathV6;
  const arena = new PackArena();
  const plain = { arena };
  if (batch.withdraw.length > 0) {
    const prefixes = batch.withdraw.map(prefixFromKey);
    for (const m of packer.packWithdrawals(prefixes, ctx, addPath ? { pathIds: prefixes.map(() => 1), arena } : plain)) out.push(m);
  }
  for (const { attrs, keys } of batch.announce) {
    const prefixes = keys.map(prefixFromKey);
    const nextHopV6 = attrs.attrs.mpReach?.nextHops;
    const opts = addPath ? { nextHopV6, pathIds: prefixes.map(() => 1), arena } : nextHopV6 ? { nextHopV6, arena } : plain;
    for (const m of packer.packUpdates(attrs.attrs, prefixes, ctx, opts)) out.push(m);
  }
  return out;
}
