import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/index.js';
import { compilePolicy, evaluate, evaluateBatch, explain, formatTrace, PolicyError } from '../../src/policy/index.js';
import type { ConditionsDef, DefinedSetsDef, PolicyConfigDef, ActionsDef } from '../../src/policy/definitions.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { parseExtendedCommunity } from '../../src/wire/communities.js';
import { ctx, ebgpPeer, ibgpPeer, learned, local, route } from './helpers.js';

const sets: DefinedSetsDef = {
  prefix: { pods: ['10.0.0.0/8{16,24}'], v6: ['2001:db8::/32 le 64'] },
  community: { c: ['65000:100'], wild: ['65001:*'], both: ['65000:100', '65000:200'], re: ['/^6500[0-9]:9$/'], wk: ['no-export'] },
  largeCommunity: { l: ['65000:1:2'], lw: ['65000:*:7'] },
  extCommunity: { rt: ['rt:65000:100'] },
  asPath: { from1: ['starts-with 65001'], via2: ['contains 65002'], orig3: ['origin 65003'], re: ['_65002_'], empty: ['length 0'] },
  neighbor: { peers: ['192.0.2.0/24'], nh: ['198.51.100.1'] },
};

/** An import chain of one policy whose single statement has `conditions` and accepts, else rejects. */
function matches(conditions: ConditionsDef, r: ReturnType<typeof route>, c = ctx(ebgpPeer, 'import')): boolean {
  const cp = compilePolicy({ sets, policies: { p: { statements: [{ conditions, actions: { result: 'accept' } }, { actions: { result: 'reject' } }] } } });
  return evaluate(cp.chain({ direction: c.direction, policies: ['p'] }), r, c).verdict === 'accept';
}

function modify(actions: ActionsDef, attrs: PathAttributes, peer = ebgpPeer) {
  const cp = compilePolicy({ sets, policies: { p: { statements: [{ actions: { ...actions, result: 'accept' } }] } } });
  return evaluate(cp.chain({ direction: 'export', policies: ['p'] }), route('10.1.0.0/16', attrs), ctx(peer, 'export'));
}

const path = (...asns: number[]) => [{ type: 2 as const, asns }];

