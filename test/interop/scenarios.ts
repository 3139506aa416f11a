/**
 * The interop scenarios, written once: each takes the test file's lab and
 * speaker (InteropRun) and a Daemon, the few reads that differ between BIRD,
 * FRR, GoBGP and ExaBGP. What a daemon cannot do alike (ExaBGP's link down,
 * GoBGP's route refresh) stays in its test file, built from the pieces here.
 */
import { expect } from 'vitest';
import type { PeerStatus } from '../../src/speaker/types.js';
import { Lab } from '../lab/netns.js';
import { sleep } from '../lab/shell.js';
import type { Topology } from '../lab/topology.js';
import { daemonRange } from './daemon-routes.js';
import {
  AS_TRANS,
  expectedAtDaemon,
  familyOf,
  HOLD_TIME,
  KernelMonitor,
  SCALE_RANGE,
  session,
  sorted,
  TS_PREFIXES,
  TS_ROUTES,
  tsConfig,
  tsNegotiated,
  until,
  viewOfTs,
  type NegotiatedView,
  type RouteView,
  type Session,
  type TsRouteView,
} from './harness.js';
import type { NodeConfig, WireRoute } from './speaker-protocol.js';
import { SpeakerProcess } from './speaker-client.js';

/** A test file's lab and its tsbgp speaker on node ts1, which tests restart. */
export class InteropRun {
  private labUp: Lab | undefined;
  private speaker: SpeakerProcess | undefined;
  private cleanup = (): void => {};

  /** beforeAll: the topology up; `cleanup` (topologyWith's) runs after teardown. */
  async up(topo: Topology, cleanup?: () => void): Promise<Lab> {
    if (cleanup) this.cleanup = cleanup;
    this.labUp = await Lab.up(topo, { ephemeral: true });
    return this.labUp;
  }

  /** afterAll: the speaker killed, the lab torn down, generated files removed. */
  async down(): Promise<void> {
    await this.speaker?.kill9().catch(() => undefined);
    this.labUp?.teardown();
    this.cleanup();
  }

  get lab(): Lab {
    if (!this.labUp) throw new Error('the lab is not up');
    return this.labUp;
  }

  /** The speaker started last. */
  get ts(): SpeakerProcess {
    if (!this.speaker) throw new Error('no tsbgp speaker started');
    return this.speaker;
  }

  /** A fresh speaker process; an earlier one still running (a failed test) is killed first, or it would hold port 179. */
  async restartTs(config: NodeConfig, opts?: Parameters<typeof SpeakerProcess.start>[3]): Promise<SpeakerProcess> {
    await this.speaker?.kill9();
    this.speaker = await SpeakerProcess.start(this.lab, 'ts1', config, opts);
    return this.speaker;
  }
}

/** One of tsbgp's routes as a daemon holds it, with the session it came over. */
export type Learned = RouteView & {
  /** Session['name'] of the session it came over. */
  readonly session: string | undefined;
  /** Kept through a graceful restart; set by readers with Daemon.marksStale. */
  readonly stale?: boolean;
};

/** How a scenario reads one daemon (node d1). */
export interface Daemon {
  /** For the test output. */
  readonly name: string;
  readonly sessions: readonly Session[];
  /** Reads the daemon's session states (FRR in one query); the result gives one session's. */
  states(): (s: Session) => unknown;
  /** What states() gives for an Established session. */
  readonly established: unknown;
  /** learned() marks routes kept through a graceful restart (GoBGP's reader does); only then is "none stale" checked. */
  readonly marksStale?: boolean;
  /**
   * tsbgp's routes in the daemon's RIB. `prefixes`: those the caller needs (FRR is
   * asked per prefix); a reader with a whole-table query returns it all, so filter.
   */
  learned(prefixes?: readonly string[]): Learned[];
  /** The route protocol its kernel routes carry (`ip route … proto X`); none for a daemon that installs none. */
  readonly kernelProto?: string;
}

