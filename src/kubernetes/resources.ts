import type { Address, Family, Prefix } from '../net/index.js';
import type { LargeCommunity } from '../wire/index.js';
import type { SecretValue } from './secrets.js';
import type { MaxPrefixLimit } from '../speaker/index.js';
import type { Selector } from './selector.js';

/**
 * Typed Kubernetes and Calico resources, as the validator produces them.
 * Only the fields the planner reads are kept; every value is already checked
 * (addresses parsed, enums known, CIDRs without host bits).
 */

export const CALICO_ANNOTATIONS = {
  asNumber: 'projectcalico.org/ASNumber',
  ipv4Address: 'projectcalico.org/IPv4Address',
  ipv6Address: 'projectcalico.org/IPv6Address',
  /** tsbgp's BFD timers on a BGPPeer, named after MetalLB's BFDProfile fields (ms, ms, count, bool). */
  bfdReceiveInterval: 'tsbgp.io/bfd-receive-interval',
  bfdTransmitInterval: 'tsbgp.io/bfd-transmit-interval',
  bfdDetectMultiplier: 'tsbgp.io/bfd-detect-multiplier',
  bfdPassiveMode: 'tsbgp.io/bfd-passive-mode',
  /** tsbgp's max-prefix limit for a BGPPeer's sessions: `LIMIT[,ACTION[,WARN%]]` as `--max-prefixes` (docs/limits.md). */
  maxPrefixes: 'tsbgp.io/max-prefixes',
  /**
   * RFC 9494 long-lived graceful restart on a BGPPeer's sessions: the long-lived stale time, a duration
   * as maxRestartTime ("1h", "3600s") (docs/graceful-restart.md).
   */
  longLivedStaleTime: 'tsbgp.io/long-lived-stale-time',
  rrClusterId: 'projectcalico.org/RouteReflectorClusterID',
} as const;

export const EXCLUDE_FROM_LB_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export type Labels = Readonly<Record<string, string>>;

/** An interface address as Calico writes it on a node: `10.0.0.1/24` or a bare address. */
export interface InterfaceAddress {
  readonly address: Address;
  readonly length?: number;
}

