import type { Address, Family } from './address.js';
import { Prefix, wordMask } from './prefix.js';
import { V4Index } from './trie-v4-index.js';

/** One stored prefix and its value, as handed out by lookups (no copy is made). */
export interface TrieEntry<V> {
  readonly prefix: Prefix;
  readonly value: V;
}

/**
 * A node of the path-compressed binary trie. A node either holds a value
 * (`has`) or is a glue node with exactly two children. The address words are
 * copied out of the Prefix so the lookup loops read plain numeric fields, and
 * stored as signed 32-bit values: an unsigned word of 2^31 or more is not a
 * small integer, which would make V8 store every such field of every node as
 * a separate boxed double (six extra heap objects per node, and a pointer
 * chase on each read in the walks). Only bitwise operations read them.
 */
class Node<V> implements TrieEntry<V> {
  readonly w0: number;
  readonly w1: number;
  readonly w2: number;
  readonly w3: number;
  readonly len: number;
  /** Mask of the top `len` bits of w0 (IPv4 fast path). */
  readonly mask0: number;
  /** Index of the word holding the last prefix bit, and the mask of that word's prefix bits. */
  readonly lastWord: number;
  readonly lastMask: number;
  has = false;
  value: V = undefined as V;
  left: Node<V> | null = null;
  right: Node<V> | null = null;
  /** Id in the IPv4 lookup index while this node holds a value and the index exists. */
  id4 = -1;

  constructor(readonly prefix: Prefix) {
    this.w0 = prefix.w0 | 0;
    this.w1 = prefix.w1 | 0;
    this.w2 = prefix.w2 | 0;
    this.w3 = prefix.w3 | 0;
    this.len = prefix.length;
    this.mask0 = wordMask(prefix.length) | 0;
    this.lastWord = prefix.length === 0 ? 0 : (prefix.length - 1) >>> 5;
    this.lastMask = wordMask(prefix.length - 32 * this.lastWord) | 0;
  }
}

/** From this many entries on, address lookups build and use the IPv4 index / IPv6 jump table. */
const INDEX_MIN_SIZE = 64;

function wordOf(w0: number, w1: number, w2: number, w3: number, i: number): number {
  return i === 0 ? w0 : i === 1 ? w1 : i === 2 ? w2 : w3;
}

function bitOf(w0: number, w1: number, w2: number, w3: number, i: number): number {
  return (wordOf(w0, w1, w2, w3, i >>> 5) >>> (31 - (i & 31))) & 1;
}

/** Length of the common leading bits of a node and the given words, capped at `max`. */
function commonBits<V>(n: Node<V>, w0: number, w1: number, w2: number, w3: number, max: number): number {
  for (let i = 0; i < 4 && i * 32 < max; i++) {
    const x = (wordOf(n.w0, n.w1, n.w2, n.w3, i) ^ wordOf(w0, w1, w2, w3, i)) >>> 0;
    if (x !== 0) return Math.min(max, i * 32 + Math.clz32(x));
  }
  return max;
}

/** True when node `n`'s prefix contains the bits w0..w3 (which are at least n.len long). */
function nodeMatches<V>(n: Node<V>, w0: number, w1: number, w2: number, w3: number): boolean {
  const len = n.len;
  if (((w0 ^ n.w0) & n.mask0) !== 0) return false;
  if (len <= 32) return true;
  if (((w1 ^ n.w1) & wordMask(len - 32)) !== 0) return false;
  if (len <= 64) return true;
  if (((w2 ^ n.w2) & wordMask(len - 64)) !== 0) return false;
  if (len <= 96) return true;
  return ((w3 ^ n.w3) & wordMask(len - 96)) === 0;
}

/**
 * Like nodeMatches, for a walk that already knows every bit before word
 * `from` matches: in a path-compressed walk this is usually one compare.
 */
