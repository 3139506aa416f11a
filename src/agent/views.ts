/**
 * The stable JSON views of `tsbgp plan`, `routes` and `explain` (the contract
 * in docs/json-output.md), computed from a plan alone. Pure.
 */
import type { DrainStatusJson } from './drain.js';
import { defaultMaxPrefixes, type AgentMaxPrefixes } from './max-prefixes.js';
import { formatMaxPrefixLimit, toSessionConfig, type AdvertisedRoute, type PeerState, type PeerStatus, type SpeakerOptions } from '../speaker/index.js';
import { kernelPlanJson, type KernelLive, type KernelPlanJson, type KernelStatusJson } from './kernel.js';
import {
  builtinExport,
  exportFilterVerdict,
  filterChainJson,
  filterWarnings,
  formatIssue,
  peerKey,
  peerOptions,
  plannedPeerKey,
  redistributedIface,
  runnablePeers,
  type ExportVerdict,
  type FilterChainJson,
  type FilterVerdict,
  type FilterWarning,
  type LearnedJson,
  type ManifestIssue,
  type PeerRefusal,
  type Plan,
  type PlanError,
  type PlannedPeer,
  type PlannedRoute,
  type Redistributed,
  type RouteReason,
  type RouteShaping,
  type Service,
} from '../kubernetes/index.js';
import { formatExtendedCommunity, linkBandwidth } from '../wire/index.js';
import { Prefix } from '../net/index.js';
import { serviceIpsSummary } from './explain-service.js';
import { statusPeerJson, type StatusPeerJson } from './peer-view.js';
import type { ApplyFailure } from './apply.js';
import type { SourceStatus } from './sources/index.js';

const JSON_VERSION = 1;

export interface ErrorJson {
  readonly file: string | null;
  readonly kind: string | null;
  readonly namespace: string | null;
  readonly name: string | null;
  readonly field: string | null;
  readonly message: string;
}

export type ReasonJson = RouteReason & { readonly text: string };

export interface RouteJson {
  readonly prefix: string;
  readonly communities: readonly string[];
  readonly reasons: readonly ReasonJson[];
  /** What Service annotations and weighted ECMP set on the route (absent: nothing). */
  readonly shaping?: ShapingJson;
}

/** A route's shaping (src/kubernetes/plan-types.ts RouteShaping) in text: communities, the link bandwidth as "lb:AS:BYTES_PER_SECOND". */
export interface ShapingJson {
  readonly communities?: readonly string[];
  readonly med?: number;
  readonly localPref?: number;
  readonly prepend?: number;
  readonly peers?: readonly string[];
  readonly linkBandwidth?: { readonly community: string; readonly endpoints: number; readonly bytesPerSecond: number };
  readonly by: readonly string[];
}

function shapingJson(s: RouteShaping): ShapingJson {
  return {
    ...(s.communities ? { communities: s.communities.map((c) => c.text) } : {}),
    ...(s.med !== undefined ? { med: s.med } : {}),
    ...(s.localPref !== undefined ? { localPref: s.localPref } : {}),
    ...(s.prepend !== undefined ? { prepend: s.prepend } : {}),
    ...(s.peers ? { peers: [...s.peers] } : {}),
    ...(s.linkBandwidth
      ? {
          linkBandwidth: {
            community: formatExtendedCommunity(linkBandwidth(s.linkBandwidth.asn, s.linkBandwidth.bytesPerSecond)),
            endpoints: s.linkBandwidth.endpoints,
            bytesPerSecond: s.linkBandwidth.bytesPerSecond,
          },
        }
      : {}),
    by: [...s.by],
  };
}

/** A route re-advertised from a local peer (MetalLB, GoBGP on 127.0.0.1) because the built-in export accepts it. */
export interface RedistributedJson {
  readonly prefix: string;
  readonly from: string;
  /** Standard and large communities. */
  readonly communities: readonly string[];
  /** A local peer's transitive extended communities, passed on (added compatibly to version 1). */
  readonly extendedCommunities: readonly string[];
  /** A local peer's non-transitive extended communities, not passed on (RFC 4360 §2; added compatibly to version 1). */
  readonly withheldExtendedCommunities: readonly string[];
  readonly export: ExportVerdict;
  /** Learned from the kernel's table (`from: "kernel"`); null for a local peer's route. */
  readonly kernel: LearnedJson | null;
}

