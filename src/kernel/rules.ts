/**
 * Kernel programming rules: which routes go into the kernel and how, as
 * plain data (Calico's `calico_kernel_programming` filter, step by step).
 * The first rule whose prefix covers the route decides; a route no rule
 * covers is accepted as routing chose it (ToR routes, reachableBy statics).
 * Pure: the Kubernetes planner produces the rules, the speaker applies them.
 */
import { Address, Prefix } from '../net/index.js';
import type { Gateway } from './types.js';

export type KernelRule =
  /** Routes inside `prefix` are not programmed (service CIDRs, VXLAN pools, pools Felix owns). */
  | { readonly prefix: string; readonly action: 'reject'; readonly why?: string }
  /**
   * Routes inside `prefix` are programmed. With `tunnel`, a single-path route
   * goes via `tunnel.dev` onlink (IPIP `Always`) — unless its next hop is
   * inside one of `tunnel.unlessWithin` (IPIP `CrossSubnet`: the node's own
   * subnets). Multipath routes keep their next hops (as BIRD's krt_tunnel).
   */
  | {
      readonly prefix: string;
      readonly action: 'accept';
      readonly tunnel?: { readonly dev: string; readonly unlessWithin?: readonly string[] };
      readonly why?: string;
    };

/** One compiled rule: an opaque handle (`KernelRules.decider`), equal for every prefix the same rule decides. */
export interface Compiled {
  readonly prefix: Prefix;
  readonly rule: KernelRule;
  readonly within: readonly Prefix[];
}

export type RuleOutcome = { readonly ok: true; readonly gateways: readonly Gateway[] } | { readonly ok: false; readonly reason: string };

export class KernelRules {
  private readonly compiled: readonly Compiled[];

  /** Throws an Error naming the rule (index, prefix) that is malformed. */
  constructor(readonly rules: readonly KernelRule[] = []) {
    this.compiled = rules.map((rule, i) => {
      const at = `kernel rule ${i} (${JSON.stringify(rule.prefix)})`;
      let prefix: Prefix;
      try {
        prefix = Prefix.parse(rule.prefix);
      } catch (err) {
        throw new Error(`${at}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (rule.action !== 'accept' && rule.action !== 'reject')
        throw new Error(`${at}: action must be "accept" or "reject", got ${JSON.stringify((rule as { action: unknown }).action)}`);
      const within: Prefix[] = [];
      if (rule.action === 'accept' && rule.tunnel !== undefined) {
        if (typeof rule.tunnel.dev !== 'string' || rule.tunnel.dev === '') throw new Error(`${at}: tunnel.dev must name an interface`);
        for (const w of rule.tunnel.unlessWithin ?? []) {
          try {
            within.push(Prefix.parse(w));
          } catch (err) {
            throw new Error(`${at}: tunnel.unlessWithin ${JSON.stringify(w)}: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
      }
      return { prefix, rule, within };
    });
  }

  /** The rule deciding `prefix`, if any. */
  match(prefix: Prefix): KernelRule | undefined {
    return this.find(prefix)?.rule;
  }

  private find(prefix: Prefix): Compiled | undefined {
    for (const c of this.compiled) if (c.prefix.family === prefix.family && c.prefix.length <= prefix.length && c.prefix.contains(prefix)) return c;
    return undefined;
  }

  /**
   * The rule deciding `prefix` (undefined: none): with `applyWith`, what
   * `apply` does, for a caller that reuses outcomes per rule — the outcome
   * depends on the prefix only through this.
   */
  decider(prefix: Prefix): Compiled | undefined {
    return this.compiled.length === 0 ? undefined : this.find(prefix);
  }

  /** What goes into the kernel for `prefix` reached via `gateways`. */
  apply(prefix: Prefix, gateways: readonly Gateway[]): RuleOutcome {
    return this.applyWith(this.decider(prefix), gateways);
  }

  /** `apply` for a prefix whose deciding rule (`decider`) is `c`. */
  applyWith(c: Compiled | undefined, gateways: readonly Gateway[]): RuleOutcome {
    if (c === undefined) return { ok: true, gateways };
    const r = c.rule;
    if (r.action === 'reject') return { ok: false, reason: `kernel rule ${r.prefix}: not programmed${r.why ? ` (${r.why})` : ''}` };
    if (r.tunnel === undefined || gateways.length !== 1) return { ok: true, gateways };
    const g = gateways[0];
    let a: Address | undefined;
    try {
      a = Address.parse(g.address);
    } catch {
      a = undefined;
    }
    if (a !== undefined && c.within.some((w) => w.family === a.family && w.contains(a))) return { ok: true, gateways };
    return { ok: true, gateways: [{ address: g.address, dev: r.tunnel.dev, onlink: true }] };
  }
}
