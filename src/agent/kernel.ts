/**
 * The agent's kernel side (issue 15): the speaker's kernel options from the
 * plan's kernel programming rules, keeping them current, and the status
 * view. Off unless asked for (`tsbgp agent --kernel on`; deploy/ turns it
 * on): an agent started in a namespace it shares (tests, a laptop) must not
 * adopt and delete routes of protocol 12 it does not own.
 */
import { type KernelStatus, NORMAL_ROUTE_PRIORITY } from '../kernel/index.js';
import { kernelExport, kernelExports, learnedJson, NO_LEARNING, type KernelPlan, type LearnedJson, type LearnedRoute, type Plan } from '../kubernetes/index.js';
import { Prefix } from '../net/index.js';
import type { KernelOptions, SpeakerKernelApi, SpeakerApi } from '../speaker/index.js';

/** What the agent's caller chooses; the rules and statics come from the plan. */
export type AgentKernelOptions = Omit<KernelOptions, 'rules' | 'statics' | 'exportPolicies' | 'restartTime' | 'metricFromLocalPref'>;

export interface KernelStatusJson {
  readonly enabled: boolean;
  readonly error: string | null;
  readonly table: number | string;
  readonly protocol: number;
  /** What writes the routes: rtnetlink from the agent, or `ip -batch` (null while off). */
  readonly writer: 'netlink' | 'iproute2' | null;
  /** Why it is `ip -batch` when rtnetlink was wanted (koffi cannot load; no permission in the agent's process). */
  readonly writerNote: string | null;
  /** What hears the kernel's changes: rtnetlink in a thread of the agent, or `ip monitor` (null while off). */
  readonly listener: 'netlink' | 'iproute2' | null;
  /** Why it is `ip monitor` when rtnetlink was wanted. */
  readonly listenerNote: string | null;
  readonly restarting: boolean;
  readonly installed: number;
  readonly desired: number;
  readonly stale: number;
  /** At most 100. */
  readonly refused: readonly { readonly prefix: string; readonly reason: string }[];
  readonly refusedCount: number;
  readonly programClusterRoutes: string | null;
}

const EMPTY: KernelPlan = {
  programClusterRoutes: 'Enabled',
  normalRoutePriority: { v4: NORMAL_ROUTE_PRIORITY, v6: NORMAL_ROUTE_PRIORITY },
  rules: [],
  statics: [],
  learn: NO_LEARNING,
};

/**
 * The speaker's kernel options: the plan's rules and statics, Calico v3.32's
 * metrics, and BIRD's `learn` (the kernel's other routes, Felix's to local
 * workloads among them, reported through `onLearned`).
 */
export function kernelSpeakerOptions(k: AgentKernelOptions, plan: Plan, restartTime: number, onLearned?: () => void): KernelOptions {
  const kp = plan.kernel ?? EMPTY;
  // Calico v3.32: learned routes get metric 2147483647 − LOCAL_PREF (src/kernel/metric.ts).
  return { ...k, rules: kp.rules, statics: kp.statics, restartTime, metricFromLocalPref: true, learn: true, ...(onLearned !== undefined ? { onLearned } : {}) };
}

/** The kernel's other routes as the export decision reads them (src/kubernetes/export.ts); [] when the speaker does not learn. */
export function learnedRoutes(s: SpeakerApi | undefined): LearnedRoute[] {
  if (s === undefined || !hasKernel(s)) return [];
  const out: LearnedRoute[] = [];
  for (const l of s.kernelLearned() ?? []) {
    let prefix: Prefix;
    try {
      prefix = Prefix.parse(l.route.prefix);
    } catch {
      continue; // the kernel's own text: canonical, so not expected
    }
    const dev = l.route.nexthops[0]?.dev;
    out.push({ prefix, source: l.source, type: l.route.type, metric: l.route.metric, protocol: l.protocol, ...(dev !== undefined ? { dev } : {}) });
  }
  return out;
}

const hasKernel = (s: SpeakerApi): s is SpeakerApi & SpeakerKernelApi => typeof (s as Partial<SpeakerKernelApi>).setKernelRules === 'function';