export const SHUTDOWN_MESSAGE = 'tsbgp interop: maintenance 42';

/** The one route the graceful-restart scenario's restarted speaker drops. */
const GR_DROPPED = '203.0.113.16/28';

/** Withdrawn and announced again. */
const WITHDRAWN = ['203.0.113.16/28', '2001:db8:101::/48'];

const ALL_TS_PREFIXES = TS_ROUTES.map((r) => r.prefix);

type Check = () => void | Promise<void>;

/** d1's kernel routes (IPv4 and IPv6) of this route protocol. */
function kernelPrefixes(lab: Lab, protocol: string): Set<string> {
  return new Set([...lab.kernelRoutes('d1', 4), ...lab.kernelRoutes('d1', 6)].filter((r) => r.protocol === protocol).map((r) => r.dst));
}

/** Where the daemon puts tsbgp's routes in effect: the kernel, or for a daemon that installs none its RIB. */
function held(run: InteropRun, d: Daemon): Set<string> {
  return d.kernelProto ? kernelPrefixes(run.lab, d.kernelProto) : new Set(d.learned().map((r) => r.prefix));
}

/** Every session Established: first as the daemon says (`states`, by default its current ones), then at tsbgp. */
export async function allEstablished(run: InteropRun, d: Daemon, states = d.states): Promise<void> {
  await until(
    () => {
      const state = states();
      for (const s of d.sessions) expect({ s: s.name, state: state(s) }).toEqual({ s: s.name, state: d.established });
    },
    60_000,
    250,
  );
  for (const s of d.sessions) await run.ts.waitEstablished(s.d, 30_000);
}

/** On `s` the daemon's negotiated capabilities equal tsbgp's, and tsbgp's are what was configured. */
export function expectAgreement(s: Session, theirs: NegotiatedView, mine: PeerStatus): void {
  const m = tsNegotiated(mine, s);
  // without 4-byte AS support the daemon knows tsbgp only by AS_TRANS, as configured
  expect({ session: s.name, ...theirs }).toEqual({ session: s.name, ...m, peerAsn: s.twoByteOnly ? AS_TRANS : s.tsAsn });
  expect({ session: s.name, hold: m.holdTime, asn4: m.asn4, families: m.families }).toEqual({
    session: s.name,
    hold: HOLD_TIME,
    asn4: !s.twoByteOnly,
    families: [s.family],
  });
}

/** tsbgp started on every session; each comes up with the capabilities both ends agree on. */
export async function capabilitiesAgree(run: InteropRun, d: Daemon, negotiated: (s: Session) => NegotiatedView & { established: boolean }): Promise<void> {
  await run.restartTs(tsConfig());
  await allEstablished(run, d);
  for (const s of d.sessions) {
    const { established, ...theirs } = negotiated(s);
    expect(established).toBe(true);
    expectAgreement(s, theirs, await run.ts.peer(s.d));
  }
}

/**
 * The daemon holds each of tsbgp's routes on each session with exactly the
 * attributes tsbgp sent, and nothing else; a daemon that installs routes has
 * them all in the kernel. Only iBGP carries tsbgp's LOCAL_PREF, so on eBGP
 * whatever the daemon shows (its own default) is not compared.
 */
export async function tsRoutesAtDaemon(run: InteropRun, d: Daemon): Promise<void> {
  await until(() => {
    const routes = d.learned();
    for (const s of d.sessions) {
      for (const r of TS_ROUTES.filter((x) => familyOf(x.prefix) === s.family)) {
        const { session: _s, stale: _st, localPref, ...rest } = routes.find((x) => x.session === s.name && x.prefix === r.prefix) ?? ({} as never);
        expect({ session: s.name, ...rest, ...(s.ibgp ? { localPref } : {}) }).toEqual({ session: s.name, ...expectedAtDaemon(r, s) });
      }
    }
    expect(routes).toHaveLength(d.sessions.reduce((n, s) => n + TS_PREFIXES(s.family).length, 0));
  }, 30_000);
  if (d.kernelProto) await until(() => expect(sorted(kernelPrefixes(run.lab, d.kernelProto!))).toEqual(sorted(ALL_TS_PREFIXES)), 15_000);
}