describe('conditions', () => {
  it('prefix in / not in set, with length ranges', () => {
    expect(matches({ prefixSet: { set: 'pods' } }, route('10.1.0.0/16'))).toBe(true);
    expect(matches({ prefixSet: { set: 'pods' } }, route('10.1.2.0/25'))).toBe(false);
    expect(matches({ prefixSet: { set: 'pods', match: 'invert' } }, route('10.1.2.0/25'))).toBe(true);
    expect(matches({ prefixSet: { set: 'v6' } }, route('2001:db8:1::/48'))).toBe(true);
  });
  it("interface: a glob over the route's interface (BIRD ifname); a route without one never matches, an inverted glob neither", () => {
    const withIface = (iface: string | undefined, source = learned) => ({ ...route('198.19.0.7/32', {}, source), ...(iface !== undefined ? { iface } : {}) });
    expect(matches({ interface: 'cali*' }, withIface('cali12ab'))).toBe(true);
    expect(matches({ interface: 'cali*' }, withIface('eth0'))).toBe(false);
    expect(matches({ interface: 'eth?' }, withIface('eth1', local), ctx(ebgpPeer, 'export'))).toBe(true);
    expect(matches({ interface: 'eth?' }, withIface('eth10', local), ctx(ebgpPeer, 'export'))).toBe(false);
    expect(matches({ interface: '*' }, withIface(undefined))).toBe(false);
    const cp = compilePolicy({ policies: { p: { statements: [{ conditions: { interface: 'cali*' }, actions: { result: 'reject' } }] } } });
    const x = explain(cp.chain({ direction: 'export', policies: ['p'] }), withIface('cali9', local), ctx(ebgpPeer, 'export'));
    expect(x.verdict).toBe('reject');
    expect(formatTrace(x.trace)).toContain('interface cali9 matches "cali*"');
    expect(formatTrace(explain(cp.chain({ direction: 'export', policies: ['p'] }), withIface(undefined, local), ctx(ebgpPeer, 'export')).trace)).toContain(
      'route has no interface',
    );
  });
  it('family', () => {
    expect(matches({ family: 'ipv6' }, route('2001:db8::/32'))).toBe(true);
    expect(matches({ family: 'ipv6' }, route('10.0.0.0/8'))).toBe(false);
  });
  it('neighbour in set (the policy peer, or the source peer)', () => {
    expect(matches({ neighborSet: { set: 'peers' } }, route('10.0.0.0/8'))).toBe(true);
    expect(matches({ neighborSet: { set: 'peers' } }, route('10.0.0.0/8'), ctx(ibgpPeer, 'import'))).toBe(false);
    expect(matches({ neighborSet: { set: 'peers', match: 'invert' } }, route('10.0.0.0/8'), ctx(ibgpPeer, 'import'))).toBe(true);
    expect(matches({ neighborSet: { set: 'peers', of: 'source' } }, route('10.0.0.0/8', {}, learned), ctx(ibgpPeer, 'import'))).toBe(true);
    expect(matches({ neighborSet: { set: 'peers', of: 'source' } }, route('10.0.0.0/8', {}, local), ctx(ibgpPeer, 'import'))).toBe(false);
  });
  it('peer type and route source', () => {
    expect(matches({ peerType: 'ebgp' }, route('10.0.0.0/8'))).toBe(true);
    expect(matches({ peerType: 'ibgp' }, route('10.0.0.0/8'))).toBe(false);
    expect(matches({ routeSource: 'local' }, route('10.0.0.0/8', {}, local))).toBe(true);
    expect(matches({ routeSource: 'learned' }, route('10.0.0.0/8', {}, local))).toBe(false);
  });
  it('community any / all / invert, wildcards, regex and well-known names', () => {
    const r = (...cs: number[]) => route('10.0.0.0/8', { communities: cs });
    const c = (a: number, b: number) => a * 65536 + b;
    expect(matches({ communitySet: { set: 'c' } }, r(c(65000, 100)))).toBe(true);
    expect(matches({ communitySet: { set: 'c' } }, r(c(65000, 101)))).toBe(false);
    expect(matches({ communitySet: { set: 'c' } }, route('10.0.0.0/8'))).toBe(false);
    expect(matches({ communitySet: { set: 'wild' } }, r(c(65001, 7)))).toBe(true);
    expect(matches({ communitySet: { set: 'both', match: 'all' } }, r(c(65000, 100)))).toBe(false);
    expect(matches({ communitySet: { set: 'both', match: 'all' } }, r(c(65000, 200), c(65000, 100)))).toBe(true);
    expect(matches({ communitySet: { set: 'both', match: 'invert' } }, r(c(65000, 300)))).toBe(true);
    expect(matches({ communitySet: { set: 're' } }, r(c(65004, 9)))).toBe(true);
    expect(matches({ communitySet: { set: 're' } }, r(c(65004, 99)))).toBe(false);
    expect(matches({ communitySet: { set: 'wk' } }, r(0xffffff01))).toBe(true);
  });
  it('large and extended communities', () => {
    expect(matches({ largeCommunitySet: { set: 'l' } }, route('10.0.0.0/8', { largeCommunities: [{ global: 65000, local1: 1, local2: 2 }] }))).toBe(true);
    expect(matches({ largeCommunitySet: { set: 'l' } }, route('10.0.0.0/8', { largeCommunities: [{ global: 65000, local1: 1, local2: 3 }] }))).toBe(false);
    expect(matches({ largeCommunitySet: { set: 'lw' } }, route('10.0.0.0/8', { largeCommunities: [{ global: 65000, local1: 99, local2: 7 }] }))).toBe(true);
    expect(matches({ largeCommunitySet: { set: 'l', match: 'invert' } }, route('10.0.0.0/8'))).toBe(true);
    const rt = 0x0002fde800000064n; // rt:65000:100
    expect(matches({ extCommunitySet: { set: 'rt' } }, route('10.0.0.0/8', { extendedCommunities: [rt] }))).toBe(true);
    expect(matches({ extCommunitySet: { set: 'rt' } }, route('10.0.0.0/8', { extendedCommunities: [rt + 1n] }))).toBe(false);
  });
  it('AS-path sets: simple forms and regular expressions', () => {
    const r = (...asns: number[]) => route('10.0.0.0/8', { asPath: path(...asns) });
    expect(matches({ asPathSet: { set: 'from1' } }, r(65001, 65002))).toBe(true);
    expect(matches({ asPathSet: { set: 'from1' } }, r(65002, 65001))).toBe(false);
    expect(matches({ asPathSet: { set: 'via2' } }, r(65001, 65002, 65003))).toBe(true);
    expect(matches({ asPathSet: { set: 'orig3' } }, r(65001, 65003))).toBe(true);
    expect(matches({ asPathSet: { set: 'orig3' } }, r(65003, 65001))).toBe(false);
    expect(matches({ asPathSet: { set: 're' } }, r(65001, 65002))).toBe(true);
    expect(matches({ asPathSet: { set: 're' } }, r(65001, 165002))).toBe(false);
    expect(matches({ asPathSet: { set: 'empty' } }, route('10.0.0.0/8', {}))).toBe(true);
    expect(matches({ asPathSet: { set: 'empty', match: 'invert' } }, r(1))).toBe(true);
  });
  it('next hop in set', () => {
    expect(matches({ nextHopSet: { set: 'nh' } }, route('10.0.0.0/8', { nextHop: Address.parse('198.51.100.1') }))).toBe(true);
    expect(matches({ nextHopSet: { set: 'nh' } }, route('10.0.0.0/8', { nextHop: Address.parse('198.51.100.2') }))).toBe(false);
    expect(matches({ nextHopSet: { set: 'nh', match: 'invert' } }, route('10.0.0.0/8'))).toBe(true);
  });
  it('MED, LOCAL_PREF and AS-path length comparisons (missing MED is 0, missing LOCAL_PREF 100)', () => {
    expect(matches({ med: { op: 'lt', value: 10 } }, route('10.0.0.0/8', { med: 5 }))).toBe(true);
    expect(matches({ med: { op: 'lt', value: 10 } }, route('10.0.0.0/8', { med: 10 }))).toBe(false);
    expect(matches({ med: { op: 'eq', value: 0 } }, route('10.0.0.0/8'))).toBe(true);
    expect(matches({ localPref: { op: 'ge', value: 100 } }, route('10.0.0.0/8'))).toBe(true);
    expect(matches({ localPref: { op: 'gt', value: 100 } }, route('10.0.0.0/8', { localPref: 100 }))).toBe(false);
    expect(
      matches(
        { asPathLength: { op: 'le', value: 2 } },
        route('10.0.0.0/8', {
          asPath: [
            { type: 2, asns: [1, 2] },
            { type: 1, asns: [3, 4] },
          ],
        }),
      ),
    ).toBe(false);
    expect(
      matches(
        { asPathLength: { op: 'eq', value: 3 } },
        route('10.0.0.0/8', {
          asPath: [
            { type: 2, asns: [1, 2] },
            { type: 1, asns: [3, 4] },
          ],
        }),
      ),
    ).toBe(true);
    expect(matches({ asPathLength: { op: 'ne', value: 0 } }, route('10.0.0.0/8'))).toBe(false);
  });
  it('needs every condition of a statement to match', () => {
    expect(matches({ family: 'ipv4', peerType: 'ibgp' }, route('10.0.0.0/8'))).toBe(false);
    expect(matches({ family: 'ipv4', peerType: 'ebgp', prefixSet: { set: 'pods' } }, route('10.1.0.0/16'))).toBe(true);
  });
});

