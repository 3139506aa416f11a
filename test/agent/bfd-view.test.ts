import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BfdMetrics } from '../../src/agent/bfd-metrics.js';
import { bfdJson, renderBfd } from '../../src/agent/bfd-view.js';
import type { PeerBfdStatus, PeerStatus } from '../../src/speaker/types.js';

const bfd = (over: Partial<PeerBfdStatus> = {}): PeerBfdStatus => ({
  state: 'Up',
  remoteState: 'Up',
  desired: { minTxMs: 300, minRxMs: 300, multiplier: 3, passive: false },
  txIntervalMs: 300,
  detectionTimeMs: 900,
  remoteMultiplier: 3,
  lastDiag: { code: 1, text: 'Control Detection Time Expired' },
  counters: { stateChanges: 3, upTransitions: 2, downTransitions: 1, packetsIn: 10, packetsOut: 10, discarded: 0 },
  ...over,
});
const peer = (address: string, b?: PeerBfdStatus): PeerStatus => ({
  address,
  port: 179,
  asn: 65000,
  state: 'Established',
  since: new Date(0),
  counters: { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0, prefixesReceived: 0, prefixesAccepted: 0, prefixesAdvertised: 0 },
  ...(b ? { bfd: b } : {}),
});

describe('BFD in tsbgp status', () => {
  it('one line per peer with BFD: state, negotiated intervals, last diagnostic', () => {
    const lines = renderBfd([
      { address: '192.0.2.1', bfd: bfdJson(bfd()) },
      { address: '192.0.2.2' },
      {
        address: '192.0.2.3',
        bfd: bfdJson(bfd({ state: 'Down', remoteState: undefined, detectionTimeMs: 0, txIntervalMs: 1000, lastDiag: { code: 0, text: 'No Diagnostic' } })),
      },
      { address: '192.0.2.4', bfd: bfdJson(bfd({ state: 'Unavailable', error: 'cannot listen for BFD on [0.0.0.0]:3784: EADDRINUSE' })) },
    ]);
    expect(lines).toEqual([
      'BFD sessions:',
      '  192.0.2.1: Up (remote Up), tx 300 ms, detect 900 ms (remote ×3); wanted 300/300 ms ×3; last down: Control Detection Time Expired',
      '  192.0.2.3: Down, tx 1000 ms, not heard from yet; wanted 300/300 ms ×3',
      '  192.0.2.4: BFD unavailable: cannot listen for BFD on [0.0.0.0]:3784: EADDRINUSE',
      '',
    ]);
    expect(renderBfd([{ address: '192.0.2.2' }])).toEqual([]);
  });

  it("keeps the last down whole: when, both sides' diagnostics, the last packet before it (issue 32)", () => {
    const b = bfdJson(
      bfd({
        lastDown: {
          at: new Date('2026-12-06T03:10:03.300Z'),
          upSince: new Date('2026-12-06T03:09:58.000Z'),
          to: 'Down',
          diag: { code: 1, text: 'Control Detection Time Expired' },
          remoteState: 'Up',
          remoteDiag: { code: 0, text: 'No Diagnostic' },
          lastPacketAt: new Date('2026-12-06T03:10:02.395Z'),
          detectionTimeMs: 900,
          remoteAdminDown: false,
          remoteRestarted: false,
        },
      }),
    );
    expect(b.lastDown).toEqual({
      at: '2026-12-06T03:10:03.300Z',
      upSince: '2026-12-06T03:09:58.000Z',
      diag: 'Control Detection Time Expired',
      remoteState: 'Up',
      remoteDiag: 'No Diagnostic',
      lastPacketAt: '2026-12-06T03:10:02.395Z',
      detectionTimeMs: 900,
      pathFailure: true,
    });
    expect(renderBfd([{ address: '192.0.2.1', bfd: b }])[1]).toBe(
      '  192.0.2.1: Up (remote Up), tx 300 ms, detect 900 ms (remote ×3); wanted 300/300 ms ×3; last down: Control Detection Time Expired at 2026-12-06T03:10:03.300Z (remote Up: No Diagnostic, last packet 905 ms before)',
    );
    const replaced = bfdJson(
      bfd({
        lastDown: {
          at: new Date(5000),
          upSince: new Date(0),
          to: 'Down',
          diag: { code: 3, text: 'Neighbor Signaled Session Down' },
          remoteState: 'Down',
          remoteDiag: { code: 0, text: 'No Diagnostic' },
          detectionTimeMs: 900,
          remoteAdminDown: false,
          remoteRestarted: true,
        },
      }),
    );
    expect(replaced.lastDown).toMatchObject({ lastPacketAt: null, pathFailure: false });
    expect(renderBfd([{ address: '192.0.2.1', bfd: replaced }])[1]).toMatch(
      /last down: Neighbor Signaled Session Down at 1970-01-01T00:00:05\.000Z \(remote Down: No Diagnostic; BGP kept\)$/,
    );
    expect(bfdJson(bfd()).lastDown).toBeNull();
  });

  it('says once whether the received TTL is checked (RFC 5881 §5), and what the kernel dropped', () => {
    const checked = bfd({ receivedTtl: { checked: true, kernelDrops: 7 } });
    expect(bfdJson(checked).receivedTtl).toEqual({ checked: true, reason: null, kernelDrops: 7 });
    expect(
      renderBfd([
        { address: '192.0.2.1', bfd: bfdJson(checked) },
        { address: '192.0.2.3', bfd: bfdJson(checked) },
      ]),
    ).toEqual([
      'BFD sessions:',
      '  192.0.2.1: Up (remote Up), tx 300 ms, detect 900 ms (remote ×3); wanted 300/300 ms ×3; last down: Control Detection Time Expired',
      '  192.0.2.3: Up (remote Up), tx 300 ms, detect 900 ms (remote ×3); wanted 300/300 ms ×3; last down: Control Detection Time Expired',
      '  (received TTL / hop limit 255 enforced; 7 datagrams dropped by the kernel (TTL not 255, or a full buffer))',
      '',
    ]);
    const unchecked = bfdJson(bfd({ receivedTtl: { checked: false, reason: '[0.0.0.0]: cannot load the FFI package koffi' } }));
    expect(unchecked.receivedTtl).toEqual({ checked: false, reason: '[0.0.0.0]: cannot load the FFI package koffi', kernelDrops: null });
    expect(renderBfd([{ address: '192.0.2.1', bfd: unchecked }]).at(-2)).toBe('  (received TTL NOT checked: [0.0.0.0]: cannot load the FFI package koffi)');
    expect(bfdJson(bfd()).receivedTtl).toBeNull();
  });

  it('metrics: state gauge, up/down transitions as counters from the snapshots, series dropped with the peer', async () => {
    const reg = new Registry();
    const m = new BfdMetrics([reg]);
    m.update([peer('192.0.2.1', bfd()), peer('192.0.2.2')]);
    m.update([
      peer('192.0.2.1', bfd({ state: 'Down', counters: { stateChanges: 4, upTransitions: 2, downTransitions: 2, packetsIn: 0, packetsOut: 0, discarded: 0 } })),
    ]);
    const text = await reg.metrics();
    expect(text).toContain('tsbgp_bfd_state_changes_total{peer="192.0.2.1",to="up"} 2');
    expect(text).toContain('tsbgp_bfd_state_changes_total{peer="192.0.2.1",to="down"} 2');
    expect(text).toContain('tsbgp_bfd_session_state{peer="192.0.2.1",state="Down"} 1');
    expect(text).toContain('tsbgp_bfd_session_state{peer="192.0.2.1",state="Up"} 0');
    expect(text).toContain('tsbgp_bfd_detection_time_seconds{peer="192.0.2.1"} 0.9');
    expect(text).not.toContain('192.0.2.2');
    m.update([]);
    expect(await reg.metrics()).not.toContain('peer="192.0.2.1"');
    m.update([
      peer('192.0.2.1', bfd({ receivedTtl: { checked: true, kernelDrops: 4 } })),
      peer('192.0.2.5', bfd({ receivedTtl: { checked: true, kernelDrops: 4 } })),
    ]);
    m.update([peer('192.0.2.1', bfd({ receivedTtl: { checked: true, kernelDrops: 6 } }))]);
    const t2 = await reg.metrics();
    expect(t2).toContain('tsbgp_bfd_kernel_drops_total 6');
    expect(t2).toContain('tsbgp_bfd_received_ttl_checked 1');
  });
});
