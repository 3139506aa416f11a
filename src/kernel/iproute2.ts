/**
 * iproute2's language, both ways, as pure functions: kernel operations as
 * `ip -batch` lines, `ip -json route` dumps and `ip -o -N monitor` lines as
 * kernel routes, and `ip -force -batch` error output as one reason per line.
 */
import { Prefix } from '../net/index.js';
import { canonicalV6Prefix } from './addr-text.js';
import { sortNextHops } from './next-hops.js';
import type { ConnectedRoute, KernelEvent, KernelOp, KernelRoute, LearnedKernelRoute, NextHop, RouteType } from './types.js';

/** Netlink route types (RTN_*) as `ip -N` prints them. */
const TYPE_NUMBERS: Record<string, RouteType> = { '1': 'unicast', '6': 'blackhole', '7': 'unreachable', '8': 'prohibit' };
const TYPE_NAMES = new Set(['unicast', 'blackhole', 'unreachable', 'prohibit', 'local', 'broadcast', 'anycast', 'multicast', 'throw', 'nat', 'xresolve']);

function routeType(t: string | undefined): RouteType {
  if (t === undefined) return 'unicast';
  return TYPE_NUMBERS[t] ?? (t === 'unicast' || t === 'blackhole' || t === 'unreachable' || t === 'prohibit' ? t : 'other');
}

/** "default", a bare host address or a prefix → canonical prefix; undefined when it is none. */
const V4_OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** A bare IPv4 address already in canonical form (no leading zeros): its /32 needs no parsing. */
const CANONICAL_V4 = new RegExp(`^(?:${V4_OCTET}\\.){3}${V4_OCTET}$`);

function canonicalPrefix(dst: string, family: 4 | 6): string | undefined {
  if (dst === 'default') return family === 4 ? '0.0.0.0/0' : '::/0';
  if (family === 4 && CANONICAL_V4.test(dst)) return `${dst}/32`;
  if (family === 6) {
    const fast = canonicalV6Prefix(dst);
    if (fast !== undefined) return fast;
  }
  try {
    return Prefix.parse(dst, { allowBareAddress: true }).toString();
  } catch {
    return undefined;
  }
}

/** One `ip -batch` line. */
export function formatOp(op: KernelOp, table: number, protocol: number): string {
  const r = op.route;
  const head =
    `route ${op.op === 'replace' ? 'replace' : 'del'}` +
    `${r.type === 'unicast' ? '' : ` ${r.type === 'other' ? 'unicast' : r.type}`} ${r.prefix} table ${table} proto ${protocol} metric ${r.metric}`;
  if (op.op === 'delete' || r.type !== 'unicast') return head;
  if (r.nexthops.length === 1) return `${head}${hop(r.nexthops[0])}`;
  return `${head}${r.nexthops.map((h) => ` nexthop${hop(h)}`).join('')}`;
}

function hop(h: NextHop): string {
  return `${h.via !== undefined ? ` via ${h.via}` : ''}${h.dev !== undefined ? ` dev ${h.dev}` : ''}${h.onlink ? ' onlink' : ''}`;
}

interface JsonHop {
  gateway?: string;
  dev?: string;
  flags?: string[];
}
interface JsonRoute extends JsonHop {
  type?: string;
  dst?: string;
  metric?: number;
  protocol?: string;
  nexthops?: JsonHop[];
  scope?: string;
}

function jsonHop(h: JsonHop): NextHop {
  return {
    ...(h.gateway !== undefined ? { via: h.gateway } : {}),
    ...(h.dev !== undefined ? { dev: h.dev } : {}),
    ...(h.flags?.includes('onlink') ? { onlink: true } : {}),
  };
}

/**
 * `ip -N -j route show table T` (one family) → the routes of other programs
 * (BIRD's `learn`): not ours (`protocol`), not the kernel's own (2), not
 * unspecified or redirects (0, 1). iproute2 leaves out `proto boot` (3).
 */
export function parseLearnedDump(text: string, family: 4 | 6, ours: number): LearnedKernelRoute[] {
  const t = text.trim();
  if (t === '') return [];
  const out: LearnedKernelRoute[] = [];
  for (const r of JSON.parse(t) as JsonRoute[]) {
    const protocol = r.protocol === undefined ? 3 : Number(r.protocol);
    if (!isLearnedProtocol(protocol, ours)) continue;
    const prefix = canonicalPrefix(r.dst ?? '', family);
    if (prefix === undefined) continue;
    const type = routeType(r.type);
    const nexthops =
      r.nexthops !== undefined ? r.nexthops.map(jsonHop) : r.gateway !== undefined || (r.dev !== undefined && type === 'unicast') ? [jsonHop(r)] : [];
    out.push({ source: 'kernel', protocol, route: { prefix, type, metric: r.metric ?? 0, nexthops: sortNextHops(nexthops) } });
  }
  return out;
}

