/**
 * Attribute interning: every distinct set of path attributes exists once, as
 * a deep-frozen object shared by every route that carries it, with a
 * reference count and a per-encoding-context cache slot for its bytes.
 */
import type { Address } from '../net/index.js';
import type { AsPathSegment, MpReach, PathAttributes } from '../wire/index.js';

export class AttrSet {
  /** Holders: Adj-RIB-In entries, local originations, Adj-RIB-Out entries. */
  refs = 0;
  /** False once the store has dropped the set; a dead set is never handed out again. */
  live = true;
  private encoded: Map<string, Uint8Array> | undefined;

  constructor(
    /** Deep-frozen; never mutate. */
    readonly attrs: PathAttributes,
    readonly hash: number,
    /** Stable per store, handy as a map key or for sorting output deterministically. */
    readonly id: number,
  ) {}

  /** Cached encoding for an encoding context (e.g. "asn4", "asn4+ext"), if the packer stored one. */
  encodedFor(ctxKey: string): Uint8Array | undefined {
    return this.encoded?.get(ctxKey);
  }

  setEncoded(ctxKey: string, bytes: Uint8Array): void {
    (this.encoded ??= new Map()).set(ctxKey, bytes);
  }
}

export class AttrStore {
  private readonly byHash = new Map<number, AttrSet | AttrSet[]>();
  /** Interned frozen objects map back to their set, so re-interning them is a lookup. */
  private readonly byObject = new WeakMap<PathAttributes, AttrSet>();
  private nextId = 1;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The shared set equal to `attrs` (MP_UNREACH and MP_REACH NLRI dropped), without taking a reference. */
  lookupOrCreate(attrs: PathAttributes): AttrSet {
    const known = this.byObject.get(attrs);
    if (known !== undefined && this.isLive(known)) return known;
    // Hash and compare the input as given (both ignore what normalize drops); copy only on a miss.
    // A frozen input cannot change: remembered, its next intern is this lookup (the codec freezes the
    // attribute blocks it caches by their raw bytes, so a repeated block is neither hashed nor compared).
    const remember = Object.isFrozen(attrs);
    const hash = hashAttrs(attrs);
    const slot = this.byHash.get(hash);
    if (slot !== undefined) {
      if (slot instanceof AttrSet) {
        if (attrsEqual(slot.attrs, attrs)) {
          if (remember) this.byObject.set(attrs, slot);
          return slot;
        }
      } else {
        for (const s of slot) {
          if (attrsEqual(s.attrs, attrs)) {
            if (remember) this.byObject.set(attrs, s);
            return s;
          }
        }
      }
    }
    const frozen = deepFreeze(normalize(attrs));
    const set = new AttrSet(frozen, hash, this.nextId++);
    if (slot === undefined) this.byHash.set(hash, set);
    else if (slot instanceof AttrSet) this.byHash.set(hash, [slot, set]);
    else slot.push(set);
    this.byObject.set(frozen, set);
    if (remember) this.byObject.set(attrs, set);
    this.count++;
    return set;
  }

  /** Interns and takes one reference. */
  acquire(attrs: PathAttributes | AttrSet): AttrSet {
    const set = this.lookupOrCreate(attrs instanceof AttrSet ? attrs.attrs : attrs);
    set.refs++;
    return set;
  }

  /** Takes one more reference on a set already held. */
  retain(set: AttrSet): AttrSet {
    set.refs++;
    return set;
  }

  /** Drops one reference; the set leaves the store at zero. */
  release(set: AttrSet): void {
    if (set.refs <= 0) throw new Error(`attribute set ${set.id} released more often than acquired`);
    if (--set.refs > 0) return;
    this.drop(set);
  }

  /** Removes a set nobody holds (e.g. created by a lookup whose result was not kept). */
  dropIfUnused(set: AttrSet): void {
    if (set.refs === 0 && this.isLive(set)) this.drop(set);
  }