/** On each of `sessions` the daemon holds exactly tsbgp's prefixes of the session's family. */
export function expectTsPrefixesOn(d: Daemon, sessions: readonly Session[]): void {
  const routes = d.learned(ALL_TS_PREFIXES.filter((p) => sessions.some((s) => s.family === familyOf(p))));
  for (const s of sessions) {
    expect({ s: s.name, prefixes: sorted(routes.filter((r) => r.session === s.name).map((r) => r.prefix)) }).toEqual({
      s: s.name,
      prefixes: sorted(TS_PREFIXES(s.family)),
    });
  }
}

/** Session by session: what the daemon sends (`want`, from its own view where it shows one), then tsbgp's Adj-RIB-In is exactly that. */
export async function adjRibInMatches(
  run: InteropRun,
  sessions: readonly Session[],
  want: (s: Session) => TsRouteView[] | Promise<TsRouteView[]>,
): Promise<void> {
  for (const s of sessions) {
    const w = await want(s);
    await until(async () => {
      const got = (await run.ts.received(s.d)).map(viewOfTs);
      expect(got.length).toBe(w.length);
      const byPrefix = new Map(got.map((r) => [r.prefix, r]));
      for (const x of w) expect(byPrefix.get(x.prefix)).toEqual(x);
    }, 30_000);
  }
}

/**
 * tsbgp sends ROUTE-REFRESH on `s` and gets the daemon's whole table again.
 * `daemonSees` notes the daemon's counters and returns what it must then show.
 */
export async function tsAsksRefresh(run: InteropRun, s: Session, daemonSees?: () => Check): Promise<void> {
  const before = (await run.ts.peer(s.d)).counters;
  const seen = daemonSees?.();
  await run.ts.routeRefresh(s.d, s.family);
  await until(
    async () => {
      await seen?.();
      expect((await run.ts.peer(s.d)).counters.updatesIn).toBeGreaterThan(before.updatesIn);
    },
    15_000,
    200,
  );
  expect((await run.ts.received(s.d)).length).toBe(daemonRange(s.family).count);
}

/** The daemon asks for a refresh on `s` (`ask` sends it and returns what the daemon must then show); tsbgp re-sends. */
export async function daemonAsksRefresh(run: InteropRun, s: Session, ask: () => Check): Promise<void> {
  const tsOut = (await run.ts.peer(s.d)).counters.updatesOut;
  const got = ask();
  await until(
    async () => {
      await got();
      expect((await run.ts.peer(s.d)).counters.updatesOut).toBeGreaterThan(tsOut);
    },
    15_000,
    200,
  );
}

/**
 * tsbgp withdraws two routes: gone from the daemon's RIB (and kernel); then
 * announced again: back where the daemon puts them in effect, or as `restored` says.
 */
export async function withdrawal(
  run: InteropRun,
  d: Daemon,
  restored: Check = () => expect(sorted(held(run, d))).toEqual(sorted(ALL_TS_PREFIXES)),
): Promise<void> {
  await run.ts.withdraw(WITHDRAWN);
  await until(
    () => {
      expect(d.learned(WITHDRAWN).filter((r) => WITHDRAWN.includes(r.prefix))).toEqual([]);
      if (d.kernelProto) expect([...kernelPrefixes(run.lab, d.kernelProto)].filter((p) => WITHDRAWN.includes(p))).toEqual([]);
    },
    15_000,
    200,
  );
  await run.ts.originate(TS_ROUTES.filter((r) => WITHDRAWN.includes(r.prefix)));
  await until(restored, 15_000, 200);
}

