import { describe, expect, it } from 'vitest';
import { Planner } from '../../src/kubernetes/planner.js';
import type { PlannedPeer } from '../../src/kubernetes/plan-types.js';
import type { Resource } from '../../src/kubernetes/resources.js';
import { stateOf } from '../../src/kubernetes/state.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { EndpointStatusError, parseEndpointStatus, type LocalWorkloadEndpoint } from '../../src/kubernetes/workloads.js';
import { plan } from '../../src/kubernetes/plan.js';
import { bgpConfig, filter, node, peer, threeNodes } from './helpers.js';

/** An endpoint-status file as Felix writes it (one JSON object per workload). */
const statusText = (o: Record<string, unknown>) => JSON.stringify(o);
const workload = (file: string, o: Record<string, unknown>): LocalWorkloadEndpoint => parseEndpointStatus(file, statusText(o));

const brief = (p: PlannedPeer) => ({
  id: p.id,
  address: p.address.toString(),
  port: p.port,
  asn: p.asn,
  localAsn: p.localAsn,
  type: p.type,
  origin: p.origin,
  from: p.from.name,
  file: p.workload?.file,
  passive: p.passive,
  source: p.sourceAddress?.toString(),
  filters: [...p.filters],
  ttl: p.ttlSecurity,
  password: p.password,
  refused: p.refused,
});

function planWith(resources: Resource[], workloads: LocalWorkloadEndpoint[], nodeName: string) {
  const state = stateOf(resources);
  for (const w of workloads) state.apply({ type: 'workload', file: w.file, endpoint: w });
  return plan(state, nodeName);
}

const resources = (): Resource[] => [
  ...threeNodes(),
  bgpConfig({ asNumber: 64512, nodeToNodeMeshEnabled: false }),
  filter('only-pool', { importV4: [{ action: 'Accept', matchOperator: 'In', cidr: '203.0.113.0/24' }] }),
  // Global: every node peers with the workloads Felix says it chose.
  peer('vm-routers', { localWorkloadSelector: "app == 'router'", asNumber: 64516, localASNumber: 65002, filters: ['only-pool'] }),
  // Node-specific: only worker1.
  peer('worker1-vms', { localWorkloadSelector: "app == 'vm'", node: 'worker1', asNumber: 64517 }),
];

const workloads = (): LocalWorkloadEndpoint[] => [
  workload('k8s-pod-router-a', { ifaceName: 'cali1a2b3c4d5e6', ipv4Nets: ['198.51.100.7/32'], ipv6Nets: ['2001:db8:5::7/128'], bgpPeerName: 'vm-routers' }),
  workload('k8s-pod-vm-b', { ifaceName: 'cali1a2b3c4d5e7', ipv4Nets: ['198.51.100.9/32', '198.51.100.10/32'], bgpPeerName: 'worker1-vms' }),
  // Not chosen by any BGPPeer: no peering.
  workload('k8s-pod-web-c', { ifaceName: 'cali1a2b3c4d5e8', ipv4Nets: ['198.51.100.11/32'] }),
];

