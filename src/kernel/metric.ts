/**
 * Calico v3.32's kernel metric for BGP routes (pure). confd's BGP processor
 * puts `SetMetricForBGPRoutes` into `calico_kernel_programming`: a route
 * learned over BGP without a metric gets
 *
 *     krt_metric = 2147483647 − bgp_local_pref
 *
 * and each export filter gives a route the node originates (a Felix route
 * with its `krt_metric`, or a static with none: the normal route priority)
 *
 *     bgp_local_pref = 2147483647 − krt_metric.
 *
 * The normal route priority is BGPConfiguration's `ipv4NormalRoutePriority`
 * / `ipv6NormalRoutePriority` (default 1024, the same as Felix's). So a
 * pod block from another node over the mesh (LOCAL_PREF 2147482623) goes
 * into the kernel with metric 1024, a Felix route elevated to 512 for a live
 * migration arrives with LOCAL_PREF 2147483135 and goes in with 512 — below
 * Felix's own 1024 for a local workload, so the kernel prefers it — and an
 * eBGP route (BIRD gives it LOCAL_PREF 100 when none came) gets
 * 2147483547. (BIRD also raises such a route's `preference` to 200 so that
 * it beats a local workload route it learned from the kernel; tsbgp imports
 * no kernel routes, and the kernel itself chooses by metric.)
 * Reference: calico-node-parity.md §1; projectcalico/calico
 * confd/pkg/backends/calico/bgp_processor.go.
 */

/** The largest value of a BIRD filter int. */
export const BIRD_INT_MAX = 2147483647;
/** BIRD's LOCAL_PREF for a BGP route that came without one (`default bgp_local_pref`). */
const BIRD_DEFAULT_LOCAL_PREF = 100;
/** Calico's and Felix's default normal route priority. */
export const NORMAL_ROUTE_PRIORITY = 1024;

/** The kernel metric of a learned route with this LOCAL_PREF (absent: BIRD's 100); a LOCAL_PREF above 2147483647 gives 0. */
export function metricForLocalPref(localPref: number | undefined): number {
  return Math.max(0, BIRD_INT_MAX - (localPref ?? BIRD_DEFAULT_LOCAL_PREF));
}

/** The LOCAL_PREF of a route the node originates, from its metric (default: the normal route priority). */
export function localPrefForMetric(metric: number = NORMAL_ROUTE_PRIORITY): number {
  if (!(Number.isInteger(metric) && metric >= 1 && metric <= BIRD_INT_MAX - 1))
    throw new RangeError(`route priority must be 1..${BIRD_INT_MAX - 1}, got ${metric}`);
  return BIRD_INT_MAX - metric;
}
