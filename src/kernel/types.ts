/**
 * The kernel layer's plain data: routes as the kernel holds them, routes as
 * we want them, and the operations that take one to the other. Prefixes and
 * addresses are canonical strings (Prefix/Address `toString()`), which is
 * what iproute2 prints and what a Map can key on.
 */

/** A next hop as the kernel holds it. */
export interface NextHop {
  /** Gateway address; absent for a device route (`dev X` only). */
  readonly via?: string;
  readonly dev?: string;
  /** RTNH_F_ONLINK: the gateway is taken as reachable on `dev` (Calico's `tunl0` routes). */
  readonly onlink?: boolean;
}

export type RouteType = 'unicast' | 'blackhole' | 'unreachable' | 'prohibit' | 'other';

/** One route of our protocol in our table, as the kernel reports it (or as we mean to write it). */
export interface KernelRoute {
  /** Canonical prefix, e.g. "198.51.100.0/24". */
  readonly prefix: string;
  readonly type: RouteType;
  readonly metric: number;
  /** Sorted (see `sortNextHops`); empty for a blackhole. */
  readonly nexthops: readonly NextHop[];
}

/** A gateway as routing chose it, before resolution against connected routes. */
export interface Gateway {
  readonly address: string;
  /** Given: use this interface (a link-local IPv6 next hop needs one). */
  readonly dev?: string;
  /** With `dev`: onlink, no resolution (an IPIP tunnel). */
  readonly onlink?: boolean;
  /** The BGP peer the path came from: its interface serves a link-local next hop without `dev`. */
  readonly peer?: string;
}

/** What should be in the kernel for one prefix (`metric`: this route's own, else the FIB's for its family). */
export type DesiredRoute =
  { readonly kind: 'unicast'; readonly gateways: readonly Gateway[]; readonly metric?: number } | { readonly kind: 'blackhole'; readonly metric?: number };

/** A directly connected network (the kernel's `proto kernel` routes). */
export interface ConnectedRoute {
  readonly prefix: string;
  readonly dev: string;
}

/** The kernel's own answer to "how do I reach this address" (`ip route get`), for recursive next hops. */
export type Lookup = { readonly ok: true; readonly via?: string; readonly dev: string } | { readonly ok: false; readonly reason: string };

export type KernelOp = { readonly op: 'replace'; readonly route: KernelRoute } | { readonly op: 'delete'; readonly route: KernelRoute };

/** Why a desired route is not in the kernel. */
export interface Refusal {
  readonly prefix: string;
  readonly reason: string;
  /** 'resolve': we did not try (no usable next hop); 'kernel': the kernel said no. */
  readonly by: 'resolve' | 'kernel';
}

/**
 * A change the kernel told us about (whoever made it), as either listener
 * reports it: rtnetlink notifications decoded in-process (rtnetlink.ts) or
 * `ip -o -N monitor` lines (iproute2.ts, the fallback).
 */
export type KernelEvent =
  | { readonly kind: 'route'; readonly deleted: boolean; readonly table: number; readonly protocol: number; readonly route: KernelRoute }
  | { readonly kind: 'link'; readonly name: string; readonly deleted: boolean }
  | { readonly kind: 'other' };

/**
 * A route of another program in our table (BIRD's `learn`: Felix's routes to
 * local workloads, say), or a connected network (`source: 'direct'`, the
 * kernel's own route of an interface's subnet, protocol 2).
 */
export interface LearnedKernelRoute {
  readonly source: 'kernel' | 'direct';
  readonly protocol: number;
  readonly route: KernelRoute;
}