describe('local workload peering (BGPPeer localWorkloadSelector)', () => {
  it('plans one passive Local_Workload peer per family per chosen workload, with the BGPPeer AS, local AS and filters only', () => {
    const p = planWith(resources(), workloads(), 'worker1');
    expect(p.errors).toEqual([]);
    expect(p.peers.map(brief)).toEqual([
      {
        id: 'Local_Workload_198_51_100_7',
        address: '198.51.100.7',
        port: 179,
        asn: 64516,
        localAsn: 65002,
        type: 'local workload',
        origin: 'workload',
        from: 'vm-routers',
        file: 'k8s-pod-router-a',
        passive: true,
        source: undefined,
        filters: ['only-pool'],
        ttl: undefined,
        password: undefined,
        refused: false,
      },
      // The first net of the family is the address, as confd takes it.
      {
        id: 'Local_Workload_198_51_100_9',
        address: '198.51.100.9',
        port: 179,
        asn: 64517,
        localAsn: 64512,
        type: 'local workload',
        origin: 'workload',
        from: 'worker1-vms',
        file: 'k8s-pod-vm-b',
        passive: true,
        source: undefined,
        filters: [],
        ttl: undefined,
        password: undefined,
        refused: false,
      },
      {
        id: 'Local_Workload_2001_db8_5__7',
        address: '2001:db8:5::7',
        port: 179,
        asn: 64516,
        localAsn: 65002,
        type: 'local workload',
        origin: 'workload',
        from: 'vm-routers',
        file: 'k8s-pod-router-a',
        passive: true,
        source: undefined,
        filters: ['only-pool'],
        ttl: undefined,
        password: undefined,
        refused: false,
      },
    ]);
  });

  it('a node-specific BGPPeer peers only on its node; a file naming no BGPPeer that exists peers with none', () => {
    const p = planWith(resources(), [...workloads(), workload('k8s-pod-stray', { ipv4Nets: ['198.51.100.20/32'], bgpPeerName: 'deleted-peer' })], 'worker2');
    expect(p.peers.map((x) => [x.id, x.from.name])).toEqual([
      ['Local_Workload_198_51_100_7', 'vm-routers'],
      ['Local_Workload_2001_db8_5__7', 'vm-routers'],
    ]);
  });

  it('the settings Calico leaves out of a workload peering are left out, with a warning naming each', () => {
    const r = validateObject(
      {
        apiVersion: 'projectcalico.org/v3',
        kind: 'BGPPeer',
        metadata: { name: 'vms' },
        spec: {
          localWorkloadSelector: "app == 'vm'",
          asNumber: 64517,
          password: { secretKeyRef: { name: 'pw', key: 'k' } },
          ttlSecurity: 1,
          keepaliveTime: '10s',
        },
      },
      'peers.yaml',
    );
    if (!r.ok) throw new Error(r.issue.message);
    expect(r.notes.map((w) => [w.path, w.severity])).toEqual([
      ['spec.password', 'warning'],
      ['spec.keepaliveTime', 'warning'],
      ['spec.ttlSecurity', 'warning'],
    ]);
    const p = planWith(
      [...threeNodes(), bgpConfig({ asNumber: 64512, nodeToNodeMeshEnabled: false }), r.resource],
      [workload('vm', { ipv4Nets: ['198.51.100.9/32'], bgpPeerName: 'vms' })],
      'worker1',
    );
    expect(p.peers.map(brief)).toEqual([expect.objectContaining({ address: '198.51.100.9', password: undefined, ttl: undefined, passive: true })]);
    expect(p.peers[0].keepaliveTime).toBeUndefined();
  });

  it('a missing BGPFilter refuses the workload peering, naming it', () => {
    const rs = resources().filter((r) => r.kind !== 'BGPFilter');
    const p = planWith(rs, workloads(), 'worker2');
    expect(p.peers.every((x) => x.refused)).toBe(true);
    expect(p.errors.map((e) => [e.name, e.field])).toEqual([
      ['vm-routers', 'spec.filters'],
      ['vm-routers', 'spec.filters'],
    ]);
  });

  it('an iBGP workload peer of a route reflector is its client, as any iBGP peer', () => {
    const rr = node('worker1', '192.0.2.10', { annotations: { 'projectcalico.org/RouteReflectorClusterID': '224.0.0.1' } });
    const rs = [rr, bgpConfig({ asNumber: 64512, nodeToNodeMeshEnabled: false }), peer('ibgp-pods', { localWorkloadSelector: 'all()', asNumber: 64512 })];
    const p = planWith(rs, [workload('pod', { ipv4Nets: ['198.51.100.7/32'], bgpPeerName: 'ibgp-pods' })], 'worker1');
    expect(p.peers.map((x) => [x.id, x.routeReflectorClient, x.routeReflectorClusterId])).toEqual([
      ['Local_Workload_198_51_100_7', rr.routeReflectorClusterId !== undefined, rr.routeReflectorClusterId],
    ]);
  });

  it('the incremental planner follows workload events: a file appearing adds its peers, changing moves them, vanishing removes them', () => {
    const planner = new Planner('worker1', stateOf(resources()));
    expect(planner.plan.peers).toEqual([]);
    const a = workload('pod-a', { ipv4Nets: ['198.51.100.7/32'], bgpPeerName: 'vm-routers' });
    expect(planner.apply({ type: 'workload', file: 'pod-a', endpoint: a }).plan.peers.map((x) => x.id)).toEqual(['Local_Workload_198_51_100_7']);
    const moved = workload('pod-a', { ipv4Nets: ['198.51.100.8/32'], bgpPeerName: 'vm-routers' });
    expect(planner.apply({ type: 'workload', file: 'pod-a', endpoint: moved }).plan.peers.map((x) => x.id)).toEqual(['Local_Workload_198_51_100_8']);
    // Felix clears bgpPeerName when the selector stops matching.
    const unchosen = workload('pod-a', { ipv4Nets: ['198.51.100.8/32'] });
    expect(planner.apply({ type: 'workload', file: 'pod-a', endpoint: unchosen }).plan.peers).toEqual([]);
    planner.apply({ type: 'workload', file: 'pod-a', endpoint: moved });
    expect(planner.apply({ type: 'workload', file: 'pod-a' }).plan.peers).toEqual([]);
    expect(planner.state.workloads.size).toBe(0);
    // The incremental result equals a plan from scratch.
    planner.apply({ type: 'workload', file: 'pod-a', endpoint: a });
    expect(planner.plan.peers.map(brief)).toEqual(plan(planner.state, 'worker1').peers.map(brief));
  });
});

