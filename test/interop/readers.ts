/**
 * Reads what each daemon shows about its sessions with tsbgp and the routes
 * on them, into the daemon-neutral shapes of harness.ts. Formats were taken
 * from BIRD 2.0.12, FRR 8.4.4, GoBGP 3.10 and ExaBGP 4.2.21 output (samples
 * in readers.test.ts).
 */
import type { FamilyName } from '../../src/speaker/types.js';
import type { NegotiatedView, RouteView } from './harness.js';

// ------------------------------------------------------------------ BIRD

/** Splits `birdc show protocols all NAME` into capability sets and a few session facts. */
export function parseBirdSession(text: string): {
  local: Set<string>;
  neighbor: Set<string>;
  localFamilies: FamilyName[];
  neighborFamilies: FamilyName[];
  session?: string;
  holdTime?: number;
  lastError?: string;
  state?: string;
} {
  const local = new Set<string>();
  const neighbor = new Set<string>();
  const localFamilies: FamilyName[] = [];
  const neighborFamilies: FamilyName[] = [];
  let section: 'local' | 'neighbor' | undefined;
  let capIndent = -1;
  const out: ReturnType<typeof parseBirdSession> = { local, neighbor, localFamilies, neighborFamilies };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\t/g, '        ');
    const indent = line.length - line.trimStart().length;
    const t = line.trim();
    if (!t) continue;
    if (t === 'Local capabilities' || t === 'Neighbor capabilities') {
      section = t.startsWith('Local') ? 'local' : 'neighbor';
      capIndent = indent;
      continue;
    }
    if (section && indent <= capIndent) section = undefined;
    if (section) {
      const fams = /^AF announced:\s*(.*)$/.exec(t);
      if (fams) {
        for (const f of fams[1].split(/\s+/).filter(Boolean))
          if (f === 'ipv4' || f === 'ipv6') (section === 'local' ? localFamilies : neighborFamilies).push(f);
        continue;
      }
      // capability names sit one level below the section heading; their details deeper
      if (indent <= capIndent + 2) (section === 'local' ? local : neighbor).add(t.replace(/:.*$/, ''));
      continue;
    }
    const kv = /^([A-Za-z][A-Za-z ]*):\s*(.*)$/.exec(t);
    if (!kv) continue;
    if (kv[1] === 'Session') out.session = kv[2];
    if (kv[1] === 'Hold timer') out.holdTime = Number(kv[2].split('/')[1]);
    if (kv[1] === 'Last error') out.lastError = kv[2];
    if (kv[1] === 'BGP state') out.state = kv[2];
  }
  return out;
}

/** The capabilities BIRD negotiated on a session: those both ends announced. */
export function birdNegotiated(text: string): NegotiatedView & { established: boolean } {
  const s = parseBirdSession(text);
  const both = (c: string): boolean => s.local.has(c) && s.neighbor.has(c);
  const asn = /Neighbor AS:\s*(\d+)/.exec(text);
  return {
    established: s.state === 'Established',
    families: s.localFamilies.filter((f) => s.neighborFamilies.includes(f)).sort(),
    // "Session: external AS4" / "internal multihop AS4": AS4 is in effect
    asn4: / AS4\b/.test(s.session ?? ''),
    routeRefresh: both('Route refresh'),
    enhancedRouteRefresh: both('Enhanced refresh'),
    extendedMessage: both('Extended message'),
    gracefulRestart: both('Graceful restart'),
    holdTime: s.holdTime ?? NaN,
    peerAsn: asn ? Number(asn[1]) : NaN,
  };
}

const ORIGINS: Record<string, RouteView['origin']> = { IGP: 'igp', EGP: 'egp', Incomplete: 'incomplete', i: 'igp', e: 'egp', '?': 'incomplete' };

const pairs = (text: string | undefined): string[] =>
  [...(text ?? '').matchAll(/\((\d+),\s*(\d+)(?:,\s*(\d+))?\)/g)]
    .map((m) =>
      m
        .slice(1)
        .filter((x) => x !== undefined)
        .join(':'),
    )
    .sort();

