/**
 * The routing layer's entry point: peers' Adj-RIBs-In, local originations,
 * the Loc-RIB, and update groups planning what each peer is sent. Pure and
 * synchronous; the caller passes `now` (ms) and sends what `flushDue` returns.
 */
import { Address, type Prefix } from '../net/index.js';
import { type CodecContext, type PathAttributes, type UpdateMessage, familyOfAfi, packUpdates, packWithdrawals } from '../wire/index.js';
import { AdjRibIn, inKey, splitInKey, type InKey, type InVariant } from './adj-rib-in.js';
import { AttrSet, AttrStore } from './attr-store.js';
import { explainSelection, type BestPathOptions, type CandidateOutcome, type MultipathOptions } from './best-path.js';
import { exportRefusal, sentAttrs, withLate, type ExportSettings } from './export.js';
import { refusalReason, type EligibilityContext } from './eligibility.js';
import { LocRib, type Change } from './loc-rib.js';
import { KeyedRoute, linkIface, LOCAL_SOURCE, policySource, type Path, type PeerSource, type SessionLink } from './path.js';
import type { ExportPolicy, ImportPolicy, Packer, PeerRef } from './ports.js';
import { keyOf, prefixFromKey, sortKeys, type PrefixKey } from './prefix-key.js';
import { DEFAULT_COALESCE, newSession, UpdateGroup, type CoalesceOptions, type GroupPlan, type Resync, type RouteView, type Send } from './update-group.js';
import { carriesGracefulShutdown } from './gshut.js';
import { carriesNoLlgr, withLlgrStale } from './llgr.js';

/** Routes per warm-up pass (Rib.warm): two tables' lines for this many keys stay well inside a core's cache. */
const WARM_RUN = 256;

export interface RibOptions {
  readonly localAsn: number;
  /** Our BGP identifier, dotted quad. */
  readonly routerId: string;
  /** Makes us a route reflector with this cluster ID (dotted quad). */
  readonly clusterId?: string;
  readonly multipath?: MultipathOptions;
  readonly alwaysCompareMed?: boolean;
  readonly defaultLocalPref?: number;
  readonly coalesce?: Partial<CoalesceOptions>;
  /** Defaults to src/wire/packer.ts. */
  readonly packer?: Packer;
  /**
   * Told when a prefix's best path or ECMP set changes (empty when it has
   * none); e.g. to program a FIB. `name` is `prefix.toString()`, kept with the
   * Loc-RIB entry: the same string for the prefix as long as it is in the
   * table (a consumer keyed by text hashes it once).
   */
  readonly onLocChange?: (prefix: Prefix, multipath: readonly Path[], name: string) => void;
}

export interface PeerConfig {
  readonly address: Address;
  /** The peer's key (default: its address); two peers at one address, on different ports, need distinct keys. */
  readonly id?: string;
  readonly asn: number;
  /** Per-peer local AS (defaults to the RIB's). */
  readonly localAsn?: number;
  readonly rrClient?: boolean;
  readonly nextHopSelf?: boolean;
  readonly keepNextHop?: boolean;
  readonly sendMed?: boolean;
  readonly localAddressV4?: Address;
  readonly localAddressV6?: Address;
  readonly linkLocalV6?: Address;
  readonly allowOwnAs?: number;
  readonly importPolicy?: ImportPolicy;
  readonly exportPolicy?: ExportPolicy;
  /**
   * A hard cap on routes stored per family (a max-prefix limit with action
   * block): an announcement of a new prefix beyond it is refused (not stored,
   * counted in `refusedCount`); replacements and withdrawals still apply.
   */
  readonly maxRoutes?: Partial<Record<4 | 6, number>>;
  /**
   * RFC 8326 graceful shutdown toward this peer: everything it is sent carries
   * GRACEFUL_SHUTDOWN (65535:0), and LOCAL_PREF 0 when it is an iBGP peer
   * (src/rib/gshut.ts). Changing it moves the peer to another update group,
   * which re-sends every route once with the new attributes.
   */
  readonly gracefulShutdown?: boolean;
  /** RFC 8326 §4: routes received carrying GRACEFUL_SHUTDOWN get LOCAL_PREF 0 before import policy (default true). */
  readonly honourGracefulShutdown?: boolean;
}

/** What the session negotiated, given when it reaches Established. */
export interface SessionInfo {
  /** The encoding context for what we send. */
  readonly ctx: CodecContext;
  /** Families we send routes in. */
  readonly families: readonly (4 | 6)[];
  /** Families negotiated on the session (End-of-RIB goes out for each); default `families`. */
  readonly endOfRib?: readonly (4 | 6)[];
  /** The peer's BGP identifier from its OPEN. */
  readonly routerId: string;
  /** The peer advertised long-lived graceful restart (RFC 9494): it may be sent routes carrying LLGR_STALE. */
  readonly longLived?: boolean;
  /** The interface the session runs over and the network connected there: routes whose next hop is on it carry that interface (`PolicyRoute.iface`). */
  readonly link?: SessionLink;
  /** For a next hop off that network: the interface the kernel's table sends it out of, when known (`PeerSource.resolveIface`). */
  readonly resolveIface?: (nextHop: Address) => string | undefined;
}