function matchesFrom<V>(n: Node<V>, from: number, w0: number, w1: number, w2: number, w3: number): boolean {
  const last = n.lastWord;
  // XOR, not !==: node words are signed, the target's may be unsigned.
  for (let k = from; k < last; k++) if ((wordOf(n.w0, n.w1, n.w2, n.w3, k) ^ wordOf(w0, w1, w2, w3, k)) !== 0) return false;
  return ((wordOf(n.w0, n.w1, n.w2, n.w3, last) ^ wordOf(w0, w1, w2, w3, last)) & n.lastMask) === 0;
}

function truncate(family: Family, w0: number, w1: number, w2: number, w3: number, len: number): Prefix {
  if (family === 4) return Prefix.v4((w0 & wordMask(len)) >>> 0, len);
  return Prefix.v6((w0 & wordMask(len)) >>> 0, (w1 & wordMask(len - 32)) >>> 0, (w2 & wordMask(len - 64)) >>> 0, (w3 & wordMask(len - 96)) >>> 0, len);
}

/**
 * A map from IPv4 and IPv6 prefixes to values, kept in a path-compressed
 * binary trie per family. Lookups walk numeric fields only: no strings, no
 * per-lookup allocation. Iteration is in address order, then shorter first,
 * IPv4 before IPv6 (the same order as `Prefix.compare`).
 */
export class PrefixTrie<V> {
  private readonly root4: Node<V> = new Node(Prefix.v4(0, 0));
  private readonly root6: Node<V> = new Node(Prefix.v6(0, 0, 0, 0, 0));
  private count = 0;
  /**
   * IPv6 lookups start from a per-/16 jump entry (the deepest node of at most
   * 16 bits on that path, and the best match so far) instead of the root,
   * skipping the first levels, which are the cache misses. Entries are
   * recomputed on demand once `shape` (bumped by every change) moves on.
   */
  private jump6: (Jump<V> | undefined)[] | null = null;
  private shape = 0;
  /** Built on the first IPv4 address lookup, then kept up to date by set/delete. */
  private index4: V4Index<Node<V>> | null = null;
  /**
   * IPv6 address lookups on big tables: a 16-8-8 index over the top 32 bits
   * for prefixes of /32 and shorter, and per /32 block holding longer
   * prefixes the node to walk on from (a few nodes, not ~20 from the root).
   * Dropped by any IPv6 change; rebuilt only after enough lookups since
   * (a quarter of the IPv6 entry count) that the O(n) build is amortised,
   * the jump-table walk serving meanwhile.
   */
  private index6: V6Index<V> | null = null;
  private count6 = 0;
  private lookups6 = 0;

  get size(): number {
    return this.count;
  }

  private rootOf(family: Family): Node<V> {
    return family === 4 ? this.root4 : this.root6;
  }

  /** Inserts or replaces the value for `prefix`. */
  set(prefix: Prefix, value: V): this {
    this.shape++;
    if (prefix.family === 6) this.changed6(0);
    const { w0, w1, w2, w3, length: plen } = prefix;
    let node = this.rootOf(prefix.family);
    for (;;) {
      if (node.len === plen) {
        node.value = value;
        if (!node.has) {
          this.count++;
          node.has = true;
          this.indexAdd(node);
        }
        return this;
      }
      const b = bitOf(w0, w1, w2, w3, node.len);
      const child = b ? node.right : node.left;
      if (child === null) {
        this.attach(node, b, this.leaf(prefix, value));
        return this;
      }
      const c = commonBits(child, w0, w1, w2, w3, Math.min(child.len, plen));
      if (c === child.len) {
        node = child;
        continue;
      }
      if (c === plen) {
        // The new prefix sits between node and child.
        const n = this.leaf(prefix, value);
        this.attach(n, bitOf(child.w0, child.w1, child.w2, child.w3, plen), child);
        this.attach(node, b, n);
        return this;
      }
      // They diverge below both: a glue node at the common length.
      const glue = new Node<V>(truncate(prefix.family, w0, w1, w2, w3, c));
      this.attach(glue, bitOf(w0, w1, w2, w3, c), this.leaf(prefix, value));
      this.attach(glue, bitOf(child.w0, child.w1, child.w2, child.w3, c), child);
      this.attach(node, b, glue);
      return this;
    }
  }