export interface PeerJson {
  readonly id: string;
  readonly address: string;
  readonly port: number;
  readonly asn: number;
  readonly localAsn: number;
  readonly type: PlannedPeer['type'];
  /** Where the peering comes from: `mesh (Node n2)`, `BGPPeer x`, or `reverse of BGPPeer x` (implied, as Calico makes peerings symmetric). */
  readonly origin: string;
  /** This node reflects routes to the peer, with this cluster ID (null: not a client). */
  readonly routeReflectorClusterId: string | null;
  readonly passive: boolean;
  readonly filters: readonly string[];
  /** Not started; the reasons are in `errors`. */
  readonly refused: boolean;
  /** Prefixes exported to the peer after policy (built-in export; see `exportPolicy`). */
  readonly exports: readonly string[];
  /** The max-prefix limit of each family (`LIMIT,ACTION,WARN%` or `none`) and where it comes from. */
  readonly maxPrefixes: { readonly limit: string; readonly from: 'annotation' | 'agent' };
  // The session as the speaker would run it (from the options the agent hands it), to compare with
  // BIRD's `protocol bgp` field by field. Added in version 1.
  /** The local address of the TCP session (BIRD `source address`); null: the kernel picks. */
  readonly sourceAddress: string | null;
  /** TCP-MD5: the Secret and key the password comes from (never the value), and whether it was found; null: no password. */
  readonly password: { readonly secret: string; readonly key: string; readonly resolved: boolean } | null;
  /** RFC 5082 TTL security: the peer is at most this many hops away; null: off (BIRD `ttl security off`). */
  readonly ttlSecurity: number | null;
  /** `Auto` (BGP's default), `Self` (next hop self) or `Keep` (next hop keep). */
  readonly nextHopMode: 'Auto' | 'Self' | 'Keep';
  /**
   * RFC 4724 graceful restart with this restart time in seconds; null: off. `longLivedStaleTime`: RFC 9494
   * long-lived graceful restart (tsbgp.io/long-lived-stale-time), seconds; null: off.
   */
  readonly gracefulRestart: { readonly restartTime: number; readonly longLivedStaleTime: number | null } | null;
  /** Seconds; null: a third of the negotiated hold time. */
  readonly keepaliveTime: number | null;
  /** Seconds offered in OPEN. */
  readonly holdTime: number;
  /** RFC 7911 ADD-PATH as offered for the peer's family (`both` for every planned peer, as confd's BIRD template `add paths on`). */
  readonly addPaths: 'off' | 'receive' | 'send' | 'both';
  /** BFD for this peering, timers in ms; null: none. */
  readonly bfd: { readonly minRx: number; readonly minTx: number; readonly multiplier: number; readonly passive: boolean } | null;
  /** Own AS numbers allowed in a received AS_PATH (BIRD `allow local as`); null: none. */
  readonly numAllowedLocalASNumbers: number | null;
  /** The gateway of the static route to the peer (BGPPeer reachableBy); null: none. */
  readonly reachableBy: string | null;
  /** The BGPFilter rules applied to routes from the peer, in order, with their operations (src/kubernetes/filters.ts). */
  readonly importChain: FilterChainJson;
  /** The BGPFilter rules applied to routes toward the peer, then Calico's built-in export policy. */
  readonly exportChain: FilterChainJson;
}

export interface RefusedJson {
  readonly service: string;
  readonly namespace: string;
  readonly name: string;
  readonly ip: string;
  readonly source: 'externalIP' | 'loadBalancerIP';
  readonly reason: string;
  readonly message: string;
}

export interface PlanJson {
  readonly version: typeof JSON_VERSION;
  readonly node: { readonly name: string; readonly asn: number; readonly ipv4: string | null; readonly ipv6: string | null; readonly listenPort: number };
  /**
   * The BGP router ID: CALICO_ROUTER_ID (an IPv4 address, or `hash` of the node name), else the node's IPv4
   * address, as Calico; null: none yet (the speaker does not start). Added in version 1.
   */
  readonly routerId: string | null;
  /**
   * Where the speaker listens: `addresses` empty is every address (bindMode None), else the node's
   * IPv4 and IPv6 addresses (bindMode NodeIP). Added in version 1.
   */
  readonly listen: { readonly addresses: readonly string[]; readonly port: number };
  /** `builtin+filters`: exports are the peer's BGPFilters (in order), then Calico's built-in export policy. */
  readonly exportPolicy: 'builtin+filters';
  readonly routes: readonly RouteJson[];
  readonly redistributed: readonly RedistributedJson[];
  readonly peers: readonly PeerJson[];
  readonly refused: readonly RefusedJson[];
  readonly errors: readonly ErrorJson[];
  /** Resources used, with fields tsbgp did not understand or does not support (each ignored). */
  readonly warnings: readonly ErrorJson[];
  /** Resources of kinds, and Calico fields, tsbgp does not read (informational). */
  readonly ignored: readonly ErrorJson[];
  /** The kernel side: programming rules, blackholes, statics, aggregation, learning (src/agent/kernel.ts KernelPlanJson). */
  readonly kernel: KernelPlanJson;
}

const n = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

function issueJson(i: ManifestIssue): ErrorJson {
  return { file: n(i.file), kind: n(i.kind), namespace: n(i.namespace), name: n(i.name), field: n(i.path), message: i.message };
}

