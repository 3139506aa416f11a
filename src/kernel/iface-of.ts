/**
 * The interface the kernel's table sends an address out of (pure), from the
 * routes the speaker learns (the connected networks and other programs'
 * routes, such as Felix's /32 routes to local workloads): what BIRD's
 * `gateway recursive` resolves a BGP next hop through, which is the route's
 * `ifname` in its filters. The longest prefix holding the address wins (the
 * lowest metric among equals); a route that sends nowhere (blackhole,
 * unreachable) or out of several interfaces gives none.
 */
import { Address, Prefix } from '../net/index.js';
import type { LearnedKernelRoute } from './types.js';

export function ifaceOf(address: Address, routes: Iterable<LearnedKernelRoute>): string | undefined {
  let best: { length: number; metric: number; dev: string | undefined } | undefined;
  for (const { route } of routes) {
    let p: Prefix;
    try {
      p = Prefix.parse(route.prefix);
    } catch {
      continue;
    }
    if (p.family !== address.family || !p.contains(address)) continue;
    if (best !== undefined && (p.length < best.length || (p.length === best.length && route.metric >= best.metric))) continue;
    best = { length: p.length, metric: route.metric, dev: route.type === 'unicast' ? oneDev(route.nexthops) : undefined };
  }
  return best?.dev;
}

/** The one interface of a route's next hops; undefined when none says or they go out of several. */
function oneDev(hops: readonly { readonly dev?: string }[]): string | undefined {
  const dev = hops[0]?.dev;
  return dev !== undefined && hops.every((h) => h.dev === dev) ? dev : undefined;
}
