import { describe, expect, it } from 'vitest';
import { renderStatus, sinceText, stateWord } from '../../src/agent/status-table.js';

describe('status table', () => {
  const now = new Date('2026-12-02T21:52:18Z');

  it('renders the calicoctl node status layout', () => {
    const text = renderStatus(
      [
        { address: '192.0.2.11', family: 4, peerType: 'node-to-node mesh', bgpState: 'Established', since: new Date('2026-11-30T10:00:00Z') },
        { address: '192.0.2.20', family: 4, peerType: 'global', bgpState: 'Established', since: new Date('2026-12-02T21:52:18Z') },
      ],
      now,
    );
    expect(text).toBe(
      [
        'tsbgp agent is running.',
        '',
        'IPv4 BGP status',
        '+--------------+-------------------+-------+------------+-------------+',
        '| PEER ADDRESS |     PEER TYPE     | STATE |   SINCE    |    INFO     |',
        '+--------------+-------------------+-------+------------+-------------+',
        '| 192.0.2.11   | node-to-node mesh | up    | 2026-11-30 | Established |',
        '| 192.0.2.20   | global            | up    | 21:52:18   | Established |',
        '+--------------+-------------------+-------+------------+-------------+',
        '',
        'IPv6 BGP status',
        'No IPv6 peers found.',
        '',
      ].join('\n'),
    );
  });

  it('shows state words and details as Calico does', () => {
    expect(stateWord('Established')).toBe('up');
    expect(stateWord('Active')).toBe('start');
    expect(stateWord('Idle')).toBe('down');
    expect(stateWord('OpenSent')).toBe('wait');
    expect(sinceText(new Date('2026-12-02T01:02:03Z'), now)).toBe('01:02:03');
    const text = renderStatus(
      [{ address: '2001:db8::1', family: 6, peerType: 'global', bgpState: 'Active', since: now, detail: 'Socket: Connection refused' }],
      now,
    );
    expect(text).toContain('| 2001:db8::1  | global    | start | 21:52:18 | Active Socket: Connection refused |');
    expect(text).toContain('No IPv4 peers found.');
  });
});
