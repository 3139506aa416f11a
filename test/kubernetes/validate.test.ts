import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIssue, validateAll, validateObject } from '../../src/kubernetes/validate.js';

const calico = (kind: string, name: string, spec: unknown, apiVersion = 'projectcalico.org/v3') => ({ apiVersion, kind, metadata: { name }, spec });

function issueOf(raw: unknown) {
  const r = validateObject(raw, 'manifests/bgp.yaml');
  if (r.ok) throw new Error('expected a validation error');
  return r.issue;
}

describe('validation errors name the file, kind, namespace/name and field', () => {
  it.each([
    [
      'bad CIDR with host bits',
      calico('IPPool', 'pool1', { cidr: '198.19.0.1/16' }),
      'IPPool',
      'pool1',
      'spec.cidr',
      'host bits set; did you mean 198.19.0.0/16',
    ],
    [
      'unknown enum matchOperator "Equals"',
      calico('BGPFilter', 'f1', { exportV4: [{ action: 'Accept', cidr: '10.0.0.0/8', matchOperator: 'Equals' }] }),
      'BGPFilter',
      'f1',
      'spec.exportV4[0].matchOperator',
      'unknown value "Equals" (expected one of Equal, NotEqual, In, NotIn)',
    ],
    [
      'peer without peerIP and without peerSelector',
      calico('BGPPeer', 'tor', { asNumber: 65000 }),
      'BGPPeer',
      'tor',
      'spec.peerIP',
      'is required when spec.peerSelector is not set',
    ],
    [
      'reachableBy of another family than peerIP',
      calico('BGPPeer', 'rb', { peerIP: '192.0.2.1', asNumber: 65000, reachableBy: '2001:db8::1' }),
      'BGPPeer',
      'rb',
      'spec.reachableBy',
      'is IPv6 but spec.peerIP 192.0.2.1 is IPv4',
    ],
    [
      'reachableBy without peerIP',
      calico('BGPPeer', 'rb2', { peerSelector: 'all()', reachableBy: '192.0.2.254' }),
      'BGPPeer',
      'rb2',
      'spec.reachableBy',
      'needs spec.peerIP',
    ],
    [
      'local workload peering with a peerIP',
      calico('BGPPeer', 'pods', { localWorkloadSelector: "app == 'bgp'", peerIP: '192.0.2.1', asNumber: 65000 }),
      'BGPPeer',
      'pods',
      'spec.peerIP',
      'must be empty when spec.localWorkloadSelector is set',
    ],
    [
      'local workload peering without asNumber',
      calico('BGPPeer', 'pods', { localWorkloadSelector: "app == 'bgp'" }),
      'BGPPeer',
      'pods',
      'spec.asNumber',
      'is required when spec.localWorkloadSelector is set',
    ],
    [
      'BGPFilter cidr without matchOperator',
      calico('BGPFilter', 'f2', { importV4: [{ action: 'Reject', cidr: '10.0.0.0/8' }] }),
      'BGPFilter',
      'f2',
      'spec.importV4[0].matchOperator',
      'is required when cidr is set',
    ],
    [
      'BGPFilter matchOperator without cidr',
      calico('BGPFilter', 'f3', { exportV6: [{ action: 'Reject', matchOperator: 'In' }] }),
      'BGPFilter',
      'f3',
      'spec.exportV6[0].cidr',
      'is required when matchOperator is set',
    ],
    [
      'prefixLength without cidr',
      calico('BGPFilter', 'f4', { exportV4: [{ action: 'Accept', prefixLength: { min: 24 } }] }),
      'BGPFilter',
      'f4',
      'spec.exportV4[0].prefixLength',
      'needs cidr',
    ],
    [
      'IPv6 cidr in a V4 list',
      calico('BGPFilter', 'f5', { exportV4: [{ action: 'Accept', cidr: 'fd00::/8', matchOperator: 'In' }] }),
      'BGPFilter',
      'f5',
      'spec.exportV4[0].cidr',
      'not an IPv4 CIDR',
    ],
    [
      'selector that does not parse',
      calico('BGPPeer', 'rr', { nodeSelector: "rack = 'r1'", peerIP: '192.0.2.1', asNumber: 65000 }),
      'BGPPeer',
      'rr',
      'spec.nodeSelector',
      'invalid selector',
    ],
    [
      'IPPool nodeSelector that does not parse',
      calico('IPPool', 'p', { cidr: '10.0.0.0/16', nodeSelector: 'has(' }),
      'IPPool',
      'p',
      'spec.nodeSelector',
      'invalid selector',
    ],
    [
      'node and nodeSelector together',
      calico('BGPPeer', 'x', { node: 'a', nodeSelector: 'all()', peerIP: '192.0.2.1', asNumber: 1 }),
      'BGPPeer',
      'x',
      'spec.nodeSelector',
      'cannot be set together with spec.node',
    ],
    [
      'peerSelector with peerIP',
      calico('BGPPeer', 'y', { peerSelector: 'all()', peerIP: '192.0.2.1' }),
      'BGPPeer',
      'y',
      'spec.peerIP',
      'cannot be set together with spec.peerSelector',
    ],
    ['bad peerIP port', calico('BGPPeer', 'z', { peerIP: '192.0.2.1:99999', asNumber: 1 }), 'BGPPeer', 'z', 'spec.peerIP', 'port "99999"'],
    [
      'unknown aggregation value',
      calico('BGPConfiguration', 'default', { serviceLoadBalancerAggregation: 'Off' }),
      'BGPConfiguration',
      'default',
      'spec.serviceLoadBalancerAggregation',
      'unknown value "Off"',
    ],
    [
      'service range with host bits',
      calico('BGPConfiguration', 'default', { serviceClusterIPs: [{ cidr: '10.96.0.1/12' }] }),
      'BGPConfiguration',
      'default',
      'spec.serviceClusterIPs[0].cidr',
      'host bits set',
    ],
    [
      'bad community literal',
      calico('BGPConfiguration', 'default', { communities: [{ name: 'c', value: '70000:1' }] }),
      'BGPConfiguration',
      'default',
      'spec.communities[0].value',
      'community AS (70000 is above 65535)',
    ],
    [
      'undefined community name',
      calico('BGPConfiguration', 'default', { prefixAdvertisements: [{ cidr: '10.0.0.0/8', communities: ['nope'] }] }),
      'BGPConfiguration',
      'default',
      'spec.prefixAdvertisements[0].communities[0]',
      'not defined in spec.communities',
    ],
    ['listenPort out of range', calico('BGPConfiguration', 'default', { listenPort: 0 }), 'BGPConfiguration', 'default', 'spec.listenPort', 'out of range'],
    [
      'bad duration',
      calico('BGPPeer', 'd', { peerIP: '192.0.2.1', asNumber: 1, maxRestartTime: '2 minutes' }),
      'BGPPeer',
      'd',
      'spec.maxRestartTime',
      'expected a duration',
    ],
    [
      'blockSize larger than the pool',
      calico('IPPool', 'small', { cidr: '10.0.0.0/28', blockSize: 26 }),
      'IPPool',
      'small',
      'spec.blockSize',
      'larger than the pool',
    ],
    [
      'BlockAffinity without node',
      calico('BlockAffinity', 'b', { cidr: '10.0.0.0/26' }, 'crd.projectcalico.org/v1'),
      'BlockAffinity',
      'b',
      'spec.node',
      'is required',
    ],
    [
      'unknown BlockAffinity state',
      calico('BlockAffinity', 'b', { node: 'n', cidr: '10.0.0.0/26', state: 'done' }),
      'BlockAffinity',
      'b',
      'spec.state',
      'unknown value "done"',
    ],
    [
      'wrong apiVersion',
      calico('IPPool', 'p', { cidr: '10.0.0.0/16' }, 'projectcalico.org/v2'),
      'IPPool',
      'p',
      'apiVersion',
      'expected "projectcalico.org/v3" or "crd.projectcalico.org/v1"',
    ],
    [
      'bad node AS annotation',
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', annotations: { 'projectcalico.org/ASNumber': 'sixty' } } },
      'Node',
      'n1',
      'metadata.annotations.projectcalico.org/ASNumber',
      'expected an AS number',
    ],
    [
      'bad node podCIDR',
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDRs: ['10.244.1.1/24'] } },
      'Node',
      'n1',
      'spec.podCIDRs[0]',
      'host bits set',
    ],
  ])('%s', (_label, raw, kind, name, path, message) => {
    const issue = issueOf(raw);
    expect(issue).toMatchObject({ severity: 'error', file: 'manifests/bgp.yaml', kind, name, path });
    expect(issue.message).toContain(message);
    expect(formatIssue(issue)).toBe(`manifests/bgp.yaml: ${kind} ${name}: ${path}: ${issue.message}`);
  });

  it('namespaced resources name their namespace', () => {
    const issue = issueOf({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'customer', namespace: 'yaobank' },
      spec: { externalIPs: ['203.0.113.300'] },
    });
    expect(issue).toMatchObject({ kind: 'Service', namespace: 'yaobank', name: 'customer', path: 'spec.externalIPs[0]' });
    expect(formatIssue(issue)).toMatch(/^manifests\/bgp\.yaml: Service yaobank\/customer: spec\.externalIPs\[0\]: invalid IPv4 address/);
    const eTP = issueOf({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'c', namespace: 'y' }, spec: { externalTrafficPolicy: 'Global' } });
    expect(eTP).toMatchObject({ path: 'spec.externalTrafficPolicy', message: expect.stringContaining('"Global"') });
  });

  it('a resource without a name is an error at metadata.name', () => {
    expect(issueOf({ apiVersion: 'v1', kind: 'Node', metadata: {} })).toMatchObject({ kind: 'Node', path: 'metadata.name', message: 'is required' });
  });
});

