import { Afi, Safi, type CodecContext, type AfiSafi, type Capability, type OpenMessage } from '../wire/index.js';
import { openCapabilities, peerAsOf } from './open.js';

export interface GracefulRestartPeer {
  /** Seconds the peer asked us to keep its routes. */
  readonly restartTime: number;
  /** R bit: the peer says it has just restarted. */
  readonly restarting: boolean;
  readonly notification: boolean;
  /** Families (also negotiated) the peer covers, with its F bit. */
  readonly families: readonly { readonly afi: number; readonly safi: number; readonly forwardingPreserved: boolean }[];
}

/** RFC 9494: the peer's long-lived graceful restart capability, on families both sides negotiated. */
export interface LongLivedPeer {
  /** Per family: the F bit and the long-lived stale time in seconds (0: not kept long-lived). */
  readonly families: readonly { readonly afi: number; readonly safi: number; readonly forwardingPreserved: boolean; readonly staleTime: number }[];
}

/** What both OPENs together settle for one session. */
export interface Negotiated {
  readonly peerAs: number;
  readonly peerId: string;
  readonly families: readonly AfiSafi[];
  readonly asn4: boolean;
  readonly routeRefresh: boolean;
  readonly enhancedRouteRefresh: boolean;
  readonly extendedMessage: boolean;
  /** ADD-PATH per family: we take path ids in / we put them out. */
  readonly addPathReceive: readonly AfiSafi[];
  readonly addPathSend: readonly AfiSafi[];
  /** Present when both sides advertised graceful restart: the peer's view. */
  readonly gracefulRestart?: GracefulRestartPeer;
  /**
   * RFC 9494: both sides advertised long-lived graceful restart (each with
   * graceful restart too): the peer's families and stale times. Routes are
   * sent to it with LLGR_STALE; without it they are not sent at all.
   */
  readonly longLived?: LongLivedPeer;
  /** RFC 8538: both sides set the N bit (graceful restart across a NOTIFICATION other than Hard Reset). */
  readonly gracefulNotification: boolean;
  /** Seconds; 0 means no hold timer and no keepalives. */
  readonly holdTime: number;
  readonly keepaliveTime: number;
  readonly decode: CodecContext;
  readonly encode: CodecContext;
}

const IPV4_UNICAST: AfiSafi = { afi: Afi.IPV4, safi: Safi.UNICAST };

/** Multiprotocol families an OPEN offers; none at all means IPv4 unicast (RFC 4760 §8). */
function offeredFamilies(caps: readonly Capability[]): AfiSafi[] {
  const mp = caps.flatMap((c) => (c.kind === 'multiprotocol' ? [{ afi: c.afi, safi: c.safi }] : []));
  return mp.length > 0 ? mp : [IPV4_UNICAST];
}

export const sameFamily = (a: AfiSafi, b: AfiSafi): boolean => a.afi === b.afi && a.safi === b.safi;
const includes = (list: readonly AfiSafi[], f: AfiSafi) => list.some((x) => sameFamily(x, f));

function addPathModes(caps: readonly Capability[]): { afi: number; safi: number; mode: string }[] {
  return caps.flatMap((c) => (c.kind === 'addPath' ? c.families : []));
}

/** Hold time per RFC 4271 §4.2 (smaller wins), keepalive a third of it unless configured lower. */
export function negotiateTimers(ourHold: number, peerHold: number, keepalive?: number): { holdTime: number; keepaliveTime: number } {
  const holdTime = Math.min(ourHold, peerHold);
  if (holdTime === 0) return { holdTime: 0, keepaliveTime: 0 };
  const third = Math.max(1, Math.floor(holdTime / 3));
  const keepaliveTime = keepalive !== undefined && keepalive > 0 && keepalive <= holdTime ? keepalive : third;
  return { holdTime, keepaliveTime };
}

/*
 * What is the same across a reflector's hundreds of sessions is shared, not
 * copied per session: the codec contexts (16 possible), the family lists and
 * the graceful-restart family lists (subsets of our own families, so few).
 * Shared values are frozen; every reader treats them as readonly already.
 */
const CONTEXTS: CodecContext[] = [];

/** The one frozen `CodecContext` with these settings. */
function codecContext(asn4: boolean, extendedMessage: boolean, addPathV4: boolean, addPathV6: boolean): CodecContext {
  const i = (asn4 ? 8 : 0) | (extendedMessage ? 4 : 0) | (addPathV4 ? 2 : 0) | (addPathV6 ? 1 : 0);
  return (CONTEXTS[i] ??= Object.freeze({ asn4, extendedMessage, addPathV4, addPathV6 }));
}