/** See `Rib.exportPreview`. */
export interface ExportPreview {
  readonly peer: PeerRef;
  /** The peer's session is up (it is in an update group). */
  readonly established: boolean;
  readonly best?: Path;
  /** Why the export rules refuse the route, before any policy. */
  readonly refusal?: string;
  /** What the export policy sees: the route's attributes, before the session's rules. */
  readonly attrs?: PathAttributes;
  /** The attributes sent, from what the export policy returned (`attrs` without a policy). */
  /** `decided`: a policy statement accepted (PolicyResult.decided): the path's late communities are not added. */
  readonly send?: (policyAttrs: PathAttributes, decided?: boolean) => PathAttributes;
}

export interface InRouteView {
  readonly prefix: Prefix;
  readonly pathId: number | undefined;
  readonly attrs: PathAttributes;
  readonly stale: boolean;
}

interface PeerState {
  cfg: PeerConfig;
  readonly source: PeerSource;
  readonly adjIn: AdjRibIn;
  elig: EligibilityContext;
  readonly ref: PeerRef;
  session?: SessionInfo;
  group?: UpdateGroup;
  /** New routes refused by `maxRoutes` since the session came up, per family (index 0 IPv4, 1 IPv6). */
  readonly refused: [number, number];
}

export class Rib {
  readonly store = new AttrStore();
  private readonly loc: LocRib;
  private readonly peers = new Map<string, PeerState>();
  private readonly groups = new Map<string, UpdateGroup>();
  /** Our own paths, one object per (attribute set, late attribute set, interface ('' for none)), shared by the prefixes originated with them. */
  private readonly localPaths = new Map<AttrSet, Map<AttrSet | undefined, Map<string, { path: Path; count: number }>>>();
  private readonly coalesce: CoalesceOptions;
  private readonly bestOpts: BestPathOptions;
  private readonly packer: Packer;
  private readonly routerIdAddr: Address;
  private clusterIdAddr: Address | undefined;
  private readonly view: RouteView;
  private readonly policyIds = new WeakMap<object, number>();
  private readonly baseCache: { pre: AttrSet | undefined; peer: PeerState | undefined; base: AttrSet | null } = { pre: undefined, peer: undefined, base: null };
  private nextPolicyId = 1;

  constructor(private readonly opts: RibOptions) {
    this.bestOpts = { multipath: opts.multipath, alwaysCompareMed: opts.alwaysCompareMed, defaultLocalPref: opts.defaultLocalPref };
    this.loc = new LocRib(this.bestOpts, opts.onLocChange !== undefined);
    this.coalesce = { ...DEFAULT_COALESCE, ...opts.coalesce };
    this.packer = opts.packer ?? { packUpdates, packWithdrawals };
    this.routerIdAddr = parseQuad(opts.routerId, 'routerId');
    this.clusterIdAddr = opts.clusterId !== undefined ? parseQuad(opts.clusterId, 'clusterId') : undefined;
    const loc = this.loc;
    this.view = { best: (k) => loc.best(k), forEachBest: (fn) => loc.forEachBest(fn), has: (k) => loc.has(k), size: () => loc.size };
  }

  // ------------------------------------------------------------ peers

  addPeer(cfg: PeerConfig): string {
    const id = cfg.id ?? cfg.address.toString();
    if (this.peers.has(id)) throw new Error(`peer ${id} is already configured`);
    const localAsn = cfg.localAsn ?? this.opts.localAsn;
    const type = cfg.asn === localAsn ? 'ibgp' : 'ebgp';
    const source: PeerSource = { kind: 'peer', id, address: cfg.address, asn: cfg.asn, type, routerIdNum: 0, rrClient: cfg.rrClient ?? false };
    const ownAsns = localAsn === this.opts.localAsn ? [localAsn] : [localAsn, this.opts.localAsn];
    const elig: EligibilityContext = { ownAsns, allowOwnAs: cfg.allowOwnAs ?? 0, routerId: this.routerIdAddr, clusterId: this.clusterIdAddr };
    this.peers.set(id, { cfg, source, adjIn: new AdjRibIn(source), elig, ref: { address: cfg.address, asn: cfg.asn, type, localAsn }, refused: [0, 0] });
    return id;
  }

  /** Drops the peer and every route learned from it. */
  removePeer(peerId: string, now: number): void {
    this.peerDown(peerId, now);
    this.peers.delete(peerId);
  }

