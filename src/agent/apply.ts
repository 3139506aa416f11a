/** Carries reconcile operations out on a speaker, in an order that never leaves a gap. */
import type { SpeakerApi } from '../speaker/index.js';
import type { Operations } from '../kubernetes/index.js';

export interface ApplyFailure {
  readonly op: string;
  readonly target: string;
  readonly message: string;
}

/**
 * Originate before withdraw (a replaced route is never briefly absent), peers
 * removed last (their withdrawals go out first). A failing call is reported
 * and the rest still run.
 */
export async function applyOperations(speaker: SpeakerApi, ops: Operations): Promise<ApplyFailure[]> {
  const failures: ApplyFailure[] = [];
  const attempt = async (op: string, target: string, fn: () => unknown) => {
    try {
      await fn();
    } catch (e) {
      failures.push({ op, target, message: e instanceof Error ? e.message : String(e) });
    }
  };
  for (const r of ops.originate) await attempt('originate', r.prefix.toString(), () => speaker.originate(r.prefix, r.attrs));
  for (const p of ops.withdraw) await attempt('withdraw', p.toString(), () => speaker.withdraw(p));
  for (const p of ops.addPeers) await attempt('addPeer', p.options.address, () => speaker.addPeer(p.options));
  for (const p of ops.updatePeers) await attempt('updatePeer', p.options.address, () => speaker.updatePeer(p.options));
  for (const a of ops.removePeers) await attempt('removePeer', a, () => speaker.removePeer(a, { message: 'peer removed from configuration' }));
  return failures;
}
