export type {
  PolicyRoute,
  RouteSource,
  PeerRef,
  PolicyContext,
  Direction,
  Verdict,
  EvalResult,
  Trace,
  PolicyTrace,
  StatementTrace,
  ConditionTrace,
} from './types.js';
export type * from './definitions.js';
export {
  compilePolicy,
  evaluate,
  explain,
  evaluateBatch,
  formatTrace,
  CompiledPolicies,
  type CompiledChain,
  type CompiledPolicy,
  type CompiledStatement,
} from './engine.js';
export { PolicyError } from './communities.js';
export { asPathText, asPathLength, originAs } from './sets.js';