  /** The session reached Established: the peer joins its update group and gets a full dump, then End-of-RIB. */
  peerUp(peerId: string, session: SessionInfo, now: number): void {
    const peer = this.peer(peerId);
    const routerIdNum = parseQuad(session.routerId, `router ID of peer ${peerId}`).w0;
    if (peer.group !== undefined) this.leaveGroup(peer, now);
    peer.session = session;
    peer.source.routerId = session.routerId;
    peer.source.routerIdNum = routerIdNum;
    peer.source.link = session.link;
    peer.source.resolveIface = session.resolveIface;
    peer.refused[0] = peer.refused[1] = 0;
    this.joinGroup(peer, session, now, newSession(session.endOfRib ?? session.families));
  }

  /**
   * Changes a peer's settings or policies. A new import policy re-runs import
   * from the pre-policy Adj-RIB-In; export changes move an established peer
   * to its new update group and send it only the difference. (AS numbers and
   * route-reflector client status are fixed: remove and re-add the peer.)
   */
  reconfigurePeer(peerId: string, changes: Omit<Partial<PeerConfig>, 'address' | 'asn' | 'localAsn' | 'rrClient'>, now: number): void {
    const peer = this.peer(peerId);
    const importChanged = 'importPolicy' in changes && changes.importPolicy !== peer.cfg.importPolicy;
    peer.cfg = { ...peer.cfg, ...changes };
    if ('allowOwnAs' in changes) {
      peer.elig = { ...peer.elig, allowOwnAs: peer.cfg.allowOwnAs ?? 0 };
      this.clearBaseCache();
    }
    const honourChanged = 'honourGracefulShutdown' in changes;
    if (honourChanged) this.clearBaseCache();
    if (importChanged || 'allowOwnAs' in changes || honourChanged) this.softReconfigure(peerId, now);
    const session = peer.session;
    if (session === undefined || peer.group === undefined || this.groupKey(peer, session) === peer.group.key) return;
    const carried = this.leaveGroup(peer, now);
    this.joinGroup(peer, session, now, carried);
  }

  /**
   * Becomes a route reflector with this cluster ID, changes it, or (undefined)
   * stops reflecting, without touching any session: every peer's routes are
   * re-checked against the new cluster ID (CLUSTER_LIST loop detection), and
   * every established peer moves to an update group with the new export
   * rules and is sent only the difference. Which peers are clients stays a
   * per-peer setting (`rrClient`, fixed: re-add a peer to change it).
   */
  setClusterId(clusterId: string | undefined, now: number): void {
    const next = clusterId !== undefined ? parseQuad(clusterId, 'clusterId') : undefined;
    if (next?.toString() === this.clusterIdAddr?.toString()) return;
    this.clusterIdAddr = next;
    for (const peer of this.peers.values()) peer.elig = { ...peer.elig, clusterId: next };
    this.clearBaseCache();
    for (const id of this.peers.keys()) this.softReconfigure(id, now);
    for (const peer of this.peers.values()) {
      const session = peer.session;
      if (session === undefined || peer.group === undefined || this.groupKey(peer, session) === peer.group.key) continue;
      const carried = this.leaveGroup(peer, now);
      this.joinGroup(peer, session, now, carried);
    }
  }

  private joinGroup(peer: PeerState, session: SessionInfo, now: number, carried?: Resync): void {
    const peerId = peer.source.id;
    const key = this.groupKey(peer, session);
    let g = this.groups.get(key);
    if (g === undefined) {
      const c = peer.cfg;
      g = new UpdateGroup(
        {
          key,
          ctx: session.ctx,
          families: session.families,
          settings: this.exportSettings(peer),
          policy: c.exportPolicy,
          gracefulShutdown: c.gracefulShutdown ?? false,
          peerRef: peer.ref,
          coalesce: this.coalesce,
        },
        this.store,
        now,
      );
      this.groups.set(key, g);
    }
    g.join(peerId, now, carried);
    peer.group = g;
    this.touchOwnRoutes(peer, g, now);
  }

  /** The export rules' view of a peer (everything but the group's members). */
  private exportSettings(peer: PeerState): Omit<ExportSettings, 'members'> {
    const c = peer.cfg;
    return {
      type: peer.source.type,
      peerAsn: c.asn,
      localAsn: peer.ref.localAsn,
      routerId: this.opts.routerId,
      clusterId: this.clusterIdAddr,
      rrClient: c.rrClient ?? false,
      nextHopSelf: c.nextHopSelf ?? false,
      keepNextHop: c.keepNextHop ?? false,
      sendMed: c.sendMed ?? false,
      defaultLocalPref: this.opts.defaultLocalPref ?? 100,
      localAddressV4: c.localAddressV4,
      localAddressV6: c.localAddressV6,
      linkLocalV6: c.linkLocalV6,
      longLived: peer.session?.longLived ?? false,
    };
  }

