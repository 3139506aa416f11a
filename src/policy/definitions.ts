/**
 * Plain-data policy definitions (what a config file or a planner produces).
 * `compilePolicy` validates them and turns them into matchers once.
 */

export interface DefinedSetsDef {
  /** Prefix ranges: "10.0.0.0/8", "10.0.0.0/8{16,24}", "10.0.0.0/8 le 24", "10.0.0.0/8 16..24". */
  readonly prefix?: Readonly<Record<string, readonly string[]>>;
  /** "65000:100", well-known names ("no-export"), "65000:*", "*:100", "65000:100..200", "/regex over a:b/". */
  readonly community?: Readonly<Record<string, readonly string[]>>;
  /** "1:2:3", any part "*", or "/regex over g:l1:l2/". */
  readonly largeCommunity?: Readonly<Record<string, readonly string[]>>;
  /**
   * "rt:65000:100", "rt:192.0.2.1:7", "soo:65000:1", "lb:65000:125000" (link bandwidth,
   * bytes per second), "lb:65000:*" / "lb:*" (a link bandwidth of any value), or 16 hex
   * digits "0x0002fde800000064".
   */
  readonly extCommunity?: Readonly<Record<string, readonly string[]>>;
  /**
   * Regular expressions over the path as text ("65001 65002", sets as "{1 2}";
   * `_` matches a boundary), or simple forms: "starts-with 65001", "contains 65001 65002",
   * "ends-with 65003", "origin 65003", "length 0" (the empty path).
   */
  readonly asPath?: Readonly<Record<string, readonly string[]>>;
  /** Addresses or prefixes ("192.0.2.1", "10.0.0.0/8", "2001:db8::/32"). */
  readonly neighbor?: Readonly<Record<string, readonly string[]>>;
}

export type SetMatch = 'any' | 'all' | 'invert';
export type CompareOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

export interface SetRef<M extends string = SetMatch> {
  readonly set: string;
  /** Default "any". */
  readonly match?: M;
}

export interface Comparison {
  readonly op: CompareOp;
  readonly value: number;
}

export interface ConditionsDef {
  readonly prefixSet?: SetRef<'any' | 'invert'>;
  readonly family?: 'ipv4' | 'ipv6';
  /** Matches the policy's neighbour (ctx.peer), or with `of: 'source'` the peer the route was learned from. */
  readonly neighborSet?: SetRef<'any' | 'invert'> & { readonly of?: 'peer' | 'source' };
  readonly peerType?: 'ebgp' | 'ibgp';
  readonly routeSource?: 'local' | 'learned';
  readonly communitySet?: SetRef;
  readonly largeCommunitySet?: SetRef;
  readonly extCommunitySet?: SetRef;
  readonly asPathSet?: SetRef;
  /** Next hop in a neighbour (address/prefix) set. */
  readonly nextHopSet?: SetRef<'any' | 'invert'>;
  /** A missing MED reads as 0 (RFC 4271 §9.1.2.2). */
  readonly med?: Comparison;
  /** A missing LOCAL_PREF reads as 100, the common default. */
  readonly localPref?: Comparison;
  readonly asPathLength?: Comparison;
  /**
   * A glob (`*` any run of characters, `?` one) over the route's outgoing
   * interface (`PolicyRoute.iface`); a route without one never matches, as
   * BIRD's `defined(ifname) && ifname ~ "…"`.
   */
  readonly interface?: string;
}

export interface CommunityActionDef {
  /** Every route community matching one of these (community-set syntax) is removed. */
  readonly remove?: readonly string[];
  /** Appended when not already present. */
  readonly add?: readonly string[];
  /** Replaces the whole list (applied first). */
  readonly replace?: readonly string[];
}

export interface ActionsDef {
  /** What happens when the statement matches. Default "continue": the next statement, then the next policy. */
  readonly result?: 'accept' | 'reject' | 'continue' | 'next-policy';
  readonly community?: CommunityActionDef;
  readonly largeCommunity?: CommunityActionDef;
  /**
   * Extended communities in the text form of src/wire/communities.ts; `remove`
   * takes extended-community-set patterns ("lb:*"). A route carries one link
   * bandwidth: adding an "lb:…" value replaces any link bandwidth it had.
   */
  readonly extCommunity?: CommunityActionDef;
  readonly localPref?: number;
  /** An absolute value, or "+N" / "-N" relative to the current MED (clamped to 0..2^32-1). */
  readonly med?: number | string;
  /** "self", "unchanged" (keep), or an address. */
  readonly nextHop?: string;
  /**
   * Prepend `asn` ("self" = local AS, "last" = the leftmost AS in the path, or a number) `count` times,
   * or prepend the list `asns` as given (leftmost first, as Calico's prependASPath.prefix).
   */
  readonly asPathPrepend?: { readonly asn?: number | 'self' | 'last'; readonly count: number } | { readonly asns: readonly number[] };
}

export interface StatementDef {
  readonly name?: string;
  readonly conditions?: ConditionsDef;
  readonly actions?: ActionsDef;
}

export interface PolicyDef {
  readonly statements: readonly StatementDef[];
}

export interface PolicyConfigDef {
  readonly sets?: DefinedSetsDef;
  readonly policies: Readonly<Record<string, PolicyDef>>;
}

export interface ChainDef {
  readonly direction: 'import' | 'export';
  /** Policy names, evaluated in order. */
  readonly policies: readonly string[];
  /** Export only: the verdict for locally originated routes no policy decided. Default "accept". */
  readonly localDefault?: 'accept' | 'reject';
}
