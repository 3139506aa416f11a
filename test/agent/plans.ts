/** Small Plan builders for agent tests. */
import type { Plan, PlannedPeer, PlannedRoute } from '../../src/kubernetes/index.js';
import { Address, Prefix } from '../../src/net/index.js';

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
