/**
 * What the four tsbgp-<daemon> interop tests share: the sessions of the
 * tsbgp-<daemon>.clab.yml topologies, tsbgp's configuration, the routes
 * tsbgp originates and what each daemon should make of them (and tsbgp of
 * the daemon's), config generation, and a no-loss kernel route monitor for
 * graceful restart. The scenarios built on these are in scenarios.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FamilyName, PeerOptions, PeerStatus } from '../../src/speaker/types.js';
import { loadTopology, type Topology } from '../lab/topology.js';
import { ATTR_SETS, type DaemonRoute } from './daemon-routes.js';
import type { NodeConfig, PrefixRange, RouteSpec } from './speaker-protocol.js';

export const TOPOLOGIES = join(dirname(fileURLToPath(import.meta.url)), '..', 'lab', 'topologies');

export const TS_ASN = 4200000001;
export const D_ASN = 4200000002;
export const TWO_BYTE_ASN = 65002;
export const HOLD_TIME = 9;
export const RESTART_TIME = 60;

export interface Session {
  /** The daemon's name for it (BIRD protocol name). */
  readonly name: 'e4' | 'i4' | 'e2' | 'e6' | 'i6' | 'n2';
  readonly family: FamilyName;
  /** tsbgp's address (the daemon's neighbor). */
  readonly ts: string;
  /** The daemon's address (tsbgp's peer). */
  readonly d: string;
  readonly ibgp: boolean;
  /** The AS the daemon speaks on this session. */
  readonly daemonAsn: number;
  /** The AS tsbgp speaks on this session. */
  readonly tsAsn: number;
  /** The peer does not announce 4-byte AS support (RFC 6793): 2-byte AS_PATHs on the wire. */
  readonly twoByteOnly?: boolean;
}

export const SESSIONS: readonly Session[] = [
  { name: 'e4', family: 'ipv4', ts: '198.51.100.1', d: '198.51.100.11', ibgp: false, daemonAsn: D_ASN, tsAsn: TS_ASN },
  { name: 'i4', family: 'ipv4', ts: '198.51.100.2', d: '198.51.100.12', ibgp: true, daemonAsn: D_ASN, tsAsn: D_ASN },
  { name: 'e2', family: 'ipv4', ts: '198.51.100.3', d: '198.51.100.13', ibgp: false, daemonAsn: TWO_BYTE_ASN, tsAsn: TS_ASN },
  { name: 'e6', family: 'ipv6', ts: '2001:db8:51::1', d: '2001:db8:51::11', ibgp: false, daemonAsn: D_ASN, tsAsn: TS_ASN },
  { name: 'i6', family: 'ipv6', ts: '2001:db8:51::2', d: '2001:db8:51::12', ibgp: true, daemonAsn: D_ASN, tsAsn: D_ASN },
];

/**
 * A sixth session, BIRD only (`enable as4 off`): a peer that does not announce
 * the 4-byte AS capability, so tsbgp's OPEN carries AS_TRANS in My AS and its
 * paths go out as AS_PATH with 23456 plus AS4_PATH (RFC 6793).
 */
export const AS2_ONLY: Session = {
  name: 'n2',
  family: 'ipv4',
  ts: '198.51.100.4',
  d: '198.51.100.14',
  ibgp: false,
  daemonAsn: 65003,
  tsAsn: TS_ASN,
  twoByteOnly: true,
};
export const AS_TRANS = 23456;

export const session = (name: Session['name']): Session => [...SESSIONS, AS2_ONLY].find((s) => s.name === name)!;
/** The session on which tsbgp has this address (how FRR and GoBGP name a route's source). */
export const sessionAt = (ts: string | undefined): Session['name'] | undefined => [...SESSIONS, AS2_ONLY].find((s) => s.ts === ts)?.name;

/** What tsbgp originates: each family gets three attribute sets. */
export const TS_ROUTES: readonly RouteSpec[] = [
  { prefix: '203.0.113.0/28', attrs: { origin: 'igp', med: 10, localPref: 200, communities: ['65001:10'], largeCommunities: ['4200000001:1:10'] } },
  {
    prefix: '203.0.113.16/28',
    attrs: { origin: 'egp', med: 20, localPref: 300, communities: ['65001:20', '65001:21'], largeCommunities: ['4200000001:2:20', '4200000001:2:21'] },
  },
  { prefix: '203.0.113.32/28', attrs: { origin: 'incomplete', communities: [], largeCommunities: [] } },
  { prefix: '2001:db8:100::/48', attrs: { origin: 'igp', med: 10, localPref: 200, communities: ['65001:10'], largeCommunities: ['4200000001:1:10'] } },
  {
    prefix: '2001:db8:101::/48',
    attrs: { origin: 'egp', med: 20, localPref: 300, communities: ['65001:20', '65001:21'], largeCommunities: ['4200000001:2:20'] },
  },
  { prefix: '2001:db8:102::/48', attrs: { origin: 'incomplete', med: 0, communities: ['65001:30'], largeCommunities: [] } },
];

