/**
 * The conformance suite's harness: a cluster written as the objects a user
 * applies (Calico's kinds, Kubernetes Nodes carrying calico-node's
 * annotations), planned for one node exactly as `tsbgp plan` does (the same
 * loader, validator and planner), and the plan reduced to everything a node
 * does: each peer with its settings and passive side and what it is sent,
 * the routes it originates, and what goes into the kernel — so that a
 * scenario pins the whole plan against what Calico's confd renders for the
 * same cluster (written from reading confd's code, never copied).
 */
import { loadTexts } from '../../../src/kubernetes/manifests.js';
import { stateOf } from '../../../src/kubernetes/state.js';
import { plan as planFor } from '../../../src/kubernetes/plan.js';
import { planJson, type PlanJson } from '../../../src/agent/views.js';
import { peerOptions } from '../../../src/kubernetes/reconcile.js';
import type { Plan } from '../../../src/kubernetes/plan-types.js';
import { Address, Prefix } from '../../../src/net/index.js';

export type Obj = Record<string, unknown>;
const V3 = 'projectcalico.org/v3';

/** A Kubernetes Node as calico-node annotates it. */
export function node(name: string, o: { ipv4?: string; ipv6?: string; asNumber?: number; rrClusterId?: string; labels?: Record<string, string> } = {}): Obj {
  const annotations: Record<string, string> = {};
  if (o.ipv4) annotations['projectcalico.org/IPv4Address'] = o.ipv4;
  if (o.ipv6) annotations['projectcalico.org/IPv6Address'] = o.ipv6;
  if (o.asNumber !== undefined) annotations['projectcalico.org/ASNumber'] = String(o.asNumber);
  if (o.rrClusterId) annotations['projectcalico.org/RouteReflectorClusterID'] = o.rrClusterId;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) }, annotations },
    spec: {},
    status: { addresses: o.ipv4 ? [{ type: 'InternalIP', address: o.ipv4.split('/')[0] }] : [] },
  };
}

export const bgpConfiguration = (spec: Obj, name = 'default'): Obj => ({ apiVersion: V3, kind: 'BGPConfiguration', metadata: { name }, spec });
export const bgpPeer = (name: string, spec: Obj): Obj => ({ apiVersion: V3, kind: 'BGPPeer', metadata: { name }, spec });
export const ipPool = (name: string, spec: Obj): Obj => ({
  apiVersion: V3,
  kind: 'IPPool',
  metadata: { name },
  spec: { ipipMode: 'Never', vxlanMode: 'Never', ...spec },
});
export const bgpFilter = (name: string, spec: Obj): Obj => ({ apiVersion: V3, kind: 'BGPFilter', metadata: { name }, spec });
/** An IPAM block affine to a node; no state is how IPAM writes a confirmed one. */
export const affinity = (nodeName: string, cidr: string, state?: 'confirmed' | 'pending'): Obj => ({
  apiVersion: V3,
  kind: 'BlockAffinity',
  metadata: { name: `${nodeName}-${cidr.replace(/[./:]/g, '-')}` },
  spec: { node: nodeName, cidr, ...(state ? { state } : {}) },
});
export const secret = (name: string, data: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'kube-system' },
  stringData: data,
});

export interface PeerWhole {
  /** Calico's protocol kinds: Mesh_, Global_ and Node_ (reverse peerings are node-specific ones). */
  readonly type: 'mesh' | 'global' | 'node' | 'workload';
  readonly asn: number;
  readonly localAsn: number;
  /** This node waits for the peer to connect. */
  readonly passive: boolean;
  readonly sourceAddress: string | null;
  readonly password: string | null;
  readonly ttlSecurity: number;
  readonly nextHop: 'auto' | 'self' | 'keep';
  readonly rrClient: boolean;
  readonly restartTime: number;
  readonly allowLocalAs: number | null;
  /** RFC 7911 ADD-PATH offered in OPEN, as the agent hands the speaker the session (BIRD `add paths`). */
  readonly addPaths: 'off' | 'receive' | 'send' | 'both';
  /** What this node sends the peer of what it originates: `prefix` or `prefix[communities]`, sorted. */
  readonly sent: readonly string[];
}

export interface Whole {
  /** Peers that run, by `address:port`. */
  readonly peers: Readonly<Record<string, PeerWhole>>;
  /** Originated routes, `prefix` or `prefix[communities]`, sorted. */
  readonly routes: readonly string[];
  readonly kernel: {
    /** `prefix via next hop` → `programmed`, `programmed via tunl0` or `not programmed`, for the probes asked. */
    readonly decisions: Readonly<Record<string, string>>;
    /** Routes the node itself puts into the kernel: `prefix blackhole`, `prefix via gateway`, sorted. */
    readonly statics: readonly string[];
    /** The kernel metric of routes from peers without a preference of their own (normalRoutePriority). */
    readonly priority: { readonly v4: number; readonly v6: number };
  };
  /** Every error of the plan (invalid objects, refused peers), as text. */
  readonly errors: readonly string[];
}

