import {
  AS_TRANS,
  BGP_VERSION,
  CapabilityCode,
  ErrorCode,
  OpenSubcode,
  encodeCapabilities,
  capabilitiesOf,
  openAsn,
  BgpError,
  type Capability,
  type OpenMessage,
} from '../wire/index.js';
import type { SessionConfig } from './types.js';

/** Capabilities the peer refused (NOTIFICATION 2/7 or 2/4); left out of the next OPEN. */
export interface Omissions {
  readonly codes: readonly number[];
  /** 2/4: the peer does not do optional parameters at all. */
  readonly allOptional: boolean;
}

export const NO_OMISSIONS: Omissions = Object.freeze({ codes: [], allOptional: false });

export function capabilityCode(cap: Capability): number {
  switch (cap.kind) {
    case 'multiprotocol':
      return CapabilityCode.MULTIPROTOCOL;
    case 'routeRefresh':
      return CapabilityCode.ROUTE_REFRESH;
    case 'enhancedRouteRefresh':
      return CapabilityCode.ENHANCED_ROUTE_REFRESH;
    case 'extendedMessage':
      return CapabilityCode.EXTENDED_MESSAGE;
    case 'fourOctetAs':
      return CapabilityCode.FOUR_OCTET_AS;
    case 'gracefulRestart':
      return CapabilityCode.GRACEFUL_RESTART;
    case 'longLivedGracefulRestart':
      return CapabilityCode.LONG_LIVED_GRACEFUL_RESTART;
    case 'addPath':
      return CapabilityCode.ADD_PATH;
    case 'extendedNextHop':
      return CapabilityCode.EXTENDED_NEXT_HOP;
    case 'fqdn':
      return CapabilityCode.FQDN;
    case 'unknown':
      return cap.code;
  }
}

/** A capability as code/length/value, for NOTIFICATION 2/7 data. */
export function capabilityTlv(cap: Capability): Uint8Array {
  return encodeCapabilities([cap]);
}

/** Capability codes named in NOTIFICATION 2/7 data (a list of TLVs); stops at a truncated entry. */
export function refusedCapabilityCodes(data: Uint8Array): number[] {
  const codes: number[] = [];
  let off = 0;
  while (off + 2 <= data.length) {
    const len = data[off + 1];
    if (off + 2 + len > data.length) break;
    codes.push(data[off]);
    off += 2 + len;
  }
  return codes;
}

/** Folds a peer's NOTIFICATION into what the next OPEN must leave out. */
export function omissionsAfter(prev: Omissions, code: number, subcode: number, data: Uint8Array): Omissions {
  if (code !== ErrorCode.OPEN_MESSAGE) return prev;
  if (subcode === OpenSubcode.UNSUPPORTED_OPTIONAL_PARAMETER) return { codes: prev.codes, allOptional: true };
  if (subcode === OpenSubcode.UNSUPPORTED_CAPABILITY) {
    const codes = new Set([...prev.codes, ...refusedCapabilityCodes(data)]);
    return { codes: [...codes].sort((a, b) => a - b), allOptional: prev.allOptional };
  }
  return prev;
}

/** The capabilities our OPEN carries, before omissions. */
function ourCapabilities(cfg: SessionConfig, restarting: boolean): Capability[] {
  const caps: Capability[] = [];
  for (const f of cfg.families) caps.push({ kind: 'multiprotocol', afi: f.afi, safi: f.safi });
  if (cfg.routeRefresh) caps.push({ kind: 'routeRefresh' });
  if (cfg.enhancedRouteRefresh) caps.push({ kind: 'enhancedRouteRefresh' });
  if (cfg.extendedMessage) caps.push({ kind: 'extendedMessage' });
  caps.push({ kind: 'fourOctetAs', asn: cfg.localAs });
  if (cfg.gracefulRestart) {
    const gr = cfg.gracefulRestart;
    const preserved = (afi: number, safi: number) => gr.forwardingPreserved.some((p) => p.afi === afi && p.safi === safi);
    caps.push({
      kind: 'gracefulRestart',
      restarting,
      notification: gr.notification !== false,
      restartTime: gr.restartTime,
      // Forwarding flags only mean something while we are the restarting side.
      families: cfg.families.map((f) => ({ afi: f.afi, safi: f.safi, forwardingPreserved: restarting && preserved(f.afi, f.safi) })),
    });
  }
  const ll = cfg.longLivedGracefulRestart;
  if (cfg.gracefulRestart && ll) {
    // RFC 9494 §3: only next to the graceful restart capability.
    const preserved = (afi: number, safi: number) => ll.forwardingPreserved?.some((p) => p.afi === afi && p.safi === safi) ?? false;
    caps.push({
      kind: 'longLivedGracefulRestart',
      families: cfg.families.map((f) => ({ afi: f.afi, safi: f.safi, forwardingPreserved: restarting && preserved(f.afi, f.safi), staleTime: ll.staleTime })),
    });
  }
  if (cfg.addPath.length > 0) caps.push({ kind: 'addPath', families: cfg.addPath });
  if (cfg.extraCapabilities) caps.push(...cfg.extraCapabilities);
  return caps;
}

