import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/agent/log.js';
import { SessionLog } from '../../src/agent/session-log.js';
import type { PeerState, PeerStatus } from '../../src/speaker/types.js';

const counters = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0, prefixesReceived: 0, prefixesAccepted: 0, prefixesAdvertised: 0 };

function harness(level: 'info' | 'debug' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level, write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>), now: () => new Date(0) });
  const sl = new SessionLog(log, 300_000);
  const st = (address: string, state: PeerState, reason?: string, upDownSince = new Date(0)): PeerStatus => ({
    address,
    port: 179,
    asn: 65000,
    state,
    since: new Date(0),
    upDownSince,
    counters,
    ...(reason ? { downReason: { text: reason, at: new Date(0) } } : {}),
  });
  return { lines, sl, st };
}

describe('SessionLog', () => {
  it('three unreachable peers for 160 s: one line each at info, retries only at debug', () => {
    const { lines, sl, st } = harness();
    const peers = ['192.0.2.21', '192.0.2.22', '192.0.2.23'];
    // Each retry: Idle/Active → Connect (no reason yet on the first), then Connect → Active with the connect error.
    for (let t = 0; t <= 160_000; t += 2_000) {
      for (const p of peers) {
        sl.observe(st(p, 'Connect', t === 0 ? undefined : 'Socket: Connection refused'), t === 0 ? 'Idle' : 'Active', t);
        sl.observe(st(p, 'Active', 'Socket: Connection refused'), 'Connect', t + 1);
      }
    }
    expect(lines).toEqual(
      peers.map((peer) => ({
        time: '1970-01-01T00:00:00.000Z',
        level: 'info',
        msg: 'BGP session not established',
        peer,
        state: 'Active',
        reason: 'Socket: Connection refused',
      })),
    );
  });

  it('down once with its reason, a summary every 5 minutes, another reason at info, up again at info', () => {
    const { lines, sl, st } = harness();
    const p = '192.0.2.20';
    sl.observe(st(p, 'Established'), 'OpenConfirm', 0);
    sl.observe(st(p, 'Idle', 'Received: Cease / Administrative Shutdown', new Date(1000)), 'Established', 1_000);
    for (let t = 2_000; t < 450_000; t += 5_000) {
      // Alternating between the old and the new reason logs each once.
      sl.observe(st(p, 'Connect', 'Received: Cease / Administrative Shutdown', new Date(1000)), 'Active', t);
      sl.observe(st(p, 'Active', t < 100_000 ? 'Received: Cease / Administrative Shutdown' : 'Socket: Connection refused', new Date(1000)), 'Connect', t + 1);
    }
    sl.observe(st(p, 'Established'), 'OpenConfirm', 450_000);
    expect(lines.map((l) => [l.level, l.msg, l.reason ?? null, l.retries ?? null])).toEqual([
      ['info', 'BGP session established', null, null],
      ['warning', 'BGP session down', 'Received: Cease / Administrative Shutdown', null],
      ['info', 'BGP session still down, for another reason', 'Socket: Connection refused', null],
      // 5 minutes after the reason changed (at 102.001 s): 81 retries by then.
      ['info', 'BGP session still down', 'Socket: Connection refused', 81],
      ['info', 'BGP session established', null, 90],
    ]);
  });

  it('a removed peer is forgotten: re-added, it is not "down"', () => {
    const { lines, sl, st } = harness();
    sl.observe(st('192.0.2.20', 'Established'), 'OpenConfirm', 0);
    sl.forget('192.0.2.20');
    sl.observe(st('192.0.2.20', 'Connect'), 'Idle', 10);
    expect(lines.map((l) => l.msg)).toEqual(['BGP session established']);
  });
});
