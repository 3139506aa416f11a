import type { MaxPrefixLimit } from '../speaker/index.js';
import type { Address, Prefix } from '../net/index.js';
import type { KernelPlan } from './kernel.js';
import type { BGPFilter, CommunityValue, LogSeverity, NextHopMode, SecretKeyRef } from './resources.js';
import type { SecretValue } from './secrets.js';

/** Why a route is in the plan: the resource (and field or rule) that caused it. */
export type RouteReason =
  | { readonly kind: 'BGPConfiguration'; readonly name: string; readonly field: 'serviceClusterIPs' | 'serviceExternalIPs' | 'serviceLoadBalancerIPs' }
  | {
      readonly kind: 'Service';
      readonly namespace: string;
      readonly name: string;
      readonly ip: string;
      readonly source: 'clusterIP' | 'externalIP' | 'loadBalancerIP';
      readonly rule: string;
      /** What the Service's tsbgp.io annotations and weighted ECMP set on the route. */
      readonly shaping?: RouteShaping;
    }
  | { readonly kind: 'BlockAffinity'; readonly name: string; readonly field: 'spec.cidr' }
  | { readonly kind: 'Node'; readonly name: string; readonly field: 'spec.podCIDRs' };

/**
 * What a Service's `tsbgp.io/…` annotations (src/kubernetes/service-routing.ts)
 * and weighted ECMP set on a route. The agent turns it into the route's
 * attributes and, for `prepend` and `peers`, its export policy.
 */
export interface RouteShaping {
  /** Added to the prefixAdvertisements communities. */
  readonly communities?: readonly CommunityValue[];
  readonly med?: number;
  /** LOCAL_PREF toward iBGP peers (wins over the normal route priority's). */
  readonly localPref?: number;
  /** Our AS prepended this many more times toward eBGP peers. */
  readonly prepend?: number;
  /** The planned peers (ids) that get the route; absent: every peer. */
  readonly peers?: readonly string[];
  /** Weighted ECMP: the link bandwidth extended community for this node's ready local endpoints. */
  readonly linkBandwidth?: { readonly asn: number; readonly endpoints: number; readonly bytesPerSecond: number };
  /** What shaped it, e.g. `tsbgp.io/med=50`, `weighted ECMP: 3 ready local endpoints`. */
  readonly by: readonly string[];
}

export interface PlannedRoute {
  readonly prefix: Prefix;
  /** From prefixAdvertisements whose cidr contains the prefix, names resolved, in order, no repeats. */
  readonly communities: readonly CommunityValue[];
  /** Every resource that wants this route, in a stable order; the route stays while any is left. */
  readonly reasons: readonly RouteReason[];
  /** The Service reasons' shaping, merged (src/kubernetes/plan.ts `mergeShaping`); absent when none has any. */
  readonly shaping?: RouteShaping;
}

/** An external or load-balancer IP of a Service that this node does not advertise as a /32 or /128. */
export interface RefusedIP {
  readonly namespace: string;
  readonly name: string;
  readonly ip: string;
  readonly source: 'externalIP' | 'loadBalancerIP';
  readonly reason: 'outside allow-list' | 'not-local' | 'not ready' | 'node excluded' | 'bad annotation' | 'range only';
  readonly message: string;
}

/**
 * `local workload`: a pod on this node chosen by a BGPPeer's localWorkloadSelector
 * (BIRD protocol `Local_Workload_<ip>`; calicoctl node status does not list these).
 */
export type PeerType = 'global' | 'node specific' | 'node-to-node mesh' | 'local workload';

/**
 * Where a peering comes from: `mesh` (the node-to-node mesh; `from` is the
 * remote Node), `forward` (this node matches the BGPPeer's `node` or
 * `nodeSelector`, or the BGPPeer is global), or `reverse` (implied, as Calico
 * makes peerings symmetric: this node matches the BGPPeer's `peerSelector`, or
 * is its `peerIP` with its AS, and peers back with the nodes of its local side),
 * or `workload` (a pod on this node that Felix found the BGPPeer's
 * localWorkloadSelector to match; `workload` names its endpoint-status file).
 */
export type PeerOrigin = 'mesh' | 'forward' | 'reverse' | 'workload';

/** ADD-PATH as offered in OPEN: path identifiers taken in, put out, both, or neither. */
export type AddPaths = 'off' | 'receive' | 'send' | 'both';

