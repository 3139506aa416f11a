/**
 * BFD in the agent's views: the `bfd` part of a peer in `tsbgp status`
 * (JSON and text); its Prometheus series are in bfd-metrics.ts (loaded with
 * prom-client, only with --metrics). Small on purpose; the numbers come from
 * the speaker's PeerStatus.bfd.
 */
import type { PeerBfdStatus } from '../speaker/index.js';

export interface BfdJson {
  readonly state: PeerBfdStatus['state'];
  readonly remoteState: string | null;
  readonly txIntervalMs: number;
  readonly detectionTimeMs: number;
  readonly remoteMultiplier: number | null;
  readonly desired: PeerBfdStatus['desired'];
  readonly lastDiag: string | null;
  /**
   * The last time the session left Up (issue 32): times ISO 8601; `pathFailure` false when the BGP
   * session was kept (the remote went AdminDown or restarted its session).
   */
  readonly lastDown: {
    readonly at: string;
    readonly upSince: string;
    readonly diag: string;
    readonly remoteState: string;
    readonly remoteDiag: string;
    readonly lastPacketAt: string | null;
    readonly detectionTimeMs: number;
    readonly pathFailure: boolean;
  } | null;
  readonly error: string | null;
  /** RFC 5881 §5: received TTL 255 enforced (a kernel socket filter), or why not; datagrams the kernel dropped on the BFD sockets (all peers). */
  readonly receivedTtl: { readonly checked: boolean; readonly reason: string | null; readonly kernelDrops: number | null } | null;
}

export function bfdJson(b: PeerBfdStatus): BfdJson {
  return {
    state: b.state,
    remoteState: b.remoteState ?? null,
    txIntervalMs: b.txIntervalMs,
    detectionTimeMs: b.detectionTimeMs,
    remoteMultiplier: b.remoteMultiplier ?? null,
    desired: b.desired,
    lastDiag: b.lastDiag.code === 0 ? null : b.lastDiag.text,
    lastDown: b.lastDown
      ? {
          at: b.lastDown.at.toISOString(),
          upSince: b.lastDown.upSince.toISOString(),
          diag: b.lastDown.diag.text,
          remoteState: b.lastDown.remoteState,
          remoteDiag: b.lastDown.remoteDiag.text,
          lastPacketAt: b.lastDown.lastPacketAt?.toISOString() ?? null,
          detectionTimeMs: b.lastDown.detectionTimeMs,
          pathFailure: !b.lastDown.remoteAdminDown && !b.lastDown.remoteRestarted,
        }
      : null,
    error: b.error ?? null,
    receivedTtl: b.receivedTtl
      ? { checked: b.receivedTtl.checked, reason: b.receivedTtl.reason ?? null, kernelDrops: b.receivedTtl.kernelDrops ?? null }
      : null,
  };
}

/** `tsbgp status`: one line per peer with BFD, under the BGP tables. */
export function renderBfd(peers: readonly { readonly address: string; readonly bfd?: BfdJson }[]): string[] {
  const rows = peers.filter((p) => p.bfd !== undefined);
  if (rows.length === 0) return [];
  const line = ({ address, bfd: b }: { address: string; bfd?: BfdJson }): string => {
    const x = b!;
    if (x.state === 'Unavailable') return `  ${address}: BFD unavailable: ${x.error ?? 'unknown reason'}`;
    const nego =
      x.detectionTimeMs > 0
        ? `tx ${x.txIntervalMs} ms, detect ${x.detectionTimeMs} ms (remote ×${x.remoteMultiplier})`
        : `tx ${x.txIntervalMs} ms, not heard from yet`;
    const d = x.lastDown;
    const heard = d?.lastPacketAt ? `, last packet ${Date.parse(d.at) - Date.parse(d.lastPacketAt)} ms before` : '';
    const last = d
      ? `; last down: ${d.diag} at ${d.at} (remote ${d.remoteState}: ${d.remoteDiag}${heard}${d.pathFailure ? '' : '; BGP kept'})`
      : x.lastDiag
        ? `; last down: ${x.lastDiag}`
        : '';
    const remote = x.remoteState ? ` (remote ${x.remoteState})` : '';
    return `  ${address}: ${x.state}${remote}, ${nego}; wanted ${x.desired.minTxMs}/${x.desired.minRxMs} ms ×${x.desired.multiplier}${last}`;
  };
  // one process-wide fact, shown once
  const ttl = rows.find((p) => p.bfd!.receivedTtl !== null)?.bfd!.receivedTtl;
  const drops = ttl?.kernelDrops ? `; ${ttl.kernelDrops} datagrams dropped by the kernel (TTL not 255, or a full buffer)` : '';
  const ttlNote =
    ttl === undefined || ttl === null
      ? []
      : ttl.checked
        ? [`  (received TTL / hop limit 255 enforced${drops})`]
        : [`  (received TTL NOT checked: ${ttl.reason ?? 'unknown reason'}${drops})`];
  return ['BFD sessions:', ...rows.map(line), ...ttlNote, ''];
}