/** Routes from `birdc show route all …` as views; attribute names are BIRD's `BGP.*`. */
export function birdViews(routes: readonly { prefix: string; protocol: string; attrs: Record<string, string> }[]): (RouteView & { protocol: string })[] {
  return routes.map((r) => {
    const a = r.attrs;
    const path = (a['BGP.as_path'] ?? '').trim();
    return {
      protocol: r.protocol,
      prefix: r.prefix,
      origin: ORIGINS[a['BGP.origin'] ?? ''] ?? 'igp',
      asPath: path ? path.split(/\s+/).map(Number) : [],
      nextHop: a['BGP.next_hop']?.split(/\s+/)[0],
      med: a['BGP.med'] !== undefined ? Number(a['BGP.med']) : undefined,
      localPref: a['BGP.local_pref'] !== undefined ? Number(a['BGP.local_pref']) : undefined,
      communities: pairs(a['BGP.community']),
      largeCommunities: pairs(a['BGP.large_community']),
    };
  });
}

// ------------------------------------------------------------------ FRR

export interface FrrNeighbor {
  bgpState: string;
  remoteAs?: number;
  localAs?: number;
  bgpTimerHoldTimeMsecs?: number;
  neighborCapabilities?: Record<string, unknown>;
  lastNotificationReason?: string;
  lastShutdownDescription?: string;
  lastResetDueTo?: string;
  [k: string]: unknown;
}

const FRR_FAMILY: Record<string, FamilyName> = { ipv4Unicast: 'ipv4', ipv6Unicast: 'ipv6' };

/** FRR reports each capability as "advertised", "received" or "advertisedAndReceived…". */
export function frrNegotiated(n: FrrNeighbor): NegotiatedView & { established: boolean } {
  const caps = n.neighborCapabilities ?? {};
  const both = (k: string): boolean => typeof caps[k] === 'string' && (caps[k] as string).startsWith('advertisedAndReceived');
  const mp = (caps.multiprotocolExtensions ?? {}) as Record<string, Record<string, boolean>>;
  return {
    established: n.bgpState === 'Established',
    families: Object.entries(mp)
      .filter(([, v]) => v.advertisedAndReceived)
      .map(([k]) => FRR_FAMILY[k])
      .filter((f): f is FamilyName => !!f)
      .sort(),
    asn4: both('4byteAs'),
    routeRefresh: both('routeRefresh'),
    enhancedRouteRefresh: both('enhancedRouteRefresh'),
    extendedMessage: both('extendedMessage'),
    gracefulRestart: both('gracefulRestart'),
    holdTime: (n.bgpTimerHoldTimeMsecs ?? NaN) / 1000,
    peerAsn: n.remoteAs ?? NaN,
  };
}

/** One path of `show bgp ipv4|ipv6 unicast PREFIX json`. */
export interface FrrDetailPath {
  aspath?: { string?: string };
  origin?: string;
  med?: number;
  metric?: number;
  localpref?: number;
  /** FRR 8's name for it in the detail JSON. */
  locPrf?: number;
  community?: { string?: string };
  largeCommunity?: { string?: string };
  nexthops?: { ip?: string }[];
  peer?: { peerId?: string };
  valid?: boolean;
  bestpath?: { overall?: boolean };
  [k: string]: unknown;
}

export function frrView(prefix: string, p: FrrDetailPath): RouteView & { peer?: string } {
  const path = (p.aspath?.string ?? '').trim();
  const med = p.med ?? p.metric;
  return {
    peer: p.peer?.peerId,
    prefix,
    origin: ORIGINS[p.origin ?? ''] ?? (p.origin?.toLowerCase() as RouteView['origin']) ?? 'igp',
    asPath: path && path !== 'Local' ? path.split(/\s+/).map(Number) : [],
    nextHop: p.nexthops?.[0]?.ip,
    med,
    localPref: p.locPrf ?? p.localpref,
    communities: (p.community?.string ?? '').split(/\s+/).filter(Boolean).sort(),
    largeCommunities: (p.largeCommunity?.string ?? '').split(/\s+/).filter(Boolean).sort(),
  };
}

// ------------------------------------------------------------------ GoBGP

interface GobgpCap {
  type_url: string;
  value?: string;
}

