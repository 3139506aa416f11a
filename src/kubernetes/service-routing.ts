/**
 * Per-Service routing controls: the `tsbgp.io/…` annotations of a Service,
 * read into typed values with errors naming the annotation (pure). The
 * planner (services.ts) applies them to the Service's routes; the agent
 * turns the route's shaping into attributes (src/kubernetes/reconcile.ts) and,
 * for prepends and peer choice, into an export policy
 * (src/kubernetes/service-policy.ts). The table of annotations is in README.md
 * (node agent section) and docs/service-annotations.md.
 */
import { parseCommunity, parseLargeCommunity } from '../wire/index.js';
import type { Labels, CommunityValue } from './resources.js';
import { matches, parseSelector, type Selector } from './selector.js';

export const SERVICE_ANNOTATIONS = {
  communities: 'tsbgp.io/communities',
  largeCommunities: 'tsbgp.io/large-communities',
  med: 'tsbgp.io/med',
  asPathPrepend: 'tsbgp.io/as-path-prepend',
  localPref: 'tsbgp.io/local-preference',
  peers: 'tsbgp.io/peers',
  peerSelector: 'tsbgp.io/peer-selector',
  advertise: 'tsbgp.io/advertise',
  weightedEcmp: 'tsbgp.io/weighted-ecmp',
} as const;

/** The same key on the default BGPConfiguration turns weighted ECMP on (or off) for every Service that does not say. */
export const CLUSTER_WEIGHTED_ECMP = SERVICE_ANNOTATIONS.weightedEcmp;

/**
 * Link bandwidth per ready local endpoint: 1 Mbit/s (125,000 bytes per
 * second). Receivers weigh next hops by ratio, so the unit only has to be
 * large enough that routers which count in Mbit/s (FRR) do not read 0, and
 * exact in an IEEE single for any realistic endpoint count (exact up to
 * 1,073 endpoints per node, within 2^-24 beyond).
 */
export const BYTES_PER_ENDPOINT = 125_000;

/** The 2-byte AS a link bandwidth community carries for a 4-byte AS (RFC 6793 AS_TRANS). */
export const AS_TRANS = 23456;

export interface ServiceRouting {
  /** Standard and large, from tsbgp.io/communities and tsbgp.io/large-communities. */
  readonly communities: readonly CommunityValue[];
  readonly med?: number;
  /** Our AS prepended this many more times toward eBGP peers. */
  readonly prepend?: number;
  /** LOCAL_PREF toward iBGP peers. */
  readonly localPref?: number;
  /** BGPPeer names (tsbgp.io/peers) and a selector over BGPPeer labels (tsbgp.io/peer-selector); absent: every peer. */
  readonly peers?: { readonly names: readonly string[]; readonly selector?: Selector };
  /** `host` (default): the /32 or /128 of each IP; `range`: only the covering allow-list range. */
  readonly advertise: 'host' | 'range';
  /** tsbgp.io/weighted-ecmp: true / false; absent: the cluster default. */
  readonly weightedEcmp?: boolean;
  /** The annotations set, as "key=value", in table order (for plan, routes and explain). */
  readonly annotations: readonly string[];
}

export interface AnnotationError {
  readonly field: string;
  readonly message: string;
}

const NO_ROUTING: ServiceRouting = Object.freeze({ communities: Object.freeze([]), advertise: 'host', annotations: Object.freeze([]) });

