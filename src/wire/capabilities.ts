import { u16, u32, Writer } from './buffer.js';
import { CapabilityCode } from './constants.js';
import { BgpError } from './errors.js';
import type { AddPathMode, Capability } from './types.js';

/**
 * Capabilities (RFC 5492): code, 1-byte length, value. One decoder per code.
 *
 * A malformed known capability either falls back to `unknown` (its bytes are
 * kept and it simply counts as not advertised) or is an OPEN Message Error,
 * subcode 0 (Unspecific). It falls back only where ignoring it cannot make the
 * two ends disagree about how later bytes are framed:
 * - multiprotocol, route refresh, enhanced route refresh, extended message,
 *   extended next hop, graceful restart, long-lived graceful restart, FQDN: falling back only loses the
 *   feature (the session negotiates without it), so they fall back.
 * - 4-octet AS (RFC 6793) and ADD-PATH (RFC 7911) change how AS_PATH and
 *   NLRI are read; a peer that believes it advertised them would send bytes
 *   we would misparse, so a bad length is an error. (An ADD-PATH tuple with a
 *   Send/Receive value outside 1..3 is the exception: RFC 7911 §4 says to
 *   treat the capability as not understood, so it falls back.)
 */

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Encoder = new TextEncoder();

const ADD_PATH_MODES: readonly (AddPathMode | undefined)[] = [undefined, 'receive', 'send', 'both'];

/** Decodes the capabilities in `b[off..end)` (the value of one type-2 optional parameter). */
export function decodeCapabilities(b: Uint8Array, off: number, end: number): Capability[] {
  const out: Capability[] = [];
  while (off < end) {
    if (end - off < 2) throw BgpError.open('UNSPECIFIC', `capability header truncated: ${end - off} byte(s) left in the parameter`);
    const code = b[off];
    const len = b[off + 1];
    off += 2;
    if (off + len > end) throw BgpError.open('UNSPECIFIC', `capability ${code} length ${len} overruns its optional parameter (${end - off} byte(s) left)`);
    out.push(decodeCapability(code, b.subarray(off, off + len)));
    off += len;
  }
  return out;
}

/** Decodes one capability value. `value` is copied where it is kept as bytes. */
export function decodeCapability(code: number, value: Uint8Array): Capability {
  const unknown = (): Capability => ({ kind: 'unknown', code, value: value.slice() });
  const n = value.length;
  switch (code) {
    case CapabilityCode.MULTIPROTOCOL:
      // AFI (2), reserved (1, ignored on receipt per RFC 4760), SAFI (1).
      return n === 4 ? { kind: 'multiprotocol', afi: u16(value, 0), safi: value[3] } : unknown();
    case CapabilityCode.ROUTE_REFRESH:
      return n === 0 ? { kind: 'routeRefresh' } : unknown();
    case CapabilityCode.ENHANCED_ROUTE_REFRESH:
      return n === 0 ? { kind: 'enhancedRouteRefresh' } : unknown();
    case CapabilityCode.EXTENDED_MESSAGE:
      return n === 0 ? { kind: 'extendedMessage' } : unknown();
    case CapabilityCode.FOUR_OCTET_AS:
      if (n !== 4) throw BgpError.open('UNSPECIFIC', `4-octet AS capability has length ${n}, expected 4`);
      return { kind: 'fourOctetAs', asn: u32(value, 0) };
    case CapabilityCode.GRACEFUL_RESTART:
      return decodeGracefulRestart(value) ?? unknown();
    case CapabilityCode.LONG_LIVED_GRACEFUL_RESTART:
      return decodeLongLivedGracefulRestart(value) ?? unknown();
    case CapabilityCode.ADD_PATH:
      if (n % 4 !== 0) throw BgpError.open('UNSPECIFIC', `ADD-PATH capability length ${n} is not a multiple of 4`);
      return decodeAddPath(value) ?? unknown();
    case CapabilityCode.EXTENDED_NEXT_HOP:
      return decodeExtendedNextHop(value) ?? unknown();
    case CapabilityCode.FQDN:
      return decodeFqdn(value) ?? unknown();
    default:
      return unknown();
  }
}