/** Follows the kept routes through a restart; stop() ends it and tells what it saw. */
export type RestartWatch = (kept: readonly string[]) => Promise<{
  stop(): Promise<{ report: string; losses: readonly unknown[]; wasListening(): void }>;
}>;

/** A kernel-installing daemon's routes, followed with `ip monitor` (KernelMonitor). */
const kernelWatch =
  (run: InteropRun, d: Daemon): RestartWatch =>
  async (kept) => {
    if (!d.kernelProto) throw new Error(`${d.name} installs no kernel routes: give gracefulRestart a watch of its own`);
    const m = new KernelMonitor(run.lab.ns('d1'), kept, kernelPrefixes(run.lab, d.kernelProto), d.kernelProto);
    expect(m.complete).toBe(true);
    // let `ip monitor` subscribe before anything changes
    await sleep(300);
    return {
      stop: async () => {
        const w = await m.stop();
        return {
          report: `${w.events} kernel route events followed, ${w.losses.length} with a route missing`,
          losses: w.losses,
          // the monitor was listening: it saw the dropped route go (after End-of-RIB), and only that one
          wasListening: () => expect(w.deleted).toEqual([GR_DROPPED]),
        };
      },
    };
  };

/**
 * kill -9 and restart with a changed set: the daemon keeps tsbgp's routes
 * throughout (`watch`, by default its kernel routes), then after End-of-RIB
 * takes the new set.
 */
export async function gracefulRestart(run: InteropRun, d: Daemon, watch: RestartWatch = kernelWatch(run, d)): Promise<void> {
  // the restarted speaker drops 203.0.113.16/28 and changes the MED of 203.0.113.32/28
  const kept = TS_ROUTES.filter((r) => r.prefix !== GR_DROPPED);
  const next = kept.map((r) => (r.prefix === '203.0.113.32/28' ? { ...r, attrs: { ...r.attrs, med: 5 } } : r));
  const w = await watch(kept.map((r) => r.prefix));
  await run.ts.kill9();
  const t0 = Date.now();
  // the daemon notices the dead connection (RST) and keeps the routes as stale
  await until(() => expect(d.states()(session('e4'))).not.toBe(d.established), 15_000, 100);
  await run.restartTs(tsConfig({ routes: next, restarting: true }), { tag: 'speaker-restarted' });
  await allEstablished(run, d);
  await until(
    () => {
      const e4 = d.learned(TS_PREFIXES('ipv4')).filter((r) => r.session === 'e4');
      expect(e4.map((r) => r.prefix).sort()).toEqual(['203.0.113.0/28', '203.0.113.32/28']);
      expect(e4.find((r) => r.prefix === '203.0.113.32/28')?.med).toBe(5);
      if (d.marksStale) expect(e4.filter((r) => r.stale).map((r) => r.prefix)).toEqual([]);
      expect(held(run, d).has(GR_DROPPED)).toBe(false);
    },
    30_000,
    200,
  );
  const seen = await w.stop();
  console.log(`${d.name} graceful restart: back in ${Date.now() - t0} ms; ${seen.report}`);
  seen.wasListening();
  expect(seen.losses).toEqual([]);
}

/** tsbgp stops with an RFC 9003 message; every session goes down at the daemon. */
export async function adminShutdown(run: InteropRun, d: Daemon): Promise<void> {
  await run.ts.stop({ message: SHUTDOWN_MESSAGE });
  await until(
    () => {
      const state = d.states();
      for (const s of d.sessions) expect(state(s)).not.toBe(d.established);
    },
    10_000,
    200,
  );
}

/** Takes ts1's link down while `f` runs (given the moment it went), and up again whatever happens. */
export async function withLinkDown<T>(run: InteropRun, f: (t0: number) => Promise<T>): Promise<T> {
  const t0 = Date.now();
  run.lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'down']);
  try {
    return await f(t0);
  } finally {
    run.lab.mustExec('ts1', ['ip', 'link', 'set', 'eth1', 'up']);
  }
}

