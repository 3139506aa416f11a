/**
 * Calico BGPFilter rules (projectcalico.org/v3) compiled onto the policy
 * engine. Semantics (see docs): rule lists exportV4/importV4/exportV6/importV6;
 * filters in the peer's order, rules in list order, all fields of a rule
 * AND-ed, the first Accept/Reject decides. No match on import: accept. No
 * match on export: fall through to the built-in export policy, then reject.
 *
 * The types here are the rule shapes only (plain data); reading and validating
 * the Kubernetes resource is the kubernetes layer's job.
 */
import { Prefix } from '../net/index.js';
import { parseCommunityLiteral } from '../wire/index.js';
import { PolicyError } from './communities.js';
import type { ActionsDef, ChainDef, ConditionsDef, PolicyConfigDef, PolicyDef, StatementDef } from './definitions.js';

export type CalicoMatchOperator = 'Equal' | 'NotEqual' | 'In' | 'NotIn';

export interface CalicoFilterRule {
  readonly action: 'Accept' | 'Reject';
  readonly cidr?: string;
  readonly matchOperator?: CalicoMatchOperator;
  readonly prefixLength?: { readonly min?: number; readonly max?: number };
  readonly source?: 'RemotePeers';
  readonly interface?: string;
  readonly peerType?: 'eBGP' | 'iBGP';
  readonly communities?: { readonly values?: readonly string[] };
  readonly asPathPrefix?: readonly number[];
  readonly priority?: number;
  readonly operations?: readonly CalicoOperation[];
}

export interface CalicoOperation {
  readonly addCommunity?: { readonly value: string };
  readonly prependASPath?: { readonly prefix: readonly number[] };
  readonly setPriority?: { readonly value: number };
}

export interface CalicoFilterSpec {
  readonly exportV4?: readonly CalicoFilterRule[];
  readonly importV4?: readonly CalicoFilterRule[];
  readonly exportV6?: readonly CalicoFilterRule[];
  readonly importV6?: readonly CalicoFilterRule[];
}

export interface CompiledCalicoFilter {
  /** Sets and two policies, `<policyName(name,'import')>` and `<policyName(name,'export')>`, to merge into a config. */
  readonly config: PolicyConfigDef;
  /** Things accepted but without effect here (e.g. setPriority, a kernel-route property). */
  readonly warnings: string[];
}

export function calicoPolicyName(filter: string, direction: 'import' | 'export'): string {
  return `bgpfilter:${filter}:${direction}`;
}

/** The policy appended to Calico export chains: "then reject". */
const CALICO_EXPORT_REJECT = 'bgpfilter:default-export-reject';

const LISTS = [
  ['exportV4', 'export', 4],
  ['exportV6', 'export', 6],
  ['importV4', 'import', 4],
  ['importV6', 'import', 6],
] as const;

export function compileCalicoFilter(name: string, spec: CalicoFilterSpec): CompiledCalicoFilter {
  const sets = { prefix: {} as Record<string, string[]>, community: {} as Record<string, string[]>, largeCommunity: {} as Record<string, string[]>, asPath: {} as Record<string, string[]> };
  const warnings: string[] = [];
  const statements: Record<'import' | 'export', StatementDef[]> = { import: [], export: [] };
  for (const [list, direction, family] of LISTS) {
    const rules = spec[list];
    if (rules === undefined) continue;
    if (!Array.isArray(rules)) throw new PolicyError(`BGPFilter ${JSON.stringify(name)} ${list}`, 'must be a list of rules');
    rules.forEach((rule, i) => {
      const where = `BGPFilter ${JSON.stringify(name)} ${list}[${i}]`;
      const id = `bgpfilter:${name}:${list}:${i}`;
      statements[direction].push(compileRule(where, id, rule, family, sets, warnings));
    });
  }
  const policies: Record<string, PolicyDef> = {
    [calicoPolicyName(name, 'import')]: { statements: statements.import },
    [calicoPolicyName(name, 'export')]: { statements: statements.export },
  };
  return { config: { sets, policies }, warnings };
}

