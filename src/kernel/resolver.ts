/**
 * FibCore's next-hop resolver (pure): a route's gateways → the kernel's next
 * hops, against the connected networks, the interfaces that exist and the
 * kernel's answers to `ip route get` (BIRD's `gateway direct`/`recursive`).
 * It remembers, within one plan, each gateway's answer and the last route's
 * outcome, so a million routes through a few next hops resolve them a few
 * times; `forget` starts the next plan.
 */
import { Address, Prefix } from '../net/index.js';
import { hasHop, sortNextHops } from './next-hops.js';
import type { ConnectedRoute, DesiredRoute, Gateway, Lookup, NextHop } from './types.js';

/** A unicast DesiredRoute. */
export type Unicast = Extract<DesiredRoute, { kind: 'unicast' }>;

interface Conn {
  readonly prefix: Prefix;
  readonly dev: string;
}

export class NextHopResolver {
  private connected: Conn[] = [];
  private links: ReadonlySet<string> | undefined;
  private readonly lookups = new Map<string, Lookup>();
  /**
   * Gateway resolutions within one plan: a next hop is shared by many routes,
   * and its answer depends only on the connected networks, the interfaces
   * and the lookups, which do not change during a plan.
   */
  private readonly resolvedGateways = new Map<string, { readonly g: Gateway; readonly h: NextHop | string | 'pending' }[]>();
  /** Sorted next-hop sets within one plan, by the identity of the resolved NextHops (see `sortedHops`). */
  private readonly hopSets = new Map<NextHop, { readonly alone: readonly NextHop[]; readonly with: Map<NextHop, readonly NextHop[]> }>();
  /**
   * The last unicast route resolved in this plan and its outcome: routes
   * come in runs with the same DesiredRoute object (or one with the same
   * gateways), whose next hops resolve the same way whatever the prefix.
   */
  private lastWant: Unicast | undefined;
  /** The outcome of the last `resolve`: the next hops (undefined: none resolved; then `pending`, or why in `reason`). */
  hops: readonly NextHop[] | undefined;
  /** No next hop resolved yet, and one waits for the kernel's lookup. */
  pending = false;
  reason = '';
  /** The members left out of `hops`, said as a note. */
  partial: string | undefined;

  /** `ecmp`: most next hops in one route; `recursive`: resolve through the kernel's lookup a next hop on no connected network. */
  constructor(
    readonly ecmp: number,
    readonly recursive: boolean,
  ) {}

  /** The directly connected networks (and, when known, the interfaces that exist); the lookups are forgotten. */
  setConnected(routes: readonly ConnectedRoute[], links?: ReadonlySet<string>): void {
    const conn: Conn[] = [];
    for (const r of routes) {
      try {
        conn.push({ prefix: Prefix.parse(r.prefix), dev: r.dev });
      } catch {
        // not a network (a kernel-internal entry): not a place next hops live
      }
    }
    conn.sort((a, b) => b.prefix.length - a.prefix.length);
    this.connected = conn;
    this.links = links;
    this.lookups.clear();
  }

  /** The kernel's answer for a next hop. */
  setLookup(address: string, answer: Lookup): void {
    this.lookups.set(address, answer);
  }

  /** True when `g` is on no connected network and the kernel has not been asked about it yet. */
  needsLookup(g: Gateway): boolean {
    if (g.onlink || this.lookups.has(g.address)) return false;
    let a: Address;
    try {
      a = Address.parse(g.address);
    } catch {
      return false;
    }
    return !a.isLinkLocal && this.connectedFor(a) === undefined;
  }

  /** Forgets what this plan resolved (the next plan may see other connected networks, interfaces or lookups). */
  forget(): void {
    this.resolvedGateways.clear();
    this.hopSets.clear();
    this.lastWant = undefined;
    this.hops = undefined;
    this.partial = undefined;
  }

  private connectedFor(a: Address): Conn | undefined {
    for (const c of this.connected) if (c.prefix.family === a.family && c.prefix.contains(a)) return c;
    return undefined;
  }