describe('every independent mistake of a resource is reported, not only the first', () => {
  const issuesOf = (raw: unknown) => {
    const r = validateObject(raw, 'manifests/bgp.yaml');
    if (r.ok) throw new Error('expected a validation error');
    expect(r.issues[0]).toEqual(r.issue);
    return r.issues.map((i) => `${i.path}: ${i.message}`);
  };

  it('BGPPeer: a bad duration, port and filter name in one pass, in field order', () => {
    const got = issuesOf(
      calico('BGPPeer', 'tor', { peerIP: '192.0.2.1:99999', asNumber: 65000, maxRestartTime: '2 minutes', filters: ['ok', 7], ttlSecurity: 300 }),
    );
    expect(got).toEqual([
      expect.stringMatching(/^spec\.filters\[1\]: expected a BGPFilter name/),
      expect.stringMatching(/^spec\.peerIP: port "99999"/),
      expect.stringMatching(/^spec\.maxRestartTime: expected a duration/),
      expect.stringMatching(/^spec\.ttlSecurity: 300 is out of range/),
    ]);
  });

  it('BGPFilter: each bad rule, and each bad field of a rule', () => {
    const got = issuesOf(
      calico('BGPFilter', 'f', {
        exportV4: [
          { action: 'Accept', cidr: '10.0.0.0/8', matchOperator: 'Equals' },
          { action: 'Accept', cidr: '10.0.0.0/8', matchOperator: 'In', peerType: 'external', priority: 0 },
        ],
        importV6: [{ action: 'Reject', cidr: '10.0.0.0/8', matchOperator: 'In' }],
      }),
    );
    expect(got).toEqual([
      expect.stringMatching(/^spec\.exportV4\[0\]\.matchOperator: unknown value "Equals"/),
      expect.stringMatching(/^spec\.exportV4\[1\]\.peerType: unknown value "external"/),
      expect.stringMatching(/^spec\.exportV4\[1\]\.priority: 0 is out of range/),
      expect.stringMatching(/^spec\.importV6\[0\]\.cidr: 10\.0\.0\.0\/8 is not an IPv6 CIDR/),
    ]);
  });

  it('Service and BGPConfiguration: each bad list element', () => {
    expect(
      issuesOf({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: { externalIPs: ['203.0.113.300', '203.0.113.5', 'x'], externalTrafficPolicy: 'Global' },
      }),
    ).toEqual([
      expect.stringMatching(/^spec\.externalIPs\[0\]: invalid IPv4 address/),
      expect.stringMatching(/^spec\.externalIPs\[2\]: /),
      expect.stringMatching(/^spec\.externalTrafficPolicy: unknown value "Global"/),
    ]);
    expect(
      issuesOf(
        calico('BGPConfiguration', 'default', {
          serviceClusterIPs: [{ cidr: '10.96.0.1/12' }],
          serviceExternalIPs: [{ cidr: '203.0.113.0/24' }, { cidr: 'x' }],
          listenPort: 0,
        }),
      ),
    ).toEqual([
      expect.stringMatching(/^spec\.serviceClusterIPs\[0\]\.cidr: invalid prefix \(host bits set/),
      expect.stringMatching(/^spec\.serviceExternalIPs\[1\]\.cidr: /),
      expect.stringMatching(/^spec\.listenPort: 0 is out of range/),
    ]);
  });

  it('validateAll reports them all; a consequence of one mistake is not reported as another', () => {
    const set = validateAll([
      { object: calico('BGPPeer', 'tor', { peerIP: '192.0.2.1', asNumber: 'sixty-five', keepaliveTime: 'soon' }), file: 'p.yaml' },
      { object: calico('BGPPeer', 'mesh', { peerSelector: "rack == 'r1", keepaliveTime: 'soon' }), file: 'p.yaml' },
    ]);
    expect(set.resources).toEqual([]);
    // a bad asNumber is one error, not also "asNumber is required"; a bad peerSelector does not make peerIP required
    expect(set.issues.map((i) => `${i.name} ${i.path}`)).toEqual([
      'tor spec.asNumber',
      'tor spec.keepaliveTime',
      'mesh spec.peerSelector',
      'mesh spec.keepaliveTime',
    ]);
    expect(set.invalidKeys.size).toBe(2);
  });
});

describe('validateAll', () => {
  it('skips an invalid resource, keeps the rest, reports duplicates and unknown kinds once', () => {
    const objs = [
      { object: calico('IPPool', 'a', { cidr: '10.0.0.0/16' }), file: 'one.yaml' },
      { object: calico('IPPool', 'bad', { cidr: '10.1.0.1/16' }), file: 'one.yaml' },
      { object: calico('IPPool', 'a', { cidr: '10.2.0.0/16' }, 'crd.projectcalico.org/v1'), file: 'two.yaml' },
      { object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }, file: 'two.yaml' },
      { object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'y' } }, file: 'two.yaml' },
      { object: calico('BGPPeer', 'tor', { peerIP: '192.0.2.20', asNumber: 65000 }), file: 'two.yaml' },
    ];
    const v = validateAll(objs);
    expect(v.resources.map((r) => `${r.kind}/${r.name}`)).toEqual(['IPPool/a', 'BGPPeer/tor']);
    expect(v.resources[0].kind === 'IPPool' && v.resources[0].cidr.toString()).toBe('10.0.0.0/16');
    expect(v.issues.map((i) => [i.severity, i.file, i.kind, i.name, i.path])).toEqual([
      ['error', 'one.yaml', 'IPPool', 'bad', 'spec.cidr'],
      ['error', 'two.yaml', 'IPPool', 'a', 'metadata.name'],
      ['ignored', 'two.yaml', 'Deployment', 'x', undefined],
    ]);
    expect(v.issues[1].message).toContain('duplicate name: already defined in one.yaml');
    expect(v.invalidKeys).toEqual(new Set(['IPPool/bad']));
  });

  it('crd.projectcalico.org/v1 is accepted with the same spec', () => {
    const r = validateObject(
      calico('BGPConfiguration', 'default', { asNumber: 64513, serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] }, 'crd.projectcalico.org/v1'),
    );
    expect(r.ok && r.resource.kind === 'BGPConfiguration' && [r.resource.asNumber, r.resource.serviceClusterIPs.map(String)]).toEqual([
      64513,
      ['198.18.0.0/16'],
    ]);
  });
});

