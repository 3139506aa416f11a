/**
 * Next hops as plain values, shared by the core (fib-core.ts, resolver.ts)
 * and the codecs that read and write them (rtnetlink.ts, iproute2.ts): one
 * order and one equality for every place that compares routes.
 */
import type { KernelRoute, NextHop } from './types.js';

/** A next hop's identity as text: gateway, device, onlink. */
export function hopKey(h: NextHop): string {
  return `${h.via ?? ''}|${h.dev ?? ''}|${h.onlink ? 1 : 0}`;
}

/** Sorts in place by `hopKey` (each key built once). */
export function sortNextHops(hops: NextHop[]): NextHop[] {
  if (hops.length < 2) return hops;
  if (hops.length === 2) {
    if (hopKey(hops[0]) > hopKey(hops[1])) hops.reverse();
    return hops;
  }
  const keyed = hops.map((h) => ({ h, k: hopKey(h) }));
  keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
  for (let i = 0; i < hops.length; i++) hops[i] = keyed[i].h;
  return hops;
}

/** The same route: prefix, type, metric and next hops (in the same order). */
export function sameRoute(a: KernelRoute, b: KernelRoute): boolean {
  return a.prefix === b.prefix && a.type === b.type && a.metric === b.metric && sameHops(a.nexthops, b.nexthops);
}

/** The same next hops, in the same order (as `sameRoute` compares them). */
export function sameHops(a: readonly NextHop[], b: readonly NextHop[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    // as hopKey(x) === hopKey(y), without building the keys
    if (x !== y && ((x.via ?? '') !== (y.via ?? '') || (x.dev ?? '') !== (y.dev ?? '') || !x.onlink !== !y.onlink)) return false;
  }
  return true;
}

/** `h` is in `hops` already (the same object, or the same gateway, device and onlink). */
export function hasHop(hops: readonly NextHop[], h: NextHop): boolean {
  for (const x of hops) if (x === h || (x.via === h.via && x.dev === h.dev && !x.onlink === !h.onlink)) return true;
  return false;
}
