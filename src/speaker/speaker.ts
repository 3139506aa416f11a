/**
 * BgpSpeaker: the public face of tsbgp. Wiring only — the session layer runs
 * the FSMs and sockets, the RIB decides routes and packs UPDATEs, the policy
 * engine filters; this class connects their hooks, owns the flush timer and
 * turns state into status snapshots and events.
 */
import { EventEmitter } from 'eventemitter3';
import { Address, Prefix } from '../net/index.js';
import type { PolicyConfigDef, PolicyDef } from '../policy/index.js';
import { networkInterfaces } from 'node:os';
import { Rib, type PeerConfig, policyRoute, prefixFromKey, type SessionLink } from '../rib/index.js';
import {
  realScheduler,
  joinUpdates,
  type UpdateRun,
  canonicalRemote,
  Listener,
  type Negotiated,
  describeReason,
  Peer,
  type PeerHooks,
  type DownReason,
  type StateName,
  hardResetInner,
} from '../session/index.js';
import {
  CeaseSubcode,
  ErrorCode,
  familyName,
  familyOfAfi,
  UNICAST,
  unicastFamily,
  describeNotification,
  Notify,
  shutdownNotification,
  type AfiSafi,
  type NotificationMessage,
  type RouteRefreshMessage,
  type UpdateMessage,
} from '../wire/index.js';
import { AttributeCache, describeRoute, splitLate } from './attributes.js';
import { parsePeerKey, peerId, sessionKey, toSessionConfig, validatePeerOptions } from './peer-config.js';
import { PolicyRegistry } from './policies.js';
import { SelectionDeferral } from './deferral.js';
import { SpeakerBfd, bfdTimers } from './bfd.js';
import { transportHint } from './transport-hint.js';
import { sessionLink } from './session-link.js';
import { DrainSet } from './drain.js';
import { blockCaps, limitState, PrefixLimits } from './max-prefix.js';
import { PeerHealth } from './peer-status.js';
import { SpeakerKernel, type KernelRouteView, type KernelStaticRoute, type SpeakerKernelApi } from './kernel.js';
import type { KernelStatus, KernelEntry, KernelRule, LearnedKernelRoute } from '../kernel/index.js';
import type {
  AdvertisedRoute,
  FamilyName,
  ImportedRoute,
  PeerOptions,
  PeerState,
  PeerStatus,
  PeerExplanation,
  ReceivedRoute,
  FamilyCounters,
  OriginateOptions,
  RouteAttributes,
  RouteExplanation,
  SpeakerApi,
  SpeakerBfdApi,
  SpeakerDrainApi,
  SpeakerEvents,
  SpeakerExplainApi,
  SpeakerPolicyApi,
  SpeakerReflectorApi,
  SpeakerOptions,
  SpeakerScheduler,
} from './types.js';

export type * from './types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type LastError = NonNullable<PeerStatus['lastError']>;

