/**
 * BGPFilters on the path the product runs: a manifest validated into the
 * typed resource, compiled once (src/kubernetes/filters.ts), a peer's chain
 * for its family, evaluated by the policy engine the speaker runs. Checked
 * against a direct reading of Calico's BGPFilter semantics (confd's
 * template functions: rules in order, fields AND-ed, first Accept/Reject
 * decides, operations on Accept), over every field of the current API.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileFilters,
  exportFilterVerdict,
  filterChainJson,
  filterRuleJson,
  filterWarnings,
  localPrefForPriority,
  peerChain,
  prefixWindow,
} from '../../src/kubernetes/filters.js';
import type { BGPFilter } from '../../src/kubernetes/resources.js';
import { validateObject } from '../../src/kubernetes/validate.js';
import { Address, Prefix } from '../../src/net/index.js';
import { globRegExp } from '../../src/policy/conditions.js';
import { evaluate } from '../../src/policy/index.js';
import type { PeerRef, PolicyContext, PolicyRoute, RouteSource } from '../../src/policy/types.js';
import type { AsPathSegment, PathAttributes } from '../../src/wire/types.js';
import { peer as plannedPeer } from '../agent/plans.js';
import { ebgpPeer, ibgpPeer } from '../policy/helpers.js';
import { valid } from './helpers.js';

const INT_MAX = 2147483647;
const comm = (t: string) => {
  const [a, b] = t.split(':').map(Number);
  return a * 65536 + b;
};

type RawRule = Record<string, unknown>;
type RawSpec = Partial<Record<'exportV4' | 'importV4' | 'exportV6' | 'importV6', RawRule[]>>;

const bgpFilter = (name: string, spec: RawSpec) => valid<BGPFilter>({ apiVersion: 'projectcalico.org/v3', kind: 'BGPFilter', metadata: { name }, spec });

describe('BGPFilter rules against a direct reading of Calico’s', () => {
  const CIDRS4 = ['10.0.0.0/8', '10.1.0.0/16', '192.168.0.0/16', '0.0.0.0/0'];
  const CIDRS6 = ['2001:db8::/32', '2001:db8:1::/48'];
  const COMMS = ['65000:1', '65000:2', '65000:1:2'];
  const GLOBS = ['eth0', 'eth*', '*.calico', '*'];
  const PRIORITIES = [512, 1024];
  const rule = (cidrs: string[]): fc.Arbitrary<RawRule> =>
    fc
      .record(
        {
          action: fc.constantFrom('Accept', 'Reject'),
          cidr: fc.tuple(fc.constantFrom(...cidrs), fc.constantFrom('Equal', 'NotEqual', 'In', 'NotIn')),
          prefixLength: fc.record({ min: fc.integer({ min: 0, max: 64 }), max: fc.integer({ min: 0, max: 64 }) }, { requiredKeys: [] }),
          source: fc.constant('RemotePeers'),
          interface: fc.constantFrom(...GLOBS),
          peerType: fc.constantFrom('eBGP', 'iBGP'),
          communities: fc.constantFrom(...COMMS).map((v) => ({ values: [v] })),
          asPathPrefix: fc.array(fc.constantFrom(65001, 65002), { minLength: 1, maxLength: 2 }),
          priority: fc.constantFrom(...PRIORITIES),
          operations: fc.array(
            fc.oneof(
              fc.constantFrom(...COMMS).map((value) => ({ addCommunity: { value } })),
              fc.array(fc.constantFrom(1, 2), { minLength: 1, maxLength: 2 }).map((prefix) => ({ prependASPath: { prefix } })),
              fc.constantFrom(...PRIORITIES, 7).map((value) => ({ setPriority: { value } })),
            ),
            { minLength: 1, maxLength: 3 },
          ),
        },
        { requiredKeys: ['action'] },
      )
      .map(({ cidr, prefixLength, operations, ...r }) => {
        const out: RawRule = { ...r };
        if (cidr) {
          out.cidr = cidr[0];
          out.matchOperator = cidr[1];
          if (prefixLength && (cidr[1] === 'In' || cidr[1] === 'NotIn')) {
            const max = cidr[0].includes(':') ? 128 : 32;
            const [lo, hi] = [prefixLength.min, prefixLength.max].map((v) => (v === undefined ? undefined : Math.min(v, max)));
            out.prefixLength =
              lo !== undefined && hi !== undefined && lo > hi
                ? { min: hi, max: lo }
                : { ...(lo !== undefined ? { min: lo } : {}), ...(hi !== undefined ? { max: hi } : {}) };
          }
        }
        if (operations && r.action === 'Accept') out.operations = operations;
        return out;
      });
  const spec: fc.Arbitrary<RawSpec> = fc.record(
    {
      exportV4: fc.array(rule(CIDRS4), { maxLength: 4 }),
      importV4: fc.array(rule(CIDRS4), { maxLength: 4 }),
      exportV6: fc.array(rule(CIDRS6), { maxLength: 3 }),
      importV6: fc.array(rule(CIDRS6), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  );
  const PREFIXES = [
    '10.0.0.0/8',
    '10.1.0.0/16',
    '10.1.2.0/24',
    '10.1.2.0/30',
    '192.168.1.0/24',
    '11.0.0.0/8',
    '2001:db8::/32',
    '2001:db8:1::/48',
    '2001:db8:1:2::/64',
  ];
  const routeArb: fc.Arbitrary<PolicyRoute> = fc
    .record({
      prefix: fc.constantFrom(...PREFIXES).map((p) => Prefix.parse(p)),
      attrs: fc.record(
        {
          communities: fc.subarray(['65000:1', '65000:2'].map(comm)),
          largeCommunities: fc.subarray([{ global: 65000, local1: 1, local2: 2 }]),
          asPath: fc.array(fc.constantFrom(65001, 65002), { maxLength: 3 }).map((asns): AsPathSegment[] => (asns.length ? [{ type: 2, asns }] : [])),
          localPref: fc.constantFrom(...PRIORITIES.map(localPrefForPriority), 100),
        },
        { requiredKeys: [] },
      ),
      source: fc.constantFrom<RouteSource>({ kind: 'local' }, { kind: 'peer', address: Address.parse('192.0.2.9'), asn: 65001, type: 'ebgp' }),
      iface: fc.option(fc.constantFrom('eth0', 'eth1', 'vm1.calico'), { nil: undefined }),
    })
    .map(({ iface, ...r }) => (iface === undefined ? r : { ...r, iface }));

  /** Calico's reading: the peer's filters in order, the rule list of the route's direction and family, first Accept/Reject decides. */
  function direct(filters: [string, RawSpec][], direction: 'import' | 'export', r: PolicyRoute, c: PolicyContext): { verdict: string; attrs: PathAttributes } {
    const list = `${direction}V${r.prefix.family}` as keyof RawSpec;
    const seq = (r.attrs.asPath ?? []).flatMap((s) => s.asns);
    for (const [, f] of filters) {
      for (const rule of f[list] ?? []) {
        if (rule.cidr) {
          const cidr = Prefix.parse(rule.cidr as string);
          const pl = (rule.prefixLength ?? {}) as { min?: number; max?: number };
          const lo = Math.max(cidr.length, pl.min ?? 0);
          const hi = Math.min(cidr.maxLength, pl.max ?? cidr.maxLength);
          const inside = cidr.contains(r.prefix) && r.prefix.length >= lo && r.prefix.length <= hi;
          const ok = { Equal: cidr.equals(r.prefix), NotEqual: !cidr.equals(r.prefix), In: inside, NotIn: !inside }[rule.matchOperator as string];
          if (!ok) continue;
        }
        if (rule.source === 'RemotePeers' && r.source.kind !== 'peer') continue;
        if (rule.interface !== undefined && (r.iface === undefined || !globRegExp(rule.interface as string).test(r.iface))) continue;
        if (rule.peerType && (rule.peerType as string).toLowerCase() !== c.peer.type) continue;
        if (rule.communities) {
          const v = (rule.communities as { values: string[] }).values[0];
          const p = v.split(':').map(Number);
          const has =
            p.length === 3
              ? (r.attrs.largeCommunities ?? []).some((l) => l.global === p[0] && l.local1 === p[1] && l.local2 === p[2])
              : (r.attrs.communities ?? []).includes(comm(v));
          if (!has) continue;
        }
        if (rule.asPathPrefix && !(rule.asPathPrefix as number[]).every((a, i) => seq[i] === a)) continue;
        if (rule.priority !== undefined && (r.attrs.localPref ?? 100) !== INT_MAX - (rule.priority as number)) continue;
        if (rule.action === 'Reject') return { verdict: 'reject', attrs: r.attrs };
        const attrs: Record<string, unknown> = { ...r.attrs };
        let path = seq;
        for (const op of (rule.operations ?? []) as Record<string, { value?: string | number; prefix?: number[] }>[]) {
          if (op.prependASPath) path = [...op.prependASPath.prefix!, ...path];
          if (op.setPriority) attrs.localPref = INT_MAX - (op.setPriority.value as number);
          if (op.addCommunity) {
            const text = op.addCommunity.value as string;
            const p = text.split(':').map(Number);
            if (p.length === 3) {
              const l = [...((attrs.largeCommunities as PathAttributes['largeCommunities']) ?? [])];
              if (!l.some((x) => x.global === p[0] && x.local1 === p[1] && x.local2 === p[2])) l.push({ global: p[0], local1: p[1], local2: p[2] });
              attrs.largeCommunities = l;
            } else {
              const l = [...((attrs.communities as number[]) ?? [])];
              if (!l.includes(comm(text))) l.push(comm(text));
              attrs.communities = l;
            }
          }
        }
        if (path !== seq) attrs.asPath = [{ type: 2, asns: path }];
        return { verdict: 'accept', attrs: attrs as PathAttributes };
      }
    }
    // No rule decided: import accepts; export falls through to the built-in export (the engine's defaults).
    if (direction === 'import' || r.source.kind === 'local' || c.peer.type === 'ibgp') return { verdict: 'accept', attrs: r.attrs };
    return { verdict: 'reject', attrs: r.attrs };
  }

  it('validated, compiled and chained per peer family, filters agree with the direct reading', () => {
    const peers: PeerRef[] = [ebgpPeer, ibgpPeer];
    fc.assert(
      fc.property(
        fc.array(spec, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('import' as const, 'export' as const),
        fc.constantFrom(...peers),
        fc.array(routeArb, { maxLength: 6 }),
        (specs, direction, peer, routes) => {
          const raw = specs.map((s, i): [string, RawSpec] => [`f${i}`, s]);
          const filters = raw.map(([n, s]) => bgpFilter(n, s));
          const cf = compileFilters(filters);
          expect(cf.errors.size).toBe(0);
          const names = raw.map(([n]) => n);
          const c: PolicyContext = { peer, direction };
          for (const r of routes) {
            // A session carries its own family: the chain of a peer of the route's family.
            const pp = plannedPeer(r.prefix.family === 4 ? '192.0.2.1' : '2001:db8::1', { filters: names });
            const chain = cf.compiled.chain({ direction, policies: peerChain(pp, direction, filters).policies });
            const want = direct(raw, direction, r, c);
            const got = evaluate(chain, r, c);
            expect(got.verdict).toBe(want.verdict);
            if (want.verdict === 'accept') expect(got.attrs).toEqual(want.attrs);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every field of a rule, as the plan shows it (Calico bgpfilter/as_path_and_priority, communities_and_operations, large_community, match_interface, peer_type)', () => {
    const f = bgpFilter('all', {
      exportV4: [
        {
          action: 'Accept',
          cidr: '198.18.0.0/16',
          matchOperator: 'In',
          prefixLength: { max: 26 },
          source: 'RemotePeers',
          interface: 'eth*',
          peerType: 'iBGP',
          communities: { values: ['65000:1:2'] },
          asPathPrefix: [65001, 65002],
          priority: 512,
          operations: [{ addCommunity: { value: '65000:7' } }, { prependASPath: { prefix: [65000, 65000] } }, { setPriority: { value: 1024 } }],
        },
      ],
    });
    expect(filterRuleJson(f.exportV4[0], 0)).toEqual({
      index: 0,
      action: 'Accept',
      cidr: '198.18.0.0/16',
      matchOperator: 'In',
      prefixLength: { min: 16, max: 26 },
      source: 'RemotePeers',
      interface: 'eth*',
      peerType: 'iBGP',
      communities: ['65000:1:2'],
      asPathPrefix: [65001, 65002],
      priority: { value: 512, localPref: INT_MAX - 512 },
      operations: [{ addCommunity: '65000:7' }, { prependASPath: [65000, 65000] }, { setPriority: 1024, localPref: INT_MAX - 1024 }],
    });
    const cf = compileFilters([f]);
    const chain = cf.compiled.chain({ direction: 'export', policies: peerChain(plannedPeer('192.0.2.1', { filters: ['all'] }), 'export', [f]).policies });
    const base: PolicyRoute = {
      prefix: Prefix.parse('198.18.4.0/24'),
      attrs: { asPath: [{ type: 2, asns: [65001, 65002, 65003] }], largeCommunities: [{ global: 65000, local1: 1, local2: 2 }], localPref: INT_MAX - 512 },
      source: { kind: 'peer', address: Address.parse('192.0.2.9'), asn: 65001, type: 'ebgp' },
      iface: 'eth1',
    };
    const got = evaluate(chain, base, { peer: ibgpPeer, direction: 'export' });
    expect(got.verdict).toBe('accept');
    expect(got.attrs).toMatchObject({
      communities: [comm('65000:7')],
      asPath: [{ type: 2, asns: [65000, 65000, 65001, 65002, 65003] }],
      localPref: INT_MAX - 1024,
    });
    // Each field narrows: change one and the rule no longer decides (the learned route toward eBGP falls to the default reject).
    const misses: [string, PolicyRoute, PeerRef][] = [
      ['prefixLength', { ...base, prefix: Prefix.parse('198.18.4.0/27') }, ibgpPeer],
      ['interface', { ...base, iface: 'vm1.calico' }, ibgpPeer],
      ['no interface', { prefix: base.prefix, attrs: base.attrs, source: base.source }, ibgpPeer],
      ['peerType', base, ebgpPeer],
      ['priority', { ...base, attrs: { ...base.attrs, localPref: 100 } }, ibgpPeer],
      ['asPathPrefix', { ...base, attrs: { ...base.attrs, asPath: [{ type: 2, asns: [65002, 65001] }] } }, ibgpPeer],
      ['communities', { ...base, attrs: { ...base.attrs, largeCommunities: [] } }, ibgpPeer],
      ['source', { ...base, source: { kind: 'local' } }, ibgpPeer],
    ];
    for (const [what, r, p] of misses)
      expect([what, evaluate(chain, r, { peer: p, direction: 'export' }).attrs.communities]).toEqual([what, r.attrs.communities]);
  });

  it('prefix-length windows as Calico computes them; an empty window matches nothing', () => {
    const f = bgpFilter('w', {
      importV4: [
        { action: 'Reject', cidr: '10.0.0.0/8', matchOperator: 'In' },
        { action: 'Reject', cidr: '10.0.0.0/16', matchOperator: 'NotIn', prefixLength: { min: 4, max: 8 } },
      ],
    });
    expect(f.importV4.map(prefixWindow)).toEqual([
      { min: 8, max: 32 },
      { min: 16, max: 8 },
    ]);
    const cf = compileFilters([f]);
    const chain = cf.compiled.chain({ direction: 'import', policies: ['bgpfilter:w:importV4'] });
    const ctx: PolicyContext = { peer: ebgpPeer, direction: 'import' };
    const route = (p: string): PolicyRoute => ({
      prefix: Prefix.parse(p),
      attrs: {},
      source: { kind: 'peer', address: Address.parse('192.0.2.9'), asn: 65001, type: 'ebgp' },
    });
    expect(evaluate(chain, route('10.1.0.0/16'), ctx).verdict).toBe('reject');
    // Outside 10.0.0.0/8 and, the window being empty, "not in" it: rejected by the second rule.
    expect(evaluate(chain, route('11.0.0.0/8'), ctx).verdict).toBe('reject');
  });
});

describe('validation names what Calico would not accept', () => {
  const issue = (rule: RawRule) => {
    const r = validateObject({ apiVersion: 'projectcalico.org/v3', kind: 'BGPFilter', metadata: { name: 'x' }, spec: { exportV4: [rule] } }, 'f.yaml');
    return r.ok ? undefined : r.issue;
  };
  it('interface: a name or glob of at most 15 characters', () => {
    expect(issue({ action: 'Reject', interface: 'eth*' })).toBeUndefined();
    expect(issue({ action: 'Reject', interface: '*' })).toBeUndefined();
    expect(issue({ action: 'Reject', interface: 'eth 0' })).toMatchObject({
      path: 'spec.exportV4[0].interface',
      message: expect.stringContaining('interface name'),
    });
    expect(issue({ action: 'Reject', interface: 'a-very-long-interface' })).toMatchObject({ path: 'spec.exportV4[0].interface' });
  });
  it('prefixLength only with In or NotIn; operations only on Accept; one community', () => {
    expect(issue({ action: 'Reject', cidr: '10.0.0.0/8', matchOperator: 'Equal', prefixLength: { min: 9 } })).toMatchObject({
      path: 'spec.exportV4[0].prefixLength',
      message: expect.stringContaining('In or NotIn'),
    });
    expect(issue({ action: 'Reject', operations: [{ addCommunity: { value: '1:1' } }] })).toMatchObject({ path: 'spec.exportV4[0].operations' });
    expect(issue({ action: 'Reject', communities: { values: ['1:1', '1:2'] } })).toMatchObject({ path: 'spec.exportV4[0].communities.values' });
    expect(issue({ action: 'Accept', priority: 0 })).toMatchObject({ path: 'spec.exportV4[0].priority' });
  });
});

describe('chains and warnings', () => {
  it('a filter without rules for a family, or missing, takes no part in the chain; the chain JSON says why', () => {
    const only4 = bgpFilter('only4', { exportV4: [{ action: 'Reject', interface: 'eth0' }] });
    const v6 = plannedPeer('2001:db8::9', { filters: ['only4', 'gone'] });
    expect(peerChain(v6, 'export', [only4])).toMatchObject({
      list: 'exportV6',
      policies: [],
      skipped: [
        { name: 'only4', reason: 'no rules' },
        { name: 'gone', reason: 'not found' },
      ],
    });
    expect(filterChainJson(v6, 'import', [only4])).toEqual({
      filters: [],
      skipped: [
        { name: 'only4', reason: 'no rules' },
        { name: 'gone', reason: 'not found' },
      ],
      otherwise: 'accept',
    });
    const v4 = plannedPeer('192.0.2.9', { filters: ['only4'] });
    expect(filterChainJson(v4, 'export', [only4])).toEqual({
      filters: [{ name: 'only4', list: 'exportV4', rules: [{ index: 0, action: 'Reject', interface: 'eth0', operations: [] }] }],
      skipped: [],
      otherwise: 'builtin',
    });
  });

  it("warnings: a missing filter per peer; interface rules only where a peer may send routes with no interface (next hop off the session's network)", () => {
    const f = bgpFilter('ifs', {
      exportV4: [
        { action: 'Reject', interface: 'eth0' },
        { action: 'Reject', interface: 'eth*', source: 'RemotePeers' },
      ],
      importV6: [{ action: 'Accept', interface: '*.calico' }],
    });
    const warnings = (...peers: ReturnType<typeof plannedPeer>[]) => filterWarnings({ ...planOf(peers), filters: [f] });
    // An eBGP peer one hop away: its next hops are on the session's network, whose interface tsbgp knows.
    const direct = plannedPeer('192.0.2.9', { filters: ['ifs', 'gone'] });
    expect(warnings(direct).map((w) => [w.kind, w.name, w.field])).toEqual([['BGPPeer', 'p', 'spec.filters']]);
    expect(warnings(direct)[0]).toMatchObject({ message: expect.stringContaining('BGPFilter gone not found'), peer: { address: '192.0.2.9', asn: 65000 } });
    // iBGP (a route reflector passes on other nodes' next hops), or eBGP several hops away: each interface rule, saying why.
    const fields = [
      ['BGPFilter', 'ifs', 'spec.exportV4[0].interface'],
      ['BGPFilter', 'ifs', 'spec.exportV4[1].interface'],
      ['BGPFilter', 'ifs', 'spec.importV6[0].interface'],
    ];
    const rr = plannedPeer('192.0.2.10', { filters: ['ifs'], asn: 64512 });
    expect(warnings(direct, rr).map((w) => [w.kind, w.name, w.field])).toEqual([['BGPPeer', 'p', 'spec.filters'], ...fields]);
    expect(warnings(rr)[0].message).toBe(
      "peer 192.0.2.10 is iBGP and passes on other routers' next hops: a route whose next hop is not on that session's network gets its interface from the kernel's routes (as Calico's BIRD resolves it) only with kernel programming on (`tsbgp agent --kernel on`); without it, or with no route to the next hop, this rule does not match it",
    );
    const far = plannedPeer('192.0.2.11', { filters: ['ifs'], ttlSecurity: 3 });
    expect(warnings(far).map((w) => [w.name, w.field])).toEqual(fields.map(([, n, x]) => [n, x]));
    expect(warnings(far)[0].message).toMatch(/^peer 192\.0\.2\.11 is up to 3 hops away: /);
    // A refused peer sends nothing.
    expect(warnings({ ...rr, refused: true })).toEqual([]);
  });
});

describe('the export verdict of a route with an interface (plan, explain)', () => {
  it('a route learned from the kernel is judged with its device: interface "cali*" rejects it; without one the rule does not match', () => {
    const f = bgpFilter('no-pods', { exportV4: [{ action: 'Reject', interface: 'cali*' }] });
    const p = plannedPeer('192.0.2.9', { filters: ['no-pods'] });
    const plan = { ...planOf([p]), filters: [f] };
    const prefix = Prefix.parse('198.19.7.7/32');
    expect(exportFilterVerdict(plan, p, prefix, [], 'cali12')).toEqual({ verdict: 'reject', reason: 'BGPFilter no-pods exportV4[0] rejects' });
    expect(exportFilterVerdict(plan, p, prefix, [], 'eth0').verdict).toBe('none');
    expect(exportFilterVerdict(plan, p, prefix).verdict).toBe('none');
  });
});

function planOf(peers: ReturnType<typeof plannedPeer>[]) {
  return {
    node: { name: 'n1', asn: 64512, serviceAdvertisementExcluded: false },
    listen: { port: 179 },
    logSeverity: 'Info' as const,
    routes: [],
    refused: [],
    peers,
    filters: [] as BGPFilter[],
    exportAllowList: { pools: [], serviceRanges: [], reflected: [] },
    errors: [],
  };
}
