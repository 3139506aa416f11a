/**
 * One case of Calico's corpus, both ways, reduced to the same four views:
 * the peers (and their settings), what each peer is sent of what the node
 * originates (prefix and communities), the routes the node originates, and
 * what the kernel is given (programming decisions and static routes).
 */
import { bgpPeers, bgpRoute, communitiesOf, FilterRunner, parseItems, prefixWithin, staticRoute, staticRoutes, type Item, type Route } from './bird-config.js';
import type { Plan } from '../../src/kubernetes/plan-types.js';
import type { PlanJson } from '../../src/agent/views.js';
import { peerOptions } from '../../src/kubernetes/reconcile.js';

export interface PeerView {
  readonly asn: number;
  readonly localAsn: number;
  readonly passive: boolean;
  readonly password: string | null;
  readonly ttlSecurity: number;
  readonly nextHop: string;
  readonly rrClient: boolean;
  readonly rrClusterId: string | null;
  readonly sourceAddress: string | null;
  readonly restartTime: number;
  readonly allowLocalAs: number | null;
  /** RFC 7911 ADD-PATH offered: off, receive, send or both. */
  readonly addPaths: string;
}

/** The four views of one side. Keys are sorted strings so that a difference reads as text. */
export interface View {
  /** The BGP router ID (compared under peers: the identity every session carries); null: none. */
  readonly routerId: string | null;
  /** `address:port` → settings. */
  readonly peers: ReadonlyMap<string, PeerView>;
  /** `address:port` → sorted `prefix[communities]`. */
  readonly sent: ReadonlyMap<string, readonly string[]>;
  readonly routes: readonly string[];
  /** Sorted lines: `probe prefix via next hop → outcome`, `static …`, `priority v4 N`. */
  readonly kernel: readonly string[];
  /** Peers refused for the one documented difference (a password whose Secret or key is missing: refused, not run unprotected). */
  readonly allowed?: ReadonlySet<string>;
}

const BIRD_DEFAULT_RESTART = 120;
const OUTSIDE = { 4: '203.0.113.1', 6: '2001:db8::1' } as const;

function fam(p: string): 4 | 6 {
  return p.includes(':') ? 6 : 4;
}

/** The prefixes the kernel decisions are probed with: every prefix either side's rules or statics name. */
export function probePrefixes(expected: Record<string, string>, plan: Plan): string[] {
  const set = new Set<string>();
  for (const text of Object.values(expected)) for (const m of text.matchAll(/net ~ ([0-9a-fA-F:.]+\/\d+)/g)) set.add(m[1]);
  for (const r of plan.kernel?.rules ?? []) set.add(r.prefix);
  for (const s of plan.kernel?.statics ?? []) set.add(s.prefix);
  return [...set].sort();
}

function entry(prefix: string, communities: readonly string[]): string {
  return communities.length > 0 ? `${prefix}[${[...communities].sort().join(' ')}]` : prefix;
}