  private leaf(prefix: Prefix, value: V): Node<V> {
    const n = new Node<V>(prefix);
    n.has = true;
    n.value = value;
    this.count++;
    this.indexAdd(n);
    return n;
  }

  /** An IPv6 entry was added (+1), removed (-1) or replaced (0): the IPv6 index is stale. */
  private changed6(delta: number): void {
    this.count6 += delta;
    this.index6 = null;
    this.lookups6 = 0;
  }

  private indexAdd(n: Node<V>): void {
    if (n.prefix.family === 6) this.count6++;
    if (this.index4 !== null && n.prefix.family === 4) n.id4 = this.index4.insert(n.w0, n.len, n);
  }

  private attach(parent: Node<V>, bit: number, child: Node<V> | null): void {
    if (bit) parent.right = child;
    else parent.left = child;
  }

  /** The node exactly at `prefix` (with or without a value), or null. */
  private findNode(prefix: Prefix): Node<V> | null {
    const { w0, w1, w2, w3, length: plen } = prefix;
    let node: Node<V> | null = this.rootOf(prefix.family);
    while (node !== null && node.len < plen) {
      node = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
      if (node === null || node.len > plen || !nodeMatches(node, w0, w1, w2, w3)) return null;
    }
    return node !== null && node.len === plen ? node : null;
  }

  /** The exact entry for `prefix`, or undefined. */
  getEntry(prefix: Prefix): TrieEntry<V> | undefined {
    const n = this.findNode(prefix);
    return n !== null && n.has ? n : undefined;
  }

  get(prefix: Prefix): V | undefined {
    const n = this.findNode(prefix);
    return n !== null && n.has ? n.value : undefined;
  }

  has(prefix: Prefix): boolean {
    const n = this.findNode(prefix);
    return n !== null && n.has;
  }

  /** Removes `prefix`; returns whether it was present. */
  delete(prefix: Prefix): boolean {
    const { w0, w1, w2, w3, length: plen } = prefix;
    let grand: Node<V> | null = null;
    let parent: Node<V> | null = null;
    let cover: Node<V> | null = null;
    let node: Node<V> | null = this.rootOf(prefix.family);
    while (node.len < plen) {
      const next: Node<V> | null = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
      if (next === null || next.len > plen || !nodeMatches(next, w0, w1, w2, w3)) return false;
      if (node.has) cover = node;
      grand = parent;
      parent = node;
      node = next;
    }
    if (node.len !== plen || !node.has) return false;
    node.has = false;
    node.value = undefined as V;
    this.count--;
    this.shape++;
    if (prefix.family === 6) this.changed6(-1);
    if (this.index4 !== null && node.id4 >= 0) {
      this.index4.remove(node.w0, node.len, node.id4, cover === null ? -1 : cover.id4, cover === null ? 0 : cover.len);
      node.id4 = -1;
    }
    if (parent === null) return true; // a root stays as the family's anchor
    if (node.left !== null && node.right !== null) return true; // becomes glue
    const only = node.left ?? node.right;
    this.replaceChild(parent, node, only);
    // A valueless parent left with one child is no longer needed (roots stay).
    if (only === null && grand !== null && !parent.has) {
      this.replaceChild(grand, parent, parent.left ?? parent.right);
    }
    return true;
  }

  private replaceChild(parent: Node<V>, old: Node<V>, next: Node<V> | null): void {
    if (parent.left === old) parent.left = next;
    else parent.right = next;
  }

  clear(): void {
    for (const r of [this.root4, this.root6]) {
      r.left = r.right = null;
      r.has = false;
      r.value = undefined as V;
      r.id4 = -1;
    }
    this.count = 0;
    this.index4 = null;
    this.changed6(-this.count6);
    this.shape++;
  }

  /** Longest-prefix match of an IPv4 address given as a 32-bit number (at most three array reads). */
  lookupV4(value: number): TrieEntry<V> | undefined {
    // Only >>> and & read `value`, so signed or unsigned 32-bit input both work.
    const ix = this.index4;
    return ix === null ? this.buildIndex4().lookup(value) : ix.lookup(value);
  }