export function buildOpen(cfg: SessionConfig, omit: Omissions, restarting: boolean): OpenMessage {
  const caps = omit.allOptional ? [] : ourCapabilities(cfg, restarting).filter((c) => !omit.codes.includes(capabilityCode(c)));
  return {
    type: 'open',
    version: BGP_VERSION,
    myAs: cfg.localAs > 0xffff ? AS_TRANS : cfg.localAs,
    holdTime: cfg.holdTime,
    bgpId: cfg.localId,
    params: caps.length > 0 ? [{ type: 2, capabilities: caps }] : [],
  };
}

/** Flattened capabilities of an OPEN, and the peer's real AS: the wire layer's helpers under the names this layer uses. */
export { capabilitiesOf as openCapabilities, openAsn as peerAsOf };

export function parseBgpId(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = v * 256 + n;
  }
  return v;
}

function hasCapability(caps: readonly Capability[], want: Capability): boolean {
  return caps.some((c) => {
    if (c.kind !== want.kind) return false;
    if (c.kind === 'multiprotocol' && want.kind === 'multiprotocol') return c.afi === want.afi && c.safi === want.safi;
    if (c.kind === 'unknown' && want.kind === 'unknown') return c.code === want.code;
    return true;
  });
}

const u16 = (n: number) => Uint8Array.of(n >> 8, n & 0xff);

/**
 * RFC 4271 §6.2 checks of what a received OPEN means, the one place for them
 * (the codec has checked its syntax and version); the BgpError says which
 * NOTIFICATION to send.
 */
export function checkOpen(open: OpenMessage, cfg: SessionConfig): BgpError | undefined {
  const caps = capabilitiesOf(open);
  const asn = openAsn(open);
  const has4 = caps.some((c) => c.kind === 'fourOctetAs');
  if (!has4 && open.myAs === AS_TRANS) {
    return BgpError.open('BAD_PEER_AS', `peer sent AS_TRANS (${AS_TRANS}) without the 4-octet AS capability`);
  }
  if (cfg.peerAs !== 'any' && asn !== cfg.peerAs) {
    return BgpError.open('BAD_PEER_AS', `peer AS ${asn} is not the configured ${cfg.peerAs}`);
  }
  const id = parseBgpId(open.bgpId);
  if (id === undefined || id === 0) {
    return BgpError.open('BAD_BGP_IDENTIFIER', `peer BGP identifier ${open.bgpId} is not a usable identifier`);
  }
  // RFC 6286: equal identifiers are only a conflict inside one AS.
  if (asn === cfg.localAs && id === parseBgpId(cfg.localId)) {
    return BgpError.open('BAD_BGP_IDENTIFIER', `iBGP peer uses our own BGP identifier ${open.bgpId}`);
  }
  if (open.holdTime === 1 || open.holdTime === 2) {
    return BgpError.open('UNACCEPTABLE_HOLD_TIME', `peer hold time ${open.holdTime} s is neither 0 nor at least 3`);
  }
  for (const want of cfg.requiredCapabilities ?? []) {
    if (!hasCapability(caps, want)) {
      return BgpError.open('UNSUPPORTED_CAPABILITY', `peer did not advertise required capability ${want.kind}`, capabilityTlv(want));
    }
  }
  return undefined;
}
