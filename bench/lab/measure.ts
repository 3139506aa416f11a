/**
 * One measured run, the same for every scenario and daemon: a BIRD node (the
 * observer) takes its sessions down and waits until the receiver has dropped
 * every route, then brings them up again; the time runs from the moment BIRD
 * reports the session Established (its own clock, in ms) to the first poll
 * that finds the whole table at the receiver. The weighed router's peak
 * resident set is reset before the run and read after it.
 */
import { median } from '../report.js';
import { attempt, type LabOptions } from './options.js';
import { startLab, type LabSpec, type Router } from './routers.js';

export interface RunPlan {
  /** The BIRD node whose sessions are toggled and whose clock says when they came up. */
  readonly observer: Router;
  readonly sessions: readonly string[];
  /** Where the routes are counted. */
  readonly receiver: Router;
  readonly target: number;
  /** Whose memory is read. */
  readonly weigh: Router;
  /** Also time this many routes (all but a sender's last partial batch, see BIRD_BATCH). */
  readonly bulk?: number;
  readonly runs: number;
  readonly warmup: number;
  readonly pollMs: number;
  readonly log: (s: string) => void;
  /** Log every poll (count over time). */
  readonly trace?: boolean;
  /** Do not wake the observer at each poll (LAB_NO_WAKE=1: to show BIRD's wait, see BIRD_BATCH). */
  readonly noWake?: boolean;
}

