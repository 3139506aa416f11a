/**
 * Redistribution (pure): which routes received from local peers (a MetalLB
 * or GoBGP speaker on 127.0.0.1 or the node's own address) this node
 * re-advertises. A route is taken when Calico's built-in export accepts it
 * (inside an IP pool, disabled pools included, or a service range; never
 * inside a disableBGPExport pool nor a more-specific of a local block) and
 * the plan does not originate the prefix itself.
 */
import { builtinExport, plannedRoute, type Plan } from '../kubernetes/index.js';
import { Address, type Prefix } from '../net/index.js';
import type { ReceivedRoute, RouteAttributes } from '../speaker/types.js';
import { runnablePeers } from './reconcile.js';
import type { Redistributed } from './views.js';

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
 * The local peers of a plan that the speaker runs. A peering with another
 * cluster node (mesh, or a BGPPeer selecting nodes) is never local, even on
 * a loopback address (several agents on one host, as in examples/demo.ts).
 */
export function localPeers(plan: Plan): Set<string> {
  const nodes = new Set(plan.peers.filter((p) => p.remoteNode !== undefined || p.type === 'node-to-node mesh').map((p) => p.address.toString()));
  return new Set([...runnablePeers(plan).peers.keys()].filter((a) => isLocalPeer(plan, a) && !nodes.has(a)));
}

/**
 * The routes to re-advertise, one per prefix (the best received one, else the
 * first), in prefix order. Stale routes (a local peer restarting gracefully)
 * are kept, as graceful restart intends.
 */
export function desiredRedistribution(plan: Plan, received: readonly ReceivedRoute[]): Redistributed[] {
  const locals = localPeers(plan);
  const byPrefix = new Map<number | string, ReceivedRoute>();
  for (const r of received) {
    if (!locals.has(r.peer)) continue;
    if (plannedRoute(plan, r.prefix)) continue;
    if (!builtinExport(plan, r.prefix).accept) continue;
    const have = byPrefix.get(r.prefix.key);
    if (!have || (r.best && !have.best)) byPrefix.set(r.prefix.key, r);
  }
  return [...byPrefix.values()].sort((a, b) => a.prefix.compare(b.prefix)).map((r) => ({ prefix: r.prefix, from: r.peer, communities: [...r.communities] }));
}

export function redistributedAttributes(r: Redistributed): RouteAttributes {
  return { origin: 'igp', communities: [...r.communities] };
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
    if (!have || JSON.stringify(have.communities) !== JSON.stringify(r.communities)) originate.push(r);
  }
  for (const [k, r] of current) {
    if (want.has(k)) continue;
    if (plannedRoute(plan, r.prefix)) forget.push(k);
    else withdraw.push(r.prefix);
  }
  return { originate, withdraw, forget };
}
