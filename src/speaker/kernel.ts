/**
 * The speaker's kernel wiring: Loc-RIB best paths (with their ECMP set) →
 * the kernel export policy (the policy engine, as BIRD's `export filter` on
 * its kernel protocol) → kernel programming rules (Calico's
 * calico_kernel_programming as data) → desired routes → KernelFib. Also the
 * static routes and blackholes, and when the restart is over (every peer's
 * End-of-RIB, or the selection deferral timer) so that adopted routes not
 * learned again are removed.
 */
import { Address, Prefix } from '../net/index.js';
import {
  KernelFib,
  type KernelFibOptions,
  type KernelStatus,
  type KernelEntry,
  metricForLocalPref,
  KernelRules,
  type Compiled as RuleHandle,
  type KernelRule,
  type DesiredRoute,
  type Gateway,
  type KernelRoute,
  type LearnedKernelRoute,
  type Refusal,
} from '../kernel/index.js';
import { policyRoute, type Path, type ExportPolicy, type PeerRef, type RibOptions } from '../rib/index.js';
import type { Negotiated } from '../session/index.js';
import type { AfiSafi } from '../wire/index.js';
import { SelectionDeferral } from './deferral.js';
import type { PolicyRegistry } from './policies.js';
import type { SpeakerScheduler } from './types.js';

/** A static route programmed into the kernel (BIRD's `protocol static`): a blackhole, or via a gateway. */
export type KernelStaticRoute =
  { readonly prefix: string; readonly blackhole: true } | { readonly prefix: string; readonly via: string; readonly dev?: string; readonly onlink?: boolean };

export interface KernelOptions extends KernelFibOptions {
  /** Named policies (definePolicies) choosing what goes into the kernel; none: every learned best path. Locally originated routes never do. */
  readonly exportPolicies?: readonly string[];
  /** Programming rules (reject, or accept via a tunnel), first covering rule wins. */
  readonly rules?: readonly KernelRule[];
  /** Static routes and blackholes. */
  readonly statics?: readonly KernelStaticRoute[];
  /** With adoption: the longest we keep adopted routes waiting for every peer's End-of-RIB, seconds (default: the speaker's selectionDeferralTime, 120). */
  readonly restartTime?: number;
  /**
   * Calico v3.32's metric for learned routes: 2147483647 − LOCAL_PREF (after the export
   * policy; 100 when absent, as BIRD), instead of `metric`. Statics keep `metric`. See src/kernel/metric.ts.
   */
  readonly metricFromLocalPref?: boolean;
}

/** One remembered desired route (SpeakerKernel's memo). */
interface Memo {
  readonly family: 4 | 6;
  readonly rule: RuleHandle | undefined;
  /** The peer paths of the ECMP set in order, as [source₀, attrs₁, source₁, attrs₂, source₂, …] (attrs₀ is the memo's key). */
  readonly rest: readonly object[];
  readonly route: DesiredRoute | undefined;
}

/** Entries kept per first attribute set (the oldest goes): a set shared by many ECMP sets is rare. */
const MEMO_PER_SET = 8;

/** True when the peer paths of `multipath` (`n` of them) are the set `rest` describes (see Memo). */
function sameSet(rest: readonly object[], multipath: readonly Path[], n: number): boolean {
  if (rest.length !== 2 * n - 1) return false;
  let i = 0;
  for (const p of multipath) {
    if (p.source.kind !== 'peer') continue;
    if (i === 0) {
      if (rest[0] !== p.source) return false;
      i = 1;
    } else {
      if (rest[i] !== p.attrs || rest[i + 1] !== p.source) return false;
      i += 2;
    }
  }
  return true;
}

/** The kernel side of one prefix, for `routes` views. */
export interface KernelRouteView {
  readonly installed: readonly KernelRoute[];
  readonly refused?: Refusal;
  readonly note?: string;
}

export class SpeakerKernel {
  readonly fib: KernelFib;
  private rules: KernelRules;
  private policy: ExportPolicy | undefined;
  private readonly deferral = new SelectionDeferral();
  private peers = 0;
  private timer: unknown;
  private started = false;
  private readonly ref: PeerRef;
  private statics: readonly KernelStaticRoute[] = [];
  /**
   * Desired routes by ECMP set, without an export policy: keyed by the first
   * peer path's attribute set (interned, immutable), then the rest of the set
   * (sources and attribute sets), the family and the deciding rule.
   */
  private memo = new WeakMap<object, Memo[]>();