/** A route of this protocol is someone else's, learned as BIRD's `learn` does (not ours, not the kernel's, not unspec or redirect). */
export function isLearnedProtocol(protocol: number, ours: number): boolean {
  return Number.isInteger(protocol) && protocol > 2 && protocol !== ours;
}

/** `ip -j route show table T proto P` (one family) → our routes. */
export function parseRouteDump(text: string, family: 4 | 6): KernelRoute[] {
  const t = text.trim();
  if (t === '') return [];
  const rows = JSON.parse(t) as JsonRoute[];
  const out: KernelRoute[] = [];
  for (const r of rows) {
    const prefix = canonicalPrefix(r.dst ?? '', family);
    if (prefix === undefined) continue;
    const type = routeType(r.type);
    const nexthops =
      r.nexthops !== undefined ? r.nexthops.map(jsonHop) : r.gateway !== undefined || (r.dev !== undefined && type === 'unicast') ? [jsonHop(r)] : [];
    out.push({ prefix, type, metric: r.metric ?? 0, nexthops: sortNextHops(nexthops) });
  }
  return out;
}

/** `ip -j route show table main proto kernel` (one family) → connected networks. */
export function parseConnectedDump(text: string, family: 4 | 6): ConnectedRoute[] {
  const t = text.trim();
  if (t === '') return [];
  const out: ConnectedRoute[] = [];
  for (const r of JSON.parse(t) as JsonRoute[]) {
    const prefix = canonicalPrefix(r.dst ?? '', family);
    if (prefix === undefined || r.dev === undefined || r.gateway !== undefined || (r.type !== undefined && r.type !== 'unicast' && r.type !== '1')) continue;
    out.push({ prefix, dev: r.dev });
  }
  return out;
}

/** `ip -j route get A` → how the kernel reaches A. */
export function parseRouteGet(text: string): { via?: string; dev: string } | undefined {
  const rows = JSON.parse(text.trim() || '[]') as JsonRoute[];
  const r = rows[0];
  if (r === undefined || r.dev === undefined || (r.type !== undefined && r.type !== 'unicast' && r.type !== '1')) return undefined;
  return r.gateway !== undefined ? { via: r.gateway, dev: r.dev } : { dev: r.dev };
}

/** What one monitor line says (the listener's event: types.ts). */
export type MonitorEvent = KernelEvent;

/**
 * A route line's destination and the rest. The rest (type, protocol, table,
 * metric, next hops) is the same for every route written alike, so a
 * parse of it is kept (a bounded memo) and only the destination is read
 * per line: most lines are the echoes of a batch of similar routes.
 */
const ROUTE_HEAD = /^(Deleted )?([0-9.]+|[0-9a-f]*:[0-9a-f:.]*)(\/\d{1,3})? (.*)$/i;
const LINK_HEAD = /^(?:Deleted )?\d+:\s/;
const tails = new Map<
  string,
  {
    readonly deleted: boolean;
    readonly table: number;
    readonly protocol: number;
    readonly type: RouteType;
    readonly metric: number;
    readonly nexthops: readonly NextHop[];
  }
>();

/** One line of `ip -o -N monitor route link`. */
export function parseMonitorLine(line: string): MonitorEvent {
  const m = LINK_HEAD.test(line) ? null : ROUTE_HEAD.exec(line);
  if (m === null) return parseMonitorLineFully(line);
  const family: 4 | 6 = m[2].includes(':') ? 6 : 4;
  const key = `${m[1] !== undefined ? 'D' : ''}${family}${m[4]}`;
  const known = tails.get(key);
  if (known !== undefined) {
    const prefix = canonicalPrefix(`${m[2]}${m[3] ?? ''}`, family);
    if (prefix !== undefined)
      return {
        kind: 'route',
        deleted: known.deleted,
        table: known.table,
        protocol: known.protocol,
        route: { prefix, type: known.type, metric: known.metric, nexthops: known.nexthops },
      };
  }
  const ev = parseMonitorLineFully(line);
  // Only a line whose family the destination alone decides (an IPv4 destination with an IPv6 next hop is read as IPv6).
  if (ev.kind === 'route' && (family === 6) === ev.route.prefix.includes(':')) {
    if (tails.size >= 256) tails.clear();
    tails.set(key, { deleted: ev.deleted, table: ev.table, protocol: ev.protocol, type: ev.route.type, metric: ev.route.metric, nexthops: ev.route.nexthops });
  }
  return ev;
}

