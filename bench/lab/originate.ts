/**
 * Scenario 3 — originate a full table: the router under test (tsbgp as a
 * library BgpSpeaker in its own process, BIRD from static routes, FRR from
 * `network` statements, GoBGP from `gobgp mrt inject` of an MRT dump of the
 * same table) sends 1,040,000 IPv4 and 220,000 IPv6 prefixes with a few
 * thousand attribute sets to a BIRD receiver, over one IPv4 and one IPv6
 * session. Measured: time from the sessions coming up (BIRD's clock) to the
 * last prefix in BIRD's RIB, and the sender's peak resident set during it.
 */
import { pathToFileURL } from 'node:url';
import { emit } from '../report.js';
import { labScenario, type Summary } from './measure.js';
import { byKind, COLUMNS, commonNotes, fmtCount, kindRow, labOptions, type LabOptions, type MemoryRow } from './options.js';
import { LABEL, linkAddress, type Kind, type LabSpec } from './routers.js';
import { fullTable, type TableSpec } from './table.js';

const S_ASN = 4200000001;
const R_ASN = 4200000003;

export function originateSpec(quick: boolean): TableSpec {
  return quick ? { v4: 8_250, v6: 1_750, sets: 100, seed: 3 } : { v4: 1_040_000, v6: 220_000, sets: 2_000, seed: 3 };
}

export async function originate(o: LabOptions): Promise<MemoryRow[]> {
  const spec = originateSpec(o.quick);
  const table = fullTable(spec);
  const total = spec.v4 + spec.v6;
  const results: Partial<Record<Kind, Summary>> = {};
  for (const kind of o.kinds) {
    o.log(`originate: ${LABEL[kind]} sends ${fmtCount(spec.v4)} IPv4 + ${fmtCount(spec.v6)} IPv6 routes to BIRD`);
    const links: LabSpec['links'] = [['s1', 'r1', '198.51.100', '2001:db8:51']];
    const at = (node: string, peer: string, f: 4 | 6): string => linkAddress({ links }, node, peer, f);
    const lab: LabSpec = {
      name: 'bench-orig',
      links,
      routers: [
        {
          node: 's1',
          kind,
          role: 'sender',
          asn: S_ASN,
          routerId: '192.0.2.1',
          table,
          sessions: ([4, 6] as const).map((f) => ({
            name: `p_r1_${f}`,
            family: f,
            local: at('s1', 'r1', f),
            remote: at('r1', 's1', f),
            remoteAsn: R_ASN,
            downstream: true,
          })),
        },
        {
          node: 'r1',
          kind: 'bird',
          role: 'receiver',
          asn: R_ASN,
          routerId: '192.0.2.3',
          sessions: ([4, 6] as const).map((f) => ({
            name: `p_s1_${f}`,
            family: f,
            local: at('r1', 's1', f),
            remote: at('s1', 'r1', f),
            remoteAsn: S_ASN,
            downstream: false,
            disabled: true,
          })),
        },
      ],
    };
    const r = await labScenario(o, `originate/${kind}`, lab, {
      sender: 's1',
      observer: 'r1',
      sessions: ['p_s1_4', 'p_s1_6'],
      receiver: 'r1',
      weigh: 's1',
      target: total,
    });
    if (r) results[kind] = r;
  }
  const v = (f: (s: Summary) => number | undefined): Partial<Record<Kind, number>> => byKind(results, f);
  emit({
    suite: 'lab/originate',
    title: `Originate a full table to a BIRD receiver (${fmtCount(spec.v4)} IPv4 + ${fmtCount(spec.v6)} IPv6 prefixes, ${fmtCount(spec.sets)} attribute sets)`,
    columns: COLUMNS,
    rows: [
      kindRow(
        'time from session up to the last prefix in BIRD (s)',
        v((s) => s.seconds),
      ),
      kindRow(
        'sender peak RSS during the run (MB)',
        v((s) => s.peakMb),
      ),
    ],
    notes: [
      "Goal: tsbgp faster than GoBGP and FRR, within 1.5× of BIRD; peak RSS within 2× of BIRD's. Ratios below 1 mean tsbgp is faster / smaller.",
      'Senders: tsbgp originate() before start(); BIRD static protocols (one per attribute set); FRR `network … route-map`; GoBGP `gobgp mrt inject` of the same table. Sessions: one IPv4, one IPv6, eBGP.',
      ...commonNotes(o, 'originate'),
    ],
  });
  return [
    { label: `advertised (3): sender peak RSS per route, whole process (bytes)`, values: v((s) => (s.peakMb * 1e6) / total) },
    ...(results.tsbgp?.heapMb !== undefined
      ? [{ label: 'advertised (3): tsbgp V8 heap per route after GC, whole heap (bytes)', values: { tsbgp: (results.tsbgp.heapMb * 1e6) / total } }]
      : []),
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await originate(labOptions(process.argv.slice(2)));
