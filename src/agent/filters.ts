/**
 * Calico BGPFilters for the agent (pure): the plan's BGPFilter resources
 * compiled onto the policy engine (src/policy/calico-filter.ts), the policy
 * names a peer's chains use, and the filter verdict for one prefix toward
 * one peer (for `routes`/`plan` exports and `explain`).
 *
 * A peer's export chain is its filters' export policies in BGPFilter order;
 * when no rule decides, the engine's defaults apply, which are the speaker's
 * behaviour without filters: what the agent originates goes out (it only
 * originates what Calico's built-in export accepts), learned routes do not
 * go to eBGP peers (RFC 8212). That is Calico's "filters, then the built-in
 * export, then reject". Import chains are the filters' import policies,
 * falling through to accept.
 */
import type { BGPFilter, CommunityValue, FilterRule, Plan, PlannedPeer } from '../kubernetes/index.js';
import { parseCommunityLiteral, type LargeCommunity } from '../wire/index.js';
import {
  calicoPolicyName, compileCalicoFilter, compilePolicy, explain,
  type CalicoFilterRule, type CalicoFilterSpec, type CompiledPolicies, type PolicyConfigDef, type PolicyDef,
} from '../policy/index.js';
import type { Prefix } from '../net/index.js';

export interface PlanFilters {
  /** Sets and policies to give the speaker (`definePolicies`). */
  readonly config: PolicyConfigDef;
  /** The compiled form of `config`, for verdicts. */
  readonly compiled: CompiledPolicies;
  /** Filters that did not compile, by name: peers naming them are not started. */
  readonly errors: ReadonlyMap<string, string>;
  /** Things accepted but without effect (e.g. setPriority). */
  readonly warnings: readonly string[];
  /** Changes exactly when `config` does. */
  readonly key: string;
}

function ruleSpec(r: FilterRule): CalicoFilterRule {
  const text = (c: CommunityValue) => c.text;
  return {
    action: r.action,
    ...(r.cidr !== undefined ? { cidr: r.cidr.toString() } : {}),
    ...(r.matchOperator !== undefined ? { matchOperator: r.matchOperator } : {}),
    ...(r.prefixLength !== undefined ? { prefixLength: r.prefixLength } : {}),
    ...(r.source !== undefined ? { source: r.source } : {}),
    ...(r.interface !== undefined ? { interface: r.interface } : {}),
    ...(r.peerType !== undefined ? { peerType: r.peerType } : {}),
    ...(r.communities !== undefined ? { communities: { values: r.communities.map(text) } } : {}),
    ...(r.asPathPrefix !== undefined ? { asPathPrefix: r.asPathPrefix } : {}),
    ...(r.priority !== undefined ? { priority: r.priority } : {}),
    ...(r.operations.length > 0
      ? {
          operations: r.operations.map((op) =>
            'addCommunity' in op ? { addCommunity: { value: op.addCommunity.text } } : 'prependASPath' in op ? { prependASPath: op.prependASPath } : { setPriority: { value: op.setPriority } },
          ),
        }
      : {}),
  };
}

/** The BGPFilter resource as the compiler's rule lists. */
export function filterSpec(f: BGPFilter): CalicoFilterSpec {
  return { exportV4: f.exportV4.map(ruleSpec), importV4: f.importV4.map(ruleSpec), exportV6: f.exportV6.map(ruleSpec), importV6: f.importV6.map(ruleSpec) };
}

const cache = new WeakMap<readonly BGPFilter[], PlanFilters>();

/** Compiles every BGPFilter the plan's peers name; memoised per plan.filters array. */
export function planFilters(plan: Plan): PlanFilters {
  const hit = cache.get(plan.filters);
  if (hit) return hit;
  const sets: Record<string, Record<string, readonly string[]>> = {};
  const policies: Record<string, PolicyDef> = {};
  const errors = new Map<string, string>();
  const warnings: string[] = [];
  for (const f of plan.filters) {
    try {
      const c = compileCalicoFilter(f.name, filterSpec(f));
      // Check it compiles on its own, so one bad filter never blocks the others.
      compilePolicy(c.config);
      for (const [kind, byName] of Object.entries(c.config.sets ?? {})) Object.assign((sets[kind] ??= {}), byName);
      Object.assign(policies, c.config.policies);
      warnings.push(...c.warnings);
    } catch (e) {
      errors.set(f.name, (e as Error).message);
    }
  }
  const config: PolicyConfigDef = { sets, policies };
  const out: PlanFilters = { config, compiled: compilePolicy(config), errors, warnings, key: JSON.stringify(config) };
  cache.set(plan.filters, out);
  return out;
}

export function exportPolicyNames(p: PlannedPeer): string[] {
  return p.filters.map((f) => calicoPolicyName(f, 'export'));
}

export function importPolicyNames(p: PlannedPeer): string[] {
  return p.filters.map((f) => calicoPolicyName(f, 'import'));
}

export interface FilterVerdict {
  /** `none`: no rule decided (the built-in export applies). */
  readonly verdict: 'accept' | 'reject' | 'none';
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

/** The peer's export filters over one locally originated route. */
export function exportFilterVerdict(plan: Plan, peer: PlannedPeer, prefix: Prefix, communities: readonly string[] = []): FilterVerdict {
  if (peer.filters.length === 0) return { verdict: 'none', reason: 'no BGPFilters' };
  const pf = planFilters(plan);
  const bad = peer.filters.filter((f) => pf.errors.has(f));
  if (bad.length > 0) return { verdict: 'reject', reason: `BGPFilter ${bad.join(', ')} does not compile: peer not started` };
  const chain = pf.compiled.chain({ direction: 'export', policies: exportPolicyNames(peer) }, `peer ${peer.id} export`);
  const route = { prefix, attrs: { origin: 0 as const, asPath: [], ...literals(communities) }, source: { kind: 'local' as const } };
  const ctx = { peer: { address: peer.address, asn: peer.asn, type: peer.asn === peer.localAsn ? ('ibgp' as const) : ('ebgp' as const), localAsn: peer.localAsn }, direction: 'export' as const };
  const r = explain(chain, route, ctx);
  for (const p of r.trace.policies)
    for (const s of p.statements)
      if (s.matched && (s.result === 'accept' || s.result === 'reject')) {
        // Statement names are `bgpfilter:<filter>:<list>:<index>`.
        const m = /^bgpfilter:(.*):(exportV4|exportV6):(\d+)$/.exec(s.statement);
        const where = m ? `BGPFilter ${m[1]} ${m[2]}[${m[3]}]` : `policy ${p.policy} statement ${s.statement}`;
        return { verdict: s.result, reason: `${where} ${s.result === 'accept' ? 'accepts' : 'rejects'}` };
      }
  return { verdict: 'none', reason: `no rule of BGPFilter ${peer.filters.join(', ')} matches` };
}