  /**
   * Longest-prefix match of many IPv4 addresses: `out[i]` gets the entry for
   * `values[i]`. Faster per address than lookupV4 on large tables, because the
   * memory reads of different addresses overlap.
   */
  lookupV4Many(values: ArrayLike<number>, out: (TrieEntry<V> | undefined)[] = new Array(values.length)): (TrieEntry<V> | undefined)[] {
    const ix = this.index4 ?? this.buildIndex4();
    if (this.scratch.length < values.length) this.scratch = new Int32Array(values.length);
    ix.lookupMany(values, out as (Node<V> | undefined)[], this.scratch);
    return out;
  }

  private scratch = new Int32Array(0);

  private buildIndex4(): V4Index<Node<V>> {
    const index = new V4Index<Node<V>>();
    const stack: Node<V>[] = [this.root4];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.has) n.id4 = index.insert(n.w0, n.len, n);
      if (n.right !== null) stack.push(n.right);
      if (n.left !== null) stack.push(n.left);
    }
    this.index4 = index;
    return index;
  }

  /** Longest-prefix match of an address, or of a prefix (the longest stored prefix containing it). */
  lookup(target: Address | Prefix): TrieEntry<V> | undefined {
    // Small tries (neighbour sets…) walk; the 16-8-8 index costs ~400 KB, worth it for big ones.
    if (target.family === 4 && !(target instanceof Prefix) && (this.index4 !== null || this.count >= INDEX_MIN_SIZE)) return this.lookupV4(target.w0);
    const { w0, w1, w2, w3 } = target;
    const tlen = target instanceof Prefix ? target.length : target.family === 4 ? 32 : 128;
    let node: Node<V> | null;
    let best: Node<V> | undefined;
    if (target.family === 6 && !(target instanceof Prefix) && this.count6 >= INDEX_MIN_SIZE) {
      const ix6 = this.index6 ?? (++this.lookups6 >= this.count6 >>> 2 ? (this.index6 = buildIndex6(this.root6)) : null);
      if (ix6 !== null) return lookupIndexed6(ix6, w0, w1, w2, w3);
    }
    if (target.family === 6 && tlen >= 16 && (this.jump6 !== null || this.count >= INDEX_MIN_SIZE)) {
      const jumps = this.jump6 ?? (this.jump6 = new Array<Jump<V> | undefined>(65536).fill(undefined));
      const k = w0 >>> 16;
      let j = jumps[k];
      if (j === undefined || j.shape !== this.shape) j = jumps[k] = this.jumpFor(k);
      node = j.node;
      best = j.best;
    } else {
      node = this.rootOf(target.family);
      best = node.has ? node : undefined;
    }
    while (node.len < tlen) {
      const from = node.len >>> 5;
      node = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
      if (node === null || node.len > tlen || !matchesFrom(node, from, w0, w1, w2, w3)) break;
      if (node.has) best = node;
    }
    return best;
  }

  private jumpFor(k: number): Jump<V> {
    const w0 = (k << 16) >>> 0;
    let node = this.root6;
    let best: Node<V> | undefined = node.has ? node : undefined;
    while (node.len < 16) {
      const next: Node<V> | null = bitOf(w0, 0, 0, 0, node.len) ? node.right : node.left;
      if (next === null || next.len > 16 || !matchesFrom(next, 0, w0, 0, 0, 0)) break;
      node = next;
      if (node.has) best = node;
    }
    return new Jump(node, best, this.shape);
  }

  /**
   * Calls `test(value, arg)` for each stored prefix containing `target`,
   * shortest first, and returns true at the first that passes. Lets callers
   * (prefix sets) scan ancestors without allocating a result list.
   */
  someCovering<A>(target: Prefix, test: (value: V, arg: A) => boolean, arg: A): boolean {
    const { w0, w1, w2, w3, length: tlen } = target;
    let node: Node<V> | null = this.rootOf(target.family);
    if (node.has && test(node.value, arg)) return true;
    while (node.len < tlen) {
      const from = node.len >>> 5;
      node = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
      if (node === null || node.len > tlen || !matchesFrom(node, from, w0, w1, w2, w3)) return false;
      if (node.has && test(node.value, arg)) return true;
    }
    return false;
  }

  /** Every stored prefix that contains `target` (itself included), shortest first. */
  covering(target: Prefix | Address): TrieEntry<V>[] {
    const out: TrieEntry<V>[] = [];
    const { w0, w1, w2, w3 } = target;
    const tlen = target instanceof Prefix ? target.length : target.family === 4 ? 32 : 128;
    let node: Node<V> | null = this.rootOf(target.family);
    if (node.has) out.push(node);
    while (node.len < tlen) {
      const from = node.len >>> 5;
      node = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
      if (node === null || node.len > tlen || !matchesFrom(node, from, w0, w1, w2, w3)) break;
      if (node.has) out.push(node);
    }
    return out;
  }

  /** Every stored prefix inside `target` (itself included), in iteration order. */
  covered(target: Prefix): TrieEntry<V>[] {
    const { w0, w1, w2, w3, length: tlen } = target;
    let node: Node<V> = this.rootOf(target.family);
    // Descend to the first node at or below target's length; it must lie inside target.
    while (node.len < tlen) {
      const next: Node<V> | null = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
      if (next === null) return [];
      if (next.len > tlen) {
        if (!target.contains(next.prefix)) return [];
      } else if (!nodeMatches(next, w0, w1, w2, w3)) return [];
      node = next;
    }
    const out: TrieEntry<V>[] = [];
    collect(node, out);
    return out;
  }

  /** Entries in order: address, then shorter first; IPv4 before IPv6. */
  *entries(): IterableIterator<TrieEntry<V>> {
    for (const root of [this.root4, this.root6]) {
      const stack: Node<V>[] = [root];
      while (stack.length > 0) {
        const n = stack.pop()!;
        if (n.has) yield n;
        if (n.right !== null) stack.push(n.right);
        if (n.left !== null) stack.push(n.left);
      }
    }
  }

  [Symbol.iterator](): IterableIterator<TrieEntry<V>> {
    return this.entries();
  }

  *keys(): IterableIterator<Prefix> {
    for (const e of this.entries()) yield e.prefix;
  }

  forEach(fn: (value: V, prefix: Prefix) => void): void {
    for (const e of this.entries()) fn(e.value, e.prefix);
  }
}

