/**
 * The reconciler: from the plan the speaker holds and the new plan, the
 * speaker operations that turn one into the other. Pure: plain data in,
 * plain data out; the agent shell carries the operations out.
 */
import type { Prefix } from '../net/index.js';
import type { MaxPrefixLimit, PeerOptions, RouteAttributes } from '../speaker/index.js';
import { formatCommunity, formatExtendedCommunity, formatLargeCommunity, linkBandwidth } from '../wire/index.js';
import { localPrefForMetric } from '../kernel/index.js';
import { peerChain, planFilters } from './filters.js';
import type { Plan, PlannedPeer, PlannedRoute } from './plan-types.js';
import { diffPlans } from './planner.js';
import type { BGPFilter } from './resources.js';
import { servicePolicy, withServicePolicy } from './service-policy.js';

export interface PeerOp {
  readonly options: PeerOptions;
  readonly peer: PlannedPeer;
  /** For updates: the fields that changed (whether the speaker resets the session is its rule: sessionKey in src/speaker/peer-config.ts). */
  readonly changed: readonly string[];
}

export interface RouteOp {
  readonly prefix: Prefix;
  readonly attrs: RouteAttributes;
  readonly route: PlannedRoute;
}

export interface PeerRefusal {
  readonly id: string;
  readonly address: string;
  readonly kind: 'BGPPeer' | 'Node';
  readonly name: string;
  readonly field: string;
  readonly message: string;
  /** The planner refused it (and already lists it in `plan.errors`); else the agent did. */
  readonly byPlanner: boolean;
}

export interface Operations {
  readonly addPeers: readonly PeerOp[];
  readonly updatePeers: readonly PeerOp[];
  readonly removePeers: readonly string[];
  /** New routes and routes whose communities changed (re-originated). */
  readonly originate: readonly RouteOp[];
  readonly withdraw: readonly Prefix[];
  /** Peers not started, and why (the planner's refusals plus the agent's own). */
  readonly refusedPeers: readonly PeerRefusal[];
}

export interface ReconcileOptions {
  /** Max-prefix limits for every peer (the agent's --max-prefixes, src/agent/max-prefixes.ts); undefined: none. */
  readonly maxPrefixes?: PeerOptions['maxPrefixes'];
}

/** The same max-prefix limit for both families; undefined for none. */
export function perFamily(l: MaxPrefixLimit | null): PeerOptions['maxPrefixes'] {
  return l === null ? undefined : { ipv4: l, ipv6: l };
}

/** The speaker's view of a planned peer. */
export function peerOptions(
  p: PlannedPeer,
  maxPrefixes?: PeerOptions['maxPrefixes'],
  filters: readonly BGPFilter[] = [],
  servicePolicyActive = false,
): PeerOptions {
  const o: {
    -readonly [K in keyof PeerOptions]: PeerOptions[K];
  } = {
    address: p.address.toString(),
    port: p.port,
    asn: p.asn,
    localAsn: p.localAsn,
    description: `${p.id} (${p.type})`,
    families: [p.address.family === 4 ? 'ipv4' : 'ipv6'],
    passive: p.passive,
    gracefulRestart: p.gracefulRestart
      ? { restartTime: p.maxRestartTime, ...(p.longLivedStaleTime !== undefined ? { longLivedStaleTime: p.longLivedStaleTime } : {}) }
      : false,
    routeReflectorClient: p.routeReflectorClient,
    // The planner folds the deprecated keepOriginalNextHop into nextHopMode (eBGP only, as Calico).
    keepNextHop: p.nextHopMode === 'Keep',
    nextHopSelf: p.nextHopMode === 'Self',
  };
  if (p.addPaths !== 'off') o.addPath = p.addPaths;
  if (p.keepaliveTime !== undefined) o.keepaliveTime = p.keepaliveTime;
  if (p.numAllowedLocalASNumbers !== undefined) o.allowOwnAs = p.numAllowedLocalASNumbers;
  if (p.sourceAddress !== undefined) o.localAddress = p.sourceAddress.toString();
  if (p.bfd !== undefined) o.bfd = { minRx: p.bfd.minRx, minTx: p.bfd.minTx, multiplier: p.bfd.multiplier, passive: p.bfd.passive };
  if (p.passwordValue !== undefined) o.password = p.passwordValue.reveal();
  if (p.ttlSecurity !== undefined && p.ttlSecurity > 0) o.ttlSecurity = p.ttlSecurity;
  // The BGPPeer's tsbgp.io/max-prefixes annotation wins over the agent's --max-prefixes.
  const limits = p.maxPrefixes !== undefined ? perFamily(p.maxPrefixes) : maxPrefixes;
  if (limits !== undefined) o.maxPrefixes = limits;
  // The chains of the peer's family (src/kubernetes/filters.ts); empty when none of its filters acts on it.
  // The Service routing policy (service-policy.ts) goes first in every export chain while any Service uses it.
  if (p.filters.length > 0) o.importPolicies = [...peerChain(p, 'import', filters).policies];
  if (p.filters.length > 0 || servicePolicyActive)
    o.exportPolicies = withServicePolicy(p.filters.length > 0 ? [...peerChain(p, 'export', filters).policies] : [], servicePolicyActive);
  return o;
}

