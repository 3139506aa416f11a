/**
 * The agent reading the Kubernetes API (the fake API server, the real client
 * library) and driving a real BgpSpeaker: what a router on 127.0.0.2 learns
 * follows add, update and delete of every watched kind.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  bgpConfiguration,
  bgpFilter,
  bgpPeer,
  blockAffinity,
  CRD,
  endpointSlice,
  ipPool,
  node,
  NODE,
  Router,
  service,
  startCluster,
  until,
  type Cluster,
  type ClusterOptions,
} from './k8s-harness.js';

const clusters: Cluster[] = [];
const routers: Router[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.stop();
  for (const r of routers.splice(0)) await r.speaker.stop();
});

async function cluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const c = await startCluster(opts);
  clusters.push(c);
  return c;
}

const POD = '10.244.1.0/24';
const RANGE = '198.18.0.0/16';

describe('agent + Kubernetes API + BgpSpeaker', () => {
  it('initial sync: the router learns the plan; status names the API source, connected and synced', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    const st = c.agent.status();
    expect(st.source).toMatchObject({ kind: 'kubernetes', server: c.server.url, calicoApi: CRD, connected: true, synced: true, lastError: null });
    expect(st.peers).toEqual([expect.objectContaining({ address: '127.0.0.2', type: 'global', state: 'Established' })]);
    expect(c.metrics.readiness()).toEqual({ ready: true });
    expect(c.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['waiting for the first sync of the Kubernetes API', 'BGP speaker started']));
  });

  it('Node: update (pod CIDR, exclude label), delete and re-add of this node', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    c.apply(node(NODE, '127.0.0.1', { podCIDRs: ['10.244.2.0/24'] }));
    await c.routes(['10.244.2.0/24', RANGE]);
    c.apply(node(NODE, '127.0.0.1', { podCIDRs: ['10.244.2.0/24'], labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'true' } }));
    await c.routes(['10.244.2.0/24']);
    // The Node is gone: nothing of this node is planned, the peer is removed.
    c.remove(node(NODE, '127.0.0.1'));
    await c.routes([]);
    await until('peer removed', () => c.agent.status().peers.length === 0);
    c.apply(node(NODE, '127.0.0.1', { podCIDRs: [POD] }));
    await c.routes([POD, RANGE], 10_000);
  });

  it('Service: add (external IP in the allow-list), update (outside it: NotAdvertised Event), delete', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    const web = service('web', { externalIPs: ['203.0.113.10'] });
    c.apply(web);
    await c.routes([POD, RANGE, '203.0.113.10/32']);
    c.apply(service('web', { externalIPs: ['198.51.100.7'] }));
    await c.routes([POD, RANGE]);
    await until('NotAdvertised event', () => c.server.list('events').length === 1);
    const ev = c.server.list('events')[0];
    expect(ev).toMatchObject({
      reason: 'NotAdvertised',
      type: 'Warning',
      involvedObject: { kind: 'Service', name: 'web', namespace: 'default', uid: c.server.get('v1', 'Service', 'web', 'default')!.metadata.uid },
    });
    expect(ev.message).toBe('external IP 198.51.100.7 is not advertised: outside the allow-list BGPConfiguration serviceExternalIPs [203.0.113.10/32]');
    expect(c.agent.status().refused).toEqual([expect.objectContaining({ ip: '198.51.100.7', reason: 'outside allow-list' })]);
    c.remove(web);
    await until('refusal gone', () => c.agent.status().refused.length === 0);
    c.apply(service('web2', { externalIPs: ['203.0.113.10'] }));
    await c.routes([POD, RANGE, '203.0.113.10/32']);
    c.remove(service('web2', {}));
    await c.routes([POD, RANGE]);
  });

  it('EndpointSlice: add, update and delete move a Local service IP on and off this node', async () => {
    const svc = service('local', { clusterIP: '198.18.0.50', externalTrafficPolicy: 'Local' });
    const c = await cluster({ extra: [svc] });
    await c.routes([POD, RANGE]);
    c.apply(endpointSlice('local-a', 'local', [NODE]));
    await c.routes([POD, RANGE, '198.18.0.50/32']);
    c.apply(endpointSlice('local-a', 'local', ['worker2']));
    await c.routes([POD, RANGE]);
    c.apply(endpointSlice('local-a', 'local', ['worker2', NODE]));
    await c.routes([POD, RANGE, '198.18.0.50/32']);
    c.remove(endpointSlice('local-a', 'local', []));
    await c.routes([POD, RANGE]);
  });

  it('BGPConfiguration: update of the service range, delete (defaults apply), add back; logSeverityScreen sets the log level', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    c.apply(bgpConfiguration({ serviceClusterIPs: [{ cidr: '198.20.0.0/16' }], logSeverityScreen: 'Debug' }));
    await c.routes([POD, '198.20.0.0/16']);
    expect(c.logs.find((l) => l.msg === 'log level debug (BGPConfiguration logSeverityScreen)')).toMatchObject({ level: 'info', from: 'info' });
    expect(c.logs.some((l) => l.level === 'debug')).toBe(false);
    // Debug lines now appear (an ignored object, say).
    c.apply({ apiVersion: CRD, kind: 'IPPool', metadata: { name: 'bad' }, spec: { cidr: '10.0.0.1/8' } });
    await until('invalid resource logged', () => c.logs.some((l) => String(l.msg).startsWith('invalid resource: IPPool bad: spec.cidr')));
    c.apply(bgpConfiguration({ serviceClusterIPs: [{ cidr: '198.20.0.0/16' }], logSeverityScreen: 'Warning' }));
    await until('level warning', () => c.logs.some((l) => l.msg === 'log level warning (BGPConfiguration logSeverityScreen)'));
    const n = c.logs.length;
    c.apply(bgpConfiguration({ serviceClusterIPs: [{ cidr: '198.21.0.0/16' }], logSeverityScreen: 'Warning' }));
    await c.routes([POD, '198.21.0.0/16']);
    await c.agent.settled();
    // At warning level the configuration change (info) is not logged.
    expect(c.logs.slice(n)).toEqual([]);
    // Without a BGPConfiguration, Calico's default (Info) applies again.
    c.remove(bgpConfiguration());
    await c.routes([POD]);
    await until('level info', () => c.logs.some((l) => l.msg === 'log level info (BGPConfiguration logSeverityScreen)'));
    c.apply(bgpConfiguration());
    await c.routes([POD, RANGE]);
  });

  it('--log-level overrides logSeverityScreen', async () => {
    const c = await cluster({ logLevel: 'warning', bgp: bgpConfiguration({ logSeverityScreen: 'Debug' }) });
    await c.routes([POD, RANGE]);
    expect(c.logs.some((l) => l.level === 'debug' || l.level === 'info')).toBe(false);
  });

  it('BGPPeer: add a second router, update it with a password whose Secret does not exist (refused: PeerRefused on the Node), delete it', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    const r2 = new Router('127.0.0.3');
    await r2.speaker.start();
    routers.push(r2);
    c.apply(bgpPeer('router2', `127.0.0.3:${r2.port}`));
    await until('router2 learns', () => JSON.stringify(r2.learned()) === JSON.stringify([POD, RANGE]));
    c.apply(bgpPeer('router2', `127.0.0.3:${r2.port}`, { password: { secretKeyRef: { name: 'bgp', key: 'router2' } } }));
    await until('router2 session gone', () => r2.session()?.state !== 'Established');
    await until('PeerRefused event', () => c.server.list('events').length === 1);
    const ev = c.server.list('events')[0];
    expect(ev).toMatchObject({
      reason: 'PeerRefused',
      metadata: { namespace: 'default' },
      involvedObject: { kind: 'Node', name: NODE, uid: c.server.get('v1', 'Node', NODE)!.metadata.uid },
      source: { component: 'tsbgp', host: NODE },
    });
    expect(ev.message).toMatch(/^BGPPeer router2 \(peer 127\.0\.0\.3 AS 65000\) is refused: spec\.password: Secret kube-system\/bgp not found/);
    expect(c.agent.status().peers.find((p) => p.address === '127.0.0.3')).toMatchObject({ refused: true, state: 'Idle' });
    c.remove(bgpPeer('router2', ''));
    await until('router2 not planned', () => c.agent.status().peers.every((p) => p.address !== '127.0.0.3'));
    // The first router never noticed.
    expect(c.router.log.filter((e) => e.type === 'withdraw')).toEqual([]);
  });

  it('BGPPeer password from a Secret in kube-system, watched by name: refused without it, started with it, updated on rotation', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    const r2 = new Router('127.0.0.3');
    await r2.speaker.start();
    routers.push(r2);
    // another Secret in the namespace, never asked for
    c.server.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'unrelated', namespace: 'kube-system' },
      data: { x: Buffer.from('nope').toString('base64') },
    });
    c.apply(bgpPeer('router2', `127.0.0.3:${r2.port}`, { password: { secretKeyRef: { name: 'bgp', key: 'router2' } } }));
    await until('refused for the missing Secret', () => c.agent.status().peers.some((p) => p.address === '127.0.0.3' && p.refused));
    const secret = (pw: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'bgp', namespace: 'kube-system' },
      data: { router2: Buffer.from(pw).toString('base64') },
    });
    c.server.apply(secret('pw-Alpha-77'));
    await until('started with the password', () => c.agent.status().peers.some((p) => p.address === '127.0.0.3' && !p.refused));
    // the Secrets were read by name only, in kube-system
    const reads = c.server.requests.filter((r) => r.path.includes('/secrets'));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.path === '/api/v1/namespaces/kube-system/secrets' && r.query.fieldSelector === 'metadata.name=bgp')).toBe(true);
    c.server.apply(secret('pw-Bravo-88'));
    const rekeyed = (l: object) =>
      ((l as { peersUpdated?: { peer: string; changed: string[] }[] }).peersUpdated ?? []).some(
        (u) => u.peer === '127.0.0.3' && u.changed.includes('password'),
      );
    expect(c.logs.some(rekeyed)).toBe(false);
    await until('the rotated key reached the speaker (updatePeer, password changed)', () => c.logs.some(rekeyed));
    expect(JSON.stringify(c.logs)).not.toContain('pw-Alpha-77');
    expect(JSON.stringify(c.logs)).not.toContain('pw-Bravo-88');
  });

  it('IPPool: a disableBGPExport pool hides the pod block; update and delete bring it back', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    c.apply(ipPool('quiet', '10.244.0.0/16', { disableBGPExport: true }));
    await c.routes([RANGE]);
    c.apply(ipPool('quiet', '10.244.0.0/16', { disableBGPExport: false }));
    await c.routes([POD, RANGE]);
    c.apply(ipPool('quiet', '10.244.0.0/16', { disableBGPExport: true }));
    await c.routes([RANGE]);
    c.remove(ipPool('quiet', ''));
    await c.routes([POD, RANGE]);
  });

  it('BGPFilter: a missing one is skipped as Calico does (warning, log, Event); add, edit and delete follow live on one session', async () => {
    const c = await cluster({ peer: { filters: ['edge'] } });
    // Never created: the peer runs without it, and says so.
    await c.routes([POD, RANGE]);
    const missing = { kind: 'BGPPeer', field: 'spec.filters', message: expect.stringContaining('BGPFilter edge not found') };
    expect(c.agent.status().warnings).toContainEqual(expect.objectContaining(missing));
    expect(c.agent.status().peers[0]).toMatchObject({ refused: false, state: 'Established' });
    await until('FilterMissing event', () => c.server.list('events').some((e) => e.reason === 'FilterMissing'));
    expect(c.server.list('events').find((e) => e.reason === 'FilterMissing')).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Node', name: NODE } });
    expect(c.logs.some((l) => l.level === 'warning' && String(l.msg).includes('BGPFilter edge not found'))).toBe(true);
    const since = c.router.session()!.since.getTime();
    c.apply(bgpFilter('edge', RANGE));
    await c.routes([POD]);
    expect(c.agent.status().warnings ?? []).not.toContainEqual(expect.objectContaining(missing));
    c.apply(bgpFilter('edge', '10.244.0.0/16'));
    await c.routes([RANGE]);
    // Deleted: the routes come back unfiltered, on the same session.
    c.remove(bgpFilter('edge', ''));
    await c.routes([POD, RANGE]);
    expect(c.router.session()).toMatchObject({ state: 'Established' });
    expect(c.router.session()!.since.getTime()).toBe(since);
    expect(c.agent.status().warnings).toContainEqual(expect.objectContaining(missing));
  });

  it('BlockAffinity: a confirmed block replaces the pod CIDR; update moves it; delete falls back', async () => {
    const c = await cluster({ extra: [ipPool('pods', '10.244.0.0/16')] });
    await c.routes([POD, RANGE]);
    c.apply(blockAffinity('worker1-10-244-7-0-26', NODE, '10.244.7.0/26'));
    await c.routes(['10.244.7.0/26', RANGE]);
    c.apply(blockAffinity('worker1-10-244-7-0-26', NODE, '10.244.7.64/26'));
    await c.routes(['10.244.7.64/26', RANGE]);
    c.remove(blockAffinity('worker1-10-244-7-0-26', NODE, ''));
    await c.routes([POD, RANGE]);
  });

  it('a burst of watch events is planned and reconciled as a few batches, not one per object', async () => {
    const c = await cluster();
    await c.routes([POD, RANGE]);
    const before = c.logs.filter((l) => l.msg === 'configuration changed').length;
    const N = 100;
    // eTP Local Services with their endpoint here: each one's cluster IP /32 is advertised
    const ips = Array.from({ length: N }, (_, i) => `198.18.1.${i + 1}`);
    for (let i = 0; i < N; i++) {
      c.apply(service(`burst-${i}`, { clusterIP: ips[i], externalTrafficPolicy: 'Local' }));
      c.apply(endpointSlice(`burst-${i}-a`, `burst-${i}`, [NODE]));
    }
    await c.routes([POD, RANGE, ...ips.map((ip) => `${ip}/32`)], 10_000);
    const batches = c.logs.filter((l) => l.msg === 'configuration changed').slice(before);
    expect(batches.reduce((n, l) => n + (l.changeCount as number), 0)).toBe(2 * N);
    // the fake API server writes them in one turn: they come in a chunk or a few
    expect(batches.length).toBeLessThanOrEqual(10);
  });
});
