/**
 * The reconciler: from the plan the speaker holds and the new plan, the
 * speaker operations that turn one into the other. Pure: plain data in,
 * plain data out; the agent shell carries the operations out.
 */
import { perFamily } from './max-prefixes.js';
import { diffPlans, type Plan, type PlannedPeer, type PlannedRoute } from '../kubernetes/index.js';
import type { Prefix } from '../net/index.js';
import type { PeerOptions, RouteAttributes } from '../speaker/index.js';
import { formatCommunity, formatLargeCommunity } from '../wire/index.js';
import { localPrefForMetric } from '../kernel/index.js';
import { exportPolicyNames, importPolicyNames, planFilters } from './filters.js';

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
  /** Max-prefix limits for every peer (src/agent/max-prefixes.ts); undefined: none. */
  readonly maxPrefixes?: PeerOptions['maxPrefixes'];
}

/** The speaker's view of a planned peer. */
export function peerOptions(p: PlannedPeer, maxPrefixes?: PeerOptions['maxPrefixes']): PeerOptions {
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
    gracefulRestart: p.gracefulRestart ? { restartTime: p.maxRestartTime } : false,
    routeReflectorClient: p.routeReflectorClient,
    keepNextHop: p.nextHopMode === 'Keep' || p.keepOriginalNextHop,
    nextHopSelf: p.nextHopMode === 'Self',
  };
  if (p.keepaliveTime !== undefined) o.keepaliveTime = p.keepaliveTime;
  if (p.numAllowedLocalASNumbers !== undefined) o.allowOwnAs = p.numAllowedLocalASNumbers;
  if (p.sourceAddress !== undefined) o.localAddress = p.sourceAddress.toString();
  if (p.bfd !== undefined) o.bfd = { minRx: p.bfd.minRx, minTx: p.bfd.minTx, multiplier: p.bfd.multiplier, passive: p.bfd.passive };
  if (p.passwordValue !== undefined) o.password = p.passwordValue.reveal();
  if (p.ttlSecurity !== undefined && p.ttlSecurity > 0) o.ttlSecurity = p.ttlSecurity;
  // The BGPPeer's tsbgp.io/max-prefixes annotation wins over the agent's --max-prefixes.
  const limits = p.maxPrefixes !== undefined ? perFamily(p.maxPrefixes) : maxPrefixes;
  if (limits !== undefined) o.maxPrefixes = limits;
  if (p.filters.length > 0) {
    o.exportPolicies = exportPolicyNames(p);
    o.importPolicies = importPolicyNames(p);
  }
  return o;
}

/** The fields whose values differ between two option sets (deep, order-sensitive). */
function changedFields(a: PeerOptions, b: PeerOptions): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof PeerOptions>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

/**
 * The attributes to originate a planned route with: standard communities
 * (literal, named or well-known values alike) into `communities`, large ones
 * (`aa:nn:mm`) into `largeCommunities`, each in the one text form the
 * speaker parses (src/wire/communities.ts). With the plan's normal route
 * priority (Calico v3.32), LOCAL_PREF 2147483647 − it (src/kernel/metric.ts):
 * iBGP peers install the route with that metric.
 */
export function routeAttributes(r: PlannedRoute, normalRoutePriority?: { readonly v4: number; readonly v6: number }): RouteAttributes {
  const communities: string[] = [];
  const largeCommunities: string[] = [];
  for (const c of r.communities) {
    if (c.type === 'large') largeCommunities.push(formatLargeCommunity(c.value));
    else communities.push(formatCommunity(c.value));
  }
  const localPref = normalRoutePriority !== undefined ? localPrefForMetric(r.prefix.family === 4 ? normalRoutePriority.v4 : normalRoutePriority.v6) : undefined;
  return { origin: 'igp', communities, ...(largeCommunities.length > 0 ? { largeCommunities } : {}), ...(localPref !== undefined ? { localPref } : {}) };
}

/**
 * The peers of a plan the speaker should run, keyed by address (the
 * speaker's peer key), and those it must not: refused by the planner, naming
 * filters that do not compile, or a second peering to an address
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
    const other = peers.get(address);
    if (other) {
      refused.push({
        ...base,
        field: 'spec.peerIP',
        message: `address ${address} is already peered by ${other.id}; one session per address`,
        byPlanner: false,
      });
      continue;
    }
    peers.set(address, p);
  }
  return { peers, refused };
}

/** The operations that move a speaker from `prev` (undefined: nothing yet) to `next`. */
export function reconcile(prev: Plan | undefined, next: Plan, opts: ReconcileOptions = {}): Operations {
  const before = runnablePeers(prev).peers;
  const { peers: after, refused } = runnablePeers(next);
  const addPeers: PeerOp[] = [];
  const updatePeers: PeerOp[] = [];
  const removePeers: string[] = [];
  for (const [address, p] of after) {
    const options = peerOptions(p, opts.maxPrefixes);
    const old = before.get(address);
    if (!old) {
      addPeers.push({ options, peer: p, changed: [] });
      continue;
    }
    const changed = changedFields(peerOptions(old, opts.maxPrefixes), options);
    if (changed.length > 0) updatePeers.push({ options, peer: p, changed });
  }
  for (const address of before.keys()) if (!after.has(address)) removePeers.push(address);

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