/** Hands the plan's rules and statics to the speaker when they changed; returns the key applied (or the old one, with the error). */
export function syncKernel(s: SpeakerApi, plan: Plan, lastKey: string | undefined): { key: string | undefined; error?: string } {
  if (!hasKernel(s) || s.kernelStatus() === undefined) return { key: lastKey };
  const kp = plan.kernel ?? EMPTY;
  const key = JSON.stringify([kp.rules, kp.statics]);
  if (key === lastKey) return { key };
  try {
    s.setKernelRules(kp.rules);
    s.setKernelStatics(kp.statics);
    return { key };
  } catch (e) {
    return { key: lastKey, error: (e as Error).message };
  }
}

export function kernelStatusJson(s: SpeakerApi | undefined, plan: Plan): KernelStatusJson | null {
  if (s === undefined || !hasKernel(s)) return null;
  const st: KernelStatus | undefined = s.kernelStatus();
  if (st === undefined) return null;
  return {
    enabled: st.enabled,
    error: st.error ?? null,
    table: st.table,
    protocol: st.protocol,
    writer: st.writer ?? null,
    writerNote: st.writerNote ?? null,
    listener: st.listener ?? null,
    listenerNote: st.listenerNote ?? null,
    restarting: st.restarting,
    installed: st.routes.installed,
    desired: st.routes.desired,
    stale: st.routes.stale,
    refused: st.refused.map((r) => ({ prefix: r.prefix, reason: r.reason })),
    refusedCount: st.routes.refused,
    programClusterRoutes: plan.kernel?.programClusterRoutes ?? null,
  };
}

/** One status line (and one per refusal) for `tsbgp status`. */
export function kernelStatusText(k: KernelStatusJson | null | undefined): string[] {
  if (k === null || k === undefined) return ['Kernel routes: off (agent started without --kernel on)'];
  if (!k.enabled) return [`Kernel routes: OFF: ${k.error ?? 'stopped'}`];
  const lines = [
    `Kernel routes: table ${k.table}, proto ${k.protocol}${k.writer ? `, writer ${k.writer}` : ''}: ` +
      `${k.installed} installed of ${k.desired} wanted, ${k.refusedCount} refused${k.restarting ? `, restarting (${k.stale} adopted kept)` : ''}`,
  ];
  if (k.writerNote) lines.push(`  ${k.writerNote}`);
  if (k.listenerNote) lines.push(`  ${k.listenerNote}`);
  for (const r of k.refused) lines.push(`  refused ${r.prefix}: ${r.reason}`);
  if (k.refusedCount > k.refused.length) lines.push(`  … and ${k.refusedCount - k.refused.length} more`);
  return lines;
}

/** One prefix in `tsbgp routes --kernel --json`. */
export interface KernelRouteJson {
  readonly prefix: string;
  /** Who wants it: learned over BGP, a static/blackhole, or nobody (adopted, or being removed). */
  readonly source: 'bgp' | 'static' | null;
  /** installed; refused (see reason); pending (not written yet); stale (adopted, kept until the restart ends); removing. */
  readonly state: 'installed' | 'refused' | 'pending' | 'stale' | 'removing';
  /** What the kernel holds of ours for the prefix (one per metric). */
  readonly installed: readonly {
    readonly type: string;
    readonly metric: number;
    readonly nexthops: readonly { readonly via: string | null; readonly dev: string | null; readonly onlink: boolean }[];
  }[];
  readonly reason: string | null;
  /** 'resolve': not tried (no usable next hop); 'kernel': the kernel said no. */
  readonly refusedBy: 'resolve' | 'kernel' | null;
  /** A non-fatal note (an ECMP member left out). */
  readonly note: string | null;
  /** A route learned over BGP: the peers whose paths it is made of ([] otherwise). */
  readonly peers: readonly string[];
}

export interface KernelRoutesJson {
  readonly version: 1;
  /** The aggregate, as in `tsbgp status` (null: the agent runs without --kernel on). */
  readonly status: KernelStatusJson | null;
  readonly routes: readonly KernelRouteJson[];
}

