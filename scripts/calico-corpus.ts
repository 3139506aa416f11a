/**
 * Measures tsbgp against Calico's own confd test corpus (a developer tool,
 * not a test): for every case of `confd/tests` in a Calico checkout, the
 * case's inputs are turned into manifests tsbgp reads, tsbgp plans the node
 * the case renders, and the plan is compared with the BIRD configuration
 * Calico expects — peers, what each peer is sent, originated routes, and
 * kernel programming. Nothing of Calico's is copied into this project.
 *
 *   node --import tsx scripts/calico-corpus.ts --calico PATH [--case SUBSTRING] [--json] [--verbose] [--master-defaults]
 *
 * PATH is a Calico checkout or a bare clone (read with `git show HEAD:…`),
 * e.g. /work/.mirror/projectcalico+calico/repo.
 */
import { parseArgs } from 'node:util';
import { loadTexts } from '../src/kubernetes/manifests.js';
import { stateOf } from '../src/kubernetes/state.js';
import { routerIdSetting } from '../src/kubernetes/config.js';
import { parseEndpointStatus } from '../src/kubernetes/workloads.js';
import { plan as planFor } from '../src/kubernetes/plan.js';
import { planJson } from '../src/agent/views.js';
import { CalicoTree, corpusCases, expectedFiles, toManifests, type Case, type Obj } from './corpus/cases.js';
import { birdView, DIMENSIONS, firstDifference, probePrefixes, tsbgpView, type Dimension } from './corpus/compare.js';

export interface CaseResult {
  readonly name: string;
  /** Per dimension: the first difference, null when they agree, 'n/a' when the dimension does not apply. */
  readonly dims: Record<Dimension, string | null | 'n/a'>;
  readonly whole: boolean;
  readonly errors: readonly string[];
  readonly note?: string;
}

function nodeAddresses(c: Case): { 4?: string; 6?: string } {
  const n = c.objects.find((o) => o.kind === 'Node' && o.metadata?.name === c.node);
  const bgp = n?.spec?.bgp ?? {};
  const out: { 4?: string; 6?: string } = {};
  if (bgp.ipv4Address) out[4] = String(bgp.ipv4Address).split('/')[0];
  if (bgp.ipv6Address) out[6] = String(bgp.ipv6Address).split('/')[0];
  return out;
}

/**
 * The corpus is Calico's master, whose BGPConfiguration `programClusterRoutes` defaults to
 * `EnabledNoEncapOnly` (Felix's to `EnabledIPIPOnly`); tsbgp keeps the latest release's
 * default, `Enabled` (docs/calico-conformance.md). With `masterDefaults`, a case that leaves
 * the field unset gets master's default written out, so the comparison shows what differs
 * beyond that one default.
 */
function withMasterDefaults(objs: readonly Obj[]): Obj[] {
  const out = objs.map((o) => structuredClone(o));
  let global = out.find((o) => o.kind === 'BGPConfiguration' && o.metadata?.name === 'default');
  if (!global) out.push((global = { apiVersion: 'projectcalico.org/v3', kind: 'BGPConfiguration', metadata: { name: 'default' }, spec: {} }));
  global.spec ??= {};
  global.spec.programClusterRoutes ??= 'EnabledNoEncapOnly';
  return out;
}

