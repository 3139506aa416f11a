import { describe, expect, it } from 'vitest';
import { compilePolicy, evaluate } from '../../src/policy/index.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { ctx, deepFreeze, ebgpPeer, route } from './helpers.js';

const cp = compilePolicy({
  sets: { prefix: { ten: ['10.0.0.0/8{8,32}'] } },
  policies: {
    tag: {
      statements: [
        { conditions: { prefixSet: { set: 'ten' } }, actions: { result: 'reject' } },
        { actions: { community: { add: ['65000:1'] }, localPref: 200, result: 'accept' } },
      ],
    },
    prependSelf: { statements: [{ actions: { asPathPrepend: { count: 1 }, result: 'accept' } }] },
    filter: { statements: [{ conditions: { prefixSet: { set: 'ten' } }, actions: { result: 'reject' } }, { actions: { result: 'accept' } }] },
    self: { statements: [{ actions: { nextHop: 'self', result: 'accept' } }] },
  },
});
const imp = ctx(ebgpPeer, 'import');

describe('memoized modifications', () => {
  it('copies once per attributes object: routes sharing attrs get the same output object', () => {
    const chain = cp.chain({ direction: 'import', policies: ['tag'] });
    const attrs: PathAttributes = deepFreeze({ origin: 0, communities: [7] });
    const a = evaluate(chain, route('192.0.2.0/24', attrs), imp);
    const b = evaluate(chain, route('198.51.100.0/24', attrs), imp);
    expect(a.verdict).toBe('accept');
    expect(a.attrs).toEqual({ origin: 0, communities: [7, ((65000 << 16) | 1) >>> 0], localPref: 200 });
    expect(b.attrs).toBe(a.attrs);
    expect(attrs).toEqual({ origin: 0, communities: [7] });
    // Equal but distinct input objects are computed separately, with equal results.
    const c = evaluate(chain, route('192.0.2.0/24', { origin: 0, communities: [7] }), imp);
    expect(c.attrs).not.toBe(a.attrs);
    expect(c.attrs).toEqual(a.attrs);
  });

  it('still decides per prefix: the prefix condition is not memoized', () => {
    const chain = cp.chain({ direction: 'import', policies: ['tag'] });
    const attrs: PathAttributes = { origin: 0 };
    expect(evaluate(chain, route('192.0.2.0/24', attrs), imp).verdict).toBe('accept');
    expect(evaluate(chain, route('10.1.0.0/16', attrs), imp).verdict).toBe('reject');
    expect(evaluate(chain, route('10.1.0.0/16', attrs), imp).attrs).toBe(attrs);
  });

  it('does not memoize a prepend of our own ASN, which depends on the context', () => {
    const chain = cp.chain({ direction: 'export', policies: ['prependSelf'] });
    const attrs: PathAttributes = { asPath: [{ type: 2, asns: [65009] }] };
    const r1 = evaluate(chain, route('192.0.2.0/24', attrs), ctx({ ...ebgpPeer, localAsn: 65000 }, 'export'));
    const r2 = evaluate(chain, route('192.0.2.0/24', attrs), ctx({ ...ebgpPeer, localAsn: 65100 }, 'export'));
    expect(r1.attrs.asPath).toEqual([{ type: 2, asns: [65000, 65009] }]);
    expect(r2.attrs.asPath).toEqual([{ type: 2, asns: [65100, 65009] }]);
  });
});

describe('shared results', () => {
  it('an accept/reject-only chain returns the input attrs and a shared frozen result per verdict and attrs', () => {
    const chain = cp.chain({ direction: 'import', policies: ['filter'] });
    const attrs: PathAttributes = { origin: 1 };
    const a = evaluate(chain, route('192.0.2.0/24', attrs), imp);
    const b = evaluate(chain, route('198.51.100.0/24', attrs), imp);
    const r = evaluate(chain, route('10.0.0.0/8', attrs), imp);
    // Statements decided both (PolicyResult.decided).
    expect(a).toEqual({ verdict: 'accept', attrs, decided: true });
    expect(b).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(r).toEqual({ verdict: 'reject', attrs, decided: true });
    // The chain's default is shared apart from a statement's, and says nothing decided.
    const none = cp.chain({ direction: 'import', policies: [] });
    const d = evaluate(none, route('192.0.2.0/24', attrs), imp);
    expect(d).toEqual({ verdict: 'accept', attrs });
    expect(evaluate(none, route('198.51.100.0/24', attrs), imp)).toBe(d);
  });

  it('a next-hop directive is never lost to, nor leaked into, a shared result', () => {
    const self = cp.chain({ direction: 'import', policies: ['self'] });
    const filter = cp.chain({ direction: 'import', policies: ['filter'] });
    const attrs: PathAttributes = { origin: 2 };
    const plain = evaluate(filter, route('192.0.2.0/24', attrs), imp);
    const directed = evaluate(self, route('192.0.2.0/24', attrs), imp);
    expect(directed.nextHopDirective).toBe('self');
    expect(plain.nextHopDirective).toBeUndefined();
    expect(evaluate(filter, route('192.0.2.0/24', attrs), imp).nextHopDirective).toBeUndefined();
  });
});