/** `tsbgp routes --kernel`: every prefix of the kernel side, in prefix order (O(routes): a listing). */
export function kernelRoutesJson(s: SpeakerApi | undefined, plan: Plan): KernelRoutesJson {
  const status = kernelStatusJson(s, plan);
  if (s === undefined || !hasKernel(s) || status === null) return { version: 1, status, routes: [] };
  const entries = (s.kernelRoutes() ?? []).map((e) => ({ e, p: Prefix.parse(e.prefix) }));
  entries.sort((a, b) => a.p.compare(b.p));
  const routes = entries.map(({ e }): KernelRouteJson => {
    const state =
      e.refused !== undefined ? 'refused' : e.source === undefined ? (e.stale ? 'stale' : 'removing') : e.installed.length > 0 ? 'installed' : 'pending';
    return {
      prefix: e.prefix,
      source: e.source ?? null,
      state,
      installed: e.installed.map((r) => ({
        type: r.type,
        metric: r.metric,
        nexthops: r.nexthops.map((h) => ({ via: h.via ?? null, dev: h.dev ?? null, onlink: h.onlink === true })),
      })),
      reason: e.refused?.reason ?? null,
      refusedBy: e.refused?.by ?? null,
      note: e.note ?? null,
      peers: [...(e.peers ?? [])],
    };
  });
  return { version: 1, status, routes };
}

/** The text form of `tsbgp routes --kernel`. */
export function kernelRoutesText(v: KernelRoutesJson): string {
  const out = kernelStatusText(v.status).slice(0, 1);
  if (v.status === null || !v.status.enabled) return `${out.join('\n')}\n`;
  const width = Math.max(6, ...v.routes.map((r) => r.prefix.length));
  out.push('', `${'PREFIX'.padEnd(width)}  ${'STATE'.padEnd(9)}  ${'SOURCE'.padEnd(6)}  ROUTE`);
  for (const r of v.routes) {
    const route = r.installed
      .map(
        (k) =>
          `${k.type === 'unicast' ? '' : `${k.type} `}metric ${k.metric}` +
          `${k.nexthops
            .map((h) => `${h.via !== null ? ` via ${h.via}` : ''}${h.dev !== null ? ` dev ${h.dev}` : ''}` + `${h.onlink ? ' onlink' : ''}`)
            .join(',')}`,
      )
      .join('; ');
    const why = r.reason !== null ? `${route ? ' — ' : ''}${r.refusedBy === 'kernel' ? 'kernel: ' : ''}${r.reason}` : '';
    out.push(`${r.prefix.padEnd(width)}  ${r.state.padEnd(9)}  ${(r.source ?? '-').padEnd(6)}  ${route}${why}${r.note !== null ? ` (${r.note})` : ''}`);
  }
  if (v.routes.length === 0) out.push('(no routes)');
  return `${out.join('\n')}\n`;
}

/**
 * `tsbgp plan --json`'s `kernel`: what the node does with the kernel, field
 * by field comparable with Calico's BIRD configuration — the kernel
 * protocol's export filter (`rules`: calico_kernel_programming), the static
 * protocol (`blackholes`, `statics`: bird_aggr.cfg), calico_aggr
 * (`aggregation`), learning (`learn`: the interfaces whose routes stay on the
 * node, ignoredInterfaces and Calico's `protocol direct` interface list), and
 * from a running agent what it learned, advertises and programmed (null
 * from `tsbgp plan`, which reads manifests only).
 */