  /**
   * The session went down. Families in `gracefulFamilies` keep their routes
   * marked stale (graceful restart, purge later with purgeStale); the rest are withdrawn.
   */
  peerDown(peerId: string, now: number, opts: { gracefulFamilies?: readonly (4 | 6)[] } = {}): void {
    const peer = this.peer(peerId);
    if (peer.group !== undefined) this.leaveGroup(peer, now);
    peer.session = undefined;
    for (const fam of [4, 6] as const) {
      if (opts.gracefulFamilies?.includes(fam)) this.markStale(peerId, fam);
      else this.dropRoutes(peer, fam, () => true, now);
    }
  }

  /** ROUTE-REFRESH from the peer: re-send its Adj-RIB-Out for `family` (default: every family). */
  routeRefresh(peerId: string, now: number, family?: 4 | 6): void {
    this.peer(peerId).group?.refresh(peerId, now, family);
  }

  /** Graceful restart: mark every route of `family` from the peer stale. */
  markStale(peerId: string, family: 4 | 6): void {
    this.peer(peerId).adjIn.markStale(family);
  }

  /**
   * RFC 9494: the peer's stale routes of `family` become long-lived stale.
   * Each gets LLGR_STALE, as if received with it (import policy runs again on
   * it, and best-path selection then prefers any route without it); a route
   * carrying NO_LLGR (as received or after import policy) is withdrawn.
   * Returns how many were kept and dropped.
   */
  longLivedStale(peerId: string, family: 4 | 6, now: number): { kept: number; dropped: number } {
    const peer = this.peer(peerId);
    let kept = 0;
    let dropped = 0;
    const tagged = new Map<AttrSet, AttrSet>();
    for (const k of peer.adjIn.keysOf(family, (v) => v.stale)) {
      const { key, pathId } = splitInKey(k);
      const old = peer.adjIn.get(k)!;
      if (carriesNoLlgr(old.pre.attrs) || (old.post !== null && carriesNoLlgr(old.post.attrs))) {
        this.withdrawIn(peer, key, pathId, now);
        dropped++;
        continue;
      }
      let pre = tagged.get(old.pre);
      if (pre === undefined) tagged.set(old.pre, (pre = this.store.lookupOrCreate(withLlgrStale(old.pre.attrs))));
      kept++;
      if (pre === old.pre) continue;
      this.store.retain(pre);
      const post = this.evaluateImport(peer, key, pre);
      const r = peer.adjIn.set(k, old.pathId, old.addPath, pre, post, true);
      this.releaseIn(old);
      this.applyToLoc(key, post !== null ? r : null, peer.source, old.pathId, now);
    }
    for (const set of tagged.values()) this.store.dropIfUnused(set);
    this.clearBaseCache();
    return { kept, dropped };
  }

  /** Graceful restart finished (End-of-RIB or timer): withdraw routes still stale. */
  purgeStale(peerId: string, family: 4 | 6, now: number): number {
    return this.dropRoutes(this.peer(peerId), family, (v) => v.stale, now);
  }

  /** Replaces the import policy and re-runs import from the pre-policy Adj-RIB-In. */
  setImportPolicy(peerId: string, policy: ImportPolicy | undefined, now: number): void {
    const peer = this.peer(peerId);
    peer.cfg = { ...peer.cfg, importPolicy: policy };
    this.softReconfigure(peerId, now);
  }

  /** Replaces the export policy (the peer changes update group and is sent the difference). */
  setExportPolicy(peerId: string, policy: ExportPolicy | undefined, now: number): void {
    this.reconfigurePeer(peerId, { exportPolicy: policy }, now);
  }

  /** Soft reconfiguration inbound: re-evaluate every stored route against the current import policy. */
  softReconfigure(peerId: string, now: number): void {
    const peer = this.peer(peerId);
    peer.adjIn.forEach((r, k) => {
      const key = splitInKey(k).key;
      const post = this.evaluateImport(peer, key, r.pre);
      if (post === r.post) {
        if (post !== null) this.store.release(post);
        return;
      }
      const next = peer.adjIn.set(k, r.pathId, r.addPath, r.pre, post, r.stale);
      if (r.post !== null) this.store.release(r.post);
      this.applyToLoc(key, post !== null ? next : null, peer.source, r.pathId, now);
    });
    this.clearBaseCache();
  }

  /** Forgets the import-base cache, dropping a stripped set nobody took. */
  private clearBaseCache(): void {
    const c = this.baseCache;
    if (c.base !== null && c.base !== c.pre) this.store.dropIfUnused(c.base);
    c.pre = undefined;
    c.peer = undefined;
    c.base = null;
  }

  // ------------------------------------------------------------ routes in

