/**
 * Adj-RIB-In of one peer: each route as received (pre-policy) and as
 * accepted (post-policy, or null when refused), so import can be re-run
 * without asking the peer (soft reconfiguration inbound).
 *
 * Stored compactly: a KeyTable maps each route's key to the index of an
 * `InVariant`, one shared object per distinct (pre, post, stale, path id).
 * A full table from one peer has a few thousand variants, so a route costs
 * a few bytes of typed array and no object of its own. A variant with a
 * post-policy set is itself the Loc-RIB candidate of every route using it.
 */
import type { AttrSet } from './attr-store.js';
import { KeyTable } from './key-table.js';
import type { Path, PeerSource } from './path.js';
import { familyOfKey, type PrefixKey } from './prefix-key.js';

export class InVariant implements Path {
  /** Routes using this variant. */
  count = 0;

  constructor(
    readonly source: PeerSource,
    /** Index in the table's variant list (≥ 1). */
    readonly index: number,
    /** ADD-PATH identifier (0 without ADD-PATH). */
    readonly pathId: number,
    /** The session uses ADD-PATH for this route's family. */
    readonly addPath: boolean,
    readonly pre: AttrSet,
    /** Post-policy attributes; null when ineligible or rejected by import policy. */
    readonly post: AttrSet | null,
    /** Graceful restart: kept from before the restart, not yet re-announced. */
    readonly stale: boolean,
  ) {}

  /** As a Loc-RIB candidate (only ever placed there when `post` is set). */
  get attrs(): AttrSet {
    return this.post!;
  }
}

export type InKey = number | string;

export function inKey(key: PrefixKey, pathId: number | undefined): InKey {
  return pathId === undefined ? key : `${key}#${pathId}`;
}

/** Splits an InKey back into the prefix key and ADD-PATH id. */
export function splitInKey(k: InKey): { key: PrefixKey; pathId: number | undefined } {
  if (typeof k === 'number') return { key: k, pathId: undefined };
  const hash = k.lastIndexOf('#');
  if (hash < 0) return { key: k, pathId: undefined };
  const head = k.slice(0, hash);
  // IPv6 keys hold a '/', IPv4 keys are numbers.
  return { key: head.includes('/') ? head : Number(head), pathId: Number(k.slice(hash + 1)) };
}

/** 0 for an IPv4 route's key, 1 for IPv6. */
function familyIndex(k: InKey): 0 | 1 {
  return familyOfKey(typeof k === 'number' ? k : splitInKey(k).key) === 4 ? 0 : 1;
}

export class AdjRibIn {
  private readonly table = new KeyTable();
  private readonly variants: (InVariant | undefined)[] = [undefined];
  private readonly free: number[] = [];
  /** pre.id → post id (0 for null) → variants by stale flag and path id. */
  private readonly byParts = new Map<number, Map<number, InVariant[]>>();
  private last: InVariant | undefined;
  /** Routes per family (index 0 IPv4, 1 IPv6), kept as they change so counting costs nothing. */
  private readonly receivedBy = [0, 0];
  private readonly acceptedBy = [0, 0];

  constructor(readonly source: PeerSource) {}

  get size(): number {
    return this.table.size;
  }

  /** Routes accepted by import (post-policy set). */
  get acceptedSize(): number {
    return this.acceptedBy[0] + this.acceptedBy[1];
  }

  /** Routes received (pre-policy) and accepted (post-policy) in one family: O(1). */
  countsOf(family: 4 | 6): { received: number; accepted: number } {
    const i = family === 4 ? 0 : 1;
    return { received: this.receivedBy[i], accepted: this.acceptedBy[i] };
  }

  /** Routes received (pre-policy) in one family, without building a counts object (checked per new route under a cap). */
  receivedOf(family: 4 | 6): number {
    return this.receivedBy[family === 4 ? 0 : 1];
  }

  /** Distinct variants in use (for tests and figures). */
  get variantCount(): number {
    return this.variants.length - 1 - this.free.length;
  }

  /** Loads the table's slots for keys[from, to) ahead of lookups (KeyTable.warm); for routes without ADD-PATH ids, whose InKey is the prefix key. */
  warm(keys: readonly PrefixKey[], from: number, to: number): void {
    this.table.warm(keys, from, to);
  }

