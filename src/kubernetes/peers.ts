import { bfdFor } from './bfd.js';
import type { Address } from '../net/index.js';
import { DEFAULTS, listenPortOf, nodeAddress, nodeAsn, type EffectiveConfig } from './config.js';
import type { AddPaths, PeerType, PlanError, PlannedPeer } from './plan-types.js';
import type { BGPPeer, Node, SecretKeyRef } from './resources.js';
import { resolveSecretRef } from './secrets.js';
import { matches } from './selector.js';
import type { ClusterState } from './state.js';
import { peerAddress, workloadsOf } from './workloads.js';

/**
 * ADD-PATH on every peering, send and receive: confd's `bgp_template`, which
 * every `protocol bgp` it renders (mesh, global, node-specific, local
 * workload) is built from, says `add paths on` (BIRD: rx and tx).
 */
const CALICO_ADD_PATHS: AddPaths = 'both';

type Refusal = { field: string; message: string };
type Family = 4 | 6;

/**
 * Which of two plans for one address:port wins, lowest first: a global
 * BGPPeer, then a node-specific one, then a peering implied in reverse by a
 * BGPPeer, then the mesh. (Calico emits global peerings first and skips a
 * node-specific or reverse one that repeats a key already emitted.)
 */
function rank(p: PlannedPeer): number {
  if (p.origin === 'mesh') return 3;
  if (p.origin === 'reverse') return 2;
  if (p.origin === 'workload') return 1;
  return p.type === 'global' ? 0 : 1;
}

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

/** The nodes on a BGPPeer's local side: `node`, `nodeSelector`, or every node for a global peer. */
function localSide(p: BGPPeer, nodes: readonly Node[]): Node[] {
  if (p.node) return nodes.filter((n) => n.name === p.node);
  if (p.nodeSelector) return nodes.filter((n) => matches(p.nodeSelector!, n.labels));
  return [...nodes];
}

/**
 * The families in which `self` is on a BGPPeer's remote side, so peers back
 * with its local side: both for a `peerSelector` it matches; for a `peerIP`,
 * that address's family, when the address is one of this node's, the AS its
 * own and the port (if given) the one it listens on.
 */
function reverseFamilies(state: ClusterState, p: BGPPeer, self: Node, cfg: EffectiveConfig): Family[] {
  if (p.reversePeering === 'Manual') return [];
  if (p.peerSelector) return matches(p.peerSelector, self.labels) ? [4, 6] : [];
  if (!p.peerIP) return [];
  const a = p.peerIP.address;
  if (!nodeAddress(self, a.family)?.equals(a)) return [];
  // No asNumber: the cluster's AS, which a node without its own AS has (Calico compares with the global AS).
  if ((p.asNumber ?? cfg.asNumber) !== nodeAsn(self, cfg)) return [];
  if (p.peerIP.port !== undefined && p.peerIP.port !== listenPortOf(state, self.name)) return [];
  return [a.family];
}

/**
 * Reference section 2: the mesh, global and node-specific peerings of one
 * node, the reverse peerings other nodes' BGPPeers imply, route-reflector
 * roles, passive sides, TCP-MD5 passwords resolved from Secrets, and the
 * settings that refuse a peering (a missing Secret).
 */