export const familyOf = (prefix: string): FamilyName => (prefix.includes(':') ? 'ipv6' : 'ipv4');
export const TS_PREFIXES = (f: FamilyName): string[] => TS_ROUTES.filter((r) => familyOf(r.prefix) === f).map((r) => r.prefix);

/** 100,000 IPv4 /32s for the scale test: 198.18.0.0 … 198.19.134.159. */
export const SCALE_RANGE: PrefixRange = { start: '198.18.0.0', length: 32, count: 100_000 };

/** A daemon-neutral view of one route, for comparing what each side shows. */
export interface RouteView {
  readonly prefix: string;
  readonly origin: 'igp' | 'egp' | 'incomplete';
  readonly asPath: readonly number[];
  readonly nextHop?: string;
  readonly med?: number;
  readonly localPref?: number;
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
}

/** What a daemon should show for one of tsbgp's routes learned over `s`. */
export function expectedAtDaemon(r: RouteSpec, s: Session): RouteView {
  const a = r.attrs ?? {};
  return {
    prefix: r.prefix,
    origin: a.origin ?? 'igp',
    // eBGP: tsbgp prepends the AS it speaks on the session; iBGP: empty path
    asPath: s.ibgp ? [] : [s.tsAsn],
    nextHop: s.ts,
    med: a.med,
    ...(s.ibgp ? { localPref: a.localPref ?? 100 } : {}),
    communities: (a.communities ?? []).map(String).sort(),
    largeCommunities: [...(a.largeCommunities ?? [])].sort(),
  };
}

/** What tsbgp should hold for one of the daemon's routes (daemon-routes.ts) learned over `s`. */
export function expectedAtTs(s: Session, r: DaemonRoute): TsRouteView {
  const a = ATTR_SETS[r.set];
  // iBGP: LOCAL_PREF 100, the default the daemons send when the route has none
  return viewOfTs({
    prefix: r.prefix,
    asPath: s.ibgp ? [] : [s.daemonAsn],
    nextHop: s.d,
    med: a.med,
    localPref: s.ibgp ? 100 : undefined,
    communities: a.communities,
    largeCommunities: a.largeCommunities,
  });
}

/** tsbgp's configuration for these sessions (only those named, default all). */
/**
 * `restarting`: the speaker comes back from a crash (kill -9) and says so in
 * its OPENs (graceful-restart R bit, F bit per family); without it the F bit
 * is clear and a helper must flush our stale routes at once (RFC 4724 4.2).
 */
export function tsConfig(
  opts: {
    sessions?: readonly Session['name'][];
    extra?: readonly Session[];
    routes?: readonly RouteSpec[];
    ranges?: NodeConfig['ranges'];
    gracefulRestart?: boolean;
    restarting?: boolean;
    verbose?: boolean;
  } = {},
): NodeConfig {
  const sessions = [...SESSIONS, ...(opts.extra ?? [])].filter((s) => !opts.sessions || opts.sessions.includes(s.name));
  const peers: PeerOptions[] = sessions.map((s) => ({
    address: s.d,
    asn: s.daemonAsn,
    ...(s.tsAsn !== TS_ASN ? { localAsn: s.tsAsn } : {}),
    description: s.name,
    families: [s.family],
    holdTime: HOLD_TIME,
    keepaliveTime: 3,
    connectRetryTime: 2,
    localAddress: s.ts,
    gracefulRestart: opts.gracefulRestart === false ? false : { restartTime: RESTART_TIME },
  }));
  return {
    speaker: { asn: TS_ASN, routerId: '198.51.100.1', listen: { port: 179 }, coalesceMs: 5, maxDelayMs: 50, ...(opts.restarting ? { restarting: true } : {}) },
    peers,
    routes: opts.routes ?? TS_ROUTES,
    ranges: opts.ranges,
    verbose: opts.verbose ?? true,
  };
}

/** The capabilities both ends should agree on, in one shape for every daemon. */
export interface NegotiatedView {
  readonly families: readonly FamilyName[];
  readonly asn4: boolean;
  readonly routeRefresh: boolean;
  readonly enhancedRouteRefresh: boolean;
  readonly extendedMessage: boolean;
  readonly gracefulRestart: boolean;
  readonly holdTime: number;
  /** The AS the daemon sees for tsbgp. */
  readonly peerAsn: number;
}

