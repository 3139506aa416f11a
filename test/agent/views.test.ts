import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StatusJson } from '../../src/agent/agent.js';
import { renderExplain, renderSource, renderStatusJson, STATUS_NOT_ADVERTISED_SHOWN } from '../../src/agent/render.js';
import { loadLayers } from '../../src/agent/sources/index.js';
import { explain, parseExplainQuery, planJson } from '../../src/agent/views.js';
import { plan, stateOf, type Plan } from '../../src/kubernetes/index.js';
import { Prefix } from '../../src/net/index.js';
import * as h from '../kubernetes/helpers.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));
const STEPS = ['01-service-cluster-ips', '02-customer-local', '03-service-external-ips', '04-customer-external-ip'].map((s) => join(yb, 'steps', `${s}.yaml`));

async function planAt(step: number, node: string): Promise<Plan> {
  return (await at(step, node)).plan;
}

/** The plan and a Service lookup in the same cluster state, as the agent has them. */
async function at(step: number, node: string) {
  const { resources } = await loadLayers([join(yb, 'base'), ...STEPS.slice(0, step)]);
  const state = stateOf(resources);
  return { plan: plan(state, node), service: (ns: string, name: string) => state.services.get(`${ns}/${name}`) };
}

describe('layers', () => {
  it('a later layer replaces a resource of an earlier one without a duplicate error', async () => {
    const { resources, issues } = await loadLayers([join(yb, 'base'), STEPS[0], STEPS[2]]);
    expect(issues.filter((i) => i.severity === 'error')).toEqual([]);
    const cfg = resources.find((r) => r.kind === 'BGPConfiguration' && r.name === 'default')!;
    expect(cfg.kind === 'BGPConfiguration' && cfg.serviceExternalIPs.map(String)).toEqual(['203.0.113.0/24']);
  });
});

describe('explain', () => {
  it('a Service whose external IP is refused on this node: the refusal, the rule, and the cluster IP covered by the range', async () => {
    const { plan: p, service } = await at(4, 'worker2');
    const x = explain(p, 'yaobank/customer', [], service);
    expect(x.service).toBe('yaobank/customer');
    expect(x.prefixes).toEqual([]);
    expect(x.refused).toEqual([expect.objectContaining({ ip: '203.0.113.10', reason: 'not-local' })]);
    expect(x.summary).toContain('203.0.113.10: not advertised (not-local: externalTrafficPolicy=Local and no endpoint runs on node worker2)');
    const ip = explain(p, '203.0.113.10');
    expect(ip.prefixes[0]).toMatchObject({
      prefix: '203.0.113.10/32',
      planned: null,
      coveredBy: [expect.objectContaining({ prefix: '203.0.113.0/24' })],
      allowList: [{ kind: 'serviceRange', name: 'serviceExternalIPs', cidr: '203.0.113.0/24' }],
      export: { accept: true, reason: 'inside serviceExternalIPs 203.0.113.0/24' },
    });
    expect(ip.summary).toContain('not-local');
    expect(ip.prefixes[0].peers.map((q) => [q.address, q.exported])).toEqual([
      ['192.0.2.10', false],
      ['192.0.2.12', false],
      ['192.0.2.20', false],
    ]);
  });

  it('the same Service on worker1: each /32 with its rule and the peers it goes to', async () => {
    const p = await planAt(4, 'worker1');
    const x = explain(p, 'yaobank/customer');
    expect(x.prefixes.map((e) => e.prefix)).toEqual(['198.18.217.62/32', '203.0.113.10/32']);
    const ext = x.prefixes[1];
    expect(ext.planned!.reasons[0]).toMatchObject({ kind: 'Service', source: 'externalIP', rule: 'externalTrafficPolicy=Local with a ready local endpoint' });
    expect(ext.peers.every((q) => q.exported && q.why.startsWith('built-in export accepts: originated by this node'))).toBe(true);
    expect(ext.peers.find((q) => q.type === 'node-to-node mesh')!.why).toContain('mesh peers get the built-in export only');
    const text = renderExplain(x);
    expect(text).toContain('→ 192.0.2.20 (global): exported');
    expect(text).toContain('allow-list: serviceRange serviceExternalIPs 203.0.113.0/24');
  });

  it('a prefix outside everything, an unknown Service, an IPv6 prefix, and a bad query', async () => {
    const { plan: p, service } = await at(1, 'worker1');
    const out = explain(p, '10.9.0.0/16');
    expect(out.prefixes[0].export).toEqual({ accept: false, reason: 'not inside any IP pool or service range' });
    expect(out.summary).toBe('not advertised: no Service, pool block or range on this node plans it');
    expect(() => explain(p, 'default/nope', [], service)).toThrow('no Service default/nope in the cluster state');
    expect(explain(p, '2001:db8::1').prefixes[0].peers[0].why).toBe('IPv6 prefix, IPv4 session');
    expect(() => parseExplainQuery('a/b/c')).toThrow('cannot explain "a/b/c"');
    expect(() => parseExplainQuery('198.18.0.1/16')).toThrow('host bits set');
    expect(parseExplainQuery('198.18.0.1')).toEqual({ prefix: Prefix.parse('198.18.0.1/32') });
  });
});