  constructor(
    private readonly opts: KernelOptions,
    private readonly policies: PolicyRegistry,
    private readonly speaker: {
      readonly asn: number;
      readonly scheduler: SpeakerScheduler;
      readonly restartTime: number;
      forEach(fn: (prefix: Prefix, multipath: readonly Path[]) => void): void;
    },
    private readonly log: (level: 'debug' | 'info' | 'warning' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  ) {
    this.fib = new KernelFib({ ...opts, log });
    this.rules = new KernelRules(opts.rules ?? []);
    this.policy = this.evaluator();
    this.ref = { address: Address.parse('0.0.0.0'), asn: speaker.asn, type: 'ibgp', localAsn: speaker.asn };
    this.setStatics(opts.statics ?? []);
  }

  private evaluator(): ExportPolicy | undefined {
    const names = this.opts.exportPolicies ?? [];
    return names.length === 0 ? undefined : this.policies.evaluator('export', names, true, 'kernel exportPolicies');
  }

  async start(): Promise<void> {
    this.started = true;
    await this.fib.start();
    const t = this.opts.restartTime ?? this.speaker.restartTime;
    if (this.fib.core.isRestarting) this.timer = this.speaker.scheduler.setTimeout(() => this.end(`restart time (${t} s) expired`), t * 1000);
    this.check();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) this.speaker.scheduler.clearTimeout(this.timer);
    await this.fib.stop();
  }

  // ------------------------------------------------------------ routes

  /** A prefix's best path or ECMP set changed (empty: no route). `name`: `prefix.toString()`, when the caller has it. */
  onLocChange(prefix: Prefix, multipath: readonly Path[], name = prefix.toString()): void {
    this.fib.setRoute(name, this.desired(prefix, multipath));
  }

  /** What the Rib is given (RibOptions) to feed this: BgpSpeaker and the benchmarks wire it the same way. */
  ribHooks(): Pick<RibOptions, 'onLocChange'> {
    return { onLocChange: (prefix, multipath, name) => this.onLocChange(prefix, multipath, name) };
  }

  private desired(prefix: Prefix, multipath: readonly Path[]): DesiredRoute | undefined {
    if (this.policy !== undefined) return this.compute(prefix, multipath, this.rules.decider(prefix));
    // Without an export policy the route depends on the prefix only through its family and the rule deciding it:
    // routes learned in one UPDATE, or with the same ECMP set, share one DesiredRoute (and its gateways).
    let first: Path | undefined;
    let n = 0;
    for (const p of multipath) {
      if (p.source.kind !== 'peer') continue;
      first ??= p;
      n++;
    }
    if (first === undefined) return undefined;
    const rule = this.rules.decider(prefix);
    const family = prefix.family;
    let list = this.memo.get(first.attrs);
    if (list !== undefined) for (const m of list) if (m.family === family && m.rule === rule && sameSet(m.rest, multipath, n)) return m.route;
    const route = this.compute(prefix, multipath, rule);
    const rest: object[] = [];
    for (const p of multipath) if (p.source.kind === 'peer') rest.push(...(rest.length === 0 ? [p.source] : [p.attrs, p.source]));
    if (list === undefined) this.memo.set(first.attrs, (list = []));
    if (list.length >= MEMO_PER_SET) list.shift();
    list.push({ family, rule, rest, route });
    return route;
  }

  /** The desired route for `prefix` reached through `multipath` (its deciding rule `rule`), through the export policy if there is one. */
  private compute(prefix: Prefix, multipath: readonly Path[], rule: RuleHandle | undefined): DesiredRoute | undefined {
    const gateways: Gateway[] = [];
    let localPref: number | undefined;
    let first = true;
    for (const p of multipath) {
      if (p.source.kind !== 'peer') continue; // our own originations are not programmed
      let attrs = p.attrs.attrs;
      if (this.policy !== undefined) {
        const r = this.policy(policyRoute(prefix, p, attrs), { peer: this.ref, direction: 'export' });
        if (r.verdict === 'reject') continue;
        attrs = r.attrs;
      }
      const nh =
        prefix.family === 4
          ? (attrs.nextHop ?? attrs.mpReach?.nextHops[0])
          : (attrs.mpReach?.nextHops.find((a) => !a.isLinkLocal) ?? attrs.mpReach?.nextHops[0]);
      if (nh === undefined) continue;
      // The best path's LOCAL_PREF (an ECMP set shares it).
      if (first) localPref = attrs.localPref;
      first = false;
      gateways.push({ address: nh.toString(), peer: p.source.address.toString() });
    }
    if (gateways.length === 0) return undefined;
    const out = this.rules.applyWith(rule, gateways);
    if (!out.ok) return undefined;
    return { kind: 'unicast', gateways: out.gateways, ...(this.opts.metricFromLocalPref ? { metric: metricForLocalPref(localPref) } : {}) };
  }

