/**
 * The kernel's view of the benchmark's routes, as kernel-bgp.ts counts it:
 * pure, fed lines of `ip -ts -o monitor route` (each with `ip`'s timestamp)
 * and, after the monitor lost notifications, a dump (`ip -o -4 route show
 * table main`) that replaces what the lost lines would have said.
 *
 * Why a dump: `ip monitor`'s socket overruns when the kernel notifies faster
 * than it reads ("netlink receive error No buffer space available"), and
 * iproute2 (6.1 here) sizes its buffer with SO_RCVBUF, which the kernel caps
 * at net.core.rmem_max (a host-wide setting, not writable inside a network
 * namespace on this kernel). A lost notification must not make a row wrong
 * nor fail it: the view is read again from the kernel, and the monitor's
 * later lines (each one a whole route's state) bring it up to date again.
 */

/** One route's state as a monitor or dump line gives it; undefined for a line that is not a route of ours. */
export interface RouteLine {
  /** `ip`'s timestamp in ms (wall clock); undefined for a dump line. */
  readonly at: number | undefined;
  readonly dst: string;
  readonly deleted: boolean;
  /** Next hops (0 when deleted). */
  readonly hops: number;
  /** The probe route kernel-bgp.ts adds and deletes to see that the monitor runs. */
  readonly probe: boolean;
}

export const PROBE = '203.0.113.99';

/**
 * Parses one line, with or without `ip -ts`'s "[2026-12-04T17:46:45.141511] "
 * prefix: "[Deleted ]198.18.0.1 proto bgp metric 32 \tnexthop via … \tnexthop via …".
 * Routes in another table than main, and lines that are not routes, are undefined.
 */
export function parseRouteLine(raw: string): RouteLine | undefined {
  let line = raw;
  let at: number | undefined;
  if (line.startsWith('[')) {
    const close = line.indexOf('] ');
    if (close < 0) return undefined;
    const stamp = line.slice(1, close);
    // Date parses milliseconds; the microseconds are added by hand.
    const ms = new Date(stamp.length > 23 ? stamp.slice(0, 23) : stamp).getTime();
    if (Number.isNaN(ms)) return undefined;
    const us = /\.\d{3}(\d+)$/.exec(stamp)?.[1];
    at = ms + (us ? Number(`0.${us}`) : 0);
    line = line.slice(close + 2);
  }
  const deleted = line.startsWith('Deleted ');
  if (deleted) line = line.slice(8);
  const sp = line.indexOf(' ');
  const dst = sp < 0 ? line : line.slice(0, sp);
  if (dst === PROBE) return { at, dst, deleted, hops: 0, probe: true };
  if (!/^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(dst) || line.includes(' table ')) return undefined;
  let hops = 0;
  if (!deleted) {
    for (let i = line.indexOf('nexthop via'); i >= 0; i = line.indexOf('nexthop via', i + 11)) hops++;
    if (hops === 0 && line.includes(' via ')) hops = 1;
  }
  return { at, dst, deleted, hops, probe: false };
}

export class RouteView {
  /** Next hops per prefix of ours in the main table. */
  readonly hops = new Map<string, number>();
  /** Prefixes with two next hops. */
  two = 0;
  /** Notifications about the benchmark's prefixes (a route written twice, one next hop then two, counts twice). */
  events = 0;
  /** Times the view was read again from a dump (each after the monitor lost notifications). */
  resyncs = 0;
  probed = false;

  constructor(private readonly ours: (dst: string) => boolean) {}

  /** A monitor line; true if it changed the view. */
  line(raw: string): boolean {
    const r = parseRouteLine(raw);
    if (r === undefined) return false;
    if (r.probe) {
      this.probed = true;
      return false;
    }
    if (!this.ours(r.dst)) return false;
    this.events++;
    this.set(r.dst, r.deleted ? 0 : r.hops);
    return true;
  }

  /**
   * Replaces the view by a dump's (`ip -o -4 route show table main`). Lines
   * the monitor wrote while the dump was read are applied after it, in order,
   * so each route ends in its latest state.
   */
  resync(dump: string): void {
    this.resyncs++;
    const seen = new Set<string>();
    for (const raw of dump.split('\n')) {
      const r = parseRouteLine(raw);
      if (r === undefined || r.probe || r.deleted || !this.ours(r.dst)) continue;
      seen.add(r.dst);
      this.set(r.dst, r.hops);
    }
    for (const dst of [...this.hops.keys()]) if (!seen.has(dst)) this.set(dst, 0);
  }

  private set(dst: string, after: number): void {
    const before = this.hops.get(dst) ?? 0;
    if (after === 0) this.hops.delete(dst);
    else this.hops.set(dst, after);
    this.two += (after === 2 ? 1 : 0) - (before === 2 ? 1 : 0);
  }
}

/** True for what `ip monitor` prints on stderr when its socket overran (the kernel dropped notifications). */
export const isOverrun = (stderr: string): boolean => /No buffer space available|ENOBUFS/.test(stderr);

/** `ip -ts`'s timestamp, local time to the microsecond: "2026-12-04T17:46:45.141511". */
export function ipStamp(epochMs: number): string {
  const total = Math.round(epochMs * 1000); // µs since the epoch: exact in a double until the year 2255
  const seconds = Math.floor(total / 1e6);
  const us = total - seconds * 1e6;
  const d = new Date(seconds * 1000);
  const p = (v: number, w = 2) => String(v).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(us, 6)}`;
}

/**
 * A decoded route notification as a line `parseRouteLine` reads the same as
 * `ip -ts -o monitor route`'s (a /32 without its length, as ip prints it).
 */
export function routeEventLine(
  epochMs: number,
  e: {
    readonly deleted: boolean;
    readonly table: number;
    readonly route: { readonly prefix: string; readonly nexthops: readonly { readonly via?: string; readonly dev?: string }[] };
  },
): string {
  const dst = e.route.prefix.endsWith('/32') ? e.route.prefix.slice(0, -3) : e.route.prefix;
  const hop = (h: { via?: string; dev?: string }) => `${h.via !== undefined ? `via ${h.via} ` : ''}${h.dev !== undefined ? `dev ${h.dev} ` : ''}`;
  const hops = e.route.nexthops.length === 1 ? hop(e.route.nexthops[0]) : e.route.nexthops.map((h) => `\tnexthop ${hop(h)}`).join('');
  return `[${ipStamp(epochMs)}] ${e.deleted ? 'Deleted ' : ''}${dst} ${e.table !== 254 ? `table ${e.table} ` : ''}${hops}`;
}
