import { describe, expect, it } from 'vitest';
import { exportFilterVerdict, planFilters } from '../../src/kubernetes/filters.js';
import { NO_LEARNING } from '../../src/kubernetes/kernel.js';
import { exportsTo } from '../../src/agent/views.js';
import type { BGPFilter } from '../../src/kubernetes/index.js';
import { Prefix } from '../../src/net/index.js';
import { peer, plan, route } from '../agent/plans.js';

const filter = (name: string, exportV4: BGPFilter['exportV4']): BGPFilter => ({ kind: 'BGPFilter', name, exportV4, importV4: [], exportV6: [], importV6: [] });

describe('BGPFilter verdicts over a plan (routes, plan, explain)', () => {
  const a = filter('a', [{ action: 'Reject', cidr: Prefix.parse('198.18.0.0/16'), matchOperator: 'In', prefixLength: { min: 32 }, operations: [] }]);
  const b = filter('b', [
    { action: 'Accept', cidr: Prefix.parse('198.18.0.0/16'), matchOperator: 'In', operations: [] },
    { action: 'Reject', operations: [] },
  ]);
  const p = peer('192.0.2.20', { filters: ['a', 'b'] });
  const pl = { ...plan([route('198.18.0.0/16'), route('198.18.1.1/32'), route('203.0.113.0/24')], [p]), filters: [a, b] };

  it('filters in the peer’s order, first decisive rule wins, verdict names the rule', () => {
    expect(exportFilterVerdict(pl, p, Prefix.parse('198.18.1.1/32'))).toEqual({ verdict: 'reject', reason: 'BGPFilter a exportV4[0] rejects' });
    expect(exportFilterVerdict(pl, p, Prefix.parse('198.18.0.0/16'))).toEqual({
      verdict: 'accept',
      reason: 'BGPFilter b exportV4[0] accepts',
      withoutPrefixCommunities: true,
    });
    expect(exportFilterVerdict(pl, p, Prefix.parse('203.0.113.0/24'))).toEqual({ verdict: 'reject', reason: 'BGPFilter b exportV4[1] rejects' });
    expect(exportsTo(pl, p).map(String)).toEqual(['198.18.0.0/16']);
  });

  it('no rule matching falls through (the built-in export decides); no filters: none', () => {
    const only = { ...pl, filters: [a] };
    const pa = { ...p, filters: ['a'] };
    expect(exportFilterVerdict(only, pa, Prefix.parse('203.0.113.0/24')).verdict).toBe('none');
    expect(exportsTo({ ...only, peers: [pa] }, pa).map(String)).toEqual(['198.18.0.0/16', '203.0.113.0/24']);
    expect(exportFilterVerdict(pl, peer('192.0.2.21'), Prefix.parse('198.18.1.1/32'))).toEqual({ verdict: 'none', reason: 'no BGPFilters' });
  });

  it('a filter the policy engine refuses is reported by name; the others still compile', () => {
    // Validation keeps priority within 1..2147483646; a hand-built one beyond it reaches the engine.
    const bad = filter('bad', [{ action: 'Accept', priority: 2 ** 31, operations: [] }]);
    const pf = planFilters({ ...pl, filters: [a, bad] });
    expect([...pf.errors.keys()]).toEqual(['bad']);
    expect(pf.errors.get('bad')).toContain('localPref');
    expect(Object.keys(pf.config.policies)).toEqual(['bgpfilter:a:exportV4']);
    const pb = { ...p, filters: ['bad'] };
    expect(exportFilterVerdict({ ...pl, filters: [a, bad], peers: [pb] }, pb, Prefix.parse('198.18.0.0/16'))).toEqual({
      verdict: 'reject',
      reason: 'BGPFilter bad does not compile: peer not started',
    });
  });

  it('priority: the agent’s own routes carry the normal route priority (1024 by default), so a rule on it matches them', () => {
    const byPriority = filter('prio', [{ action: 'Reject', priority: 1024, operations: [] }]);
    const pp = { ...p, filters: ['prio'] };
    const withKernel = (v4: number) => ({
      ...pl,
      peers: [pp],
      filters: [byPriority],
      kernel: { programClusterRoutes: 'Enabled' as const, normalRoutePriority: { v4, v6: 1024 }, rules: [], statics: [], learn: NO_LEARNING },
    });
    expect(exportFilterVerdict(withKernel(1024), pp, Prefix.parse('203.0.113.0/24'))).toEqual({
      verdict: 'reject',
      reason: 'BGPFilter prio exportV4[0] rejects',
    });
    expect(exportFilterVerdict(withKernel(512), pp, Prefix.parse('203.0.113.0/24')).verdict).toBe('none');
  });
});