export interface KernelPlanJson {
  readonly programClusterRoutes: string;
  readonly normalRoutePriority: { readonly v4: number; readonly v6: number };
  /** In order; the first covering rule decides, anything no rule covers is programmed as routing chose it. */
  readonly rules: readonly {
    readonly prefix: string;
    readonly action: 'accept' | 'reject';
    readonly tunnel: string | null;
    readonly unlessWithin: readonly string[];
    readonly why: string | null;
  }[];
  /** This node's blocks (not /32 or /128) as blackholes. */
  readonly blackholes: readonly string[];
  /** Routes to peers (BGPPeer reachableBy). */
  readonly statics: readonly { readonly prefix: string; readonly via: string; readonly why: string }[];
  /** calico_aggr: per block of this node, the block is advertised and beneath it only routes of a metric below the normal route priority. */
  readonly aggregation: readonly { readonly block: string; readonly from: string; readonly hostBlock: boolean }[];
  readonly learn: {
    /** Routes of the kernel's other programs are learned (null: unknown, `tsbgp plan`). */
    readonly enabled: boolean | null;
    readonly rejectInterfaces: readonly { readonly pattern: string; readonly why: string }[];
    readonly ignoredInterfaces: readonly string[];
    /** Calico's protocol direct `interface` list. */
    readonly directInterfaces: string;
  };
  readonly learned: readonly LearnedJson[] | null;
  /** The learned routes advertised (also in `redistributed`). */
  readonly exported: readonly string[] | null;
  /** Routes in the kernel's table of tsbgp's protocol, with the peers they come from. */
  readonly programmed:
    | readonly {
        readonly prefix: string;
        readonly source: 'bgp' | 'static' | null;
        readonly state: KernelRouteJson['state'];
        readonly peers: readonly string[];
        readonly nexthops: readonly string[];
      }[]
    | null;
}

/** The live part of KernelPlanJson, from a running agent. */
export interface KernelLive {
  readonly learned: readonly LearnedRoute[];
  readonly routes: readonly KernelRouteJson[] | null;
}

export function kernelPlanJson(plan: Plan, live?: KernelLive): KernelPlanJson {
  const kp = plan.kernel ?? EMPTY;
  const learn = kp.learn;
  const reachable = new Map(plan.peers.filter((p) => p.reachableBy !== undefined && !p.refused).map((p) => [Prefix.host(p.address).toString(), p]));
  const exported = live ? kernelExportsOf(plan, live.learned) : undefined;
  return {
    programClusterRoutes: kp.programClusterRoutes,
    normalRoutePriority: { ...kp.normalRoutePriority },
    rules: kp.rules.map((r) => ({
      prefix: r.prefix,
      action: r.action,
      tunnel: r.action === 'accept' && r.tunnel ? r.tunnel.dev : null,
      unlessWithin: r.action === 'accept' && r.tunnel ? [...(r.tunnel.unlessWithin ?? [])] : [],
      why: r.why ?? null,
    })),
    blackholes: kp.statics.flatMap((s) => ('blackhole' in s ? [s.prefix] : [])),
    statics: kp.statics.flatMap((s) =>
      'via' in s ? [{ prefix: s.prefix, via: s.via, why: reachable.has(s.prefix) ? `reachableBy of ${reachable.get(s.prefix)!.id}` : 'static route' }] : [],
    ),
    aggregation: learn.blocks.map((b) => ({ block: b.prefix.toString(), from: b.name, hostBlock: b.prefix.length === b.prefix.maxLength })),
    learn: {
      enabled: live ? true : null,
      rejectInterfaces: learn.rejectInterfaces.map((x) => ({ ...x })),
      ignoredInterfaces: [...learn.ignoredInterfaces],
      directInterfaces: [...learn.directExcluded.map((x) => `-"${x}"`), '"*"'].join(', '),
    },
    learned: live
      ? [...live.learned].sort((a, b) => a.prefix.compare(b.prefix) || a.metric - b.metric).map((r) => learnedJson(r, kernelExport(plan, r)))
      : null,
    exported: exported ?? null,
    programmed: live?.routes
      ? live.routes.map((r) => ({
          prefix: r.prefix,
          source: r.source,
          state: r.state,
          peers: [...r.peers],
          nexthops: r.installed.flatMap((k) =>
            k.nexthops.map((h) => `${h.via ?? ''}${h.dev !== null ? `${h.via !== null ? ' ' : ''}dev ${h.dev}` : ''}${h.onlink ? ' onlink' : ''}` || k.type),
          ),
        }))
      : null,
  };
}

function kernelExportsOf(plan: Plan, learned: readonly LearnedRoute[]): string[] {
  return kernelExports(plan, learned).map((k) => k.prefix.toString());
}
