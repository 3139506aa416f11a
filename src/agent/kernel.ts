/**
 * The agent's kernel side (issue 15): the speaker's kernel options from the
 * plan's kernel programming rules, keeping them current, and the status
 * view. Off unless asked for (`tsbgp agent --kernel on`; deploy/ turns it
 * on): an agent started in a namespace it shares (tests, a laptop) must not
 * adopt and delete routes of protocol 12 it does not own.
 */
import { type KernelStatus, NORMAL_ROUTE_PRIORITY } from '../kernel/index.js';
import type { KernelPlan, Plan } from '../kubernetes/index.js';
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
};

export function kernelSpeakerOptions(k: AgentKernelOptions, plan: Plan, restartTime: number): KernelOptions {
  const kp = plan.kernel ?? EMPTY;
  // Calico v3.32: learned routes get metric 2147483647 − LOCAL_PREF (src/kernel/metric.ts).
  return { ...k, rules: kp.rules, statics: kp.statics, restartTime, metricFromLocalPref: true };
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
      e.refused !== undefined
        ? 'refused'
        : e.source === undefined
          ? e.stale
            ? 'stale'
            : 'removing'
          : e.installed.length > 0
            ? 'installed'
            : 'pending';
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
            `${k.nexthops.map((h) => `${h.via !== null ? ` via ${h.via}` : ''}${h.dev !== null ? ` dev ${h.dev}` : ''}` +
              `${h.onlink ? ' onlink' : ''}`).join(',')}`,
      )
      .join('; ');
    const why = r.reason !== null ? `${route ? ' — ' : ''}${r.refusedBy === 'kernel' ? 'kernel: ' : ''}${r.reason}` : '';
    out.push(`${r.prefix.padEnd(width)}  ${r.state.padEnd(9)}  ${(r.source ?? '-').padEnd(6)}  ${route}${why}${r.note !== null ? ` (${r.note})` : ''}`);
  }
  if (v.routes.length === 0) out.push('(no routes)');
  return `${out.join('\n')}\n`;
}
