/**
 * BFD through a full-table receive: does a 300 ms × 3 session stay Up while
 * tsbgp takes in 1,040,000 IPv4 /24s from a BIRD sender on this machine?
 * Three runs in a row (BIRD's session disabled and enabled between them, the
 * whole table sent each time). Per run: BFD Up before the table, never Down
 * until the whole table is in (tsbgp's BFD counters, BGP not reset, BIRD's
 * own BFD session Up throughout), and the main thread's event-loop delay
 * (the pause a BFD speaker on that thread would have suffered).
 *
 *   sudo node --import tsx bench/lab/bfd-fulltable.ts [--quick] [--inline] [--runs N]
 *
 * `--inline` runs tsbgp's BFD on the main thread instead of its worker: the
 * comparison that shows why the worker exists. Exit status 1 if BFD went down.
 */
import { cleanupStale } from '../../test/lab/netns.js';
import { linkAddress, startLab, type LabSpec } from './routers.js';
import { fullTable } from './table.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const inline = args.includes('--inline');
const runs = Number(args[args.indexOf('--runs') + 1]) > 0 && args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 3;
const n = quick ? 10_000 : 1_040_000;
const log = (s: string): void => console.log(`${new Date().toISOString().slice(11, 23)} ${s}`);

const links: LabSpec['links'] = [['s1', 'r1', '198.51.100', '2001:db8:51']];
const at = (node: string, peer: string): string => linkAddress({ links }, node, peer, 4);
const spec: LabSpec = {
  name: 'bfd-full',
  links,
  routers: [
    {
      node: 's1',
      kind: 'bird',
      role: 'sender',
      asn: 4200000001,
      routerId: '192.0.2.1',
      bfd: { thread: true },
      table: fullTable({ v4: n, v6: 0, sets: 1, seed: 4, plain24: true }),
      sessions: [{ name: 'p_r1_4', family: 4, local: at('s1', 'r1'), remote: at('r1', 's1'), remoteAsn: 4200000003, downstream: true, disabled: true }],
    },
    {
      node: 'r1',
      kind: 'tsbgp',
      role: 'receiver',
      asn: 4200000003,
      routerId: '192.0.2.3',
      bfd: { thread: !inline },
      sessions: [{ name: 'p_s1_4', family: 4, local: at('r1', 's1'), remote: at('s1', 'r1'), remoteAsn: 4200000001, downstream: false }],
    },
  ],
};

interface RunResult {
  run: number;
  seconds: number;
  bfdDowns: number;
  bgpResets: number;
  birdBfdNotUp: number;
  loop: { maxMs: number; p99Ms: number; meanMs: number };
}

cleanupStale();
log(
  `BFD 300 ms × 3 through a ${n.toLocaleString('en')}-route receive, tsbgp's BFD ${inline ? 'INLINE on the main thread' : 'in its worker thread'}, ${runs} runs`,
);
const { routers, teardown } = await startLab(spec, log);
const results: RunResult[] = [];
try {
  const bird = routers.get('s1')!;
  const ts = routers.get('r1')!.ts!;
  const peerAddr = at('s1', 'r1');
  const birdBfdUp = async (): Promise<boolean> =>
    /\bUp\b/.test((await bird.birdc('show', 'bfd', 'sessions')).split('\n').find((l) => l.includes(at('r1', 's1'))) ?? '');
  for (let run = 1; run <= runs; run++) {
    await bird.birdc('enable', 'p_r1_4');
    const t0 = Date.now();
    // BFD Up and BGP Established (the table may already be flowing)
    let st = await ts.peer(peerAddr);
    while (!(st.state === 'Established' && st.bfd?.state === 'Up')) {
      if (Date.now() - t0 > 120_000) throw new Error(`run ${run}: BFD/BGP not up after 120 s: ${JSON.stringify({ state: st.state, bfd: st.bfd?.state })}`);
      await new Promise((r) => setTimeout(r, 100));
      st = await ts.peer(peerAddr);
    }
    const downs0 = st.bfd?.counters?.downTransitions ?? 0;
    const since0 = String(st.since);
    await ts.ext('loopDelay');
    let birdBfdNotUp = 0;
    let lastBirdCheck = 0;
    for (;;) {
      st = await ts.peer(peerAddr);
      if (Date.now() - lastBirdCheck > 1000) {
        lastBirdCheck = Date.now();
        if (!(await birdBfdUp())) birdBfdNotUp++;
      }
      if (st.bfd?.state !== 'Up' || String(st.since) !== since0 || st.counters.prefixesReceived >= n) break;
      if (Date.now() - t0 > 600_000) throw new Error(`run ${run}: table not in after 600 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (Date.now() - t0) / 1000;
    const loop = await ts.ext<{ maxMs: number; p99Ms: number; meanMs: number }>('loopDelay');
    // one more look a detection time later: a down being detected right now counts too
    await new Promise((r) => setTimeout(r, 1000));
    st = await ts.peer(peerAddr);
    if (!(await birdBfdUp())) birdBfdNotUp++;
    const r: RunResult = {
      run,
      seconds,
      bfdDowns: (st.bfd?.counters?.downTransitions ?? 0) - downs0,
      bgpResets: String(st.since) !== since0 || st.state !== 'Established' ? 1 : 0,
      birdBfdNotUp,
      loop,
    };
    results.push(r);
    log(
      `run ${run}: ${st.counters.prefixesReceived.toLocaleString('en')} routes in ${seconds.toFixed(1)} s; BFD downs ${r.bfdDowns}, BGP resets ${r.bgpResets}, BIRD BFD seen not Up ${birdBfdNotUp}×; main-thread event-loop delay max ${loop.maxMs.toFixed(0)} ms, p99 ${loop.p99Ms.toFixed(0)} ms`,
    );
    await bird.birdc('disable', 'p_r1_4');
    const tEmpty = Date.now();
    while ((await ts.peer(peerAddr)).counters.prefixesReceived > 0 && Date.now() - tEmpty < 300_000) await new Promise((r) => setTimeout(r, 500));
  }
} finally {
  await teardown();
}
const ok = results.length === runs && results.every((r) => r.bfdDowns === 0 && r.bgpResets === 0 && r.birdBfdNotUp === 0);
log(`${ok ? 'PASS' : 'FAIL'}: ${JSON.stringify(results)}`);
process.exit(ok ? 0 : 1);