export interface Node {
  readonly kind: 'Node';
  readonly name: string;
  readonly labels: Labels;
  readonly annotations: Labels;
  readonly asNumber?: number;
  readonly ipv4Address?: InterfaceAddress;
  readonly ipv6Address?: InterfaceAddress;
  readonly routeReflectorClusterId?: string;
  readonly internalIPs: readonly Address[];
  readonly podCIDRs: readonly Prefix[];
  /** `spec.unschedulable`: the node is cordoned (the agent may drain: src/agent/drain.ts). */
  readonly unschedulable?: boolean;
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
export type TrafficPolicy = 'Cluster' | 'Local';

export interface Service {
  readonly kind: 'Service';
  readonly namespace: string;
  readonly name: string;
  readonly labels: Labels;
  /** Read by the planner: the tsbgp.io/ routing annotations (src/kubernetes/service-routing.ts). */
  readonly annotations?: Labels;
  readonly type: ServiceType;
  /** True for `clusterIP: None` (headless): such a service is never advertised. */
  readonly headless: boolean;
  readonly clusterIPs: readonly Address[];
  readonly externalIPs: readonly Address[];
  /** `status.loadBalancer.ingress[].ip`; hostname-only entries are dropped. */
  readonly loadBalancerIngressIPs: readonly Address[];
  /** `spec.loadBalancerIP`, kept for status only: never advertised (Calico #11917). */
  readonly specLoadBalancerIP?: Address;
  readonly externalTrafficPolicy: TrafficPolicy;
  readonly ipFamilies: readonly Family[];
}

export type EndpointAddressType = 'IPv4' | 'IPv6' | 'FQDN';

export interface Endpoint {
  readonly nodeName?: string;
  /** `conditions.ready`; a missing value counts as ready. */
  readonly ready: boolean;
}

export interface EndpointSlice {
  readonly kind: 'EndpointSlice';
  readonly namespace: string;
  readonly name: string;
  /** The `kubernetes.io/service-name` label; a slice without it belongs to no service. */
  readonly serviceName?: string;
  readonly addressType: EndpointAddressType;
  readonly endpoints: readonly Endpoint[];
}

export type CommunityValue =
  | { readonly type: 'standard'; readonly value: number; readonly text: string }
  | { readonly type: 'large'; readonly value: LargeCommunity; readonly text: string };

export interface SecretKeyRef {
  readonly name: string;
  readonly key: string;
}

export type LogSeverity = 'Trace' | 'Debug' | 'Info' | 'Warning' | 'Error' | 'Fatal';

export interface PrefixAdvertisement {
  readonly cidr: Prefix;
  /** Community names (resolved by the planner) or literals `aa:nn` / `aa:nn:mm`. */
  readonly communities: readonly string[];
}

export interface BGPConfiguration {
  readonly kind: 'BGPConfiguration';
  readonly name: string;
  readonly asNumber?: number;
  readonly nodeToNodeMeshEnabled?: boolean;
  readonly serviceClusterIPs: readonly Prefix[];
  readonly serviceExternalIPs: readonly Prefix[];
  readonly serviceLoadBalancerIPs: readonly Prefix[];
  readonly serviceLoadBalancerAggregation: 'Enabled' | 'Disabled';
  readonly communities: readonly { readonly name: string; readonly value: CommunityValue }[];
  /** Undefined when the field is absent (a per-node resource then inherits the global one). */
  readonly prefixAdvertisements?: readonly PrefixAdvertisement[];
  readonly listenPort?: number;
  readonly nodeMeshPassword?: SecretKeyRef;
  /** Seconds. */
  readonly nodeMeshMaxRestartTime?: number;
  readonly bindMode?: 'None' | 'NodeIP';
  readonly logSeverityScreen?: LogSeverity;
  /** Which pools' routes go into the kernel (src/kubernetes/kernel.ts); undefined: Enabled. */
  readonly programClusterRoutes?: ProgramClusterRoutes;
  /**
   * Felix's metric for workload routes (v3.32; must match FelixConfiguration); undefined: 1024.
   * Sets the LOCAL_PREF of originated routes (src/kernel/metric.ts).
   */
  readonly ipv4NormalRoutePriority?: number;
  readonly ipv6NormalRoutePriority?: number;
  /** Interface patterns whose connected networks are not advertised (Calico: protocol direct's exclusions). */
  readonly ignoredInterfaces: readonly string[];
  /** The tsbgp.io/weighted-ecmp annotation (default BGPConfiguration only): weighted ECMP for every eTP Local Service that does not say. */
  readonly weightedEcmp?: boolean;
}

export type ProgramClusterRoutes = 'Enabled' | 'Disabled' | 'EnabledIPIPOnly' | 'EnabledNoEncapOnly';
export type EncapMode = 'Never' | 'Always' | 'CrossSubnet';

export type NextHopMode = 'Auto' | 'Self' | 'Keep';

export interface BGPPeer {
  readonly kind: 'BGPPeer';
  readonly name: string;
  /** metadata.labels (a Service's tsbgp.io/peer-selector matches them). */
  readonly labels?: Labels;
  readonly node?: string;
  readonly nodeSelector?: Selector;
  readonly peerIP?: { readonly address: Address; readonly port?: number };
  readonly asNumber?: number;
  readonly peerSelector?: Selector;
  /**
   * Local workload peering: the BGP-speaking pods on the node that this selects.
   * Felix matches it against its workloads and names the BGPPeer in each one's
   * endpoint-status file; the planner peers with those (src/kubernetes/workloads.ts).
   */
  readonly localWorkloadSelector?: Selector;
  readonly localASNumber?: number;
  readonly password?: SecretKeyRef;
  readonly sourceAddress: 'UseNodeIP' | 'None';
  readonly nextHopMode?: NextHopMode;
  readonly keepOriginalNextHop: boolean;
  /** Seconds. */
  readonly maxRestartTime?: number;
  /** Seconds. */
  readonly keepaliveTime?: number;
  readonly numAllowedLocalASNumbers?: number;
  readonly ttlSecurity?: number;
  readonly filters: readonly string[];
  readonly reachableBy?: Address;
  /** Calico Enterprise: BFD with peers on a directly connected subnet of the node. */
  readonly failureDetectionMode: 'None' | 'BFDIfDirectlyConnected';
  /** BFD timers from the tsbgp.io/bfd-* annotations (defaults 300 ms, 300 ms, 3, active). */
  readonly bfd: BfdProfile;
  /** `Manual`: no implied reverse peerings from this BGPPeer (default `Auto`). */
  readonly reversePeering: 'Auto' | 'Manual';
  /**
   * The tsbgp.io/max-prefixes annotation: this peer's limit per family
   * (null: none, `0`); absent: the agent's `--max-prefixes` (default 20000,block,80%).
   */
  readonly maxPrefixes?: MaxPrefixLimit | null;
  /** The tsbgp.io/long-lived-stale-time annotation, seconds (1..16777215): RFC 9494 long-lived graceful restart; absent: off. */
  readonly longLivedStaleTime?: number;
}

/** MetalLB BFDProfile's fields, as tsbgp reads them from a BGPPeer's annotations. */
export interface BfdProfile {
  /** ms */
  readonly receiveInterval: number;
  /** ms */
  readonly transmitInterval: number;
  readonly detectMultiplier: number;
  readonly passiveMode: boolean;
}

export interface IPPool {
  readonly kind: 'IPPool';
  readonly name: string;
  readonly cidr: Prefix;
  readonly blockSize: number;
  readonly disabled: boolean;
  readonly disableBGPExport: boolean;
  readonly nodeSelector: Selector;
  /** Encapsulation (decides how the pool's routes are programmed); default Never. */
  readonly ipipMode: EncapMode;
  readonly vxlanMode: EncapMode;
}

export type FilterOperator = 'Equal' | 'NotEqual' | 'In' | 'NotIn';

export interface FilterRule {
  readonly action: 'Accept' | 'Reject';
  readonly cidr?: Prefix;
  readonly matchOperator?: FilterOperator;
  readonly prefixLength?: { readonly min?: number; readonly max?: number };
  readonly source?: 'RemotePeers';
  readonly interface?: string;
  readonly peerType?: 'eBGP' | 'iBGP';
  readonly communities?: readonly CommunityValue[];
  readonly asPathPrefix?: readonly number[];
  readonly priority?: number;
  readonly operations: readonly FilterOperation[];
}

export type FilterOperation =
  { readonly addCommunity: CommunityValue } | { readonly prependASPath: { readonly prefix: readonly number[] } } | { readonly setPriority: number };

export interface BGPFilter {
  readonly kind: 'BGPFilter';
  readonly name: string;
  readonly exportV4: readonly FilterRule[];
  readonly importV4: readonly FilterRule[];
  readonly exportV6: readonly FilterRule[];
  readonly importV6: readonly FilterRule[];
}

export type BlockState = 'confirmed' | 'pending' | 'pendingDeletion';

export interface BlockAffinity {
  readonly kind: 'BlockAffinity';
  readonly name: string;
  readonly node: string;
  readonly cidr: Prefix;
  readonly state: BlockState;
}

/**
 * A Secret of tsbgp's own namespace; its values never print (see secrets.ts).
 * `data` is a plain record so that a JSON compare (how sources detect
 * changes) sees each value's digest change.
 */
export interface Secret {
  readonly kind: 'Secret';
  readonly namespace: string;
  readonly name: string;
  readonly data: Readonly<Record<string, SecretValue>>;
}

export type Resource = Node | Service | EndpointSlice | BGPConfiguration | BGPPeer | IPPool | BGPFilter | BlockAffinity | Secret;
export type ResourceKind = Resource['kind'];

export const RESOURCE_KINDS: readonly ResourceKind[] = [
  'Node',
  'Service',
  'EndpointSlice',
  'BGPConfiguration',
  'BGPPeer',
  'IPPool',
  'BGPFilter',
  'BlockAffinity',
  'Secret',
];

/** Kinds that live in a namespace; the others are cluster-scoped. */
export function isNamespaced(kind: ResourceKind): boolean {
  return kind === 'Service' || kind === 'EndpointSlice' || kind === 'Secret';
}

/** `kind/namespace/name` or `kind/name`: the identity of a resource across updates. */
export function resourceKey(kind: ResourceKind, name: string, namespace?: string): string {
  // join makes one flat string; `+` and template literals make a tree of
  // string pieces (a V8 ConsString) that a Map holding the key keeps, with
  // the flat copy hashing makes (docs/agent-memory.md).
  return isNamespaced(kind) ? [kind, namespace ?? '', name].join('/') : [kind, name].join('/');
}

export function keyOf(r: Resource): string {
  return resourceKey(r.kind, r.name, 'namespace' in r ? r.namespace : undefined);
}

/** Human form for messages: `Service yaobank/customer`, `BGPPeer rack1`. */
export function describe(kind: string, name?: string, namespace?: string): string {
  if (name === undefined) return kind;
  return namespace ? `${kind} ${namespace}/${name}` : `${kind} ${name}`;
}
