/**
 * BFD's Prometheus series (split from bfd-view.ts so that the status views
 * do not load prom-client: it loads only with --metrics, through metrics.ts).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PeerBfdStatus, PeerStatus } from '../speaker/index.js';
import { counterDelta } from './counter-delta.js';

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
    this.state = new Gauge({
      name: 'tsbgp_bfd_session_state',
      help: 'BFD session state per peer: 1 for the current state, 0 for the others',
      labelNames: ['peer', 'state'],
      registers,
    });
    this.changes = new Counter({
      name: 'tsbgp_bfd_state_changes_total',
      help: 'BFD sessions reaching Up (to="up") and leaving Up (to="down")',
      labelNames: ['peer', 'to'],
      registers,
    });
    this.detection = new Gauge({
      name: 'tsbgp_bfd_detection_time_seconds',
      help: 'Negotiated BFD detection time (0 until the peer is heard)',
      labelNames: ['peer'],
      registers,
    });
    this.ttlChecked = new Gauge({
      name: 'tsbgp_bfd_received_ttl_checked',
      help: 'BFD packets must arrive with TTL / hop limit 255, enforced by a kernel socket filter (1), or the check could not be set up (0, see tsbgp status)',
      registers,
    });
    this.kernelDrops = new Counter({
      name: 'tsbgp_bfd_kernel_drops_total',
      help: 'Datagrams the kernel dropped on the BFD receive sockets: TTL / hop limit not 255 (RFC 5881 section 5), or a full receive buffer',
      registers,
    });
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
