import type { Address } from '../net/address.js';
import type { Prefix } from '../net/prefix.js';
import type { PathAttributes } from '../wire/types.js';

/** Where a route came from. */
export type RouteSource =
  | { readonly kind: 'local' }
  | { readonly kind: 'peer'; readonly address: Address; readonly asn: number; readonly type: 'ebgp' | 'ibgp'; readonly routerId?: string };

/** What a policy sees of one route. Policies never mutate it. */
export interface PolicyRoute {
  readonly prefix: Prefix;
  readonly attrs: PathAttributes;
  readonly source: RouteSource;
}

/** The neighbour a policy is applied for (the sender on import, the receiver on export). */
export interface PeerRef {
  readonly address: Address;
  readonly asn: number;
  readonly type: 'ebgp' | 'ibgp';
  readonly localAsn: number;
  /** Our address on this session, used by `nextHop: 'self'` when known. */
  readonly localAddress?: Address;
}

export type Direction = 'import' | 'export';

export interface PolicyContext {
  readonly peer: PeerRef;
  readonly direction: Direction;
}

export type Verdict = 'accept' | 'reject';

export interface EvalResult {
  readonly verdict: Verdict;
  /** The attributes after every modification (the input object when nothing changed). */
  readonly attrs: PathAttributes;
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