const TYPE = { 'node-to-node mesh': 'mesh', global: 'global', 'node specific': 'node', 'local workload': 'workload' } as const;

function entry(prefix: string, communities: readonly string[]): string {
  return communities.length > 0 ? `${prefix}[${[...communities].sort().join(' ')}]` : prefix;
}

/** The next-hop handling and ADD-PATH the session is given (what the agent hands the speaker, not the BGPPeer's words). */
function sessionOf(p: Plan['peers'][number]): Pick<PeerWhole, 'nextHop' | 'addPaths'> {
  const o = peerOptions(p);
  return { nextHop: o.keepNextHop ? 'keep' : o.nextHopSelf ? 'self' : 'auto', addPaths: o.addPath ?? 'off' };
}

/** Plans `nodeName` from `objects` as `tsbgp plan` does. */
export function planOf(nodeName: string, objects: readonly Obj[]): { plan: Plan; json: PlanJson } {
  const loaded = loadTexts([{ file: 'cluster.json', text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) }]);
  const plan = planFor(stateOf(loaded.resources), nodeName);
  return { plan, json: planJson(plan, { issues: loaded.issues }) };
}

/** The kernel decision for a route to `prefix` learned from a peer with next hop `nextHop`. */
export function kernelDecision(plan: Plan, prefix: string, nextHop: string): string {
  const p = Prefix.parse(prefix);
  const nh = Address.parse(nextHop);
  const rule = plan.kernel?.rules.find((r) => {
    const rp = Prefix.parse(r.prefix);
    return rp.family === p.family && rp.length <= p.length && rp.contains(p);
  });
  if (rule?.action === 'reject') return 'not programmed';
  if (rule?.action === 'accept' && rule.tunnel && !(rule.tunnel.unlessWithin ?? []).some((w) => Prefix.parse(w).contains(Prefix.host(nh))))
    return `programmed via ${rule.tunnel.dev}`;
  return 'programmed';
}

/** The whole plan of `nodeName`, with the kernel probed at `probes` (`prefix via nexthop`). */
export function whole(nodeName: string, objects: readonly Obj[], probes: readonly string[] = []): Whole {
  const { plan, json } = planOf(nodeName, objects);
  const communities = new Map(plan.routes.map((r) => [r.prefix.toString(), r.communities.map((c) => c.text)]));
  const peers: Record<string, PeerWhole> = {};
  plan.peers.forEach((p, i) => {
    const j = json.peers[i];
    if (j.refused) return;
    peers[`${p.address}:${p.port}`] = {
      type: TYPE[p.type],
      asn: p.asn,
      localAsn: p.localAsn,
      passive: p.passive,
      sourceAddress: p.sourceAddress?.toString() ?? null,
      password: p.passwordValue?.reveal() ?? null,
      ttlSecurity: p.ttlSecurity ?? 0,
      ...sessionOf(p),
      rrClient: p.routeReflectorClient,
      restartTime: p.maxRestartTime,
      allowLocalAs: p.numAllowedLocalASNumbers ?? null,
      sent: j.exports.map((x) => entry(x, communities.get(x) ?? [])).sort(),
    };
  });
  const decisions: Record<string, string> = {};
  for (const probe of probes) {
    const [prefix, nh] = probe.split(' via ');
    decisions[probe] = kernelDecision(plan, prefix, nh);
  }
  const k = plan.kernel;
  return {
    peers,
    routes: plan.routes
      .map((r) =>
        entry(
          r.prefix.toString(),
          r.communities.map((c) => c.text),
        ),
      )
      .sort(),
    kernel: {
      decisions,
      statics: (k?.statics ?? []).map((s) => `${s.prefix} ${'blackhole' in s ? 'blackhole' : `via ${s.via}`}`).sort(),
      priority: { v4: k?.normalRoutePriority.v4 ?? -1, v6: k?.normalRoutePriority.v6 ?? -1 },
    },
    errors: json.errors.map((e) => [e.kind, e.name, e.field, e.message].filter(Boolean).join(' ')),
  };
}

/** A peer as Calico renders one it was given nothing special for (the template's defaults). */
export function peerDefaults(o: Partial<PeerWhole> & Pick<PeerWhole, 'type' | 'asn'>): PeerWhole {
  return {
    localAsn: 64512,
    passive: false,
    sourceAddress: null,
    password: null,
    ttlSecurity: 0,
    nextHop: 'auto',
    rrClient: false,
    restartTime: 120,
    allowLocalAs: null,
    // confd's bgp_template: `add paths on` for every peering.
    addPaths: 'both',
    sent: [],
    ...o,
  };
}