export function planErrorJson(e: PlanError): ErrorJson {
  return { file: null, kind: n(e.kind), namespace: n(e.namespace), name: n(e.name), field: n(e.field), message: e.message };
}

export function refusalJson(r: PeerRefusal): ErrorJson {
  return { file: null, kind: r.kind, namespace: null, name: r.name, field: r.field || null, message: `peer ${r.address} (${r.id}) not started: ${r.message}` };
}

function filterWarningJson(w: FilterWarning): ErrorJson {
  return { file: null, kind: w.kind, namespace: null, name: w.name, field: w.field, message: w.message };
}

export function formatError(e: ErrorJson): string {
  return formatIssue({
    severity: 'error',
    file: e.file ?? undefined,
    kind: e.kind ?? undefined,
    namespace: e.namespace ?? undefined,
    name: e.name ?? undefined,
    path: e.field ?? undefined,
    message: e.message,
  });
}

/** A reason in words, naming the pool of a block. */
export function reasonText(r: RouteReason, plan?: Plan, prefix?: Prefix): string {
  switch (r.kind) {
    case 'BGPConfiguration':
      return `BGPConfiguration ${r.name} ${r.field}`;
    case 'Service': {
      const shaped = r.shaping && r.shaping.by.length > 0 ? `; shaped by ${r.shaping.by.join(', ')}` : '';
      return `Service ${r.namespace}/${r.name} ${r.source} ${r.ip}: ${r.rule}${shaped}`;
    }
    case 'BlockAffinity':
    case 'Node': {
      const pool = prefix && plan?.exportAllowList.pools.find((p) => p.cidr.contains(prefix));
      const what = r.kind === 'BlockAffinity' ? `BlockAffinity ${r.name}` : `Node ${r.name} ${r.field}`;
      return pool ? `${what} (IPPool ${pool.name})` : what;
    }
  }
}

export function routeJson(r: PlannedRoute, plan?: Plan): RouteJson {
  return {
    prefix: r.prefix.toString(),
    communities: r.communities.map((c) => c.text),
    reasons: r.reasons.map((x) => ({ ...x, text: reasonText(x, plan, r.prefix) })),
    ...(r.shaping ? { shaping: shapingJson(r.shaping) } : {}),
  };
}

/**
 * The communities a peer's export policy sees on a planned route: a Service's
 * own. Its prefixAdvertisements communities are added after the policy
 * (src/kubernetes/reconcile.ts routeAttributes), as Calico's BIRD adds them after the BGPFilters.
 */
function policyCommunities(r: PlannedRoute): string[] {
  return (r.shaping?.communities ?? []).map((c) => c.text);
}

/** The same for a redistributed route: a kernel route's communities are prefixAdvertisements ones (added after the policy); a local peer's are its own. */
function redistributedPolicyCommunities(r: Redistributed): readonly string[] {
  return r.from === 'kernel' ? [] : r.communities;
}

/**
 * The prefixes a peer gets: planned routes and redistributed ones the
 * built-in export accepts and the peer's BGPFilters do not reject, of the
 * peer's family.
 */
export function exportsTo(plan: Plan, peer: PlannedPeer, redistributed: readonly Redistributed[] = []): Prefix[] {
  const fam = peer.address.family;
  const out: Prefix[] = [];
  const passes = (prefix: Prefix, communities: readonly string[], builtin = builtinExport(plan, prefix).accept, iface?: string) =>
    builtin && exportFilterVerdict(plan, peer, prefix, communities, iface).verdict !== 'reject';
  // A Service's tsbgp.io/peers or tsbgp.io/peer-selector leaves the other peers out (src/kubernetes/service-policy.ts; explain says why).
  const leftOut = (r: PlannedRoute) => r.shaping?.peers !== undefined && !r.shaping.peers.includes(peer.id);
  for (const r of plan.routes) if (r.prefix.family === fam && !leftOut(r) && passes(r.prefix, policyCommunities(r))) out.push(r.prefix);
  // A route learned from the kernel was taken by the kernel export decision (it may be a /32 block or elevated within a block).
  for (const r of redistributed)
    if (
      r.prefix.family === fam &&
      !out.some((p) => p.equals(r.prefix)) &&
      passes(r.prefix, redistributedPolicyCommunities(r), r.kernel !== undefined ? r.kernel.exported : undefined, redistributedIface(r))
    )
      out.push(r.prefix);
  return out.sort((a, b) => a.compare(b));
}

/** A peer's session settings as the speaker would run them: read from the options the agent hands it (`peerOptions`). */
function sessionJson(
  p: PlannedPeer,
): Pick<
  PeerJson,
  | 'sourceAddress'
  | 'password'
  | 'ttlSecurity'
  | 'nextHopMode'
  | 'gracefulRestart'
  | 'keepaliveTime'
  | 'holdTime'
  | 'addPaths'
  | 'bfd'
  | 'numAllowedLocalASNumbers'
  | 'reachableBy'
