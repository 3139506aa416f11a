import { createHash } from 'node:crypto';
import { Address, type Prefix } from '../net/index.js';
import type { BGPConfiguration, CommunityValue, LogSeverity, Node, PrefixAdvertisement, SecretKeyRef } from './resources.js';
import { EXCLUDE_FROM_LB_LABEL } from './resources.js';
import type { ClusterState } from './state.js';

/** Calico's built-in defaults when no `default` BGPConfiguration sets a field. */
export const DEFAULTS = {
  asNumber: 64512,
  nodeToNodeMeshEnabled: true,
  logSeverityScreen: 'Info' as LogSeverity,
  listenPort: 179,
  maxRestartTime: 120,
};

/** The settings one node runs with: `default` merged with built-ins, plus what `node.<name>` may override. */
export interface EffectiveConfig {
  readonly asNumber: number;
  readonly nodeToNodeMeshEnabled: boolean;
  readonly serviceClusterIPs: readonly Prefix[];
  readonly serviceExternalIPs: readonly Prefix[];
  readonly serviceLoadBalancerIPs: readonly Prefix[];
  readonly aggregation: 'Enabled' | 'Disabled';
  /** Weighted ECMP for eTP Local Services without tsbgp.io/weighted-ecmp (the default BGPConfiguration's annotation). */
  readonly weightedEcmp?: boolean;
  /** The `communities` of the resource the prefixAdvertisements come from (`node.<name>` or `default`). */
  readonly communities: ReadonlyMap<string, CommunityValue>;
  readonly prefixAdvertisements: readonly PrefixAdvertisement[];
  /** Which resource the prefixAdvertisements came from (for error messages). */
  readonly prefixAdvertisementsFrom: string;
  readonly listenPort: number;
  readonly logSeverityScreen: LogSeverity;
  readonly nodeMeshPassword?: SecretKeyRef;
  readonly nodeMeshMaxRestartTime: number;
  readonly bindMode: 'None' | 'NodeIP';
}

export function effectiveConfig(state: ClusterState, nodeName: string): EffectiveConfig {
  const g: BGPConfiguration | undefined = state.bgpConfigurations.get('default');
  const n: BGPConfiguration | undefined = state.bgpConfigurations.get(`node.${nodeName}`);
  const usePerNodeAdverts = n?.prefixAdvertisements !== undefined;
  return {
    asNumber: g?.asNumber ?? DEFAULTS.asNumber,
    nodeToNodeMeshEnabled: g?.nodeToNodeMeshEnabled ?? DEFAULTS.nodeToNodeMeshEnabled,
    serviceClusterIPs: g?.serviceClusterIPs ?? [],
    serviceExternalIPs: g?.serviceExternalIPs ?? [],
    serviceLoadBalancerIPs: g?.serviceLoadBalancerIPs ?? [],
    aggregation: g?.serviceLoadBalancerAggregation ?? 'Enabled',
    weightedEcmp: g?.weightedEcmp,
    // As Calico: names in a resource's prefixAdvertisements resolve in that resource's own communities (never merged with default's).
    communities: new Map(((usePerNodeAdverts ? n.communities : g?.communities) ?? []).map((c) => [c.name, c.value])),
    prefixAdvertisements: (usePerNodeAdverts ? n.prefixAdvertisements : g?.prefixAdvertisements) ?? [],
    prefixAdvertisementsFrom: usePerNodeAdverts ? `node.${nodeName}` : 'default',
    listenPort: n?.listenPort ?? g?.listenPort ?? DEFAULTS.listenPort,
    logSeverityScreen: n?.logSeverityScreen ?? g?.logSeverityScreen ?? DEFAULTS.logSeverityScreen,
    nodeMeshPassword: g?.nodeMeshPassword,
    nodeMeshMaxRestartTime: g?.nodeMeshMaxRestartTime ?? DEFAULTS.maxRestartTime,
    bindMode: g?.bindMode ?? 'None',
  };
}

/** The address a node peers from: the Calico annotation, else its first InternalIP of that family. */
export function nodeAddress(node: Node | undefined, family: 4 | 6): Address | undefined {
  if (!node) return undefined;
  const ann = family === 4 ? node.ipv4Address : node.ipv6Address;
  if (ann) return ann.address;
  return node.internalIPs.find((a) => a.family === family);
}

export function nodeAsn(node: Node | undefined, cfg: EffectiveConfig): number {
  return node?.asNumber ?? cfg.asNumber;
}

export function isExcludedFromLB(node: Node | undefined): boolean {
  return node?.labels[EXCLUDE_FROM_LB_LABEL] === 'true';
}

/** Listen port of a node (its `node.<name>` BGPConfiguration may override the global one). */
export function listenPortOf(state: ClusterState, nodeName: string): number {
  return state.bgpConfigurations.get(`node.${nodeName}`)?.listenPort ?? state.bgpConfigurations.get('default')?.listenPort ?? DEFAULTS.listenPort;
}

/** calico-node's environment variable that sets the BGP router ID (confd bgp_processor.go). */
export const ROUTER_ID_ENV = 'CALICO_ROUTER_ID';

/** `CALICO_ROUTER_ID` as calico-node reads it: unset or empty means "the node's IPv4 address". */
export function routerIdSetting(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const v = env[ROUTER_ID_ENV];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The router ID a node runs with, as confd decides it: `CALICO_ROUTER_ID`
 * `hash` derives one from the node name (for nodes without an IPv4 address),
 * any other value is the router ID itself, and unset it is the node's IPv4
 * address (also for IPv6 sessions: a router ID is four octets). An
 * explicit value that is not an IPv4 address is an error naming the
 * variable (confd would write it into BIRD's configuration, which BIRD
 * then refuses to load); the node then has no router ID.
 */
export function routerIdFor(setting: string | undefined, nodeName: string, ipv4: Address | undefined): { routerId?: Address; error?: string } {
  if (setting === undefined) return ipv4 ? { routerId: ipv4 } : {};
  if (setting === 'hash') return { routerId: hashedRouterId(nodeName) };
  try {
    const a = Address.parse(setting);
    if (a.family === 4) return { routerId: a };
  } catch {
    // reported below
  }
  return { error: `${ROUTER_ID_ENV}=${JSON.stringify(setting)} is neither an IPv4 address nor "hash"` };
}

/**
 * Calico's router ID from a node name: the first four bytes of the name's
 * SHA-256 as an IPv4 address, the first byte lowered by 32 when it is above
 * 223 (no multicast or reserved router IDs).
 */
export function hashedRouterId(nodeName: string): Address {
  const b = createHash('sha256').update(nodeName, 'utf8').digest();
  const first = b[0] > 223 ? b[0] - 32 : b[0];
  return Address.parse(`${first}.${b[1]}.${b[2]}.${b[3]}`);
}
