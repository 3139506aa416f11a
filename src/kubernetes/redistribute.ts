/**
 * Redistribution (pure): which routes received from local peers (a MetalLB
 * or GoBGP speaker on 127.0.0.1 or the node's own address, or a pod peering by
 * a BGPPeer's localWorkloadSelector) this node
 * re-advertises. A route is taken when Calico's built-in export accepts it
 * (inside an IP pool, disabled pools included, or a service range; never
 * inside a disableBGPExport pool nor a more-specific of a local block) and
 * the plan does not originate the prefix itself.
 *
 * `Redistribution` (src/agent/redistribution.ts) keeps what is re-advertised
 * and paces the passes; each pass's operations come from here.
 */
import { Address, type Prefix } from '../net/index.js';
import { isNonTransitive, parseExtendedCommunity } from '../wire/index.js';
import type { OriginateOptions, ReceivedRoute, RouteAttributes } from '../speaker/index.js';
import { builtinExport, kernelExports, learnedJson, plannedRoute, type LearnedJson, type LearnedRoute } from './export.js';
import type { Plan } from './plan-types.js';
import { addedAfterPolicy, runnablePeers } from './reconcile.js';

/** A route re-advertised: received from a local peer, or learned from the kernel. */
export interface Redistributed {
  readonly prefix: Prefix;
  /** The local peer's address, or `kernel` for a route learned from the kernel's table. */
  readonly from: string;
  /** Standard and large communities (`aa:nn`, `aa:nn:mm`), as the export policy sees them. */
  readonly communities: readonly string[];
  /**
   * A local peer's transitive extended communities, passed on as BIRD passes them. Absent when none.
   */
  readonly extendedCommunities?: readonly string[];
  /**
   * A local peer's non-transitive extended communities (link bandwidth, …), not passed on: the
   * re-advertised route goes to every peer alike, and RFC 4360 §2 keeps them from eBGP peers
   * (BIRD strips them towards eBGP, keeps them towards iBGP). Shown in `routes`; absent when none.
   */
  readonly withheldExtendedCommunities?: readonly string[];
  /** A route learned from the kernel (BIRD's `learn`): where it came from and why it is advertised. */
  readonly kernel?: LearnedJson;
  /** Advertised with this LOCAL_PREF (Calico v3.32: 2147483647 − the kernel route's metric). */
  readonly localPref?: number;
  /** From a local workload peer: its AS path, kept behind this node's AS on eBGP (as BIRD passes the route on). */
  readonly asPath?: readonly number[];
}

/**
 * The interface a re-advertised route goes out of (what a BGPFilter `interface` rule matches):
 * a kernel route's device; none for a local peer's route.
 */
export function redistributedIface(r: Redistributed): string | undefined {
  return r.kernel?.dev ?? undefined;
}

/** Loopback, or one of the node's own addresses. */
export function isLocalPeer(plan: Plan, address: string): boolean {
  let a: Address;
  try {
    a = Address.parse(address);
  } catch {
    return false;
  }
  if (a.family === 4 && a.w0 >>> 24 === 127) return true;
  if (a.family === 6 && a.w0 === 0 && a.w1 === 0 && a.w2 === 0 && a.w3 === 1) return true;
  return (plan.node.ipv4?.equals(a) ?? false) || (plan.node.ipv6?.equals(a) ?? false);
}

/**
 * The local peers of a plan that the speaker runs (computed once per plan:
 * it is asked for every received route). A peering with another
 * cluster node (mesh, or a BGPPeer selecting nodes) is never local, even on
 * a loopback address (several agents on one host, as in examples/demo.ts).
 */
export function localPeers(plan: Plan): ReadonlySet<string> {
  let s = localPeerSets.get(plan);
  if (!s) localPeerSets.set(plan, (s = computeLocalPeers(plan)));
  return s;
}
const localPeerSets = new WeakMap<Plan, ReadonlySet<string>>();

function computeLocalPeers(plan: Plan): Set<string> {
  const nodes = new Set(plan.peers.filter((p) => p.remoteNode !== undefined || p.type === 'node-to-node mesh').map((p) => p.address.toString()));
  // A pod on this node peering by localWorkloadSelector is local too: Calico's BIRD exports what it gets from one
  // to the other peers through the same built-in export (calico_export_to_bgp_peers).
  const runnable = [...runnablePeers(plan).peers.values()];
  return new Set(
    runnable
      .filter((p) => p.type === 'local workload' || (isLocalPeer(plan, p.address.toString()) && !nodes.has(p.address.toString())))
      .map((p) => p.address.toString()),
  );
}

/**
 * The routes to re-advertise, one per prefix (the best received one, else the
 * first), in prefix order. Stale routes (a local peer restarting gracefully)
 * are kept, as graceful restart intends. Then the routes learned from the
 * kernel that Calico's export takes (src/kubernetes/export.ts
 * `kernelExports`: a pod whose IP is borrowed from another node's block, a
 * /32 block), for prefixes no local peer sent (BIRD prefers BGP, 100, to
 * its kernel protocol, 10).
 */
