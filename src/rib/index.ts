/** The routing layer's public surface (for src/speaker/speaker.ts and src/index.ts). */
export { Rib, type RibOptions, type PeerConfig, type SessionInfo, type InRouteView, type ExportPreview } from './rib.js';
export { AttrSet, AttrStore, attrsEqual, hashAttrs } from './attr-store.js';
export { explainSelection, selectBest, type BestPathOptions, type CandidateOutcome, type MultipathOptions, type Selection } from './best-path.js';
export { exportAttrs, exportRefusal, type ExportSettings } from './export.js';
export { LOCAL_SOURCE, asPathLength, neighborAs, policyRoute, type Path, type PathSource, type PeerSource, type SessionLink } from './path.js';
export { keyOf, prefixFromKey, type PrefixKey } from './prefix-key.js';
export { endOfRib } from './eor.js';
export { DEFAULT_COALESCE, UpdateGroup, type Batch, type CoalesceOptions, type GroupPlan, type Send } from './update-group.js';
export {
  acceptAll,
  type ExportPolicy,
  type ImportPolicy,
  type Packer,
  type PeerRef,
  type PolicyContext,
  type PolicyEvaluator,
  type PolicyResult,
  type PolicyRoute,
  type RouteSource,
} from './ports.js';
export { policySource } from './path.js';
export { type Direction, type Verdict } from './ports.js';
