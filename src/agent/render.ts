/** Human-readable text for `tsbgp plan`, `routes`, `explain` and `status`, from their JSON views. */
import { ago } from './ago.js';
import { kernelStatusText } from './kernel.js';
import type { RoutesJson, StatusJson } from './agent.js';
import { renderBfd } from './bfd-view.js';
import { renderStatus, type StatusRow } from './status-table.js';
import { formatError, type ExplainJson, type PlanJson, type SourceJson } from './views.js';

function section(title: string, lines: string[], empty: string): string[] {
  return [title, ...(lines.length > 0 ? lines.map((l) => `  ${l}`) : [`  ${empty}`]), ''];
}

function tail(v: PlanJson): string[] {
  return [
    ...section(
      'REFUSED (not advertised)',
      v.refused.map((r) => `${r.service} ${r.source} ${r.ip}: ${r.reason} (${r.message})`),
      'none',
    ),
    ...section('ERRORS', v.errors.map(formatError), 'none'),
    ...(v.warnings.length > 0 ? section('WARNINGS', v.warnings.map(formatError), 'none') : []),
  ];
}

export function renderPlan(v: PlanJson): string {
  const node = v.node;
  const out = [`node ${node.name}: AS ${node.asn}${node.ipv4 ? `, ${node.ipv4}` : ''}${node.ipv6 ? `, ${node.ipv6}` : ''}, listen port ${node.listenPort}`, ''];
  out.push(
    ...section(
      'ROUTES',
      v.routes.map((r) => `${r.prefix}${r.communities.length ? ` [${r.communities.join(' ')}]` : ''}  ← ${r.reasons.map((x) => x.text).join('; ')}`),
      'none',
    ),
  );
  if (v.redistributed.length > 0)
    out.push(
      ...section(
        'RE-ADVERTISED FROM LOCAL PEERS',
        v.redistributed.map((r) => {
          const attrs = [
            ...r.communities,
            ...r.extendedCommunities.map((c) => `ext ${c}`),
            ...r.withheldExtendedCommunities.map((c) => `ext ${c} (non-transitive, not passed on)`),
          ];
          return `${r.prefix} from ${r.from}${attrs.length ? ` [${attrs.join(' ')}]` : ''}: ${r.export.reason}`;
        }),
        'none',
      ),
    );
  out.push(
    ...section(
      'PEERS (exports: BGPFilters, then the built-in export policy)',
      v.peers.map(
        (p) =>
          `${p.address}:${p.port} AS ${p.asn} ${p.type}` +
          `${p.routeReflectorClusterId ? ` rr-client (cluster ${p.routeReflectorClusterId})` : ''}` +
          `${p.passive ? ' passive' : ''}${p.refused ? ' NOT STARTED' : ''} ← ${p.origin}  max-prefixes ` +
          `${p.maxPrefixes.limit}${p.maxPrefixes.from === 'annotation' ? ' (tsbgp.io/max-prefixes)' : ''}  exports: ${p.exports.join(', ') || '-'}`,
      ),
      'none',
    ),
  );
  out.push(...tail(v));
  return out.join('\n');
}

export function renderRoutes(v: RoutesJson): string {
  const out: string[] = [];
  for (const p of v.peers) {
    out.push(`peer ${p.address} (${p.type}, AS ${p.asn}, ${p.refused ? 'not started' : (p.state ?? 'unknown')})`);
    // An agent older than the `pending` field answers without it.
    const pending = p.pending ?? [];
    if (p.advertised.length === 0 && pending.length === 0) out.push('  nothing advertised');
    if (pending.length > 0) {
      out.push(
        p.state === 'Established'
          ? "  pending: planned, not sent yet (after a start the agent holds its routes until its peers' End-of-RIB, at most 15 s)"
          : `  pending: the session is ${p.state ?? 'not running'}; these are sent once it is Established`,
      );
      for (const prefix of pending) out.push(`  ${prefix}  (pending)`);
    }
    for (const a of p.advertised) {
      const attrs = [
        a.nextHop ? `next hop ${a.nextHop}` : '',
        a.asPath.length ? `AS path ${a.asPath.join(' ')}` : '',
        a.med !== null ? `MED ${a.med}` : '',
        a.localPref !== null ? `local pref ${a.localPref}` : '',
        a.communities.length ? `communities ${a.communities.join(' ')}` : '',
        a.largeCommunities.length ? `large ${a.largeCommunities.join(' ')}` : '',
        a.extendedCommunities.length ? `extended ${a.extendedCommunities.join(' ')}` : '',
      ]
        .filter(Boolean)
        .join(', ');
      const why = (a.reasons as { text?: string }[]).map((r) => r.text ?? JSON.stringify(r)).join('; ');
      out.push(`  ${a.prefix}${attrs ? `  ${attrs}` : ''}  ← ${why || 'unknown origin'}`);
    }
    out.push('');
  }
  if (v.peers.length === 0) out.push('No peers.', '');
  out.push(...tail(v));
  return out.join('\n');
}

