import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Address, Prefix } from '../../src/net/index.js';
import { parsePrefixRange } from '../../src/net/prefix-set.js';
import type { ActionsDef, ConditionsDef, DefinedSetsDef, PolicyConfigDef, StatementDef } from '../../src/policy/definitions.js';
import { compilePolicy, evaluate, explain } from '../../src/policy/index.js';
import type { PeerRef, PolicyContext, PolicyRoute, RouteSource } from '../../src/policy/types.js';
import type { AsPathSegment, PathAttributes } from '../../src/wire/types.js';
import { deepFreeze } from './helpers.js';

// ---------------------------------------------------------------- random inputs

const SETS: DefinedSetsDef = {
  prefix: { a: ['10.0.0.0/8{16,24}', '192.168.0.0/16'], b: ['10.1.0.0/16 le 32', '2001:db8::/32 ge 48 le 64'], c: ['0.0.0.0/0 le 8'] },
  community: { x: ['65000:1', '65000:2'], y: ['65001:*'], z: ['*:3', '65002:4'] },
  asPath: { s1: ['starts-with 65001'], c2: ['contains 65002 65003'], o3: ['origin 65003', 'origin 65004'] },
  neighbor: { n: ['192.0.2.0/24', '10.9.9.9'] },
};
const PREFIXES = [
  '10.1.0.0/16',
  '10.1.2.0/24',
  '10.1.2.128/25',
  '192.168.0.0/16',
  '192.168.1.0/24',
  '11.0.0.0/8',
  '0.0.0.0/0',
  '2001:db8:1::/48',
  '2001:db8::/32',
  '2001:db8:1:2::/64',
];
const COMMUNITY_TEXT = ['65000:1', '65000:2', '65001:7', '65002:3', '65002:4', '1:1'];
const ASNS = [65001, 65002, 65003, 65004];

const conditions: fc.Arbitrary<ConditionsDef> = fc.record(
  {
    prefixSet: fc.record({ set: fc.constantFrom('a', 'b', 'c'), match: fc.constantFrom('any' as const, 'invert' as const) }),
    family: fc.constantFrom('ipv4' as const, 'ipv6' as const),
    neighborSet: fc.record({
      set: fc.constant('n'),
      match: fc.constantFrom('any' as const, 'invert' as const),
      of: fc.constantFrom('peer' as const, 'source' as const),
    }),
    peerType: fc.constantFrom('ebgp' as const, 'ibgp' as const),
    routeSource: fc.constantFrom('local' as const, 'learned' as const),
    communitySet: fc.record({ set: fc.constantFrom('x', 'y', 'z'), match: fc.constantFrom('any' as const, 'all' as const, 'invert' as const) }),
    asPathSet: fc.record({ set: fc.constantFrom('s1', 'c2', 'o3'), match: fc.constantFrom('any' as const, 'all' as const, 'invert' as const) }),
    med: fc.record({
      op: fc.constantFrom('eq' as const, 'ne' as const, 'lt' as const, 'le' as const, 'gt' as const, 'ge' as const),
      value: fc.integer({ min: 0, max: 20 }),
    }),
    localPref: fc.record({ op: fc.constantFrom('eq' as const, 'lt' as const, 'ge' as const), value: fc.constantFrom(50, 100, 200) }),
    asPathLength: fc.record({ op: fc.constantFrom('eq' as const, 'le' as const, 'gt' as const), value: fc.integer({ min: 0, max: 4 }) }),
  },
  { requiredKeys: [] },
);
const actions: fc.Arbitrary<ActionsDef> = fc.record(
  {
    result: fc.constantFrom('accept' as const, 'reject' as const, 'continue' as const, 'next-policy' as const),
    community: fc.record(
      { add: fc.subarray(COMMUNITY_TEXT), remove: fc.subarray([...COMMUNITY_TEXT, '65002:*', '*:1']), replace: fc.subarray(COMMUNITY_TEXT) },
      { requiredKeys: [] },
    ),
    localPref: fc.constantFrom(50, 100, 200),
    med: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constantFrom('+5', '-5', '+0')),
    asPathPrepend: fc.oneof(
      fc.record({ asn: fc.constantFrom('self' as const, 'last' as const, 65009), count: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ asns: fc.array(fc.constantFrom(...ASNS), { minLength: 1, maxLength: 3 }) }),
    ),
  },
  { requiredKeys: [] },
);
const statement: fc.Arbitrary<StatementDef> = fc.record({ conditions, actions }, { requiredKeys: [] });
const policies = fc.array(fc.array(statement, { maxLength: 4 }), { minLength: 1, maxLength: 3 });