/** The fields whose values differ between two option sets (deep, order-sensitive). */
function changedFields(a: PeerOptions, b: PeerOptions): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof PeerOptions>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

/**
 * The attributes to originate a planned route with: its prefixAdvertisements
 * communities as exportCommunities / exportLargeCommunities (added after the
 * export policy), a Service's as communities / largeCommunities. With the plan's normal route
 * priority (Calico v3.32), LOCAL_PREF 2147483647 − it (src/kernel/metric.ts):
 * iBGP peers install the route with that metric.
 */
export function routeAttributes(r: PlannedRoute, normalRoutePriority?: { readonly v4: number; readonly v6: number }): RouteAttributes {
  const s = r.shaping;
  // The prefixAdvertisements communities are added after the peer's export policy, as
  // Calico's BIRD adds them after its BGPFilter functions (a BGPFilter rule never sees them);
  // a Service's own communities are part of the route the policy sees.
  const early = texts(s?.communities ?? []);
  const late = texts(r.communities);
  // A Service's tsbgp.io/local-preference wins over the normal route priority's LOCAL_PREF.
  const localPref =
    s?.localPref ??
    (normalRoutePriority !== undefined ? localPrefForMetric(r.prefix.family === 4 ? normalRoutePriority.v4 : normalRoutePriority.v6) : undefined);
  const lb = s?.linkBandwidth;
  return {
    origin: 'igp',
    communities: early.communities,
    ...(early.largeCommunities.length > 0 ? { largeCommunities: early.largeCommunities } : {}),
    ...addedAfterPolicy(late),
    ...(localPref !== undefined ? { localPref } : {}),
    ...(s?.med !== undefined ? { med: s.med } : {}),
    ...(lb ? { extendedCommunities: [formatExtendedCommunity(linkBandwidth(lb.asn, lb.bytesPerSecond))] } : {}),
  };
}

/**
 * Communities added after the peer's export policy (prefixAdvertisements ones,
 * as Calico's BIRD adds them after its BGPFilter functions), as the attributes
 * the speaker adds them from; none when there are none.
 */
export function addedAfterPolicy(c: {
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
}): Pick<RouteAttributes, 'exportCommunities' | 'exportLargeCommunities'> {
  return {
    ...(c.communities.length > 0 ? { exportCommunities: c.communities } : {}),
    ...(c.largeCommunities.length > 0 ? { exportLargeCommunities: c.largeCommunities } : {}),
  };
}

/**
 * Standard communities (literal, named or well-known values alike) and large
 * ones (`aa:nn:mm`) apart, each once, in the one text form the speaker parses
 * (src/wire/communities.ts).
 */
function texts(values: PlannedRoute['communities']): { communities: string[]; largeCommunities: string[] } {
  const communities: string[] = [];
  const largeCommunities: string[] = [];
  for (const c of values) {
    const text = c.type === 'large' ? formatLargeCommunity(c.value) : formatCommunity(c.value);
    const to = c.type === 'large' ? largeCommunities : communities;
    if (!to.includes(text)) to.push(text);
  }
  return { communities, largeCommunities };
}

/**
 * How the agent names a planned peer to the speaker: its address, with
 * `:port` (`[v6]:port`) when the port is not 179, so one address can have a
 * session per port (`BgpSpeaker.removePeer` takes either form).
 */
export function plannedPeerKey(p: PlannedPeer): string {
  return peerKey(p.address.toString(), p.port);
}