  /**
   * Applies one decoded UPDATE from `peerId`. Reads the decoder's prefix keys
   * (`nlriKeys` and friends): a received route builds no Prefix unless an
   * import policy reads its prefix. A message built by hand has none; its
   * Prefix lists are keyed here.
   */
  ingest(peerId: string, update: UpdateMessage, now: number): void {
    const peer = this.peer(peerId);
    this.withdrawAll(peer, update.withdrawnKeys ?? update.withdrawn.map(keyOf), update.withdrawnPathIds, now);
    const a = update.attributes;
    const un = a.mpUnreach;
    if (un !== undefined) this.withdrawAll(peer, un.keys ?? un.withdrawn.map(keyOf), un.pathIds, now);
    const nlri = update.nlriKeys ?? update.nlri.map(keyOf);
    if (nlri.length > 0) {
      // Interning ignores MP_UNREACH and MP_REACH's NLRI; a plain IPv4 UPDATE has neither, and needs no copy.
      const pre = this.store.lookupOrCreate(a.mpReach === undefined && a.mpUnreach === undefined ? a : { ...a, mpReach: undefined, mpUnreach: undefined });
      this.importAll(peer, 4, nlri, update.nlriPathIds, pre, now);
      this.store.dropIfUnused(pre);
    }
    const mp = a.mpReach;
    const mpKeys = mp === undefined ? undefined : (mp.keys ?? mp.nlri.map(keyOf));
    if (mp !== undefined && mpKeys !== undefined && mpKeys.length > 0) {
      // IPv4 in MP_REACH: keep its next hop in NEXT_HOP, where IPv4 routes carry it.
      const family = familyOfAfi(mp.afi) === 4 ? 4 : 6;
      const attrs: PathAttributes =
        family === 4 ? { ...a, nextHop: mp.nextHops[0], mpReach: undefined, mpUnreach: undefined } : { ...a, nextHop: undefined, mpUnreach: undefined };
      const pre = this.store.lookupOrCreate(attrs);
      this.importAll(peer, family, mpKeys, mp.pathIds, pre, now);
      this.store.dropIfUnused(pre);
    }
    this.clearBaseCache();
  }

  private withdrawAll(peer: PeerState, keys: readonly PrefixKey[], ids: readonly number[] | undefined, now: number): void {
    for (let from = 0; from < keys.length; from += WARM_RUN) {
      const to = Math.min(keys.length, from + WARM_RUN);
      this.warm(peer, keys, ids, from, to);
      for (let i = from; i < to; i++) this.withdrawIn(peer, keys[i], ids?.[i], now);
    }
  }

  private importAll(peer: PeerState, family: 4 | 6, keys: readonly PrefixKey[], ids: readonly number[] | undefined, pre: AttrSet, now: number): void {
    for (let from = 0; from < keys.length; from += WARM_RUN) {
      const to = Math.min(keys.length, from + WARM_RUN);
      this.warm(peer, keys, ids, from, to);
      for (let i = from; i < to; i++) this.importRoute(peer, keys[i], family, ids?.[i], pre, now);
    }
  }

  /**
   * Before a run of routes: the Adj-RIB-In's and Loc-RIB's slots for their
   * keys loaded together (KeyTable.warm), so each route's lookups find them
   * in cache instead of waiting on memory one after another.
   */
  private warm(peer: PeerState, keys: readonly PrefixKey[], ids: readonly number[] | undefined, from: number, to: number): void {
    if (to - from < 8) return;
    if (ids === undefined) peer.adjIn.warm(keys, from, to);
    this.loc.warm(keys, from, to);
  }

  private importRoute(peer: PeerState, key: PrefixKey, family: 4 | 6, pathId: number | undefined, pre: AttrSet, now: number): void {
    const k = inKey(key, pathId);
    const old = peer.adjIn.get(k);
    if (old !== undefined && old.pre === pre) {
      if (old.stale) peer.adjIn.set(k, old.pathId, old.addPath, old.pre, old.post, false);
      return;
    }
    if (old === undefined) {
      const cap = peer.cfg.maxRoutes?.[family];
      if (cap !== undefined && peer.adjIn.receivedOf(family) >= cap) {
        peer.refused[family === 4 ? 0 : 1]++;
        return;
      }
    }
    this.store.retain(pre);
    const post = this.evaluateImport(peer, key, pre);
    const r = peer.adjIn.set(k, pathId ?? 0, pathId !== undefined, pre, post, false);
    if (old !== undefined) this.releaseIn(old);
    this.applyToLoc(key, post !== null ? r : null, peer.source, pathId ?? 0, now);
  }

  private withdrawIn(peer: PeerState, key: PrefixKey, pathId: number | undefined, now: number): void {
    const k = inKey(key, pathId);
    const old = peer.adjIn.get(k);
    if (old === undefined) return;
    peer.adjIn.delete(k);
    this.releaseIn(old);
    this.applyToLoc(key, null, peer.source, pathId ?? 0, now);
  }