describe('modifications', () => {
  const c = (a: number, b: number) => a * 65536 + b;
  it('add / remove / replace communities', () => {
    expect(modify({ community: { add: ['65000:1', 'no-export'] } }, { communities: [c(65000, 1)] }).attrs.communities).toEqual([c(65000, 1), 0xffffff01]);
    expect(modify({ community: { remove: ['65001:*'] } }, { communities: [c(65001, 1), c(65000, 1), c(65001, 2)] }).attrs.communities).toEqual([c(65000, 1)]);
    expect(modify({ community: { replace: ['1:2'] } }, { communities: [c(65001, 1)] }).attrs.communities).toEqual([c(1, 2)]);
    expect('communities' in modify({ community: { remove: ['*:*'] } }, { communities: [c(65001, 1)] }).attrs).toBe(false);
  });
  it('add / remove / replace large communities', () => {
    const lc = { global: 65000, local1: 1, local2: 2 };
    expect(modify({ largeCommunity: { add: ['65000:1:2'] } }, { largeCommunities: [lc] }).attrs.largeCommunities).toEqual([lc]);
    expect(modify({ largeCommunity: { add: ['1:2:3'] } }, {}).attrs.largeCommunities).toEqual([{ global: 1, local1: 2, local2: 3 }]);
    expect(
      modify({ largeCommunity: { remove: ['65000:*:*'] } }, { largeCommunities: [lc, { global: 1, local1: 1, local2: 1 }] }).attrs.largeCommunities,
    ).toEqual([{ global: 1, local1: 1, local2: 1 }]);
    expect(modify({ largeCommunity: { replace: ['9:9:9'] } }, { largeCommunities: [lc] }).attrs.largeCommunities).toEqual([
      { global: 9, local1: 9, local2: 9 },
    ]);
  });
  it('LOCAL_PREF and MED (absolute, +N, -N clamped at 0)', () => {
    expect(modify({ localPref: 250 }, { localPref: 100 }).attrs.localPref).toBe(250);
    expect(modify({ med: 7 }, { med: 100 }).attrs.med).toBe(7);
    expect(modify({ med: '+10' }, { med: 100 }).attrs.med).toBe(110);
    expect(modify({ med: '+10' }, {}).attrs.med).toBe(10);
    expect(modify({ med: '-150' }, { med: 100 }).attrs.med).toBe(0);
    expect(modify({ med: '+10' }, { med: 0xfffffffa }).attrs.med).toBe(0xffffffff);
  });
  it('next hop: an address, self (with and without a known local address), unchanged', () => {
    expect(modify({ nextHop: '198.51.100.7' }, {}).attrs.nextHop?.toString()).toBe('198.51.100.7');
    const self = modify({ nextHop: 'self' }, { nextHop: Address.parse('192.0.2.50') });
    expect([self.nextHopDirective, self.attrs.nextHop?.toString()]).toEqual(['self', '192.0.2.50']);
    const withLocal = modify({ nextHop: 'self' }, {}, { ...ebgpPeer, localAddress: Address.parse('192.0.2.254') });
    expect([withLocal.nextHopDirective, withLocal.attrs.nextHop?.toString()]).toEqual(['self', '192.0.2.254']);
    const keep = modify({ nextHop: 'unchanged' }, { nextHop: Address.parse('192.0.2.50') });
    expect([keep.nextHopDirective, keep.attrs.nextHop?.toString()]).toEqual(['unchanged', '192.0.2.50']);
  });
  it('prepends the own AS, the leftmost AS, or a given AS', () => {
    expect(modify({ asPathPrepend: { count: 2 } }, { asPath: path(65001) }).attrs.asPath).toEqual(path(65000, 65000, 65001));
    expect(modify({ asPathPrepend: { asn: 'last', count: 1 } }, { asPath: path(65001, 65002) }).attrs.asPath).toEqual(path(65001, 65001, 65002));
    expect(modify({ asPathPrepend: { asn: 4200000000, count: 1 } }, {}).attrs.asPath).toEqual(path(4200000000));
    expect(modify({ asPathPrepend: { count: 3 } }, { asPath: [{ type: 1, asns: [1, 2] }] }).attrs.asPath).toEqual([
      { type: 2, asns: [65000, 65000, 65000] },
      { type: 1, asns: [1, 2] },
    ]);
    expect(modify({ asPathPrepend: { asns: [1, 2] } }, { asPath: path(65001) }).attrs.asPath).toEqual(path(1, 2, 65001));
    const long = modify({ asPathPrepend: { count: 10 } }, { asPath: path(...new Array(250).fill(7)) }).attrs.asPath!;
    expect(long.map((s) => s.asns.length)).toEqual([255, 5]);
  });
  it('later statements see the attributes earlier ones modified', () => {
    const cp = compilePolicy({
      policies: {
        p: { statements: [{ actions: { localPref: 300 } }, { conditions: { localPref: { op: 'eq', value: 300 } }, actions: { med: 1, result: 'accept' } }] },
      },
    });
    const r = evaluate(cp.chain({ direction: 'import', policies: ['p'] }), route('10.0.0.0/8'), ctx(ebgpPeer, 'import'));
    expect([r.verdict, r.attrs.localPref, r.attrs.med]).toEqual(['accept', 300, 1]);
  });
});