/** One configured peer: its options, its current session shell and what status reports. */
interface PeerEntry {
  /** The key: the address, with the port when not 179 (peer-config.ts `peerId`). */
  readonly id: string;
  /** The peer's address, canonical. */
  readonly address: string;
  opts: PeerOptions;
  peer: Peer;
  /** Registered in the RIB with this AS (peers with asn 'any' register at their first session). */
  ribAsn?: number;
  state: PeerState;
  since: Date;
  negotiated?: Negotiated;
  lastError?: LastError;
  /** Counters of earlier session shells of this peer (a reset builds a new one). */
  base: MessageCounts;
  /** A session has been up since we started: our restart (R bit) is over. */
  everUp: boolean;
  /** Unicast families whose End-of-RIB the peer sent on the current session. */
  eorIn: readonly FamilyName[];
  /** Max-prefix bookkeeping (src/speaker/max-prefix.ts). */
  limits: PrefixLimits;
  /** Since when up or down, and why down (src/speaker/peer-status.ts). */
  health: PeerHealth;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** RFC 9003 layout (length byte, UTF-8) for any Cease subcode; 2 and 4 are the standard ones. */
function ceaseNotification(subcode: keyof typeof CeaseSubcode, message?: string): NotificationMessage {
  if (subcode === 'ADMINISTRATIVE_SHUTDOWN' || subcode === 'ADMINISTRATIVE_RESET') return shutdownNotification(CeaseSubcode[subcode], message ?? '');
  return Notify.cease(subcode, message ? shutdownNotification(CeaseSubcode.ADMINISTRATIVE_SHUTDOWN, message).data : undefined);
}

/** The shutdown communication of a Cease, read leniently for any subcode. */
function communicationOf(m: NotificationMessage): string | undefined {
  if (m.code !== ErrorCode.CEASE || m.data.length < 2) return undefined;
  const len = m.data[0];
  if (len === 0 || 1 + len > m.data.length) return undefined;
  try {
    return utf8.decode(m.data.subarray(1, 1 + len));
  } catch {
    return undefined;
  }
}

interface MessageCounts {
  readonly messagesIn: number;
  readonly messagesOut: number;
  readonly updatesIn: number;
  readonly updatesOut: number;
}
/** What a peer entry starts with, shared until a reset or an End-of-RIB gives it its own (a reflector has hundreds of idle peers). */
const NO_MESSAGES: MessageCounts = Object.freeze({ messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 });
const NO_FAMILIES: readonly FamilyName[] = Object.freeze([]);

const FAMILY_NUMBERS: readonly (readonly (4 | 6)[])[] = [[], [4], [6], [4, 6], [6, 4]].map((l) => Object.freeze(l as (4 | 6)[]));

/** A list of unicast families as one shared frozen list (each session's RIB view holds two; a reflector has hundreds). */
function familyNumbers(list: readonly (4 | 6)[]): readonly (4 | 6)[] {
  return FAMILY_NUMBERS.find((l) => l.length === list.length && l.every((f, i) => f === list[i])) ?? list;
}

/** The speaker's side of every session shell's hooks (`BgpSpeaker.sessionSide`): `shell` is the shell whose hook ran. */
interface SessionSide {
  drain(e: PeerEntry, shell: Peer | undefined): void;
  stateChange(e: PeerEntry, shell: Peer | undefined, from: StateName): void;
  up(e: PeerEntry, shell: Peer | undefined, n: Negotiated): void;
  down(e: PeerEntry, shell: Peer | undefined, reason: DownReason): void;
  update(e: PeerEntry, shell: Peer | undefined, m: UpdateMessage): void;
  routeRefresh(e: PeerEntry, shell: Peer | undefined, m: RouteRefreshMessage): void;
  rib(e: PeerEntry, shell: Peer | undefined, a: Parameters<NonNullable<PeerHooks['onRib']>>[0]): void;
  endOfRib(e: PeerEntry, shell: Peer | undefined, f: AfiSafi): void;
  notification(e: PeerEntry, shell: Peer | undefined, direction: 'sent' | 'received', m: NotificationMessage): void;
  log(line: string): void;
}

/**
 * One session shell's hooks: its peer entry and the shell, the work in the
 * speaker's `SessionSide` (methods on the prototype, not closures per shell).
 */
class SessionHooks implements PeerHooks {
  /** The shell these hooks belong to, set once it is made. */
  peer: Peer | undefined;
  constructor(
    private readonly side: SessionSide,
    private readonly e: PeerEntry,
  ) {}
  onDrain(): void {
    this.side.drain(this.e, this.peer);
  }
  onStateChange(from: StateName): void {
    this.side.stateChange(this.e, this.peer, from);
  }
  onUp(n: Negotiated): void {
    this.side.up(this.e, this.peer, n);
  }
  onDown(reason: DownReason): void {
    this.side.down(this.e, this.peer, reason);
  }
  onUpdate(m: UpdateMessage): void {
    this.side.update(this.e, this.peer, m);
  }
  onRouteRefresh(m: RouteRefreshMessage): void {
    this.side.routeRefresh(this.e, this.peer, m);
  }
  onRib(a: Parameters<NonNullable<PeerHooks['onRib']>>[0]): void {
    this.side.rib(this.e, this.peer, a);
  }
  onEndOfRib(f: AfiSafi): void {
    this.side.endOfRib(this.e, this.peer, f);
  }
  onNotification(direction: 'sent' | 'received', m: NotificationMessage): void {
    this.side.notification(this.e, this.peer, direction, m);
  }
  onConnectError(err: Error): void {
    if (this.e.peer === this.peer) this.e.health.connectFailed(err, new Date());
  }
  onAttemptFailed(reason: DownReason): void {
    if (this.e.peer === this.peer) this.e.health.attemptFailed(reason, new Date());
  }
  log(line: string): void {
    this.side.log(line);
  }
}

export class BgpSpeaker
  extends EventEmitter<SpeakerEvents>
  implements SpeakerApi, SpeakerBfdApi, SpeakerDrainApi, SpeakerPolicyApi, SpeakerExplainApi, SpeakerReflectorApi, SpeakerKernelApi
{
  private readonly rib: Rib;
  private readonly policies = new PolicyRegistry();
  private readonly attrCache = new AttributeCache();
  private readonly peers = new Map<string, PeerEntry>();
  private readonly scheduler: SpeakerScheduler;
  private listener?: Listener;
  private started = false;
  private stopped = false;
  private flushTimer: unknown;
  private flushAt: number | undefined;
  /** Restarting (RFC 4724 §4.1): advertisements wait for peers' End-of-RIB or the deferral timer. */
  private deferral: SelectionDeferral | undefined;
  private deferralTimer: unknown;
  private readonly bfd: SpeakerBfd;
  /** Loc-RIB → kernel routing table (options.kernel). */
  private readonly kernel: SpeakerKernel | undefined;
  /** RFC 8326: peers we send GRACEFUL_SHUTDOWN to (src/speaker/drain.ts). */
  private readonly drains = new DrainSet();

  constructor(readonly options: SpeakerOptions) {
    super();
    this.bfd = new SpeakerBfd(options.bfd, {
      // BFD runs per address: its failure takes down every session to that address.
      onFailure: (address) => {
        for (const e of this.peers.values()) if (e.address === address) e.peer.automaticStop('BFD_DOWN');
      },
      onStateChange: (id, st, from) => this.emit('bfdStateChange', id, st, from),
      log: (level, msg) => this.log(level, msg),
    });
    const asn = options.asn;
    if (!Number.isInteger(asn) || asn < 1 || asn > 0xffffffff) throw new RangeError(`speaker asn must be 1..4294967295, got ${asn}`);
    this.scheduler = options.scheduler ?? realScheduler;
    const defer = options.selectionDeferralTime ?? 120;
    if (!(defer >= 0 && defer <= 3600)) throw new RangeError(`selectionDeferralTime must be 0..3600 seconds, got ${defer}`);
    if (options.restarting) this.deferral = new SelectionDeferral();
    // The kernel side first: the Rib is built with its hooks (it reads the Rib back only once the speaker runs).
    this.kernel = options.kernel
      ? new SpeakerKernel(
          options.kernel,
          this.policies,
          { asn, scheduler: this.scheduler, restartTime: defer, forEach: (fn) => this.rib.forEachMultipath(fn) },
          (l, m, f) => this.log(l, m, f),
        )
      : undefined;
    this.rib = new Rib({
      localAsn: asn,
      routerId: options.routerId,
      clusterId: options.clusterId,
      coalesce: { delayMs: options.coalesceMs ?? 5, maxDelayMs: options.maxDelayMs ?? 50 },
      ...(options.kernel && this.kernel ? { multipath: { maxPaths: options.kernel.ecmp ?? 16, relaxNeighborAs: false }, ...this.kernel.ribHooks() } : {}),
    });
  }

  // ------------------------------------------------------------ lifecycle

  /** Opens the listener (unless `listen: false`) and starts every configured peer. */
  async start(): Promise<void> {
    if (this.started) return;
    if (this.stopped) throw new Error('BgpSpeaker: a stopped speaker cannot be started again; create a new one');
    await this.kernel?.start(); // never throws: kernel trouble turns kernel programming off (kernelStatus says why)
    const l = this.options.listen;
    if (l !== false) {
      this.listener = new Listener({ addresses: l?.addresses, port: l?.port ?? 179, log: (line) => this.log('info', line) });
      for (const e of this.peers.values()) if (this.addressOwner(e.address) === e) this.listener.addPeer(e.address, e.peer, e.opts);
      await this.listener.listen();
    }
    // Peers configured before start: their BFD sessions run before their BGP sessions start.
    if ([...this.peers.values()].some((e) => bfdTimers(e.opts.bfd, `peer ${e.id}`) !== undefined)) await this.bfd.ready();
    this.started = true;
    if (this.deferral !== undefined) {
      const seconds = this.options.selectionDeferralTime ?? 120;
      this.deferralTimer = this.scheduler.setTimeout(() => this.endDeferral(`selection deferral timer (${seconds} s) expired`), seconds * 1000);
      this.checkDeferral();
    }
    for (const e of this.peers.values()) e.peer.start(e.opts.passive ?? false);
  }

  /**
   * Starts BFD (its worker thread and sockets) ahead of the peers that will use it, so that a
   * peer's BFD session runs from the moment the peer is added, not a worker start later (by when
   * BGP may be Established). Resolves once BFD runs or has failed (logged; the peers' BFD status
   * says Unavailable); never rejects. Idempotent.
   */
  startBfd(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.bfd.ready();
  }

  /** The port the listener is bound to (useful with `listen.port: 0`). */
  get port(): number | undefined {
    return this.listener?.ports[0];
  }

  async stop(opts: { message?: string; graceful?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // First, so that closing the sessions does not withdraw our routes from the kernel: they persist.
    await this.kernel?.stop();
    this.cancelFlush();
    if (this.deferralTimer !== undefined) this.scheduler.clearTimeout(this.deferralTimer);
    this.deferralTimer = undefined;
    const entries = [...this.peers.values()];
    for (const e of entries) {
      // Graceful: peers that negotiated the N bit (RFC 8538) get Cease / Administrative Reset, which
      // keeps our routes as stale there and says why; the others a TCP close without a NOTIFICATION
      // (RFC 4724 keeps routes only then). Not graceful: Administrative Shutdown (a Hard Reset on an
      // N-bit session: the routes go).
      if (opts.graceful && e.peer.negotiated?.gracefulNotification === true) e.peer.stop(ceaseNotification('ADMINISTRATIVE_RESET', opts.message));
      else if (opts.graceful) e.peer.dispose();
      else e.peer.stop(ceaseNotification('ADMINISTRATIVE_SHUTDOWN', opts.message));
    }
    await Promise.all(entries.map((e) => e.peer.closed()));
    for (const e of entries) e.peer.dispose();
    await this.listener?.close();
    await this.bfd.stop();
    this.cancelFlush();
  }

  // ------------------------------------------------------------ peers

  /**
   * Adds a peer. Its key (how the other methods name it) is its address; a
   * second peer at the same address on another port is keyed `address:port`
   * (`[address]:port` for IPv6).
   */
  addPeer(opts: PeerOptions): void {
    const address = parsePeerKey(opts.address).address;
    const same = this.findPeer(address, opts.port ?? 179);
    if (same) throw new Error(`peer ${same.id} is already configured (use updatePeer)`);
    const id = this.addressOwner(address) === undefined ? address : peerId(address, opts.port ?? 179);
    validatePeerOptions(opts, this.options.asn, this.options.routerId);
    const ebgp = opts.asn !== (opts.localAsn ?? this.options.asn);
    const importPolicy = this.policies.evaluator('import', opts.importPolicies ?? [], ebgp, `peer ${id} importPolicies`);
    const exportPolicy = this.policies.evaluator('export', opts.exportPolicies ?? [], ebgp, `peer ${id} exportPolicies`);
    const entry: PeerEntry = {
      id,
      address,
      opts,
      peer: undefined as unknown as Peer,
      state: 'Idle',
      since: new Date(),
      base: NO_MESSAGES,
      everUp: false,
      eorIn: NO_FAMILIES,
      limits: new PrefixLimits(opts.maxPrefixes, id),
      health: new PeerHealth(new Date()),
    };
    entry.peer = this.makePeer(entry);
    // First, so that a key the kernel refuses leaves nothing half added.
    const owner = this.addressOwner(address);
    if (owner === undefined) this.listener?.addPeer(address, entry.peer, opts);
    else this.log('info', `peer ${id}: connections from ${address} go to peer ${owner.id}, the first configured at that address; this one only connects out`);
    if (typeof opts.asn === 'number') {
      this.rib.addPeer(this.ribConfig(entry, opts.asn, importPolicy, exportPolicy));
      entry.ribAsn = opts.asn;
    }
    this.peers.set(id, entry);
    this.deferral?.addPeer(id);
    this.kernel?.addPeer(id);
    this.syncBfd(entry);
    if (this.started && !this.stopped) entry.peer.start(opts.passive ?? false);
  }

  /** Updates the peer at `opts.address` and `opts.port` (or, when only one peer has that address, that one, its port changing). */
  updatePeer(opts: PeerOptions): void {
    const address = parsePeerKey(opts.address).address;
    const at = [...this.peers.values()].filter((x) => x.address === address);
    const e = this.findPeer(address, opts.port ?? 179) ?? (at.length === 1 ? at[0] : undefined);
    if (!e) throw new Error(`peer ${peerId(opts.address, at.length > 1 ? (opts.port ?? 179) : undefined)} is not configured (use addPeer)`);
    const id = e.id;
    validatePeerOptions(opts, this.options.asn, this.options.routerId);
    const asn = typeof opts.asn === 'number' ? opts.asn : e.ribAsn;
    const ebgp = asn !== (opts.localAsn ?? this.options.asn);
    const importPolicy = this.policies.evaluator('import', opts.importPolicies ?? [], ebgp, `peer ${id} importPolicies`);
    const exportPolicy = this.policies.evaluator('export', opts.exportPolicies ?? [], ebgp, `peer ${id} exportPolicies`);
    const now = this.scheduler.now();
    if (sessionKey(opts) !== sessionKey(e.opts)) {
      this.log('info', `peer ${id}: session settings changed, resetting the session`);
      e.health.notification('sent', `${describeNotification(ErrorCode.CEASE, CeaseSubcode.OTHER_CONFIGURATION_CHANGE)} (settings changed)`, new Date());
      const old = e.peer;
      old.stop(ceaseNotification('OTHER_CONFIGURATION_CHANGE'));
      void old.closed().then(() => old.dispose());
      this.addBase(e, old);
      e.opts = opts;
      if (e.ribAsn !== undefined) this.rib.removePeer(id, now);
      e.ribAsn = undefined;
      if (typeof opts.asn === 'number') {
        this.rib.addPeer(this.ribConfig(e, opts.asn, importPolicy, exportPolicy));
        e.ribAsn = opts.asn;
      }
      e.peer = this.makePeer(e);
      if (this.addressOwner(e.address) === e) this.listener?.addPeer(e.address, e.peer, opts);
      if (this.started && !this.stopped) e.peer.start(opts.passive ?? false);
    } else {
      const honour = opts.honourGracefulShutdown ?? true;
      const honourWas = e.opts.honourGracefulShutdown ?? true;
      e.opts = opts;
      if (e.ribAsn !== undefined) {
        this.rib.reconfigurePeer(
          id,
          {
            ...this.nextHops(e),
            importPolicy,
            exportPolicy,
            nextHopSelf: opts.nextHopSelf,
            keepNextHop: opts.keepNextHop,
            allowOwnAs: opts.allowOwnAs,
            maxRoutes: blockCaps(opts.maxPrefixes),
            ...(honour !== honourWas ? { honourGracefulShutdown: honour } : {}),
          },
          now,
        );
      }
    }
    e.opts = opts;
    this.syncBfd(e);
    e.limits.configure(opts.maxPrefixes);
    this.scheduleFlush();
  }

  /** `address`: the peer's key (its address, or `address:port` for a second peer at one address). */
  async removePeer(address: string, opts: { message?: string } = {}): Promise<void> {
    const e = this.entry(address);
    const id = e.id;
    const owned = this.addressOwner(e.address) === e;
    this.peers.delete(id);
    this.deferral?.removePeer(id);
    this.kernel?.removePeer(id);
    this.checkDeferral();
    if (owned) {
      this.listener?.removePeer(e.address);
      this.bfd.remove(e.address);
      // Another peer at that address (another port) takes its incoming connections and BFD.
      const next = this.addressOwner(e.address);
      if (next !== undefined) {
        try {
          this.listener?.addPeer(next.address, next.peer, next.opts);
        } catch (err) {
          this.log('error', `peer ${next.id}: cannot take incoming connections from ${next.address}: ${(err as Error).message}`);
        }
        this.syncBfd(next);
      }
    }
    this.drains.forget(id);
    e.peer.stop(ceaseNotification('PEER_DECONFIGURED', opts.message));
    if (e.ribAsn !== undefined) this.rib.removePeer(id, this.scheduler.now());
    this.scheduleFlush();
    await e.peer.closed();
    e.peer.dispose();
  }

  setClusterId(clusterId: string | undefined): void {
    this.rib.setClusterId(clusterId, this.scheduler.now());
    this.scheduleFlush();
  }

  // ------------------------------------------------------------ graceful shutdown (RFC 8326)

  drain(opts: { readonly peers?: readonly string[] } = {}): void {
    this.setDraining(true, opts.peers);
  }

  undrain(opts: { readonly peers?: readonly string[] } = {}): void {
    this.setDraining(false, opts.peers);
  }

  private setDraining(on: boolean, peers: readonly string[] | undefined): void {
    const ids = peers?.map((p) => this.entry(p).id);
    const known = [...this.peers.keys()];
    const changed = on ? this.drains.drain(ids, known) : this.drains.undrain(ids, known);
    const now = this.scheduler.now();
    // The update group re-sends the Adj-RIB-Out once, with the new attributes.
    for (const id of changed) if (this.peers.get(id)!.ribAsn !== undefined) this.rib.reconfigurePeer(id, { gracefulShutdown: on }, now);
    if (changed.length > 0) this.log('info', `${on ? 'draining' : 'no longer draining'} (RFC 8326 graceful shutdown): ${changed.join(', ')}`);
    this.scheduleFlush();
  }

  // ------------------------------------------------------------ policies

  definePolicy(name: string, definition: PolicyDef): void {
    this.definePolicies({ policies: { [name]: definition } });
  }

  /** Recompiles, then hands every peer its new evaluators (soft reconfiguration: no session reset). */
  definePolicies(config: PolicyConfigDef): void {
    this.policies.define(config);
    const now = this.scheduler.now();
    for (const e of this.peers.values()) {
      if (e.ribAsn === undefined) continue;
      const ebgp = e.ribAsn !== (e.opts.localAsn ?? this.options.asn);
      const importPolicy = this.policies.evaluator('import', e.opts.importPolicies ?? [], ebgp, `peer ${e.id} importPolicies`);
      const exportPolicy = this.policies.evaluator('export', e.opts.exportPolicies ?? [], ebgp, `peer ${e.id} exportPolicies`);
      this.rib.reconfigurePeer(e.id, { importPolicy, exportPolicy }, now);
    }
    this.kernel?.reevaluate();
    this.scheduleFlush();
  }

  // ------------------------------------------------------------ routes

  /**
   * Originates `prefix`. `options.iface`: the interface the route goes out of
   * (a kernel route's device); never sent, it is what export policies match
   * with an `interface` condition (`PolicyRoute.iface`), as BIRD's `ifname`.
   * Originating again with another interface replaces the route.
   */
  originate(prefix: Prefix | string, attrs?: RouteAttributes, options?: OriginateOptions): void {
    const p = typeof prefix === 'string' ? Prefix.parse(prefix) : prefix;
    if (options?.iface !== undefined && (typeof options.iface !== 'string' || options.iface === ''))
      throw new TypeError(`originate ${p.toString()}: iface must be a non-empty interface name, got ${JSON.stringify(options.iface)}`);
    // Communities added after the export policy (RouteAttributes.exportCommunities) travel as the path's late set.
    const { policy, sent } = splitLate(attrs);
    this.rib.originate(
      p,
      this.attrCache.get(policy, p.family),
      this.scheduler.now(),
      sent !== undefined ? this.attrCache.get(sent, p.family) : undefined,
      options?.iface,
    );
    this.scheduleFlush();
  }

  withdraw(prefix: Prefix | string): void {
    const p = typeof prefix === 'string' ? Prefix.parse(prefix) : prefix;
    this.rib.withdraw(p, this.scheduler.now());
    this.scheduleFlush();
  }

  requestRouteRefresh(address: string): void {
    const e = this.entry(address);
    const n = e.peer.negotiated;
    if (!n?.routeRefresh) throw new Error(`peer ${e.id}: no established session with route refresh negotiated`);
    for (const f of n.families) e.peer.send({ type: 'routeRefresh', afi: f.afi, safi: f.safi, subtype: 0 });
  }

  // ------------------------------------------------------------ queries

  status(): readonly PeerStatus[] {
    return [...this.peers.values()].map((e) => this.statusOf(e));
  }

  advertised(peer: string): readonly AdvertisedRoute[] {
    const e = this.entry(peer);
    if (e.ribAsn === undefined) return [];
    const out = this.rib.adjRibOut(e.id);
    if (!out) return [];
    return [...out].map(([key, set]) => describeRoute(prefixFromKey(key), set.attrs));
  }

  received(peer?: string): readonly ReceivedRoute[] {
    const entries = peer === undefined ? [...this.peers.values()] : [this.entry(peer)];
    const out: ReceivedRoute[] = [];
    for (const e of entries) {
      if (e.ribAsn === undefined) continue;
      for (const r of this.rib.adjRibIn(e.id, 'post')) {
        const best = this.rib.best(r.prefix);
        out.push({
          ...describeRoute(r.prefix, r.attrs),
          peer: e.id,
          best: best?.source.kind === 'peer' && best.source.id === e.id,
          stale: r.stale,
          ...(r.pathId !== undefined ? { pathId: r.pathId } : {}),
        });
      }
    }
    return out;
  }

  /** What `peer` sent us as received (before import policy), each with the route import made of it, or none when import rejected it. */
  receivedBeforeImport(peer: string): readonly ImportedRoute[] {
    const e = this.entry(peer);
    if (e.ribAsn === undefined) return [];
    const post = new Map(this.received(e.id).map((r) => [`${r.prefix.toString()} ${r.pathId ?? 0}`, r]));
    return this.rib.adjRibIn(e.id, 'pre').map((r) => {
      const accepted = post.get(`${r.prefix.toString()} ${r.pathId ?? 0}`);
      const route = {
        ...describeRoute(r.prefix, r.attrs),
        peer: e.id,
        best: accepted?.best ?? false,
        stale: r.stale,
        ...(r.pathId !== undefined ? { pathId: r.pathId } : {}),
      };
      return { route, ...(accepted ? { accepted } : {}) };
    });
  }

  explain(prefix: Prefix | string, peer?: string): RouteExplanation {
    const p = typeof prefix === 'string' ? Prefix.parse(prefix) : prefix;
    const candidates = this.rib.explainBest(p).map((c) => ({
      from: c.path.source.kind === 'local' ? 'local' : c.path.source.id,
      route: describeRoute(p, c.path.attrs.attrs),
      outcome: c.outcome,
      step: c.step,
    }));
    const entries = peer === undefined ? [...this.peers.values()] : [this.entry(peer)];
    return { prefix: p, candidates, peers: entries.map((e) => this.explainExport(e, p)) };
  }

  /** The export side of explain: the RIB's export rules, then the peer's export policy with a trace. */
  private explainExport(e: PeerEntry, p: Prefix): PeerExplanation {
    if (e.ribAsn === undefined) return { peer: e.id, sent: false, reason: "the peer's AS is not known yet (asn 'any' before its first OPEN)" };
    const x = this.rib.exportPreview(e.id, p);
    const down = x.established ? '' : ' (once the session is up)';
    if (x.refusal !== undefined || x.best === undefined || x.attrs === undefined || x.send === undefined)
      return { peer: e.id, sent: false, reason: `${x.refusal ?? 'no route'}${down}` };
    const ebgp = x.peer.type === 'ebgp';
    const route = policyRoute(p, x.best, x.attrs);
    const r = this.policies.explain('export', e.opts.exportPolicies ?? [], ebgp, route, { peer: x.peer, direction: 'export' });
    if (r === undefined) return { peer: e.id, sent: x.established, reason: `no export policy: sent${down}`, route: describeRoute(p, x.send(x.attrs)) };
    const sent = r.verdict === 'accept';
    return {
      peer: e.id,
      sent: sent && x.established,
      reason: `${r.trace.reason}${down}`,
      ...(sent ? { route: describeRoute(p, x.send(r.attrs, r.decided)) } : {}),
      trace: r.trace,
    };
  }

  // ------------------------------------------------------------ kernel (src/speaker/kernel.ts)

  kernelStatus(): KernelStatus | undefined {
    return this.kernel?.status();
  }

  kernelRoute(prefix: Prefix | string): KernelRouteView | undefined {
    return this.kernel?.route(typeof prefix === 'string' ? Prefix.parse(prefix) : prefix);
  }

  kernelRoutes(): KernelEntry[] | undefined {
    return this.kernel?.routes();
  }

  kernelLearned(): LearnedKernelRoute[] | undefined {
    return this.kernel?.learned();
  }

  setKernelRules(rules: readonly KernelRule[]): void {
    if (this.kernel === undefined) throw new Error('BgpSpeaker: built without `kernel` options');
    this.kernel.setRules(rules);
  }

  setKernelStatics(routes: readonly KernelStaticRoute[]): void {
    if (this.kernel === undefined) throw new Error('BgpSpeaker: built without `kernel` options');
    this.kernel.setStatics(routes);
  }

  // ------------------------------------------------------------ internals

  /**
   * The peer `address:port` names, or the one its key names; a bare address
   * names the peer at that address on port 179, else the first there.
   */
  private entry(address: string): PeerEntry {
    const id = peerId(address);
    const k = parsePeerKey(address);
    const e = this.findPeer(k.address, k.port ?? 179) ?? this.peers.get(id);
    if (!e) throw new Error(`peer ${id} is not configured`);
    return e;
  }

  private findPeer(address: string, port: number): PeerEntry | undefined {
    for (const e of this.peers.values()) if (e.address === address && (e.opts.port ?? 179) === port) return e;
    return undefined;
  }

  /**
   * The peer that takes incoming connections from `address`, and runs BFD
   * with it: the first configured there. Connections are matched by address
   * alone (the remote's source port says nothing), as BIRD matches them; a
   * second peer at that address on another port only connects out.
   */
  private addressOwner(address: string): PeerEntry | undefined {
    for (const e of this.peers.values()) if (e.address === address) return e;
    return undefined;
  }

  private syncBfd(e: PeerEntry): void {
    if (this.addressOwner(e.address) === e) this.bfd.sync(e.address, e.opts);
  }

  private log(level: 'debug' | 'info' | 'warning' | 'error', msg: string, fields?: Record<string, unknown>): void {
    this.options.log?.(level, msg, fields);
  }

  private ribConfig(e: PeerEntry, asn: number, importPolicy: PeerConfig['importPolicy'], exportPolicy: PeerConfig['exportPolicy']): PeerConfig {
    const o = e.opts;
    return {
      address: Address.parse(e.address),
      id: e.id,
      asn,
      localAsn: o.localAsn,
      rrClient: o.routeReflectorClient ?? false,
      nextHopSelf: o.nextHopSelf,
      keepNextHop: o.keepNextHop,
      allowOwnAs: o.allowOwnAs,
      importPolicy,
      exportPolicy,
      maxRoutes: blockCaps(o.maxPrefixes),
      gracefulShutdown: this.drains.has(e.id),
      honourGracefulShutdown: o.honourGracefulShutdown ?? true,
    };
  }

  /**
   * Our next hops on this peer's session: the TCP session's local address for
   * its family; for the other family the configured nextHopV4 / nextHopV6
   * (IPv4 falls back to the router ID; IPv6 has no fallback).
   */
  /** The interface holding the session's local address and the network connected there (read from the system at Established). */
  private sessionLink(e: PeerEntry): SessionLink | undefined {
    const local = e.peer.endpoints?.localAddress;
    if (local === undefined) return undefined;
    try {
      return sessionLink(local, networkInterfaces());
    } catch (err) {
      this.log('warning', `peer ${e.id}: cannot read the system's interfaces (${(err as Error).message}); its routes carry no interface`);
      return undefined;
    }
  }

  private nextHops(e: PeerEntry): { localAddressV4?: Address; localAddressV6?: Address } {
    const ep = e.peer.endpoints;
    const local = ep ? canonicalRemote(ep.localAddress) : undefined;
    const addr = local !== undefined ? Address.parse(local) : undefined;
    const v4 = addr?.family === 4 ? addr : Address.parse(e.opts.nextHopV4 ?? this.options.routerId);
    const v6 = addr?.family === 6 ? addr : e.opts.nextHopV6 !== undefined ? Address.parse(e.opts.nextHopV6) : undefined;
    return { localAddressV4: v4, localAddressV6: v6 };
  }

  private makePeer(e: PeerEntry): Peer {
    const cfg = toSessionConfig(e.opts, this.options.asn, this.options.routerId);
    const hooks = new SessionHooks(this.sessionSide, e);
    const peer: Peer = new Peer({
      session: cfg,
      remoteAddress: e.address,
      remotePort: e.opts.port ?? 179,
      localAddress: e.opts.localAddress,
      localPort: e.opts.localPort,
      password: e.opts.password,
      ttlSecurity: e.opts.ttlSecurity,
      restarting: (this.options.restarting ?? false) && !e.everUp,
      scheduler: this.scheduler,
      sendHoldTime: e.opts.sendHoldTime,
      hooks,
    });
    hooks.peer = peer;
    return peer;
  }

  /**
   * What the session shells' hooks do, written once per speaker: each shell
   * gets a `SessionHooks` (one small object) that calls these with its peer
   * entry and itself, where ~13 closures per shell cost a reflector's idle
   * sessions ~0.8 KB each. Hooks of a replaced shell (after a reset) no longer
   * speak for the peer (`shell` is not `e.peer`). Hooks run inside the
   * shell's socket handlers, where an exception would take the process down:
   * a bug here (or in an event listener) is logged instead, and the session
   * carries on.
   */
  private readonly sessionSide: SessionSide = {
    // The socket took what was queued: what this peer is owed (it fell behind) goes out now.
    drain: (e, shell) => {
      if (e.peer !== shell || e.ribAsn === undefined) return;
      try {
        this.rib.peerWritable(e.id, this.scheduler.now());
        this.scheduleFlush();
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    stateChange: (e, shell, from) => {
      if (e.peer !== shell) return;
      try {
        this.onStateChange(e, from);
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    up: (e, shell, n) => {
      if (e.peer !== shell) return;
      try {
        this.onUp(e, n);
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    down: (e, shell, reason) => {
      if (e.peer !== shell && this.peers.get(e.id) === e) return;
      try {
        this.onDown(e, reason);
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    update: (e, shell, m) => {
      if (e.peer !== shell) return;
      try {
        this.onUpdate(e, m);
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    routeRefresh: (e, shell, m) => {
      if (e.peer !== shell || e.ribAsn === undefined) return;
      try {
        const fam = unicastFamily(m);
        if (fam === undefined || m.subtype !== 0) return;
        this.rib.routeRefresh(e.id, this.scheduler.now(), fam);
        this.scheduleFlush();
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    rib: (e, shell, a) => {
      if (e.peer !== shell) return;
      try {
        this.onGracefulRestart(e, a);
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    endOfRib: (e, shell, f) => {
      if (e.peer !== shell) return;
      try {
        const fam = unicastFamily(f);
        // Exact size (a spread reserves 17 slots): a family or two, for the session's life.
        if (fam && !e.eorIn.includes(familyName(fam))) e.eorIn = e.eorIn.length === 0 ? [familyName(fam)] : e.eorIn.concat(familyName(fam));
        this.deferral?.endOfRib(e.id, f);
        this.kernel?.endOfRib(e.id, f);
        this.checkDeferral();
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    notification: (e, shell, direction, m) => {
      if (e.peer !== shell) return;
      try {
        this.onNotification(e, direction, m);
      } catch (err) {
        this.hookFailed(e, err);
      }
    },
    log: (line) => this.log('debug', line),
  };

  private hookFailed(e: PeerEntry, err: unknown): void {
    this.log('error', `peer ${e.id}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  }

  private statusOf(e: PeerEntry): PeerStatus {
    const st = e.peer.stats;
    const n = e.state === 'Established' ? e.negotiated : undefined;
    let received = 0;
    let accepted = 0;
    let advertised = 0;
    let families: Record<FamilyName, FamilyCounters> | undefined;
    if (e.ribAsn !== undefined) {
      // counted, not listed: status() stays O(1) per peer with a full table
      ({ received, accepted } = this.rib.adjRibInCounts(e.id));
      const group = this.rib.groupOf(e.id);
      advertised = group?.adjRibOutSize ?? 0;
      const fam = (name: FamilyName, f: 4 | 6): FamilyCounters => {
        const c = this.rib.adjRibInCounts(e.id, f);
        const l = e.limits.limitOf(name);
        const refused = this.rib.refusedCount(e.id, f);
        const outstanding = e.limits.outstanding(name, refused);
        return {
          received: c.received,
          accepted: c.accepted,
          advertised: group?.adjRibOutSizeOf(f) ?? 0,
          ...(l ? { limit: l.limit, limitState: limitState(l, c.received, outstanding), refused } : {}),
          ...(l && outstanding > 0 ? { refusedRecovery: e.peer.negotiated?.routeRefresh === true ? 'route-refresh' : 'session-restart' } : {}),
        };
      };
      families = { ipv4: fam('ipv4', 4), ipv6: fam('ipv6', 6) };
    }
    const s: Mutable<PeerStatus> = {
      address: e.address,
      port: e.opts.port ?? 179,
      asn: e.opts.asn,
      state: e.state,
      since: e.since,
      upDownSince: e.health.upDownSince,
      counters: {
        messagesIn: e.base.messagesIn + st.messagesIn,
        messagesOut: e.base.messagesOut + st.messagesOut,
        updatesIn: e.base.updatesIn + st.updatesIn,
        updatesOut: e.base.updatesOut + st.updatesOut,
        prefixesReceived: received,
        prefixesAccepted: accepted,
        prefixesAdvertised: advertised,
        ...(families ? { families } : {}),
        sendQueueBytes: e.peer.queuedBytes,
      },
    };
    if (e.opts.description !== undefined) s.description = e.opts.description;
    if (this.drains.has(e.id)) s.draining = true;
    if (e.lastError) s.lastError = e.lastError;
    const bfd = this.bfd.status(e.address);
    if (bfd) s.bfd = bfd;
    const hint = transportHint(e.opts, e.state, e.peer.silentFor);
    if (hint !== undefined) s.hint = hint;
    const down = e.health.reason;
    if (down) s.downReason = down;
    const ep = n ? e.peer.endpoints : undefined;
    if (ep) {
      s.local = { address: canonicalRemote(ep.localAddress) ?? ep.localAddress, port: ep.localPort };
    }
    if (n) {
      const names = (list: readonly { afi: number; safi: number }[]) =>
        list
          .map(unicastFamily)
          .filter((x) => x !== undefined)
          .map(familyName);
      const families = names(n.families);
      s.negotiated = {
        families,
        holdTime: n.holdTime,
        keepaliveTime: n.keepaliveTime,
        asn4: n.asn4,
        routeRefresh: n.routeRefresh,
        enhancedRouteRefresh: n.enhancedRouteRefresh,
        extendedMessage: n.extendedMessage,
        addPath: families
          .map((f) => {
            const afi = f === 'ipv4' ? 1 : 2;
            return { family: f, send: n.addPathSend.some((x) => x.afi === afi), receive: n.addPathReceive.some((x) => x.afi === afi) };
          })
          .filter((x) => x.send || x.receive),
        peerAsn: n.peerAs,
        peerRouterId: n.peerId,
        endOfRibReceived: families.filter((f) => e.eorIn.includes(f)),
        ...(n.gracefulRestart
          ? {
              gracefulRestart: {
                restartTime: n.gracefulRestart.restartTime,
                notification: n.gracefulNotification,
                ...(n.longLived
                  ? {
                      longLived: n.longLived.families.flatMap((f) => {
                        const fam = unicastFamily(f);
                        return fam === undefined ? [] : [{ family: familyName(fam), staleTime: f.staleTime }];
                      }),
                    }
                  : {}),
              },
            }
          : {}),
      };
    }
    return s;
  }

  private addBase(e: PeerEntry, old: Peer): void {
    e.base = {
      messagesIn: e.base.messagesIn + old.stats.messagesIn,
      messagesOut: e.base.messagesOut + old.stats.messagesOut,
      updatesIn: e.base.updatesIn + old.stats.updatesIn,
      updatesOut: e.base.updatesOut + old.stats.updatesOut,
    };
  }

  private onStateChange(e: PeerEntry, _from: string): void {
    const to = e.peer.state;
    if (to === e.state) return;
    const prev = e.state;
    e.state = to;
    e.since = new Date();
    e.health.state(to, e.since);
    this.emit('stateChange', this.statusOf(e), prev);
  }

  private onUp(e: PeerEntry, n: Negotiated): void {
    const now = this.scheduler.now();
    e.negotiated = n;
    e.everUp = true;
    e.eorIn = NO_FAMILIES;
    e.limits.reset();
    // asn 'any': the RIB learns the peer's AS from this OPEN (again, if it changed).
    if (e.ribAsn !== n.peerAs) {
      if (e.ribAsn !== undefined) this.rib.removePeer(e.id, now);
      const ebgp = n.peerAs !== (e.opts.localAsn ?? this.options.asn);
      const imp = this.policies.evaluator('import', e.opts.importPolicies ?? [], ebgp, `peer ${e.id} importPolicies`);
      const exp = this.policies.evaluator('export', e.opts.exportPolicies ?? [], ebgp, `peer ${e.id} exportPolicies`);
      this.rib.addPeer(this.ribConfig(e, n.peerAs, imp, exp));
      e.ribAsn = n.peerAs;
    }
    const hops = this.nextHops(e);
    this.rib.reconfigurePeer(e.id, hops, now);
    const families: (4 | 6)[] = [];
    const endOfRib: (4 | 6)[] = [];
    for (const f of n.families) {
      const fam = unicastFamily(f);
      if (fam === undefined) continue;
      if (fam === 4) families.push(4);
      else {
        if (hops.localAddressV6 !== undefined) families.push(6);
        else this.log('warning', `peer ${e.id}: IPv6 unicast negotiated over an IPv4 session but no nextHopV6 configured: not sending IPv6 routes`);
      }
      endOfRib.push(fam);
    }
    // End-of-RIB for every negotiated family, also one we send nothing in: a restarting peer waits for it.
    // The interface the session runs over: routes with a next hop on its network carry it (`interface` conditions).
    const link = this.sessionLink(e);
    // A next hop off that network: the interface the kernel's learned routes send it out of (BIRD's `gateway recursive`).
    const kernel = this.kernel;
    const resolveIface = kernel !== undefined ? (a: Address) => kernel.fib.ifaceFor(a) : undefined;
    this.rib.peerUp(
      e.id,
      {
        ctx: n.encode,
        families: familyNumbers(families),
        endOfRib: familyNumbers(endOfRib),
        routerId: n.peerId,
        longLived: n.longLived !== undefined,
        ...(link !== undefined ? { link } : {}),
        ...(resolveIface !== undefined ? { resolveIface } : {}),
      },
      now,
    );
    this.deferral?.up(e.id, n);
    this.kernel?.up(e.id, n);
    this.checkDeferral();
    this.scheduleFlush();
    this.emit('peerUp', this.statusOf(e));
  }

  private onDown(e: PeerEntry, reason: DownReason): void {
    // The RIB hears of it from the graceful-restart actions of the same step
    // (flushRoutes or markStale, see onGracefulRestart), which always follow.
    if (reason.kind === 'tcpFailed') e.lastError = { code: 0, subcode: 0, text: 'TCP connection lost', at: new Date(), direction: 'local' };
    e.state = 'Idle';
    e.health.sessionDown(reason, new Date());
    this.deferral?.down(e.id);
    this.kernel?.down(e.id);
    this.scheduleFlush();
    this.emit('peerDown', this.statusOf(e), describeReason(reason));
  }

  /**
   * Graceful restart (RFC 4724) as the session layer decided it. After a
   * session loss: `purgeStale` for routes left over from an earlier restart,
   * then `flushRoutes` (drop all) or `markStale` (keep those families as
   * stale, drop the rest). Later: `purgeStale` on End-of-RIB or a timer, and
   * (RFC 9494) `longLivedStale` when the Restart timer runs out for families
   * with a long-lived stale time (or at once when the peer had none).
   */
  private onGracefulRestart(
    e: PeerEntry,
    a: { type: 'markStale' | 'purgeStale' | 'longLivedStale'; families: readonly { afi: number }[] } | { type: 'flushRoutes' },
  ): void {
    if (e.ribAsn === undefined || this.peers.get(e.id) !== e) return;
    const now = this.scheduler.now();
    const fams = (list: readonly { afi: number }[]) => list.map((f) => familyOfAfi(f.afi)).filter((f) => f !== undefined);
    if (a.type === 'flushRoutes') this.rib.peerDown(e.id, now);
    else if (a.type === 'markStale') this.rib.peerDown(e.id, now, { gracefulFamilies: fams(a.families) });
    else if (a.type === 'longLivedStale') {
      for (const f of fams(a.families)) {
        const { kept, dropped } = this.rib.longLivedStale(e.id, f, now);
        this.log(
          'info',
          `peer ${e.id}: ${kept} IPv${f} route(s) kept as long-lived stale (LLGR_STALE)${dropped > 0 ? `, ${dropped} carrying NO_LLGR removed` : ''}`,
        );
      }
    } else {
      for (const f of fams(a.families)) {
        const n = this.rib.purgeStale(e.id, f, now);
        if (n > 0) this.log('info', `peer ${e.id}: ${n} stale IPv${f} route(s) removed`);
      }
    }
    this.scheduleFlush();
  }

  private onUpdate(e: PeerEntry, m: UpdateMessage): void {
    if (e.ribAsn === undefined) return;
    // RFC 7606: the codec already applied attribute-discard / treat-as-withdraw; say so.
    for (const i of m.issues ?? []) this.log('warning', `peer ${e.id}: UPDATE attribute ${i.code}: ${i.action} (${i.reason})`);
    this.rib.ingest(e.id, m, this.scheduler.now());
    this.checkLimits(e);
    this.scheduleFlush();
    this.emit('updateReceived', e.id);
    if (this.listenerCount('routeWithdrawn') > 0) {
      for (const p of m.withdrawn) this.emit('routeWithdrawn', e.id, p);
      for (const p of m.attributes.mpUnreach?.withdrawn ?? []) this.emit('routeWithdrawn', e.id, p);
    }
    if (this.listenerCount('routeReceived') > 0) {
      for (const p of [...m.nlri, ...(m.attributes.mpReach?.nlri ?? [])]) {
        const path = this.rib.candidates(p).find((c) => c.source.kind === 'peer' && c.source.id === e.id);
        if (!path) continue;
        const best = this.rib.best(p);
        this.emit('routeReceived', { ...describeRoute(p, path.attrs.attrs), peer: e.id, best: best === path, stale: false });
      }
    }
  }

  /** Max-prefix: compares the peer's counts (O(1)) with its limits and acts (src/speaker/max-prefix.ts). */
  private checkLimits(e: PeerEntry): void {
    if (e.opts.maxPrefixes === undefined || e.ribAsn === undefined) return;
    for (const [name, f] of [
      ['ipv4', 4],
      ['ipv6', 6],
    ] as const) {
      const c = this.rib.adjRibInCounts(e.id, f);
      for (const a of e.limits.check(name, c.received, this.rib.refusedCount(e.id, f), e.peer.negotiated?.routeRefresh === true)) {
        if (a.type === 'log') this.log(a.level, a.message, { peer: e.id, family: name });
        else if (a.type === 'refresh') {
          this.log('info', a.message, { peer: e.id, family: name });
          e.peer.send({ type: 'routeRefresh', ...UNICAST[f], subtype: 0 });
        } else {
          e.peer.automaticStop('MAXIMUM_PREFIXES', a.data, a.restartAfter);
          return;
        }
      }
    }
  }

  private onNotification(e: PeerEntry, direction: 'sent' | 'received', m: NotificationMessage): void {
    // Collision resolution (Cease 7) is routine when both sides dial; it is not the peer's last error.
    if (m.code === ErrorCode.CEASE && m.subcode === CeaseSubcode.CONNECTION_COLLISION_RESOLUTION) return;
    // RFC 8538 Hard Reset: name the NOTIFICATION it carries.
    const inner = hardResetInner(m);
    const message = communicationOf(inner ?? m);
    const shown = inner ?? m;
    const name = describeNotification(shown.code, shown.subcode);
    e.lastError = {
      code: shown.code,
      subcode: shown.subcode,
      ...(inner ? { hardReset: true } : {}),
      text: message !== undefined ? `${name}: "${message}"` : name,
      ...(message !== undefined ? { message } : {}),
      at: new Date(),
      direction,
    };
    e.health.notification(direction, e.lastError.text, e.lastError.at);
    this.log(direction === 'received' ? 'warning' : 'info', `peer ${e.id}: NOTIFICATION ${direction}: ${e.lastError.text}`);
  }

  // ------------------------------------------------------------ flushing

  /** Arms the flush timer for the RIB's next deadline (coalescing window). */
  private scheduleFlush(): void {
    if (this.stopped || this.deferral !== undefined) return;
    const d = this.rib.nextDeadline();
    if (d === undefined) return;
    if (this.flushAt !== undefined && this.flushAt <= d) return;
    this.cancelFlush();
    this.flushAt = d;
    this.flushTimer = this.scheduler.setTimeout(() => this.flush(), Math.max(0, Math.ceil(d - this.scheduler.now())));
  }

  /**
   * Ends the deferral once no peer is awaited any more. With no peer
   * configured yet (the agent starts the speaker, then adds peers) there is
   * nobody to send to: keep waiting for the peers to come, or the timer.
   */
  private checkDeferral(): void {
    if (this.deferral === undefined || !this.started || this.peers.size === 0) return;
    if (this.deferral.waitingFor().length === 0) this.endDeferral('End-of-RIB received from every peer with graceful restart');
  }

  /** Restart over (RFC 4724 §4.1): the initial dumps, with End-of-RIB, go out now. */
  private endDeferral(why: string): void {
    if (this.deferral === undefined) return;
    const waiting = this.deferral.waitingFor();
    this.deferral = undefined;
    if (this.deferralTimer !== undefined) this.scheduler.clearTimeout(this.deferralTimer);
    this.deferralTimer = undefined;
    this.log(waiting.length > 0 ? 'warning' : 'info', `restart: advertising routes now: ${why}`, waiting.length > 0 ? { stillWaitingFor: waiting } : undefined);
    this.scheduleFlush();
  }

  private cancelFlush(): void {
    if (this.flushTimer !== undefined) this.scheduler.clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.flushAt = undefined;
  }

  private flush(): void {
    this.flushTimer = undefined;
    this.flushAt = undefined;
    if (this.stopped) return;
    try {
      // A peer whose socket is still full is sent nothing now: the RIB keeps what it is owed and sends it as it then is (onDrain).
      const canSend = (id: string) => this.peers.get(id)?.peer.writable ?? true;
      const sends = this.rib.flushDue(this.scheduler.now(), canSend);
      // An update group hands all its members the same message array: joined once into runs, one write per peer.
      const uses = new Map<readonly Uint8Array[], number>();
      for (const s of sends) uses.set(s.messages, (uses.get(s.messages) ?? 0) + 1);
      const runs = new Map<readonly Uint8Array[], UpdateRun[]>();
      for (const s of sends) {
        let r = runs.get(s.messages);
        if (r === undefined) runs.set(s.messages, (r = joinUpdates(s.messages, uses.get(s.messages)! > 1)));
        this.peers.get(s.peerId)?.peer.sendUpdateRuns(r);
      }
    } catch (err) {
      // A packing failure is our bug; keep the speaker running and say so.
      this.log('error', `flushing updates failed: ${String(err)}`);
    }
    this.scheduleFlush();
  }
}