> {
  const o = peerOptions(p);
  // The session layer's own reading of those options (its defaults for hold and restart time).
  const cfg = toSessionConfig(o, p.localAsn, '0.0.0.0');
  return {
    sourceAddress: n(o.localAddress),
    password: p.password ? { secret: p.password.name, key: p.password.key, resolved: p.passwordValue !== undefined } : null,
    ttlSecurity: n(o.ttlSecurity),
    nextHopMode: o.keepNextHop ? 'Keep' : o.nextHopSelf ? 'Self' : 'Auto',
    gracefulRestart: cfg.gracefulRestart
      ? { restartTime: cfg.gracefulRestart.restartTime, longLivedStaleTime: cfg.longLivedGracefulRestart?.staleTime ?? null }
      : null,
    keepaliveTime: n(cfg.keepaliveTime),
    holdTime: cfg.holdTime,
    addPaths: o.addPath ?? 'off',
    bfd: p.bfd ? { minRx: p.bfd.minRx, minTx: p.bfd.minTx, multiplier: p.bfd.multiplier, passive: p.bfd.passive } : null,
    numAllowedLocalASNumbers: n(o.allowOwnAs),
    reachableBy: n(p.reachableBy?.toString()),
  };
}

/** Where a planned peering comes from, in words. */
function peerOrigin(p: PlannedPeer): string {
  if (p.origin === 'mesh') return `mesh (Node ${p.from.name})`;
  if (p.origin === 'workload') return `BGPPeer ${p.from.name} localWorkloadSelector (endpoint status ${p.workload?.file})`;
  return p.origin === 'reverse' ? `reverse of BGPPeer ${p.from.name}` : `BGPPeer ${p.from.name}`;
}

export function planJson(
  plan: Plan,
  opts: {
    issues?: readonly ManifestIssue[];
    redistributed?: readonly Redistributed[];
    listenPort?: number;
    maxPrefixes?: AgentMaxPrefixes | null;
    kernel?: KernelLive;
  } = {},
): PlanJson {
  const agentLimit = formatMaxPrefixLimit(opts.maxPrefixes === null ? null : (opts.maxPrefixes ?? defaultMaxPrefixes())?.ipv4);
  const { peers: running, refused: refusals } = runnablePeers(plan);
  const redistributed = opts.redistributed ?? [];
  const issues = opts.issues ?? [];
  return {
    version: JSON_VERSION,
    node: {
      name: plan.node.name,
      asn: plan.node.asn,
      ipv4: n(plan.node.ipv4?.toString()),
      ipv6: n(plan.node.ipv6?.toString()),
      listenPort: opts.listenPort ?? plan.listen.port,
    },
    routerId: n(plan.node.routerId?.toString()),
    listen: { addresses: [plan.listen.address, plan.listen.addressV6].filter((a) => a !== undefined).map(String), port: opts.listenPort ?? plan.listen.port },
    exportPolicy: 'builtin+filters',
    routes: plan.routes.map((r) => routeJson(r, plan)),
    redistributed: redistributed.map((r) => ({
      prefix: r.prefix.toString(),
      from: r.from,
      communities: [...r.communities],
      extendedCommunities: [...(r.extendedCommunities ?? [])],
      withheldExtendedCommunities: [...(r.withheldExtendedCommunities ?? [])],
      export: r.kernel !== undefined ? { accept: r.kernel.exported, reason: r.kernel.why } : builtinExport(plan, r.prefix),
      kernel: r.kernel ?? null,
    })),
    peers: plan.peers.map((p) => {
      const runs = running.get(plannedPeerKey(p)) === p;
      return {
        id: p.id,
        address: p.address.toString(),
        port: p.port,
        asn: p.asn,
        localAsn: p.localAsn,
        type: p.type,
        origin: peerOrigin(p),
        routeReflectorClusterId: p.routeReflectorClient ? (p.routeReflectorClusterId ?? null) : null,
        passive: p.passive,
        filters: [...p.filters],
        refused: !runs,
        exports: runs ? exportsTo(plan, p, redistributed).map(String) : [],
        maxPrefixes: p.maxPrefixes !== undefined ? { limit: formatMaxPrefixLimit(p.maxPrefixes), from: 'annotation' } : { limit: agentLimit, from: 'agent' },
        ...sessionJson(p),
        importChain: filterChainJson(p, 'import', plan.filters),
        exportChain: filterChainJson(p, 'export', plan.filters),
      };
    }),
    refused: plan.refused.map(refusedJson),
    errors: [
      ...issues.filter((i) => i.severity === 'error').map(issueJson),
      ...plan.errors.map(planErrorJson),
      ...refusals.filter((r) => !r.byPlanner).map(refusalJson),
    ],
    warnings: [...issues.filter((i) => i.severity === 'warning').map(issueJson), ...filterWarnings(plan).map(filterWarningJson)],
    ignored: issues.filter((i) => i.severity === 'ignored').map(issueJson),
    kernel: kernelPlanJson(plan, opts.kernel),
  };
}

