/**
 * CalicoNodeStatus (pure): what a user asks of this node (`spec.node`,
 * `spec.classes` Agent/BGP/Routes, `spec.updatePeriodSeconds`), and the
 * status the agent answers with, in Calico's field names
 * (projectcalico.org/v3 CalicoNodeStatusStatus), from a snapshot of the
 * speaker. When to write is decided here too; the shell that lists and
 * watches the requests and patches their status subresource is
 * `sources/node-status-reporter.ts`.
 *
 * Where tsbgp differs from calico-node: one speaker serves both families, so
 * `agent.birdV4` and `agent.birdV6` describe the same process (its version
 * is `tsbgp <version>`); a route's `interface` is not known to the speaker
 * and is left out.
 */
import type { PeerStatus, ReceivedRoute } from '../speaker/index.js';
import type { PeerType } from '../kubernetes/index.js';
import type { Prefix } from '../net/index.js';

export const NODE_STATUS_CLASSES = ['Agent', 'BGP', 'Routes'] as const;
export type NodeStatusClass = (typeof NODE_STATUS_CLASSES)[number];

/** Calico's limit on `updatePeriodSeconds` (one day). */
export const MAX_UPDATE_PERIOD_SECONDS = 86_400;

export interface NodeStatusRequest {
  readonly name: string;
  readonly node: string;
  readonly classes: readonly NodeStatusClass[];
  /** 0: written when the request changes only; undefined (Calico's API requires it): the same. */
  readonly updatePeriodSeconds: number;
  /** What the spec says, as one string: a change of it is a new request (answered at once). */
  readonly specKey: string;
  /** The status last written (whatever wrote it), for "unchanged: nothing to write". */
  readonly currentStatus: unknown;
}

export type ReadRequest =
  { readonly ok: true; readonly name: string; readonly request: NodeStatusRequest } | { readonly ok: false; readonly name: string; readonly error: string };

/** A CalicoNodeStatus object as the API serves it → the request, or an error naming the field. */
export function readNodeStatusRequest(raw: unknown): ReadRequest {
  const o = (raw ?? {}) as { metadata?: { name?: unknown }; spec?: Record<string, unknown>; status?: unknown };
  const name = typeof o.metadata?.name === 'string' ? o.metadata.name : '';
  const fail = (error: string): ReadRequest => ({ ok: false, name, error: `CalicoNodeStatus ${name || '(no name)'}: ${error}` });
  if (name === '') return fail('metadata.name: is required');
  const spec = o.spec ?? {};
  if (typeof spec !== 'object' || Array.isArray(spec)) return fail('spec: expected an object');
  if (typeof spec.node !== 'string' || spec.node === '') return fail('spec.node: is required (the name of the node to report)');
  const classesRaw = spec.classes ?? [];
  if (!Array.isArray(classesRaw)) return fail('spec.classes: expected a list of Agent, BGP, Routes');
  const classes: NodeStatusClass[] = [];
  for (const [i, c] of classesRaw.entries()) {
    if (!NODE_STATUS_CLASSES.includes(c as NodeStatusClass))
      return fail(`spec.classes[${i}]: ${JSON.stringify(c)} is not one of ${NODE_STATUS_CLASSES.join(', ')}`);
    if (classes.includes(c as NodeStatusClass)) return fail(`spec.classes[${i}]: ${JSON.stringify(c)} is listed twice`);
    classes.push(c as NodeStatusClass);
  }
  const period = spec.updatePeriodSeconds ?? 0;
  if (typeof period !== 'number' || !Number.isInteger(period) || period < 0 || period > MAX_UPDATE_PERIOD_SECONDS) {
    return fail(`spec.updatePeriodSeconds: expected a whole number of seconds from 0 to ${MAX_UPDATE_PERIOD_SECONDS}, got ${JSON.stringify(period)}`);
  }
  return {
    ok: true,
    name,
    request: { name, node: spec.node, classes, updatePeriodSeconds: period, specKey: JSON.stringify([spec.node, classes, period]), currentStatus: o.status },
  };
}

