/**
 * One peer as `tsbgp status` shows it: the table row (calicoctl's columns)
 * and the detail view (`tsbgp status PEER`, like `birdc show protocols all`
 * or `gobgp neighbor ADDR`), from the speaker's status snapshot. O(1) per
 * peer: counters, never route lists.
 */
import type { PeerState, PeerStatus } from '../speaker/index.js';
import { ago } from './ago.js';
import { bfdJson, type BfdJson } from './bfd-view.js';

export interface PeerDetailJson {
  /** When the current FSM state (Connect, Active…) was entered; `since` is the last up/down change. */
  readonly stateSince: string;
  readonly description: string | null;
  /** Our end of the established TCP session. */
  readonly local: { readonly address: string; readonly port: number } | null;
  /** What the OPENs negotiated (the session is Established), else `null`. */
  readonly negotiated: {
    readonly peerAsn: number;
    readonly peerRouterId: string;
    readonly holdTime: number;
    readonly keepaliveTime: number;
    readonly families: readonly string[];
    /** Capabilities both sides agreed on, as words: `4-byte ASN`, `route refresh`, `graceful restart (120 s)`… */
    readonly capabilities: readonly string[];
    readonly endOfRibReceived: readonly string[];
  } | null;
  readonly messages: { readonly in: number; readonly out: number; readonly updatesIn: number; readonly updatesOut: number };
  readonly prefixes: { readonly received: number; readonly accepted: number; readonly advertised: number };
  /** The last NOTIFICATION sent or received (or a lost connection), whatever the state now. */
  readonly lastError: {
    readonly text: string;
    readonly direction: 'sent' | 'received' | 'local';
    readonly code: number;
    readonly subcode: number;
    readonly at: string;
  } | null;
}

export interface StatusPeerJson {
  readonly id: string | null;
  readonly address: string;
  readonly port: number;
  readonly asn: number | 'any';
  readonly family: 4 | 6;
  readonly type: string;
  /** This node reflects routes to the peer (added compatibly to version 1). */
  readonly routeReflectorClient?: boolean;
  readonly state: PeerState;
  /** When the session last went up or down (connect retries do not move it). */
  readonly since: string;
  /** Why it is not Established (the reason of the current state), `null` while Established. */
  readonly info: string | null;
  readonly refused: boolean;
  /** Added compatibly to version 1; absent for peers not started. */
  readonly detail?: PeerDetailJson;
  /** The peer's BFD session, when it has one (added compatibly to version 1). */
  readonly bfd?: BfdJson;
}

function capabilities(n: NonNullable<PeerStatus['negotiated']>): string[] {
  const out: string[] = [];
  if (n.asn4) out.push('4-byte ASN');
  if (n.routeRefresh) out.push('route refresh');
  if (n.enhancedRouteRefresh) out.push('enhanced route refresh');
  if (n.extendedMessage) out.push('extended message');
  if (n.gracefulRestart) out.push(`graceful restart (${n.gracefulRestart.restartTime} s)`);
  for (const a of n.addPath) out.push(`ADD-PATH ${a.family} ${a.send && a.receive ? 'send/receive' : a.send ? 'send' : 'receive'}`);
  return out;
}

/** The speaker's snapshot of one peer → its `status --json` entry. */
export function statusPeerJson(
  s: PeerStatus,
  planned: { readonly id: string; readonly type: string; readonly routeReflectorClient?: boolean } | undefined,
): StatusPeerJson {
  const n = s.state === 'Established' ? s.negotiated : undefined;
  const c = s.counters;
  const e = s.lastError;
  return {
    id: planned?.id ?? null,
    address: s.address,
    port: s.port,
    asn: s.asn,
    family: s.address.includes(':') ? 6 : 4,
    type: planned?.type ?? 'unknown',
    routeReflectorClient: planned?.routeReflectorClient ?? false,
    state: s.state,
    // A speaker without up/down tracking (a test fake) reports only when the state was entered.
    since: (s.upDownSince ?? s.since).toISOString(),
    info: s.state === 'Established' ? null : (s.hint ?? s.downReason?.text ?? null),
    refused: false,
    ...(s.bfd ? { bfd: bfdJson(s.bfd) } : {}),
    detail: {
      stateSince: s.since.toISOString(),
      description: s.description ?? null,
      local: s.local ? { ...s.local } : null,
      negotiated: n
        ? {
            peerAsn: n.peerAsn,
            peerRouterId: n.peerRouterId,
            holdTime: n.holdTime,
            keepaliveTime: n.keepaliveTime,
            families: [...n.families],
            capabilities: capabilities(n),
            endOfRibReceived: [...n.endOfRibReceived],
          }
        : null,
      messages: { in: c.messagesIn, out: c.messagesOut, updatesIn: c.updatesIn, updatesOut: c.updatesOut },
      prefixes: { received: c.prefixesReceived, accepted: c.prefixesAccepted, advertised: c.prefixesAdvertised },
      lastError: e ? { text: e.text, direction: e.direction, code: e.code, subcode: e.subcode, at: e.at.toISOString() } : null,
    },
  };
}

/** `tsbgp status PEER`: one peer in full, like `birdc show protocols all NAME`. */
export function renderPeerDetail(p: StatusPeerJson, now: Date): string {
  const d = p.detail;
  const since = new Date(p.since);
  const up = p.state === 'Established';
  const lines = [
    `BGP peer ${p.address}, port ${p.port}, AS ${p.asn}${p.id ? ` (${p.id})` : ''}`,
    `  Type:             ${p.type}`,
    ...(d?.description ? [`  Description:      ${d.description}`] : []),
    `  State:            ${p.state}${p.info ? ` ${p.info}` : ''}`,
    `  ${up ? 'Up since:        ' : 'Down since:      '} ${p.since} (${up ? 'uptime' : 'down for'} ${ago(since, now)})`,
  ];
  if (p.refused || !d) return [...lines, ''].join('\n');
  if (!up) lines.push(`  In state since:   ${d.stateSince}`);
  if (d.local) lines.push(`  Local address:    ${d.local.address} port ${d.local.port}`);
  const n = d.negotiated;
  if (n) {
    lines.push(
      `  Neighbor AS:      ${n.peerAsn}`,
      `  Neighbor ID:      ${n.peerRouterId}`,
      `  Hold time:        ${n.holdTime} s (keepalive ${n.keepaliveTime} s)`,
      `  Families:         ${n.families.join(', ') || 'none'}`,
      `  Capabilities:     ${n.capabilities.join(', ') || 'none'}`,
      `  End-of-RIB from peer: ${n.endOfRibReceived.join(', ') || 'none yet'}`,
    );
  }
  lines.push(
    `  Prefixes:         ${d.prefixes.received} received, ${d.prefixes.accepted} accepted (import policy), ${d.prefixes.advertised} advertised`,
    `  Messages:         ${d.messages.in} in (${d.messages.updatesIn} UPDATEs), ${d.messages.out} out (${d.messages.updatesOut} UPDATEs)`,
    `  Last error:       ${
      d.lastError ? `${d.lastError.direction === 'local' ? '' : `${d.lastError.direction} `}` + `${d.lastError.text} at ${d.lastError.at}` : 'none'
    }`,
    '',
  );
  return lines.join('\n');
}
