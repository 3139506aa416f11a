/**
 * BGPFilters (projectcalico.org/v3) as speaker policy (pure): the one path
 * from the validated resource (resources.ts `BGPFilter`, checked once by
 * validate-calico.ts) to the policy engine's definitions, each peer's import
 * and export chains, and the verdict of a peer's export filters over one
 * route. The agent only hands the result to the speaker.
 *
 * Calico's semantics (confd/pkg/backends/calico/bgp_processor.go and the
 * BGPFilter template functions), which these follow:
 *
 * - A peer's chain for its family is its filters in `spec.filters` order,
 *   each one's rule list for that direction and family (`exportV4`,
 *   `importV6`, …), rules in list order, every field of a rule AND-ed, the
 *   first Accept or Reject deciding. A filter without rules for that list
 *   takes no part: an IPv6 peer of a filter with only V4 rules runs
 *   unfiltered for IPv6 (bgpfilter/v4_only, v6_only).
 * - No rule decides: import accepts; export falls through to Calico's
 *   built-in export policy, then rejects (the engine's defaults are that
 *   policy: the agent only originates what it accepts; learned routes stay
 *   off eBGP peers, RFC 8212).
 * - A filter the peer names that does not exist (deleted, never created)
 *   is skipped: the peer runs without it (bgpfilter/filter_deletion). tsbgp
 *   says so as a warning (status, log, a `FilterMissing` Event).
 * - Mesh peers get no BGPFilters (bgpfilter/node_mesh).
 * - `priority` and `setPriority` are Calico's route priority, carried as
 *   LOCAL_PREF = 2147483647 − priority (src/kernel/metric.ts): the agent's
 *   own routes carry the normal route priority's, a learned route its own
 *   (BIRD's 100 when it came without one), and an imported route's
 *   LOCAL_PREF becomes its kernel metric.
 * - `interface` is a glob over the interface the route goes out of (BIRD's
 *   `ifname`). Routes the node originates (block blackholes, service
 *   statics) have none, as in Calico; a route learned from the kernel has
 *   its device; a route learned over BGP has the session's interface when
 *   its next hop is on the network connected there (src/speaker
 *   session-link.ts), else, with kernel programming on, the interface the
 *   kernel's routes (connected networks, others' routes such as Felix's to
 *   workloads) send the next hop out of, as BIRD's `gateway recursive`
 *   resolves it (src/kernel/iface-of.ts). Without kernel programming such a
 *   route has none: a warning names each `interface` rule of a filter used
 *   by a peer that can send such routes (iBGP, or eBGP more than one hop
 *   away).
 */
import { BIRD_INT_MAX, localPrefForMetric } from '../kernel/index.js';
import type { Prefix } from '../net/index.js';
import {
  compilePolicy,
  explain,
  type ActionsDef,
  type CompiledPolicies,
  type ConditionsDef,
  type PolicyConfigDef,
  type PolicyDef,
  type StatementDef,
} from '../policy/index.js';
import { formatCommunity, formatLargeCommunity, parseCommunityLiteral, type LargeCommunity } from '../wire/index.js';
import type { Plan, PlannedPeer } from './plan-types.js';
import type { BGPFilter, CommunityValue, FilterOperation, FilterRule } from './resources.js';

export type FilterList = 'exportV4' | 'importV4' | 'exportV6' | 'importV6';
export type FilterDirection = 'import' | 'export';

const FILTER_LISTS: readonly FilterList[] = ['exportV4', 'importV4', 'exportV6', 'importV6'];

function filterList(direction: FilterDirection, family: 4 | 6): FilterList {
  return `${direction}V${family}`;
}

function familyOf(list: FilterList): 4 | 6 {
  return list.endsWith('4') ? 4 : 6;
}

/** The speaker policy holding one filter's rule list. */
function filterPolicyName(filter: string, list: FilterList): string {
  return `bgpfilter:${filter}:${list}`;
}

/** The rule a compiled statement came from. */
export interface RuleRef {
  readonly filter: string;
  readonly list: FilterList;
  readonly index: number;
  readonly rule: FilterRule;
}

export interface CompiledFilters {
  /** Sets and policies to give the speaker (`definePolicies`): one policy per filter and non-empty rule list. */
  readonly config: PolicyConfigDef;
  /** The compiled form of `config`, for verdicts. */
  readonly compiled: CompiledPolicies;
  /** Statement name → the rule it was compiled from. */
  readonly rules: ReadonlyMap<string, RuleRef>;
  /**
   * Filters the policy engine refused, by name. Validation leaves none; this
   * guards a hand-built resource, so one filter never blocks the others.
   */
  readonly errors: ReadonlyMap<string, string>;
  /** Changes exactly when `config` does. */
  readonly key: string;
}

