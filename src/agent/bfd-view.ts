/**
 * BFD in the agent's views: the `bfd` part of a peer in `tsbgp status`
 * (JSON and text) and its Prometheus series. Small on purpose; the
 * numbers come from the speaker's PeerStatus.bfd.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PeerBfdStatus, PeerStatus } from '../speaker/types.js';
import { counterDelta } from './metrics.js';

export interface BfdJson {
  readonly state: PeerBfdStatus['state'];
  readonly remoteState: string | null;
  readonly txIntervalMs: number;
  readonly detectionTimeMs: number;
  readonly remoteMultiplier: number | null;
  readonly desired: PeerBfdStatus['desired'];
  readonly lastDiag: string | null;
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
    error: b.error ?? null,
    receivedTtl: b.receivedTtl ? { checked: b.receivedTtl.checked, reason: b.receivedTtl.reason ?? null, kernelDrops: b.receivedTtl.kernelDrops ?? null } : null,
  };
}

/** `tsbgp status`: one line per peer with BFD, under the BGP tables. */
export function renderBfd(peers: readonly { readonly address: string; readonly bfd?: BfdJson }[]): string[] {
  const rows = peers.filter((p) => p.bfd !== undefined);
  if (rows.length === 0) return [];
  const line = ({ address, bfd: b }: { address: string; bfd?: BfdJson }): string => {
    const x = b!;
    if (x.state === 'Unavailable') return `  ${address}: BFD unavailable: ${x.error ?? 'unknown reason'}`;
    const nego = x.detectionTimeMs > 0 ? `tx ${x.txIntervalMs} ms, detect ${x.detectionTimeMs} ms (remote ×${x.remoteMultiplier})` : `tx ${x.txIntervalMs} ms, not heard from yet`;
    return `  ${address}: ${x.state}${x.remoteState ? ` (remote ${x.remoteState})` : ''}, ${nego}; wanted ${x.desired.minTxMs}/${x.desired.minRxMs} ms ×${x.desired.multiplier}${x.lastDiag ? `; last down: ${x.lastDiag}` : ''}`;
  };
  // one process-wide fact, shown once
  const ttl = rows.find((p) => p.bfd!.receivedTtl !== null)?.bfd!.receivedTtl;
  const drops = ttl?.kernelDrops ? `; ${ttl.kernelDrops} datagrams dropped by the kernel (TTL not 255, or a full buffer)` : '';
  const ttlNote = ttl === undefined || ttl === null ? [] : ttl.checked ? [`  (received TTL / hop limit 255 enforced${drops})`] : [`  (received TTL NOT checked: ${ttl.reason ?? 'unknown reason'}${drops})`];
  return ['BFD sessions:', ...rows.map(line), ...ttlNote, ''];
}

/** tsbgp_bfd_session_state{peer,state} and tsbgp_bfd_state_changes_total{peer,to}. */
export class BfdMetrics {
  private readonly state: Gauge<'peer' | 'state'>;
  private readonly changes: Counter<'peer' | 'to'>;
  private readonly detection: Gauge<'peer'>;
  private readonly ttlChecked: Gauge;
  private readonly kernelDrops: Counter;
  private lastDrops: number | undefined;
  private last = new Map<string, { up: number; down: number }>();
  private static readonly STATES: readonly PeerBfdStatus['state'][] = ['AdminDown', 'Down', 'Init', 'Up', 'Unavailable'];

  constructor(registers: Registry[]) {
    this.state = new Gauge({ name: 'tsbgp_bfd_session_state', help: 'BFD session state per peer: 1 for the current state, 0 for the others', labelNames: ['peer', 'state'], registers });
    this.changes = new Counter({ name: 'tsbgp_bfd_state_changes_total', help: 'BFD sessions reaching Up (to="up") and leaving Up (to="down")', labelNames: ['peer', 'to'], registers });
    this.detection = new Gauge({ name: 'tsbgp_bfd_detection_time_seconds', help: 'Negotiated BFD detection time (0 until the peer is heard)', labelNames: ['peer'], registers });
    this.ttlChecked = new Gauge({ name: 'tsbgp_bfd_received_ttl_checked', help: 'BFD packets must arrive with TTL / hop limit 255, enforced by a kernel socket filter (1), or the check could not be set up (0, see tsbgp status)', registers });
    this.kernelDrops = new Counter({ name: 'tsbgp_bfd_kernel_drops_total', help: 'Datagrams the kernel dropped on the BFD receive sockets: TTL / hop limit not 255 (RFC 5881 section 5), or a full receive buffer', registers });
  }

  update(statuses: readonly PeerStatus[]): void {
    const seen = new Map<string, { up: number; down: number }>();
    let ttl: PeerBfdStatus['receivedTtl'];
    for (const st of statuses) {
      const b = st.bfd;
      if (!b) continue;
      ttl ??= b.receivedTtl;
      const peer = st.address;
      for (const s of BfdMetrics.STATES) this.state.set({ peer, state: s }, s === b.state ? 1 : 0);
      this.detection.set({ peer }, b.detectionTimeMs / 1000);
      const cur = { up: b.counters?.upTransitions ?? 0, down: b.counters?.downTransitions ?? 0 };
      const old = this.last.get(peer);
      this.changes.inc({ peer, to: 'up' }, counterDelta(old?.up, cur.up));
      this.changes.inc({ peer, to: 'down' }, counterDelta(old?.down, cur.down));
      seen.set(peer, cur);
    }
    for (const peer of this.last.keys()) {
      if (seen.has(peer)) continue;
      for (const s of BfdMetrics.STATES) this.state.remove({ peer, state: s });
      this.detection.remove({ peer });
      this.changes.remove({ peer, to: 'up' });
      this.changes.remove({ peer, to: 'down' });
    }
    this.last = seen;
    // process-wide: the same on every peer
    if (ttl !== undefined) {
      this.ttlChecked.set(ttl.checked ? 1 : 0);
      if (ttl.kernelDrops !== undefined) {
        this.kernelDrops.inc(counterDelta(this.lastDrops, ttl.kernelDrops));
        this.lastDrops = ttl.kernelDrops;
      }
    }
  }
}
