/**
 * The cluster an end-to-end agent test hands `tsbgp agent --node worker1`:
 * one Node, its IPPools, the `default` BGPConfiguration and the BGPPeers,
 * written as the manifest file the agent reads. The loopback tests
 * (loopback.ts) and the namespace labs (test/interop) share it, so that each
 * test states only what differs.
 */
import { stringify } from 'yaml';

export interface ClusterSketch {
  /** The node's InternalIP. */
  readonly nodeAddress: string;
  readonly podCIDRs?: readonly string[];
  /** One IPPool (block size 26) per CIDR, named pool, pool-1, … */
  readonly pools?: readonly string[];
  /** The BGPConfiguration `default`'s spec beyond `asNumber: 64512` and `nodeToNodeMeshEnabled: false`. */
  readonly bgp?: Readonly<Record<string, unknown>>;
  /** BGPPeers: name → spec. */
  readonly peers?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Further documents (BGPFilters, Secrets …), whole. */
  readonly more?: readonly object[];
}

const calico = 'projectcalico.org/v3';

/** The manifests of `c`, as one multi-document YAML file. */
export function clusterManifests(c: ClusterSketch): string {
  const docs: object[] = [
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'worker1' },
      ...(c.podCIDRs ? { spec: { podCIDRs: c.podCIDRs } } : {}),
      status: { addresses: [{ type: 'InternalIP', address: c.nodeAddress }] },
    },
    ...(c.pools ?? []).map((cidr, i) => ({
      apiVersion: calico,
      kind: 'IPPool',
      metadata: { name: i === 0 ? 'pool' : `pool-${i}` },
      spec: { cidr, blockSize: 26 },
    })),
    { apiVersion: calico, kind: 'BGPConfiguration', metadata: { name: 'default' }, spec: { asNumber: 64512, nodeToNodeMeshEnabled: false, ...c.bgp } },
    ...(c.more ?? []),
    ...Object.entries(c.peers ?? {}).map(([name, spec]) => ({ apiVersion: calico, kind: 'BGPPeer', metadata: { name }, spec })),
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}
