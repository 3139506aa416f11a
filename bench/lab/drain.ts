/**
 * Issue 29 part 4: datagrams lost while nodes drain, restart, upgrade and
 * get killed, tsbgp against BIRD as Calico runs it (test/lab/drain-traffic.ts
 * builds the lab; docs/drain-lab.md has the table and reads it).
 *
 *   sudo npm run bench:lab -- drain                       # drain time 10 s, nodes down 5 s, one run
 *   sudo npm run bench:lab -- drain --runs 3              # losses summed over 3 runs of each scenario
 *   sudo npm run bench:lab -- drain --quick               # drain 5 s, down 2 s
 *
 * Columns: tsbgp (the agent's default close after a drain, a Hard Reset),
 * tsbgp with `--drain-close keep-stale` (a Cease that leaves the routes
 * stale under graceful restart, still marked GRACEFUL_SHUTDOWN), and BIRD 2
 * configured as confd configures Calico's BIRD (SIGTERM, no drain). Run only
 * when named: it is not part of `npm run bench:lab`'s default set.
 */
import { emit, machine, type Cell } from '../report.js';
import { DrainLab, SCENARIOS, SCENARIO_LABEL, type Daemon, type DrainClose, type Scenario } from '../../test/lab/drain-traffic.js';
import { attempt, type LabOptions, type MemoryRow } from './options.js';

interface Column {
  readonly label: string;
  readonly daemon: Daemon;
  readonly drainClose?: DrainClose;
  /** Scenarios this column runs (kill -9 never reaches the close, so the variant skips it). */
  readonly scenarios: readonly Scenario[];
}

const COLUMNS: readonly Column[] = [
  { label: 'tsbgp', daemon: 'tsbgp', scenarios: SCENARIOS },
  { label: 'tsbgp, --drain-close keep-stale', daemon: 'tsbgp', drainClose: 'keep-stale', scenarios: ['drain', 'rolling-restart', 'upgrade'] },
  { label: 'BIRD (Calico)', daemon: 'bird', scenarios: SCENARIOS },
];

export async function drain(o: LabOptions): Promise<MemoryRow[]> {
  const drainSeconds = o.quick ? 5 : 10;
  const downSeconds = o.quick ? 2 : 5;
  // One run unless --runs says (losses are counts, not medians).
  const runs = process.argv.includes('--runs') ? Math.max(1, o.runs) : 1;
  const lost = new Map<string, { lost: number; sent: number }>();
  for (const c of COLUMNS) {
    if (!o.kinds.includes(c.daemon)) continue;
    await attempt(o, `drain/${c.label}`, async () => {
      const lab = await DrainLab.up({ daemon: c.daemon, drainSeconds, downSeconds, ...(c.drainClose ? { drainClose: c.drainClose } : {}), log: o.log });
      try {
        for (let i = 0; i < runs; i++)
          for (const s of c.scenarios) {
            const r = await lab.scenario(s);
            const key = `${c.label}/${s}`;
            const was = lost.get(key) ?? { lost: 0, sent: 0 };
            lost.set(key, { lost: was.lost + r.lost, sent: was.sent + r.sent });
          }
      } finally {
        await lab.teardown();
      }
    });
  }
  const cell = (c: Column, s: Scenario): Cell => {
    const v = lost.get(`${c.label}/${s}`);
    return v ? `${v.lost} of ${v.sent}` : 'n/a';
  };
  emit({
    suite: 'lab/drain',
    title: 'Datagrams lost to an ECMP Service while nodes leave (issue 29 part 4)',
    columns: ['scenario', ...COLUMNS.map((c) => c.label)],
    rows: SCENARIOS.map((s) => [SCENARIO_LABEL[s], ...COLUMNS.map((c) => cell(c, s))]),
    notes: [
      'Three nodes advertise 198.51.100.0/24 to FRR 8.4 (ECMP, hashing on ports; a route-map sets LOCAL_PREF 0 on GRACEFUL_SHUTDOWN); a client behind FRR sends one UDP datagram every 10 ms over 32 source ports to 198.51.100.10, which every node answers; "lost" is datagrams never answered.',
      `tsbgp --drain-time ${drainSeconds}; a node's link goes down right after its daemon exits and stays down ${downSeconds} s (upgrade: 0 s), then comes up before the daemon starts; the next node goes once FRR has the last one back in its ECMP.`,
      "BIRD 2 as confd renders Calico's BIRD (graceful restart; the Service range as a static route), stopped by SIGTERM (BIRD's Cease; no drain), started as calico-node starts it (`bird -R`). n/a: not run (kill -9 never reaches the close after a drain).",
      `${runs} run${runs > 1 ? 's' : ''} of each scenario, losses summed; ${machine()}.`,
    ],
  });
  return [];
}