function compileRule(
  where: string,
  id: string,
  rule: CalicoFilterRule,
  family: 4 | 6,
  sets: { prefix: Record<string, string[]>; community: Record<string, string[]>; largeCommunity: Record<string, string[]>; asPath: Record<string, string[]> },
  warnings: string[],
): StatementDef {
  if (typeof rule !== 'object' || rule === null) throw new PolicyError(where, 'must be an object');
  const conditions: { -readonly [K in keyof ConditionsDef]: ConditionsDef[K] } = { family: family === 4 ? 'ipv4' : 'ipv6' };
  if (rule.action !== 'Accept' && rule.action !== 'Reject') throw new PolicyError(`${where}.action`, `must be "Accept" or "Reject", got ${JSON.stringify(rule.action)}`);
  if ((rule.cidr === undefined) !== (rule.matchOperator === undefined)) throw new PolicyError(where, 'cidr and matchOperator must be given together');
  if (rule.prefixLength !== undefined && rule.cidr === undefined) throw new PolicyError(`${where}.prefixLength`, 'needs cidr');
  if (rule.cidr !== undefined) {
    let cidr: Prefix;
    try {
      cidr = Prefix.parse(rule.cidr);
    } catch (err) {
      throw new PolicyError(`${where}.cidr`, (err as Error).message);
    }
    if (cidr.family !== family) throw new PolicyError(`${where}.cidr`, `${rule.cidr} is not an IPv${family} prefix`);
    const op = rule.matchOperator!;
    if (!['Equal', 'NotEqual', 'In', 'NotIn'].includes(op)) throw new PolicyError(`${where}.matchOperator`, `must be Equal, NotEqual, In or NotIn, got ${JSON.stringify(op)}`);
    let entries: string[];
    if (op === 'Equal' || op === 'NotEqual') {
      if (rule.prefixLength !== undefined) throw new PolicyError(`${where}.prefixLength`, `applies to matchOperator In or NotIn, not ${op}`);
      entries = [cidr.toString()];
    } else {
      const pl = rule.prefixLength ?? {};
      for (const k of ['min', 'max'] as const) {
        const v = pl[k];
        if (v !== undefined && (!Number.isInteger(v) || v < 0 || v > cidr.maxLength)) throw new PolicyError(`${where}.prefixLength.${k}`, `must be 0..${cidr.maxLength}, got ${JSON.stringify(v)}`);
      }
      const lo = Math.max(cidr.length, pl.min ?? cidr.length);
      const hi = Math.min(cidr.maxLength, pl.max ?? cidr.maxLength);
      // An empty length window matches nothing: an empty set.
      entries = lo <= hi ? [`${cidr.toString()}{${lo},${hi}}`] : [];
    }
    sets.prefix[id] = entries;
    conditions.prefixSet = { set: id, match: op === 'Equal' || op === 'In' ? 'any' : 'invert' };
  }
  if (rule.source !== undefined) {
    if (rule.source !== 'RemotePeers') throw new PolicyError(`${where}.source`, `must be "RemotePeers", got ${JSON.stringify(rule.source)}`);
    conditions.routeSource = 'learned';
  }
  if (rule.interface !== undefined) throw new PolicyError(`${where}.interface`, 'matching on the route interface is not supported (tsbgp policies see BGP routes, not kernel routes)');
  if (rule.priority !== undefined) throw new PolicyError(`${where}.priority`, 'matching on the kernel route priority is not supported');
  if (rule.peerType !== undefined) {
    if (rule.peerType !== 'eBGP' && rule.peerType !== 'iBGP') throw new PolicyError(`${where}.peerType`, `must be "eBGP" or "iBGP", got ${JSON.stringify(rule.peerType)}`);
    conditions.peerType = rule.peerType === 'eBGP' ? 'ebgp' : 'ibgp';
  }
  if (rule.communities !== undefined) {
    const values = rule.communities.values ?? [];
    if (!Array.isArray(values) || values.length !== 1) throw new PolicyError(`${where}.communities.values`, 'must hold exactly one community');
    const v = values[0];
    if (typeof v === 'string' && isLarge(v, `${where}.communities.values[0]`)) {
      sets.largeCommunity[id] = [v];
      conditions.largeCommunitySet = { set: id };
    } else {
      sets.community[id] = [String(v)];
      conditions.communitySet = { set: id };
    }
  }
  if (rule.asPathPrefix !== undefined) {
    if (!Array.isArray(rule.asPathPrefix) || rule.asPathPrefix.length === 0) throw new PolicyError(`${where}.asPathPrefix`, 'must be a non-empty list of AS numbers');
    sets.asPath[id] = [`starts-with ${rule.asPathPrefix.join(' ')}`];
    conditions.asPathSet = { set: id };
  }
  const actions: { -readonly [K in keyof ActionsDef]: ActionsDef[K] } = { result: rule.action === 'Accept' ? 'accept' : 'reject' };
  if (rule.operations !== undefined) {
    if (rule.action !== 'Accept') throw new PolicyError(`${where}.operations`, 'only Accept rules may have operations');
    const add: string[] = [];
    const addLarge: string[] = [];
    const prepend: number[] = [];
    rule.operations.forEach((op, j) => {
      const ow = `${where}.operations[${j}]`;
      const kinds = Object.keys(op);
      if (kinds.length !== 1) throw new PolicyError(ow, 'must hold exactly one of addCommunity, prependASPath, setPriority');
      if (op.addCommunity) (isLarge(op.addCommunity.value, `${ow}.addCommunity.value`) ? addLarge : add).push(op.addCommunity.value);
      else if (op.prependASPath) {
        if (!Array.isArray(op.prependASPath.prefix) || op.prependASPath.prefix.length === 0) throw new PolicyError(`${ow}.prependASPath.prefix`, 'must be a non-empty list of AS numbers');
        // Later prepends go in front of earlier ones.
        prepend.unshift(...op.prependASPath.prefix);
      } else if (op.setPriority) warnings.push(`${ow}: setPriority sets a kernel route priority and has no effect on BGP attributes`);
      else throw new PolicyError(ow, `unknown operation ${JSON.stringify(kinds[0])}`);
    });
    if (add.length) actions.community = { add };
    if (addLarge.length) actions.largeCommunity = { add: addLarge };
    if (prepend.length) actions.asPathPrepend = { asns: prepend };
  }
  return { name: id, conditions, actions };
}