export function desiredRedistribution(plan: Plan, received: readonly ReceivedRoute[], learned: readonly LearnedRoute[] = []): Redistributed[] {
  const locals = localPeers(plan);
  const workloads = workloadPeers(plan);
  const byPrefix = new Map<number | string, ReceivedRoute>();
  for (const r of received) {
    if (!locals.has(r.peer)) continue;
    if (plannedRoute(plan, r.prefix)) continue;
    if (!builtinExport(plan, r.prefix).accept) continue;
    const have = byPrefix.get(r.prefix.key);
    if (!have || (r.best && !have.best)) byPrefix.set(r.prefix.key, r);
  }
  const out: Redistributed[] = [...byPrefix.values()].map((r) => ({
    prefix: r.prefix,
    from: r.peer,
    // The route's attributes pass through, as BIRD's do: standard and large communities alike.
    communities: [...r.communities, ...r.largeCommunities],
    ...extendedOf(r.extendedCommunities ?? []),
    ...(workloads.has(r.peer) && r.asPath.length > 0 ? { asPath: [...r.asPath] } : {}),
  }));
  if (learned.length > 0) {
    for (const k of kernelExports(plan, learned)) {
      if (byPrefix.has(k.prefix.key)) continue;
      out.push({
        prefix: k.prefix,
        from: 'kernel',
        communities: (k.verdict.communities ?? []).map((c) => c.text),
        kernel: learnedJson(k.route, k.verdict),
        ...(k.verdict.localPref !== undefined ? { localPref: k.verdict.localPref } : {}),
      });
    }
  }
  return out.sort((a, b) => a.prefix.compare(b.prefix));
}

/** Extended communities split into those passed on (transitive) and those withheld (non-transitive). */
function extendedOf(texts: readonly string[]): Pick<Redistributed, 'extendedCommunities' | 'withheldExtendedCommunities'> {
  const pass: string[] = [];
  const withheld: string[] = [];
  for (const t of texts) (isNonTransitive(parseExtendedCommunity(t)) ? withheld : pass).push(t);
  return { ...(pass.length > 0 ? { extendedCommunities: pass } : {}), ...(withheld.length > 0 ? { withheldExtendedCommunities: withheld } : {}) };
}

/**
 * The addresses of a plan's local workload peers. A route from one keeps its AS path behind this
 * node's AS on eBGP sessions, as Calico's BIRD passes it on; so the pod itself, seeing its own AS,
 * does not take its network back (BIRD does not send it a route it sent).
 */
function workloadPeers(plan: Plan): ReadonlySet<string> {
  return new Set(plan.peers.filter((p) => p.type === 'local workload').map((p) => p.address.toString()));
}

/**
 * The attributes a re-advertised route is originated with. A kernel route's
 * communities are prefixAdvertisements ones, added after the export policy
 * as Calico's BIRD adds them; a local peer's are its own, part of the route
 * the policy sees.
 */
export function redistributedAttributes(r: Redistributed): RouteAttributes {
  const isLarge = (c: string) => c.split(':').length === 3;
  const split = { communities: r.communities.filter((c) => !isLarge(c)), largeCommunities: r.communities.filter(isLarge) };
  const communities =
    r.from === 'kernel'
      ? addedAfterPolicy(split)
      : {
          communities: split.communities,
          ...(split.largeCommunities.length > 0 ? { largeCommunities: split.largeCommunities } : {}),
          ...(r.extendedCommunities ? { extendedCommunities: [...r.extendedCommunities] } : {}),
        };
  return {
    origin: 'igp',
    ...communities,
    ...(r.localPref !== undefined ? { localPref: r.localPref } : {}),
    ...(r.asPath ? { asPath: [...r.asPath] } : {}),
  };
}

/**
 * How a re-advertised route is originated: a route learned from the kernel
 * carries its device, so a BGPFilter `interface` export rule matches it as
 * BIRD's `ifname` does (a local peer's route carries none).
 */
export function redistributedOptions(r: Redistributed): OriginateOptions {
  const dev = redistributedIface(r);
  return dev !== undefined ? { iface: dev } : {};
}

/** Originate what is new or changed, withdraw what left (unless the plan now originates it). */
export function redistributionOps(
  current: ReadonlyMap<string, Redistributed>,
  desired: readonly Redistributed[],
  plan: Plan,
): { originate: Redistributed[]; withdraw: Prefix[]; forget: string[] } {
  const want = new Map(desired.map((r) => [r.prefix.toString(), r]));
  const originate: Redistributed[] = [];
  const withdraw: Prefix[] = [];
  const forget: string[] = [];
  for (const [k, r] of want) {
    const have = current.get(k);
    const changed =
      !have ||
      JSON.stringify(have.communities) !== JSON.stringify(r.communities) ||
      JSON.stringify(have.extendedCommunities) !== JSON.stringify(r.extendedCommunities) ||
      have.localPref !== r.localPref ||
      redistributedIface(have) !== redistributedIface(r) ||
      JSON.stringify(have.asPath) !== JSON.stringify(r.asPath);
    if (changed) originate.push(r);
  }
  for (const [k, r] of current) {
    if (want.has(k)) continue;
    if (plannedRoute(plan, r.prefix)) forget.push(k);
    else withdraw.push(r.prefix);
  }
  return { originate, withdraw, forget };
}