describe('typed values after validation', () => {
  it('Service: clusterIPs, headless, status IPs (hostname entries dropped), ipFamilies inferred', () => {
    const r = validateObject({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'shop' },
      spec: { type: 'LoadBalancer', clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1', 'fd00::1'], externalTrafficPolicy: 'Local', loadBalancerIP: '192.0.2.5' },
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.5' }, { hostname: 'x.example' }] } },
    });
    expect(r.ok).toBe(true);
    if (!r.ok || r.resource.kind !== 'Service') return;
    const s = r.resource;
    expect([s.clusterIPs.map(String), s.loadBalancerIngressIPs.map(String), s.ipFamilies, s.externalTrafficPolicy, s.headless]).toEqual([
      ['10.96.0.1', 'fd00::1'],
      ['192.0.2.5'],
      [4, 6],
      'Local',
      false,
    ]);
  });
  it('BGPPeer: [v6]:port, durations, deprecated keepOriginalNextHop', () => {
    const r = validateObject(calico('BGPPeer', 'p', { peerIP: '[2001:db8::1]:1790', asNumber: '1.10', maxRestartTime: '1m30s', keepOriginalNextHop: true }));
    expect(
      r.ok &&
        r.resource.kind === 'BGPPeer' && [
          r.resource.peerIP?.address.toString(),
          r.resource.peerIP?.port,
          r.resource.asNumber,
          r.resource.maxRestartTime,
          r.resource.keepOriginalNextHop,
        ],
    ).toEqual(['2001:db8::1', 1790, 65546, 90, true]);
  });
  it('Node: Calico annotations, InternalIP, podCIDRs', () => {
    const r = validateObject({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'w1',
        annotations: {
          'projectcalico.org/IPv4Address': '10.0.0.11/24',
          'projectcalico.org/IPv6Address': 'fd00::11/64',
          'projectcalico.org/RouteReflectorClusterID': '244.0.0.1',
        },
      },
      spec: { podCIDRs: ['10.244.1.0/24'] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.0.2.10' },
          { type: 'Hostname', address: 'w1' },
        ],
      },
    });
    expect(
      r.ok &&
        r.resource.kind === 'Node' && [
          r.resource.ipv4Address?.address.toString(),
          r.resource.ipv4Address?.length,
          r.resource.ipv6Address?.address.toString(),
          r.resource.routeReflectorClusterId,
          r.resource.internalIPs.map(String),
          r.resource.podCIDRs.map(String),
        ],
    ).toEqual(['10.0.0.11', 24, 'fd00::11', '244.0.0.1', ['192.0.2.10'], ['10.244.1.0/24']]);
  });
});

