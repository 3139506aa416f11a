import type { PathAttributes } from '../wire/index.js';
import { compileActions, type Modification, type ModState, type StatementResult } from './actions.js';
import { PolicyError } from './communities.js';
import { compileConditions, type Condition } from './conditions.js';
import type { ChainDef, PolicyConfigDef } from './definitions.js';
import { type CompiledSets, compileSets } from './sets.js';
import type { EvalResult, PolicyContext, PolicyRoute, PolicyTrace, StatementTrace, Trace, Verdict } from './types.js';

export interface CompiledStatement {
  readonly name: string;
  readonly conditions: readonly Condition[];
  readonly mods: readonly Modification[];
  readonly result: StatementResult;
  /**
   * Output attributes by input attributes object, when every modification
   * depends on the attributes alone (null otherwise). With interned
   * attributes a full table then copies once per attribute set, not per route.
   */
  readonly memo: WeakMap<PathAttributes, PathAttributes> | null;
}

export interface CompiledPolicy {
  readonly name: string;
  readonly statements: readonly CompiledStatement[];
}

export interface CompiledChain {
  readonly direction: 'import' | 'export';
  readonly policies: readonly CompiledPolicy[];
  readonly localDefault: Verdict;
}

/** Validated, compiled policy definitions; build chains from them by name. */
export class CompiledPolicies {
  constructor(
    readonly sets: CompiledSets,
    readonly policies: ReadonlyMap<string, CompiledPolicy>,
  ) {}

  /** A chain of named policies; throws PolicyError naming an unknown policy. */
  chain(def: ChainDef, where = 'chain'): CompiledChain {
    if (def.direction !== 'import' && def.direction !== 'export')
      throw new PolicyError(`${where}.direction`, `must be "import" or "export", got ${JSON.stringify(def.direction)}`);
    if (!Array.isArray(def.policies)) throw new PolicyError(`${where}.policies`, 'must be a list of policy names');
    const policies = def.policies.map((name, i) => {
      const p = this.policies.get(name);
      if (!p)
        throw new PolicyError(
          `${where}.policies[${i}]`,
          `unknown policy ${JSON.stringify(name)}${this.policies.size ? ` (known: ${[...this.policies.keys()].join(', ')})` : ''}`,
        );
      return p;
    });
    const localDefault = def.localDefault ?? 'accept';
    if (localDefault !== 'accept' && localDefault !== 'reject')
      throw new PolicyError(`${where}.localDefault`, `must be "accept" or "reject", got ${JSON.stringify(def.localDefault)}`);
    return { direction: def.direction, policies, localDefault };
  }
}

/** Validates plain-data definitions and compiles them once into closures and tables. */
export function compilePolicy(def: PolicyConfigDef): CompiledPolicies {
  if (typeof def !== 'object' || def === null) throw new PolicyError('policy config', 'must be an object with "policies" (and optional "sets")');
  const sets = compileSets(def.sets);
  const policies = new Map<string, CompiledPolicy>();
  if (typeof def.policies !== 'object' || def.policies === null || Array.isArray(def.policies))
    throw new PolicyError('policies', 'must be an object of policy name → { statements: [...] }');
  for (const [name, p] of Object.entries(def.policies)) {
    const pw = `policy ${JSON.stringify(name)}`;
    if (typeof p !== 'object' || p === null || !Array.isArray(p.statements)) throw new PolicyError(pw, 'must be { statements: [...] }');
    const statements = p.statements.map((s, i): CompiledStatement => {
      const sname = s?.name ?? String(i);
      const sw = `${pw} statement ${i}${s?.name ? ` (${JSON.stringify(s.name)})` : ''}`;
      if (typeof s !== 'object' || s === null) throw new PolicyError(sw, 'must be an object');
      for (const k of Object.keys(s))
        if (!['name', 'conditions', 'actions'].includes(k)) throw new PolicyError(`${sw}.${k}`, 'unknown field (known: name, conditions, actions)');
      const conditions = compileConditions(`${sw} conditions`, s.conditions, sets);
      const { result, mods } = compileActions(`${sw} actions`, s.actions);
      const memo = mods.length > 0 && mods.every((m) => m.attrsOnly === true) ? new WeakMap<PathAttributes, PathAttributes>() : null;
      return { name: sname, conditions, mods, result, memo };
    });
    policies.set(name, { name, statements });
  }
  return new CompiledPolicies(sets, policies);
}