describe('explain of a Service with no route of its own names which case holds, per IP', () => {
  it('covered by the advertised cluster range', async () => {
    const { plan: p, service } = await at(1, 'worker2');
    const x = explain(p, 'yaobank/summary', [], service);
    expect(renderExplain(x)).toBe(
      [
        'Service yaobank/summary',
        '  cluster IP 198.18.163.205: no /32 of its own; covered by the advertised 198.18.0.0/16 (BGPConfiguration default serviceClusterIPs)',
        '',
      ].join('\n'),
    );
  });

  it('inside no allow-list', async () => {
    const { plan: p, service } = await at(0, 'worker2');
    const x = explain(p, 'yaobank/summary', [], service);
    expect(renderExplain(x)).toBe(
      ['Service yaobank/summary', '  cluster IP 198.18.163.205: not inside any allow-list: BGPConfiguration serviceClusterIPs is not set', ''].join('\n'),
    );
  });
});

describe('planJson', () => {
  it('a disableBGPExport pool hides a planned route from every peer export', async () => {
    const p = await planAt(1, 'worker1');
    const hidden: Plan = {
      ...p,
      exportAllowList: { ...p.exportAllowList, pools: [{ name: 'quiet', cidr: Prefix.parse('198.18.0.0/16'), disabled: false, disableBGPExport: true }] },
    };
    const v = planJson(hidden);
    expect(v.routes.map((r) => r.prefix)).toContain('198.18.0.0/16');
    for (const peer of v.peers) expect(peer.exports).not.toContain('198.18.0.0/16');
  });
});

describe('renderSource', () => {
  const now = new Date('2026-12-02T12:00:00Z');
  const api = {
    kind: 'kubernetes',
    paths: [],
    server: 'https://10.96.0.1:443',
    calicoApi: 'crd.projectcalico.org/v1',
    connected: true,
    synced: true,
    since: '2026-12-02T11:00:00.000Z',
    lastSyncAt: '2026-12-02T11:00:00.000Z',
    lastError: null,
    watchRestarts: 1,
  } as const;

  it('says whether the Kubernetes API is connected, not yet synced, or unreachable and for how long', () => {
    expect(renderSource(api, now)).toBe(
      'Configuration: Kubernetes API https://10.96.0.1:443 (crd.projectcalico.org/v1): connected and synced since 2026-12-02T11:00:00.000Z; 1 watch restart.',
    );
    expect(renderSource({ ...api, synced: false, connected: false, lastError: 'nodes: connect ECONNREFUSED' }, now)).toBe(
      'Configuration: Kubernetes API https://10.96.0.1:443 (crd.projectcalico.org/v1): waiting for the first sync since 2026-12-02T11:00:00.000Z (1h 0m); nothing is advertised yet. Last error: nodes: connect ECONNREFUSED',
    );
    const down = renderSource({ ...api, connected: false, since: '2026-12-02T11:57:30.000Z', lastError: 'services: socket hang up' }, now);
    expect(down).toContain(
      'UNREACHABLE since 2026-12-02T11:57:30.000Z (2m 30s); still advertising the last known configuration (listed 2026-12-02T11:00:00.000Z).',
    );
    expect(down).toContain('Last error: services: socket hang up');
  });
});