/** Calico's route priority as LOCAL_PREF (2147483647 − priority). */
export function localPrefForPriority(priority: number): number {
  return BIRD_INT_MAX - priority;
}

type Sets = {
  prefix: Record<string, string[]>;
  community: Record<string, string[]>;
  largeCommunity: Record<string, string[]>;
  asPath: Record<string, string[]>;
};

/** The prefix-length window of an In/NotIn rule, as Calico computes it: from max(cidr length, min) to min(family maximum, max). */
export function prefixWindow(rule: FilterRule): { min: number; max: number } | undefined {
  if (rule.cidr === undefined) return undefined;
  return { min: Math.max(rule.cidr.length, rule.prefixLength?.min ?? 0), max: Math.min(rule.cidr.maxLength, rule.prefixLength?.max ?? rule.cidr.maxLength) };
}

function communityText(c: CommunityValue): string {
  return c.type === 'large' ? formatLargeCommunity(c.value) : formatCommunity(c.value);
}

/** One rule as one statement. The rule is valid (validate-calico.ts), so this cannot fail. */
function compileRule(id: string, rule: FilterRule, family: 4 | 6, sets: Sets): StatementDef {
  const conditions: { -readonly [K in keyof ConditionsDef]: ConditionsDef[K] } = { family: family === 4 ? 'ipv4' : 'ipv6' };
  if (rule.cidr !== undefined && rule.matchOperator !== undefined) {
    const op = rule.matchOperator;
    if (op === 'Equal' || op === 'NotEqual') sets.prefix[id] = [rule.cidr.toString()];
    else {
      const w = prefixWindow(rule)!;
      // An empty window matches nothing: an empty set.
      sets.prefix[id] = w.min <= w.max ? [`${rule.cidr.toString()}{${w.min},${w.max}}`] : [];
    }
    conditions.prefixSet = { set: id, match: op === 'Equal' || op === 'In' ? 'any' : 'invert' };
  }
  if (rule.source === 'RemotePeers') conditions.routeSource = 'learned';
  if (rule.interface !== undefined) conditions.interface = rule.interface;
  if (rule.peerType !== undefined) conditions.peerType = rule.peerType === 'eBGP' ? 'ebgp' : 'ibgp';
  const match = rule.communities?.[0];
  if (match !== undefined) {
    if (match.type === 'large') {
      sets.largeCommunity[id] = [communityText(match)];
      conditions.largeCommunitySet = { set: id };
    } else {
      sets.community[id] = [communityText(match)];
      conditions.communitySet = { set: id };
    }
  }
  if (rule.asPathPrefix !== undefined && rule.asPathPrefix.length > 0) {
    sets.asPath[id] = [`starts-with ${rule.asPathPrefix.join(' ')}`];
    conditions.asPathSet = { set: id };
  }
  if (rule.priority !== undefined) conditions.localPref = { op: 'eq', value: localPrefForPriority(rule.priority) };
  return { name: id, conditions, actions: operations(rule) };
}

/** The rule's action with its operations, in order (a later prepend goes in front; the last setPriority wins). */
function operations(rule: FilterRule): ActionsDef {
  const actions: { -readonly [K in keyof ActionsDef]: ActionsDef[K] } = { result: rule.action === 'Accept' ? 'accept' : 'reject' };
  const add: string[] = [];
  const addLarge: string[] = [];
  const prepend: number[] = [];
  for (const op of rule.operations) {
    if ('addCommunity' in op) (op.addCommunity.type === 'large' ? addLarge : add).push(communityText(op.addCommunity));
    else if ('prependASPath' in op) prepend.unshift(...op.prependASPath.prefix);
    else actions.localPref = localPrefForPriority(op.setPriority);
  }
  if (add.length) actions.community = { add };
  if (addLarge.length) actions.largeCommunity = { add: addLarge };
  if (prepend.length) actions.asPathPrepend = { asns: prepend };
  return actions;
}

/** One filter's policies and sets; throws only for a resource validation would have refused. */
function compileOne(f: BGPFilter, rules: Map<string, RuleRef>): PolicyConfigDef {
  const sets: Sets = { prefix: {}, community: {}, largeCommunity: {}, asPath: {} };
  const policies: Record<string, PolicyDef> = {};
  for (const list of FILTER_LISTS) {
    if (f[list].length === 0) continue;
    policies[filterPolicyName(f.name, list)] = {
      statements: f[list].map((rule, index) => {
        const id = `${filterPolicyName(f.name, list)}:${index}`;
        rules.set(id, { filter: f.name, list, index, rule });
        return compileRule(id, rule, familyOf(list), sets);
      }),
    };
  }
  const config = { sets, policies };
  compilePolicy(config);
  return config;
}