export interface Runs {
  /** Seconds from Established to the whole table, per measured run. */
  readonly seconds: number[];
  /** Seconds to `bulk` routes, per measured run (when asked). */
  readonly bulkSeconds: number[];
  /** Peak resident set of the weighed router during each run, bytes. */
  readonly peak: number[];
  /** Its resident set with the whole table in place, bytes. */
  readonly rss: number[];
  /** tsbgp only: V8 heap after a full collection, with the table in place. */
  readonly heap: number[];
  /** Before the first run: resident set and heap with no table. */
  idle: { rss: number; heap?: number };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, timeoutMs: number, everyMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Generous: GoBGP takes ~70 µs a route on this machine; a stuck run fails instead of hanging. */
const runTimeout = (routes: number): number => 120_000 + routes * 1;

export async function measure(p: RunPlan): Promise<Runs> {
  const out: Runs = { seconds: [], bulkSeconds: [], peak: [], rss: [], heap: [], idle: { rss: 0 } };
  const timeout = runTimeout(p.target);
  for (let i = 0; i < p.warmup + p.runs; i++) {
    const label = i < p.warmup ? `warm-up ${i + 1}` : `run ${i - p.warmup + 1}/${p.runs}`;
    for (const s of p.sessions) await p.observer.birdc('disable', s);
    await waitFor(`${p.receiver.spec.node} to drop its routes`, timeout, 200, async () => (await p.receiver.received()) === 0);
    if (i === 0) out.idle = { rss: p.weigh.memory().rss, heap: await p.weigh.heapUsed() };
    p.weigh.resetPeak();
    await p.weigh.memPeak();
    const enabled = Date.now();
    for (const s of p.sessions) await p.observer.birdc('enable', s);
    let up: number | undefined;
    let upLast = 0;
    let n = 0;
    let done = 0;
    let bulkAt = 0;
    const deadline = Date.now() + timeout;
    for (;;) {
      if (up === undefined) {
        const st = await p.observer.birdSessions(p.sessions);
        // this run's sessions: Established and since the enable; the clock starts when the first came up
        if (st.length === p.sessions.length && st.every((s) => s.established && s.since >= enabled - 1000)) {
          up = Math.min(...st.map((s) => s.since));
          upLast = Math.max(...st.map((s) => s.since));
        }
      } else if (!p.noWake) {
        // Keep the observer (a BIRD sender in 4 and 4b) awake: BIRD 2.0's main loop sleeps in poll() for up
        // to 3 s when it has no event and no timer due (sysdep/unix/io.c), and its last partial export batch
        // sometimes waits for that wake-up; a control-socket command is a wake-up (BIRD_BATCH below).
        await p.observer.birdc('show', 'status');
      }
      n = await p.receiver.received();
      if (p.trace)
        p.log(
          `    ${((Date.now() - enabled) / 1000).toFixed(2)} s after enabling: ${n} routes${up !== undefined ? `, up at ${((up - enabled) / 1000).toFixed(2)} s` : ''}`,
        );
      if (p.bulk !== undefined && bulkAt === 0 && n >= p.bulk) bulkAt = Date.now();
      if (n >= p.target && up !== undefined) {
        done = Date.now();
        break;
      }
      if (Date.now() > deadline)
        throw new Error(
          `${label}: ${n} of ${p.target} routes at ${p.receiver.spec.node} after ${timeout / 1000} s (session ${up === undefined ? 'not up' : 'up'})`,
        );
      await sleep(p.pollMs);
    }
    if (n !== p.target) p.log(`  note: ${p.receiver.spec.node} counts ${n} routes, expected ${p.target}`);
    const mem = p.weigh.memory();
    const at = await p.weigh.memPeak();
    const heap = await p.weigh.heapUsed();
    const s = (done - up!) / 1000;
    p.log(
      `  ${label}: ${s.toFixed(2)} s (sessions up ${((up! - enabled) / 1000).toFixed(1)}–${((upLast - enabled) / 1000).toFixed(1)} s after enabling), peak RSS ${(mem.hwm / 1e6).toFixed(0)} MB${heap !== undefined ? `, heap ${(heap / 1e6).toFixed(0)} MB` : ''}`,
    );
    if (at !== undefined) {
      const mb = (x: number) => (x / 1e6).toFixed(0);
      const sp = Object.entries(at.spaces)
        .filter(([, v]) => v >= 1e6)
        .map(([k, v]) => `${k.replace(/_space$/, '')} ${mb(v)}`)
        .join(', ');
      p.log(
        `    at its largest sampled RSS (${mb(at.rss)} MB): V8 heap committed ${mb(at.heapCommitted)} MB (${sp}), used ${mb(at.heapUsed)}; outside the heap ${mb(at.external)} MB`,
      );
    }
    if (i < p.warmup) continue;
    out.seconds.push(s);
    if (bulkAt) out.bulkSeconds.push((bulkAt - up!) / 1000);
    out.peak.push(mem.hwm);
    out.rss.push(mem.rss);
    if (heap !== undefined) out.heap.push(heap);
  }
  return out;
}

export interface Summary {
  seconds: number;
  bulkSeconds?: number;
  peakMb: number;
  rssMb: number;
  heapMb?: number;
  idleRssMb: number;
  idleHeapMb?: number;
  /** Every measured run, in order (seconds; to `bulk`). */
  each: readonly number[];
  eachBulk: readonly number[];
}

export function summarize(r: Runs): Summary {
  return {
    seconds: median(r.seconds),
    bulkSeconds: r.bulkSeconds.length ? median(r.bulkSeconds) : undefined,
    peakMb: median(r.peak) / 1e6,
    rssMb: median(r.rss) / 1e6,
    heapMb: r.heap.length ? median(r.heap) / 1e6 : undefined,
    idleRssMb: r.idle.rss / 1e6,
    idleHeapMb: r.idle.heap !== undefined ? r.idle.heap / 1e6 : undefined,
    each: r.seconds,
    eachBulk: r.bulkSeconds,
  };
}

/** Each measured run's seconds (a median hides a bimodal daemon): "0.23, 3.24, … (all but the last batch: 0.21, …)". */
export function eachRun(s: Summary): string {
  const f = (xs: readonly number[]) => xs.map((x) => x.toFixed(2)).join(', ');
  return `${f(s.each)}${s.eachBulk.length > 0 ? ` (all but the sender's last partial batch: ${f(s.eachBulk)})` : ''}`;
}

/** Polls a sender until its table is loaded (before any session is up). */
export async function waitLoaded(r: Router, want: number, log: (s: string) => void): Promise<void> {
  const t0 = Date.now();
  let last = -1;
  let stable = 0;
  await waitFor(`${r.spec.node} (${r.kind}) to load ${want} routes`, 1_800_000, 1000, async () => {
    const n = await r.loaded();
    // FRR's table version can pass the route count while it settles: wait for two equal readings
    stable = n === last ? stable + 1 : 0;
    last = n;
    return n >= want && (r.kind !== 'frr' || stable >= 1);
  });
  log(`  ${r.kind} sender loaded ${want} routes in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** Which nodes of a lab play which part in its runs. */
export interface LabParts {
  /** Loads the table before anything is timed. */
  readonly sender: string;
  /** The BIRD node toggling `sessions`. */
  readonly observer: string;
  readonly sessions: readonly string[];
  readonly receiver: string;
  readonly weigh: string;
  readonly target: number;
  /** A BIRD sender: also time all but its last partial export batch. */
  readonly birdSender?: boolean;
}

/**
 * BIRD exports a table in batches of 256 routes, and in some runs the last,
 * partial batch (100,000 mod 256 = 160 routes; 1,040,000 mod 256 = 128)
 * reached the receiver ~3 s after all the others, whatever the device (BIRD
 * and tsbgp alike; `--trace` shows the count stuck at 99,840): the sending
 * BIRD's main loop had gone to sleep in poll() with its 3 s cap (BIRD 2.0
 * sysdep/unix/io.c: no event queued, no timer due) and did the rest on
 * waking. Nothing in the measured sessions wakes it (the device sends it
 * nothing), so each poll now wakes it with a control-socket command
 * (`measure`; LAB_NO_WAKE=1 leaves it asleep). The tables still give the
 * time to everything but that batch.
 */
export const BIRD_BATCH = 256;

/** One daemon's part of a scenario: lab up, table loaded, warm-up and runs, lab down. Undefined if it failed. */
export async function labScenario(o: LabOptions, what: string, spec: LabSpec, p: LabParts): Promise<Summary | undefined> {
  let out: Summary | undefined;
  await attempt(o, what, async () => {
    const { routers, teardown } = await startLab(spec, o.log);
    try {
      const node = (name: string): Router => routers.get(name)!;
      await waitLoaded(node(p.sender), p.target, o.log);
      const bulk = p.birdSender && p.target % BIRD_BATCH !== 0 ? p.target - (p.target % BIRD_BATCH) : undefined;
      const runs = await measure({
        observer: node(p.observer),
        sessions: p.sessions,
        receiver: node(p.receiver),
        target: p.target,
        bulk,
        weigh: node(p.weigh),
        runs: o.runs,
        warmup: o.warmup,
        pollMs: o.pollMs,
        log: o.log,
        trace: o.trace,
        noWake: process.env.LAB_NO_WAKE === '1',
      });
      out = summarize(runs);
    } finally {
      await teardown();
    }
  });
  return out;
}
