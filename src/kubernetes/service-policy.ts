/**
 * The per-peer part of Service routing (pure): a Service's
 * tsbgp.io/as-path-prepend (toward eBGP peers only: an iBGP peer in our AS
 * would see its own AS and drop the route) and tsbgp.io/peers /
 * tsbgp.io/peer-selector (which peers get the route) differ by peer, so they
 * are one export policy, `tsbgp-service-routing`, put first in every peer's
 * export chain while any Service uses them. The rest of a route's shaping
 * (communities, MED, LOCAL_PREF, link bandwidth) is the same toward every
 * peer and travels in the originated attributes (reconcile.ts).
 *
 * Changing it is a policy redefinition and an export-chain change: both
 * apply in place (soft reconfiguration), no session resets.
 */
import type { Plan } from './plan-types.js';
import type { PolicyConfigDef, StatementDef } from '../policy/index.js';

export const SERVICE_POLICY = 'tsbgp-service-routing';

export interface ServicePolicy {
  /** False when no route asks for a prepend or a peer choice: peers' chains stay as they were. */
  readonly active: boolean;
  readonly config: PolicyConfigDef;
  /** Changes exactly when `config` does. */
  readonly key: string;
}

const cache = new WeakMap<Plan['routes'], ServicePolicy>();

export function servicePolicy(plan: Plan): ServicePolicy {
  const hit = cache.get(plan.routes);
  if (hit) return hit;
  const groups = new Map<string, { peers?: readonly string[]; prepend?: number; prefixes: string[] }>();
  for (const r of plan.routes) {
    const s = r.shaping;
    if (!s || (s.peers === undefined && s.prepend === undefined)) continue;
    const key = JSON.stringify([s.peers ?? null, s.prepend ?? 0]);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { ...(s.peers ? { peers: s.peers } : {}), ...(s.prepend ? { prepend: s.prepend } : {}), prefixes: [] }));
    g.prefixes.push(r.prefix.toString());
  }
  const address = new Map(plan.peers.map((p) => [p.id, p.address.toString()]));
  const prefix: Record<string, string[]> = {};
  const neighbor: Record<string, string[]> = {};
  const statements: StatementDef[] = [];
  let i = 0;
  for (const g of groups.values()) {
    const set = `tsbgp-svc-${i}`;
    prefix[set] = g.prefixes;
    if (g.peers) {
      const addrs = g.peers.map((id) => address.get(id)).filter((a): a is string => a !== undefined);
      if (addrs.length > 0) {
        neighbor[`${set}-peers`] = addrs;
        statements.push({
          name: `${set}-peers`,
          conditions: { prefixSet: { set }, neighborSet: { set: `${set}-peers`, match: 'invert' } },
          actions: { result: 'reject' },
        });
      } else statements.push({ name: `${set}-peers`, conditions: { prefixSet: { set } }, actions: { result: 'reject' } });
    }
    if (g.prepend)
      statements.push({
        name: `${set}-prepend`,
        conditions: { prefixSet: { set }, peerType: 'ebgp', routeSource: 'local' },
        actions: { asPathPrepend: { asn: 'self', count: g.prepend } },
      });
    i++;
  }
  const config: PolicyConfigDef = { sets: { prefix, neighbor }, policies: { [SERVICE_POLICY]: { statements } } };
  const out: ServicePolicy = { active: statements.length > 0, config, key: JSON.stringify(config) };
  cache.set(plan.routes, out);
  return out;
}

/** A peer's export chain: the Service routing policy (while active) first, then its BGPFilters. */
export function withServicePolicy(names: readonly string[], active: boolean): string[] {
  return active ? [SERVICE_POLICY, ...names] : [...names];
}
