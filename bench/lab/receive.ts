/**
 * Scenario 4b — receive a full table: a BIRD sender (static routes) sends
 * 1,040,000 IPv4 /24s to the receiver under test (tsbgp, BIRD, FRR, GoBGP).
 * Measured: time from Established (the BIRD sender's clock) to the whole
 * table in the receiver's Adj-RIB-In / Loc-RIB (each one's cheapest count),
 * and the receiver's peak and steady resident set.
 */
import { deployedNodeFlags } from '../compile.js';
import { pathToFileURL } from 'node:url';
import { emit } from '../report.js';
import { BIRD_BATCH, eachRun, labScenario, type Summary } from './measure.js';
import { byKind, COLUMNS, commonNotes, fmtCount, kindRow, labOptions, type LabOptions, type MemoryRow } from './options.js';
import { LABEL, linkAddress, type Kind, type LabSpec } from './routers.js';
import { fullTable } from './table.js';

const S_ASN = 4200000001;
const R_ASN = 4200000003;

export const receiveSize = (quick: boolean): number => (quick ? 10_000 : 1_040_000);

/**
 * The runtime variant measured beside tsbgp as deployed: V8's own default
 * young generation (16 MB per semi-space on 64-bit), where the deployment
 * caps it at 2 MB (deploy/daemonset.yaml NODE_OPTIONS, which the lab's tsbgp
 * nodes run with: bench/compile.ts). A receiver's resident set is partly
 * young-generation space and old-generation pages left over from parsing,
 * not the table; the cap trades them for more frequent scavenges.
 */
export const V8_DEFAULT_YOUNG_GEN = ['--max-semi-space-size=16'];

export async function receive(o: LabOptions): Promise<MemoryRow[]> {
  const n = receiveSize(o.quick);
  const table = fullTable({ v4: n, v6: 0, sets: 1, seed: 4, plain24: true });
  const results: Partial<Record<Kind, Summary>> = {};
  let small: Summary | undefined;
  const runs: { kind: Kind; nodeArgs?: readonly string[] }[] = o.kinds.map((kind) => ({ kind }));
  if (o.kinds.includes('tsbgp')) runs.push({ kind: 'tsbgp', nodeArgs: V8_DEFAULT_YOUNG_GEN });
  for (const { kind, nodeArgs } of runs) {
    const variant = nodeArgs ? ` (node ${nodeArgs.join(' ')})` : '';
    o.log(`receive: BIRD sends ${fmtCount(n)} /24s to ${LABEL[kind]}${variant}`);
    const links: LabSpec['links'] = [['s1', 'r1', '198.51.100', '2001:db8:51']];
    const at = (node: string, peer: string): string => linkAddress({ links }, node, peer, 4);
    const lab: LabSpec = {
      name: 'bench-recv',
      links,
      routers: [
        {
          node: 's1',
          kind: 'bird',
          role: 'sender',
          asn: S_ASN,
          routerId: '192.0.2.1',
          table,
          sessions: [{ name: 'p_r1_4', family: 4, local: at('s1', 'r1'), remote: at('r1', 's1'), remoteAsn: R_ASN, downstream: true, disabled: true }],
        },
        {
          node: 'r1',
          kind,
          nodeArgs,
          role: 'receiver',
          asn: R_ASN,
          routerId: '192.0.2.3',
          sessions: [{ name: 'p_s1_4', family: 4, local: at('r1', 's1'), remote: at('s1', 'r1'), remoteAsn: S_ASN, downstream: false }],
        },
      ],
    };
    const r = await labScenario(o, `receive/${kind}${variant}`, lab, {
      sender: 's1',
      observer: 's1',
      sessions: ['p_r1_4'],
      receiver: 'r1',
      weigh: 'r1',
      target: n,
      birdSender: true,
    });
    if (r && nodeArgs) small = r;
    else if (r) results[kind] = r;
  }
  const v = (f: (s: Summary) => number | undefined): Partial<Record<Kind, number>> => byKind(results, f);
  // the variant's figure in the tsbgp column, the daemons' own beside it
  const vSmall = (f: (s: Summary) => number | undefined): Partial<Record<Kind, number>> => ({ ...v(f), tsbgp: small ? f(small) : undefined });
  const flag = `\`node ${V8_DEFAULT_YOUNG_GEN.join(' ')}\` (V8's default)`;
  emit({
    suite: 'lab/receive',
    title: `Receive a full table from a BIRD sender (${fmtCount(n)} IPv4 /24s)`,
    columns: COLUMNS,
    rows: [
      kindRow(
        'time from Established to the whole table in the RIB (s)',
        v((s) => s.seconds),
      ),
      kindRow(
        `… to all but the BIRD sender's last partial batch of ${BIRD_BATCH} (${fmtCount(n - (n % BIRD_BATCH))} routes) (s)`,
        v((s) => s.bulkSeconds),
      ),
      kindRow(
        'receiver peak RSS during the run (MB)',
        v((s) => s.peakMb),
      ),
      kindRow(
        'receiver RSS with the table in place (MB)',
        v((s) => s.rssMb),
      ),
      kindRow(
        `tsbgp under ${flag}: time from Established to the whole table (s)`,
        vSmall((s) => s.seconds),
      ),
      kindRow(
        `tsbgp under ${flag}: … to all but the last partial batch (s)`,
        vSmall((s) => s.bulkSeconds),
      ),
      kindRow(
        `tsbgp under ${flag}: receiver peak RSS during the run (MB)`,
        vSmall((s) => s.peakMb),
      ),
      kindRow(
        `tsbgp under ${flag}: receiver RSS with the table in place (MB)`,
        vSmall((s) => s.rssMb),
      ),
    ],
    notes: [
      'Goal: tsbgp no slower than BIRD and within 1.5× of its memory. Ratios below 1 mean tsbgp is faster / smaller.',
      `tsbgp runs with the deployment's node flags (${deployedNodeFlags().join(' ') || 'none'}); the last four rows run it again under ${flag}, the other daemons' figures repeated beside it.`,
      'Receivers keep the routes in their BGP tables only: BIRD without a kernel protocol, FRR with `bgp no-rib`, GoBGP without zebra, tsbgp (library BgpSpeaker, default import).',
      ...Object.entries(results).map(([k, s]) => `Each run, ${LABEL[k as Kind]} (s): ${eachRun(s)}.`),
      ...(small ? [`Each run, tsbgp under ${flag} (s): ${eachRun(small)}.`] : []),
      ...commonNotes(o, 'receive'),
    ],
  });
  return [
    {
      label: `received (4b, ${fmtCount(n)} routes): RSS growth per route, table in place minus idle (bytes)`,
      values: v((s) => ((s.rssMb - s.idleRssMb) * 1e6) / n),
    },
    {
      label: `received (4b), tsbgp under ${flag}: RSS growth per route, table in place minus idle (bytes)`,
      values: vSmall((s) => ((s.rssMb - s.idleRssMb) * 1e6) / n),
    },
    {
      label: `received (4b): tsbgp V8 heap growth per route after GC (bytes)`,
      values: v((s) => (s.heapMb !== undefined && s.idleHeapMb !== undefined ? ((s.heapMb - s.idleHeapMb) * 1e6) / n : undefined)),
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await receive(labOptions(process.argv.slice(2)));