describe('chains and defaults', () => {
  const cfg: PolicyConfigDef = {
    sets,
    policies: {
      tagOnly: { statements: [{ actions: { community: { add: ['65000:1'] } } }] },
      rejectPods: { statements: [{ conditions: { prefixSet: { set: 'pods' } }, actions: { result: 'reject' } }] },
      acceptAll: { statements: [{ actions: { result: 'accept' } }] },
      skip: { statements: [{ actions: { result: 'next-policy', localPref: 1 } }, { actions: { result: 'reject' } }] },
    },
  };
  const cp = compilePolicy(cfg);

  it('import defaults to accept when nothing decides', () => {
    const r = evaluate(cp.chain({ direction: 'import', policies: ['tagOnly'] }), route('11.0.0.0/8'), ctx(ebgpPeer, 'import'));
    expect([r.verdict, r.attrs.communities]).toEqual(['accept', [65000 * 65536 + 1]]);
  });
  it('RFC 8212: learned routes are not exported to eBGP without an accepting policy', () => {
    const chain = cp.chain({ direction: 'export', policies: ['tagOnly'] });
    expect(evaluate(chain, route('11.0.0.0/8'), ctx(ebgpPeer, 'export')).verdict).toBe('reject');
    expect(explain(chain, route('11.0.0.0/8'), ctx(ebgpPeer, 'export')).trace.reason).toContain('RFC 8212 default reject');
    expect(evaluate(cp.chain({ direction: 'export', policies: [] }), route('11.0.0.0/8'), ctx(ebgpPeer, 'export')).verdict).toBe('reject');
    expect(evaluate(chain, route('11.0.0.0/8'), ctx(ibgpPeer, 'export')).verdict).toBe('accept');
    expect(evaluate(cp.chain({ direction: 'export', policies: ['acceptAll'] }), route('11.0.0.0/8'), ctx(ebgpPeer, 'export')).verdict).toBe('accept');
  });
  it('locally originated routes follow the chain default (configurable)', () => {
    const r = route('11.0.0.0/8', {}, local);
    expect(evaluate(cp.chain({ direction: 'export', policies: [] }), r, ctx(ebgpPeer, 'export')).verdict).toBe('accept');
    expect(evaluate(cp.chain({ direction: 'export', policies: [], localDefault: 'reject' }), r, ctx(ebgpPeer, 'export')).verdict).toBe('reject');
    expect(evaluate(cp.chain({ direction: 'export', policies: ['rejectPods'] }), route('10.1.0.0/16', {}, local), ctx(ebgpPeer, 'export')).verdict).toBe(
      'reject',
    );
  });
  it('falls through policies in order; accept and reject stop the chain; next-policy skips the rest of a policy', () => {
    const chain = cp.chain({ direction: 'export', policies: ['tagOnly', 'rejectPods', 'skip', 'acceptAll'] });
    const a = evaluate(chain, route('11.0.0.0/8'), ctx(ebgpPeer, 'export'));
    expect([a.verdict, a.attrs.localPref, a.attrs.communities]).toEqual(['accept', 1, [65000 * 65536 + 1]]);
    expect(evaluate(chain, route('10.1.0.0/16'), ctx(ebgpPeer, 'export')).verdict).toBe('reject');
    const e = explain(chain, route('10.1.0.0/16'), ctx(ebgpPeer, 'export')).trace;
    expect(e.policies.map((p) => p.policy)).toEqual(['tagOnly', 'rejectPods']);
  });
  it('evaluates batches like single routes', () => {
    const chain = cp.chain({ direction: 'export', policies: ['rejectPods', 'acceptAll'] });
    const rs = [route('10.1.0.0/16'), route('11.0.0.0/8'), route('10.2.3.0/24')];
    expect(evaluateBatch(chain, rs, ctx(ebgpPeer, 'export')).map((r) => r.verdict)).toEqual(['reject', 'accept', 'reject']);
  });
  it('refuses a chain used in the wrong direction', () => {
    expect(() => evaluate(cp.chain({ direction: 'import', policies: [] }), route('10.0.0.0/8'), ctx(ebgpPeer, 'export'))).toThrow('import chain');
  });
});