const comm = (t: string) => {
  const [a, b] = t.split(':').map(Number);
  return a * 65536 + b;
};
const attrsArb: fc.Arbitrary<PathAttributes> = fc.record(
  {
    communities: fc.subarray(COMMUNITY_TEXT.map(comm)),
    med: fc.integer({ min: 0, max: 20 }),
    localPref: fc.constantFrom(50, 100, 200),
    asPath: fc.array(fc.constantFrom(...ASNS), { maxLength: 4 }).map((asns): AsPathSegment[] => (asns.length ? [{ type: 2, asns }] : [])),
    nextHop: fc.constantFrom(Address.parse('192.0.2.7'), Address.parse('198.51.100.1')),
  },
  { requiredKeys: [] },
);
const sourceArb: fc.Arbitrary<RouteSource> = fc.oneof(
  fc.constant({ kind: 'local' as const }),
  fc.constantFrom('192.0.2.5', '10.9.9.9', '203.0.113.1').map((a): RouteSource => ({ kind: 'peer', address: Address.parse(a), asn: 65001, type: 'ebgp' })),
);
const routeArb: fc.Arbitrary<PolicyRoute> = fc.record({ prefix: fc.constantFrom(...PREFIXES).map((p) => Prefix.parse(p)), attrs: attrsArb, source: sourceArb });
const peerArb: fc.Arbitrary<PeerRef> = fc.record({
  address: fc.constantFrom('192.0.2.1', '10.9.9.9', '203.0.113.9').map((a) => Address.parse(a)),
  asn: fc.constant(65001),
  type: fc.constantFrom('ebgp' as const, 'ibgp' as const),
  localAsn: fc.constant(65000),
});

// ---------------------------------------------------------------- the tiny interpreter

function cmp(op: string, a: number, b: number): boolean {
  return op === 'eq' ? a === b : op === 'ne' ? a !== b : op === 'lt' ? a < b : op === 'le' ? a <= b : op === 'gt' ? a > b : a >= b;
}
function commMatches(pattern: string, c: number): boolean {
  const [pa, pb] = pattern.split(':');
  return (pa === '*' || Number(pa) === c >>> 16) && (pb === '*' || Number(pb) === (c & 0xffff));
}
function seq(path: readonly AsPathSegment[] | undefined): number[] {
  return (path ?? []).flatMap((s) => [...s.asns]);
}
function asPathEntry(entry: string, path: readonly AsPathSegment[] | undefined): boolean {
  const [kind, ...nums] = entry.split(' ');
  const want = nums.map(Number);
  const s = seq(path);
  if (kind === 'starts-with') return want.every((a, i) => s[i] === a);
  if (kind === 'origin') return s.length > 0 && s[s.length - 1] === want[0];
  for (let i = 0; i + want.length <= s.length; i++) if (want.every((a, j) => s[i + j] === a)) return true;
  return false;
}
function setMatch(match: string | undefined, members: string[], test: (m: string) => boolean): boolean {
  if (match === 'all') return members.every(test);
  const any = members.some(test);
  return match === 'invert' ? !any : any;
}

function condHolds(c: ConditionsDef, r: PolicyRoute, a: PathAttributes, ctx: PolicyContext): boolean {
  if (c.prefixSet) {
    const inSet = SETS.prefix![c.prefixSet.set].some((t) => {
      const pr = parsePrefixRange(t);
      return pr.prefix.contains(r.prefix) && r.prefix.length >= pr.ge && r.prefix.length <= pr.le;
    });
    if (inSet === (c.prefixSet.match === 'invert')) return false;
  }
  if (c.family && (c.family === 'ipv4') !== (r.prefix.family === 4)) return false;
  if (c.neighborSet) {
    const addr = c.neighborSet.of === 'source' ? (r.source.kind === 'peer' ? r.source.address : undefined) : ctx.peer.address;
    const inSet = addr !== undefined && SETS.neighbor![c.neighborSet.set].some((t) => Prefix.parse(t, { allowBareAddress: true }).contains(addr));
    if (inSet === (c.neighborSet.match === 'invert')) return false;
  }
  if (c.peerType && ctx.peer.type !== c.peerType) return false;
  if (c.routeSource && (c.routeSource === 'local') !== (r.source.kind === 'local')) return false;
  if (c.communitySet && !setMatch(c.communitySet.match, [...SETS.community![c.communitySet.set]], (m) => (a.communities ?? []).some((x) => commMatches(m, x))))
    return false;
  if (c.asPathSet && !setMatch(c.asPathSet.match, [...SETS.asPath![c.asPathSet.set]], (m) => asPathEntry(m, a.asPath))) return false;
  if (c.med && !cmp(c.med.op, a.med ?? 0, c.med.value)) return false;
  if (c.localPref && !cmp(c.localPref.op, a.localPref ?? 100, c.localPref.value)) return false;
  if (c.asPathLength && !cmp(c.asPathLength.op, seq(a.asPath).length, c.asPathLength.value)) return false;
  return true;
}