// ---------- explain ----------

export interface ExplainPeerJson {
  readonly address: string;
  readonly type: PlannedPeer['type'];
  readonly exported: boolean;
  readonly why: string;
  /** The peer's BGPFilter verdict (`none`: no rule decided, or no filters); absent when not evaluated. */
  readonly filter?: FilterVerdict;
}

export interface ExplainPrefixJson {
  readonly prefix: string;
  /** The planner's decision: the route with its reasons, or why not. */
  readonly planned: RouteJson | null;
  readonly redistributedFrom: string | null;
  /** A re-advertised route's communities: standard, large and the extended ones passed on (added compatibly to version 1). */
  readonly redistributedCommunities: readonly string[];
  /** Planned routes that contain the prefix (e.g. the range covering a service IP). */
  readonly coveredBy: readonly RouteJson[];
  readonly refused: readonly RefusedJson[];
  /** Calico's built-in export policy for this prefix. */
  readonly export: ExportVerdict;
  /** The export allow-list entries (pools, service ranges, reflected ranges) that contain the prefix. */
  readonly allowList: readonly { readonly kind: 'IPPool' | 'serviceRange' | 'reflected'; readonly name: string; readonly cidr: string }[];
  readonly peers: readonly ExplainPeerJson[];
  readonly summary: string;
}

export interface ExplainJson {
  readonly version: typeof JSON_VERSION;
  readonly query: string;
  readonly service: string | null;
  readonly prefixes: readonly ExplainPrefixJson[];
  /** Refused IPs of the service (for a service query). */
  readonly refused: readonly RefusedJson[];
  readonly summary: string;
}

function allowListFor(plan: Plan, p: Prefix): ExplainPrefixJson['allowList'] {
  const { pools, serviceRanges, reflected } = plan.exportAllowList;
  return [
    ...serviceRanges.filter((r) => r.prefix.contains(p)).map((r) => ({ kind: 'serviceRange' as const, name: r.field, cidr: r.prefix.toString() })),
    ...reflected.filter((r) => r.prefix.contains(p)).map((r) => ({ kind: 'reflected' as const, name: r.field, cidr: r.prefix.toString() })),
    ...pools.filter((x) => x.cidr.contains(p)).map((x) => ({ kind: 'IPPool' as const, name: x.name, cidr: x.cidr.toString() })),
  ];
}

function refusedJson(r: Plan['refused'][number]): RefusedJson {
  return { service: `${r.namespace}/${r.name}`, namespace: r.namespace, name: r.name, ip: r.ip, source: r.source, reason: r.reason, message: r.message };
}

function refusedJsonOf(plan: Plan, pred: (r: Plan['refused'][number]) => boolean): RefusedJson[] {
  return plan.refused.filter(pred).map(refusedJson);
}

