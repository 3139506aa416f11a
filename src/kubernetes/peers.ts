import type { Address } from '../net/index.js';
import { DEFAULTS, listenPortOf, nodeAddress, nodeAsn, type EffectiveConfig } from './config.js';
import type { PeerType, PlanError, PlannedPeer } from './plan-types.js';
import type { BGPPeer, Node, SecretKeyRef } from './resources.js';
import { resolveSecretRef } from './secrets.js';
import { matches } from './selector.js';
import type { ClusterState } from './state.js';

type Refusal = { field: string; message: string };

const TYPE_RANK: Record<PeerType, number> = { global: 0, 'node specific': 1, 'node-to-node mesh': 2 };

function ipId(a: Address): string {
  return a.toString().replace(/[.:]/g, '_');
}

function byName<T extends { name: string }>(xs: Iterable<T>): T[] {
  return [...xs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Whether a BGPPeer applies to `node`: node-specific by name or selector, else global. */
function appliesTo(p: BGPPeer, node: Node): { applies: boolean; type: PeerType } {
  if (p.node) return { applies: p.node === node.name, type: 'node specific' };
  if (p.nodeSelector) return { applies: matches(p.nodeSelector, node.labels), type: 'node specific' };
  return { applies: true, type: 'global' };
}

/**
 * Reference section 2: the mesh, global and node-specific peerings of one node,
 * route-reflector roles, passive sides, TCP-MD5 passwords resolved from
 * Secrets, and the settings that refuse a peering (a missing Secret or filter).
 */
export function planPeers(state: ClusterState, self: Node, cfg: EffectiveConfig, errors: PlanError[]): PlannedPeer[] {
  const localAsn = nodeAsn(self, cfg);
  const myCluster = self.routeReflectorClusterId;
  const mine = { 4: nodeAddress(self, 4), 6: nodeAddress(self, 6) };
  const nodes = byName(state.nodes.values());
  const nodeByIP = new Map<string, Node>();
  for (const n of nodes) for (const f of [4, 6] as const) {
    const a = nodeAddress(n, f);
    if (a && !nodeByIP.has(a.toString())) nodeByIP.set(a.toString(), n);
  }

  const out = new Map<string, PlannedPeer>();
  const put = (peer: PlannedPeer) => {
    const key = `${peer.address}|${peer.port}`;
    const prev = out.get(key);
    if (!prev || TYPE_RANK[peer.type] < TYPE_RANK[prev.type]) out.set(key, peer);
    else if (TYPE_RANK[peer.type] === TYPE_RANK[prev.type] && peer.from.name !== prev.from.name) {
      errors.push({ kind: peer.from.kind, name: peer.from.name, message: `peering to ${key.replace('|', ' port ')} is already defined by ${prev.from.kind} ${prev.from.name}; ignored` });
    }
  };

  // Route-reflector client: this node reflects, the session is iBGP, and the far side is not in its cluster.
  const rrRole = (asn: number, sessionLocalAsn: number, remote: Node | undefined) => {
    const remoteCluster = remote?.routeReflectorClusterId;
    const client = myCluster !== undefined && asn === sessionLocalAsn && remoteCluster !== myCluster;
    return { routeReflectorClient: client, routeReflectorClusterId: client ? myCluster : undefined };
  };

  // TCP-MD5 passwords come from Secrets in tsbgp's namespace; a missing one refuses the peering.
  const password = (ref: SecretKeyRef | undefined) => (ref ? resolveSecretRef(state.secrets, state.secretNamespace, ref) : undefined);
  const meshPassword = cfg.nodeToNodeMeshEnabled ? password(cfg.nodeMeshPassword) : undefined;

  // Node-to-node mesh; route reflectors stay out of it.
  if (cfg.nodeToNodeMeshEnabled && myCluster === undefined) {
    for (const n of nodes) {
      if (n.name === self.name || n.routeReflectorClusterId !== undefined) continue;
      for (const f of [4, 6] as const) {
        const remote = nodeAddress(n, f);
        const local = mine[f];
        if (!remote || !local) continue;
        const refusedSettings: Refusal[] = [];
        const pw = meshPassword;
        if (pw && !pw.ok) refusedSettings.push({ field: 'BGPConfiguration default spec.nodeMeshPassword', message: pw.message });
        put({
          id: `Mesh_${ipId(remote)}`,
          address: remote,
          port: listenPortOf(state, n.name),
          asn: nodeAsn(n, cfg),
          localAsn,
          type: 'node-to-node mesh',
          from: { kind: 'Node', name: n.name },
          remoteNode: n.name,
          passive: local.toString() > remote.toString(),
          routeReflectorClient: false,
          nextHopMode: 'Auto',
          keepOriginalNextHop: false,
          gracefulRestart: true,
          maxRestartTime: cfg.nodeMeshMaxRestartTime,
          filters: [],
          sourceAddress: local,
          password: cfg.nodeMeshPassword,
          ...(pw?.ok ? { passwordValue: pw.value } : {}),
          refusedSettings,
          refused: refusedSettings.length > 0,
        });
      }
    }
  }

  for (const p of byName(state.bgpPeers.values())) {
    const { applies, type } = appliesTo(p, self);
    if (!applies) continue;
    const common = (remoteAddress: Address, asn: number, remote: Node | undefined): Omit<PlannedPeer, 'id' | 'address' | 'port' | 'passive'> | undefined => {
      const local = mine[remoteAddress.family];
      const refusedSettings: Refusal[] = [];
      if (!local) {
        errors.push({ kind: 'BGPPeer', name: p.name, field: 'spec.peerIP', message: `node ${self.name} has no IPv${remoteAddress.family} address to peer with ${remoteAddress} from` });
        return undefined;
      }
      const pw = password(p.password);
      if (pw && !pw.ok) refusedSettings.push({ field: 'spec.password', message: pw.message });
      const missing = p.filters.filter((f) => !state.bgpFilters.has(f));
      // Running without a named filter could leak routes: refuse instead.
      if (missing.length > 0) refusedSettings.push({ field: 'spec.filters', message: `BGPFilter ${missing.join(', ')} not found; the peering is refused until it exists` });
      const keep = p.keepOriginalNextHop || p.nextHopMode === 'Keep';
      const sessionLocalAsn = p.localASNumber ?? localAsn;
      return {
        asn,
        localAsn: sessionLocalAsn,
        type,
        from: { kind: 'BGPPeer', name: p.name },
        remoteNode: remote?.name,
        ...rrRole(asn, sessionLocalAsn, remote),
        nextHopMode: keep ? 'Keep' : (p.nextHopMode ?? 'Auto'),
        keepOriginalNextHop: p.keepOriginalNextHop,
        numAllowedLocalASNumbers: p.numAllowedLocalASNumbers,
        gracefulRestart: true,
        maxRestartTime: p.maxRestartTime ?? DEFAULTS.maxRestartTime,
        keepaliveTime: p.keepaliveTime,
        filters: p.filters,
        sourceAddress: p.sourceAddress === 'UseNodeIP' ? local : undefined,
        password: p.password,
        ...(pw?.ok ? { passwordValue: pw.value } : {}),
        ttlSecurity: p.ttlSecurity,
        reachableBy: p.reachableBy,
        refusedSettings,
        refused: refusedSettings.length > 0,
      };
    };
    const prefix = type === 'global' ? 'Global' : 'Node';
    if (p.peerIP) {
      const addr = p.peerIP.address;
      if (mine[addr.family]?.equals(addr)) continue; // a global peer that is this node itself
      const c = common(addr, p.asNumber!, nodeByIP.get(addr.toString()));
      if (c) put({ id: `${prefix}_${p.name}_${ipId(addr)}`, address: addr, port: p.peerIP.port ?? DEFAULTS.listenPort, passive: false, ...c });
    } else if (p.peerSelector) {
      for (const n of nodes) {
        if (n.name === self.name || !matches(p.peerSelector, n.labels)) continue;
        for (const f of [4, 6] as const) {
          const remote = nodeAddress(n, f);
          const local = mine[f];
          if (!remote || !local) continue;
          const c = common(remote, nodeAsn(n, cfg), n);
          if (c) put({ id: `${prefix}_${p.name}_${ipId(remote)}`, address: remote, port: listenPortOf(state, n.name), passive: local.toString() > remote.toString(), ...c });
        }
      }
    }
  }
  for (const peer of out.values()) {
    for (const r of peer.refusedSettings) errors.push({ kind: peer.from.kind === 'Node' ? 'BGPConfiguration' : 'BGPPeer', name: peer.from.kind === 'Node' ? 'default' : peer.from.name, field: r.field, message: `peer ${peer.address}: ${r.message}` });
  }
  return [...out.values()].sort((a, b) => a.address.compare(b.address) || a.port - b.port);
}