/** What the agent knows at one moment, for a status. */
export interface NodeStatusInput {
  /** The speaker runs (it is started once the node has an address). */
  readonly running: boolean;
  /** e.g. `tsbgp 0.1.0`. */
  readonly version: string;
  readonly routerId?: string;
  readonly startedAt: Date;
  /** When the speaker was last given a changed configuration. */
  readonly reconfiguredAt?: Date;
  readonly sessions: readonly Pick<PeerStatus, 'address' | 'state' | 'since'>[];
  /** Each planned peer's type, by address (sessions not planned are not reported). */
  readonly peerTypes: ReadonlyMap<string, PeerType>;
  /** Routes received from peers (accepted ones), best or not. */
  readonly received: readonly Pick<ReceivedRoute, 'prefix' | 'peer' | 'best' | 'nextHop'>[];
  /** Routes this node originates (its blocks, service routes). */
  readonly originated: readonly Prefix[];
}

export interface BGPDaemonStatusJson {
  readonly state: 'Ready' | 'NotReady';
  readonly version?: string;
  readonly routerID?: string;
  readonly lastBootTime?: string;
  readonly lastReconfigurationTime?: string;
}

export interface CalicoNodePeerJson {
  readonly peerIP: string;
  readonly type: 'NodeMesh' | 'NodePeer' | 'GlobalPeer';
  readonly state: PeerStatus['state'];
  readonly since: string;
}

export interface CalicoNodeRouteJson {
  readonly type: 'FIB' | 'RIB';
  readonly destination: string;
  readonly gateway: string;
  readonly learnedFrom: { readonly sourceType: 'Static' | 'NodeMesh' | 'BGPPeer'; readonly peerIP?: string };
}

/** The requested classes of a CalicoNodeStatus `status` (lastUpdated is the shell's). Lists are null when empty, so a merge patch clears old ones. */
export interface NodeStatusJson {
  agent?: { readonly birdV4: BGPDaemonStatusJson; readonly birdV6: BGPDaemonStatusJson };
  bgp?: {
    readonly numberEstablishedV4: number;
    readonly numberNotEstablishedV4: number;
    readonly numberEstablishedV6: number;
    readonly numberNotEstablishedV6: number;
    readonly peersV4: readonly CalicoNodePeerJson[] | null;
    readonly peersV6: readonly CalicoNodePeerJson[] | null;
  };
  routes?: { readonly routesV4: readonly CalicoNodeRouteJson[] | null; readonly routesV6: readonly CalicoNodeRouteJson[] | null };
}

/** Times as BIRD prints them in `show status` and `show protocols` (UTC): `2026-01-31 12:00:00`. */
export function birdTime(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', ' ');
}

// Calico's BGPPeerType has no value for a local workload peer (calico-node lists BIRD's Mesh_, Node_ and
// Global_ protocols only), so those peers are left out of the status, as calico-node leaves them out.
const PEER_TYPE: Record<PeerType, CalicoNodePeerJson['type'] | undefined> = {
  'node-to-node mesh': 'NodeMesh',
  'node specific': 'NodePeer',
  global: 'GlobalPeer',
  'local workload': undefined,
};

const family = (address: string): 4 | 6 => (address.includes(':') ? 6 : 4);
const orNull = <T>(xs: readonly T[]): readonly T[] | null => (xs.length > 0 ? xs : null);