  private drop(set: AttrSet): void {
    set.live = false;
    const slot = this.byHash.get(set.hash);
    if (slot === set) this.byHash.delete(set.hash);
    else if (Array.isArray(slot)) {
      const i = slot.indexOf(set);
      if (i >= 0) slot.splice(i, 1);
      if (slot.length === 1) this.byHash.set(set.hash, slot[0]);
    }
    this.count--;
  }

  private isLive(set: AttrSet): boolean {
    return set.live;
  }
}

/** Drops what is per-UPDATE rather than per-route: MP_UNREACH, and MP_REACH NLRI (its next hops stay). */
function normalize(a: PathAttributes): PathAttributes {
  const out: { -readonly [K in keyof PathAttributes]: PathAttributes[K] } = {};
  if (a.origin !== undefined) out.origin = a.origin;
  if (a.asPath !== undefined) out.asPath = a.asPath.map((s) => ({ type: s.type, asns: s.asns.slice() }));
  if (a.nextHop !== undefined) out.nextHop = a.nextHop;
  if (a.med !== undefined) out.med = a.med;
  if (a.localPref !== undefined) out.localPref = a.localPref;
  if (a.atomicAggregate) out.atomicAggregate = true;
  if (a.aggregator !== undefined) out.aggregator = { asn: a.aggregator.asn, address: a.aggregator.address };
  if (a.communities !== undefined) out.communities = a.communities.slice();
  if (a.originatorId !== undefined) out.originatorId = a.originatorId;
  if (a.clusterList !== undefined) out.clusterList = a.clusterList.slice();
  if (a.mpReach !== undefined) {
    const m: MpReach = { afi: a.mpReach.afi, safi: a.mpReach.safi, nextHops: a.mpReach.nextHops.slice(), nlri: [] };
    out.mpReach = m;
  }
  if (a.extendedCommunities !== undefined) out.extendedCommunities = a.extendedCommunities.slice();
  if (a.largeCommunities !== undefined) out.largeCommunities = a.largeCommunities.map((l) => ({ global: l.global, local1: l.local1, local2: l.local2 }));
  if (a.unknown !== undefined) out.unknown = a.unknown.map((u) => ({ flags: u.flags, code: u.code, value: u.value.slice() }));
  return out;
}

function deepFreeze<T>(v: T): T {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
  // Typed arrays cannot be frozen; unknown attribute bytes are copied on intern and must be treated as read-only.
  if (ArrayBuffer.isView(v)) return v;
  for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k]);
  return Object.freeze(v);
}

// ------------------------------------------------------------ hashing

function mix(h: number, v: number): number {
  h = Math.imul(h ^ (v | 0), 0x01000193);
  return Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
}

function mixNum(h: number, v: number): number {
  // Values above 2^32 (none today) fold their high part in.
  return mix(mix(h, v), Math.floor(v / 4294967296));
}

function mixAddr(h: number, a: Address): number {
  h = mix(h, a.family);
  h = mix(h, a.w0);
  if (a.family === 6) h = mix(mix(mix(h, a.w1), a.w2), a.w3);
  return h;
}

function mixPath(h: number, segs: readonly AsPathSegment[]): number {
  for (const s of segs) {
    h = mix(h, 0x5e9 + s.type);
    for (const asn of s.asns) h = mix(h, asn);
  }
  return h;
}

