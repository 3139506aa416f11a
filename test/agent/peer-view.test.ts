import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/index.js';
import { renderPeerDetail, statusPeerJson } from '../../src/agent/peer-view.js';
import { receivedJson, renderReceived } from '../../src/agent/received-view.js';
import { renderStatusJson } from '../../src/agent/render.js';
import type { StatusJson } from '../../src/agent/agent.js';
import type { PeerStatus } from '../../src/speaker/types.js';

const at = (hms: string) => new Date(`2026-12-03T${hms}.000Z`);
const now = at('03:10:00');
const counters = { messagesIn: 120, messagesOut: 118, updatesIn: 4, updatesOut: 3, prefixesReceived: 5, prefixesAccepted: 3, prefixesAdvertised: 7 };

const up: PeerStatus = {
  address: '192.0.2.20',
  port: 179,
  asn: 65000,
  description: 'host1',
  state: 'Established',
  since: at('01:00:00'),
  upDownSince: at('01:00:00'),
  local: { address: '192.0.2.10', port: 40123 },
  negotiated: {
    families: ['ipv4', 'ipv6'],
    holdTime: 90,
    keepaliveTime: 30,
    asn4: true,
    routeRefresh: true,
    enhancedRouteRefresh: false,
    extendedMessage: false,
    addPath: [{ family: 'ipv4', send: false, receive: true }],
    gracefulRestart: { restartTime: 120 },
    peerAsn: 65000,
    peerRouterId: '192.0.2.20',
    endOfRibReceived: ['ipv4'],
  },
  // An old error stays in lastError, but not beside Established.
  lastError: { code: 6, subcode: 6, text: 'Cease / Other Configuration Change', at: at('00:59:00'), direction: 'sent' },
  counters,
};

const down: PeerStatus = {
  address: '192.0.2.30',
  port: 179,
  asn: 65000,
  state: 'Active',
  since: at('03:09:58'),
  upDownSince: at('02:00:00'),
  downReason: { text: 'Socket: Connection refused', at: at('03:09:58') },
  counters: { ...counters, prefixesReceived: 0, prefixesAccepted: 0, prefixesAdvertised: 0 },
};

describe('tsbgp status PEER', () => {
  it('an established peer in full: uptime, hold time, capabilities, prefixes, messages, last error', () => {
    const p = statusPeerJson(up, { id: 'Global_host1', type: 'global' });
    expect([p.since, p.info]).toEqual(['2026-12-03T01:00:00.000Z', null]);
    expect(renderPeerDetail(p, now)).toBe(
      [
        'BGP peer 192.0.2.20, port 179, AS 65000 (Global_host1)',
        '  Type:             global',
        '  Description:      host1',
        '  State:            Established',
        '  Up since:         2026-12-03T01:00:00.000Z (uptime 2h 10m)',
        '  Local address:    192.0.2.10 port 40123',
        '  Neighbor AS:      65000',
        '  Neighbor ID:      192.0.2.20',
        '  Hold time:        90 s (keepalive 30 s)',
        '  Families:         ipv4, ipv6',
        '  Capabilities:     4-byte ASN, route refresh, graceful restart (120 s), ADD-PATH ipv4 receive',
        '  End-of-RIB from peer: ipv4',
        '  Prefixes:         5 received, 3 accepted (import policy), 7 advertised',
        '  Messages:         120 in (4 UPDATEs), 118 out (3 UPDATEs)',
        '  Last error:       sent Cease / Other Configuration Change at 2026-12-03T00:59:00.000Z',
        '',
      ].join('\n'),
    );
  });

  it('a down peer: the reason beside the state, down since the last up/down change, not the last retry', () => {
    const p = statusPeerJson(down, { id: 'Global_host2', type: 'global' });
    expect(renderPeerDetail(p, now)).toBe(
      [
        'BGP peer 192.0.2.30, port 179, AS 65000 (Global_host2)',
        '  Type:             global',
        '  State:            Active Socket: Connection refused',
        '  Down since:       2026-12-03T02:00:00.000Z (down for 1h 10m)',
        '  In state since:   2026-12-03T03:09:58.000Z',
        '  Prefixes:         0 received, 0 accepted (import policy), 0 advertised',
        '  Messages:         120 in (4 UPDATEs), 118 out (3 UPDATEs)',
        '  Last error:       none',
        '',
      ].join('\n'),
    );
  });
});

