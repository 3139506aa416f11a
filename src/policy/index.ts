export type { PolicyRoute, RouteSource, PeerRef, PolicyContext, Direction, Verdict, EvalResult, Trace, PolicyTrace, StatementTrace, ConditionTrace } from './types.js';
export type * from './definitions.js';
export { compilePolicy, evaluate, explain, evaluateBatch, formatTrace, CompiledPolicies, type CompiledChain, type CompiledPolicy, type CompiledStatement } from './engine.js';
export { PolicyError, parseCommunity, formatCommunity, parseLargeCommunity, parseExtCommunity, WELL_KNOWN_COMMUNITIES } from './communities.js';
export { asPathText, asPathLength, originAs } from './sets.js';
export { prependAsPath } from './actions.js';