  private releaseIn(r: InVariant): void {
    this.store.release(r.pre);
    if (r.post !== null) this.store.release(r.post);
  }

  private dropRoutes(peer: PeerState, family: 4 | 6, which: (v: InVariant) => boolean, now: number): number {
    const gone = peer.adjIn.keysOf(family, which);
    for (const k of gone) {
      const { key, pathId } = splitInKey(k);
      this.withdrawIn(peer, key, pathId, now);
    }
    return gone.length;
  }

  /** The attributes import starts from: null when ineligible; for eBGP without a received LOCAL_PREF. Cached per `pre`. */
  private importBase(peer: PeerState, pre: AttrSet): AttrSet | null {
    const c = this.baseCache;
    if (c.pre === pre && c.peer === peer && (c.base === null || c.base.live)) return c.base;
    this.clearBaseCache();
    let base: AttrSet | null = pre;
    if (refusalReason(pre.attrs, peer.elig) !== undefined) base = null;
    else if (peer.cfg.honourGracefulShutdown !== false && carriesGracefulShutdown(pre.attrs)) {
      if (pre.attrs.localPref !== 0) base = this.store.lookupOrCreate({ ...pre.attrs, localPref: 0 });
    } else if (peer.source.type === 'ebgp' && pre.attrs.localPref !== undefined) base = this.store.lookupOrCreate({ ...pre.attrs, localPref: undefined });
    c.pre = pre;
    c.peer = peer;
    c.base = base;
    return base;
  }

  /** Eligibility, then import policy. The result carries one reference for the caller. */
  private evaluateImport(peer: PeerState, key: PrefixKey, pre: AttrSet): AttrSet | null {
    const base = this.importBase(peer, pre);
    if (base === null) return null;
    const policy = peer.cfg.importPolicy;
    if (policy === undefined) return this.store.retain(base);
    const res = policy(new KeyedRoute(key, base.attrs, policySource(peer.source), linkIface(peer.source, base.attrs)), { peer: peer.ref, direction: 'import' });
    if (res.verdict === 'reject') return null;
    return res.attrs === base.attrs ? this.store.retain(base) : this.store.acquire(res.attrs);
  }

  private applyToLoc(key: PrefixKey, path: Path | null, source: PeerSource | typeof LOCAL_SOURCE, pathId: number, now: number): void {
    const change = path !== null ? this.loc.upsert(key, path) : this.loc.remove(key, source, pathId);
    this.changed(key, change, now);
  }

  private changed(key: PrefixKey, change: Change, now: number): void {
    if (change === 'none') return;
    if (change === 'best') for (const g of this.groups.values()) g.touch(key, now);
    const cb = this.opts.onLocChange;
    if (cb !== undefined) cb(prefixFromKey(key), this.loc.touchedMultipath(), this.loc.touchedName());
  }

  // ------------------------------------------------------------ local routes

  /**
   * Originates `prefix` with `attrs` (replacing an earlier origination of it).
   * `late`: the attributes as sent, `attrs` plus communities added after the
   * export policy (Path.late): the policy sees `attrs` only. `iface`, the
   * interface the route goes out of (never sent), is what export policies see
   * as `PolicyRoute.iface`.
   */
  originate(prefix: Prefix, attrs: PathAttributes | AttrSet, now: number, late?: PathAttributes | AttrSet, iface?: string): void {
    const set = this.store.lookupOrCreate(attrs instanceof AttrSet ? attrs.attrs : attrs);
    const lateSet = late === undefined ? undefined : this.store.lookupOrCreate(late instanceof AttrSet ? late.attrs : late);
    this.originateKey(keyOf(prefix), set, lateSet === set ? undefined : lateSet, now, iface);
    this.store.dropIfUnused(set);
    if (lateSet !== undefined) this.store.dropIfUnused(lateSet);
  }

  /** Originates many prefixes with one attribute set, interned once. */
  originateMany(prefixes: Iterable<Prefix>, attrs: PathAttributes | AttrSet, now: number): void {
    const set = this.store.lookupOrCreate(attrs instanceof AttrSet ? attrs.attrs : attrs);
    for (const p of prefixes) this.originateKey(keyOf(p), set, undefined, now);
    this.store.dropIfUnused(set);
  }

  withdraw(prefix: Prefix, now: number): void {
    const key = keyOf(prefix);
    const old = this.loc.find(key, LOCAL_SOURCE, 0);
    if (old === undefined) return;
    this.applyToLoc(key, null, LOCAL_SOURCE, 0, now);
    this.releaseLocal(old);
  }