/** The status for the requested classes, from a snapshot. Deterministic: peers by address, routes by destination then source. */
export function nodeStatus(input: NodeStatusInput, classes: readonly NodeStatusClass[]): NodeStatusJson {
  const out: NodeStatusJson = {};
  if (classes.includes('Agent')) {
    const d: BGPDaemonStatusJson = input.running
      ? {
          state: 'Ready',
          version: input.version,
          ...(input.routerId ? { routerID: input.routerId } : {}),
          lastBootTime: birdTime(input.startedAt),
          ...(input.reconfiguredAt ? { lastReconfigurationTime: birdTime(input.reconfiguredAt) } : {}),
        }
      : { state: 'NotReady', version: input.version };
    out.agent = { birdV4: d, birdV6: d };
  }
  if (classes.includes('BGP')) {
    const peers = input.sessions
      .flatMap((s) => {
        const t = input.peerTypes.get(s.address);
        const type = t === undefined ? undefined : PEER_TYPE[t];
        return type === undefined ? [] : [{ peerIP: s.address, type, state: s.state, since: birdTime(s.since) }];
      })
      .sort((a, b) => a.peerIP.localeCompare(b.peerIP));
    const v4 = peers.filter((p) => family(p.peerIP) === 4);
    const v6 = peers.filter((p) => family(p.peerIP) === 6);
    const up = (ps: readonly CalicoNodePeerJson[]) => ps.filter((p) => p.state === 'Established').length;
    out.bgp = {
      numberEstablishedV4: up(v4),
      numberNotEstablishedV4: v4.length - up(v4),
      numberEstablishedV6: up(v6),
      numberNotEstablishedV6: v6.length - up(v6),
      peersV4: orNull(v4),
      peersV6: orNull(v6),
    };
  }
  if (classes.includes('Routes')) {
    const routes: CalicoNodeRouteJson[] = [];
    for (const p of input.originated) routes.push({ type: 'FIB', destination: p.toString(), gateway: 'N/A', learnedFrom: { sourceType: 'Static' } });
    for (const r of input.received) {
      const type = input.peerTypes.get(r.peer);
      routes.push({
        type: r.best ? 'FIB' : 'RIB',
        destination: r.prefix.toString(),
        gateway: r.nextHop ?? 'N/A',
        learnedFrom: { sourceType: type === 'node-to-node mesh' ? 'NodeMesh' : 'BGPPeer', peerIP: r.peer },
      });
    }
    const key = (r: CalicoNodeRouteJson) => `${r.destination} ${r.learnedFrom.sourceType} ${r.learnedFrom.peerIP ?? ''} ${r.type}`;
    routes.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    out.routes = { routesV4: orNull(routes.filter((r) => family(r.destination) === 4)), routesV6: orNull(routes.filter((r) => family(r.destination) === 6)) };
  }
  return out;
}

/** A status reduced for comparison: lastUpdated, nulls and empty lists dropped, keys sorted. */
export function comparable(status: unknown): string {
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(norm);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (k === 'lastUpdated' || x === null || x === undefined || (Array.isArray(x) && x.length === 0)) continue;
      out[k] = norm(x);
    }
    return out;
  };
  return JSON.stringify(norm(status ?? {}));
}

/**
 * The merge patch of the status subresource that writes `next` (stamped
 * `now`), or undefined when `written` (the status as it stands) already says
 * the same for the requested classes: an unchanged node writes nothing.
 */
export function statusPatch(written: unknown, next: NodeStatusJson, now: Date): { readonly status: Record<string, unknown> } | undefined {
  const current = (written ?? {}) as Record<string, unknown>;
  const same = (Object.keys(next) as (keyof NodeStatusJson)[]).every((k) => comparable(current[k]) === comparable(next[k]));
  if (same) return undefined;
  return { status: { ...next, lastUpdated: now.toISOString().replace(/\.\d{3}Z$/, 'Z') } };
}

/**
 * When to report (pure, times in ms): a request seen for the first time or
 * whose spec changed is answered now; after that, once per
 * `updatePeriodSeconds` (never, for 0). `last` is what was decided before.
 */
export function reportSchedule(
  last: { readonly specKey: string; readonly at: number } | undefined,
  request: Pick<NodeStatusRequest, 'specKey' | 'updatePeriodSeconds'>,
  now: number,
): { readonly now: boolean; readonly nextInMs?: number } {
  const periodMs = request.updatePeriodSeconds * 1000;
  if (!last || last.specKey !== request.specKey) return { now: true, ...(periodMs > 0 ? { nextInMs: periodMs } : {}) };
  if (periodMs === 0) return { now: false };
  const elapsed = now - last.at;
  if (elapsed >= periodMs) return { now: true, nextInMs: periodMs };
  return { now: false, nextInMs: periodMs - elapsed };
}