export function explainPrefix(plan: Plan, prefix: Prefix, redistributed: readonly Redistributed[] = []): ExplainPrefixJson {
  const own = plan.routes.find((r) => r.prefix.equals(prefix));
  const redis = redistributed.find((r) => r.prefix.equals(prefix));
  const coveredBy = plan.routes.filter((r) => !r.prefix.equals(prefix) && r.prefix.contains(prefix)).map((r) => routeJson(r, plan));
  const refused = refusedJsonOf(plan, (r) => prefix.contains(Prefix.parse(r.ip, { allowBareAddress: true })));
  const verdict = builtinExport(plan, prefix);
  const { peers: running, refused: refusals } = runnablePeers(plan);
  const advertised = (own !== undefined || redis !== undefined) && verdict.accept;
  const peers = plan.peers.map((p): ExplainPeerJson => {
    const base = { address: p.address.toString(), type: p.type };
    if (running.get(plannedPeerKey(p)) !== p) {
      const why =
        refusals
          .filter((r) => r.id === p.id)
          .map((r) => r.message)
          .join('; ') || 'peer not started';
      return { ...base, exported: false, why: `peer not started: ${why}` };
    }
    if (p.address.family !== prefix.family) return { ...base, exported: false, why: `IPv${prefix.family} prefix, IPv${p.address.family} session` };
    if (!own && !redis)
      return {
        ...base,
        exported: false,
        why: coveredBy.length > 0 ? `not advertised itself; covered by ${coveredBy.map((r) => r.prefix).join(', ')}` : 'not planned on this node',
      };
    if (own?.shaping?.peers && !own.shaping.peers.includes(p.id))
      return { ...base, exported: false, why: `left out by the Service's ${own.shaping.by.filter((b) => b.startsWith('tsbgp.io/peer')).join(', ')}` };
    const fv = exportFilterVerdict(
      plan,
      p,
      prefix,
      own ? policyCommunities(own) : redis ? redistributedPolicyCommunities(redis) : [],
      own || !redis ? undefined : redistributedIface(redis),
    );
    if (fv.verdict === 'reject') return { ...base, exported: false, filter: fv, why: `${fv.reason}` };
    if (!verdict.accept)
      return {
        ...base,
        exported: false,
        filter: fv,
        why: `built-in export rejects: ${verdict.reason}${p.filters.length > 0 ? ` (${fv.reason})` : ''}`,
      };
    if (fv.verdict === 'accept') return { ...base, exported: true, filter: fv, why: `${fv.reason} (built-in export: ${verdict.reason})` };
    const filterNote = p.type === 'node-to-node mesh' ? 'mesh peers get the built-in export only' : fv.reason;
    return { ...base, exported: true, filter: fv, why: `built-in export accepts: ${verdict.reason} (${filterNote})` };
  });
  let summary: string;
  if (own)
    summary = advertised
      ? `advertised by this node: ${own.reasons.map((r) => reasonText(r, plan, prefix)).join('; ')}`
      : `planned but not exported: ${verdict.reason}`;
  else if (redis)
    summary = advertised
      ? `re-advertised from local peer ${redis.from}: ${verdict.reason}`
      : `received from local peer ${redis.from} but not exported: ${verdict.reason}`;
  else if (refused.length > 0) summary = `not advertised: ${refused.map((r) => `${r.service} ${r.source} ${r.ip} ${r.reason} (${r.message})`).join('; ')}`;
  else if (coveredBy.length > 0)
    summary = `not advertised as ${prefix}; covered by ${coveredBy.map((r) => `${r.prefix} (${r.reasons.map((x) => x.text).join('; ')})`).join(', ')}`;
  else summary = 'not advertised: no Service, pool block or range on this node plans it';
  return {
    prefix: prefix.toString(),
    planned: own ? routeJson(own, plan) : null,
    redistributedFrom: redis?.from ?? null,
    redistributedCommunities: redis ? [...redis.communities, ...(redis.extendedCommunities ?? [])] : [],
    coveredBy,
    refused,
    export: verdict,
    allowList: allowListFor(plan, prefix),
    peers,
    summary,
  };
}

/** `PREFIX`, a bare address, or `NAMESPACE/SERVICE`. */
export function parseExplainQuery(q: string): { prefix: Prefix } | { namespace: string; name: string } {
  const slash = q.indexOf('/');
  const looksLikePrefix = /^[0-9a-fA-F:.]+(\/\d+)?$/.test(q) && (q.includes('.') || q.includes(':'));
  if (looksLikePrefix) return { prefix: Prefix.parse(q, { allowBareAddress: true }) };
  if (slash > 0 && slash < q.length - 1 && q.indexOf('/', slash + 1) < 0) return { namespace: q.slice(0, slash), name: q.slice(slash + 1) };
  throw new Error(`cannot explain ${JSON.stringify(q)}: expected a prefix (198.18.0.0/16), an address, or NAMESPACE/SERVICE`);
}

/**
 * `service` looks the Service up in the cluster state: without it (offline) a
 * Service with nothing planned is described in general terms; with it, a
 * Service that does not exist is an error, and each IP is explained.
 */
export function explain(
  plan: Plan,
  query: string,
  redistributed: readonly Redistributed[] = [],
  service?: (ns: string, name: string) => Service | undefined,
): ExplainJson {
  const q = parseExplainQuery(query);
  if ('prefix' in q) {
    const e = explainPrefix(plan, q.prefix, redistributed);
    return { version: JSON_VERSION, query, service: null, prefixes: [e], refused: e.refused, summary: e.summary };
  }
  const svc = `${q.namespace}/${q.name}`;
  const mine = plan.routes.filter((r) => r.reasons.some((x) => x.kind === 'Service' && x.namespace === q.namespace && x.name === q.name));
  const refused = refusedJsonOf(plan, (r) => r.namespace === q.namespace && r.name === q.name);
  const prefixes = mine.map((r) => explainPrefix(plan, r.prefix, redistributed));
  let summary: string;
  if (prefixes.length > 0 || refused.length > 0) {
    const parts = [...prefixes.map((p) => `${p.prefix}: ${p.summary}`), ...refused.map((r) => `${r.ip}: not advertised (${r.reason}: ${r.message})`)];
    summary = parts.join('\n');
  } else if (service) {
    const s = service(q.namespace, q.name);
    if (!s) throw new Error(`no Service ${svc} in the cluster state`);
    summary = serviceIpsSummary(plan, s);
  } else
    summary =
      `Service ${svc} has no /32 or /128 on this node: its IPs are covered by the service ranges, ` +
      `or not inside any allow-list (see the ranges in 'tsbgp plan')`;
  return { version: JSON_VERSION, query, service: svc, prefixes, refused, summary };
}