describe('tsbgp status', () => {
  it('INFO says why a session is down; nothing old beside Established; SINCE is the up/down change', () => {
    const v: StatusJson = {
      version: 1,
      node: 'worker1',
      running: true,
      startedAt: at('00:58:00').toISOString(),
      speaker: { asn: 64512, routerId: '192.0.2.10', listenPort: 179 },
      peers: [statusPeerJson(up, { id: 'Global_host1', type: 'global' }), statusPeerJson(down, { id: 'Global_host2', type: 'global' })],
      errors: [],
      warnings: [],
      refused: [],
      source: {
        kind: 'manifests',
        paths: ['cluster/'],
        server: null,
        calicoApi: null,
        connected: true,
        synced: true,
        since: at('00:58:00').toISOString(),
        lastSyncAt: at('00:58:00').toISOString(),
        lastError: null,
        watchRestarts: 0,
      },
    };
    expect(renderStatusJson(v, now)).toBe(
      [
        'tsbgp agent is running (node worker1).',
        'Configuration: manifests cluster/.',
        '',
        'IPv4 BGP status',
        '+--------------+-----------+-------+----------+-----------------------------------+',
        '| PEER ADDRESS | PEER TYPE | STATE |  SINCE   |               INFO                |',
        '+--------------+-----------+-------+----------+-----------------------------------+',
        '| 192.0.2.20   | global    | up    | 01:00:00 | Established                       |',
        '| 192.0.2.30   | global    | start | 02:00:00 | Active Socket: Connection refused |',
        '+--------------+-----------+-------+----------+-----------------------------------+',
        '',
        'IPv6 BGP status',
        'No IPv6 peers found.',
        '',
      ].join('\n'),
    );
  });
});

describe('tsbgp routes --received PEER', () => {
  it('every route as received, and what import policy made of it', () => {
    const route = (prefix: string, extra: object = {}) => ({
      prefix: Prefix.parse(prefix),
      nextHop: '192.0.2.20',
      asPath: [65000],
      origin: 'igp' as const,
      communities: [],
      largeCommunities: [],
      peer: '192.0.2.20',
      best: false,
      stale: false,
      ...extra,
    });
    const v = receivedJson('192.0.2.20', 'Established', [
      { route: route('198.51.100.0/24'), accepted: route('198.51.100.0/24', { best: true }) },
      {
        route: route('203.0.113.0/25', { communities: ['65000:1'] }),
        accepted: route('203.0.113.0/25', { communities: ['65000:1', '64512:100'], localPref: 200, best: true }),
      },
      { route: route('192.0.2.128/25') },
    ]);
    expect(v.counts).toEqual({ received: 3, accepted: 2, rejected: 1 });
    expect(renderReceived(v)).toBe(
      [
        'routes received from 192.0.2.20 (Established): 3 received, 2 accepted, 1 rejected by import policy',
        '  198.51.100.0/24  next hop 192.0.2.20, AS path 65000, origin igp  [best]',
        '    import: accepted',
        '  203.0.113.0/25  next hop 192.0.2.20, AS path 65000, origin igp, communities 65000:1  [best]',
        '    import: accepted, as next hop 192.0.2.20, AS path 65000, origin igp, local pref 200, communities 65000:1 64512:100',
        '  192.0.2.128/25  next hop 192.0.2.20, AS path 65000, origin igp',
        '    import: rejected',
        '',
      ].join('\n'),
    );
    expect(renderReceived(receivedJson('192.0.2.30', 'Active', []))).toBe(
      [
        'routes received from 192.0.2.30 (Active): 0 received, 0 accepted, 0 rejected by import policy',
        '  nothing received (the session is not established)',
        '',
      ].join('\n'),
    );
  });
});