// Verdicts without a next-hop directive are shared per (verdict, attributes
// object): a chain that only accepts or rejects allocates nothing per route.
// Only stable attributes (the input's, or a memoized output) are cached here.
// Per verdict, then by the chain's default (0) or a statement (1).
const acceptResults = [new WeakMap<PathAttributes, EvalResult>(), new WeakMap<PathAttributes, EvalResult>()] as const;
const rejectResults = [new WeakMap<PathAttributes, EvalResult>(), new WeakMap<PathAttributes, EvalResult>()] as const;

function sharedResult(verdict: Verdict, attrs: PathAttributes, decided: boolean): EvalResult {
  const cache = (verdict === 'accept' ? acceptResults : rejectResults)[decided ? 1 : 0];
  let r = cache.get(attrs);
  if (r === undefined) {
    r = Object.freeze(decided ? { verdict, attrs, decided: true as const } : { verdict, attrs });
    cache.set(attrs, r);
  }
  return r;
}

// A plain function rather than a closure made per evaluation: keeps the hot path allocation-light.
/** `decided`: a statement's accept or reject (PolicyResult.decided), not the chain's default. */
function finish(trace: Trace | null, st: ModState, attrs: PathAttributes, stable: boolean, verdict: Verdict, reason: string, decided = false): EvalResult {
  if (trace) {
    trace.verdict = verdict;
    trace.reason = reason;
  }
  if (st.nextHopDirective === undefined && trace === null)
    return stable ? sharedResult(verdict, attrs, decided) : decided ? { verdict, attrs, decided } : { verdict, attrs };
  const r: { verdict: Verdict; attrs: PathAttributes; decided?: true; nextHopDirective?: 'self' | 'unchanged'; trace?: Trace } = decided
    ? { verdict, attrs, decided }
    : { verdict, attrs };
  if (st.nextHopDirective !== undefined) r.nextHopDirective = st.nextHopDirective;
  if (trace) r.trace = trace;
  return r;
}

/** A statement's modifications, memoized per input attributes when they depend on nothing else. */
function applyMods(s: CompiledStatement, attrs: PathAttributes, route: PolicyRoute, ctx: PolicyContext, st: ModState): PathAttributes {
  const memo = s.memo;
  if (memo !== null) {
    let out = memo.get(attrs);
    if (out === undefined) {
      out = attrs;
      for (const m of s.mods) out = m.apply(out, route, ctx, st);
      memo.set(attrs, out);
    }
    return out;
  }
  for (const m of s.mods) attrs = m.apply(attrs, route, ctx, st);
  return attrs;
}

// Evaluation is synchronous and never re-entered, so one state object serves every run.
const scratch: ModState = { nextHopDirective: undefined };