export function runCase(tree: CalicoTree, c: Case, masterDefaults = false): CaseResult {
  const files = expectedFiles(tree, c.name);
  const manifests = toManifests(masterDefaults ? withMasterDefaults(c.objects) : c.objects);
  const loaded = loadTexts([{ file: `${c.name}.json`, text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }) }]);
  const state = stateOf(loaded.resources);
  // What the test gives confd besides its input files: its environment, Felix's endpoint-status files.
  state.routerIdSetting = routerIdSetting(c.env);
  const issues = [...loaded.issues];
  for (const [file, text] of Object.entries(c.endpointStatus)) {
    try {
      state.apply({ type: 'workload', file, endpoint: parseEndpointStatus(file, text) });
    } catch (e) {
      issues.push({ severity: 'error', file, message: (e as Error).message });
    }
  }
  const plan = planFor(state, c.node);
  const json = planJson(plan, { issues });
  const probes = probePrefixes(files, plan);
  const inside = nodeAddresses(c);
  const calico = birdView(files, probes, inside);
  const tsbgp = tsbgpView(plan, json, probes, inside);
  const dims = {} as Record<Dimension, string | null | 'n/a'>;
  for (const d of DIMENSIONS) {
    if (d === 'sent' && calico.peers.size === 0) dims[d] = 'n/a';
    else dims[d] = firstDifference(d, calico, tsbgp) ?? null;
  }
  const errors = json.errors.map((e) => `${e.kind ?? ''} ${e.name ?? ''}${e.field ? ` ${e.field}` : ''}: ${e.message}`.trim());
  return { name: c.name, dims, whole: DIMENSIONS.every((d) => dims[d] === null || dims[d] === 'n/a'), errors, ...(c.note ? { note: c.note } : {}) };
}

function main(): number {
  const { values } = parseArgs({
    options: {
      calico: { type: 'string' },
      case: { type: 'string' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
      'master-defaults': { type: 'boolean' },
    },
  });
  if (!values.calico) {
    process.stderr.write('usage: node --import tsx scripts/calico-corpus.ts --calico PATH [--case SUBSTRING] [--json] [--verbose] [--master-defaults]\n');
    return 2;
  }
  const tree = new CalicoTree(values.calico);
  const cases = corpusCases(tree).filter((c) => values.case === undefined || c.name.includes(values.case));
  const results: CaseResult[] = [];
  for (const c of cases) {
    try {
      results.push(runCase(tree, c, values['master-defaults'] === true));
    } catch (e) {
      const msg = `tool error: ${(e as Error).message}`;
      results.push({ name: c.name, dims: { peers: msg, sent: msg, routes: msg, kernel: msg }, whole: false, errors: [], ...(c.note ? { note: c.note } : {}) });
    }
  }
  const totals = Object.fromEntries(
    DIMENSIONS.map((d) => {
      const applicable = results.filter((r) => r.dims[d] !== 'n/a');
      return [d, { match: applicable.filter((r) => r.dims[d] === null).length, of: applicable.length }];
    }),
  ) as Record<Dimension, { match: number; of: number }>;
  const whole = { match: results.filter((r) => r.whole).length, of: results.length };
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ cases: results, totals: { whole, ...totals } }, null, 2)}\n`);
    return 0;
  }
  const mark = (v: string | null | 'n/a') => (v === null ? 'ok' : v === 'n/a' ? '-' : 'DIFF');
  const w = Math.max(...results.map((r) => r.name.length), 4);
  const lines = [`${'case'.padEnd(w)}  whole peers sent  routes kernel  first difference`];
  for (const r of results) {
    const first = DIMENSIONS.map((d) => [d, r.dims[d]] as const).find(([, v]) => v !== null && v !== 'n/a');
    lines.push(
      `${r.name.padEnd(w)}  ${(r.whole ? 'ok' : 'DIFF').padEnd(5)} ${mark(r.dims.peers).padEnd(5)} ${mark(r.dims.sent).padEnd(5)} ${mark(r.dims.routes).padEnd(6)} ${mark(r.dims.kernel).padEnd(6)}  ${first ? `${first[0]}: ${first[1]}` : ''}${r.note ? ` (${r.note})` : ''}`,
    );
    if (values.verbose) {
      for (const d of DIMENSIONS) if (r.dims[d] !== null && r.dims[d] !== 'n/a' && d !== first?.[0]) lines.push(`${' '.repeat(w)}    ${d}: ${r.dims[d]}`);
      for (const e of r.errors) lines.push(`${' '.repeat(w)}    tsbgp error: ${e}`);
    }
  }
  lines.push('');
  lines.push(`whole: ${whole.match}/${whole.of}; ${DIMENSIONS.map((d) => `${d}: ${totals[d].match}/${totals[d].of}`).join('; ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('calico-corpus.ts')) process.exitCode = main();