/** Every filter compiled into one policy configuration. */
export function compileFilters(filters: readonly BGPFilter[]): CompiledFilters {
  const sets: Record<string, Record<string, readonly string[]>> = {};
  const policies: Record<string, PolicyDef> = {};
  const rules = new Map<string, RuleRef>();
  const errors = new Map<string, string>();
  for (const f of filters) {
    const mine = new Map<string, RuleRef>();
    try {
      const c = compileOne(f, mine);
      for (const [kind, byName] of Object.entries(c.sets ?? {})) Object.assign((sets[kind] ??= {}), byName);
      Object.assign(policies, c.policies);
      for (const [k, v] of mine) rules.set(k, v);
    } catch (e) {
      errors.set(f.name, (e as Error).message);
    }
  }
  const config: PolicyConfigDef = { sets, policies };
  return { config, compiled: compilePolicy(config), rules, errors, key: JSON.stringify(config) };
}

const cache = new WeakMap<readonly BGPFilter[], CompiledFilters>();

/** The plan's BGPFilters compiled; memoised per `plan.filters` array. */
export function planFilters(plan: Plan): CompiledFilters {
  let hit = cache.get(plan.filters);
  if (!hit) {
    hit = compileFilters(plan.filters);
    cache.set(plan.filters, hit);
  }
  return hit;
}

/** Why a filter the peer names takes no part in one of its chains. */
export type SkipReason = 'not found' | 'no rules';

export interface PeerChain {
  readonly direction: FilterDirection;
  readonly list: FilterList;
  /** The filters that act, in the peer's order, each with its rules for `list`. */
  readonly filters: readonly { readonly name: string; readonly rules: readonly FilterRule[] }[];
  /** Speaker policy names, in order. */
  readonly policies: readonly string[];
  /** Filters the peer names that take no part here. */
  readonly skipped: readonly { readonly name: string; readonly reason: SkipReason }[];
}

/**
 * A peer's chain for one direction and its address family. `filters`: the
 * plan's (the BGPFilters that exist and that some peer names).
 */
export function peerChain(peer: PlannedPeer, direction: FilterDirection, filters: readonly BGPFilter[]): PeerChain {
  const list = filterList(direction, peer.address.family);
  const acting: { name: string; rules: readonly FilterRule[] }[] = [];
  const skipped: { name: string; reason: SkipReason }[] = [];
  for (const name of peer.filters) {
    const f = filters.find((x) => x.name === name);
    if (!f) skipped.push({ name, reason: 'not found' });
    else if (f[list].length === 0) skipped.push({ name, reason: 'no rules' });
    else acting.push({ name, rules: f[list] });
  }
  return { direction, list, filters: acting, policies: acting.map((f) => filterPolicyName(f.name, list)), skipped };
}

/** A BGPFilter condition the plan reports without refusing anything. */
export interface FilterWarning {
  readonly kind: 'BGPPeer' | 'Node' | 'BGPFilter';
  readonly name: string;
  readonly field: string;
  readonly message: string;
  /** Set for a peer running without a filter it names: its address and AS. */
  readonly peer?: { readonly address: string; readonly asn: number };
}

/**
 * What the plan's filters do differently from what was asked: a peer that
 * names a BGPFilter that does not exist (it runs without it, as Calico's
 * does), and `interface` rules of filters whose peers may send routes with
 * a next hop off the session's network (an interface only with kernel programming on). In a stable
 * order.
 */
