/**
 * Where the agent's heap goes at scale, stage by stage (issue 18): the
 * manifest path of `tsbgp agent` run in this process on N Services with
 * their EndpointSlices (bench/cluster-fixture.ts, 1,000 a file), the V8
 * heap in use after full GCs once each stage's result is held: the loaded
 * layer (resources and their map), the watcher's combined set, the events
 * of the first load, the planner (cluster state, per-Service contributions,
 * route index, plan), the refusals to log, the reconciler's operations. The
 * speaker (RIB, Adj-RIB-Out) and Node itself are not in it: bench/agent-scale.ts
 * measures the real process.
 *
 *   node --expose-gc --import tsx bench/manifest-memory.ts [--services 100000]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterObjects, list, serviceList } from './cluster-fixture.js';
import { loadLayer } from '../src/agent/sources/manifest-files.js';
import { combineLayers } from '../src/agent/sources/index.js';
import { reconcile } from '../src/kubernetes/reconcile.js';
import { eventsBetween, newlyRefused, Planner } from '../src/kubernetes/index.js';
import { emit } from './report.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (the stages are measured after full GCs)');
const i = process.argv.indexOf('--services');
const N = i >= 0 ? Number(process.argv[i + 1]) : 100_000;
const dir = mkdtempSync(join(tmpdir(), 'tsbgp-manifest-memory-'));
try {
  writeFileSync(join(dir, 'cluster.json'), list(clusterObjects({ routerAddress: '127.0.0.2', routerPort: 179, routerAsn: 65000, asn: 64512 })));
  for (let f = 0; f * 1000 < N; f++)
    writeFileSync(join(dir, `services-${String(f).padStart(4, '0')}.json`), serviceList(f * 1000, Math.min(N, (f + 1) * 1000), new Set()));
  const used = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed / 1e6;
  };
  const rows: (string | number)[][] = [];
  let last = used();
  const stage = (name: string) => {
    const now = used();
    rows.push([name, Math.round((now - last) * 10) / 10, Math.round(now * 10) / 10]);
    last = now;
  };
  const layer = await loadLayer(dir, new Map());
  stage('the layer: resources and their map');
  const combined = combineLayers([layer.entries]);
  stage('a combined copy (the watcher keeps none for one layer)');
  const events = eventsBetween(new Map(), combined);
  stage('the first load as events (until planned)');
  const planner = new Planner('worker1');
  const before = planner.plan;
  const plan = planner.applyAll(events).plan;
  stage('the planner: cluster state, contributions, route index, plan');
  const refused = newlyRefused(before.refused, plan.refused);
  stage('the refusals to log');
  const ops = reconcile(undefined, plan, {});
  stage('the reconciler operations (until applied)');
  // Held to here, so that each stage's result is still alive when measured.
  if (layer.entries.size + combined.size + events.length + refused.length + ops.originate.length === 0) throw new Error('nothing loaded');
  emit({
    suite: 'manifest-memory',
    title: `Agent heap by stage, ${N.toLocaleString('en-US')} Services from manifest files`,
    columns: ['stage', 'heap added (MB)', 'heap in use (MB)'],
    rows,
    notes: [
      `\`node --expose-gc --import tsx bench/manifest-memory.ts --services ${N}\`: process.memoryUsage().heapUsed after two full GCs, once each stage's result is held (${plan.routes.length} routes, ${plan.refused.length} refused IPs). MB = 10^6 bytes.`,
    ],
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