/** `status --json` `source`: where the configuration comes from (docs/json-output.md); times as ISO text. */
export type SourceJson = Omit<SourceStatus, 'since' | 'lastSyncAt'> & { readonly since: string; readonly lastSyncAt: string | null };

function sourceJson(s: SourceStatus): SourceJson {
  return { ...s, paths: [...s.paths], since: s.since.toISOString(), lastSyncAt: s.lastSyncAt?.toISOString() ?? null };
}

export type { StatusPeerJson } from './peer-view.js';

export interface StatusJson {
  readonly version: 1;
  readonly node: string;
  readonly running: boolean;
  readonly startedAt: string;
  readonly speaker: { readonly asn: number; readonly routerId: string; readonly listenPort: number } | null;
  readonly peers: readonly StatusPeerJson[];
  readonly errors: readonly ErrorJson[];
  /** Fields of valid resources that tsbgp ignored (unknown, or a Calico feature it lacks). */
  readonly warnings?: readonly ErrorJson[];
  readonly refused: readonly RefusedJson[];
  /** Where the configuration comes from and whether it is reachable (added compatibly to version 1). */
  readonly source: SourceJson;
  /** Kernel route programming (src/agent/kernel.ts); null when off (added compatibly to version 1). */
  readonly kernel?: KernelStatusJson | null;
  /** Present while the agent drains (RFC 8326, src/agent/drain.ts; added compatibly to version 1). */
  readonly draining?: DrainStatusJson;
}

export interface AdvertisedJson {
  readonly prefix: string;
  readonly nextHop: string | null;
  readonly asPath: readonly number[];
  readonly med: number | null;
  readonly localPref: number | null;
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
  /** "lb:…", "rt:…", "soo:…", "0x…". */
  readonly extendedCommunities: readonly string[];
  /** What caused the route: the plan's reasons, or the local peer it was re-advertised from. */
  readonly reasons: readonly unknown[];
}

export type RoutesJson = Omit<PlanJson, 'peers'> & {
  readonly peers: readonly (PlanJson['peers'][number] & {
    readonly state: PeerState | null;
    readonly advertised: readonly AdvertisedJson[];
    /**
     * Planned for this peer (`exports`) and not in `advertised` yet: its session is not Established, or the
     * agent holds its first advertisements until its peers' End-of-RIB (at most 15 s after a start).
     */
    readonly pending: readonly string[];
  })[];
};

/** What the agent knows at one moment, for its views: the plan being worked toward, the one applied, and what went wrong. */
export interface AgentSnapshot {
  readonly node: string;
  readonly running: boolean;
  readonly startedAt: Date;
  /** The planner's current plan. */
  readonly planned: Plan;
  /** The plan the speaker was last given (undefined before the first reconcile). */
  readonly applied: Plan | undefined;
  readonly issues: readonly ManifestIssue[];
  readonly failures: readonly ApplyFailure[];
  /** Settings that need a restart of the agent (reported, not applied). */
  readonly restartNeeded: readonly ErrorJson[];
  /** Re-advertised routes, in prefix order (a getter: only the views that show them pay for it). */
  readonly redistributed: readonly Redistributed[];
  /** `--listen-port` (overrides the plan's). */
  readonly listenPort: number | undefined;
  readonly speakerOptions: SpeakerOptions | undefined;
  readonly source: SourceStatus;
  /** The speaker's sessions ([] before it runs). */
  readonly sessions: readonly PeerStatus[];
  /** What the speaker sends a peer ([] before it runs). */
  readonly advertised: (peer: string) => readonly AdvertisedRoute[];
  /** Kernel route programming; null when off. */
  readonly kernel?: KernelStatusJson | null;
  /** What the kernel side learned and holds (a getter: only `plan` pays for it); undefined when off. */
  readonly kernelLive?: KernelLive;
  /** The agent's --max-prefixes (undefined: the default; null: none). */
  readonly maxPrefixes?: AgentMaxPrefixes | null;
  /** The drain in progress, if any. */
  readonly draining?: DrainStatusJson;
}

const failureJson = (f: ApplyFailure): ErrorJson => ({
  file: null,
  kind: null,
  namespace: null,
  name: null,
  field: null,
  message: `speaker refused ${f.op} ${f.target}: ${f.message}`,
});

/** Every error the agent has now: invalid objects, the plan's errors, peers it refused, what the speaker refused, restarts needed. */
export function currentErrors(s: AgentSnapshot): ErrorJson[] {
  const plan = s.planned;
  return [
    ...s.issues.filter((i) => i.severity === 'error').map(issueJson),
    ...plan.errors.map(planErrorJson),
    ...runnablePeers(plan)
      .refused.filter((r) => !r.byPlanner)
      .map(refusalJson),
    ...s.failures.map(failureJson),
    ...s.restartNeeded,
  ];
}

