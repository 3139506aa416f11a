import { describe, expect, it } from 'vitest';
import { peerOptions, reconcile } from '../../src/kubernetes/reconcile.js';
import { Address } from '../../src/net/index.js';
import { sessionKey } from '../../src/speaker/peer-config.js';
import { peer, plan, route } from '../agent/plans.js';

describe('peerOptions', () => {
  it('maps every planned setting onto the speaker options', () => {
    const o = peerOptions(
      peer('192.0.2.20', {
        port: 1790,
        asn: 65001,
        localAsn: 64600,
        passive: true,
        maxRestartTime: 300,
        routeReflectorClient: true,
        nextHopMode: 'Keep',
        numAllowedLocalASNumbers: 2,
        sourceAddress: Address.parse('192.0.2.1'),
        keepaliveTime: 20,
      }),
    );
    expect(o).toEqual({
      address: '192.0.2.20',
      port: 1790,
      asn: 65001,
      localAsn: 64600,
      description: 'Global_p_192.0.2.20 (global)',
      families: ['ipv4'],
      passive: true,
      gracefulRestart: { restartTime: 300 },
      routeReflectorClient: true,
      keepNextHop: true,
      nextHopSelf: false,
      keepaliveTime: 20,
      allowOwnAs: 2,
      localAddress: '192.0.2.1',
      addPath: 'both',
    });
  });

  it('nextHopMode Keep means keep (the planner folds keepOriginalNextHop into it); Self means next-hop self; IPv6 peers negotiate ipv6; GR off is false', () => {
    expect(peerOptions(peer('192.0.2.20', { nextHopMode: 'Keep' })).keepNextHop).toBe(true);
    expect(peerOptions(peer('192.0.2.20', { keepOriginalNextHop: true, nextHopMode: 'Auto' })).keepNextHop).toBe(false);
    expect(peerOptions(peer('192.0.2.20', { nextHopMode: 'Self' }))).toMatchObject({ keepNextHop: false, nextHopSelf: true });
    expect(peerOptions(peer('2001:db8::1')).families).toEqual(['ipv6']);
    expect(peerOptions(peer('192.0.2.20', { gracefulRestart: false })).gracefulRestart).toBe(false);
    // ADD-PATH as planned; `off` offers none
    expect(peerOptions(peer('192.0.2.20', { addPaths: 'receive' })).addPath).toBe('receive');
    expect('addPath' in peerOptions(peer('192.0.2.20', { addPaths: 'off' }))).toBe(false);
  });
});