describe('explain', () => {
  it('records policies, statements, condition values, modifications and the verdict', () => {
    const cp = compilePolicy({
      sets,
      policies: {
        p: {
          statements: [
            { name: 'ibgp-only', conditions: { peerType: 'ibgp', med: { op: 'gt', value: 5 } }, actions: { result: 'reject' } },
            {
              name: 'pods',
              conditions: { prefixSet: { set: 'pods' }, communitySet: { set: 'c' } },
              actions: { localPref: 200, community: { add: ['65000:2'] }, result: 'accept' },
            },
          ],
        },
      },
    });
    const r = route('10.1.0.0/16', { communities: [65000 * 65536 + 100], med: 9 });
    const { verdict, trace } = explain(cp.chain({ direction: 'import', policies: ['p'] }), r, ctx(ebgpPeer, 'import'));
    expect(verdict).toBe('accept');
    const [s1, s2] = trace.policies[0].statements;
    expect(s1.matched).toBe(false);
    expect(s1.conditions.map((c) => [c.matched, c.detail])).toEqual([
      [false, 'peer type is ebgp'],
      [true, 'MED is 9, gt 5'],
    ]);
    expect(s2.matched).toBe(true);
    expect(s2.conditions.map((c) => c.detail)).toEqual(['10.1.0.0/16 is in prefix set "pods"', 'communities [65000:100] match any of set "c"']);
    // Modifications apply in a fixed order (communities, large communities, LOCAL_PREF, MED, next hop, prepend).
    expect(s2.modifications).toEqual(['communities [65000:100] → [65000:100 65000:2]', 'LOCAL_PREF (none) → 200']);
    expect(trace.reason).toBe('policy "p" statement "pods" accepted the route');
    expect(formatTrace(trace)).toContain('✗ peer type ibgp: peer type is ebgp');
  });
});