  get(k: InKey): InVariant | undefined {
    const i = this.table.get(k);
    return i === 0 ? undefined : this.variants[i];
  }

  /** Stores the route under `k` as `(pre, post, stale, pathId)`; returns its variant. */
  set(k: InKey, pathId: number, addPath: boolean, pre: AttrSet, post: AttrSet | null, stale: boolean): InVariant {
    const v = this.variant(pathId, addPath, pre, post, stale);
    // One probe: store, and look at what was there.
    const old = this.table.set(k, v.index);
    if (old === v.index) return v;
    v.count++;
    const f = familyIndex(k);
    if (post !== null) this.acceptedBy[f]++;
    if (old !== 0) {
      const o = this.variants[old]!;
      if (o.post !== null) this.acceptedBy[f]--;
      this.unuse(o);
    } else this.receivedBy[f]++;
    return v;
  }

  delete(k: InKey): void {
    const i = this.table.get(k);
    if (i === 0) return;
    this.table.delete(k);
    const f = familyIndex(k);
    const o = this.variants[i]!;
    this.receivedBy[f]--;
    if (o.post !== null) this.acceptedBy[f]--;
    this.unuse(o);
  }

  /** Visits every route (the callback may `set` existing keys, not add or delete). */
  forEach(fn: (v: InVariant, k: InKey) => void): void {
    const vs = this.variants;
    this.table.forEach((i, k) => fn(vs[i]!, k));
  }

  /**
   * Graceful restart: every route of `family` not stale yet becomes stale.
   * Each variant's stale twin is looked up once, not once per route (a
   * restarting reflector's clients each mark every route from it).
   */
  markStale(family: 4 | 6): void {
    const fi = family === 4 ? 0 : 1;
    const twin = new Map<number, InVariant>();
    this.table.forEach((i, k) => {
      const v = this.variants[i]!;
      if (v.stale || familyIndex(k) !== fi) return;
      let s = twin.get(i);
      if (s === undefined) twin.set(i, (s = this.variant(v.pathId, v.addPath, v.pre, v.post, true)));
      // An existing key: set during forEach is allowed. The old variant is freed only once its last route has moved.
      this.table.set(k, s.index);
      s.count++;
      this.unuse(v);
    });
  }

  /** Keys of the routes of one family (4 or 6) that `which` selects. */
  keysOf(family: 4 | 6, which: (v: InVariant) => boolean = () => true): InKey[] {
    const out: InKey[] = [];
    this.forEach((v, k) => {
      if (which(v) && familyOfKey(splitInKey(k).key) === family) out.push(k);
    });
    return out;
  }

  private variant(pathId: number, addPath: boolean, pre: AttrSet, post: AttrSet | null, stale: boolean): InVariant {
    const l = this.last;
    if (l !== undefined && l.pre === pre && l.post === post && l.stale === stale && l.pathId === pathId && l.addPath === addPath && l.count > 0) return l;
    let byPost = this.byParts.get(pre.id);
    if (byPost === undefined) this.byParts.set(pre.id, (byPost = new Map()));
    const postId = post === null ? 0 : post.id;
    let list = byPost.get(postId);
    if (list === undefined) byPost.set(postId, (list = []));
    for (const v of list) if (v.stale === stale && v.pathId === pathId && v.addPath === addPath) return (this.last = v);
    const index = this.free.pop() ?? this.variants.length;
    if (index > 0x7fffffff) throw new RangeError('too many Adj-RIB-In variants');
    const v = new InVariant(this.source, index, pathId, addPath, pre, post, stale);
    this.variants[index] = v;
    list.push(v);
    return (this.last = v);
  }

  private unuse(v: InVariant): void {
    if (--v.count > 0) return;
    this.variants[v.index] = undefined;
    this.free.push(v.index);
    const byPost = this.byParts.get(v.pre.id)!;
    const postId = v.post === null ? 0 : v.post.id;
    const list = byPost.get(postId)!;
    list.splice(list.indexOf(v), 1);
    if (list.length === 0) byPost.delete(postId);
    if (byPost.size === 0) this.byParts.delete(v.pre.id);
    if (this.last === v) this.last = undefined;
  }
}