export function renderExplain(v: ExplainJson): string {
  const out = [v.service ? `Service ${v.service}` : `prefix ${v.prefixes[0]?.prefix ?? v.query}`, `  ${v.summary.split('\n').join('\n  ')}`, ''];
  for (const p of v.prefixes) {
    out.push(`${p.prefix}`);
    const planner = p.planned
      ? p.planned.reasons.map((r) => r.text).join('; ')
      : p.redistributedFrom
        ? `received from local peer ${p.redistributedFrom}${p.redistributedCommunities?.length ? ` [${p.redistributedCommunities.join(' ')}]` : ''}`
        : 'not planned';
    out.push(`  planner: ${planner}`);
    if (p.coveredBy.length) out.push(`  covered by: ${p.coveredBy.map((r) => r.prefix).join(', ')}`);
    for (const r of p.refused) out.push(`  refused: ${r.service} ${r.source} ${r.ip}: ${r.reason} (${r.message})`);
    out.push(`  built-in export: ${p.export.accept ? 'accept' : 'reject'} (${p.export.reason})`);
    out.push(`  allow-list: ${p.allowList.map((a) => `${a.kind} ${a.name} ${a.cidr}`).join(', ') || 'no entry contains it'}`);
    // `sent` (explain-sessions.ts): the agent knows the session; offline (`plan`) it does not.
    const verdict = (peer: (typeof p.peers)[number]) =>
      !peer.exported ? 'not exported' : 'sent' in peer && peer.sent === false ? 'exported, pending' : 'exported';
    for (const peer of p.peers) out.push(`  → ${peer.address} (${peer.type}): ${verdict(peer)}: ${peer.why}`);
    out.push('');
  }
  if (v.service && v.refused.length && v.prefixes.length === 0) for (const r of v.refused) out.push(`${r.ip}: ${r.reason} (${r.message})`, '');
  return out.join('\n');
}

/** One line: where the configuration comes from, and whether the agent is serving it stale. */
export function renderSource(src: SourceJson, now: Date): string {
  if (src.kind === 'manifests') return `Configuration: manifests ${src.paths.join(', ')}${src.lastError ? ` (last watch error: ${src.lastError})` : ''}.`;
  const api = `Kubernetes API ${src.server ?? '(no server)'}${src.calicoApi ? ` (${src.calicoApi})` : ''}`;
  const err = src.lastError ? ` Last error: ${src.lastError}` : '';
  if (!src.synced)
    return `Configuration: ${api}: waiting for the first sync since ${src.since} (${ago(new Date(src.since), now)}); nothing is advertised yet.${err}`;
  if (!src.connected)
    return (
      `Configuration: ${api}: UNREACHABLE since ${src.since} (` +
      `${ago(new Date(src.since), now)}); still advertising the last known configuration${src.lastSyncAt ? ` (listed ${src.lastSyncAt})` : ''}.${err}`
    );
  return `Configuration: ${api}: connected and synced since ${src.since}; ${src.watchRestarts} watch restart${src.watchRestarts === 1 ? '' : 's'}.`;
}

/** How many service IPs not advertised by rule (not-local…) `tsbgp status` lists before counting the rest. */
export const STATUS_NOT_ADVERTISED_SHOWN = 10;

export function renderStatusJson(v: StatusJson, now: Date): string {
  const rows: StatusRow[] = v.peers.map((p) => ({
    address: p.address,
    family: p.family,
    peerType: p.routeReflectorClient ? `${p.type}, rr client` : p.type,
    bgpState: p.state,
    since: new Date(p.since),
    ...(p.info ? { detail: p.info } : {}),
  }));
  const d = v.draining;
  const draining = d
    ? `\nDraining (RFC 8326, ${d.reason}): ${d.remainingSeconds > 0 ? `${d.remainingSeconds} s left` : 'drain time passed'}, then ${d.then}.`
    : '';
  const head = (v.running ? `tsbgp agent is running (node ${v.node}).` : 'tsbgp agent is stopping.') + draining;
  // An agent older than the `source` field answers without it.
  const out = [renderStatus(rows, now, v.source ? `${head}\n${renderSource(v.source, now)}` : head)];
  out.push(...renderBfd(v.peers));
  if (v.errors.length) out.push('Configuration errors:', ...v.errors.map((e) => `  ${formatError(e)}`), '');
  // An agent older than the `warnings` field answers without it.
  if (v.warnings?.length) out.push('Configuration warnings:', ...v.warnings.map((e) => `  ${formatError(e)}`), '');
  if (v.kernel) out.push(...kernelStatusText(v.kernel), '');
  // Outside the allow-list is a configuration problem: every one is listed. The
  // other reasons (not-local, not ready, node excluded) are the rules working,
  // and a large cluster has thousands: a few, then a count per reason.
  const line = (r: StatusJson['refused'][number]) => `  ${r.service} ${r.source} ${r.ip}: ${r.reason} (${r.message})`;
  const outside = v.refused.filter((r) => r.reason === 'outside allow-list');
  const others = v.refused.filter((r) => r.reason !== 'outside allow-list');
  if (outside.length) out.push('Refused advertisements (outside the allow-list):', ...outside.map(line), '');
  if (others.length) {
    const counts = new Map<string, number>();
    for (const r of others) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
    const shown = others.slice(0, STATUS_NOT_ADVERTISED_SHOWN).map(line);
    const more = others.length - shown.length;
    const summary = [...counts].map(([reason, n]) => `${reason}: ${n}`).join(', ');
    out.push(
      `Not advertised from this node (${summary}):`,
      ...shown,
      ...(more > 0 ? [`  … and ${more} more (tsbgp status --json lists them; tsbgp explain NAMESPACE/SERVICE says why)`] : []),
      '',
    );
  }
  return out.join('\n');
}