function run(chain: CompiledChain, route: PolicyRoute, ctx: PolicyContext, trace: Trace | null): EvalResult {
  if (ctx.direction !== chain.direction) throw new Error(`an ${chain.direction} chain evaluated in an ${ctx.direction} context`);
  let attrs: PathAttributes = route.attrs;
  // Stays true while attrs is the input or a memoized output (objects that recur across routes).
  let stable = true;
  const st = scratch;
  st.nextHopDirective = undefined;
  for (const pol of chain.policies) {
    const pt: PolicyTrace | null = trace ? { policy: pol.name, statements: [] } : null;
    if (pt) trace!.policies.push(pt);
    statements: for (const s of pol.statements) {
      let matched = true;
      if (pt) {
        // Explain mode looks at every condition, so the trace shows all values.
        const ct = s.conditions.map((c) => ({ condition: c.name, matched: c.test(route, attrs, ctx), detail: c.describe(route, attrs, ctx) }));
        matched = ct.every((c) => c.matched);
        const stTrace: StatementTrace = { statement: s.name, matched, conditions: ct, modifications: [], ...(matched ? { result: s.result } : {}) };
        pt.statements.push(stTrace);
        if (matched)
          for (const m of s.mods) {
            const before = attrs;
            attrs = m.apply(attrs, route, ctx, st);
            stTrace.modifications.push(m.describe(before, attrs));
          }
        if (matched && s.mods.length > 0) stable = false;
      } else {
        for (const c of s.conditions)
          if (!c.test(route, attrs, ctx)) {
            matched = false;
            break;
          }
        if (matched && s.mods.length > 0) {
          attrs = applyMods(s, attrs, route, ctx, st);
          if (s.memo === null) stable = false;
        }
      }
      if (!matched) continue;
      switch (s.result) {
        case 'accept':
        case 'reject':
          return finish(
            trace,
            st,
            attrs,
            stable,
            s.result,
            trace ? `policy "${pol.name}" statement "${s.name}" ${s.result === 'accept' ? 'accepted' : 'rejected'} the route` : '',
            true,
          );
        case 'next-policy':
          break statements;
        case 'continue':
          break;
      }
    }
  }
  if (chain.direction === 'import') return finish(trace, st, attrs, stable, 'accept', 'no policy decided: import default accept');
  if (route.source.kind === 'local')
    return finish(trace, st, attrs, stable, chain.localDefault, trace ? `no policy decided: default ${chain.localDefault} for locally originated routes` : '');
  if (ctx.peer.type === 'ebgp')
    return finish(trace, st, attrs, stable, 'reject', 'RFC 8212 default reject: no policy accepted this learned route toward an eBGP peer');
  return finish(trace, st, attrs, stable, 'accept', 'no policy decided: export default accept toward an iBGP peer');
}

/** Runs a chain over one route: the verdict and the (possibly new) attributes. */
export function evaluate(chain: CompiledChain, route: PolicyRoute, ctx: PolicyContext): EvalResult {
  return run(chain, route, ctx, null);
}

/** Like evaluate, and records every policy and statement visited, with condition values and modifications. */
export function explain(chain: CompiledChain, route: PolicyRoute, ctx: PolicyContext): EvalResult & { readonly trace: Trace } {
  const trace: Trace = { direction: chain.direction, prefix: route.prefix.toString(), policies: [], verdict: 'reject', reason: '' };
  return run(chain, route, ctx, trace) as EvalResult & { trace: Trace };
}

/** Evaluates one chain over many routes in one context (one peer, one direction). */
export function evaluateBatch(chain: CompiledChain, routes: readonly PolicyRoute[], ctx: PolicyContext): EvalResult[] {
  const out = new Array<EvalResult>(routes.length);
  for (let i = 0; i < routes.length; i++) out[i] = run(chain, routes[i], ctx, null);
  return out;
}

/** A trace as indented text, for CLIs and logs. */
export function formatTrace(t: Trace): string {
  const lines = [`${t.direction} ${t.prefix}`];
  for (const p of t.policies) {
    lines.push(`  policy "${p.policy}"`);
    for (const s of p.statements) {
      lines.push(`    statement "${s.statement}": ${s.matched ? `matched → ${s.result}` : 'no match'}`);
      for (const c of s.conditions) lines.push(`      ${c.matched ? '✓' : '✗'} ${c.condition}: ${c.detail}`);
      for (const m of s.modifications) lines.push(`      ~ ${m}`);
    }
  }
  lines.push(`  verdict ${t.verdict}: ${t.reason}`);
  return lines.join('\n');
}