export function planPeers(state: ClusterState, self: Node, cfg: EffectiveConfig, errors: PlanError[]): PlannedPeer[] {
  const localAsn = nodeAsn(self, cfg);
  const myCluster = self.routeReflectorClusterId;
  const mine = { 4: nodeAddress(self, 4), 6: nodeAddress(self, 6) };
  const nodes = byName(state.nodes.values());
  const nodeByIP = new Map<string, Node>();
  for (const n of nodes)
    for (const f of [4, 6] as const) {
      const a = nodeAddress(n, f);
      if (a && !nodeByIP.has(a.toString())) nodeByIP.set(a.toString(), n);
    }

  const out = new Map<string, PlannedPeer>();
  const put = (peer: PlannedPeer) => {
    const key = `${peer.address}|${peer.port}`;
    const prev = out.get(key);
    if (!prev || rank(peer) < rank(prev)) out.set(key, peer);
    // Two explicit peerings to one address: the first (by name) wins, and the other is reported.
    // Implied ones are not the user's words: the first by name wins quietly.
    else if (rank(peer) === rank(prev) && peer.origin !== 'reverse' && peer.from.name !== prev.from.name) {
      errors.push({
        kind: peer.from.kind,
        name: peer.from.name,
        message: `peering to ${key.replace('|', ' port ')} is already defined by ${prev.from.kind} ${prev.from.name}; ignored`,
      });
    }
  };

  // Route-reflector client: this node reflects, the session is iBGP, and the far side is not in its cluster.
  const rrRole = (asn: number, sessionLocalAsn: number, remote: Node | undefined) => {
    const remoteCluster = remote?.routeReflectorClusterId;
    const client = myCluster !== undefined && asn === sessionLocalAsn && remoteCluster !== myCluster;
    return { routeReflectorClient: client, routeReflectorClusterId: client ? myCluster : undefined };
  };
  // Calico's passive side (confd bgp_processor.go): on a mesh peering, and on a global BGPPeer's
  // peerIP that is a Calico node's address, this node waits when the peer's IP is greater than its
  // own, compared as strings ("192.0.2.9" > "192.0.2.10"): the lower address listens, the greater
  // dials. Node-specific, reverse and peerSelector peerings are active at both ends.
  const passiveTo = (remote: Address) => remote.toString() > (mine[remote.family]?.toString() ?? '');

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
          origin: 'mesh',
          remoteNode: n.name,
          passive: passiveTo(remote),
          routeReflectorClient: false,
          nextHopMode: 'Auto',
          keepOriginalNextHop: false,
          gracefulRestart: true,
          maxRestartTime: cfg.nodeMeshMaxRestartTime,
          filters: [],
          sourceAddress: local,
          password: cfg.nodeMeshPassword,
          ...(pw?.ok ? { passwordValue: pw.value } : {}),
          addPaths: CALICO_ADD_PATHS,
          refusedSettings,
          refused: refusedSettings.length > 0,
        });
      }
    }
  }

  /** One planned session from BGPPeer `p` to `remoteAddress`, with the settings the BGPPeer gives it. */
  const session = (
    p: BGPPeer,
    how: { type: PeerType; origin: 'forward' | 'reverse'; passive: boolean },
    remoteAddress: Address,
    port: number,
    asn: number,
    remote: Node | undefined,
  ): PlannedPeer | undefined => {
    const local = mine[remoteAddress.family];
    const refusedSettings: Refusal[] = [];
    if (!local) {
      errors.push({
        kind: 'BGPPeer',
        name: p.name,
        field: 'spec.peerIP',
        message: `node ${self.name} has no IPv${remoteAddress.family} address to peer with ${remoteAddress} from`,
      });
      return undefined;
    }
    const pw = password(p.password);
    if (pw && !pw.ok) refusedSettings.push({ field: 'spec.password', message: pw.message });
    // A BGPFilter that does not exist is skipped, as Calico does: a warning, not a refusal (filters.ts filterWarnings).
    const { bfd, problem } = bfdFor(p, self, remoteAddress);
    if (problem) errors.push({ kind: 'BGPPeer', name: p.name, field: 'spec.failureDetectionMode', message: problem });
    // localASNumber and numAllowedLocalASNumbers apply to a peerIP BGPPeer's forward side only, as Calico
    // (a peerSelector peering is between nodes, each with its own AS; the validator warns when they are set there).
    const byIP = how.origin === 'forward' && p.peerIP !== undefined;
    const sessionLocalAsn = byIP ? (p.localASNumber ?? localAsn) : localAsn;
    const prefix = how.origin === 'reverse' ? 'Reverse' : how.type === 'global' ? 'Global' : 'Node';
    // nextHopMode when set; else the deprecated keepOriginalNextHop, which Calico applies to eBGP sessions only.
    const nextHopMode = p.nextHopMode ?? (p.keepOriginalNextHop && asn !== sessionLocalAsn ? 'Keep' : 'Auto');
    return {
      id: `${prefix}_${p.name}_${ipId(remoteAddress)}`,
      address: remoteAddress,
      port,
      asn,
      localAsn: sessionLocalAsn,
      type: how.type,
      from: { kind: 'BGPPeer', name: p.name },
      origin: how.origin,
      remoteNode: remote?.name,
      passive: how.passive,
      ...rrRole(asn, sessionLocalAsn, remote),
      nextHopMode,
      keepOriginalNextHop: p.keepOriginalNextHop,
      numAllowedLocalASNumbers: byIP ? p.numAllowedLocalASNumbers : undefined,
      gracefulRestart: true,
      maxRestartTime: p.maxRestartTime ?? DEFAULTS.maxRestartTime,
      ...(p.longLivedStaleTime !== undefined ? { longLivedStaleTime: p.longLivedStaleTime } : {}),
      keepaliveTime: p.keepaliveTime,
      filters: p.filters,
      sourceAddress: p.sourceAddress === 'UseNodeIP' ? local : undefined,
      password: p.password,
      ...(pw?.ok ? { passwordValue: pw.value } : {}),
      ttlSecurity: p.ttlSecurity,
      reachableBy: p.reachableBy,
      ...(bfd ? { bfd } : {}),
      ...(p.maxPrefixes !== undefined ? { maxPrefixes: p.maxPrefixes } : {}),
      addPaths: CALICO_ADD_PATHS,
      refusedSettings,
      refused: refusedSettings.length > 0,
    };
  };
  const add = (peer: PlannedPeer | undefined) => peer && put(peer);

  /**
   * Local workload peering (src/kubernetes/workloads.ts): one session per workload on this node that
   * Felix says BGPPeer `p` chose and per family it has an address in, as confd builds it: the BGPPeer's
   * asNumber, localASNumber and filters; passive (the pod dials the node); no source address, TTL
   * security, password, keepalive or restart time of the BGPPeer's; route-reflector role as any iBGP peer.
   */
  const workloadPeers = (p: BGPPeer): PlannedPeer[] => {
    const out: PlannedPeer[] = [];
    const missing = p.filters.filter((f) => !state.bgpFilters.has(f));
    for (const w of workloadsOf(state.workloads, p.name)) {
      for (const f of [4, 6] as const) {
        const address = peerAddress(w, f);
        if (!address) continue;
        const asn = p.asNumber ?? cfg.asNumber;
        const sessionLocalAsn = p.localASNumber ?? localAsn;
        const refusedSettings: Refusal[] = [];
        if (missing.length > 0)
          refusedSettings.push({ field: 'spec.filters', message: `BGPFilter ${missing.join(', ')} not found; the peering is refused until it exists` });
        out.push({
          id: `Local_Workload_${ipId(address)}`,
          address,
          port: DEFAULTS.listenPort,
          asn,
          localAsn: sessionLocalAsn,
          type: 'local workload',
          from: { kind: 'BGPPeer', name: p.name },
          origin: 'workload',
          workload: { file: w.file, ...(w.ifaceName !== undefined ? { ifaceName: w.ifaceName } : {}) },
          passive: true,
          ...rrRole(asn, sessionLocalAsn, undefined),
          nextHopMode: 'Auto',
          keepOriginalNextHop: false,
          gracefulRestart: true,
          maxRestartTime: DEFAULTS.maxRestartTime,
          filters: p.filters,
          ...(p.maxPrefixes !== undefined ? { maxPrefixes: p.maxPrefixes } : {}),
          addPaths: CALICO_ADD_PATHS,
          refusedSettings,
          refused: refusedSettings.length > 0,
        });
      }
    }
    return out;
  };

  for (const p of byName(state.bgpPeers.values())) {
    // Forward: this node is on the BGPPeer's local side.
    const { applies, type } = appliesTo(p, self);
    if (applies) {
      if (p.peerIP) {
        const addr = p.peerIP.address;
        if (!mine[addr.family]?.equals(addr)) {
          // A cluster node at that address with that AS: peer on the port it listens on.
          const n = nodeByIP.get(addr.toString());
          // No asNumber: the cluster's AS (BGPConfiguration default), as Calico does.
          const asn = p.asNumber ?? cfg.asNumber;
          const port = p.peerIP.port ?? (n && nodeAsn(n, cfg) === asn ? listenPortOf(state, n.name) : DEFAULTS.listenPort);
          // Passive only for a global BGPPeer whose peerIP is a Calico node's (any AS), as Calico's calico_node flag.
          add(session(p, { type, origin: 'forward', passive: type === 'global' && n !== undefined && passiveTo(addr) }, addr, port, asn, n));
        }
      } else if (p.localWorkloadSelector) {
        for (const peer of workloadPeers(p)) put(peer);
      } else if (p.peerSelector) {
        for (const n of nodes) {
          if (n.name === self.name || !matches(p.peerSelector, n.labels)) continue;
          for (const f of [4, 6] as const) {
            const remote = nodeAddress(n, f);
            if (!remote || !mine[f]) continue;
            add(session(p, { type, origin: 'forward', passive: false }, remote, listenPortOf(state, n.name), nodeAsn(n, cfg), n));
          }
        }
      }
    }
    // Reverse: this node is on the BGPPeer's remote side; it peers back with the local side.
    const families = reverseFamilies(state, p, self, cfg);
    if (families.length === 0) continue;
    for (const n of localSide(p, nodes)) {
      if (n.name === self.name) continue;
      for (const f of families) {
        const remote = nodeAddress(n, f);
        if (!remote || !mine[f]) continue;
        // The far side speaks with a peerIP BGPPeer's localASNumber when it sets one, else with its own AS.
        add(
          session(
            p,
            { type: 'node specific', origin: 'reverse', passive: false },
            remote,
            listenPortOf(state, n.name),
            (p.peerIP ? p.localASNumber : undefined) ?? nodeAsn(n, cfg),
            n,
          ),
        );
      }
    }
  }
  for (const peer of out.values()) {
    for (const r of peer.refusedSettings)
      errors.push({
        kind: peer.from.kind === 'Node' ? 'BGPConfiguration' : 'BGPPeer',
        name: peer.from.kind === 'Node' ? 'default' : peer.from.name,
        field: r.field,
        message: `peer ${peer.address}: ${r.message}`,
      });
  }
  return [...out.values()].sort((a, b) => a.address.compare(b.address) || a.port - b.port);
}
