/**
 * Service routing annotations in the agent: the attributes a route is
 * originated with, the export policy for prepends and peer choice
 * (src/kubernetes/service-policy.ts), the views, and — with the real speaker
 * against a router speaker over loopback — an annotation edit
 * re-advertising without a session reset.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { routeAttributes, reconcile } from '../../src/kubernetes/reconcile.js';
import { SERVICE_POLICY, servicePolicy } from '../../src/kubernetes/service-policy.js';
import { explainPrefix, planJson, routeJson } from '../../src/agent/views.js';
import { plan } from '../../src/kubernetes/plan.js';
import { SERVICE_ANNOTATIONS as A } from '../../src/kubernetes/service-routing.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { Prefix } from '../../src/net/prefix.js';
import { compilePolicy, evaluate } from '../../src/policy/index.js';
import { Address } from '../../src/net/address.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { node, peer, slice, svc, valid } from '../kubernetes/helpers.js';
import { clusterManifests } from './cluster-manifests.js';
import { startAgent, startRouter, stopAfterEach, within } from './loopback.js';

const cluster = (annotations: Record<string, string>, eTP: 'Cluster' | 'Local' = 'Cluster'): Resource[] => [
  node('worker1', '192.0.2.10'),
  valid({
    apiVersion: 'projectcalico.org/v3',
    kind: 'BGPConfiguration',
    metadata: { name: 'default' },
    spec: { asNumber: 64512, nodeToNodeMeshEnabled: false, serviceLoadBalancerIPs: [{ cidr: '203.0.113.0/24' }], serviceLoadBalancerAggregation: 'Disabled' },
  }),
  peer('tor-a', { peerIP: '198.51.100.1', asNumber: 65000 }),
  peer('tor-b', { peerIP: '198.51.100.2', asNumber: 65000 }),
  peer('rr', { peerIP: '192.0.2.99', asNumber: 64512 }),
  svc('web', { type: 'LoadBalancer', clusterIP: '10.96.0.9', lbIngress: [{ ip: '203.0.113.10' }], eTP, annotations }),
  slice('web-1', 'web', [{ node: 'worker1' }, { node: 'worker1' }]),
];
const P = (s: string) => Prefix.parse(s);

describe('route attributes from a Service', () => {
  it('communities join the prefixAdvertisements ones; MED, LOCAL_PREF and the link bandwidth go on the route', () => {
    const p = plan(
      stateOf(
        cluster({ [A.communities]: '65000:7', [A.largeCommunities]: '64512:0:7', [A.med]: '20', [A.localPref]: '250', [A.weightedEcmp]: 'true' }, 'Local'),
      ),
      'worker1',
    );
    const r = p.routes.find((x) => x.prefix.toString() === '203.0.113.10/32')!;
    expect(routeAttributes(r, { v4: 1024, v6: 1024 })).toEqual({
      origin: 'igp',
      communities: ['65000:7'],
      largeCommunities: ['64512:0:7'],
      localPref: 250, // the annotation wins over the normal route priority's
      med: 20,
      extendedCommunities: ['lb:64512:250000'],
    });
    const json = routeJson(r, p);
    expect(json.shaping).toEqual({
      communities: ['65000:7', '64512:0:7'],
      med: 20,
      localPref: 250,
      linkBandwidth: { community: 'lb:64512:250000', endpoints: 2, bytesPerSecond: 250000 },
      by: expect.arrayContaining([`${A.med}=20`, 'weighted ECMP (tsbgp.io/weighted-ecmp): 2 ready local endpoints']),
    });
    expect(json.reasons[0].text).toMatch(/shaped by .*tsbgp\.io\/med=20.*weighted ECMP/);
  });
});

describe('the Service routing policy (prepend toward eBGP, peer choice)', () => {
  it('is off (no chain change) while no Service asks for either', () => {
    const p = plan(stateOf(cluster({ [A.med]: '5' })), 'worker1');
    expect(servicePolicy(p).active).toBe(false);
    expect(reconcile(undefined, p).addPeers.every((o) => o.options.exportPolicies === undefined)).toBe(true);
  });

  it('leaves out the peers not chosen and prepends toward eBGP only; turning it on changes chains in place', () => {
    const before = plan(stateOf(cluster({})), 'worker1');
    const p = plan(stateOf(cluster({ [A.peers]: 'tor-a rr', [A.asPathPrepend]: '3' })), 'worker1');
    const sp = servicePolicy(p);
    expect(sp.active).toBe(true);
    const ops = reconcile(before, p);
    expect(ops.updatePeers.map((u) => [u.options.address, u.changed, u.options.exportPolicies]).sort()).toEqual([
      ['192.0.2.99', ['exportPolicies'], [SERVICE_POLICY]],
      ['198.51.100.1', ['exportPolicies'], [SERVICE_POLICY]],
      ['198.51.100.2', ['exportPolicies'], [SERVICE_POLICY]],
    ]);
    const chain = compilePolicy(sp.config).chain({ direction: 'export', policies: [SERVICE_POLICY], localDefault: 'accept' });
    const out = (address: string, asn: number) =>
      evaluate(
        chain,
        { prefix: P('203.0.113.10/32'), attrs: { origin: 0, asPath: [] }, source: { kind: 'local' } },
        {
          peer: { address: Address.parse(address), asn, type: asn === 64512 ? 'ibgp' : 'ebgp', localAsn: 64512 },
          direction: 'export',
        },
      );
    expect(out('198.51.100.1', 65000)).toMatchObject({ verdict: 'accept', attrs: { asPath: [{ type: 2, asns: [64512, 64512, 64512] }] } });
    expect(out('198.51.100.2', 65000).verdict).toBe('reject');
    expect(out('192.0.2.99', 64512)).toMatchObject({ verdict: 'accept', attrs: { asPath: [] } });
    // explain names the annotation that left tor-b out.
    const ex = explainPrefix(p, P('203.0.113.10/32'));
    expect(ex.peers.find((x) => x.address === '198.51.100.2')).toMatchObject({ exported: false, why: `left out by the Service's ${A.peers}=tor-a rr` });
    // ...and so do plan and routes: the /32 is in the exports of the peers chosen only.
    const exported = (address: string) =>
      planJson(p)
        .peers.find((x) => x.address === address)
        ?.exports.includes('203.0.113.10/32');
    expect([exported('198.51.100.1'), exported('198.51.100.2'), exported('192.0.2.99')]).toEqual([true, false, true]);
  });
});

describe('agent + speaker: an annotation edit re-advertises without a session reset', () => {
  stopAfterEach();
  const manifests = (routerPort: number, annotations: Record<string, string>) =>
    clusterManifests({
      nodeAddress: '127.0.0.1',
      bgp: { serviceLoadBalancerIPs: [{ cidr: '203.0.113.0/24' }], serviceLoadBalancerAggregation: 'Disabled' },
      peers: { router: { peerIP: `127.0.0.2:${routerPort}`, asNumber: 65000 } },
      more: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: 'default', annotations },
          spec: { type: 'LoadBalancer', clusterIP: '10.96.0.9', externalTrafficPolicy: 'Local' },
          status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } },
        },
        {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
          addressType: 'IPv4',
          endpoints: [1, 2, 3].map((i) => ({ addresses: [`10.0.0.${i}`], nodeName: 'worker1', conditions: { ready: true } })),
        },
      ],
    });

  it('MED, communities, prepend and link bandwidth reach the router; editing them changes the route, not the session', async () => {
    const router = await startRouter('127.0.0.2', '127.0.0.1');
    const { file } = await startAgent(manifests(router.port!, { [A.med]: '10', [A.communities]: '65000:1', [A.weightedEcmp]: 'true' }));
    const got = () => router.received('127.0.0.1').find((r) => r.prefix.toString() === '203.0.113.10/32');
    await within(10_000, () => got()?.med === 10);
    expect(got()).toMatchObject({ med: 10, communities: ['65000:1'], extendedCommunities: ['lb:64512:375000'], asPath: [64512] });
    const session = router.status().find((s) => s.address === '127.0.0.1')!;
    expect(session.state).toBe('Established');

    await writeFile(file, manifests(router.port!, { [A.med]: '30', [A.communities]: '65000:2', [A.asPathPrepend]: '2', [A.weightedEcmp]: 'true' }));
    await within(5_000, () => got()?.med === 30);
    expect(got()).toMatchObject({ med: 30, communities: ['65000:2'], extendedCommunities: ['lb:64512:375000'], asPath: [64512, 64512, 64512] });
    const after = router.status().find((s) => s.address === '127.0.0.1')!;
    expect(after.state).toBe('Established');
    expect(after.since).toEqual(session.since);
    expect(after.upDownSince).toEqual(session.upDownSince);
  });
});
