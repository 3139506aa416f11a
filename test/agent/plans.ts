/** Small Plan builders for agent tests. */
import type { Plan, PlannedPeer, PlannedRoute } from '../../src/kubernetes/index.js';
import { Address, Prefix } from '../../src/net/index.js';
import type { ReceivedRoute } from '../../src/speaker/index.js';

export function route(prefix: string, communities: string[] = []): PlannedRoute {
  return {
    prefix: Prefix.parse(prefix),
    communities: communities.map((text) => {
      const [a, b] = text.split(':').map(Number);
      return { type: 'standard' as const, value: ((a << 16) | b) >>> 0, text };
    }),
    reasons: [{ kind: 'BGPConfiguration', name: 'default', field: 'serviceClusterIPs' }],
  };
}

export function peer(address: string, over: Partial<PlannedPeer> = {}): PlannedPeer {
  return {
    id: `Global_p_${address}`,
    address: Address.parse(address),
    port: 179,
    asn: 65000,
    localAsn: 64512,
    type: 'global',
    from: { kind: 'BGPPeer', name: 'p' },
    origin: 'forward',
    passive: false,
    routeReflectorClient: false,
    nextHopMode: 'Auto',
    keepOriginalNextHop: false,
    gracefulRestart: true,
    maxRestartTime: 120,
    filters: [],
    addPaths: 'both',
    refusedSettings: [],
    refused: false,
    ...over,
  };
}

export function plan(routes: PlannedRoute[], peers: PlannedPeer[] = []): Plan {
  return {
    node: { name: 'n1', asn: 64512, ipv4: Address.parse('192.0.2.1'), serviceAdvertisementExcluded: false },
    listen: { port: 179 },
    logSeverity: 'Info',
    routes: [...routes].sort((a, b) => a.prefix.compare(b.prefix)),
    refused: [],
    peers,
    filters: [],
    exportAllowList: { pools: [], serviceRanges: [], reflected: [] },
    errors: [],
  };
}

/** `p` with an IP pool (disabled: the allow-list for redistributed routes) and a service range. */
export function withPool(p: Plan): Plan {
  return {
    ...p,
    exportAllowList: {
      ...p.exportAllowList,
      pools: [{ name: 'lb', cidr: Prefix.parse('198.51.100.0/24'), disabled: true, disableBGPExport: false }],
      serviceRanges: [{ prefix: Prefix.parse('198.18.0.0/16'), field: 'serviceClusterIPs' }],
    },
  };
}

/** A route received from `peerAddr`. */
export const rx = (peerAddr: string, prefix: string, over: Partial<ReceivedRoute> = {}): ReceivedRoute => ({
  peer: peerAddr,
  prefix: Prefix.parse(prefix),
  asPath: [],
  communities: [],
  largeCommunities: [],
  best: false,
  stale: false,
  ...over,
});
