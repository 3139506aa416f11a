/**
 * Named policies for a speaker: plain definitions in, compiled once, turned
 * into the RIB's evaluator functions per (direction, list of names). A
 * redefinition recompiles everything and hands out new evaluators, which the
 * speaker gives to the RIB (soft reconfiguration, no session reset).
 */
import {
  compilePolicy,
  evaluate,
  explain,
  type CompiledPolicies,
  type EvalResult,
  type PolicyContext,
  type PolicyRoute,
  type Trace,
  type DefinedSetsDef,
  type PolicyConfigDef,
  type PolicyDef,
} from '../policy/index.js';
import type { PolicyEvaluator } from '../rib/index.js';

type Sets = { -readonly [K in keyof DefinedSetsDef]: DefinedSetsDef[K] };

export class PolicyRegistry {
  private sets: Sets = {};
  private policies: Record<string, PolicyDef> = {};
  private compiled: CompiledPolicies = compilePolicy({ policies: {} });
  private cache = new Map<string, PolicyEvaluator>();

  /** Adds or replaces policies and sets; on any error nothing changes (the PolicyError names the field). */
  define(config: PolicyConfigDef): void {
    const sets: Sets = { ...this.sets };
    for (const [kind, named] of Object.entries(config.sets ?? {}) as [keyof DefinedSetsDef, Record<string, readonly string[]>][]) {
      sets[kind] = { ...(sets[kind] ?? {}), ...named };
    }
    const policies = { ...this.policies, ...config.policies };
    const compiled = compilePolicy({ sets, policies });
    this.sets = sets;
    this.policies = policies;
    this.compiled = compiled;
    this.cache = new Map();
  }

  has(name: string): boolean {
    return this.compiled.policies.has(name);
  }

  /**
   * The evaluator for a chain of names, shared by every peer with the same
   * chain (so they can share an update group). Undefined where the RIB's
   * built-in default is the same as the engine's: import with no policies,
   * export with no policies toward iBGP. Toward eBGP an empty chain is still
   * an evaluator: RFC 8212 rejects learned routes no policy accepted.
   */
  evaluator(direction: 'import' | 'export', names: readonly string[], ebgp: boolean, where: string): PolicyEvaluator | undefined {
    if (names.length === 0 && (direction === 'import' || !ebgp)) return undefined;
    const key = `${direction}\u0000${names.join('\u0000')}`;
    let ev = this.cache.get(key);
    if (ev === undefined) {
      const chain = this.compiled.chain({ direction, policies: names }, where);
      ev = (route, ctx) => {
        const r = evaluate(chain, route, ctx);
        // `decided`: a statement's accept ends the export filter before late communities (src/rib/path.ts Path.late).
        return r.decided === true ? { verdict: r.verdict, attrs: r.attrs, decided: true } : { verdict: r.verdict, attrs: r.attrs };
      };
      this.cache.set(key, ev);
    }
    return ev;
  }

  /** Runs the same chain as `evaluator` with a trace; undefined where the RIB's default applies (no policy). */
  explain(
    direction: 'import' | 'export',
    names: readonly string[],
    ebgp: boolean,
    route: PolicyRoute,
    ctx: PolicyContext,
  ): (EvalResult & { readonly trace: Trace }) | undefined {
    if (names.length === 0 && (direction === 'import' || !ebgp)) return undefined;
    return explain(this.compiled.chain({ direction, policies: names }), route, ctx);
  }
}
