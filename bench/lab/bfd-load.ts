/**
 * Issue 32's soak: BFD 300 ms × 3 between tsbgp and FRR's bfdd and between
 * tsbgp and BIRD, held for 10 minutes while tsbgp takes in a full table
 * (1,040,000 IPv4 /24s from a BIRD sender, sent again and again: session
 * enabled, table in, disabled, table out) and `stress-ng --cpu 2` keeps both
 * cores busy. Counts the down transitions on both ends of each BFD session:
 * tsbgp's counters, FRR's (`show bfd peers counters`), BIRD's (its session's
 * state and "since", read every second) and the BGP resets.
 *
 *   f1 (FRR, bfdd) ── r1 (tsbgp) ── b1 (BIRD, protocol bfd)
 *                       │
 *                       s1 (BIRD, the table, no BFD)
 *
 *   sudo node --import tsx bench/lab/bfd-load.ts [--quick] [--seconds N] [--no-stress]
 *
 * `--quick`: 10,000 routes for 30 s (a smoke run). Exit status 1 on any down.
 * Results as a JSON line to bench/results/bfd-load.jsonl (or $BENCH_OUT).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupStale } from '../../test/lab/netns.js';
import { requireLab } from '../../test/lab/require.js';
import { linkAddress, nsExec, startLab, type LabSpec } from './routers.js';
import { fullTable } from './table.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const flag = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const seconds = Number(flag('--seconds') ?? (quick ? 30 : 600));
const stress = !args.includes('--no-stress');
const n = quick ? 10_000 : 1_040_000;
const log = (s: string): void => console.log(`${new Date().toISOString().slice(11, 23)} ${s}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

if (!requireLab(['bird', 'frr', 'tsbgp'], { binaries: ['/usr/lib/frr/bfdd', ...(stress ? ['stress-ng'] : [])] }).ok) process.exit(process.env.CI ? 1 : 0);

const links: LabSpec['links'] = [
  ['s1', 'r1', '198.51.100', '2001:db8:51'],
  ['f1', 'r1', '203.0.113', '2001:db8:113'],
  ['b1', 'r1', '198.18.0', '2001:db8:18'],
];
const at = (node: string, peer: string): string => linkAddress({ links }, node, peer, 4);
const TS_ASN = 4200000003;
const spec: LabSpec = {
  name: 'bfd-load',
  links,
  routers: [
    {
      node: 's1',
      kind: 'bird',
      role: 'sender',
      asn: 4200000001,
      routerId: '192.0.2.1',
      table: fullTable({ v4: n, v6: 0, sets: 1, seed: 4, plain24: true }),
      sessions: [{ name: 'p_r1_4', family: 4, local: at('s1', 'r1'), remote: at('r1', 's1'), remoteAsn: TS_ASN, downstream: true, disabled: true }],
    },
    {
      node: 'f1',
      kind: 'frr',
      role: 'sender',
      asn: 4200000002,
      routerId: '192.0.2.2',
      bfd: { thread: true },
      sessions: [{ name: 'p_r1_4', family: 4, local: at('f1', 'r1'), remote: at('r1', 'f1'), remoteAsn: TS_ASN, downstream: true }],
    },
    {
      node: 'b1',
      kind: 'bird',
      role: 'sender',
      asn: 4200000004,
      routerId: '192.0.2.4',
      bfd: { thread: true },
      sessions: [{ name: 'p_r1_4', family: 4, local: at('b1', 'r1'), remote: at('r1', 'b1'), remoteAsn: TS_ASN, downstream: true }],
    },
    {
      node: 'r1',
      kind: 'tsbgp',
      role: 'receiver',
      asn: TS_ASN,
      routerId: '192.0.2.3',
      bfd: { thread: true },
      sessions: [
        { name: 'p_s1_4', family: 4, local: at('r1', 's1'), remote: at('s1', 'r1'), remoteAsn: 4200000001, downstream: false, bfd: false },
        { name: 'p_f1_4', family: 4, local: at('r1', 'f1'), remote: at('f1', 'r1'), remoteAsn: 4200000002, downstream: false },
        { name: 'p_b1_4', family: 4, local: at('r1', 'b1'), remote: at('b1', 'r1'), remoteAsn: 4200000004, downstream: false },
      ],
    },
  ],
};

interface Side {
  downs: number;
  notUpSeen: number;
}
const result = {
  scenario: 'bfd-load',
  routes: n,
  seconds,
  stress,
  tableRounds: 0,
  tableSecondsEach: [] as number[],
  tsbgp: { frr: { bfdDowns: 0, bgpResets: 0, maxTimerLateMs: 0 }, bird: { bfdDowns: 0, bgpResets: 0, maxTimerLateMs: 0 }, lastDowns: [] as unknown[] },
  frr: { downs: 0, notUpSeen: 0 } as Side,
  bird: { downs: 0, notUpSeen: 0 } as Side,
  loadAverage: [] as number[],
};

cleanupStale();
log(
  `BFD 300 ms × 3, tsbgp with FRR and BIRD, ${seconds} s while tsbgp takes in ${n.toLocaleString('en')} routes again and again${stress ? ', stress-ng --cpu 2 beside it' : ''}`,
);
const { lab, routers, teardown } = await startLab(spec, log);
let stressor: ChildProcess | undefined;
let ok = false;
try {
  const ts = routers.get('r1')!.ts!;
  const sender = routers.get('s1')!;
  const [FRR, BIRD, SENDER] = [at('f1', 'r1'), at('b1', 'r1'), at('s1', 'r1')];
  const vtysh = (cmd: string): Promise<string> => nsExec(lab.ns('f1'), ['vtysh', '-N', lab.node('f1').frrPathspace!, '-c', cmd]);
  const birdc = (node: string, ...a: string[]): Promise<string> => nsExec(lab.ns(node), ['birdc', '-s', lab.node(node).birdSocket!, ...a]);
  const frrPeer = async (): Promise<{ status?: string; down: number }> => {
    const st = (JSON.parse(await vtysh('show bfd peers json')) as { peer: string; status: string }[]).find((p) => p.peer === at('r1', 'f1'));
    const c = (JSON.parse(await vtysh('show bfd peers counters json')) as Record<string, unknown>[]).find((p) => p.peer === at('r1', 'f1'));
    const down = Number(c?.['session-down'] ?? c?.['session-down-events'] ?? NaN);
    return { status: st?.status, down };
  };
  const birdSession = async (): Promise<{ state: string; since: string } | undefined> => {
    const line = (await birdc('b1', 'show', 'bfd', 'sessions')).split('\n').find((l) => l.trim().startsWith(at('r1', 'b1')));
    if (!line) return undefined;
    const f = line.trim().split(/\s+/);
    return { state: f[2], since: `${f[3]} ${f[4]}` };
  };

  // 1. both BFD sessions Up at the fast rate on both ends, BGP Established
  const t0 = Date.now();
  for (;;) {
    const [f, b] = [await ts.peer(FRR), await ts.peer(BIRD)];
    const fast = (s: typeof f): boolean =>
      s.state === 'Established' && s.bfd?.state === 'Up' && s.bfd.remoteState === 'Up' && s.bfd.detectionTimeMs === 900 && s.bfd.txIntervalMs === 300;
    if (fast(f) && fast(b) && (await frrPeer()).status === 'up' && (await birdSession())?.state === 'Up') break;
    if (Date.now() - t0 > 120_000) throw new Error(`BFD not Up at 300 ms × 3 after 120 s: FRR ${JSON.stringify(f.bfd)}, BIRD ${JSON.stringify(b.bfd)}`);
    await sleep(200);
  }
  log(`BFD Up with FRR and BIRD at 300 ms × 3 in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const base = { f: await ts.peer(FRR), b: await ts.peer(BIRD), frr: await frrPeer(), bird: await birdSession() };
  log(
    `at the start: FRR's session-down counter ${base.frr.down}, BIRD's session since ${base.bird?.since}; tsbgp's BFD downs before the load (bring-up): FRR ${base.f.bfd?.counters?.downTransitions}, BIRD ${base.b.bfd?.counters?.downTransitions}`,
  );

  // 2. the load
  if (stress) {
    stressor = spawn('stress-ng', ['--cpu', '2', '--timeout', `${seconds + 5}s`, '--quiet'], { stdio: 'ignore' });
    log('stress-ng --cpu 2 started');
  }
  const end = Date.now() + seconds * 1000;
  let lastBirdSince = base.bird?.since;
  // the watchers: every second, both ends of both sessions
  const watch = (async () => {
    while (Date.now() < end) {
      const [fr, bs] = await Promise.all([frrPeer().catch(() => undefined), birdSession().catch(() => undefined)]);
      if (fr && fr.status !== 'up') result.frr.notUpSeen++;
      if (bs && bs.state !== 'Up') result.bird.notUpSeen++;
      if (bs && bs.since !== lastBirdSince) {
        result.bird.downs += bs.state === 'Up' ? 0 : 1;
        lastBirdSince = bs.since;
      }
      await sleep(1000);
    }
  })();
  // the table, again and again
  while (Date.now() < end) {
    const tr = Date.now();
    await birdc('s1', 'enable', 'p_r1_4');
    while (Date.now() < end && (await ts.peer(SENDER)).counters.prefixesReceived < n) await sleep(500);
    if (Date.now() >= end) break;
    result.tableSecondsEach.push(Math.round((Date.now() - tr) / 100) / 10);
    result.tableRounds++;
    log(
      `table ${result.tableRounds} in ${result.tableSecondsEach.at(-1)} s; tsbgp BFD downs so far: FRR ${((await ts.peer(FRR)).bfd?.counters?.downTransitions ?? 0) - (base.f.bfd?.counters?.downTransitions ?? 0)}, BIRD ${((await ts.peer(BIRD)).bfd?.counters?.downTransitions ?? 0) - (base.b.bfd?.counters?.downTransitions ?? 0)}`,
    );
    await birdc('s1', 'disable', 'p_r1_4');
    while (Date.now() < end && (await ts.peer(SENDER)).counters.prefixesReceived > 0) await sleep(500);
  }
  await watch;
  void sender;
  // one more detection time for a down being detected right now
  await sleep(1500);
  const fin = { f: await ts.peer(FRR), b: await ts.peer(BIRD), frr: await frrPeer(), bird: await birdSession() };
  for (const [k, a, b] of [
    ['frr', base.f, fin.f],
    ['bird', base.b, fin.b],
  ] as const) {
    result.tsbgp[k] = {
      bfdDowns: (b.bfd?.counters?.downTransitions ?? 0) - (a.bfd?.counters?.downTransitions ?? 0),
      bgpResets: String(a.since) !== String(b.since) || b.state !== 'Established' ? 1 : 0,
      maxTimerLateMs: b.bfd?.counters?.maxTimerLateMs ?? NaN,
    };
    if (b.bfd?.lastDown) result.tsbgp.lastDowns.push({ peer: k, ...b.bfd.lastDown });
  }
  result.frr.downs = Number.isFinite(fin.frr.down) && Number.isFinite(base.frr.down) ? fin.frr.down - base.frr.down : result.frr.notUpSeen;
  if (fin.bird?.since !== lastBirdSince && fin.bird?.state !== 'Up') result.bird.downs++;
  if (fin.bird?.since !== base.bird?.since && result.bird.downs === 0) result.bird.downs = 1; // a down and back between two looks
  result.loadAverage = (await import('node:os')).loadavg().map((x) => Math.round(x * 10) / 10);
  ok =
    result.tsbgp.frr.bfdDowns === 0 &&
    result.tsbgp.bird.bfdDowns === 0 &&
    result.tsbgp.frr.bgpResets === 0 &&
    result.tsbgp.bird.bgpResets === 0 &&
    result.frr.downs === 0 &&
    result.bird.downs === 0;
} finally {
  stressor?.kill('SIGTERM');
  await teardown();
}
const out = process.env.BENCH_OUT ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'results', 'bfd-load.jsonl');
mkdirSync(dirname(out), { recursive: true });
appendFileSync(out, `${JSON.stringify({ at: new Date().toISOString(), ...result })}\n`);
log(`${ok ? 'PASS' : 'FAIL'}: ${JSON.stringify(result)}`);
process.exit(ok ? 0 : 1);
