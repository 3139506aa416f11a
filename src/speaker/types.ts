/**
 * The public shape of `BgpSpeaker`: options, per-peer settings, status
 * snapshots and events. Kept apart from the class so the agent layer (and
 * tests) can depend on the contract alone.
 */
import type { Prefix, FamilyName } from '../net/index.js';
import type { PolicyConfigDef, PolicyDef, Trace } from '../policy/index.js';
import type { KernelOptions } from './kernel.js';

/** Time and timers (ms); the default is the real clock. Tests may inject a virtual one. */
export interface SpeakerScheduler {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export type { FamilyName } from '../net/index.js';
export type PeerState = 'Idle' | 'Connect' | 'Active' | 'OpenSent' | 'OpenConfirm' | 'Established';

export interface SpeakerOptions {
  /** Local AS (1..4294967295). */
  readonly asn: number;
  /** BGP identifier, dotted quad. */
  readonly routerId: string;
  /** Where to accept connections; `false` never listens. Default port 179 on all addresses. */
  readonly listen?: { readonly port?: number; readonly addresses?: readonly string[] } | false;
  /** Route-reflector cluster ID (dotted quad); peers marked `routeReflectorClient` become clients. */
  readonly clusterId?: string;
  /**
   * Coalescing window for outgoing changes, ms (default 5) and the hard
   * latency bound (default 50). A change that comes after the window's quiet
   * time with nothing pending goes out at the next flush without waiting;
   * those that follow it within the window coalesce.
   */
  readonly coalesceMs?: number;
  readonly maxDelayMs?: number;
  /**
   * We are coming back from a restart (crash, upgrade) with forwarding state
   * kept: our OPENs carry the graceful-restart R bit and the F bit for every
   * family, so peers that kept our routes as stale wait for our End-of-RIB.
   * As RFC 4724 §4.1 asks, we then send nothing (no partial initial dump)
   * until every configured peer with graceful restart has sent us End-of-RIB
   * for each family (peers without graceful restart, or restarting
   * themselves, are not waited for), or `selectionDeferralTime` runs out.
   * Originate the routes before that, or peers purge what is missing.
   */
  readonly restarting?: boolean;
  /** With `restarting`: the longest we hold back advertisements waiting for peers' End-of-RIB, seconds (default 120). */
  readonly selectionDeferralTime?: number;
  /** Injected clock and timers (tests); default real timers. */
  readonly scheduler?: SpeakerScheduler;
  /**
   * Where BFD (for peers with `bfd`) listens and sends: UDP 3784 on every
   * address by default, in a worker thread. Tests use other ports.
   */
  readonly bfd?: { readonly port?: number; readonly peerPort?: number; readonly listen?: readonly string[]; readonly thread?: boolean };
  /** Keep a Linux routing table in step with the best paths (src/kernel/README.md); default off. */
  readonly kernel?: KernelOptions;
  /** Log sink; default silent. */
  readonly log?: (level: 'debug' | 'info' | 'warning' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/** Attributes of a locally originated route, in user terms. */
/** How a route is originated, beside its attributes (`Speaker.originate`). */
export interface OriginateOptions {
  /** The interface the route goes out of (never sent): what an export policy's `interface` condition matches. */
  readonly iface?: string;
}

export interface RouteAttributes {
  readonly origin?: 'igp' | 'egp' | 'incomplete';
  readonly med?: number;
  /** iBGP only; default 100. */
  readonly localPref?: number;
  /** "65000:100", a well-known name ("no-export"), or a 32-bit number. */
  readonly communities?: readonly (string | number)[];
  /** "global:local1:local2". */
  readonly largeCommunities?: readonly string[];
  /**
   * RFC 4360 extended communities: "rt:65000:100" (route target),
   * "soo:192.0.2.1:7" (route origin), "lb:65000:125000" (link bandwidth,
   * AS and bytes per second, non-transitive), "0x…" (16 hex digits), or the
   * 64-bit value. Non-transitive ones (link bandwidth) still go to our direct
   * eBGP neighbours; a speaker never passes on non-transitive ones it learned
   * to eBGP peers (src/rib/export.ts).
   */
  readonly extendedCommunities?: readonly (string | bigint)[];
  /** Next hop to announce; default: the session's local address (next-hop self). */
  readonly nextHop?: string;
  /** ASNs to put after our own on eBGP (e.g. a prepend). */
  readonly asPath?: readonly number[];
  /**
   * Communities (as `communities`) added after the peer's export policy: the
   * policy does not see them, every route it lets through carries them. Calico's
   * BIRD adds prefixAdvertisements communities this way, after its BGPFilter functions.
   */
  readonly exportCommunities?: readonly (string | number)[];
  /** Large communities (as `largeCommunities`) added after the export policy. */
  readonly exportLargeCommunities?: readonly string[];
}

export interface PeerOptions {
  /**
   * The peer's address: its key, unless another peer at this address (on
   * another port) came first; then its key is `address:port` (`[v6]:port`).
   */
  readonly address: string;
  /** TCP port to connect to (default 179). */
  readonly port?: number;
  /** Remote AS, or 'any' to learn it from the peer's OPEN. */
  readonly asn: number | 'any';
  /** Local AS for this session (overrides the speaker's). */
  readonly localAsn?: number;
  readonly description?: string;
  /** Families to negotiate; default ['ipv4', 'ipv6']. */
  readonly families?: readonly FamilyName[];
  /** Seconds; default 90 (0, or ≥ 3). */
  readonly holdTime?: number;
  readonly keepaliveTime?: number;
  /** Seconds; default 5. */
  readonly connectRetryTime?: number;
  /** Only accept; never connect out. */
  readonly passive?: boolean;
  /**
   * IPv6 next hop for IPv6 routes we announce as next-hop-self. Rule: on an
   * IPv6 TCP session our local address of that session; on an IPv4 session
   * this address, and without it IPv6 routes are not sent to this peer (the
   * family stays negotiated, a warning is logged).
   */
  readonly nextHopV6?: string;
  /** IPv4 next hop for IPv4 routes over an IPv6 TCP session; default the router ID. */
  readonly nextHopV4?: string;
  /** RFC 8654 extended messages (65535 bytes); default off. */
  readonly extendedMessage?: boolean;
  /** First delay (s) before reconnecting after a failure; doubles per failure. Default 5. */
  readonly idleHoldTime?: number;
  /** Source address (and port) for the outgoing connection. */
  readonly localAddress?: string;
  readonly localPort?: number;
  /**
   * Graceful restart (RFC 4724); default on with 120 s. `false` disables.
   * `notification` (default true): the RFC 8538 N bit, so a NOTIFICATION
   * other than Hard Reset keeps routes as stale on both sides.
   * `longLivedStaleTime` (seconds, 1..16777215; default off): RFC 9494
   * long-lived graceful restart, advertised with this stale time for every
   * family; with a peer that advertises it too, its routes are kept after the
   * restart time as long-lived stale (LLGR_STALE, least preferred, sent only
   * to LLGR peers) for the stale time it asked for ([docs/graceful-restart.md](../../docs/graceful-restart.md)).
   */
  readonly gracefulRestart?: { readonly restartTime?: number; readonly notification?: boolean; readonly longLivedStaleTime?: number } | false;
  /**
   * RFC 8326 §4: routes from this peer carrying GRACEFUL_SHUTDOWN (65535:0)
   * get LOCAL_PREF 0 before import policy, so any other path wins. Default true.
   */
  readonly honourGracefulShutdown?: boolean;
  readonly addPath?: 'receive' | 'send' | 'both';
  readonly routeReflectorClient?: boolean;
  /** eBGP: send the original next hop instead of ours. */
  readonly keepNextHop?: boolean;
  /** iBGP: set next hop to ours. */
  readonly nextHopSelf?: boolean;
  /** Accept our own AS this many times in received paths. */
  readonly allowOwnAs?: number;
  /** Import and export policy names (see `BgpSpeaker.definePolicy`), in order. */
  readonly importPolicies?: readonly string[];
  readonly exportPolicies?: readonly string[];
  /**
   * BFD (RFC 5880/5881 single hop): intervals in ms (default 300/300) and the
   * detect multiplier (default 3); `true` for the defaults, `false` or absent
   * for none. A BFD session that was Up going Down takes the BGP session down
   * at once (Cease 10, RFC 9384); BFD never coming up holds nothing back.
   * See src/bfd/README.md.
   */
  readonly bfd?: PeerBfdOptions | boolean;
  /**
   * Max-prefix limits per family (RFC 4486 Cease 6/1): how many routes the
   * peer may send (counted as received, before import policy, as BIRD's
   * `receive limit`), a warning threshold, and what happens over the limit.
   * See docs/limits.md. Default: no limit.
   */
  readonly maxPrefixes?: { readonly [F in FamilyName]?: MaxPrefixLimit };
  /** RFC 9687 send hold time, seconds: a peer that reads nothing of ours this long is dropped (NOTIFICATION 8). Default max(480, 2 × hold time); 0 off. */
  readonly sendHoldTime?: number;
  /**
   * RFC 2385 TCP-MD5 password (1..80 bytes), on sessions we accept and open.
   * Needs the FFI package koffi (Linux); where it cannot load, addPeer throws
   * UnsupportedTransportError. See docs/transport-security.md.
   */
  readonly password?: string;
  /** RFC 5082 TTL security: the peer is at most this many hops away (1..255; 0: off). Same requirement. */
  readonly ttlSecurity?: number;
}

export interface PeerBfdOptions {
  /** Required Min RX Interval, ms (default 300). */
  readonly minRx?: number;
  /** Desired Min TX Interval, ms (default 300; at least 1000 while the session is not Up). */
  readonly minTx?: number;
  /** Detect multiplier, 1..255 (default 3). */
  readonly multiplier?: number;
  /** Wait for the peer's first packet before sending (RFC 5880 §6.1 passive role). */
  readonly passive?: boolean;
}

/** A peer's BFD session. `Unavailable`: BFD could not start (see `error`). */
export interface PeerBfdStatus {
  readonly state: 'AdminDown' | 'Down' | 'Init' | 'Up' | 'Unavailable';
  readonly remoteState?: 'AdminDown' | 'Down' | 'Init' | 'Up';
  readonly since?: Date;
  readonly error?: string;
  readonly desired: { readonly minTxMs: number; readonly minRxMs: number; readonly multiplier: number; readonly passive: boolean };
  /** Negotiated: how often we send, and how long without a packet before we declare the peer down (0 until heard). */
  readonly txIntervalMs: number;
  readonly detectionTimeMs: number;
  readonly remoteMultiplier?: number;
  /** Our diagnostic the last time the session went down (RFC 5880 §4.1). */
  readonly lastDiag: { readonly code: number; readonly text: string };
  readonly remoteDiag?: { readonly code: number; readonly text: string };
  /**
   * The last time the session left Up: when (and since when it had been Up),
   * our diagnostic, the remote's state and diagnostic as last heard, when its
   * last packet before that arrived, the detection time in force.
   */
  readonly lastDown?: {
    readonly at: Date;
    readonly upSince: Date;
    readonly to: 'AdminDown' | 'Down' | 'Init' | 'Up';
    readonly diag: { readonly code: number; readonly text: string };
    readonly remoteState: 'AdminDown' | 'Down' | 'Init' | 'Up';
    readonly remoteDiag: { readonly code: number; readonly text: string };
    readonly lastPacketAt?: Date;
    readonly detectionTimeMs: number;
    /** Not a path failure (the BGP session was kept): the remote said AdminDown, or restarted its session. */
    readonly remoteAdminDown: boolean;
    readonly remoteRestarted: boolean;
  };
  readonly localDiscriminator?: number;
  readonly remoteDiscriminator?: number;
  /** maxTimerLateMs: the latest the BFD thread ran this session's timer after its deadline (a busy or starved thread). */
  readonly counters?: {
    readonly stateChanges: number;
    readonly upTransitions: number;
    readonly downTransitions: number;
    readonly packetsIn: number;
    readonly packetsOut: number;
    readonly discarded: number;
    readonly maxTimerLateMs?: number;
  };
  /**
   * RFC 5881 §5: whether received packets must carry TTL / Hop Limit 255 (a
   * kernel socket filter drops the others), or why not; `kernelDrops`: the
   * datagrams the kernel dropped on the BFD sockets, all peers together.
   */
  readonly receivedTtl?: { readonly checked: boolean; readonly reason?: string; readonly kernelDrops?: number };
}

/** One family's max-prefix limit (PeerOptions.maxPrefixes). */
export interface MaxPrefixLimit {
  /** Routes the peer may have in this family (1..2^31). */
  readonly limit: number;
  /**
   * Over the limit: 'warn' logs and counts, keeps everything; 'block' keeps
   * the session and refuses every new route beyond the limit (BIRD's
   * `receive limit … action block`), reported in status and metrics;
   * 'restart' tears the session down with Cease 6/1 (RFC 4486, with the
   * AFI/SAFI and limit as data) and reconnects after `restartAfter`.
   * Default 'restart'.
   */
  readonly action?: 'warn' | 'block' | 'restart';
  /** Percent of the limit at which a warning is logged and status says 'warning' (1..100, default 80). */
  readonly warningThreshold?: number;
  /** Seconds before reconnecting after a 'restart' teardown (default 60). */
  readonly restartAfter?: number;
}

/** Counters of one address family of a peer, kept as routes change (reading them costs nothing). */
export interface FamilyCounters {
  /** Routes in the Adj-RIB-In (before import policy). */
  readonly received: number;
  /** Routes accepted by import policy. */
  readonly accepted: number;
  /** Routes in the Adj-RIB-Out (what the peer is sent). */
  readonly advertised: number;
  /** The max-prefix limit, when one is configured. */
  readonly limit?: number;
  /** 'warning': at or over the warning threshold; 'exceeded': over the limit (refused routes or a teardown). */
  readonly limitState?: 'ok' | 'warning' | 'exceeded';
  /** Announcements of new routes refused by a 'block' limit on this session. */
  readonly refused?: number;
  /**
   * While refused routes are outstanding: how they come back. 'route-refresh':
   * asked for again once the count falls under the warning threshold;
   * 'session-restart': the peer has no route refresh, so they stay refused
   * until it announces them again or the session restarts.
   */
  readonly refusedRecovery?: 'route-refresh' | 'session-restart';
}

export interface PeerStatus {
  readonly address: string;
  /** RFC 8326 graceful shutdown: our routes go to this peer marked GRACEFUL_SHUTDOWN (see `drain`). */
  readonly draining?: boolean;
  readonly port: number;
  readonly asn: number | 'any';
  readonly description?: string;
  readonly state: PeerState;
  /** When `state` was entered. */
  readonly since: Date;
  /** When the session last went up (Established) or down; connect retries do not move it. */
  readonly upDownSince?: Date;
  /** Why the session is not Established (absent while it is): the last connect error, NOTIFICATION or lost connection, as BIRD words it. */
  readonly downReason?: { readonly text: string; readonly at: Date };
  readonly negotiated?: {
    readonly families: readonly FamilyName[];
    readonly holdTime: number;
    readonly keepaliveTime: number;
    readonly asn4: boolean;
    readonly routeRefresh: boolean;
    readonly enhancedRouteRefresh: boolean;
    readonly extendedMessage: boolean;
    readonly addPath: readonly { readonly family: FamilyName; readonly send: boolean; readonly receive: boolean }[];
    /** `notification`: both sides set the RFC 8538 N bit. */
    readonly gracefulRestart?: {
      readonly restartTime: number;
      readonly notification?: boolean;
      /** RFC 9494, both sides advertised it: the peer's long-lived stale time (seconds) per family. */
      readonly longLived?: readonly { readonly family: FamilyName; readonly staleTime: number }[];
    };
    readonly peerAsn: number;
    readonly peerRouterId: string;
    /** Families whose End-of-RIB (RFC 4724) the peer has sent on this session: its initial table is complete. */
    readonly endOfRibReceived: readonly FamilyName[];
  };
  /**
   * The last NOTIFICATION sent or received (or a local failure). `text` is
   * describeNotification's name plus the RFC 9003 shutdown communication
   * when there is one; `message` is that communication alone. An RFC 8538
   * Hard Reset (Cease 6/9) shows the NOTIFICATION it carries, with `hardReset`.
   */
  readonly lastError?: {
    readonly code: number;
    readonly subcode: number;
    readonly hardReset?: boolean;
    readonly text: string;
    readonly message?: string;
    readonly at: Date;
    readonly direction: 'sent' | 'received' | 'local';
  };
  /** Our end of the established TCP session. */
  readonly local?: { readonly address: string; readonly port: number };
  /** The peer's BFD session, when `bfd` is configured. */
  readonly bfd?: PeerBfdStatus;
  /**
   * A hint for the operator when the state alone does not say why: a peer
   * with TCP-MD5 configured that has not answered since it was configured
   * ("TCP-MD5 configured; no answer from the peer: check the key first").
   */
  readonly hint?: string;
  readonly counters: {
    readonly messagesIn: number;
    readonly messagesOut: number;
    readonly updatesIn: number;
    readonly updatesOut: number;
    readonly prefixesReceived: number;
    readonly prefixesAccepted: number;
    readonly prefixesAdvertised: number;
    /** The same per address family, with max-prefix state (O(1) to read). */
    readonly families?: Readonly<Record<FamilyName, FamilyCounters>>;
    /** Bytes of UPDATEs waiting for the peer's socket (ours, in user space). */
    readonly sendQueueBytes?: number;
  };
}

export interface AdvertisedRoute {
  readonly prefix: Prefix;
  readonly nextHop?: string;
  readonly asPath: readonly number[];
  readonly med?: number;
  readonly localPref?: number;
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
  /** In the text form of src/wire/communities.ts ("rt:…", "lb:…", "0x…"); absent when there are none. */
  readonly extendedCommunities?: readonly string[];
  readonly origin?: 'igp' | 'egp' | 'incomplete';
  /** RFC 4456, on reflected routes. */
  readonly originatorId?: string;
  readonly clusterList?: readonly string[];
}

export interface ReceivedRoute extends AdvertisedRoute {
  readonly peer: string;
  readonly best: boolean;
  readonly stale: boolean;
  /** ADD-PATH path identifier, when the peer sends several paths. */
  readonly pathId?: number;
}

/** A route as the peer sent it (before import policy), and as import accepted it (absent: rejected). */
export interface ImportedRoute {
  readonly route: ReceivedRoute;
  readonly accepted?: ReceivedRoute;
}

export interface SpeakerEvents {
  peerUp: (peer: PeerStatus) => void;
  peerDown: (peer: PeerStatus, reason: string) => void;
  stateChange: (peer: PeerStatus, from: PeerState) => void;
  /** A received route was accepted into (or removed from) the Loc-RIB candidates. */
  routeReceived: (route: ReceivedRoute) => void;
  routeWithdrawn: (peer: string, prefix: Prefix) => void;
  /**
   * An UPDATE from `peer` went into the RIB: one event per message, however many
   * routes it carries or withdraws. For a listener that only needs to know that a
   * peer's routes changed: `routeReceived` builds a route per prefix (a full table
   * is a million), this builds nothing.
   */
  updateReceived: (peer: string) => void;
  /** A peer's BFD session changed state. */
  bfdStateChange: (peer: string, bfd: PeerBfdStatus, from: PeerBfdStatus['state']) => void;
}

/** What the node agent needs of a speaker. `BgpSpeaker` implements it. */
export interface SpeakerApi {
  start(): Promise<void>;
  /** Cease to every peer (RFC 9003 message when given) and close; `graceful` keeps GR state for a fast comeback. */
  stop(opts?: { message?: string; graceful?: boolean }): Promise<void>;
  addPeer(opts: PeerOptions): void;
  /** Applies new settings; resets the session only when a setting the session depends on changed. */
  updatePeer(opts: PeerOptions): void;
  removePeer(address: string, opts?: { message?: string }): Promise<void>;
  /** `options.iface`: the interface the route goes out of, for export policies (never sent). */
  originate(prefix: Prefix | string, attrs?: RouteAttributes, options?: OriginateOptions): void;
  withdraw(prefix: Prefix | string): void;
  status(): readonly PeerStatus[];
  advertised(peer: string): readonly AdvertisedRoute[];
  received(peer?: string): readonly ReceivedRoute[];
}

/** BFD started ahead of the peers that use it (`BgpSpeaker.startBfd`). */
export interface SpeakerBfdApi {
  /** Starts BFD's worker and sockets; resolves once they run or have failed (never rejects). */
  startBfd(): Promise<void>;
}

/**
 * RFC 8326 graceful shutdown without resetting sessions: the routes we send
 * are re-sent with GRACEFUL_SHUTDOWN (65535:0), and toward iBGP peers with
 * LOCAL_PREF 0, so routers move traffic away while our sessions still stand.
 */
export interface SpeakerDrainApi {
  /** Drains `peers` (addresses), or every peer, now and added later, when absent. */
  drain(opts?: { readonly peers?: readonly string[] }): void;
  /** Stops draining `peers`, or every peer: routes are re-sent unmarked. */
  undrain(opts?: { readonly peers?: readonly string[] }): void;
}

/**
 * What `BgpSpeaker` offers beyond `SpeakerApi`: named policies and asking a
 * peer for a refresh. Kept apart so fakes of `SpeakerApi` stay valid.
 */
export interface SpeakerPolicyApi {
  /** Adds (or replaces) one named policy; peers using it are re-evaluated without a reset. */
  definePolicy(name: string, definition: PolicyDef): void;
  /** Adds or replaces several policies and the defined sets they use. */
  definePolicies(config: PolicyConfigDef): void;
  /** Asks the peer to send its routes again (ROUTE-REFRESH, when negotiated). */
  requestRouteRefresh(address: string): void;
}

/** Route reflection changed live (a node becoming, or ceasing to be, a reflector). */
export interface SpeakerReflectorApi {
  /**
   * Sets (or with undefined clears) the route-reflector cluster ID without
   * resetting any session: routes are re-checked and re-exported under the
   * new rules. Which peers are clients stays each peer's `routeReflectorClient`.
   */
  setClusterId(clusterId: string | undefined): void;
}

/** One candidate path of a prefix and what best-path selection made of it. */
export interface CandidateExplanation {
  /** "local", or the address of the peer it was learned from. */
  readonly from: string;
  readonly route: AdvertisedRoute;
  /** "multipath": in the ECMP set, not the best. */
  readonly outcome: 'best' | 'multipath' | 'lost';
  /** The RFC 4271 §9.1.2.2 step that decided ("shorter AS_PATH", "lower router ID (ORIGINATOR_ID when present)"…). */
  readonly step: string;
}

/** Whether (and as what) the best path is sent to one peer, and why. */
export interface PeerExplanation {
  readonly peer: string;
  readonly sent: boolean;
  /** One sentence: the export rule that refused it, or the policy statement / default that decided. */
  readonly reason: string;
  /** The route as the peer is sent it: after the export rules (our AS prepended, next hop…) and the policy. */
  readonly route?: AdvertisedRoute;
  /** The export policy's trace: policies and statements visited, conditions with their values, modifications. */
  readonly trace?: Trace;
}

/** `explain(prefix, peer?)`: which route was best and why, and what each peer is sent and why. */
export interface RouteExplanation {
  readonly prefix: Prefix;
  readonly candidates: readonly CandidateExplanation[];
  readonly peers: readonly PeerExplanation[];
}

export interface SpeakerExplainApi {
  /** Explains `prefix` for one configured peer, or for every peer. */
  explain(prefix: Prefix | string, peer?: string): RouteExplanation;
}