/** A cheap structural hash; equal attribute sets hash equal. Ignores MP_UNREACH and MP_REACH NLRI, like interning. */
export function hashAttrs(a: PathAttributes): number {
  let h = 0x811c9dc5;
  h = mix(h, a.origin ?? 7);
  if (a.asPath) h = mixPath(mix(h, 1), a.asPath);
  if (a.nextHop) h = mixAddr(mix(h, 2), a.nextHop);
  if (a.med !== undefined) h = mixNum(mix(h, 3), a.med);
  if (a.localPref !== undefined) h = mixNum(mix(h, 4), a.localPref);
  if (a.atomicAggregate) h = mix(h, 5);
  if (a.aggregator) h = mixAddr(mix(mix(h, 6), a.aggregator.asn), a.aggregator.address);
  if (a.communities) {
    h = mix(h, 7);
    for (const c of a.communities) h = mix(h, c);
  }
  if (a.originatorId) h = mixAddr(mix(h, 8), a.originatorId);
  if (a.clusterList) {
    h = mix(h, 9);
    for (const c of a.clusterList) h = mixAddr(h, c);
  }
  if (a.mpReach) {
    h = mix(mix(mix(h, 10), a.mpReach.afi), a.mpReach.safi);
    for (const n of a.mpReach.nextHops) h = mixAddr(h, n);
  }
  if (a.extendedCommunities) {
    h = mix(h, 11);
    for (const c of a.extendedCommunities) h = mix(mix(h, Number(c & 0xffffffffn)), Number(c >> 32n));
  }
  if (a.largeCommunities) {
    h = mix(h, 12);
    for (const l of a.largeCommunities) h = mix(mix(mix(h, l.global), l.local1), l.local2);
  }
  if (a.unknown) {
    h = mix(h, 13);
    for (const u of a.unknown) {
      h = mix(mix(mix(h, u.flags), u.code), u.value.length);
      for (let i = 0; i < u.value.length; i++) h = mix(h, u.value[i]);
    }
  }
  return h >>> 0;
}

// ------------------------------------------------------------ equality

function addrEq(a: Address | undefined, b: Address | undefined): boolean {
  if (a === b) return true;
  return a !== undefined && b !== undefined && a.equals(b);
}

function numsEq(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function bigintsEq(a: readonly bigint[] | undefined, b: readonly bigint[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function addrsEq(a: readonly Address[] | undefined, b: readonly Address[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!addrEq(a[i], b[i])) return false;
  return true;
}

function asPathEq(a: readonly AsPathSegment[] | undefined, b: readonly AsPathSegment[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].type !== b[i].type || !numsEq(a[i].asns, b[i].asns)) return false;
  return true;
}

function largeEq(a: PathAttributes['largeCommunities'], b: PathAttributes['largeCommunities']): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].global !== b[i].global || a[i].local1 !== b[i].local1 || a[i].local2 !== b[i].local2) return false;
  return true;
}

function unknownEq(a: PathAttributes['unknown'], b: PathAttributes['unknown']): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.flags !== y.flags || x.code !== y.code || x.value.length !== y.value.length) return false;
    for (let j = 0; j < x.value.length; j++) if (x.value[j] !== y.value[j]) return false;
  }
  return true;
}

/** Deep equality of two attribute sets; list order (communities included) matters. Ignores MP_UNREACH and MP_REACH NLRI. */
export function attrsEqual(a: PathAttributes, b: PathAttributes): boolean {
  if (a === b) return true;
  return (
    a.origin === b.origin &&
    a.med === b.med &&
    a.localPref === b.localPref &&
    !!a.atomicAggregate === !!b.atomicAggregate &&
    addrEq(a.nextHop, b.nextHop) &&
    addrEq(a.originatorId, b.originatorId) &&
    asPathEq(a.asPath, b.asPath) &&
    (a.aggregator === b.aggregator ||
      (a.aggregator !== undefined &&
        b.aggregator !== undefined &&
        a.aggregator.asn === b.aggregator.asn &&
        addrEq(a.aggregator.address, b.aggregator.address))) &&
    numsEq(a.communities, b.communities) &&
    addrsEq(a.clusterList, b.clusterList) &&
    (a.mpReach === b.mpReach ||
      (a.mpReach !== undefined &&
        b.mpReach !== undefined &&
        a.mpReach.afi === b.mpReach.afi &&
        a.mpReach.safi === b.mpReach.safi &&
        addrsEq(a.mpReach.nextHops, b.mpReach.nextHops))) &&
    bigintsEq(a.extendedCommunities, b.extendedCommunities) &&
    largeEq(a.largeCommunities, b.largeCommunities) &&
    unknownEq(a.unknown, b.unknown)
  );
}
