import type { Direction, PolicyResult, Verdict } from '../rib/index.js';

/** The route, neighbour and context a policy sees, shared with the RIB (defined in src/rib/ports.ts). */
export type { Direction, PeerRef, PolicyContext, PolicyRoute, RouteSource, Verdict } from '../rib/index.js';

/** A PolicyResult (verdict, attributes after every modification) with what explain and next-hop handling need. */
export interface EvalResult extends PolicyResult {
  /**
   * Set when a matched statement said `nextHop: 'self'` or `'unchanged'`. For
   * 'self' the attrs already carry ctx.peer.localAddress when it was given;
   * otherwise the caller puts its own address. 'unchanged' asks the caller not
   * to rewrite the next hop as it would by default (e.g. toward eBGP).
   */
  readonly nextHopDirective?: 'self' | 'unchanged';
  readonly trace?: Trace;
}

/** One condition's outcome, with the values it looked at. */
export interface ConditionTrace {
  readonly condition: string;
  readonly matched: boolean;
  readonly detail: string;
}

export interface StatementTrace {
  readonly statement: string;
  readonly matched: boolean;
  readonly conditions: ConditionTrace[];
  /** Human-readable modifications applied (only when matched). */
  readonly modifications: string[];
  /** The statement's result when it matched. */
  readonly result?: 'accept' | 'reject' | 'continue' | 'next-policy';
}

export interface PolicyTrace {
  readonly policy: string;
  readonly statements: StatementTrace[];
}

export interface Trace {
  readonly direction: Direction;
  readonly prefix: string;
  readonly policies: PolicyTrace[];
  verdict: Verdict;
  /** Why: the statement that decided, or which default applied (e.g. "RFC 8212 default reject"). */
  reason: string;
}
