import { type PathAttributes, formatCommunity, formatExtendedCommunity, formatLargeCommunity } from '../wire/index.js';
import { PolicyError } from './communities.js';
import type { Comparison, CompareOp, ConditionsDef, SetRef } from './definitions.js';
import { asPathLength, asPathText, type CompiledSets } from './sets.js';
import type { PolicyContext, PolicyRoute } from './types.js';

/** One compiled condition: a test for the hot path and a description for explain traces. */
export interface Condition {
  readonly name: string;
  readonly test: (route: PolicyRoute, attrs: PathAttributes, ctx: PolicyContext) => boolean;
  readonly describe: (route: PolicyRoute, attrs: PathAttributes, ctx: PolicyContext) => string;
}

const CONDITION_KEYS = new Set([
  'prefixSet',
  'family',
  'neighborSet',
  'peerType',
  'routeSource',
  'communitySet',
  'largeCommunitySet',
  'extCommunitySet',
  'asPathSet',
  'nextHopSet',
  'med',
  'localPref',
  'asPathLength',
  'interface',
]);

/** A glob (`*`, `?`) as an anchored regular expression; every other character is literal. */
export function globRegExp(glob: string): RegExp {
  const body = [...glob].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`);
}

const COMPARE: Record<CompareOp, (a: number, b: number) => boolean> = {
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => a < b,
  le: (a, b) => a <= b,
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
};

function setRef<M extends string>(
  where: string,
  ref: SetRef<M> | undefined,
  allowed: readonly M[],
  sets: Map<string, unknown>,
  kind: string,
): { set: string; match: M } {
  if (typeof ref !== 'object' || ref === null) throw new PolicyError(where, `must be { set: "<name>", match?: ${allowed.map((a) => `"${a}"`).join(' | ')} }`);
  if (typeof ref.set !== 'string') throw new PolicyError(`${where}.set`, 'must name a set');
  if (!sets.has(ref.set))
    throw new PolicyError(
      `${where}.set`,
      `unknown ${kind} set ${JSON.stringify(ref.set)}${sets.size ? ` (known: ${[...sets.keys()].join(', ')})` : ' (none defined)'}`,
    );
  const match = (ref.match ?? 'any') as M;
  if (!allowed.includes(match))
    throw new PolicyError(`${where}.match`, `must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got ${JSON.stringify(ref.match)}`);
  return { set: ref.set, match };
}

function comparison(where: string, c: Comparison | undefined): Comparison {
  if (typeof c !== 'object' || c === null || !(c.op in COMPARE)) throw new PolicyError(`${where}.op`, `must be one of eq, ne, lt, le, gt, ge`);
  if (!Number.isInteger(c.value) || c.value < 0 || c.value > 0xffffffff)
    throw new PolicyError(`${where}.value`, `must be an integer 0..4294967295, got ${JSON.stringify(c.value)}`);
  return c;
}

function oneOf<T extends string>(where: string, v: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(v as T)) throw new PolicyError(where, `must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

/** Turns the conditions of one statement into closures; `where` prefixes error messages. */
export function compileConditions(where: string, def: ConditionsDef | undefined, sets: CompiledSets): Condition[] {
  const out: Condition[] = [];
  if (def === undefined) return out;
  if (typeof def !== 'object' || def === null) throw new PolicyError(where, 'must be an object');
  for (const k of Object.keys(def))
    if (!CONDITION_KEYS.has(k)) throw new PolicyError(`${where}.${k}`, `unknown condition (known: ${[...CONDITION_KEYS].join(', ')})`);
  const w = (f: string) => `${where}.${f}`;

  if (def.prefixSet !== undefined) {
    const { set, match } = setRef(w('prefixSet'), def.prefixSet, ['any', 'invert'] as const, sets.prefix, 'prefix');
    const ps = sets.prefix.get(set)!;
    const inv = match === 'invert';
    out.push({
      name: `prefix ${inv ? 'not in' : 'in'} set "${set}"`,
      test: (r) => ps.matches(r.prefix) !== inv,
      describe: (r) => `${r.prefix.toString()} ${ps.matches(r.prefix) ? 'is' : 'is not'} in prefix set "${set}"`,
    });
  }
  if (def.family !== undefined) {
    const fam = oneOf(w('family'), def.family, ['ipv4', 'ipv6'] as const) === 'ipv4' ? 4 : 6;
    out.push({ name: `family ${def.family}`, test: (r) => r.prefix.family === fam, describe: (r) => `family is ipv${r.prefix.family}` });
  }
  if (def.neighborSet !== undefined) {
    const { set, match } = setRef(w('neighborSet'), def.neighborSet, ['any', 'invert'] as const, sets.neighbor, 'neighbor');
    const of = def.neighborSet.of === undefined ? 'peer' : oneOf(w('neighborSet.of'), def.neighborSet.of, ['peer', 'source'] as const);
    const ns = sets.neighbor.get(set)!;
    const inv = match === 'invert';
    const addr =
      of === 'peer' ? (_r: PolicyRoute, ctx: PolicyContext) => ctx.peer.address : (r: PolicyRoute) => (r.source.kind === 'peer' ? r.source.address : undefined);
    out.push({
      name: `${of === 'peer' ? 'neighbour' : 'source peer'} ${inv ? 'not in' : 'in'} set "${set}"`,
      test: (r, _a, ctx) => ns.has(addr(r, ctx)) !== inv,
      describe: (r, _a, ctx) =>
        `${of === 'peer' ? 'neighbour' : 'source peer'} ${addr(r, ctx)?.toString() ?? '(none: local route)'} ` +
        `${ns.has(addr(r, ctx)) ? 'is' : 'is not'} in neighbor set "${set}"`,
    });
  }
  if (def.peerType !== undefined) {
    const t = oneOf(w('peerType'), def.peerType, ['ebgp', 'ibgp'] as const);
    out.push({ name: `peer type ${t}`, test: (_r, _a, ctx) => ctx.peer.type === t, describe: (_r, _a, ctx) => `peer type is ${ctx.peer.type}` });
  }
  if (def.routeSource !== undefined) {
    const want = oneOf(w('routeSource'), def.routeSource, ['local', 'learned'] as const) === 'local' ? 'local' : 'peer';
    out.push({
      name: `route source ${def.routeSource}`,
      test: (r) => r.source.kind === want,
      describe: (r) => `route is ${r.source.kind === 'local' ? 'locally originated' : `learned from ${r.source.address.toString()}`}`,
    });
  }
  if (def.communitySet !== undefined) {
    const { set, match } = setRef(w('communitySet'), def.communitySet, ['any', 'all', 'invert'] as const, sets.community, 'community');
    const cs = sets.community.get(set)!;
    const test =
      match === 'all'
        ? (a: PathAttributes) => cs.all(a.communities)
        : match === 'any'
          ? (a: PathAttributes) => cs.any(a.communities)
          : (a: PathAttributes) => !cs.any(a.communities);
    out.push({
      name: `communities match ${match} of set "${set}"`,
      test: (_r, a) => test(a),
      describe: (_r, a) =>
        `communities [${(a.communities ?? []).map(formatCommunity).join(' ')}] ${test(a) ? 'match' : 'do not match'} ${match} of set "${set}"`,
    });
  }
  if (def.largeCommunitySet !== undefined) {
    const { set, match } = setRef(w('largeCommunitySet'), def.largeCommunitySet, ['any', 'all', 'invert'] as const, sets.largeCommunity, 'large community');
    const cs = sets.largeCommunity.get(set)!;
    const test =
      match === 'all'
        ? (a: PathAttributes) => cs.all(a.largeCommunities)
        : match === 'any'
          ? (a: PathAttributes) => cs.any(a.largeCommunities)
          : (a: PathAttributes) => !cs.any(a.largeCommunities);
    out.push({
      name: `large communities match ${match} of set "${set}"`,
      test: (_r, a) => test(a),
      describe: (_r, a) =>
        `large communities [${(a.largeCommunities ?? []).map(formatLargeCommunity).join(' ')}] ${test(a) ? 'match' : 'do not match'} ${match} of set "${set}"`,
    });
  }
  if (def.extCommunitySet !== undefined) {
    const { set, match } = setRef(w('extCommunitySet'), def.extCommunitySet, ['any', 'all', 'invert'] as const, sets.extCommunity, 'extended community');
    const cs = sets.extCommunity.get(set)!;
    const test =
      match === 'all'
        ? (a: PathAttributes) => cs.all(a.extendedCommunities)
        : match === 'any'
          ? (a: PathAttributes) => cs.any(a.extendedCommunities)
          : (a: PathAttributes) => !cs.any(a.extendedCommunities);
    out.push({
      name: `extended communities match ${match} of set "${set}"`,
      test: (_r, a) => test(a),
      describe: (_r, a) =>
        `extended communities [${(a.extendedCommunities ?? []).map(formatExtendedCommunity).join(' ')}] ` +
        `${test(a) ? 'match' : 'do not match'} ${match} of set "${set}"`,
    });
  }
  if (def.asPathSet !== undefined) {
    const { set, match } = setRef(w('asPathSet'), def.asPathSet, ['any', 'all', 'invert'] as const, sets.asPath, 'AS-path');
    const as = sets.asPath.get(set)!;
    const test =
      match === 'all'
        ? (a: PathAttributes) => as.all(a.asPath)
        : match === 'any'
          ? (a: PathAttributes) => as.any(a.asPath)
          : (a: PathAttributes) => !as.any(a.asPath);
    out.push({
      name: `AS path matches ${match} of set "${set}"`,
      test: (_r, a) => test(a),
      describe: (_r, a) => `AS path "${asPathText(a.asPath)}" ${test(a) ? 'matches' : 'does not match'} ${match} of set "${set}"`,
    });
  }
  if (def.nextHopSet !== undefined) {
    const { set, match } = setRef(w('nextHopSet'), def.nextHopSet, ['any', 'invert'] as const, sets.neighbor, 'neighbor');
    const ns = sets.neighbor.get(set)!;
    const inv = match === 'invert';
    const nh = (a: PathAttributes) => a.nextHop ?? a.mpReach?.nextHops[0];
    out.push({
      name: `next hop ${inv ? 'not in' : 'in'} set "${set}"`,
      test: (_r, a) => ns.has(nh(a)) !== inv,
      describe: (_r, a) => `next hop ${nh(a)?.toString() ?? '(none)'} ${ns.has(nh(a)) ? 'is' : 'is not'} in set "${set}"`,
    });
  }
  const numeric = (field: 'med' | 'localPref' | 'asPathLength', label: string, read: (a: PathAttributes) => number) => {
    const c = comparison(w(field), def[field]);
    const f = COMPARE[c.op];
    out.push({
      name: `${label} ${c.op} ${c.value}`,
      test: (_r, a) => f(read(a), c.value),
      describe: (_r, a) => `${label} is ${read(a)}, ${f(read(a), c.value) ? '' : 'not '}${c.op} ${c.value}`,
    });
  };
  if (def.med !== undefined) numeric('med', 'MED', (a) => a.med ?? 0);
  if (def.localPref !== undefined) numeric('localPref', 'LOCAL_PREF', (a) => a.localPref ?? 100);
  if (def.asPathLength !== undefined) numeric('asPathLength', 'AS path length', (a) => asPathLength(a.asPath));
  if (def.interface !== undefined) {
    if (typeof def.interface !== 'string' || def.interface === '')
      throw new PolicyError(w('interface'), `must be a non-empty interface name or glob, got ${JSON.stringify(def.interface)}`);
    const glob = def.interface;
    const re = globRegExp(glob);
    out.push({
      name: `interface ~ "${glob}"`,
      test: (r) => r.iface !== undefined && re.test(r.iface),
      describe: (r) =>
        r.iface === undefined
          ? `route has no interface, so it does not match "${glob}"`
          : `interface ${r.iface} ${re.test(r.iface) ? 'matches' : 'does not match'} "${glob}"`,
    });
  }
  return out;
}