describe('reconcile', () => {
  const a = peer('192.0.2.20');
  const b = peer('192.0.2.30', { type: 'node-to-node mesh', id: 'Mesh_w2_192.0.2.30', from: { kind: 'Node', name: 'w2' } });

  it.each([
    [
      'first plan adds everything',
      undefined,
      plan([route('10.0.0.0/16', ['65000:1'])], [a]),
      { add: ['192.0.2.20'], update: [], remove: [], originate: ['10.0.0.0/16'], withdraw: [] },
    ],
    [
      'identical plans: nothing',
      plan([route('10.0.0.0/16')], [a, b]),
      plan([route('10.0.0.0/16')], [a, b]),
      { add: [], update: [], remove: [], originate: [], withdraw: [] },
    ],
    [
      'a route goes, another comes',
      plan([route('10.0.0.0/16')], [a]),
      plan([route('10.1.0.0/16')], [a]),
      { add: [], update: [], remove: [], originate: ['10.1.0.0/16'], withdraw: ['10.0.0.0/16'] },
    ],
    [
      'communities changed: re-originate only',
      plan([route('10.0.0.0/16', ['65000:1'])]),
      plan([route('10.0.0.0/16', ['65000:2'])]),
      { add: [], update: [], remove: [], originate: ['10.0.0.0/16'], withdraw: [] },
    ],
    ['a peer removed', plan([], [a, b]), plan([], [b]), { add: [], update: [], remove: ['192.0.2.20'], originate: [], withdraw: [] }],
    [
      'a peer AS changed: update',
      plan([], [a]),
      plan([], [{ ...a, asn: 65009 }]),
      { add: [], update: ['192.0.2.20'], remove: [], originate: [], withdraw: [] },
    ],
    [
      'a peer now refused: removed',
      plan([], [a]),
      plan([], [{ ...a, refused: true, refusedSettings: [{ field: 'spec.password', message: 'TCP MD5 is not available' }] }]),
      { add: [], update: [], remove: ['192.0.2.20'], originate: [], withdraw: [] },
    ],
  ] as const)('%s', (_name, prev, next, want) => {
    const ops = reconcile(prev, next);
    expect({
      add: ops.addPeers.map((p) => p.options.address),
      update: ops.updatePeers.map((p) => p.options.address),
      remove: [...ops.removePeers],
      originate: ops.originate.map((r) => r.prefix.toString()),
      withdraw: ops.withdraw.map((p) => p.toString()),
    }).toEqual(want);
  });

  it('carries the communities of a re-originated route', () => {
    const ops = reconcile(plan([route('10.0.0.0/16', ['65000:1'])]), plan([route('10.0.0.0/16', ['65000:2', '65000:3'])]));
    // prefixAdvertisements communities are added after the export policy (as Calico's BIRD adds them after the BGPFilters).
    expect(ops.originate[0].attrs).toEqual({ origin: 'igp', communities: [], exportCommunities: ['65000:2', '65000:3'] });
  });

  it('a description-only change is an update naming only that field (no session reset)', () => {
    const ops = reconcile(plan([], [a]), plan([], [{ ...a, id: 'Global_other_192.0.2.20' }]));
    expect(ops.updatePeers.map((u) => u.changed)).toEqual([['description']]);
    expect(ops.addPeers).toEqual([]);
    // the rule BgpSpeaker.updatePeer resets by
    expect(sessionKey(ops.updatePeers[0].options)).toBe(sessionKey(peerOptions(a)));
  });

  it('a policy-only change (filter list) is an update naming only the policy lists', () => {
    const f1 = peer('192.0.2.50', { filters: ['a'] });
    const rule = { action: 'Reject' as const, operations: [] };
    const filters = ['a', 'b'].map((name) => ({ kind: 'BGPFilter' as const, name, exportV4: [rule], importV4: [rule], exportV6: [], importV6: [] }));
    const ops = reconcile({ ...plan([], [f1]), filters }, { ...plan([], [{ ...f1, filters: ['a', 'b'] }]), filters });
    expect(ops.updatePeers.map((u) => [u.options.address, u.changed])).toEqual([['192.0.2.50', ['exportPolicies', 'importPolicies']]]);
    // the rule BgpSpeaker.updatePeer resets by: equal keys, applied in place
    expect(sessionKey(ops.updatePeers[0].options)).toBe(sessionKey(peerOptions(f1, undefined, filters)));
  });

  it('a changed port, AS, passive or graceful-restart setting is an update the speaker applies with a session reset', () => {
    for (const over of [
      { port: 1790 },
      { asn: 65009 },
      { passive: true },
      { gracefulRestart: false },
      { maxRestartTime: 300 },
      { routeReflectorClient: true },
    ]) {
      const ops = reconcile(plan([], [a]), plan([], [{ ...a, ...over }]));
      expect(ops.updatePeers).toHaveLength(1);
      expect(sessionKey(ops.updatePeers[0].options)).not.toBe(sessionKey(peerOptions(a)));
    }
  });

  it('password and ttlSecurity peers are not added and come back as refusals', () => {
    const bad = peer('192.0.2.40', {
      refused: true,
      refusedSettings: [
        { field: 'spec.password', message: 'TCP MD5 is not available in Node.js' },
        { field: 'spec.ttlSecurity', message: 'GTSM is not available in Node.js' },
      ],
    });
    const ops = reconcile(undefined, plan([], [a, bad]));
    expect(ops.addPeers.map((p) => p.options.address)).toEqual(['192.0.2.20']);
    expect(ops.refusedPeers.map((r) => [r.address, r.field])).toEqual([
      ['192.0.2.40', 'spec.password'],
      ['192.0.2.40', 'spec.ttlSecurity'],
    ]);
  });

  it('peers naming BGPFilters run with the policies of their family’s rule lists, in the peer’s order', () => {
    const rule = { action: 'Reject' as const, operations: [] };
    const v4 = peer('192.0.2.50', { filters: ['exports', 'both', 'absent'] });
    const v6 = peer('2001:db8::50', { filters: ['exports', 'both', 'absent'] });
    const filters = [
      { kind: 'BGPFilter' as const, name: 'both', exportV4: [rule], importV4: [rule], exportV6: [rule], importV6: [] },
      { kind: 'BGPFilter' as const, name: 'exports', exportV4: [rule], importV4: [], exportV6: [], importV6: [] },
    ];
    const ops = reconcile(undefined, { ...plan([], [v4, v6]), filters });
    expect(ops.refusedPeers).toEqual([]);
    expect(ops.addPeers.map((p) => [p.options.address, p.options.exportPolicies, p.options.importPolicies])).toEqual([
      ['192.0.2.50', ['bgpfilter:exports:exportV4', 'bgpfilter:both:exportV4'], ['bgpfilter:both:importV4']],
      // No V6 rules in `exports`, no importV6 in `both`: unfiltered there, as Calico (bgpfilter/v4_only).
      ['2001:db8::50', ['bgpfilter:both:exportV6'], []],
    ]);
  });

  it('a peer naming a BGPFilter the policy engine refuses is not started, with the engine’s message', () => {
    const filtered = peer('192.0.2.50', { filters: ['bad'] });
    // Validation keeps priorities within 1..2147483646; a hand-built one beyond is the engine's to refuse.
    const bad = {
      ...plan([], [filtered]),
      filters: [
        {
          kind: 'BGPFilter' as const,
          name: 'bad',
          exportV4: [{ action: 'Reject' as const, priority: 2 ** 31, operations: [] }],
          importV4: [],
          exportV6: [],
          importV6: [],
        },
      ],
    };
    const ops = reconcile(undefined, bad);
    expect(ops.addPeers).toEqual([]);
    expect(ops.refusedPeers[0]).toMatchObject({ field: 'spec.filters', address: '192.0.2.50', message: expect.stringContaining('localPref') });
  });

  it('two peerings to one address on different ports both run (Calico explicit_peering/global); the same port twice is refused', () => {
    const other = { ...a, id: 'Global_q_192.0.2.20_port_1790', port: 1790 };
    const ops = reconcile(undefined, plan([], [a, other]));
    expect(ops.addPeers.map((p) => [p.options.address, p.options.port])).toEqual([
      ['192.0.2.20', 179],
      ['192.0.2.20', 1790],
    ]);
    expect(ops.refusedPeers).toEqual([]);
    // Removing one names it by address and port, so the speaker removes that one only.
    expect(reconcile(plan([], [a, other]), plan([], [a])).removePeers).toEqual(['192.0.2.20:1790']);
    expect(reconcile(plan([], [a, other]), plan([], [other])).removePeers).toEqual(['192.0.2.20']);
    const dup = reconcile(undefined, plan([], [a, { ...a, id: 'Node_x_192.0.2.20' }]));
    expect(dup.addPeers).toHaveLength(1);
    expect(dup.refusedPeers[0].message).toContain('already peered by Global_p_192.0.2.20; one session per address and port');
  });
});
