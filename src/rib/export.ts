/**
 * Export rules toward one kind of peer (RFC 4271 §9.1.3, RFC 4456, RFC 1997),
 * applied before the peer's export policy. Depends only on the path and the
 * group settings, never on the prefix, so a group can memoise it per path.
 */
import { Address } from '../net/index.js';
import { AttrFlag, WellKnownCommunity, isNonTransitive, type AsPathSegment, type PathAttributes, UNICAST } from '../wire/index.js';
import type { Path, PathSource } from './path.js';
import type { PeerType } from './ports.js';

/** Everything about the receiving peer(s) the rules look at; part of the update-group key. */
export interface ExportSettings {
  readonly type: PeerType;
  readonly peerAsn: number;
  /** The AS we present to this peer (per-peer local AS, else ours). */
  readonly localAsn: number;
  /** Our BGP identifier as a dotted quad. */
  readonly routerId: string;
  /** Set when we are a route reflector. */
  readonly clusterId?: Address;
  /** The receiving iBGP peer is our route-reflector client. */
  readonly rrClient: boolean;
  readonly nextHopSelf: boolean;
  /** eBGP only: pass the next hop through instead of setting ourselves. */
  readonly keepNextHop: boolean;
  /** eBGP only: send a MED we learned from a peer. */
  readonly sendMed: boolean;
  readonly defaultLocalPref: number;
  /** Our addresses on the session, used for next-hop-self. */
  readonly localAddressV4?: Address;
  readonly localAddressV6?: Address;
  readonly linkLocalV6?: Address;
  /** The receiving peers advertised long-lived graceful restart: routes carrying LLGR_STALE may go to them (RFC 9494 §4.5). */
  readonly longLived?: boolean;
  /** Addresses of the receiving peers (split horizon). */
  readonly members: readonly string[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Why `path` must not be sent under `s` (a sentence for explain), or undefined when it may be. */
export function exportRefusal(path: Path, s: ExportSettings): string | undefined {
  const a = path.attrs.attrs;
  const src = path.source;
  const comms = a.communities;
  // RFC 1997 speaks of routes *received* carrying these values. On a route we
  // originate they are an instruction to the receiver (Calico's prefixAdvertisements
  // tag ranges with no-export for the upstream router; calico-node's BIRD adds them in
  // the export filter, after its own well-known check), so they do not hold it back here.
  if (comms !== undefined && src.kind !== 'local') {
    if (comms.includes(WellKnownCommunity.NO_ADVERTISE)) return 'carries NO_ADVERTISE';
    if (s.type === 'ebgp' && comms.includes(WellKnownCommunity.NO_EXPORT)) return 'carries NO_EXPORT (eBGP peer)';
    if (s.type === 'ebgp' && comms.includes(WellKnownCommunity.NO_EXPORT_SUBCONFED)) return 'carries NO_EXPORT_SUBCONFED (eBGP peer)';
  }
  if (comms !== undefined && !s.longLived && comms.includes(WellKnownCommunity.LLGR_STALE))
    return 'carries LLGR_STALE (long-lived stale) and the peer did not advertise long-lived graceful restart';
  if (src.kind === 'local') return undefined;
  if (s.type === 'ebgp') {
    // Split horizon, and sender-side loop detection: the peer would drop a path carrying its own AS.
    if (s.members.includes(src.id)) return `learned from ${src.address} in this update group (split horizon)`;
    if ((a.asPath ?? []).some((seg) => seg.asns.includes(s.peerAsn))) return `the peer's AS ${s.peerAsn} is on the AS_PATH (loop)`;
  }
  if (src.type === 'ibgp' && s.type === 'ibgp') {
    if (s.clusterId === undefined) return 'learned over iBGP: not passed to iBGP peers (not a route reflector)';
    if (!src.rrClient && !s.rrClient) return 'learned from a non-client: reflected to clients only';
    if (a.originatorId === undefined && src.routerId === undefined) return 'the source peer has no router ID yet';
  }
  return undefined;
}

/** The attributes to send for `path` under `s` (no export policy), or null when it must not be sent. `family` picks the next-hop field. */
export function exportAttrs(path: Path, family: 4 | 6, s: ExportSettings): PathAttributes | null {
  if (exportRefusal(path, s) !== undefined) return null;
  return sessionAttrs(path.attrs.attrs, path.source, family, s);
}

/**
 * What the export policy set that the session's rules would otherwise
 * change (a next hop; a MED, which toward eBGP is dropped from learned
 * routes): `policyAttrs` against the route's own `before`; undefined when
 * nothing. The export policy runs before the session's rules (as BIRD's
 * export filter does), and these win over them.
 */
function policySet(before: PathAttributes, policyAttrs: PathAttributes): Partial<Pick<PathAttributes, 'nextHop' | 'med'>> | undefined {
  if (policyAttrs === before) return undefined;
  let out: { nextHop?: PathAttributes['nextHop']; med?: number } | undefined;
  if (policyAttrs.nextHop !== before.nextHop && policyAttrs.nextHop !== undefined) out = { nextHop: policyAttrs.nextHop };
  if (policyAttrs.med !== before.med && policyAttrs.med !== undefined) out = { ...out, med: policyAttrs.med };
  return out;
}

/** The route sent: the session's rules over what the export policy made of `path` (its attributes when no policy). `path` passed `exportRefusal`. */
export function sentAttrs(path: Path, policyAttrs: PathAttributes, family: 4 | 6, s: ExportSettings): PathAttributes {
  const out = sessionAttrs(policyAttrs, path.source, family, s);
  const kept = policySet(path.attrs.attrs, policyAttrs);
  return kept === undefined ? out : { ...out, ...kept };
}

/**
 * What the export policy made of `path` with the path's late communities
 * (Path.late: those in the sent set and not in the policy's input) added
 * after it, as BIRD adds Calico's prefixAdvertisements communities after the
 * BGPFilter functions. `policyAttrs` itself when the path has none.
 */
export function withLate(path: Path, policyAttrs: PathAttributes): PathAttributes {
  const late = path.late?.attrs;
  if (late === undefined) return policyAttrs;
  const base = path.attrs.attrs;
  const communities = addMissing(policyAttrs.communities, late.communities, base.communities, (a, b) => a === b);
  const largeCommunities = addMissing(
    policyAttrs.largeCommunities,
    late.largeCommunities,
    base.largeCommunities,
    (a, b) => a.global === b.global && a.local1 === b.local1 && a.local2 === b.local2,
  );
  if (communities === policyAttrs.communities && largeCommunities === policyAttrs.largeCommunities) return policyAttrs;
  return { ...policyAttrs, ...(communities ? { communities } : {}), ...(largeCommunities ? { largeCommunities } : {}) };
}

/** `have` with each of `sent` that is not in `base` (a late one) and not yet in `have`; `have` itself when none. */
function addMissing<T>(
  have: readonly T[] | undefined,
  sent: readonly T[] | undefined,
  base: readonly T[] | undefined,
  eq: (a: T, b: T) => boolean,
): readonly T[] | undefined {
  if (sent === undefined) return have;
  let out: T[] | undefined;
  for (const c of sent) {
    if (base?.some((b) => eq(b, c))) continue;
    if ((out ?? have)?.some((h) => eq(h, c))) continue;
    (out ??= [...(have ?? [])]).push(c);
  }
  return out ?? have;
}

/** The session's rules: own AS, LOCAL_PREF, MED, next hop, reflection attributes, unknown attributes. */
function sessionAttrs(a: PathAttributes, src: PathSource, family: 4 | 6, s: ExportSettings): PathAttributes {
  const out: Mutable<PathAttributes> = { ...a };
  if (src.kind === 'peer' && a.unknown !== undefined) {
    // RFC 4271 §5: unknown non-transitive attributes stop here; transitive ones go on marked Partial.
    const kept = a.unknown.filter((u) => (u.flags & AttrFlag.TRANSITIVE) !== 0).map((u) => ({ ...u, flags: u.flags | AttrFlag.PARTIAL }));
    if (kept.length > 0) out.unknown = kept;
    else delete out.unknown;
  }
  if (src.kind === 'peer' && src.type === 'ibgp' && s.type === 'ibgp') {
    // Reflection (exportRefusal let it through, so we are a reflector): RFC 4456 §8.
    if (out.originatorId === undefined) out.originatorId = Address.v4(src.routerIdNum);
    out.clusterList = [s.clusterId!, ...(a.clusterList ?? [])];
  }
  if (s.type === 'ebgp') {
    out.asPath = prepend(a.asPath ?? [], s.localAsn);
    delete out.localPref;
    delete out.originatorId;
    delete out.clusterList;
    if (src.kind === 'peer' && !s.sendMed) delete out.med;
    // RFC 4360 §2: a learned non-transitive extended community (link bandwidth, …)
    // stays in the AS. Our own originations keep theirs: they describe the link
    // to this very neighbour (RFC 10005's eBGP use, as FRR and Arista send it).
    if (src.kind === 'peer' && a.extendedCommunities?.some(isNonTransitive)) {
      const kept = a.extendedCommunities.filter((c) => !isNonTransitive(c));
      if (kept.length > 0) out.extendedCommunities = kept;
      else delete out.extendedCommunities;
    }
    if (!s.keepNextHop || !hasNextHop(a, family)) setSelf(out, family, s);
  } else {
    if (out.localPref === undefined) out.localPref = s.defaultLocalPref;
    // eBGP-learned next hops pass unchanged into iBGP unless next-hop-self; reflected routes keep theirs.
    const reflected = src.kind === 'peer' && src.type === 'ibgp';
    if ((s.nextHopSelf && !reflected) || !hasNextHop(a, family)) setSelf(out, family, s);
  }
  return out;
}

function hasNextHop(a: PathAttributes, family: 4 | 6): boolean {
  return family === 4 ? a.nextHop !== undefined : (a.mpReach?.nextHops.length ?? 0) > 0;
}

function setSelf(out: Mutable<PathAttributes>, family: 4 | 6, s: ExportSettings): void {
  if (family === 4) {
    if (s.localAddressV4 !== undefined) out.nextHop = s.localAddressV4;
    return;
  }
  if (s.localAddressV6 === undefined) return;
  const hops = s.linkLocalV6 !== undefined ? [s.localAddressV6, s.linkLocalV6] : [s.localAddressV6];
  out.mpReach = { ...UNICAST[6], nextHops: hops, nlri: [] };
}

function prepend(path: readonly AsPathSegment[], asn: number): AsPathSegment[] {
  // Leaving our AS: confederation segments go (RFC 5065 §5.3).
  const segs = path.filter((s) => s.type === 1 || s.type === 2);
  const first = segs[0];
  if (first !== undefined && first.type === 2 && first.asns.length < 255) return [{ type: 2, asns: [asn, ...first.asns] }, ...segs.slice(1)];
  return [{ type: 2, asns: [asn] }, ...segs];
}