export interface PlannedPeer {
  /** Stable identity: `Mesh_<ip>`, `Global_<peer>_<ip>`, `Node_<peer>_<ip>`, `Local_Workload_<ip>`. */
  readonly id: string;
  readonly address: Address;
  readonly port: number;
  readonly asn: number;
  readonly localAsn: number;
  readonly type: PeerType;
  /** The BGPPeer, or for mesh peers the remote Node. */
  readonly from: { readonly kind: 'BGPPeer' | 'Node'; readonly name: string };
  readonly origin: PeerOrigin;
  /** The cluster node at the other end, when it is one. */
  readonly remoteNode?: string;
  /** A local workload peer: its endpoint-status file and host-side interface (as Felix wrote them). */
  readonly workload?: { readonly file: string; readonly ifaceName?: string };
  /**
   * This node waits for the peer to connect. As Calico: on a mesh peering, and on a global BGPPeer's
   * peerIP that is a Calico node's address, when the peer's IP is greater than this node's (string
   * order); never on node-specific, reverse or peerSelector peerings; always on a local workload
   * peering (the pod dials the node's localWorkloadPeeringIPV4/IPV6).
   */
  readonly passive: boolean;
  /** This node reflects routes to the peer (an iBGP peer outside its cluster ID), with `routeReflectorClusterId`. */
  readonly routeReflectorClient: boolean;
  readonly routeReflectorClusterId?: string;
  /** The BGPPeer's nextHopMode; without one, `Keep` for a deprecated keepOriginalNextHop on an eBGP session (as Calico), else `Auto`. */
  readonly nextHopMode: NextHopMode;
  /** As the BGPPeer says (informational: nextHopMode is what applies). */
  readonly keepOriginalNextHop: boolean;
  readonly numAllowedLocalASNumbers?: number;
  readonly gracefulRestart: boolean;
  /** Seconds. */
  readonly maxRestartTime: number;
  /** Seconds, from the BGPPeer's tsbgp.io/long-lived-stale-time annotation: RFC 9494 long-lived graceful restart; absent: off. */
  readonly longLivedStaleTime?: number;
  /** Seconds. */
  readonly keepaliveTime?: number;
  /** BGPFilter names, in the order they apply (export: then the built-in policy). */
  readonly filters: readonly string[];
  readonly sourceAddress?: Address;
  readonly password?: SecretKeyRef;
  /** The password itself, resolved from the Secret (prints as a digest only). */
  readonly passwordValue?: SecretValue;
  /** RFC 5082 TTL security: the peer is at most this many hops away (0 or absent: off). */
  readonly ttlSecurity?: number;
  readonly reachableBy?: Address;
  /**
   * RFC 7911 ADD-PATH offered for the peer's family: `both` (send and
   * receive) on every peering, as confd's BIRD template (`add paths on` in
   * `bgp_template`, which every Calico peering is built from). tsbgp sends one
   * path per prefix where BIRD sends every path its export filter accepts
   * (README: ADD-PATH).
   */
  readonly addPaths: AddPaths;
  /**
   * BFD for this peering: `failureDetectionMode: BFDIfDirectlyConnected` and
   * the peer inside the node's own subnet (its Calico IPv4/IPv6Address with
   * prefix length). Intervals in ms.
   */
  readonly bfd?: { readonly minRx: number; readonly minTx: number; readonly multiplier: number; readonly passive: boolean };
  /** From the BGPPeer's tsbgp.io/max-prefixes annotation, per family (null: no limit); absent: the agent's --max-prefixes. */
  readonly maxPrefixes?: MaxPrefixLimit | null;
  /** Settings that cannot be honoured; when non-empty the peer is refused (not started). */
  readonly refusedSettings: readonly { readonly field: string; readonly message: string }[];
  readonly refused: boolean;
}

export interface PlanError {
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly field?: string;
  readonly message: string;
}

/** What the built-in export policy lets through for routes this node did not originate itself. */
export interface ExportAllowList {
  /** Every IP pool, disabled ones included (a disabled pool is an export allow-list for injected routes). */
  readonly pools: readonly { readonly name: string; readonly cidr: Prefix; readonly disabled: boolean; readonly disableBGPExport: boolean }[];
  readonly serviceRanges: readonly { readonly prefix: Prefix; readonly field: 'serviceClusterIPs' | 'serviceExternalIPs' | 'serviceLoadBalancerIPs' }[];
  /** On a route reflector only: every external and LB allow-list entry, within which clients' /32s are re-advertised. */
  readonly reflected: readonly { readonly prefix: Prefix; readonly field: 'serviceExternalIPs' | 'serviceLoadBalancerIPs' }[];
}

export interface NodeSummary {
  readonly name: string;
  readonly asn: number;
  readonly ipv4?: Address;
  readonly ipv6?: Address;
  /** The BGP router ID: CALICO_ROUTER_ID when set (`hash`: derived from the node name), else the IPv4 address (config.ts routerIdFor); absent: none. */
  readonly routerId?: Address;
  readonly routeReflectorClusterId?: string;
  /** Labelled exclude-from-external-load-balancers=true: advertises no service routes. */
  readonly serviceAdvertisementExcluded: boolean;
}

export interface Plan {
  readonly node: NodeSummary;
  /** bindMode NodeIP: the node's IPv4 and IPv6 addresses (Calico's BIRD and BIRD6 each listen on theirs); none: every address. */
  readonly listen: { readonly port: number; readonly address?: Address; readonly addressV6?: Address };
  readonly logSeverity: LogSeverity;
  /** In prefix order (`Prefix.compare`). */
  readonly routes: readonly PlannedRoute[];
  /** In `compareRefused` order: by namespace, name, source, IP. */
  readonly refused: readonly RefusedIP[];
  readonly peers: readonly PlannedPeer[];
  /** The BGPFilters the planned peers name, by name order, so the plan is self-contained. */
  readonly filters: readonly BGPFilter[];
  readonly exportAllowList: ExportAllowList;
  /** Kernel programming rules and static routes (src/kubernetes/kernel.ts); absent in hand-built plans. */
  readonly kernel?: KernelPlan;
  readonly errors: readonly PlanError[];
}

export interface PlanDiff {
  readonly added: readonly PlannedRoute[];
  readonly removed: readonly PlannedRoute[];
  /** Same prefix, different communities: re-originate. */
  readonly changed: readonly PlannedRoute[];
}