  /** Re-evaluates every Loc-RIB prefix (the export policy or the rules changed). */
  reevaluate(): void {
    this.policy = this.evaluator();
    this.memo = new WeakMap();
    this.speaker.forEach((prefix, mp) => {
      this.onLocChange(prefix, mp);
    });
  }

  setRules(rules: readonly KernelRule[]): void {
    this.rules = new KernelRules(rules);
    this.setStatics(this.statics);
    this.reevaluate();
  }

  /** Replaces the static routes; throws (naming the route) on a malformed one, changing nothing. */
  setStatics(routes: readonly KernelStaticRoute[]): void {
    const m = new Map<string, DesiredRoute>();
    this.statics = routes;
    routes.forEach((r, i) => {
      let p: Prefix;
      try {
        p = Prefix.parse(r.prefix);
      } catch (err) {
        throw new Error(`kernel static route ${i} (${JSON.stringify(r.prefix)}): ${err instanceof Error ? err.message : String(err)}`);
      }
      // The rules apply to statics too: a rejected pool's blocks get no blackhole (Felix installs those).
      if ('blackhole' in r) {
        if (this.rules.match(p)?.action !== 'reject') m.set(p.toString(), { kind: 'blackhole' });
      } else {
        if (typeof r.via !== 'string') throw new Error(`kernel static route ${i} (${r.prefix}): needs "via" or "blackhole: true"`);
        const out = this.rules.apply(p, [{ address: r.via, ...(r.dev !== undefined ? { dev: r.dev } : {}), ...(r.onlink ? { onlink: true } : {}) }]);
        if (out.ok) m.set(p.toString(), { kind: 'unicast', gateways: out.gateways });
      }
    });
    this.fib.setStatics(m);
  }

  // ------------------------------------------------------------ restart

  addPeer(id: string): void {
    this.peers++;
    this.deferral.addPeer(id);
  }

  removePeer(id: string): void {
    this.peers--;
    this.deferral.removePeer(id);
    this.check();
  }

  up(id: string, n: Negotiated): void {
    this.deferral.up(id, n);
    this.check();
  }

  down(id: string): void {
    this.deferral.down(id);
  }

  endOfRib(id: string, f: AfiSafi): void {
    this.deferral.endOfRib(id, f);
    this.check();
  }

  private check(): void {
    if (!this.started || !this.fib.core.isRestarting || this.peers === 0) return;
    if (this.deferral.waitingFor().length === 0) this.end('End-of-RIB received from every peer');
  }

  private end(why: string): void {
    if (this.timer !== undefined) this.speaker.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.fib.core.isRestarting) return;
    const waiting = this.deferral.waitingFor();
    this.log(waiting.length > 0 ? 'warning' : 'info', `kernel: restart over: ${why}`, waiting.length > 0 ? { stillWaitingFor: waiting } : undefined);
    this.fib.endRestart();
  }

  // ------------------------------------------------------------ views

  status(): KernelStatus {
    return this.fib.status();
  }

  /** Every prefix of the kernel side (O(routes): a listing). */
  routes(): KernelEntry[] {
    return [...this.fib.core.entries()];
  }

  /** With `learn`: the routes of other programs in the kernel's table and the connected networks. */
  learned(): LearnedKernelRoute[] {
    return this.fib.learned();
  }

  route(prefix: Prefix): KernelRouteView {
    const p = prefix.toString();
    const refused = this.fib.core.refusal(p);
    const note = this.fib.core.note(p);
    return {
      installed: this.fib.core.installedFor(p),
      ...(refused !== undefined ? { refused } : {}),
      ...(note !== undefined ? { note } : {}),
    };
  }
}

/** What `BgpSpeaker` offers for the kernel side (kept apart so fakes of SpeakerApi stay valid). */
export interface SpeakerKernelApi {
  /** Undefined when the speaker was built without `kernel`. */
  kernelStatus(): KernelStatus | undefined;
  kernelRoute(prefix: Prefix | string): KernelRouteView | undefined;
  /** Every prefix wanted, installed or refused (O(routes)); undefined without `kernel`. */
  kernelRoutes(): KernelEntry[] | undefined;
  setKernelRules(rules: readonly KernelRule[]): void;
  setKernelStatics(routes: readonly KernelStaticRoute[]): void;
  /** With `kernel.learn`: others' routes in the kernel's table and the connected networks; undefined without `kernel`. */
  kernelLearned(): LearnedKernelRoute[] | undefined;
}