/** See PrefixTrie.index6. */
interface V6Index<V> {
  readonly short: V4Index<Node<V>>;
  readonly deep: Map<number, Node<V>>;
}

function buildIndex6<V>(root: Node<V>): V6Index<V> {
  const short = new V4Index<Node<V>>();
  const deep = new Map<number, Node<V>>();
  const stack: Node<V>[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.has) short.insert(n.w0, n.len, n);
    for (const c of [n.left, n.right]) {
      if (c === null) continue;
      // The last node of /32 or shorter on a path anchors the walk for its child's /32 block.
      if (c.len > 32) deep.set(c.w0, n);
      else stack.push(c);
    }
  }
  return { short, deep };
}

/** Longest match of an IPv6 address: the index for /32 and shorter, then a short walk inside its /32 block. */
function lookupIndexed6<V>(ix: V6Index<V>, w0: number, w1: number, w2: number, w3: number): Node<V> | undefined {
  let best = ix.short.lookup(w0);
  let node: Node<V> | null | undefined = ix.deep.get(w0 | 0);
  if (node === undefined) return best;
  while (node.len < 128) {
    const from = node.len >>> 5;
    node = bitOf(w0, w1, w2, w3, node.len) ? node.right : node.left;
    if (node === null || !matchesFrom(node, from, w0, w1, w2, w3)) break;
    if (node.has) best = node;
  }
  return best;
}

class Jump<V> {
  constructor(
    readonly node: Node<V>,
    readonly best: Node<V> | undefined,
    readonly shape: number,
  ) {}
}

function collect<V>(start: Node<V>, out: TrieEntry<V>[]): void {
  const stack: Node<V>[] = [start];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.has) out.push(n);
    if (n.right !== null) stack.push(n.right);
    if (n.left !== null) stack.push(n.left);
  }
}