describe("endpoint-status files (Felix's format)", () => {
  it('decodes the fields Felix writes and ignores others', () => {
    expect(
      parseEndpointStatus(
        'p1',
        statusText({ ifaceName: 'cali0', mac: 'ee:ee:ee:ee:ee:ee', ipv4Nets: ['198.51.100.7/32'], ipv6Nets: ['2001:db8::7/128'], bgpPeerName: 'x', future: 1 }),
      ),
    ).toEqual({
      file: 'p1',
      ifaceName: 'cali0',
      mac: 'ee:ee:ee:ee:ee:ee',
      ipv4Nets: ['198.51.100.7/32'],
      ipv6Nets: ['2001:db8::7/128'],
      bgpPeerName: 'x',
    });
    expect(parseEndpointStatus('p2', '{}')).toEqual({ file: 'p2', ipv4Nets: [], ipv6Nets: [] });
  });

  it.each([
    ['empty (Felix writes in place)', '', undefined, 'empty'],
    ['half written', '{"ifaceName":"cali0","ipv4N', undefined, 'not JSON'],
    ['a list', '[]', undefined, 'expected a JSON object'],
    ['an IPv6 net among the IPv4 ones', statusText({ ipv4Nets: ['2001:db8::1/128'] }), 'ipv4Nets[0]', 'is not an IPv4 network'],
    ['a net without a length', statusText({ ipv4Nets: ['198.51.100.7/32', '198.51.100.8'] }), 'ipv4Nets[1]', 'expected "ip/length"'],
    ['a bad address', statusText({ ipv6Nets: ['2001:db8::zz/128'] }), 'ipv6Nets[0]', ''],
    ['a number for bgpPeerName', statusText({ bgpPeerName: 7 }), 'bgpPeerName', 'expected a string'],
  ])('%s is an error naming the file and field', (_, text, field, message) => {
    let err: unknown;
    try {
      parseEndpointStatus('k8s-pod-x', text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EndpointStatusError);
    const e = err as EndpointStatusError;
    expect([e.file, e.field]).toEqual(['k8s-pod-x', field]);
    expect(e.message).toContain('k8s-pod-x');
    expect(e.detail).toContain(message);
  });
});