describe('validation never throws on untrusted input (property)', () => {
  const kinds = ['Node', 'Service', 'EndpointSlice', 'BGPConfiguration', 'BGPPeer', 'IPPool', 'BGPFilter', 'BlockAffinity', 'Other'];
  const apis = ['v1', 'discovery.k8s.io/v1', 'projectcalico.org/v3', 'crd.projectcalico.org/v1'];
  const leaf = fc.oneof(
    fc.string(),
    fc.constantFrom('10.0.0.0/8', '10.0.0.1', 'fd00::/8', '::1', 'None', 'Local', 'In', '120s', '65000:1', 'all()'),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
  );
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { maxDepth: 3 },
      leaf,
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(
        fc.constantFrom('cidr', 'ip', 'name', 'key', 'action', 'matchOperator', 'values', 'min', 'max', 'secretKeyRef', 'type', 'address', 'ready'),
        tie('v'),
        { maxKeys: 3 },
      ),
    ),
  })).v;
  const specKeys = fc.constantFrom(
    'cidr',
    'blockSize',
    'node',
    'state',
    'peerIP',
    'asNumber',
    'peerSelector',
    'nodeSelector',
    'password',
    'filters',
    'exportV4',
    'importV6',
    'serviceClusterIPs',
    'communities',
    'prefixAdvertisements',
    'type',
    'clusterIP',
    'clusterIPs',
    'externalIPs',
    'ipFamilies',
    'podCIDRs',
    'maxRestartTime',
  );
  it('returns a typed resource or an issue, for any object shape', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...kinds),
        fc.constantFrom(...apis),
        fc.oneof(fc.string(), fc.constant('n')),
        fc.dictionary(specKeys, value, { maxKeys: 5 }),
        fc.anything(),
        (kind, apiVersion, name, spec, junk) => {
          for (const raw of [
            {
              apiVersion,
              kind,
              metadata: { name, annotations: { 'projectcalico.org/ASNumber': typeof junk === 'string' ? junk : '65000' } },
              spec,
              addressType: 'IPv4',
              endpoints: spec.exportV4,
              status: junk,
            },
            junk,
          ]) {
            const r = validateObject(raw, 'fuzz.yaml');
            if (!r.ok) expect(typeof r.issue.message).toBe('string');
            else expect(r.resource.kind).toBe(kind);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('empty entries of the service range lists (Calico case mesh/static-routes)', () => {
  it('an entry without cidr is a warning naming its index; the resource applies with the other entries', () => {
    const r = validateObject(
      calico('BGPConfiguration', 'default', {
        serviceClusterIPs: [{ cidr: '198.18.0.0/16' }, {}, { cidr: '2001:db8:96::/112' }],
        serviceLoadBalancerIPs: [{ cidr: '203.0.113.0/24' }, {}],
        serviceExternalIPs: [{ cidr: '' }],
      }),
      'bgp.yaml',
    );
    if (!r.ok) throw new Error(`expected the resource to apply, got ${r.issue.message}`);
    const conf = r.resource as import('../../src/kubernetes/resources.js').BGPConfiguration;
    expect(conf.serviceClusterIPs.map(String)).toEqual(['198.18.0.0/16', '2001:db8:96::/112']);
    expect(conf.serviceLoadBalancerIPs.map(String)).toEqual(['203.0.113.0/24']);
    expect(conf.serviceExternalIPs).toEqual([]);
    expect(r.notes.map((n) => [n.severity, n.path])).toEqual([
      ['warning', 'spec.serviceClusterIPs[1].cidr'],
      ['warning', 'spec.serviceExternalIPs[0].cidr'],
      ['warning', 'spec.serviceLoadBalancerIPs[1].cidr'],
    ]);
    expect(r.notes[0].message).toContain('empty entry');
  });
});

describe('a node-specific BGPConfiguration', () => {
  it('sets listenPort, logSeverityScreen, prefixAdvertisements and communities; any other field is a warning saying it is ignored', () => {
    const r = validateObject(
      calico('BGPConfiguration', 'node.worker1', {
        listenPort: 1179,
        asNumber: 65099,
        serviceClusterIPs: [{ cidr: '198.18.0.0/16' }],
        communities: [{ name: 'c', value: '65000:1' }],
      }),
      'n.yaml',
    );
    if (!r.ok) throw new Error(r.issue.message);
    expect(r.notes.map((n) => [n.severity, n.path])).toEqual([
      ['warning', 'spec.asNumber'],
      ['warning', 'spec.serviceClusterIPs'],
    ]);
    expect(r.notes[0].message).toContain('ignored in a node-specific BGPConfiguration');
  });
});