export function filterWarnings(plan: Plan): FilterWarning[] {
  const out: FilterWarning[] = [];
  for (const p of plan.peers) {
    if (p.refused) continue;
    const missing = p.filters.filter((n) => !plan.filters.some((f) => f.name === n));
    if (missing.length === 0) continue;
    out.push({
      kind: p.from.kind,
      name: p.from.name,
      field: 'spec.filters',
      message:
        `peer ${p.address.toString()}: BGPFilter ${missing.join(', ')} not found (deleted, never created, or invalid); ` +
        "the peer runs without it, as Calico's does",
      peer: { address: p.address.toString(), asn: p.asn },
    });
  }
  // `interface` rules: tsbgp knows a route's interface when it came from the kernel (its device) or over BGP with a
  // next hop on the session's network; a peer that passes on other routers' next hops may send it routes without one.
  for (const f of plan.filters) {
    const offLink = plan.peers
      .filter((p) => !p.refused && p.filters.includes(f.name))
      .map(offLinkNextHops)
      .find((why) => why !== undefined);
    if (offLink === undefined) continue;
    for (const list of FILTER_LISTS)
      f[list].forEach((r, i) => {
        if (r.interface === undefined) return;
        out.push({
          kind: 'BGPFilter',
          name: f.name,
          field: `spec.${list}[${i}].interface`,
          message:
            `${offLink}: a route whose next hop is not on that session's network gets its interface from the kernel's routes ` +
            "(as Calico's BIRD resolves it) only with kernel programming on (`tsbgp agent --kernel on`); without it, " +
            'or with no route to the next hop, this rule does not match it',
        });
      });
  }
  return out;
}

/**
 * Why a peer may send routes whose next hop is off the session's network
 * (so tsbgp cannot give them an interface), or undefined: an eBGP peer one
 * hop away sends its own address or one on its network (RFC 4271 5.1.3).
 */
function offLinkNextHops(p: PlannedPeer): string | undefined {
  if (p.asn === p.localAsn) return `peer ${p.address.toString()} is iBGP and passes on other routers' next hops`;
  if ((p.ttlSecurity ?? 0) > 1) return `peer ${p.address.toString()} is up to ${p.ttlSecurity} hops away`;
  return undefined;
}

/** Where a rule is, in words: `BGPFilter no-customer exportV4[0]`. */
function ruleRefText(r: Pick<RuleRef, 'filter' | 'list' | 'index'>): string {
  return `BGPFilter ${r.filter} ${r.list}[${r.index}]`;
}

export interface FilterVerdict {
  /** `none`: no rule decided (the built-in export applies). */
  readonly verdict: 'accept' | 'reject' | 'none';
  /**
   * Set when a rule accepted: the route goes without its prefixAdvertisements
   * communities (BIRD's `accept` ends the export filter before Calico adds them).
   */
  readonly withoutPrefixCommunities?: true;
  /** e.g. `BGPFilter no-customer exportV4[0] rejects`. */
  readonly reason: string;
}

/** The communities among `texts` (Calico literals; anything else skipped), split into standard and large. */
function literals(texts: readonly string[]): { communities: number[]; largeCommunities: LargeCommunity[] } {
  const communities: number[] = [];
  const largeCommunities: LargeCommunity[] = [];
  for (const t of texts) {
    try {
      const c = parseCommunityLiteral(t);
      if (c?.type === 'standard') communities.push(c.value);
      else if (c?.type === 'large') largeCommunities.push(c.value);
    } catch {
      // not a community literal
    }
  }
  return { communities, largeCommunities };
}

/**
 * The peer's export filters over one route the node originates, with the
 * attributes its export policy sees: `communities` are those the route
 * carries into the policy (a Service's own), never its prefixAdvertisements
 * communities, which the agent adds after the policy as Calico's BIRD adds
 * them after the BGPFilter functions (`RouteAttributes.exportCommunities`),
 * so no rule matches them; LOCAL_PREF from the normal route priority when
 * the plan has one. A route a rule accepts goes without them (BIRD's
 * `accept` ends the filter): `withoutPrefixCommunities`; and, for a route learned
 * from the kernel, its device (`iface`, for `interface` rules).
 */
export function exportFilterVerdict(plan: Plan, peer: PlannedPeer, prefix: Prefix, communities: readonly string[] = [], iface?: string): FilterVerdict {
  if (peer.filters.length === 0) return { verdict: 'none', reason: 'no BGPFilters' };
  const cf = planFilters(plan);
  const bad = peer.filters.filter((f) => cf.errors.has(f));
  if (bad.length > 0) return { verdict: 'reject', reason: `BGPFilter ${bad.join(', ')} does not compile: peer not started` };
  const pc = peerChain(peer, 'export', plan.filters);
  if (pc.policies.length === 0) return { verdict: 'none', reason: `BGPFilter ${peer.filters.join(', ')}: no ${pc.list} rules` };
  const chain = cf.compiled.chain({ direction: 'export', policies: pc.policies }, `peer ${peer.id} export`);
  const nrp = plan.kernel?.normalRoutePriority;
  const localPref = nrp !== undefined ? localPrefForMetric(prefix.family === 4 ? nrp.v4 : nrp.v6) : undefined;
  const attrs = { origin: 0 as const, asPath: [], ...literals(communities), ...(localPref !== undefined ? { localPref } : {}) };
  const ctx = {
    peer: { address: peer.address, asn: peer.asn, type: peer.asn === peer.localAsn ? ('ibgp' as const) : ('ebgp' as const), localAsn: peer.localAsn },
    direction: 'export' as const,
  };
  const r = explain(chain, { prefix, attrs, source: { kind: 'local' }, ...(iface !== undefined ? { iface } : {}) }, ctx);
  for (const p of r.trace.policies)
    for (const s of p.statements)
      if (s.matched && (s.result === 'accept' || s.result === 'reject')) {
        const ref = cf.rules.get(s.statement);
        const where = ref ? ruleRefText(ref) : `policy ${p.policy} statement ${s.statement}`;
        if (s.result === 'reject') return { verdict: 'reject', reason: `${where} rejects` };
        return { verdict: 'accept', reason: `${where} accepts`, withoutPrefixCommunities: true };
      }
  return { verdict: 'none', reason: `no rule of BGPFilter ${pc.filters.map((f) => f.name).join(', ')} matches` };
}