function decodeGracefulRestart(v: Uint8Array): Capability | undefined {
  // Restart flags (4 bits: R, N, reserved) + restart time (12 bits), then AFI (2), SAFI (1), flags (1: F bit) per family.
  if (v.length < 2 || (v.length - 2) % 4 !== 0) return undefined;
  const head = u16(v, 0);
  const families = [];
  for (let o = 2; o < v.length; o += 4) families.push({ afi: u16(v, o), safi: v[o + 2], forwardingPreserved: (v[o + 3] & 0x80) !== 0 });
  return { kind: 'gracefulRestart', restarting: (head & 0x8000) !== 0, notification: (head & 0x4000) !== 0, restartTime: head & 0x0fff, families };
}

function decodeLongLivedGracefulRestart(v: Uint8Array): Capability | undefined {
  // RFC 9494 §3: per family AFI (2), SAFI (1), flags (1: F bit), long-lived stale time (3).
  if (v.length % 7 !== 0) return undefined;
  const families = [];
  for (let o = 0; o < v.length; o += 7) {
    families.push({ afi: u16(v, o), safi: v[o + 2], forwardingPreserved: (v[o + 3] & 0x80) !== 0, staleTime: (v[o + 4] << 16) | (v[o + 5] << 8) | v[o + 6] });
  }
  return { kind: 'longLivedGracefulRestart', families };
}

function decodeAddPath(v: Uint8Array): Capability | undefined {
  const families = [];
  for (let o = 0; o < v.length; o += 4) {
    const mode = ADD_PATH_MODES[v[o + 3]];
    if (mode === undefined) return undefined;
    families.push({ afi: u16(v, o), safi: v[o + 2], mode });
  }
  return { kind: 'addPath', families };
}

function decodeExtendedNextHop(v: Uint8Array): Capability | undefined {
  // RFC 8950: NLRI AFI (2), NLRI SAFI (2), Nexthop AFI (2) per entry.
  if (v.length % 6 !== 0) return undefined;
  const entries = [];
  for (let o = 0; o < v.length; o += 6) entries.push({ afi: u16(v, o), safi: u16(v, o + 2), nextHopAfi: u16(v, o + 4) });
  return { kind: 'extendedNextHop', entries };
}