function applyActions(x: ActionsDef, a: PathAttributes, ctx: PolicyContext): PathAttributes {
  const out: Record<string, unknown> = { ...a };
  if (x.community) {
    let l = x.community.replace ? x.community.replace.map(comm) : [...(a.communities ?? [])];
    if (x.community.remove) l = l.filter((c) => !x.community!.remove!.some((m) => commMatches(m, c)));
    for (const c of (x.community.add ?? []).map(comm)) if (!l.includes(c)) l.push(c);
    if (l.length) out.communities = l;
    else delete out.communities;
  }
  if (x.localPref !== undefined) out.localPref = x.localPref;
  if (x.med !== undefined) out.med = typeof x.med === 'number' ? x.med : Math.max(0, (a.med ?? 0) + Number(x.med));
  const pp = x.asPathPrepend;
  if (pp && 'asns' in pp) out.asPath = [{ type: 2, asns: [...pp.asns, ...seq(a.asPath)] }];
  else if (pp && pp.count > 0) {
    const s = seq(a.asPath);
    const asn = pp.asn === 'self' ? ctx.peer.localAsn : pp.asn === 'last' ? s[0] : pp.asn;
    if (asn !== undefined) out.asPath = [{ type: 2, asns: [...new Array(pp.count).fill(asn), ...s] }];
  }
  return out as PathAttributes;
}

function interpret(pols: StatementDef[][], direction: 'import' | 'export', r: PolicyRoute, ctx: PolicyContext): { verdict: string; attrs: PathAttributes } {
  let a = r.attrs;
  for (const pol of pols) {
    for (const s of pol) {
      if (!condHolds(s.conditions ?? {}, r, a, ctx)) continue;
      a = applyActions(s.actions ?? {}, a, ctx);
      const res = s.actions?.result ?? 'continue';
      if (res === 'accept' || res === 'reject') return { verdict: res, attrs: a };
      if (res === 'next-policy') break;
    }
  }
  if (direction === 'import') return { verdict: 'accept', attrs: a };
  if (r.source.kind === 'local') return { verdict: 'accept', attrs: a };
  return { verdict: ctx.peer.type === 'ebgp' ? 'reject' : 'accept', attrs: a };
}

function configOf(pols: StatementDef[][]): PolicyConfigDef {
  return { sets: SETS, policies: Object.fromEntries(pols.map((statements, i) => [`p${i}`, { statements }])) };
}

describe('compiled policies', () => {
  it('agree with a direct reading of the definitions', () => {
    fc.assert(
      fc.property(
        policies,
        fc.constantFrom('import' as const, 'export' as const),
        fc.array(routeArb, { minLength: 1, maxLength: 8 }),
        peerArb,
        (pols, direction, routes, peer) => {
          const cp = compilePolicy(configOf(pols));
          const chain = cp.chain({ direction, policies: pols.map((_, i) => `p${i}`) });
          const ctx: PolicyContext = { peer, direction };
          for (const r of routes) {
            const want = interpret(pols, direction, r, ctx);
            const got = evaluate(chain, r, ctx);
            expect(got.verdict).toBe(want.verdict);
            expect(got.attrs).toEqual(want.attrs);
            const ex = explain(chain, r, ctx);
            expect([ex.verdict, ex.trace.verdict]).toEqual([want.verdict, want.verdict]);
            expect(ex.attrs).toEqual(want.attrs);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never mutate the route they are given', () => {
    fc.assert(
      fc.property(policies, fc.constantFrom('import' as const, 'export' as const), routeArb, peerArb, (pols, direction, r, peer) => {
        const chain = compilePolicy(configOf(pols)).chain({ direction, policies: pols.map((_, i) => `p${i}`) });
        const snapshot = structuredClone({ attrs: r.attrs, prefix: r.prefix.toString() });
        const frozen = deepFreeze({ ...r, attrs: { ...r.attrs, extendedCommunities: [1n] } });
        const before = structuredClone(frozen.attrs);
        const res = evaluate(chain, frozen, { peer, direction });
        explain(chain, frozen, { peer, direction });
        expect(frozen.attrs).toEqual(before);
        expect({ attrs: r.attrs, prefix: r.prefix.toString() }).toEqual(snapshot);
        // Unchanged fields are shared, changed ones are new objects.
        if (res.attrs !== frozen.attrs) expect(res.attrs.extendedCommunities).toBe(frozen.attrs.extendedCommunities);
      }),
      { numRuns: 300 },
    );
  });
});
