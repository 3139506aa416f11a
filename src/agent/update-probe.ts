/**
 * When did a change leave for the wire? The speaker coalesces originate and
 * withdraw calls and writes the packed UPDATEs to the peers' sockets from a
 * timer callback of its scheduler. Wrapping that scheduler lets the agent
 * look, right after each callback, whether a peer's UPDATE counter moved
 * since the change was handed to the speaker: that moment ends the
 * `tsbgp_update_latency_seconds` measurement (event → UPDATE on the socket).
 */
import type { PeerStatus, SpeakerScheduler } from '../speaker/index.js';

/** The real clock and timers, as the speaker's own default. */
export const realScheduler: SpeakerScheduler = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** `base`, calling `after()` once each timer callback has run (also when it threw). */
export function observedScheduler(base: SpeakerScheduler, after: () => void): SpeakerScheduler {
  return {
    now: () => base.now(),
    setTimeout: (fn, ms) =>
      base.setTimeout(() => {
        try {
          fn();
        } finally {
          after();
        }
      }, ms),
    clearTimeout: (h) => base.clearTimeout(h),
  };
}

/** UPDATEs sent so far, per established peer. */
function updateCounts(status: readonly PeerStatus[]): Map<string, number> {
  return new Map(status.filter((s) => s.state === 'Established').map((s) => [s.address, s.counters.updatesOut]));
}

/** Whether any peer established at `baseline` time has sent an UPDATE since. */
export function updateSentSince(baseline: ReadonlyMap<string, number>, status: readonly PeerStatus[]): boolean {
  return status.some((s) => {
    const before = baseline.get(s.address);
    return before !== undefined && s.counters.updatesOut > before;
  });
}

/**
 * One measurement at a time: `arm` when route changes were handed to the
 * speaker with a session up; `check` after every scheduler callback reports
 * `sent` once an UPDATE went out, or `abandoned` after `timeoutMs` (the change
 * was filtered from every peer, or the sessions went down meanwhile).
 */
export class UpdateProbe {
  private baseline?: Map<string, number>;
  private armedAt = 0;

  constructor(
    private readonly status: () => readonly PeerStatus[],
    private readonly now: () => number,
    private readonly timeoutMs = 5000,
  ) {}

  get armed(): boolean {
    return this.baseline !== undefined;
  }

  /** Starts a measurement unless one is running or no session is up. Returns whether it is armed. */
  arm(): boolean {
    if (this.baseline) return true;
    const counts = updateCounts(this.status());
    if (counts.size === 0) return false;
    this.baseline = counts;
    this.armedAt = this.now();
    return true;
  }

  check(): 'sent' | 'abandoned' | 'waiting' | 'idle' {
    if (!this.baseline) return 'idle';
    if (updateSentSince(this.baseline, this.status())) {
      this.baseline = undefined;
      return 'sent';
    }
    if (this.now() - this.armedAt > this.timeoutMs) {
      this.baseline = undefined;
      return 'abandoned';
    }
    return 'waiting';
  }
}
