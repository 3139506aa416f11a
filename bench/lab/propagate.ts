/**
 * Scenario 4 — propagate: a BIRD sender → the device under test → a BIRD
 * receiver, eBGP on both sides, with 100,000 and 1,040,000 IPv4 routes of
 * the synthetic full table. The device is tsbgp (library BgpSpeaker, best
 * path, an accept-all export policy toward the receiver), BIRD, FRR or
 * GoBGP. Measured: time from the sender's session coming up (BIRD's clock)
 * to the last route in the receiver's RIB, and the device's peak RSS.
 */
import { pathToFileURL } from 'node:url';
import { emit } from '../report.js';
import { BIRD_BATCH, eachRun, labScenario, type Summary } from './measure.js';
import { byKind, COLUMNS, commonNotes, fmtCount, kindRow, labOptions, type LabOptions, type MemoryRow } from './options.js';
import { LABEL, linkAddress, type Kind, type LabSpec } from './routers.js';
import { fullTable } from './table.js';

const S_ASN = 4200000001;
const D_ASN = 4200000002;
const R_ASN = 4200000003;

export const propagateSizes = (quick: boolean): number[] => (quick ? [1_000, 10_000] : [100_000, 1_040_000]);

export async function propagate(o: LabOptions): Promise<MemoryRow[]> {
  const results: Partial<Record<Kind, Summary>>[] = [];
  const flag = process.argv.indexOf('--sizes');
  const sizes = flag >= 0 ? process.argv[flag + 1].split(',').map(Number) : propagateSizes(o.quick);
  for (const [i, n] of sizes.entries()) {
    // the same seeded table as scenario 3, IPv4 only
    const table = fullTable({ v4: n, v6: 0, sets: o.quick ? 100 : 2_000, seed: 3 });
    results[i] = {};
    for (const kind of o.kinds) {
      o.log(`propagate: ${fmtCount(n)} routes through ${LABEL[kind]}`);
      const links: LabSpec['links'] = [
        ['s1', 'd1', '198.51.100', '2001:db8:51'],
        ['d1', 'r1', '203.0.113', '2001:db8:113'],
      ];
      const at = (node: string, peer: string): string => linkAddress({ links }, node, peer, 4);
      const session = (node: string, peer: string, asn: number, downstream: boolean, disabled = false) => ({
        name: `p_${peer}_4`,
        family: 4 as const,
        local: at(node, peer),
        remote: at(peer, node),
        remoteAsn: asn,
        downstream,
        disabled,
      });
      const lab: LabSpec = {
        name: 'bench-prop',
        links,
        routers: [
          { node: 's1', kind: 'bird', role: 'sender', asn: S_ASN, routerId: '192.0.2.1', table, sessions: [session('s1', 'd1', D_ASN, true, true)] },
          { node: 'd1', kind, role: 'dut', asn: D_ASN, routerId: '192.0.2.2', sessions: [session('d1', 's1', S_ASN, false), session('d1', 'r1', R_ASN, true)] },
          { node: 'r1', kind: 'bird', role: 'receiver', asn: R_ASN, routerId: '192.0.2.3', sessions: [session('r1', 'd1', D_ASN, false)] },
        ],
      };
      const r = await labScenario(o, `propagate ${n}/${kind}`, lab, {
        sender: 's1',
        observer: 's1',
        sessions: ['p_d1_4'],
        receiver: 'r1',
        weigh: 'd1',
        target: n,
        birdSender: true,
      });
      if (r) results[i][kind] = r;
    }
  }
  const v = (i: number, f: (s: Summary) => number | undefined): Partial<Record<Kind, number>> => byKind(results[i], f);
  emit({
    suite: 'lab/propagate',
    title: 'Propagate: BIRD sender → device under test → BIRD receiver (IPv4, eBGP both sides)',
    columns: COLUMNS,
    rows: sizes.flatMap((n, i) => [
      kindRow(
        `${fmtCount(n)} routes: time from session up to the last route at the receiver (s)`,
        v(i, (s) => s.seconds),
      ),
      kindRow(
        `${fmtCount(n)} routes: … to all but the BIRD sender's last partial batch of ${BIRD_BATCH} (s)`,
        v(i, (s) => s.bulkSeconds),
      ),
      kindRow(
        `${fmtCount(n)} routes: device peak RSS during the run (MB)`,
        v(i, (s) => s.peakMb),
      ),
    ]),
    notes: [
      'Goal: tsbgp ahead of GoBGP and FRR. Ratios below 1 mean tsbgp is faster / smaller.',
      'Device: tsbgp (library BgpSpeaker, best path, accept-all export policy), BIRD (import all, export all), FRR (`bgp no-rib`, `advertisement-interval 0`), GoBGP (default policies). Routes: the first N of the synthetic IPv4 table (prefix-length mix, attribute sets as in scenario 3).',
      ...sizes.flatMap((n, i) => Object.entries(results[i]).map(([k, s]) => `Each run, ${fmtCount(n)} routes through ${LABEL[k as Kind]} (s): ${eachRun(s)}.`)),
      ...commonNotes(o, 'propagate'),
    ],
  });
  const last = sizes.length - 1;
  return [
    {
      label: `propagated (4, ${fmtCount(sizes[last])} routes): device RSS per route with the table in place, whole process (bytes)`,
      values: v(last, (s) => (s.rssMb * 1e6) / sizes[last]),
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await propagate(labOptions(process.argv.slice(2)));