  private originateKey(key: PrefixKey, set: AttrSet, late: AttrSet | undefined, now: number, iface?: string): void {
    let byLate = this.localPaths.get(set);
    if (byLate === undefined) this.localPaths.set(set, (byLate = new Map()));
    let byIface = byLate.get(late);
    if (byIface === undefined) byLate.set(late, (byIface = new Map()));
    let lp = byIface.get(iface ?? '');
    if (lp === undefined) {
      const path: Path = { source: LOCAL_SOURCE, attrs: set, pathId: 0, ...(late !== undefined ? { late } : {}), ...(iface !== undefined ? { iface } : {}) };
      byIface.set(iface ?? '', (lp = { path, count: 0 }));
    }
    const change = this.loc.upsert(key, lp.path);
    const old = this.loc.replaced;
    if (old === lp.path) return; // already originated with these attributes
    lp.count++;
    this.store.retain(set);
    if (late !== undefined) this.store.retain(late);
    if (old !== undefined) this.releaseLocal(old);
    this.changed(key, change, now);
  }

  private releaseLocal(path: Path): void {
    const byLate = this.localPaths.get(path.attrs)!;
    const byIface = byLate.get(path.late)!;
    const lp = byIface.get(path.iface ?? '')!;
    if (--lp.count === 0) {
      byIface.delete(path.iface ?? '');
      if (byIface.size === 0) byLate.delete(path.late);
      if (byLate.size === 0) this.localPaths.delete(path.attrs);
    }
    this.store.release(path.attrs);
    if (path.late !== undefined) this.store.release(path.late);
  }

  // ------------------------------------------------------------ output

  /** Plans (without packing) every group whose coalescing window has closed. */
  planDue(now: number, canSend?: (peerId: string) => boolean): GroupPlan[] {
    const plans: GroupPlan[] = [];
    for (const g of this.groups.values()) if (g.isDue(now)) plans.push(g.plan(this.view, canSend));
    return plans;
  }

  /**
   * Plans and packs every due group: the messages to write to each peer, in
   * order. `canSend(peer)` false (its socket is full): that peer gets nothing
   * now and is owed the changed prefixes, sent as they then are once
   * `peerWritable` says it can take more (see UpdateGroup `behind`).
   */
  flushDue(now: number, canSend?: (peerId: string) => boolean): Send[] {
    return this.planDue(now, canSend).flatMap((p) => p.group.pack(p, this.packer));
  }

  /** The peer's socket drained: what it is owed goes out at the next flush. */
  peerWritable(peerId: string, now: number): void {
    this.peers.get(peerId)?.group?.wake(peerId, now);
  }

  /** The earliest time a group wants flushing, or undefined when nothing is pending. */
  nextDeadline(): number | undefined {
    let d: number | undefined;
    for (const g of this.groups.values()) {
      const x = g.deadline();
      if (x !== undefined && (d === undefined || x < d)) d = x;
    }
    return d;
  }

  // ------------------------------------------------------------ queries

  best(prefix: Prefix): Path | undefined {
    return this.loc.best(keyOf(prefix));
  }

  /** Calls `fn` with every Loc-RIB prefix and its ECMP set (best first), e.g. to re-program a FIB after a policy change. */
  forEachMultipath(fn: (prefix: Prefix, multipath: readonly Path[]) => void): void {
    for (const key of this.loc.keys()) fn(prefixFromKey(key), this.loc.multipath(key));
  }

  multipath(prefix: Prefix): readonly Path[] {
    return this.loc.multipath(keyOf(prefix));
  }

  candidates(prefix: Prefix): readonly Path[] {
    return this.loc.candidates(keyOf(prefix));
  }

  /** Every candidate of `prefix` with the best-path step that decided for or against it. */
  explainBest(prefix: Prefix): CandidateOutcome[] {
    return explainSelection(this.loc.candidates(keyOf(prefix)), this.bestOpts);
  }

  /**
   * The best path of `prefix` toward `peerId` as its export policy sees it:
   * a refusal of the export rules with its reason, or the route's own
   * attributes (the policy runs before the session's rules), and `send`,
   * which turns what the policy returns into what is sent. For explain;
   * the update group computes the same.
   */
  exportPreview(peerId: string, prefix: Prefix): ExportPreview {
    const peer = this.peer(peerId);
    const best = this.loc.best(keyOf(prefix));
    const established = peer.group !== undefined;
    const base = { peer: peer.ref, established };
    if (best === undefined) return { ...base, refusal: 'no route in the Loc-RIB' };
    if (peer.group !== undefined && !peer.group.families.has(prefix.family))
      return {
        ...base,
        best,
        refusal: `IPv${prefix.family} is not sent on this session (not negotiated, or no IPv${prefix.family} next hop)`,
      };
    const settings = { ...this.exportSettings(peer), members: peer.group?.memberIds() ?? [peerId] };
    const refusal = exportRefusal(best, settings);
    if (refusal !== undefined) return { ...base, best, refusal };
    return {
      ...base,
      best,
      attrs: best.attrs.attrs,
      send: (policyAttrs, decided) => sentAttrs(best, decided === true ? policyAttrs : withLate(best, policyAttrs), prefix.family, settings),
    };
  }