describe('renderStatusJson', () => {
  it('the calicoctl table, then configuration errors and refused advertisements', () => {
    const s: StatusJson = {
      version: 1,
      node: 'worker2',
      running: true,
      startedAt: '2026-12-02T09:00:00.000Z',
      speaker: { asn: 64512, routerId: '192.0.2.11', listenPort: 179 },
      peers: [
        {
          id: 'Global_host1_192_0_2_20',
          address: '192.0.2.20',
          port: 179,
          asn: 65000,
          family: 4,
          type: 'global',
          state: 'Active',
          since: '2026-12-01T09:00:00.000Z',
          info: 'Socket: Connection refused',
          refused: false,
        },
        {
          id: 'Node_x',
          address: '2001:db8::9',
          port: 179,
          asn: 65009,
          family: 6,
          type: 'node specific',
          state: 'Idle',
          since: '2026-12-02T09:00:00.000Z',
          info: 'Not started: TCP MD5 passwords cannot be set',
          refused: true,
        },
      ],
      errors: [{ file: '/m/peers.yaml', kind: 'BGPPeer', namespace: null, name: 'x', field: 'spec.password', message: 'TCP MD5 passwords cannot be set' }],
      refused: [
        {
          service: 'yaobank/customer',
          namespace: 'yaobank',
          name: 'customer',
          ip: '203.0.113.10',
          source: 'externalIP',
          reason: 'not-local',
          message: 'no local endpoint',
        },
      ],
      source: {
        kind: 'manifests',
        paths: ['/m', '/m2'],
        server: null,
        calicoApi: null,
        connected: true,
        synced: true,
        since: '2026-12-02T09:00:00.000Z',
        lastSyncAt: '2026-12-02T09:00:00.000Z',
        lastError: null,
        watchRestarts: 0,
      },
    };
    const text = renderStatusJson(s, new Date('2026-12-02T12:00:00Z'));
    expect(text.split('\n').slice(0, 2)).toEqual(['tsbgp agent is running (node worker2).', 'Configuration: manifests /m, /m2.']);
    expect(text).toContain('tsbgp agent is running (node worker2).');
    expect(text).toMatch(/\| 192\.0\.2\.20 +\| global +\| start +\| 2026-12-01 +\| Active Socket: Connection refused +\|/);
    expect(text).toMatch(/\| 2001:db8::9 +\| node specific +\| down +\| 09:00:00 +\| Idle Not started: TCP MD5/);
    expect(text).toContain('Configuration errors:\n  /m/peers.yaml: BGPPeer x: spec.password: TCP MD5 passwords cannot be set');
    expect(text).toContain('Not advertised from this node (not-local: 1):\n  yaobank/customer externalIP 203.0.113.10: not-local (no local endpoint)');
    expect(text).not.toContain('outside the allow-list');
  });

  it('marks the peers this node reflects routes to (rr client)', () => {
    const peerAt = (address: string, routeReflectorClient: boolean) => ({
      id: `Reverse_p_${address}`,
      address,
      port: 179,
      asn: 64512,
      family: 4 as const,
      type: 'node specific',
      routeReflectorClient,
      state: 'Established' as const,
      since: '2026-12-02T09:00:00.000Z',
      info: null,
      refused: false,
    });
    const s: StatusJson = {
      version: 1,
      node: 'rr1',
      running: true,
      startedAt: '2026-12-02T09:00:00.000Z',
      speaker: null,
      peers: [peerAt('192.0.2.2', false), peerAt('192.0.2.12', true)],
      errors: [],
      refused: [],
      source: {
        kind: 'manifests',
        paths: ['/m'],
        server: null,
        calicoApi: null,
        connected: true,
        synced: true,
        since: '2026-12-02T09:00:00.000Z',
        lastSyncAt: null,
        lastError: null,
        watchRestarts: 0,
      },
    };
    const text = renderStatusJson(s, new Date('2026-12-02T12:00:00Z'));
    expect(text).toMatch(/\| 192\.0\.2\.2 +\| node specific +\| up /);
    expect(text).toMatch(/\| 192\.0\.2\.12 +\| node specific, rr client +\| up /);
  });

  it('lists every IP outside the allow-list; IPs not advertised by rule are listed up to a bound, then counted', () => {
    const refused = (i: number, reason: string) => ({
      service: `ns/s${i}`,
      namespace: 'ns',
      name: `s${i}`,
      ip: `198.51.100.${i}`,
      source: 'externalIP' as const,
      reason,
      message: 'm',
    });
    const many = [
      ...Array.from({ length: 25 }, (_, i) => refused(i, 'not-local')),
      refused(100, 'not ready'),
      refused(200, 'outside allow-list'),
      refused(201, 'outside allow-list'),
    ];
    const s: StatusJson = {
      version: 1,
      node: 'n',
      running: true,
      startedAt: '2026-12-02T09:00:00.000Z',
      speaker: null,
      peers: [],
      errors: [],
      refused: many,
      source: {
        kind: 'manifests',
        paths: ['/m'],
        server: null,
        calicoApi: null,
        connected: true,
        synced: true,
        since: '2026-12-02T09:00:00.000Z',
        lastSyncAt: null,
        lastError: null,
        watchRestarts: 0,
      },
    };
    const lines = renderStatusJson(s, new Date('2026-12-02T12:00:00Z')).split('\n');
    const at = lines.indexOf('Refused advertisements (outside the allow-list):');
    expect(lines.slice(at + 1, at + 3)).toEqual([
      '  ns/s200 externalIP 198.51.100.200: outside allow-list (m)',
      '  ns/s201 externalIP 198.51.100.201: outside allow-list (m)',
    ]);
    const rest = lines.indexOf('Not advertised from this node (not-local: 25, not ready: 1):');
    expect(rest).toBeGreaterThan(at);
    expect(lines.slice(rest + 1).filter((l) => l.startsWith('  ns/'))).toHaveLength(STATUS_NOT_ADVERTISED_SHOWN);
    expect(lines).toContain(`  … and ${26 - STATUS_NOT_ADVERTISED_SHOWN} more (tsbgp status --json lists them; tsbgp explain NAMESPACE/SERVICE says why)`);
  });
});