function decodeFqdn(v: Uint8Array): Capability | undefined {
  // draft-walton-bgp-hostname-capability: hostname length (1), hostname, domain length (1), domain.
  if (v.length < 1) return undefined;
  const hLen = v[0];
  if (1 + hLen + 1 > v.length) return undefined;
  const dLen = v[1 + hLen];
  if (2 + hLen + dLen !== v.length) return undefined;
  try {
    return { kind: 'fqdn', hostname: utf8.decode(v.subarray(1, 1 + hLen)), domain: utf8.decode(v.subarray(2 + hLen)) };
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ encode

/** Appends one capability (code, length, value). Throws RangeError for values the wire cannot carry. */
export function encodeCapability(cap: Capability, w: Writer): void {
  switch (cap.kind) {
    case 'multiprotocol':
      checkUint(cap.afi, 0xffff, 'multiprotocol AFI');
      checkUint(cap.safi, 0xff, 'multiprotocol SAFI');
      w.u8(CapabilityCode.MULTIPROTOCOL).u8(4).u16(cap.afi).u8(0).u8(cap.safi);
      return;
    case 'routeRefresh':
      w.u8(CapabilityCode.ROUTE_REFRESH).u8(0);
      return;
    case 'enhancedRouteRefresh':
      w.u8(CapabilityCode.ENHANCED_ROUTE_REFRESH).u8(0);
      return;
    case 'extendedMessage':
      w.u8(CapabilityCode.EXTENDED_MESSAGE).u8(0);
      return;
    case 'fourOctetAs':
      checkUint(cap.asn, 0xffffffff, '4-octet AS number');
      w.u8(CapabilityCode.FOUR_OCTET_AS).u8(4).u32(cap.asn);
      return;
    case 'gracefulRestart': {
      checkUint(cap.restartTime, 0x0fff, 'graceful restart time');
      checkLength(2 + cap.families.length * 4, 'graceful restart capability');
      w.u8(CapabilityCode.GRACEFUL_RESTART).u8(2 + cap.families.length * 4);
      w.u16((cap.restarting ? 0x8000 : 0) | (cap.notification ? 0x4000 : 0) | cap.restartTime);
      for (const f of cap.families) {
        checkUint(f.afi, 0xffff, 'graceful restart AFI');
        checkUint(f.safi, 0xff, 'graceful restart SAFI');
        w.u16(f.afi)
          .u8(f.safi)
          .u8(f.forwardingPreserved ? 0x80 : 0);
      }
      return;
    }
    case 'longLivedGracefulRestart':
      checkLength(cap.families.length * 7, 'long-lived graceful restart capability');
      w.u8(CapabilityCode.LONG_LIVED_GRACEFUL_RESTART).u8(cap.families.length * 7);
      for (const f of cap.families) {
        checkUint(f.afi, 0xffff, 'long-lived graceful restart AFI');
        checkUint(f.safi, 0xff, 'long-lived graceful restart SAFI');
        checkUint(f.staleTime, 0xffffff, 'long-lived stale time');
        w.u16(f.afi)
          .u8(f.safi)
          .u8(f.forwardingPreserved ? 0x80 : 0)
          .u8(f.staleTime >>> 16)
          .u16(f.staleTime & 0xffff);
      }
      return;
    case 'addPath':
      checkLength(cap.families.length * 4, 'ADD-PATH capability');
      w.u8(CapabilityCode.ADD_PATH).u8(cap.families.length * 4);
      for (const f of cap.families) {
        checkUint(f.afi, 0xffff, 'ADD-PATH AFI');
        checkUint(f.safi, 0xff, 'ADD-PATH SAFI');
        const mode = ADD_PATH_MODES.indexOf(f.mode);
        if (mode < 1) throw new RangeError(`ADD-PATH mode must be receive, send or both, got ${String(f.mode)}`);
        w.u16(f.afi).u8(f.safi).u8(mode);
      }
      return;
    case 'extendedNextHop':
      checkLength(cap.entries.length * 6, 'extended next hop capability');
      w.u8(CapabilityCode.EXTENDED_NEXT_HOP).u8(cap.entries.length * 6);
      for (const e of cap.entries) {
        checkUint(e.afi, 0xffff, 'extended next hop NLRI AFI');
        checkUint(e.safi, 0xffff, 'extended next hop NLRI SAFI');
        checkUint(e.nextHopAfi, 0xffff, 'extended next hop AFI');
        w.u16(e.afi).u16(e.safi).u16(e.nextHopAfi);
      }
      return;
    case 'fqdn': {
      const host = utf8Encoder.encode(cap.hostname);
      const domain = utf8Encoder.encode(cap.domain);
      if (host.length > 255 || domain.length > 255) throw new RangeError('FQDN capability: hostname and domain must each be at most 255 bytes of UTF-8');
      checkLength(2 + host.length + domain.length, 'FQDN capability');
      w.u8(CapabilityCode.FQDN).u8(2 + host.length + domain.length);
      w.u8(host.length).bytes(host).u8(domain.length).bytes(domain);
      return;
    }
    case 'unknown':
      checkUint(cap.code, 0xff, 'capability code');
      checkLength(cap.value.length, `capability ${cap.code}`);
      w.u8(cap.code).u8(cap.value.length).bytes(cap.value);
      return;
  }
}

/** Capabilities as TLV bytes, e.g. the data of an Unsupported Capability (2/7) NOTIFICATION (RFC 5492 §3). */
export function encodeCapabilities(caps: readonly Capability[]): Uint8Array {
  const w = new Writer(64);
  for (const cap of caps) encodeCapability(cap, w);
  return w.finish();
}

function checkUint(v: number, max: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v > max) throw new RangeError(`${what} must be an integer in 0..${max}, got ${v}`);
}

function checkLength(n: number, what: string): void {
  if (n > 255) throw new RangeError(`${what} value is ${n} bytes; a capability holds at most 255`);
}
