import type { BGPConfiguration, BGPFilter, BGPPeer, BlockAffinity, Secret, EndpointSlice, IPPool, Node, Resource, ResourceKind, Service } from './resources.js';
import { isNamespaced, keyOf, resourceKey } from './resources.js';
import type { LocalWorkloadEndpoint } from './workloads.js';

/** What a source of resources (manifest files, the Kubernetes API) reports. A delete needs only the identity. */
export type ResourceEvent =
  | { readonly type: 'add' | 'update'; readonly resource: Resource }
  | { readonly type: 'delete'; readonly kind: ResourceKind; readonly name: string; readonly namespace?: string };

/** Felix's endpoint-status file `file` now reads as `endpoint`, or is gone (no `endpoint`): src/kubernetes/workloads.ts. */
export interface WorkloadEvent {
  readonly type: 'workload';
  readonly file: string;
  readonly endpoint?: LocalWorkloadEndpoint;
}

/** What a source reports: a resource change, or a local workload's status (the endpoint-status files). */
export type ClusterEvent = ResourceEvent | WorkloadEvent;

/** The namespace/name of the Service a slice or service belongs to. */
export function serviceKey(namespace: string, name: string): string {
  // One flat string, as resourceKey (the state's maps keep it).
  return [namespace, name].join('/');
}

/**
 * In-memory store of typed resources, fed by events. Slices are indexed by
 * their own key and by owning service, so deleting a slice by its key always
 * finds the index entry to remove (the Calico key-mismatch bug).
 */
export class ClusterState {
  readonly nodes = new Map<string, Node>();
  readonly services = new Map<string, Service>();
  readonly endpointSlices = new Map<string, EndpointSlice>();
  readonly bgpConfigurations = new Map<string, BGPConfiguration>();
  readonly bgpPeers = new Map<string, BGPPeer>();
  readonly ipPools = new Map<string, IPPool>();
  readonly bgpFilters = new Map<string, BGPFilter>();
  readonly blockAffinities = new Map<string, BlockAffinity>();
  /** By "namespace/name"; the planner reads those of `secretNamespace` only. */
  readonly secrets = new Map<string, Secret>();
  /** This node's workloads, from Felix's endpoint-status files, by file name (local workload peering). */
  readonly workloads = new Map<string, LocalWorkloadEndpoint>();
  /** tsbgp's own namespace, where secretKeyRefs point (secrets.ts secretNamespace()). */
  secretNamespace = 'kube-system';
  /** calico-node's `CALICO_ROUTER_ID` (config.ts routerIdSetting()): `hash`, an IPv4 address, or undefined for the node's IPv4 address. */
  routerIdSetting: string | undefined = undefined;
  /**
   * By owning service: the one slice most Services have, or a Map by slice
   * name for several (a Map per Service cost ~200 bytes each at 100,000
   * Services; docs/agent-memory.md).
   */
  private readonly slicesByService = new Map<string, EndpointSlice | Map<string, EndpointSlice>>();

  /** Applies one event; returns the previous version of the resource (if any). */
  apply(ev: ClusterEvent): Resource | undefined {
    if (ev.type === 'workload') {
      if (ev.endpoint) this.workloads.set(ev.file, ev.endpoint);
      else this.workloads.delete(ev.file);
      return undefined;
    }
    if (ev.type === 'delete') return this.remove(ev.kind, ev.name, ev.namespace);
    return this.put(ev.resource);
  }

  get(kind: ResourceKind, name: string, namespace?: string): Resource | undefined {
    const k = isNamespaced(kind) ? serviceKey(namespace ?? 'default', name) : name;
    return this.mapFor(kind).get(k);
  }

  /** The slices labelled with this service's name, in slice-name order. */
  slicesOf(namespace: string, name: string): EndpointSlice[] {
    const m = this.slicesByService.get(serviceKey(namespace, name));
    if (!m) return [];
    if (!(m instanceof Map)) return [m];
    return [...m.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Every resource, in a stable order (for snapshots and tests). */
  all(): Resource[] {
    const out: Resource[] = [];
    for (const m of [
      this.nodes,
      this.services,
      this.endpointSlices,
      this.bgpConfigurations,
      this.bgpPeers,
      this.ipPools,
      this.bgpFilters,
      this.blockAffinities,
      this.secrets,
    ]) {
      out.push(...(m as Map<string, Resource>).values());
    }
    return out.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  }

  private mapFor(kind: ResourceKind): Map<string, Resource> {
    switch (kind) {
      case 'Node':
        return this.nodes;
      case 'Service':
        return this.services;
      case 'EndpointSlice':
        return this.endpointSlices;
      case 'BGPConfiguration':
        return this.bgpConfigurations;
      case 'BGPPeer':
        return this.bgpPeers;
      case 'IPPool':
        return this.ipPools;
      case 'BGPFilter':
        return this.bgpFilters;
      case 'BlockAffinity':
        return this.blockAffinities;
      case 'Secret':
        return this.secrets;
    }
  }

  private put(r: Resource): Resource | undefined {
    const k = 'namespace' in r ? serviceKey(r.namespace, r.name) : r.name;
    const map = this.mapFor(r.kind);
    const prev = map.get(k);
    if (prev?.kind === 'EndpointSlice') this.unindex(prev);
    map.set(k, r);
    if (r.kind === 'EndpointSlice') this.index(r);
    return prev;
  }

  private remove(kind: ResourceKind, name: string, namespace?: string): Resource | undefined {
    const k = isNamespaced(kind) ? serviceKey(namespace ?? 'default', name) : name;
    const map = this.mapFor(kind);
    const prev = map.get(k);
    if (!prev) return undefined;
    map.delete(k);
    if (prev.kind === 'EndpointSlice') this.unindex(prev);
    return prev;
  }

  private index(s: EndpointSlice): void {
    if (!s.serviceName) return;
    const sk = serviceKey(s.namespace, s.serviceName);
    const m = this.slicesByService.get(sk);
    if (!m || (!(m instanceof Map) && m.name === s.name)) this.slicesByService.set(sk, s);
    else if (m instanceof Map) m.set(s.name, s);
    else
      this.slicesByService.set(
        sk,
        new Map([
          [m.name, m],
          [s.name, s],
        ]),
      );
  }

  private unindex(s: EndpointSlice): void {
    if (!s.serviceName) return;
    const sk = serviceKey(s.namespace, s.serviceName);
    const m = this.slicesByService.get(sk);
    if (!m) return;
    if (!(m instanceof Map)) {
      if (m.name === s.name) this.slicesByService.delete(sk);
      return;
    }
    m.delete(s.name);
    if (m.size === 1) this.slicesByService.set(sk, m.values().next().value!);
    else if (m.size === 0) this.slicesByService.delete(sk);
  }
}

/** Builds a state from a list of resources (as if each were added). */
export function stateOf(resources: Iterable<Resource>): ClusterState {
  const s = new ClusterState();
  for (const r of resources) s.apply({ type: 'add', resource: r });
  return s;
}

export { resourceKey };