describe('plan --json: the session of each peer, as the speaker would run it (compare with BIRD field by field)', () => {
  it('router ID, listen address and port; per peer source address, TCP-MD5 Secret (never the value), TTL security, next hop, restart time, keepalive, add-paths, BFD', () => {
    const rs = [
      h.node('w1', '192.0.2.10', { annotations: { 'projectcalico.org/IPv4Address': '192.0.2.10/24', 'projectcalico.org/IPv6Address': '2001:db8::10/64' } }),
      h.node('w2', '192.0.2.11'),
      h.bgpConfig({ bindMode: 'NodeIP', listenPort: 1179, nodeMeshMaxRestartTime: '200s' }),
      h.secret('bgp-secrets', { tor: 's3cret-value' }),
      h.peer('tor', {
        peerIP: '192.0.2.1',
        asNumber: 65000,
        password: { secretKeyRef: { name: 'bgp-secrets', key: 'tor' } },
        ttlSecurity: 2,
        nextHopMode: 'Self',
        keepaliveTime: '20s',
        maxRestartTime: '300s',
        numAllowedLocalASNumbers: 1,
        reachableBy: '192.0.2.254',
      }),
      h.valid({
        apiVersion: 'projectcalico.org/v3',
        kind: 'BGPPeer',
        metadata: { name: 'bfd', annotations: { 'tsbgp.io/bfd-receive-interval': '200' } },
        spec: { peerIP: '192.0.2.2', asNumber: 65001, failureDetectionMode: 'BFDIfDirectlyConnected', sourceAddress: 'None' },
      }),
      h.peer('locked', { peerIP: '192.0.2.3', asNumber: 65002, password: { secretKeyRef: { name: 'absent', key: 'k' } } }),
    ];
    const v = planJson(plan(stateOf(rs), 'w1'));
    expect(v.version).toBe(1);
    expect(v.routerId).toBe('192.0.2.10');
    expect(v.listen).toEqual({ addresses: ['192.0.2.10', '2001:db8::10'], port: 1179 });
    const by = new Map(v.peers.map((p) => [p.address, p]));
    expect(by.get('192.0.2.1')).toMatchObject({
      sourceAddress: '192.0.2.10',
      password: { secret: 'bgp-secrets', key: 'tor', resolved: true },
      ttlSecurity: 2,
      nextHopMode: 'Self',
      gracefulRestart: { restartTime: 300 },
      keepaliveTime: 20,
      holdTime: 90,
      // confd's bgp_template: add paths on (send and receive) for every peering
      addPaths: 'both',
      bfd: null,
      numAllowedLocalASNumbers: 1,
      reachableBy: '192.0.2.254',
      refused: false,
    });
    expect(by.get('192.0.2.2')).toMatchObject({
      sourceAddress: null,
      password: null,
      ttlSecurity: null,
      nextHopMode: 'Auto',
      keepaliveTime: null,
      bfd: { minRx: 200, minTx: 300, multiplier: 3, passive: false },
    });
    // A missing Secret: the peering is refused (not run unprotected), and the plan says which Secret.
    expect(by.get('192.0.2.3')).toMatchObject({ password: { secret: 'absent', key: 'k', resolved: false }, refused: true });
    // The mesh peer: the node's address, nodeMeshMaxRestartTime, no TTL security (BIRD: ttl security off).
    expect(by.get('192.0.2.11')).toMatchObject({
      sourceAddress: '192.0.2.10',
      gracefulRestart: { restartTime: 200 },
      ttlSecurity: null,
      nextHopMode: 'Auto',
      port: 1179,
    });
    expect(JSON.stringify(v)).not.toContain('s3cret-value');
  });
});