// ---------- the chains as JSON (`tsbgp plan --json` importChain/exportChain) ----------

export type FilterOperationJson =
  { readonly addCommunity: string } | { readonly prependASPath: readonly number[] } | { readonly setPriority: number; readonly localPref: number };

/** A rule as written, with the prefix-length window it matches and priorities with their LOCAL_PREF. */
export interface FilterRuleJson {
  readonly index: number;
  readonly action: 'Accept' | 'Reject';
  readonly cidr?: string;
  readonly matchOperator?: string;
  /** In/NotIn: the prefix lengths matched (Calico's defaults filled in). */
  readonly prefixLength?: { readonly min: number; readonly max: number };
  readonly source?: 'RemotePeers';
  readonly interface?: string;
  readonly peerType?: 'eBGP' | 'iBGP';
  readonly communities?: readonly string[];
  readonly asPathPrefix?: readonly number[];
  readonly priority?: { readonly value: number; readonly localPref: number };
  readonly operations: readonly FilterOperationJson[];
}

export interface FilterChainJson {
  /** The filters that act, in order, each with its rule list for the peer's family. */
  readonly filters: readonly { readonly name: string; readonly list: FilterList; readonly rules: readonly FilterRuleJson[] }[];
  /** Filters the peer names that take no part: `not found` (runs without it) or `no rules` for this direction and family. */
  readonly skipped: readonly { readonly name: string; readonly reason: SkipReason }[];
  /** When no rule decides: `accept` (import) or `builtin` (export: Calico's built-in export policy, then reject). */
  readonly otherwise: 'accept' | 'builtin';
}

function operationJson(op: FilterOperation): FilterOperationJson {
  if ('addCommunity' in op) return { addCommunity: communityText(op.addCommunity) };
  if ('prependASPath' in op) return { prependASPath: [...op.prependASPath.prefix] };
  return { setPriority: op.setPriority, localPref: localPrefForPriority(op.setPriority) };
}

export function filterRuleJson(rule: FilterRule, index: number): FilterRuleJson {
  const inOp = rule.matchOperator === 'In' || rule.matchOperator === 'NotIn';
  return {
    index,
    action: rule.action,
    ...(rule.cidr !== undefined ? { cidr: rule.cidr.toString(), matchOperator: rule.matchOperator } : {}),
    ...(inOp ? { prefixLength: prefixWindow(rule) } : {}),
    ...(rule.source !== undefined ? { source: rule.source } : {}),
    ...(rule.interface !== undefined ? { interface: rule.interface } : {}),
    ...(rule.peerType !== undefined ? { peerType: rule.peerType } : {}),
    ...(rule.communities !== undefined ? { communities: rule.communities.map(communityText) } : {}),
    ...(rule.asPathPrefix !== undefined ? { asPathPrefix: [...rule.asPathPrefix] } : {}),
    ...(rule.priority !== undefined ? { priority: { value: rule.priority, localPref: localPrefForPriority(rule.priority) } } : {}),
    operations: rule.operations.map(operationJson),
  };
}

export function filterChainJson(peer: PlannedPeer, direction: FilterDirection, filters: readonly BGPFilter[]): FilterChainJson {
  const pc = peerChain(peer, direction, filters);
  return {
    filters: pc.filters.map((f) => ({ name: f.name, list: pc.list, rules: f.rules.map(filterRuleJson) })),
    skipped: pc.skipped,
    otherwise: direction === 'import' ? 'accept' : 'builtin',
  };
}
