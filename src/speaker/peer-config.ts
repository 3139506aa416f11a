/**
 * PeerOptions (the public, user-facing shape) → what the session layer and
 * the RIB need, plus the rule for which changes need a session reset.
 */
import { Address } from '../net/index.js';
import {
  canonicalRemote,
  assertTransportSupported,
  transportOptionsProblem,
  DEFAULT_IDLE_HOLD,
  sessionConfig,
  validateSessionConfig,
  type SessionConfig,
} from '../session/index.js';
import { UNICAST, type AfiSafi } from '../wire/index.js';
import { validateMaxPrefixes } from './max-prefix.js';
import type { FamilyName, PeerOptions } from './types.js';
import { bfdTimers } from './bfd.js';
import { PeerConfigError } from './peer-config-error.js';

const FAMILY: Record<FamilyName, AfiSafi> = { ipv4: UNICAST[4], ipv6: UNICAST[6] };

/**
 * The peer's key: its address in canonical text; with a port
 * (`192.0.2.1:1790`, `[2001:db8::1]:1790`) for a second peer at an address
 * already taken by another on a different port. `address` may be such a key.
 * Throws PeerConfigError for anything else.
 */
export function peerId(address: string, port?: number): string {
  const k = parsePeerKey(address);
  const p = port ?? k.port;
  if (p === undefined) return k.address;
  return k.address.includes(':') ? `[${k.address}]:${p}` : `${k.address}:${p}`;
}

/** A peer key (or plain address) → its canonical address and port (undefined: none given). */
export function parsePeerKey(text: string): { address: string; port?: number } {
  const s = String(text);
  const plain = canonicalRemote(s);
  if (plain !== undefined) return { address: plain };
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(s) ?? /^([0-9.]+):(\d{1,5})$/.exec(s);
  const address = m ? canonicalRemote(m[1]) : undefined;
  const port = m ? Number(m[2]) : 0;
  if (address === undefined || port < 1 || port > 65535)
    throw new PeerConfigError(`peer address ${JSON.stringify(text)} is not an IP address (or address:port)`);
  return { address, port };
}

function optionalAddress(text: string | undefined, field: string, family?: 4 | 6): Address | undefined {
  if (text === undefined) return undefined;
  let a: Address;
  try {
    a = Address.parse(text);
  } catch (e) {
    throw new PeerConfigError(`${field}: ${(e as Error).message}`);
  }
  if (family !== undefined && a.family !== family) throw new PeerConfigError(`${field} must be an IPv${family} address, got ${text}`);
  return a;
}

/** Checks everything that can be checked before a session exists; throws naming the field. */
export function validatePeerOptions(o: PeerOptions, speakerAsn: number, routerId: string): SessionConfig {
  const id = peerId(o.address);
  const where = `peer ${id}`;
  const transport = transportOptionsProblem({ password: o.password, ttlSecurity: o.ttlSecurity });
  if (transport) throw new PeerConfigError(`${where}: ${transport}`);
  // TCP-MD5 and GTSM need the FFI (koffi); where it cannot load, refuse loudly (UnsupportedTransportError).
  assertTransportSupported({ password: o.password, ttlSecurity: o.ttlSecurity }, id);
  if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535))
    throw new PeerConfigError(`${where}: port must be 1..65535, got ${o.port}`);
  const families = o.families ?? ['ipv4', 'ipv6'];
  for (const f of families) if (!(f in FAMILY)) throw new PeerConfigError(`${where}: families: unknown family ${JSON.stringify(f)} (known: ipv4, ipv6)`);
  if (families.length === 0) throw new PeerConfigError(`${where}: families must list at least one of ipv4, ipv6`);
  optionalAddress(o.nextHopV6, `${where}: nextHopV6`, 6);
  optionalAddress(o.nextHopV4, `${where}: nextHopV4`, 4);
  optionalAddress(o.localAddress, `${where}: localAddress`);
  bfdTimers(o.bfd, where);
  const llst = o.gracefulRestart ? o.gracefulRestart.longLivedStaleTime : undefined;
  if (llst !== undefined && (!Number.isInteger(llst) || llst < 1 || llst > 0xffffff))
    throw new PeerConfigError(`${where}: gracefulRestart.longLivedStaleTime must be a whole number of seconds 1..16777215, got ${llst}`);
  try {
    validateMaxPrefixes(o.maxPrefixes, where);
  } catch (e) {
    throw new PeerConfigError((e as Error).message);
  }
  if (o.sendHoldTime !== undefined && !(Number.isFinite(o.sendHoldTime) && o.sendHoldTime >= 0 && o.sendHoldTime <= 65535))
    throw new PeerConfigError(`${where}: sendHoldTime must be 0..65535 seconds, got ${o.sendHoldTime}`);
  if (o.allowOwnAs !== undefined && (!Number.isInteger(o.allowOwnAs) || o.allowOwnAs < 0 || o.allowOwnAs > 10))
    throw new PeerConfigError(`${where}: allowOwnAs must be 0..10, got ${o.allowOwnAs}`);
  try {
    return validateSessionConfig(toSessionConfig(o, speakerAsn, routerId));
  } catch (e) {
    throw new PeerConfigError(`${where}: ${(e as Error).message}`);
  }
}