/** `tsbgp status --json`: the speaker's sessions, then the peers not started. */
export function statusJson(s: AgentSnapshot): StatusJson {
  const plan = s.applied ?? s.planned;
  // By address and port: one address may have a session per port.
  const byKey = new Map(plan.peers.map((p) => [plannedPeerKey(p), p]));
  const seen = new Set(s.sessions.map((x) => peerKey(x.address, x.port)));
  const peers: StatusPeerJson[] = s.sessions.map((x) => statusPeerJson(x, byKey.get(peerKey(x.address, x.port))));
  for (const r of runnablePeers(s.planned).refused) {
    const p = s.planned.peers.find((x) => x.id === r.id)!;
    if (seen.has(plannedPeerKey(p))) continue;
    seen.add(plannedPeerKey(p));
    peers.push({
      id: r.id,
      address: r.address,
      port: p.port,
      asn: p.asn,
      family: p.address.family,
      type: p.type,
      state: 'Idle',
      since: s.startedAt.toISOString(),
      info: `Not started: ${r.message}`,
      refused: true,
    });
  }
  const so = s.speakerOptions;
  return {
    version: 1,
    node: s.node,
    running: s.running,
    startedAt: s.startedAt.toISOString(),
    speaker: so ? { asn: so.asn, routerId: so.routerId, listenPort: so.listen === false ? 0 : (so.listen?.port ?? 179) } : null,
    peers,
    errors: currentErrors(s),
    warnings: [...s.issues.filter((i) => i.severity === 'warning').map(issueJson), ...filterWarnings(s.planned).map(filterWarningJson)],
    refused: s.planned.refused.map(refusedJson),
    source: sourceJson(s.source),
    ...(s.kernel !== undefined ? { kernel: s.kernel } : {}),
    ...(s.draining !== undefined ? { draining: s.draining } : {}),
  };
}

/** `tsbgp plan` as the control socket answers it: the planner's plan, with every current error. */
export function agentPlanJson(s: AgentSnapshot): PlanJson {
  const kernel = s.kernelLive;
  return {
    ...planJson(s.planned, {
      issues: s.issues,
      redistributed: s.redistributed,
      listenPort: s.listenPort,
      maxPrefixes: s.maxPrefixes,
      ...(kernel !== undefined ? { kernel } : {}),
    }),
    errors: currentErrors(s),
  };
}

/** `tsbgp routes PEER` named a peer the plan does not have. */
export class NoSuchPeer extends Error {}

/** `tsbgp routes [PEER]`: the applied plan's peers with what the speaker sends each, and why. Throws for a peer not planned. */
export function routesJson(s: AgentSnapshot, peer?: string): RoutesJson {
  const plan = s.applied ?? s.planned;
  const base = planJson(plan, { issues: s.issues, redistributed: s.redistributed, listenPort: s.listenPort, maxPrefixes: s.maxPrefixes });
  const live = new Map(s.sessions.map((x) => [peerKey(x.address, x.port), x]));
  const redistributed = new Map(s.redistributed.map((r) => [r.prefix.toString(), r]));
  const reasonsFor = (prefix: Prefix): readonly unknown[] => {
    const r = plan.routes.find((x) => x.prefix.equals(prefix));
    if (r) return routeJson(r, plan).reasons;
    const d = redistributed.get(prefix.toString());
    return d ? [{ kind: 'Redistributed', peer: d.from, text: `re-advertised from local peer ${d.from}` }] : [];
  };
  const peers = base.peers
    .filter((p) => peer === undefined || p.address === peer)
    .map((p) => {
      const advertised = p.refused ? [] : s.advertised(peerKey(p.address, p.port));
      const sent = new Set(advertised.map((a) => a.prefix.toString()));
      return {
        ...p,
        state: live.get(peerKey(p.address, p.port))?.state ?? null,
        pending: p.exports.filter((x) => !sent.has(x)),
        advertised: advertised.map((a) => ({
          prefix: a.prefix.toString(),
          nextHop: a.nextHop ?? null,
          asPath: [...a.asPath],
          med: a.med ?? null,
          localPref: a.localPref ?? null,
          communities: [...a.communities],
          largeCommunities: [...a.largeCommunities],
          extendedCommunities: [...(a.extendedCommunities ?? [])],
          reasons: reasonsFor(a.prefix),
        })),
      };
    });
  if (peer !== undefined && peers.length === 0)
    throw new NoSuchPeer(`no planned peer ${peer} (peers: ${base.peers.map((p) => p.address).join(', ') || 'none'})`);
  return { ...base, errors: currentErrors(s), peers };
}