export interface GobgpNeighborFull {
  conf: { neighbor_address: string; peer_asn?: number; local_asn?: number };
  state: { session_state?: number | string; remote_cap?: GobgpCap[]; local_cap?: GobgpCap[]; [k: string]: unknown };
  timers?: { state?: { negotiated_hold_time?: number } };
  [k: string]: unknown;
}

const capName = (c: GobgpCap): string => c.type_url.replace(/^.*\./, '');

/** The (afi, safi) pairs in a MultiProtocolCapability's protobuf value: field 1 = Family{afi=1, safi=2}. */
export function gobgpMpFamilies(caps: readonly GobgpCap[]): FamilyName[] {
  const out: FamilyName[] = [];
  for (const c of caps) {
    if (capName(c) !== 'MultiProtocolCapability' || !c.value) continue;
    const b = Buffer.from(c.value, 'base64');
    let afi = 0;
    let safi = 0;
    // tiny varint reader: enough for the two small enum fields inside
    for (let i = 0; i < b.length; i++) {
      if (b[i] === 0x08) afi = b[++i];
      else if (b[i] === 0x10) safi = b[++i];
    }
    if (safi === 1 && afi === 1) out.push('ipv4');
    if (safi === 1 && afi === 2) out.push('ipv6');
  }
  return out;
}

export function gobgpNegotiated(n: GobgpNeighborFull): NegotiatedView & { established: boolean } {
  const local = n.state.local_cap ?? [];
  const remote = n.state.remote_cap ?? [];
  const names = (cs: GobgpCap[]): Set<string> => new Set(cs.map(capName));
  const l = names(local);
  const r = names(remote);
  const both = (c: string): boolean => l.has(c) && r.has(c);
  const rf = gobgpMpFamilies(remote);
  const s = n.state.session_state;
  return {
    established: s === 6 || (typeof s === 'string' && s.toLowerCase().includes('established')),
    families: gobgpMpFamilies(local)
      .filter((f) => rf.includes(f))
      .sort(),
    asn4: both('FourOctetASNCapability'),
    routeRefresh: both('RouteRefreshCapability'),
    enhancedRouteRefresh: both('EnhancedRouteRefreshCapability'),
    extendedMessage: both('ExtendedMessageCapability'),
    gracefulRestart: both('GracefulRestartCapability'),
    holdTime: n.timers?.state?.negotiated_hold_time ?? NaN,
    peerAsn: n.conf.peer_asn ?? NaN,
  };
}

interface GobgpAttr {
  type: number;
  /** ORIGIN and LOCAL_PREF: a number; LARGE_COMMUNITY: the list of values. */
  value?: number | { ASN: number; LocalData1: number; LocalData2: number }[];
  as_paths?: { asns?: number[] }[];
  nexthop?: string;
  metric?: number;
  local_pref?: number;
  communities?: number[];
  nlri?: unknown;
  mp_reach?: unknown;
  [k: string]: unknown;
}

export interface GobgpPath {
  nlri: { prefix: string };
  attrs: GobgpAttr[];
  stale?: boolean;
  best?: boolean;
  'neighbor-ip'?: string;
  [k: string]: unknown;
}

const GOBGP_ORIGIN: RouteView['origin'][] = ['igp', 'egp', 'incomplete'];

export function gobgpView(p: GobgpPath): RouteView & { neighbor?: string; stale: boolean } {
  const attr = (t: number): GobgpAttr | undefined => p.attrs.find((a) => a.type === t);
  const mp = attr(14) as { nexthop?: string } | undefined;
  return {
    neighbor: p['neighbor-ip'],
    stale: !!p.stale,
    prefix: p.nlri.prefix,
    origin: GOBGP_ORIGIN[Number(attr(1)?.value ?? 0)],
    asPath: (attr(2)?.as_paths ?? []).flatMap((s) => s.asns ?? []),
    nextHop: attr(3)?.nexthop ?? mp?.nexthop,
    med: attr(4)?.metric,
    localPref: attr(5)?.value as number | undefined,
    communities: (attr(8)?.communities ?? []).map((c) => `${c >>> 16}:${c & 0xffff}`).sort(),
    largeCommunities: ((attr(32)?.value ?? []) as { ASN: number; LocalData1: number; LocalData2: number }[])
      .map((v) => `${v.ASN}:${v.LocalData1}:${v.LocalData2}`)
      .sort(),
  };
}
