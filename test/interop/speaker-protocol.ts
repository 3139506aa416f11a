/**
 * The stdio protocol between a test and a speaker-node.ts child process:
 * one JSON object per line each way. Plain data only, shared by both ends.
 */
import type { AdvertisedRoute, PeerOptions, PeerStatus, ReceivedRoute, RouteAttributes, SpeakerOptions } from '../../src/speaker/types.js';

/** `count` consecutive prefixes of `length` bits starting at `start` (an address). */
export interface PrefixRange {
  readonly start: string;
  readonly length: number;
  readonly count: number;
}

export interface RouteSpec {
  readonly prefix: string;
  readonly attrs?: RouteAttributes;
}

/** The CONFIG.json a speaker node starts from. */
export interface NodeConfig {
  readonly speaker: Omit<SpeakerOptions, 'log'>;
  readonly peers: readonly PeerOptions[];
  /** Originated before start(), so a restarted speaker comes back with them. */
  readonly routes?: readonly RouteSpec[];
  readonly ranges?: readonly { readonly range: PrefixRange; readonly attrs?: RouteAttributes }[];
  /** Speaker log lines to stderr. */
  readonly verbose?: boolean;
}

export type Request = { readonly id: number } & (
  | { readonly cmd: 'status' }
  /** Per-peer state and counters, and the process's memory: cheap enough to poll with a full table. */
  | { readonly cmd: 'counts' }
  /** A command of the program the node runs in (NodeHooks.commands). */
  | { readonly cmd: 'ext'; readonly name: string; readonly args?: unknown }
  | { readonly cmd: 'originate'; readonly routes: readonly RouteSpec[] }
  | { readonly cmd: 'originateRange'; readonly range: PrefixRange; readonly attrs?: RouteAttributes }
  | { readonly cmd: 'withdraw'; readonly prefixes: readonly string[] }
  | { readonly cmd: 'withdrawRange'; readonly range: PrefixRange }
  | { readonly cmd: 'received'; readonly peer?: string }
  | { readonly cmd: 'advertised'; readonly peer: string }
  | { readonly cmd: 'routeRefresh'; readonly peer: string; readonly family?: 'ipv4' | 'ipv6' }
  | { readonly cmd: 'addPeer'; readonly peer: PeerOptions }
  | { readonly cmd: 'updatePeer'; readonly peer: PeerOptions }
  | { readonly cmd: 'removePeer'; readonly address: string; readonly message?: string }
  | { readonly cmd: 'stop'; readonly message?: string; readonly graceful?: boolean }
  /** RFC 8326 graceful shutdown of every peer (undo: false). */
  | { readonly cmd: 'drain'; readonly undo?: boolean }
);

export type Reply = { readonly id: number; readonly ok: true; readonly result: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

export type WireEvent =
  | { readonly event: 'ready'; readonly pid: number }
  | { readonly event: 'fatal'; readonly error: string }
  | { readonly event: 'peerUp'; readonly peer: PeerStatus }
  | { readonly event: 'peerDown'; readonly peer: PeerStatus; readonly reason: string }
  | { readonly event: 'stateChange'; readonly peer: PeerStatus; readonly from: string };

/** Reply to `counts`. */
export interface NodeCounts {
  readonly peers: readonly ({ readonly address: string; readonly state: string } & PeerStatus['counters'])[];
  /** Bytes: peak and current resident set (/proc/self/status), V8 heap in use, off-heap. */
  readonly memory: { readonly hwm: number; readonly rss: number; readonly heapUsed: number; readonly external: number; readonly arrayBuffers: number };
}

/** Routes as they cross the pipe: the speaker's AdvertisedRoute / ReceivedRoute as JSON, prefixes as strings (Prefix.toJSON). */
export type WireRoute = Omit<AdvertisedRoute, 'prefix'> & Partial<Pick<ReceivedRoute, 'peer' | 'best' | 'stale' | 'pathId'>> & { readonly prefix: string };

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function v4ToInt(a: string): number {
  const m = V4.exec(a);
  if (!m || m.slice(1).some((o) => Number(o) > 255)) throw new Error(`range start "${a}": not an IPv4 address`);
  return m.slice(1).reduce((acc, o) => acc * 256 + Number(o), 0);
}

const intToV4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

function v6ToBig(a: string): bigint {
  const [head, tail] = a.includes('::') ? a.split('::') : [a, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) throw new Error(`range start "${a}": not an IPv6 address`);
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function bigToV6(n: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((n >> BigInt(i * 16)) & 0xffffn).toString(16));
  // compress the longest run of zero groups (RFC 5952), as daemons print them
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** The prefixes of a range, in order, as strings daemons print ("198.18.0.1/32", "2001:db8:1::/48"). */
export function expandRange(r: PrefixRange): string[] {
  if (!Number.isInteger(r.count) || r.count < 0) throw new Error(`range count ${r.count}: must be a non-negative integer`);
  const out: string[] = [];
  if (r.start.includes(':')) {
    if (!(r.length >= 1 && r.length <= 128)) throw new Error(`range length ${r.length}: must be 1..128 for IPv6`);
    const step = 1n << BigInt(128 - r.length);
    const start = v6ToBig(r.start);
    if (start % step !== 0n) throw new Error(`range start ${r.start} has host bits set for /${r.length}`);
    const end = start + step * BigInt(r.count);
    if (end > 1n << 128n) throw new Error(`range ${r.start}/${r.length} x ${r.count} runs past the end of the address space`);
    for (let i = 0n; i < BigInt(r.count); i++) out.push(`${bigToV6(start + i * step)}/${r.length}`);
    return out;
  }
  if (!(r.length >= 1 && r.length <= 32)) throw new Error(`range length ${r.length}: must be 1..32 for IPv4`);
  const step = 2 ** (32 - r.length);
  const start = v4ToInt(r.start);
  if (start % step !== 0) throw new Error(`range start ${r.start} has host bits set for /${r.length}`);
  if (start + step * r.count > 2 ** 32) throw new Error(`range ${r.start}/${r.length} x ${r.count} runs past 255.255.255.255`);
  for (let i = 0; i < r.count; i++) out.push(`${intToV4(start + i * step)}/${r.length}`);
  return out;
}