/** What Calico's BIRD configuration does, for the node whose subnet holds `inside` (an address next hops in the subnet use). */
export function birdView(files: Record<string, string>, probes: readonly string[], inside: { 4?: string; 6?: string }): View {
  const peers = new Map<string, PeerView>();
  const sent = new Map<string, string[]>();
  const routes: string[] = [];
  const kernel: string[] = [];
  let routerId: string | null = null;
  for (const f of [4, 6] as const) {
    const suffix = f === 4 ? '' : '6';
    const text = ['', '_aggr', '_ipam'].map((s) => files[`bird${suffix}${s}.cfg`] ?? '').join('\n');
    if (text.trim() === '') continue;
    const items: Item[] = parseItems(text);
    // `router id X;` (BIRD and BIRD6 are given the same one); an empty value (no IPv4 address, no CALICO_ROUTER_ID) is none.
    routerId ??= items.find((i) => i.kind === 'router' && i.words?.[1] === 'id')?.words?.[2] ?? null;
    const runner = new FilterRunner(items);
    const statics = staticRoutes(items);
    const originated = statics.filter((s) => s.blackhole);
    for (const s of originated) routes.push(s.prefix);
    for (const p of bgpPeers(items)) {
      const key = `${p.address}:${p.port}`;
      peers.set(key, {
        asn: p.asn,
        localAsn: p.localAsn ?? -1,
        passive: p.passive,
        password: p.password ?? null,
        ttlSecurity: p.ttlSecurity,
        nextHop: p.nextHop,
        rrClient: p.rrClient,
        rrClusterId: p.rrClusterId ?? null,
        sourceAddress: p.sourceAddress ?? null,
        restartTime: p.gracefulRestartTime ?? BIRD_DEFAULT_RESTART,
        allowLocalAs: p.allowLocalAs ?? null,
        addPaths: p.addPaths,
      });
      const out: string[] = [];
      for (const s of originated) {
        const r = staticRoute(s.prefix);
        if (runner.run(p.exportFilter, r) === 'accept') out.push(entry(s.prefix, communitiesOf(r)));
      }
      sent.set(key, out.sort());
    }
    if (runner.hasFilter('calico_kernel_programming')) {
      const kp = { kind: 'named' as const, name: 'calico_kernel_programming' };
      for (const probe of probes.filter((p) => fam(p) === f)) {
        for (const [where, nh] of [
          ['inside', inside[f]],
          ['outside', OUTSIDE[f]],
        ] as const) {
          if (nh === undefined) continue;
          const r = bgpRoute(probe, nh);
          kernel.push(`${probe} via ${where} → ${kernelOutcome(runner.run(kp, r), r)}`);
        }
      }
      for (const s of statics) {
        if (runner.run(kp, staticRoute(s.prefix)) === 'accept') kernel.push(`static ${s.prefix} ${s.blackhole ? 'blackhole' : `via ${s.via}`}`);
      }
      // The metric BGP routes without LOCAL_PREF get: the normal route priority (of the families the node has an address in).
      if (inside[f] === undefined) continue;
      const r = bgpRoute(OUTSIDE[f] + (f === 4 ? '/32' : '/128'), OUTSIDE[f]);
      r.attrs.delete('bgp_local_pref');
      runner.run(kp, r);
      const m = r.attrs.get('krt_metric');
      kernel.push(`priority v${f} ${m?.k === 'num' ? m.v : 'unset'}`);
    }
  }
  return { routerId, peers, sent, routes: routes.sort(), kernel: kernel.sort() };
}

function kernelOutcome(v: string, r: Route): string {
  if (v !== 'accept') return 'not programmed';
  const t = r.attrs.get('krt_tunnel');
  return t?.k === 'str' && t.v !== '' ? `programmed via ${t.v}` : 'programmed';
}