function parseMonitorLineFully(line: string): MonitorEvent {
  let rest = line.replace(/\\\t/g, ' \u0001 ').replace(/\\/g, ' ').trim();
  let deleted = false;
  if (rest.startsWith('Deleted ')) {
    deleted = true;
    rest = rest.slice(8).trim();
  }
  const link = /^\d+:\s+([^:@\s]+)(?:@[^:\s]+)?:\s+</.exec(rest);
  if (link) return { kind: 'link', name: link[1], deleted };
  const tok = rest.split(/\s+/).filter((x) => x !== '');
  let i = 0;
  let type: RouteType = 'unicast';
  if (tok[i] !== undefined && (/^\d+$/.test(tok[i]) || TYPE_NAMES.has(tok[i]))) type = routeType(tok[i++]);
  const dst = tok[i++];
  if (dst === undefined) return { kind: 'other' };
  const family: 4 | 6 = dst.includes(':') || tok.some((x) => x.includes(':') && /^[0-9a-f:]+$/i.test(x)) ? 6 : 4;
  const prefix = canonicalPrefix(dst, family);
  if (prefix === undefined) return { kind: 'other' };
  let table = 254;
  let protocol = 0;
  let metric = 0;
  const hops: NextHop[] = [];
  let cur: { via?: string; dev?: string; onlink?: boolean } = {};
  let multi = false;
  for (; i < tok.length; i++) {
    const t = tok[i];
    const v = tok[i + 1];
    if (t === '\u0001' || t === 'nexthop') {
      if (multi || cur.via !== undefined || cur.dev !== undefined) hops.push(cur);
      cur = {};
      multi = true;
      if (t === '\u0001' && tok[i + 1] === 'nexthop') i++;
    } else if (t === 'via') {
      // `via inet6 X` in mixed-family next hops
      if (v === 'inet' || v === 'inet6') i++;
      cur.via = tok[++i];
    } else if (t === 'dev') cur.dev = tok[++i];
    else if (t === 'table') ((table = tableNumber(v) ?? -1), i++);
    else if (t === 'proto') ((protocol = Number(v)), i++);
    else if (t === 'metric') ((metric = Number(v)), i++);
    else if (t === 'onlink') cur.onlink = true;
    else if (t === 'weight' || t === 'scope' || t === 'src' || t === 'pref' || t === 'mtu' || t === 'expires' || t === 'realm' || t === 'realms') i++;
  }
  if (multi || cur.via !== undefined || (cur.dev !== undefined && type === 'unicast')) hops.push(cur);
  const nexthops = sortNextHops(
    hops
      .filter((h) => h.via !== undefined || h.dev !== undefined)
      .map((h) => ({
        ...(h.via !== undefined ? { via: h.via } : {}),
        ...(h.dev !== undefined ? { dev: h.dev } : {}),
        ...(h.onlink ? { onlink: true } : {}),
      })),
  );
  return { kind: 'route', deleted, table, protocol: Number.isFinite(protocol) ? protocol : -1, route: { prefix, type, metric, nexthops } };
}

const TABLE_NAMES: Record<string, number> = { main: 254, local: 255, default: 253 };

/** A table given by name or number → its number; undefined when unknown (names from rt_tables are the caller's). */
export function tableNumber(t: string | undefined): number | undefined {
  if (t === undefined) return undefined;
  if (/^\d+$/.test(t)) return Number(t);
  return TABLE_NAMES[t];
}

/** Reads `name number` lines of an rt_tables file. */
export function parseRtTables(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const x = /^\s*(\d+)\s+(\S+)/.exec(line.replace(/#.*/, ''));
    if (x) m.set(x[2], Number(x[1]));
  }
  return m;
}

/**
 * `ip -force -batch -` error output → the reason per failed line (1-based).
 * Each failure is reported as its message lines followed by
 * `Command failed -:N`.
 */
export function parseBatchErrors(stderr: string): Map<number, string> {
  const out = new Map<number, string>();
  let acc: string[] = [];
  for (const raw of stderr.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const m = /^Command failed (?:\S*):(\d+)$/.exec(line);
    if (m) {
      out.set(Number(m[1]), acc.join(' ').replace(/^Error: /, '') || 'failed (no reason given)');
      acc = [];
    } else acc.push(line);
  }
  return out;
}
