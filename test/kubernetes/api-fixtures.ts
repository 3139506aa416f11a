/** Raw API objects (as a user would `kubectl apply` them), one of every watched kind. */

export const CRD = 'crd.projectcalico.org/v1';

export function rawNode(name: string, ip: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels, annotations: { 'projectcalico.org/IPv4Address': `${ip}/24` } },
    spec: { podCIDRs: [] },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  };
}

export function rawService(name: string, clusterIP: string, extra: { externalIPs?: string[]; namespace?: string } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: extra.namespace ?? 'default' },
    spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], externalIPs: extra.externalIPs ?? [] },
    status: { loadBalancer: {} },
  };
}

export function rawSlice(name: string, service: string, nodes: string[], namespace = 'default') {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: nodes.map((n, i) => ({ addresses: [`10.244.0.${i + 1}`], nodeName: n, conditions: { ready: true } })),
  };
}

export function rawBgpConfiguration(asNumber: number, apiVersion = CRD) {
  return {
    apiVersion,
    kind: 'BGPConfiguration',
    metadata: { name: 'default' },
    spec: { asNumber, nodeToNodeMeshEnabled: true, serviceClusterIPs: [{ cidr: '10.96.0.0/12' }] },
  };
}

export function rawBgpPeer(name: string, peerIP: string, asNumber: number, apiVersion = CRD) {
  return { apiVersion, kind: 'BGPPeer', metadata: { name }, spec: { peerIP, asNumber } };
}

export function rawIpPool(name: string, cidr: string, apiVersion = CRD) {
  return { apiVersion, kind: 'IPPool', metadata: { name }, spec: { cidr, blockSize: 26 } };
}

export function rawBgpFilter(name: string, cidr: string, apiVersion = CRD) {
  return { apiVersion, kind: 'BGPFilter', metadata: { name }, spec: { exportV4: [{ action: 'Reject', cidr, matchOperator: 'In' }] } };
}

export function rawBlockAffinity(name: string, node: string, cidr: string, apiVersion = CRD) {
  return { apiVersion, kind: 'BlockAffinity', metadata: { name }, spec: { node, cidr, state: 'confirmed' } };
}

/** One of each kind. */
export function everyKind(apiVersion = CRD) {
  return [
    rawNode('node-a', '192.168.1.10'),
    rawService('web', '10.96.0.10'),
    rawSlice('web-abc', 'web', ['node-a']),
    rawBgpConfiguration(64512, apiVersion),
    rawBgpPeer('tor', '192.168.1.1', 65001, apiVersion),
    rawIpPool('pool-a', '10.244.0.0/16', apiVersion),
    rawBgpFilter('no-lab', '10.99.0.0/16', apiVersion),
    rawBlockAffinity('node-a-10-244-0-0-26', 'node-a', '10.244.0.0/26', apiVersion),
  ];
}
