export * from './resources.js';
export * from './selector.js';
export * from './validate.js';
export * from './manifests.js';
export * from './state.js';
export * from './config.js';
export * from './plan-types.js';
export { plan, planGlobal } from './plan.js';
export { planService, type ServiceContribution, type ServiceContext } from './services.js';
export { planPeers } from './peers.js';
export { Planner, diffPlans, newlyRefused } from './planner.js';
export {
  builtinExport,
  kernelExport,
  kernelExports,
  learnedJson,
  plannedRoute,
  type ExportVerdict,
  type KernelExport,
  type LearnedJson,
  type LearnedRoute,
  type LearnedVerdict,
} from './export.js';
export {
  exportFilterVerdict,
  filterChainJson,
  filterWarnings,
  peerChain,
  planFilters,
  type FilterChainJson,
  type FilterVerdict,
  type FilterWarning,
} from './filters.js';
export { closest } from './schema.js';
export { DEFAULT_BACKOFF, KnownObjects, backoffDelay, type BackoffOptions, type KnownStep } from './api-known.js';
export { EventDeduper, eventObject, eventsFromPlan, newlyDesired, type DeduperOptions, type DesiredEvent, type EventAction, type EventSink } from './events.js';
export { NO_LEARNING, type KernelPlan } from './kernel.js';
export { KINDS } from './schema.js';
export { secretNamespace } from './secrets.js';
export { parseEndpointStatus, peerAddress, workloadsOf, EndpointStatusError, type LocalWorkloadEndpoint } from './workloads.js';
export {
  perFamily,
  peerKey,
  peerOptions,
  plannedPeerKey,
  reconcile,
  routeAttributes,
  runnablePeers,
  type Operations,
  type PeerOp,
  type PeerRefusal,
  type ReconcileOptions,
  type RouteOp,
} from './reconcile.js';
export {
  desiredRedistribution,
  isLocalPeer,
  localPeers,
  redistributedAttributes,
  redistributedIface,
  redistributedOptions,
  redistributionOps,
  type Redistributed,
} from './redistribute.js';
export { SERVICE_POLICY, servicePolicy, withServicePolicy, type ServicePolicy } from './service-policy.js';