describe('validation', () => {
  const bad = (cfg: PolicyConfigDef, ...parts: string[]) => {
    let err: unknown;
    try {
      compilePolicy(cfg);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PolicyError);
    for (const p of parts) expect((err as Error).message).toContain(p);
  };
  it('names the policy, statement and field', () => {
    bad(
      { sets, policies: { p: { statements: [{}, { name: 'x', conditions: { communitySet: { set: 'nope' } } }] } } },
      'policy "p" statement 1 ("x") conditions.communitySet.set',
      'unknown community set "nope"',
    );
    bad(
      { policies: { p: { statements: [{ actions: { community: { add: ['65000:70000'] } } }] } } },
      'policy "p" statement 0 actions.community.add[0]',
      '70000',
    );
    bad({ policies: { p: { statements: [{ actions: { med: 'lots' } }] } } }, 'actions.med');
    bad({ policies: { p: { statements: [{ actions: { result: 'maybe' as never } }] } } }, 'actions.result');
    bad({ policies: { p: { statements: [{ conditions: { colour: 'blue' } as never }] } } }, 'conditions.colour', 'unknown condition');
    bad({ policies: { p: { statements: [{ conditions: { med: { op: 'approx', value: 1 } as never } }] } } }, 'conditions.med.op');
    bad({ policies: { p: { statements: [{ actions: { nextHop: 'elsewhere' } }] } } }, 'actions.nextHop');
    bad({ policies: { p: { statements: [{ actions: { asPathPrepend: { count: 300 } } }] } } }, 'asPathPrepend.count');
  });
  it('names the set and entry for bad set members', () => {
    bad({ sets: { community: { c: ['65000:1', 'bogus'] } }, policies: {} }, 'community set "c" entry 1');
    bad({ sets: { prefix: { p: ['10.0.0.1/8'] } }, policies: {} }, 'prefix set "p"', 'host bits');
    bad({ sets: { asPath: { a: ['(unclosed'] } }, policies: {} }, 'asPath set "a" entry 0', 'regular expression');
    bad({ sets: { extCommunity: { e: ['rt:x:1'] } }, policies: {} }, 'extCommunity set "e" entry 0');
    bad({ sets: { largeCommunity: { l: ['1:2'] } }, policies: {} }, 'largeCommunity set "l" entry 0');
  });
  it('names unknown policies in a chain', () => {
    const cp = compilePolicy({ policies: { a: { statements: [] } } });
    expect(() => cp.chain({ direction: 'export', policies: ['a', 'b'] })).toThrow('chain.policies[1]: unknown policy "b"');
  });
});