function list(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

function integer(text: string, min: number, max: number): number | string {
  const t = text.trim();
  if (!/^[0-9]+$/.test(t)) return `expected an integer ${min}..${max}, got ${JSON.stringify(text)}`;
  const n = Number(t);
  if (n < min || n > max) return `expected an integer ${min}..${max}, got ${n}`;
  return n;
}

export function parseBool(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : undefined;
}

/**
 * A Service's routing controls from its annotations; every value that does
 * not read is an error naming the annotation (`metadata.annotations.<key>`).
 * Other annotations are none of tsbgp's business, except unknown
 * `tsbgp.io/` keys, which are errors too (a typo would otherwise be silent).
 */
export function parseServiceRouting(annotations: Labels): { routing: ServiceRouting; errors: AnnotationError[] } {
  const keys = Object.keys(annotations).filter((k) => k.startsWith('tsbgp.io/'));
  if (keys.length === 0) return { routing: NO_ROUTING, errors: [] };
  const errors: AnnotationError[] = [];
  const fail = (key: string, message: string) => errors.push({ field: `metadata.annotations.${key}`, message });
  const known = new Set<string>(Object.values(SERVICE_ANNOTATIONS));
  for (const k of keys) if (!known.has(k)) fail(k, `unknown tsbgp.io annotation on a Service (known: ${[...known].join(', ')})`);
  const A = SERVICE_ANNOTATIONS;
  const get = (k: string): string | undefined => annotations[k];
  const communities: CommunityValue[] = [];
  const seen = new Set<string>();
  const c = get(A.communities);
  if (c !== undefined) {
    for (const t of list(c)) {
      try {
        const value = parseCommunity(t);
        if (!seen.has(t)) communities.push({ type: 'standard', value, text: t });
        seen.add(t);
      } catch (e) {
        fail(A.communities, (e as Error).message);
      }
    }
  }
  const l = get(A.largeCommunities);
  if (l !== undefined) {
    for (const t of list(l)) {
      try {
        const value = parseLargeCommunity(t);
        if (!seen.has(t)) communities.push({ type: 'large', value, text: t });
        seen.add(t);
      } catch (e) {
        fail(A.largeCommunities, (e as Error).message);
      }
    }
  }
  const num = (key: string, min: number, max: number): number | undefined => {
    const v = get(key);
    if (v === undefined) return undefined;
    const n = integer(v, min, max);
    if (typeof n === 'string') return (fail(key, n), undefined);
    return n;
  };
  const med = num(A.med, 0, 0xffffffff);
  const prepend = num(A.asPathPrepend, 0, 32);
  const localPref = num(A.localPref, 0, 0xffffffff);
  let peers: ServiceRouting['peers'];
  const names = get(A.peers);
  const selText = get(A.peerSelector);
  if (names !== undefined || selText !== undefined) {
    let selector: Selector | undefined;
    if (selText !== undefined) {
      try {
        selector = parseSelector(selText);
      } catch (e) {
        fail(A.peerSelector, (e as Error).message);
      }
    }
    const n = names === undefined ? [] : list(names);
    if (names !== undefined && n.length === 0) fail(A.peers, 'names no BGPPeer (remove the annotation to advertise to every peer)');
    peers = { names: n, ...(selector ? { selector } : {}) };
  }
  const adv = get(A.advertise);
  let advertise: ServiceRouting['advertise'] = 'host';
  if (adv !== undefined) {
    const t = adv.trim().toLowerCase();
    if (t === 'host' || t === 'range') advertise = t;
    else fail(A.advertise, `expected "host" (the /32 or /128 of each IP) or "range" (only the covering range), got ${JSON.stringify(adv)}`);
  }
  let weightedEcmp: boolean | undefined;
  const w = get(A.weightedEcmp);
  if (w !== undefined) {
    weightedEcmp = parseBool(w);
    if (weightedEcmp === undefined) fail(A.weightedEcmp, `expected "true" or "false", got ${JSON.stringify(w)}`);
  }
  const shown = Object.values(A)
    .filter((k) => annotations[k] !== undefined)
    .map((k) => `${k}=${annotations[k]}`);
  const routing: ServiceRouting = {
    communities,
    ...(med !== undefined ? { med } : {}),
    ...(prepend !== undefined && prepend > 0 ? { prepend } : {}),
    ...(localPref !== undefined ? { localPref } : {}),
    ...(peers ? { peers } : {}),
    advertise,
    ...(weightedEcmp !== undefined ? { weightedEcmp } : {}),
    annotations: shown,
  };
  return { routing, errors };
}

/** The peer filter as a predicate over a BGPPeer (name and labels). */
export function peerWanted(p: NonNullable<ServiceRouting['peers']>, name: string, labels: Labels): boolean {
  return p.names.includes(name) || (p.selector !== undefined && matches(p.selector, labels));
}