/** Whether a Calico community literal is a large one, as the one community parser reads it (a name without a colon: not). */
function isLarge(text: string, where: string): boolean {
  try {
    return parseCommunityLiteral(text)?.type === 'large';
  } catch (e) {
    throw new PolicyError(where, (e as Error).message);
  }
}

/** Merges compiled filters (and any other policies, e.g. the built-in export) into one config. */
export function mergeConfigs(...configs: PolicyConfigDef[]): PolicyConfigDef {
  const sets: Record<string, Record<string, readonly string[]>> = {};
  const policies: Record<string, PolicyDef> = {};
  for (const c of configs) {
    for (const [kind, byName] of Object.entries(c.sets ?? {})) Object.assign((sets[kind] ??= {}), byName);
    Object.assign(policies, c.policies);
  }
  policies[CALICO_EXPORT_REJECT] = { statements: [{ name: 'then reject', actions: { result: 'reject' } }] };
  return { sets, policies };
}

/**
 * A peer's chain: its filters in order; for export then the built-in export
 * policies, then reject. Import falls through to the engine's accept.
 */
export function calicoChain(filters: readonly string[], direction: 'import' | 'export', builtInExport: readonly string[] = []): ChainDef {
  const own = filters.map((f) => calicoPolicyName(f, direction));
  if (direction === 'import') return { direction, policies: own };
  return { direction, policies: [...own, ...builtInExport, CALICO_EXPORT_REJECT], localDefault: 'reject' };
}
