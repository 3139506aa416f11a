import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address, Prefix } from '../../src/net/index.js';
import { calicoChain, type CalicoFilterRule, type CalicoFilterSpec, compileCalicoFilter, mergeConfigs } from '../../src/policy/calico-filter.js';
import { compilePolicy, evaluate, explain, PolicyError } from '../../src/policy/index.js';
import type { PeerRef, PolicyContext, PolicyRoute, RouteSource } from '../../src/policy/types.js';
import type { AsPathSegment, PathAttributes } from '../../src/wire/types.js';
import { ctx, ebgpPeer, ibgpPeer, local, route } from './helpers.js';

const comm = (t: string) => {
  const [a, b] = t.split(':').map(Number);
  return a * 65536 + b;
};

function build(filters: Record<string, CalicoFilterSpec>) {
  const compiled = Object.entries(filters).map(([n, s]) => compileCalicoFilter(n, s));
  return { cp: compilePolicy(mergeConfigs(...compiled.map((c) => c.config))), warnings: compiled.flatMap((c) => c.warnings) };
}

describe('Calico BGPFilter', () => {
  const { cp, warnings } = build({
    f: {
      exportV4: [
        { action: 'Reject', cidr: '10.0.0.0/8', matchOperator: 'In', prefixLength: { min: 25 } },
        { action: 'Accept', cidr: '10.0.0.0/8', matchOperator: 'In', operations: [{ addCommunity: { value: '65000:7' } }, { prependASPath: { prefix: [65000, 65000] } }, { setPriority: { value: 5 } }] },
      ],
      importV4: [{ action: 'Reject', source: 'RemotePeers', peerType: 'eBGP', asPathPrefix: [65066] }],
      exportV6: [{ action: 'Accept', cidr: '2001:db8::/32', matchOperator: 'Equal' }],
    },
  });
  const exp = cp.chain(calicoChain(['f'], 'export'));
  const imp = cp.chain(calicoChain(['f'], 'import'));

  it('first matching rule decides; operations apply on Accept', () => {
    expect(evaluate(exp, route('10.1.2.0/25', {}, local), ctx(ebgpPeer, 'export')).verdict).toBe('reject');
    const a = evaluate(exp, route('10.1.2.0/24', { asPath: [{ type: 2, asns: [1] }] }), ctx(ebgpPeer, 'export'));
    expect([a.verdict, a.attrs.communities, a.attrs.asPath]).toEqual(['accept', [comm('65000:7')], [{ type: 2, asns: [65000, 65000, 1] }]]);
    expect(warnings).toEqual([expect.stringContaining('setPriority')]);
  });
  it('export without a match falls through to reject, also for local routes and iBGP peers; import accepts', () => {
    expect(evaluate(exp, route('11.0.0.0/8', {}, local), ctx(ibgpPeer, 'export')).verdict).toBe('reject');
    expect(explain(exp, route('2001:db8::/48', {}, local), ctx(ebgpPeer, 'export')).trace.reason).toContain('bgpfilter:default-export-reject');
    expect(evaluate(exp, route('2001:db8::/32', {}, local), ctx(ebgpPeer, 'export')).verdict).toBe('accept');
    expect(evaluate(imp, route('11.0.0.0/8', { asPath: [{ type: 2, asns: [65066, 1] }] }), ctx(ebgpPeer, 'import')).verdict).toBe('reject');
    expect(evaluate(imp, route('11.0.0.0/8', { asPath: [{ type: 2, asns: [65066, 1] }] }), ctx(ibgpPeer, 'import')).verdict).toBe('accept');
  });
  it('rejects what it cannot honour, naming filter, list, rule and field', () => {
    const bad = (rule: object, why: string) => {
      expect(() => compileCalicoFilter('x', { exportV4: [rule as CalicoFilterRule] })).toThrow(PolicyError);
      expect(() => compileCalicoFilter('x', { exportV4: [rule as CalicoFilterRule] })).toThrow(why);
    };
    bad({ action: 'Accept', cidr: '10.0.0.0/8' }, 'together');
    bad({ action: 'Accept', interface: 'eth*' }, 'BGPFilter "x" exportV4[0].interface');
    bad({ action: 'Reject', operations: [{ addCommunity: { value: '1:1' } }] }, 'only Accept');
    bad({ action: 'Accept', cidr: '2001:db8::/32', matchOperator: 'In' }, 'not an IPv4 prefix');
    bad({ action: 'Accept', cidr: '10.0.0.0/8', matchOperator: 'Equal', prefixLength: { min: 9 } }, 'In or NotIn');
    bad({ action: 'Maybe' }, 'action');
    // Standard or large is the one community parser's reading, and what it refuses names the field.
    bad({ action: 'Reject', communities: { values: ['1:2:3:4'] } }, 'BGPFilter "x" exportV4[0].communities.values[0]: invalid community (expected "AS:value" or "global:local1:local2")');
    bad({ action: 'Accept', operations: [{ addCommunity: { value: '65000:1:4294967296' } }] }, 'BGPFilter "x" exportV4[0].operations[0].addCommunity.value: invalid large community');
  });

  // ------------------------------------------------------------ against a direct reading of the rules
  const CIDRS4 = ['10.0.0.0/8', '10.1.0.0/16', '192.168.0.0/16', '0.0.0.0/0'];
  const CIDRS6 = ['2001:db8::/32', '2001:db8:1::/48'];
  const COMMS = ['65000:1', '65000:2', '65000:1:2'];
  const rule = (cidrs: string[]): fc.Arbitrary<CalicoFilterRule> =>
    fc
      .record(
        {
          action: fc.constantFrom('Accept' as const, 'Reject' as const),
          cidr: fc.tuple(fc.constantFrom(...cidrs), fc.constantFrom('Equal' as const, 'NotEqual' as const, 'In' as const, 'NotIn' as const)),
          prefixLength: fc.record({ min: fc.integer({ min: 0, max: 64 }), max: fc.integer({ min: 0, max: 64 }) }, { requiredKeys: [] }),
          source: fc.constant('RemotePeers' as const),
          peerType: fc.constantFrom('eBGP' as const, 'iBGP' as const),
          communities: fc.constantFrom(...COMMS).map((v) => ({ values: [v] })),
          asPathPrefix: fc.array(fc.constantFrom(65001, 65002), { minLength: 1, maxLength: 2 }),
          operations: fc.array(
            fc.oneof(fc.constantFrom(...COMMS).map((value) => ({ addCommunity: { value } })), fc.array(fc.constantFrom(1, 2), { minLength: 1, maxLength: 2 }).map((prefix) => ({ prependASPath: { prefix } }))),
            { maxLength: 3 },
          ),
        },
        { requiredKeys: ['action'] },
      )
      .map(({ cidr, prefixLength, operations, ...r }) => {
        const out: Record<string, unknown> = { ...r };
        if (cidr) {
          out.cidr = cidr[0];
          out.matchOperator = cidr[1];
          if (prefixLength && (cidr[1] === 'In' || cidr[1] === 'NotIn')) {
            const max = cidr[0].includes(':') ? 128 : 32;
            out.prefixLength = Object.fromEntries(Object.entries(prefixLength).map(([k, v]) => [k, Math.min(v, max)]));
          }
        }
        if (operations && r.action === 'Accept') out.operations = operations;
        return out as unknown as CalicoFilterRule;
      });
  const spec: fc.Arbitrary<CalicoFilterSpec> = fc.record(
    { exportV4: fc.array(rule(CIDRS4), { maxLength: 4 }), importV4: fc.array(rule(CIDRS4), { maxLength: 4 }), exportV6: fc.array(rule(CIDRS6), { maxLength: 3 }), importV6: fc.array(rule(CIDRS6), { maxLength: 3 }) },
    { requiredKeys: [] },
  );
  const PREFIXES = ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.0/24', '10.1.2.0/30', '192.168.1.0/24', '11.0.0.0/8', '2001:db8::/32', '2001:db8:1::/48', '2001:db8:1:2::/64'];
  const routeArb: fc.Arbitrary<PolicyRoute> = fc.record({
    prefix: fc.constantFrom(...PREFIXES).map((p) => Prefix.parse(p)),
    attrs: fc.record(
      {
        communities: fc.subarray(['65000:1', '65000:2'].map(comm)),
        largeCommunities: fc.subarray([{ global: 65000, local1: 1, local2: 2 }]),
        asPath: fc.array(fc.constantFrom(65001, 65002), { maxLength: 3 }).map((asns): AsPathSegment[] => (asns.length ? [{ type: 2, asns }] : [])),
      },
      { requiredKeys: [] },
    ),
    source: fc.constantFrom<RouteSource>({ kind: 'local' }, { kind: 'peer', address: Address.parse('192.0.2.9'), asn: 65001, type: 'ebgp' }),
  });

  function direct(filters: [string, CalicoFilterSpec][], direction: 'import' | 'export', r: PolicyRoute, c: PolicyContext): { verdict: string; attrs: PathAttributes } {
    const list = `${direction}V${r.prefix.family}` as keyof CalicoFilterSpec;
    const seq = (r.attrs.asPath ?? []).flatMap((s) => s.asns);
    for (const [, f] of filters) {
      for (const rule of f[list] ?? []) {
        if (rule.cidr) {
          const cidr = Prefix.parse(rule.cidr);
          const lo = Math.max(cidr.length, rule.prefixLength?.min ?? 0);
          const hi = Math.min(cidr.maxLength, rule.prefixLength?.max ?? cidr.maxLength);
          const inside = cidr.contains(r.prefix) && r.prefix.length >= lo && r.prefix.length <= hi;
          const ok = { Equal: cidr.equals(r.prefix), NotEqual: !cidr.equals(r.prefix), In: inside, NotIn: !inside }[rule.matchOperator!];
          if (!ok) continue;
        }
        if (rule.source === 'RemotePeers' && r.source.kind !== 'peer') continue;
        if (rule.peerType && rule.peerType.toLowerCase() !== c.peer.type) continue;
        if (rule.communities) {
          const v = rule.communities.values![0];
          const p = v.split(':').map(Number);
          const has = p.length === 3 ? (r.attrs.largeCommunities ?? []).some((l) => l.global === p[0] && l.local1 === p[1] && l.local2 === p[2]) : (r.attrs.communities ?? []).includes(comm(v));
          if (!has) continue;
        }
        if (rule.asPathPrefix && !rule.asPathPrefix.every((a, i) => seq[i] === a)) continue;
        if (rule.action === 'Reject') return { verdict: 'reject', attrs: r.attrs };
        const attrs: Record<string, unknown> = { ...r.attrs };
        let path = seq;
        for (const op of rule.operations ?? []) {
          if (op.prependASPath) path = [...op.prependASPath.prefix, ...path];
          if (op.addCommunity) {
            const p = op.addCommunity.value.split(':').map(Number);
            if (p.length === 3) {
              const l = [...((attrs.largeCommunities as PathAttributes['largeCommunities']) ?? [])];
              if (!l.some((x) => x.global === p[0] && x.local1 === p[1] && x.local2 === p[2])) l.push({ global: p[0], local1: p[1], local2: p[2] });
              attrs.largeCommunities = l;
            } else {
              const l = [...((attrs.communities as number[]) ?? [])];
              if (!l.includes(comm(op.addCommunity.value))) l.push(comm(op.addCommunity.value));
              attrs.communities = l;
            }
          }
        }
        if (path !== seq) attrs.asPath = [{ type: 2, asns: path }];
        return { verdict: 'accept', attrs: attrs as PathAttributes };
      }
    }
    return { verdict: direction === 'import' ? 'accept' : 'reject', attrs: r.attrs };
  }

  it('compiled filters agree with a direct reading of the rules', () => {
    const peers: PeerRef[] = [ebgpPeer, ibgpPeer];
    fc.assert(
      fc.property(fc.array(spec, { minLength: 1, maxLength: 3 }), fc.constantFrom('import' as const, 'export' as const), fc.constantFrom(...peers), fc.array(routeArb, { maxLength: 6 }), (specs, direction, peer, routes) => {
        const filters = specs.map((s, i): [string, CalicoFilterSpec] => [`f${i}`, s]);
        const { cp } = build(Object.fromEntries(filters));
        const chain = cp.chain(calicoChain(filters.map(([n]) => n), direction));
        const c: PolicyContext = { peer, direction };
        for (const r of routes) {
          const want = direct(filters, direction, r, c);
          const got = evaluate(chain, r, c);
          expect(got.verdict).toBe(want.verdict);
          if (want.verdict === 'accept') expect(got.attrs).toEqual(want.attrs);
        }
      }),
      { numRuns: 300 },
    );
  });
});