const LISTS = new Map<string, readonly unknown[]>();

/** One frozen list per content (`key`), made by `make` the first time. */
function shared<T>(key: string, make: () => readonly T[]): readonly T[] {
  let list = LISTS.get(key) as readonly T[] | undefined;
  if (list === undefined) LISTS.set(key, (list = Object.freeze(make().map((x) => Object.freeze(x)))));
  return list;
}

const familyList = (list: readonly AfiSafi[]): readonly AfiSafi[] =>
  shared(`f${list.map((f) => `${f.afi}/${f.safi}`).join(',')}`, () => list.map((f) => ({ afi: f.afi, safi: f.safi })));

const grFamilyList = (list: GracefulRestartPeer['families']): GracefulRestartPeer['families'] =>
  shared(`g${list.map((f) => `${f.afi}/${f.safi}/${f.forwardingPreserved ? 1 : 0}`).join(',')}`, () =>
    list.map((f) => ({ afi: f.afi, safi: f.safi, forwardingPreserved: f.forwardingPreserved })),
  );

export function negotiate(ours: OpenMessage, theirs: OpenMessage, keepalive?: number): Negotiated {
  const our = openCapabilities(ours);
  const peer = openCapabilities(theirs);
  const has = (caps: readonly Capability[], kind: Capability['kind']) => caps.some((c) => c.kind === kind);
  const both = (kind: Capability['kind']) => has(our, kind) && has(peer, kind);

  const peerFamilies = offeredFamilies(peer);
  const families = familyList(offeredFamilies(our).filter((f) => includes(peerFamilies, f)));

  const ourModes = addPathModes(our);
  const peerModes = addPathModes(peer);
  const modeOf = (list: typeof ourModes, f: AfiSafi) => list.find((x) => sameFamily(x, f))?.mode;
  const canRecv = (m?: string) => m === 'receive' || m === 'both';
  const canSend = (m?: string) => m === 'send' || m === 'both';
  const addPathReceive = familyList(families.filter((f) => canRecv(modeOf(ourModes, f)) && canSend(modeOf(peerModes, f))));
  const addPathSend = familyList(families.filter((f) => canSend(modeOf(ourModes, f)) && canRecv(modeOf(peerModes, f))));

  let gracefulRestart: GracefulRestartPeer | undefined;
  const peerGr = peer.find((c) => c.kind === 'gracefulRestart');
  const ourGr = our.find((c) => c.kind === 'gracefulRestart');
  if (peerGr && peerGr.kind === 'gracefulRestart' && has(our, 'gracefulRestart')) {
    gracefulRestart = {
      restartTime: peerGr.restartTime,
      restarting: peerGr.restarting,
      notification: peerGr.notification,
      families: grFamilyList(peerGr.families.filter((f) => includes(families, f))),
    };
  }

  // RFC 9494 §3: the capability counts only next to graceful restart, on both sides.
  let longLived: LongLivedPeer | undefined;
  const peerLl = peer.find((c) => c.kind === 'longLivedGracefulRestart');
  if (gracefulRestart && peerLl && peerLl.kind === 'longLivedGracefulRestart' && has(our, 'longLivedGracefulRestart')) {
    longLived = {
      families: peerLl.families
        .filter((f) => includes(families, f))
        .map((f) => ({ afi: f.afi, safi: f.safi, forwardingPreserved: f.forwardingPreserved, staleTime: f.staleTime })),
    };
  }

  const asn4 = both('fourOctetAs');
  const extendedMessage = both('extendedMessage');
  const v4 = (list: readonly AfiSafi[]) => includes(list, IPV4_UNICAST);
  const v6 = (list: readonly AfiSafi[]) => includes(list, { afi: Afi.IPV6, safi: Safi.UNICAST });
  return {
    peerAs: peerAsOf(theirs),
    peerId: theirs.bgpId,
    families,
    asn4,
    routeRefresh: both('routeRefresh'),
    enhancedRouteRefresh: both('enhancedRouteRefresh'),
    extendedMessage,
    addPathReceive,
    addPathSend,
    gracefulRestart,
    ...(longLived ? { longLived } : {}),
    gracefulNotification: gracefulRestart !== undefined && gracefulRestart.notification && ourGr?.kind === 'gracefulRestart' && ourGr.notification,
    ...negotiateTimers(ours.holdTime, theirs.holdTime, keepalive),
    decode: codecContext(asn4, extendedMessage, v4(addPathReceive), v6(addPathReceive)),
    encode: codecContext(asn4, extendedMessage, v4(addPathSend), v6(addPathSend)),
  };
}