describe('extended communities: link bandwidth, route target, route origin', () => {
  const lb = (t: string) => parseExtendedCommunity(t);
  const cfg = (actions: ActionsDef, extCommunity: Record<string, string[]> = {}) =>
    compilePolicy({ sets: { extCommunity }, policies: { p: { statements: [{ actions: { ...actions, result: 'accept' } }] } } });
  const run = (actions: ActionsDef, attrs: PathAttributes) =>
    evaluate(cfg(actions).chain({ direction: 'export', policies: ['p'] }), route('10.1.0.0/16', attrs), ctx(ebgpPeer, 'export'));

  it('sets match exact values and any link bandwidth ("lb:*", "lb:AS:*")', () => {
    const cp = compilePolicy({
      sets: { extCommunity: { anyLb: ['lb:*'], lb65000: ['lb:65000:*'], soo: ['soo:192.0.2.1:7'] } },
      policies: Object.fromEntries(
        ['anyLb', 'lb65000', 'soo'].map((s) => [
          s,
          { statements: [{ conditions: { extCommunitySet: { set: s } }, actions: { result: 'accept' as const } }, { actions: { result: 'reject' as const } }] },
        ]),
      ),
    });
    const v = (set: string, ...cs: string[]) =>
      evaluate(cp.chain({ direction: 'import', policies: [set] }), route('10.0.0.0/8', { extendedCommunities: cs.map(lb) }), ctx(ebgpPeer, 'import')).verdict;
    expect(v('anyLb', 'lb:65001:100')).toBe('accept');
    expect(v('anyLb', 'lb-transitive:65001:100')).toBe('accept');
    expect(v('anyLb', 'rt:65000:100')).toBe('reject');
    expect(v('lb65000', 'lb:65000:7')).toBe('accept');
    expect(v('lb65000', 'lb:65001:7')).toBe('reject');
    expect(v('soo', 'rt:65000:1', 'soo:192.0.2.1:7')).toBe('accept');
    expect(() => compilePolicy({ sets: { extCommunity: { bad: ['lb:x:*'] } }, policies: {} })).toThrow(/extCommunity set "bad" entry 0.*link bandwidth AS/);
  });

  it('actions add, remove and replace them; adding a link bandwidth replaces the one a route had', () => {
    const before = { origin: 0 as const, extendedCommunities: [lb('rt:65000:1'), lb('lb:65000:1000')] };
    expect(run({ extCommunity: { add: ['lb:65000:2000'] } }, before).attrs!.extendedCommunities).toEqual([lb('rt:65000:1'), lb('lb:65000:2000')]);
    expect(run({ extCommunity: { remove: ['lb:*'] } }, before).attrs!.extendedCommunities).toEqual([lb('rt:65000:1')]);
    expect(run({ extCommunity: { replace: ['soo:65000:9'] } }, before).attrs!.extendedCommunities).toEqual([lb('soo:65000:9')]);
    expect(run({ extCommunity: { remove: ['rt:65000:1', 'lb:65000:*'] } }, before).attrs!.extendedCommunities).toBeUndefined();
    expect(() => cfg({ extCommunity: { add: ['lb:1:1', 'lb:1:2'] } })).toThrow(/extCommunity\.add.*more than one link bandwidth/);
    expect(() => cfg({ extCommunity: { add: ['rt:bad'] } })).toThrow(/extCommunity\.add\[0\]/);
  });
});