/*
 * Parts of a SessionConfig that a reflector's hundreds of peers configure
 * alike are made once and shared (frozen): the family list, the graceful
 * restart settings, the damping settings. Keys are the few settings they
 * depend on, so the caches stay as small as the distinct configurations.
 */
const SHARED = new Map<string, object>();
function shared<T extends object>(key: string, make: () => T): T {
  let v = SHARED.get(key) as T | undefined;
  if (v === undefined) SHARED.set(key, (v = Object.freeze(make())));
  return v;
}

export function toSessionConfig(o: PeerOptions, speakerAsn: number, routerId: string): SessionConfig {
  const names = o.families ?? ['ipv4', 'ipv6'];
  const families = shared(`families ${names.join(',')}`, () => names.map((f) => FAMILY[f]));
  const idle = o.idleHoldTime ?? DEFAULT_IDLE_HOLD.initial;
  const restartTime = o.gracefulRestart === false ? 0 : (o.gracefulRestart?.restartTime ?? 120);
  const notification = o.gracefulRestart === false ? false : (o.gracefulRestart?.notification ?? true);
  const gr =
    o.gracefulRestart === false
      ? undefined
      : shared(`gr ${names.join(',')} ${restartTime} ${notification}`, () => ({
          restartTime,
          stalePathTime: 360,
          forwardingPreserved: families,
          notification,
        }));
  return sessionConfig({
    localAs: o.localAsn ?? speakerAsn,
    localId: routerId,
    peerAs: o.asn,
    holdTime: o.holdTime ?? 90,
    keepaliveTime: o.keepaliveTime,
    connectRetryTime: o.connectRetryTime ?? 5,
    passive: o.passive ?? false,
    idleHold: idle === DEFAULT_IDLE_HOLD.initial ? DEFAULT_IDLE_HOLD : { ...DEFAULT_IDLE_HOLD, initial: idle, max: Math.max(DEFAULT_IDLE_HOLD.max, idle) },
    families,
    extendedMessage: o.extendedMessage ?? false,
    addPath: o.addPath ? families.map((f) => ({ ...f, mode: o.addPath! })) : [],
    gracefulRestart: gr,
    ...(gr && o.gracefulRestart && o.gracefulRestart.longLivedStaleTime !== undefined
      ? { longLivedGracefulRestart: { staleTime: o.gracefulRestart.longLivedStaleTime, forwardingPreserved: families } }
      : {}),
  });
}

/**
 * Settings a running session depends on (its OPEN, its socket, or a RIB
 * property fixed per peer). A change to any of them resets the session with
 * Cease 6/6; everything else (description, policies, next-hop handling,
 * allowOwnAs) is applied in place.
 */
export function sessionKey(o: PeerOptions): string {
  return JSON.stringify([
    o.port ?? 179,
    o.asn,
    o.localAsn,
    o.families ?? ['ipv4', 'ipv6'],
    o.holdTime,
    o.keepaliveTime,
    o.connectRetryTime,
    o.passive ?? false,
    o.localAddress,
    o.localPort,
    o.gracefulRestart,
    o.addPath,
    o.routeReflectorClient ?? false,
    o.extendedMessage ?? false,
    o.idleHoldTime,
    o.sendHoldTime,
    o.password || undefined,
    o.ttlSecurity || undefined,
  ]);
}