/** tsbgp's status() in the same shape, with the peer AS as the daemon should see it. */
export function tsNegotiated(p: PeerStatus, s: Session): NegotiatedView {
  const n = p.negotiated;
  if (!n) throw new Error(`peer ${p.address} has no negotiated capabilities (state ${p.state})`);
  return {
    families: [...n.families].sort(),
    asn4: n.asn4,
    routeRefresh: n.routeRefresh,
    enhancedRouteRefresh: n.enhancedRouteRefresh,
    extendedMessage: n.extendedMessage,
    gracefulRestart: n.gracefulRestart !== undefined,
    holdTime: n.holdTime,
    peerAsn: s.tsAsn,
  };
}

/**
 * Loads a topology and replaces a node's config by the given text (a file in
 * a fresh temp folder), for configs with generated parts. `cleanup` removes
 * the folder.
 */
export function topologyWith(file: string, node: string, config: (base: string, dir: string) => string): { topo: Topology; dir: string; cleanup: () => void } {
  const topo = loadTopology(join(TOPOLOGIES, file));
  const dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-gen-`));
  const n = topo.nodes.find((x) => x.name === node);
  if (!n?.config) throw new Error(`${file}: node "${node}" has no startup-config`);
  const out = join(dir, n.config.split('/').pop()!);
  writeFileSync(out, config(readFileSync(n.config, 'utf8'), dir));
  n.config = out;
  return { topo, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Like lab/eventually.ts, but awaits the check, so async checks retry too. */
export async function until<T>(check: () => T | Promise<T>, ms = 60_000, everyMs = 500): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Follows a namespace's kernel routing table with `ip monitor route` (IPv4
 * and IPv6 netlink events as they happen), starting from the table as it is,
 * and records every moment one of `expected` was absent. Polling `ip route`
 * instead left gaps of up to ~170 ms on a loaded 2-core machine; the event
 * stream sees any deletion, however short.
 */
export class KernelMonitor {
  private readonly follower: LineFollower;
  private readonly present: Set<string>;
  events = 0;
  /** Every prefix deleted while watching (also those not expected). */
  readonly deleted: string[] = [];
  readonly losses: { at: number; missing: string[] }[] = [];

  constructor(
    ns: string,
    private readonly expected: readonly string[],
    initial: Iterable<string>,
    private readonly protocol: string,
  ) {
    this.present = new Set(initial);
    this.follower = new LineFollower(ns, ['ip', 'monitor', 'route'], (line) => this.line(line));
  }

  /** Every expected prefix was in the table when the monitor started. */
  get complete(): boolean {
    return this.expected.every((p) => this.present.has(p));
  }

  private line(line: string): void {
    const m = /^(Deleted )?(\S+) .*\bproto (\S+)/.exec(line);
    if (!m || m[3] !== this.protocol) return;
    this.events++;
    if (m[1]) {
      this.present.delete(m[2]);
      this.deleted.push(m[2]);
    } else this.present.add(m[2]);
    const missing = this.expected.filter((p) => !this.present.has(p));
    if (missing.length) this.losses.push({ at: Date.now(), missing });
  }

  async stop(): Promise<{ events: number; deleted: string[]; losses: { at: number; missing: string[] }[] }> {
    await this.follower.stop();
    return { events: this.events, deleted: this.deleted, losses: this.losses };
  }
}

/** Runs a command in a namespace and hands each whole line of its output to `line`, until stop(). */
export class LineFollower {
  private readonly child: ChildProcess;
  private buf = '';

  constructor(ns: string, argv: readonly string[], line: (line: string) => void) {
    this.child = spawn('ip', ['netns', 'exec', ns, ...argv], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString('utf8');
      const lines = this.buf.split('\n');
      this.buf = lines.pop()!;
      for (const l of lines) line(l);
    });
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** Sorted copy, for order-free comparisons. */
export const sorted = <T>(xs: Iterable<T>): T[] => [...xs].sort();

/** A route in tsbgp's Adj-RIB-In, as viewOfTs gives it. */
export type TsRouteView = Omit<RouteView, 'origin'>;

/** Normalizes tsbgp's received routes (prefix strings, sorted lists) for comparison with a daemon's Adj-RIB-Out. */
export function viewOfTs(r: {
  prefix: string;
  asPath: readonly number[];
  nextHop?: string;
  med?: number;
  localPref?: number;
  communities: readonly string[];
  largeCommunities: readonly string[];
  origin?: string;
}): TsRouteView {
  return {
    prefix: r.prefix,
    asPath: [...r.asPath],
    nextHop: r.nextHop,
    med: r.med,
    localPref: r.localPref,
    communities: [...r.communities].sort(),
    largeCommunities: [...r.largeCommunities].sort(),
  };
}