/**
 * Without graceful restart (with it, the daemon would rightly keep the routes
 * for the restart time), cut the link: within the hold time both ends drop
 * every session and the daemon drops tsbgp's routes.
 */
export async function linkDown(run: InteropRun, d: Daemon): Promise<void> {
  await run.restartTs(tsConfig({ gracefulRestart: false }), { tag: 'speaker-nogr' });
  await allEstablished(run, d);
  await until(() => expect(held(run, d).size).toBe(TS_ROUTES.length), 15_000, 200);
  await withLinkDown(run, async (t0) => {
    await until(
      async () => {
        const st = await run.ts.status();
        expect(st.filter((p) => p.state === 'Established').map((p) => p.address)).toEqual([]);
        const state = d.states();
        for (const s of d.sessions) expect(state(s)).not.toBe(d.established);
        if (d.kernelProto) expect(sorted(kernelPrefixes(run.lab, d.kernelProto))).toEqual([]);
        else expect(d.learned().map((r) => `${r.prefix} from ${r.session}${r.stale ? ' (stale)' : ''}`)).toEqual([]);
      },
      (HOLD_TIME + 3) * 1000,
      200,
    );
    const took = Date.now() - t0;
    console.log(`${d.name} link down: both ends down and ${d.kernelProto ? 'kernel clean' : 'routes gone'} after ${took} ms (hold time ${HOLD_TIME} s)`);
    // the hold timer runs from the last KEEPALIVE, so 9 s plus scheduling slack
    expect(took).toBeLessThanOrEqual((HOLD_TIME + 2) * 1000);
  });
  await allEstablished(run, d);
  await run.ts.stop();
}

/** 100,000 IPv4 prefixes from tsbgp on e4: all in the daemon's RIB (`count`), the last with its attributes (`routes`). */
export async function scale(run: InteropRun, d: Daemon, reads: { count(): number; routes(prefix: string): RouteView[] }): Promise<void> {
  await run.restartTs(
    tsConfig({ sessions: ['e4'], routes: [], ranges: [{ range: SCALE_RANGE, attrs: { med: 1, communities: ['65001:100'] } }], verbose: false }),
    { tag: 'speaker-scale' },
  );
  await until(() => expect(d.states()(session('e4'))).toBe(d.established), 60_000, 100);
  const up = Date.now();
  let n = 0;
  while ((n = reads.count()) < SCALE_RANGE.count && Date.now() - up < 120_000) await sleep(100);
  const ms = Date.now() - up;
  console.log(`${d.name} scale: ${n} of ${SCALE_RANGE.count} prefixes in ${d.name}'s RIB ${ms} ms after the session came up`);
  expect(n).toBe(SCALE_RANGE.count);
  const last = '198.19.134.159/32';
  expect(reads.routes(last).map((r) => ({ p: r.prefix, med: r.med, c: r.communities }))).toEqual([{ p: last, med: 1, c: ['65001:100'] }]);
}

/**
 * RFC 9494 at tsbgp, receiving: waits (up to `ms`) until every one of the
 * `count` routes from `cut` carries LLGR_STALE, then checks `prefix`'s path
 * from `cut` is stale and least preferred, the same prefix from `other`
 * (which lost to it before) now the best path. Returns `cut`'s route.
 */
export async function tsLongLivedStale(run: InteropRun, cut: Session, other: Session, prefix: string, count: number, ms: number): Promise<WireRoute> {
  const ll = await until(
    async () => {
      const rs = await run.ts.received(cut.d);
      expect(rs).toHaveLength(count);
      for (const r of rs) expect(r.communities).toContain('llgr-stale');
      return rs.find((r) => r.prefix.toString() === prefix)!;
    },
    ms,
    500,
  );
  expect(ll).toMatchObject({ stale: true, best: false });
  expect((await run.ts.received(other.d)).find((r) => r.prefix.toString() === prefix)).toMatchObject({ best: true, stale: false });
  return ll;
}