/** What tsbgp's plan does, the same way. */
export function tsbgpView(plan: Plan, json: PlanJson, probes: readonly string[], inside: { 4?: string; 6?: string }): View {
  const peers = new Map<string, PeerView>();
  const sent = new Map<string, string[]>();
  const allowed = new Set<string>();
  const communities = new Map(plan.routes.map((r) => [r.prefix.toString(), r.communities.map((c) => c.text)]));
  plan.peers.forEach((p, i) => {
    const j = json.peers[i];
    const key = `${p.address}:${p.port}`;
    if (p.refusedSettings.length > 0 && p.refusedSettings.every((r) => /password/i.test(r.field))) allowed.add(key);
    if (!j || j.refused) return;
    peers.set(key, {
      asn: p.asn,
      localAsn: p.localAsn,
      passive: p.passive,
      password: p.passwordValue?.reveal() ?? null,
      ttlSecurity: p.ttlSecurity ?? 0,
      // What the agent hands the speaker, as BIRD's next hop self/keep.
      nextHop: ((o) => (o.keepNextHop ? 'keep' : o.nextHopSelf ? 'self' : 'auto'))(peerOptions(p)),
      rrClient: p.routeReflectorClient,
      rrClusterId: p.routeReflectorClient ? (p.routeReflectorClusterId ?? null) : null,
      sourceAddress: p.sourceAddress?.toString() ?? null,
      restartTime: p.maxRestartTime,
      allowLocalAs: p.numAllowedLocalASNumbers ?? null,
      // What the agent hands the speaker (plan --json shows the same).
      addPaths: j.addPaths,
    });
    sent.set(key, j.exports.map((x) => entry(x, communities.get(x) ?? [])).sort());
  });
  const kernel: string[] = [];
  const k = plan.kernel;
  if (k) {
    for (const probe of probes) {
      const f = fam(probe);
      for (const [where, nh] of [
        ['inside', inside[f]],
        ['outside', OUTSIDE[f]],
      ] as const) {
        if (nh === undefined) continue;
        const rule = k.rules.find((r) => fam(r.prefix) === f && prefixWithin(probe, r.prefix));
        let outcome = 'programmed';
        if (rule?.action === 'reject') outcome = 'not programmed';
        else if (rule?.action === 'accept' && rule.tunnel && !(rule.tunnel.unlessWithin ?? []).some((w) => prefixWithin(nh, w)))
          outcome = `programmed via ${rule.tunnel.dev}`;
        kernel.push(`${probe} via ${where} → ${outcome}`);
      }
    }
    for (const s of k.statics) kernel.push(`static ${s.prefix} ${'blackhole' in s ? 'blackhole' : `via ${s.via}`}`);
    for (const f of [4, 6] as const)
      if (inside[f] !== undefined) kernel.push(`priority v${f} ${f === 4 ? k.normalRoutePriority.v4 : k.normalRoutePriority.v6}`);
  }
  return { routerId: json.routerId, peers, sent, routes: plan.routes.map((r) => r.prefix.toString()).sort(), kernel: kernel.sort(), allowed };
}

export type Dimension = 'peers' | 'sent' | 'routes' | 'kernel';
export const DIMENSIONS: readonly Dimension[] = ['peers', 'sent', 'routes', 'kernel'];

/** The first difference of one dimension, in words; undefined when they agree. */
export function firstDifference(d: Dimension, calico: View, tsbgp: View): string | undefined {
  if (d === 'routes') return listDiff(calico.routes, tsbgp.routes);
  if (d === 'kernel') {
    // BIRD writes the priority only into a kernel filter; compare the probes both sides made.
    return listDiff(calico.kernel, tsbgp.kernel);
  }
  if (d === 'peers') {
    if (calico.routerId !== tsbgp.routerId) return `router id: Calico ${JSON.stringify(calico.routerId)}, tsbgp ${JSON.stringify(tsbgp.routerId)}`;
    const keys = [...new Set([...calico.peers.keys(), ...tsbgp.peers.keys()])].sort();
    for (const key of keys) {
      const c = calico.peers.get(key);
      const t = tsbgp.peers.get(key);
      if (!c) return `peer ${key}: tsbgp has it, Calico does not`;
      if (!t && tsbgp.allowed?.has(key)) continue;
      if (!t) return `peer ${key}: Calico has it, tsbgp does not`;
      for (const f of Object.keys(c) as (keyof PeerView)[]) {
        if (c[f] !== t[f]) return `peer ${key} ${f}: Calico ${JSON.stringify(c[f])}, tsbgp ${JSON.stringify(t[f])}`;
      }
    }
    return undefined;
  }
  // sent: over the peers both sides have (a missing peer counts under peers).
  for (const key of [...calico.sent.keys()].sort()) {
    const t = tsbgp.sent.get(key);
    if (t === undefined) continue;
    const diff = listDiff(calico.sent.get(key)!, t);
    if (diff) return `to ${key}: ${diff}`;
  }
  return undefined;
}

function listDiff(a: readonly string[], b: readonly string[]): string | undefined {
  const sa = new Set(a);
  const sb = new Set(b);
  const missing = a.filter((x) => !sb.has(x));
  const extra = b.filter((x) => !sa.has(x));
  if (missing.length === 0 && extra.length === 0) return undefined;
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`Calico only: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` (+${missing.length - 3})` : ''}`);
  if (extra.length > 0) parts.push(`tsbgp only: ${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ` (+${extra.length - 3})` : ''}`);
  return parts.join('; ');
}