  get locRibSize(): number {
    return this.loc.size;
  }

  /** Adj-RIB-In sizes without listing it (O(1)): routes received (pre-policy) and accepted (post-policy), in all or one family. */
  adjRibInCounts(peerId: string, family?: 4 | 6): { received: number; accepted: number } {
    const adjIn = this.peer(peerId).adjIn;
    if (family !== undefined) return adjIn.countsOf(family);
    return { received: adjIn.size, accepted: adjIn.acceptedSize };
  }

  /** New routes refused by the peer's `maxRoutes` cap in `family` since its session came up. */
  refusedCount(peerId: string, family: 4 | 6): number {
    return this.peer(peerId).refused[family === 4 ? 0 : 1];
  }

  adjRibIn(peerId: string, which: 'pre' | 'post'): InRouteView[] {
    // Canonical order (prefix keys as sortKeys orders them, then path id), whatever the table layout.
    const adjIn = this.peer(peerId).adjIn;
    const byKey = new Map<PrefixKey, { k: InKey; pathId: number }[]>();
    adjIn.forEach((_, k) => {
      const { key, pathId } = splitInKey(k);
      let l = byKey.get(key);
      if (l === undefined) byKey.set(key, (l = []));
      l.push({ k, pathId: pathId ?? 0 });
    });
    const out: InRouteView[] = [];
    for (const key of sortKeys([...byKey.keys()])) {
      const prefix = prefixFromKey(key);
      for (const e of byKey.get(key)!.sort((a, b) => a.pathId - b.pathId)) {
        const r = adjIn.get(e.k)!;
        const set = which === 'pre' ? r.pre : r.post;
        if (set !== null) out.push({ prefix, pathId: r.addPath ? r.pathId : undefined, attrs: set.attrs, stale: r.stale });
      }
    }
    return out;
  }

  /** A copy of what the peer's update group has planned for it. */
  adjRibOut(peerId: string): ReadonlyMap<PrefixKey, AttrSet> | undefined {
    return this.peer(peerId).group?.adjRibOut;
  }

  groupOf(peerId: string): UpdateGroup | undefined {
    return this.peer(peerId).group;
  }

  get groupCount(): number {
    return this.groups.size;
  }

  // ------------------------------------------------------------ internals

  private peer(id: string): PeerState {
    const p = this.peers.get(id);
    if (p === undefined) throw new Error(`unknown peer ${JSON.stringify(id)}`);
    return p;
  }

  /** Returns what the peer holds and is still owed, for the group it joins next. */
  private leaveGroup(peer: PeerState, now: number): Resync {
    const g = peer.group!;
    const carried = g.leave(peer.source.id);
    peer.group = undefined;
    if (g.size === 0) {
      g.dispose();
      this.groups.delete(g.key);
    } else this.touchOwnRoutes(peer, g, now);
    return carried;
  }

  /** eBGP split horizon depends on group membership: re-evaluate the routes this peer sent us. */
  private touchOwnRoutes(peer: PeerState, g: UpdateGroup, now: number): void {
    if (peer.source.type !== 'ebgp') return;
    peer.adjIn.forEach((_, k) => g.touch(splitInKey(k).key, now));
  }

  private policyId(p: object | undefined): number {
    if (p === undefined) return 0;
    let id = this.policyIds.get(p);
    if (id === undefined) this.policyIds.set(p, (id = this.nextPolicyId++));
    return id;
  }

  private groupKey(peer: PeerState, s: SessionInfo): string {
    const c = peer.cfg;
    return JSON.stringify([
      s.ctx.asn4,
      s.ctx.extendedMessage,
      s.ctx.addPathV4,
      s.ctx.addPathV6,
      [...s.families].sort(),
      peer.source.type,
      c.asn,
      peer.ref.localAsn,
      c.rrClient ?? false,
      c.nextHopSelf ?? false,
      c.keepNextHop ?? false,
      c.sendMed ?? false,
      c.localAddressV4?.toString(),
      c.localAddressV6?.toString(),
      c.linkLocalV6?.toString(),
      this.policyId(c.exportPolicy),
      this.clusterIdAddr?.toString(),
      c.gracefulShutdown ?? false,
      s.longLived ?? false,
    ]);
  }
}

function parseQuad(text: string, what: string): Address {
  let a: Address;
  try {
    a = Address.parse(text);
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
  if (a.family !== 4) throw new Error(`${what}: ${JSON.stringify(text)} is not a dotted-quad identifier`);
  return a;
}