  /**
   * Resolves a unicast route's gateways into `hops` (undefined: none
   * resolved; then `pending`, or why in `reason`) and `partial`
   * (the members left out). The answer depends on the gateways only, so
   * the last one serves the next route with the same DesiredRoute, or
   * with gateways equal to its.
   */
  resolve(want: Unicast): void {
    const last = this.lastWant;
    if (want === last) return;
    if (last !== undefined && sameGateways(last.gateways, want.gateways)) {
      this.lastWant = want;
      return;
    }
    const hops: NextHop[] = [];
    let reasons: string[] | undefined;
    let pending = false;
    const n = Math.min(want.gateways.length, this.ecmp);
    for (let i = 0; i < n; i++) {
      const h = this.gateway(want.gateways[i]);
      if (h === 'pending') pending = true;
      else if (typeof h === 'string') (reasons ??= []).push(h);
      else if (!hasHop(hops, h)) hops.push(h);
    }
    this.lastWant = want;
    this.pending = false;
    this.partial = undefined;
    if (hops.length === 0) {
      this.hops = undefined;
      this.pending = pending;
      this.reason = reasons !== undefined ? reasons.join('; ') : 'no next hop';
      return;
    }
    this.hops = this.sortedHops(hops);
    if (reasons !== undefined) this.partial = `next hop(s) left out: ${reasons.join('; ')}`;
  }

  /** A gateway resolved, once per plan for every route through it (the same NextHop object each time). */
  private gateway(g: Gateway): NextHop | string | 'pending' {
    let known = this.resolvedGateways.get(g.address);
    if (known === undefined) this.resolvedGateways.set(g.address, (known = []));
    for (const x of known) if (x.g === g || (x.g.dev === g.dev && !x.g.onlink === !g.onlink && x.g.peer === g.peer)) return x.h;
    const h = this.resolveGateway(g);
    known.push({ g, h });
    return h;
  }

  /**
   * The sorted next hops of a route, shared within a plan by every route
   * with the same (resolved, so identical) one or two next hops: most routes
   * share their next hops, and a sort builds keys. Larger sets are sorted
   * each time.
   */
  private sortedHops(hops: NextHop[]): readonly NextHop[] {
    if (hops.length > 2) return sortNextHops(hops);
    let one = this.hopSets.get(hops[0]);
    if (one === undefined) this.hopSets.set(hops[0], (one = { alone: [hops[0]], with: new Map() }));
    if (hops.length === 1) return one.alone;
    let two = one.with.get(hops[1]);
    if (two === undefined) one.with.set(hops[1], (two = sortNextHops(hops)));
    return two;
  }

  private resolveGateway(g: Gateway): NextHop | string | 'pending' {
    let a: Address;
    try {
      a = Address.parse(g.address);
    } catch {
      return `next hop "${g.address}" is not an IP address`;
    }
    if (g.dev !== undefined && this.links !== undefined && !this.links.has(g.dev)) return `interface ${g.dev} does not exist (next hop ${g.address})`;
    if (g.onlink) {
      if (g.dev === undefined) return `onlink next hop ${g.address} needs an interface`;
      return { via: g.address, dev: g.dev, onlink: true };
    }
    if (a.isLinkLocal && a.family === 6) {
      if (g.dev !== undefined) return { via: g.address, dev: g.dev };
      const peer = g.peer !== undefined ? safeAddress(g.peer) : undefined;
      const c = peer !== undefined ? this.connectedFor(peer) : undefined;
      if (c !== undefined) return { via: g.address, dev: c.dev };
      return `IPv6 link-local next hop ${g.address} needs its interface (the peer${g.peer !== undefined ? ` ${g.peer}` : ''} is on no connected network)`;
    }
    const c = this.connectedFor(a);
    if (c !== undefined) return { via: g.address, dev: g.dev ?? c.dev };
    if (!this.recursive) return `next hop ${g.address} is on no connected network (recursive resolution is off)`;
    const l = this.lookups.get(g.address);
    if (l === undefined) return 'pending';
    if (!l.ok) return `next hop ${g.address} is on no connected network and the kernel cannot reach it: ${l.reason}`;
    // Recursive (BIRD's `gateway recursive`): through the gateway of the route covering the next hop.
    if (l.via === undefined) return { via: g.address, dev: l.dev };
    return { via: l.via, dev: l.dev };
  }
}

/** The same gateways in the same order (they resolve the same way). */
function sameGateways(a: readonly Gateway[], b: readonly Gateway[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x !== y && (x.address !== y.address || x.dev !== y.dev || !x.onlink !== !y.onlink || x.peer !== y.peer)) return false;
  }
  return true;
}

function safeAddress(s: string): Address | undefined {
  try {
    return Address.parse(s.replace(/%.*$/, ''));
  } catch {
    return undefined;
  }
}