/** `plannedPeerKey` from an address in canonical text and a port (e.g. a speaker's PeerStatus). */
export function peerKey(address: string, port: number): string {
  if (port === 179) return address;
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/**
 * The peers of a plan the speaker should run, keyed by `plannedPeerKey`
 * (address and port), and those it must not: refused by the planner, naming
 * filters that do not compile, or a second peering to an address and port
 * already taken (the first in plan order wins).
 */
export function runnablePeers(plan: Plan | undefined): { peers: Map<string, PlannedPeer>; refused: PeerRefusal[] } {
  const peers = new Map<string, PlannedPeer>();
  const refused: PeerRefusal[] = [];
  for (const p of plan?.peers ?? []) {
    const address = p.address.toString();
    const base = { id: p.id, address, kind: p.from.kind, name: p.from.name };
    if (p.refused || p.refusedSettings.length > 0) {
      for (const s of p.refusedSettings) refused.push({ ...base, field: s.field, message: s.message, byPlanner: true });
      if (p.refusedSettings.length === 0) refused.push({ ...base, field: '', message: 'peer refused by the planner', byPlanner: true });
      continue;
    }
    const broken = p.filters.filter((f) => plan && planFilters(plan).errors.has(f));
    if (broken.length > 0 && plan) {
      const errs = planFilters(plan).errors;
      refused.push({
        ...base,
        field: 'spec.filters',
        message: `${broken.map((f) => errs.get(f)).join('; ')}; the peer is not started rather than run unfiltered`,
        byPlanner: false,
      });
      continue;
    }
    const key = plannedPeerKey(p);
    const other = peers.get(key);
    if (other) {
      refused.push({
        ...base,
        field: 'spec.peerIP',
        message: `address ${address} port ${p.port} is already peered by ${other.id}; one session per address and port`,
        byPlanner: false,
      });
      continue;
    }
    peers.set(key, p);
  }
  return { peers, refused };
}

/**
 * Peers whose port alone changed: the only peer at their address before and
 * after, under another key. An update (the speaker resets the session on the
 * new port), not a remove and an add. After key → before key.
 */
function portMoves(before: ReadonlyMap<string, PlannedPeer>, after: ReadonlyMap<string, PlannedPeer>): Map<string, string> {
  const byAddress = (m: ReadonlyMap<string, PlannedPeer>) => {
    const out = new Map<string, string[]>();
    for (const [k, p] of m) {
      const a = p.address.toString();
      const ks = out.get(a);
      if (ks) ks.push(k);
      else out.set(a, [k]);
    }
    return out;
  };
  const moved = new Map<string, string>();
  const olds = byAddress(before);
  for (const [address, keys] of byAddress(after)) {
    const was = olds.get(address);
    if (keys.length === 1 && was?.length === 1 && keys[0] !== was[0]) moved.set(keys[0], was[0]);
  }
  return moved;
}

/** The operations that move a speaker from `prev` (undefined: nothing yet) to `next`. */
export function reconcile(prev: Plan | undefined, next: Plan, opts: ReconcileOptions = {}): Operations {
  const before = runnablePeers(prev).peers;
  const { peers: after, refused } = runnablePeers(next);
  const addPeers: PeerOp[] = [];
  const updatePeers: PeerOp[] = [];
  const removePeers: string[] = [];
  const activeBefore = prev !== undefined && servicePolicy(prev).active;
  const activeAfter = servicePolicy(next).active;
  const moved = portMoves(before, after);
  for (const [key, p] of after) {
    const options = peerOptions(p, opts.maxPrefixes, next.filters, activeAfter);
    const old = before.get(key) ?? before.get(moved.get(key) ?? '');
    if (!old) {
      addPeers.push({ options, peer: p, changed: [] });
      continue;
    }
    const changed = changedFields(peerOptions(old, opts.maxPrefixes, prev?.filters, activeBefore), options);
    if (changed.length > 0) updatePeers.push({ options, peer: p, changed });
  }
  const movedFrom = new Set(moved.values());
  for (const key of before.keys()) if (!after.has(key) && !movedFrom.has(key)) removePeers.push(key);

  const empty: Plan = { ...next, routes: [] };
  const diff = diffPlans(prev ?? empty, next);
  // A new normal route priority changes every originated route's LOCAL_PREF.
  const nrp = (p: Plan | undefined) => JSON.stringify(p?.kernel?.normalRoutePriority ?? null);
  const originate = (prev !== undefined && nrp(prev) !== nrp(next) ? [...next.routes] : [...diff.added, ...diff.changed])
    .sort((a, b) => a.prefix.compare(b.prefix))
    .map((route) => ({ prefix: route.prefix, attrs: routeAttributes(route, next.kernel?.normalRoutePriority), route }));
  const withdraw = diff.removed.map((r) => r.prefix).sort((a, b) => a.compare(b));
  return { addPeers, updatePeers, removePeers, originate, withdraw, refusedPeers: refused };
}
