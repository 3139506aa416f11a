/**
 * tsbgp — a BGP-4 speaker in TypeScript.
 *
 * Public API only; everything else is internal.
 *
 * ```ts
 * import { BgpSpeaker } from 'tsbgp';
 * const s = new BgpSpeaker({ asn: 65001, routerId: '192.0.2.1', listen: { port: 179 } });
 * s.addPeer({ address: '192.0.2.2', asn: 65002 });
 * await s.start();
 * s.originate('203.0.113.0/24', { communities: ['65001:100'] });
 * ```
 */
export { Address, Prefix, ParseError, type Family } from './net/index.js';
export { BgpError, describeNotification } from './wire/index.js';
export type {
  Message,
  MessageKind,
  OpenMessage,
  OptionalParameter,
  AfiSafi,
  AddPathMode,
  Capability,
  AsPathSegment,
  Aggregator,
  LargeCommunity,
  RawAttribute,
  MpReach,
  MpUnreach,
  PathAttributes,
  AttributeIssue,
  UpdateMessage,
  NotificationMessage,
  KeepaliveMessage,
  RouteRefreshMessage,
} from './wire/index.js';
export { UnsupportedTransportError } from './session/index.js';
export { BgpSpeaker, PeerConfigError, RouteAttributeError } from './speaker/index.js';
export type {
  SpeakerScheduler,
  FamilyName,
  PeerState,
  SpeakerOptions,
  RouteAttributes,
  PeerOptions,
  PeerBfdOptions,
  PeerBfdStatus,
  MaxPrefixLimit,
  FamilyCounters,
  PeerStatus,
  AdvertisedRoute,
  ReceivedRoute,
  ImportedRoute,
  SpeakerEvents,
  SpeakerApi,
  SpeakerBfdApi,
  SpeakerPolicyApi,
  SpeakerReflectorApi,
  CandidateExplanation,
  PeerExplanation,
  RouteExplanation,
  SpeakerExplainApi,
} from './speaker/index.js';
export type { KernelOptions, KernelStaticRoute, KernelRouteView, SpeakerKernelApi } from './speaker/index.js';
export { PolicyError, formatTrace } from './policy/index.js';
export type {
  DefinedSetsDef,
  SetMatch,
  CompareOp,
  SetRef,
  Comparison,
  ConditionsDef,
  CommunityActionDef,
  ActionsDef,
  StatementDef,
  PolicyDef,
  PolicyConfigDef,
  ChainDef,
} from './policy/index.js';
export type { Trace, PolicyTrace, StatementTrace, ConditionTrace } from './policy/index.js';
export { KernelFib, KernelRules, type KernelFibOptions, type KernelStatus, type KernelRule } from './kernel/index.js';
export type { KernelRoute, NextHop, Refusal as KernelRefusal } from './kernel/index.js';
