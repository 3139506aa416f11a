/**
 * deploy/grafana/tsbgp-dashboard.json: importable as is (one Prometheus data
 * source variable, no leftovers of an export), and every query names metrics
 * the agent really exports, read from the agent's own registry.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/agent/metrics.js';

interface Target {
  readonly expr: string;
  readonly datasource?: { uid: string };
}
interface Panel {
  readonly type: string;
  readonly title: string;
  readonly targets?: Target[];
  readonly datasource?: { type: string; uid: string };
  readonly panels?: Panel[];
}
const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/tsbgp-dashboard.json', import.meta.url), 'utf8')) as {
  title: string;
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown }[] };
  __inputs?: unknown;
  id?: unknown;
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
const exprs = [
  ...panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...dashboard.templating.list.flatMap((v) => (v.type === 'query' ? [(v.query as { query: string }).query] : [])),
];

/** The agent's registry with every metric registered, the Kubernetes API ones included. */
async function exported(): Promise<Map<string, string[]>> {
  const m = new AgentMetrics();
  m.attach(() => ({
    running: true,
    speaker: undefined,
    plan: undefined,
    configErrors: 0,
    source: {
      kind: 'kubernetes',
      paths: [],
      server: 'https://192.0.2.1:6443',
      calicoApi: null,
      connected: true,
      synced: true,
      since: new Date(0),
      lastSyncAt: null,
      lastError: null,
      watchRestarts: 0,
    },
  }));
  await m.metrics();
  const out = new Map<string, string[]>();
  for (const metric of await m.registry.getMetricsAsJSON()) {
    const labels = ((m.registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] }).labelNames ?? []).slice();
    out.set(metric.name, labels);
  }
  return out;
}

// Functions, keywords and label names in PromQL that look like metric names.
const NOT_METRICS = new Set(['sum', 'max', 'min', 'count', 'rate', 'increase', 'by', 'histogram_quantile', 'time', 'label_values']);
/** metric{matchers}: each metric name with the label names its selector uses. */
function selectors(expr: string): { metric: string; labels: string[] }[] {
  const out: { metric: string; labels: string[] }[] = [];
  for (const m of expr.matchAll(/\b([a-z_][a-z0-9_]*)\s*(\{[^}]*\})?/g)) {
    const name = m[1];
    if (NOT_METRICS.has(name) || !/_/.test(name)) continue;
    // `by (instance, peer)` and `label_values(x, instance)` list labels, not metrics.
    const before = expr.slice(0, m.index);
    if (/\bby\s*\([^)]*$/.test(before) || /label_values\([^,]*,\s*$/.test(before) || /\{[^}]*$/.test(before)) continue;
    out.push({ metric: name, labels: [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)/g)].map((x) => x[1]) });
  }
  return out;
}

describe('deploy/grafana/tsbgp-dashboard.json', () => {
  it('imports as is: a data source variable every panel uses, no export leftovers', () => {
    expect(dashboard.title).toBe('tsbgp node agents');
    expect(dashboard.__inputs).toBeUndefined();
    expect(dashboard.id).toBeUndefined();
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const p of panels) expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    expect(panels.every((p) => (p.targets ?? []).length > 0)).toBe(true);
  });

  it('every query names metrics (and labels) the agent exports', async () => {
    const metrics = await exported();
    const scrapeLabels = ['instance', 'job'];
    const used = new Set<string>();
    for (const expr of exprs) {
      const sel = selectors(expr);
      expect(sel.length, expr).toBeGreaterThan(0);
      for (const { metric, labels } of sel) {
        // Histograms are scraped as NAME_bucket / _sum / _count.
        const base = metrics.has(metric) ? metric : metric.replace(/_(bucket|sum|count)$/, '');
        expect(metrics.has(base), `${metric} in ${expr}`).toBe(true);
        used.add(base);
        for (const l of labels) expect([...metrics.get(base)!, ...scrapeLabels], `label ${l} of ${metric} in ${expr}`).toContain(l);
      }
    }
    // What the dashboard is for: sessions, prefixes, refused advertisements, reconcile latency, API watch health.
    for (const m of [
      'tsbgp_bgp_session_state',
      'tsbgp_bgp_prefixes_advertised',
      'tsbgp_bgp_prefixes_received',
      'tsbgp_routes_refused',
      'tsbgp_reconcile_duration_seconds',
      'tsbgp_update_latency_seconds',
      'tsbgp_kubernetes_api_connected',
      'tsbgp_kubernetes_watch_restarts_total',
    ]) {
      expect(used, m).toContain(m);
    }
  });

  it('the checker itself catches a misspelt metric or label', async () => {
    const metrics = await exported();
    expect(selectors('sum by (peer) (tsbgp_bgp_prefix_advertised{instance=~"$instance"})').map((s) => metrics.has(s.metric))).toEqual([false]);
    expect(selectors('tsbgp_bgp_session_state{stat="Established"}')).toEqual([{ metric: 'tsbgp_bgp_session_state', labels: ['stat'] }]);
    expect(metrics.get('tsbgp_bgp_session_state')).not.toContain('stat');
  });
});
