import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import { KernelRules } from '../../src/kernel/rules.js';

const P = (s: string) => Prefix.parse(s);

describe('KernelRules (calico_kernel_programming as data)', () => {
  const rules = new KernelRules([
    { prefix: '198.18.128.0/20', action: 'reject', why: 'service CIDR' },
    { prefix: '198.18.64.0/18', action: 'reject', why: 'VXLAN pool: Felix programs it' },
    { prefix: '198.18.0.0/18', action: 'accept', tunnel: { dev: 'tunl0' } },
    { prefix: '198.19.0.0/16', action: 'accept', tunnel: { dev: 'tunl0', unlessWithin: ['192.0.2.0/24'] } },
    { prefix: '203.0.113.0/24', action: 'accept' },
  ]);

  it('rejects service CIDRs and VXLAN pools, more-specific routes included, with the reason', () => {
    expect(rules.apply(P('198.18.130.0/26'), [{ address: '192.0.2.2' }])).toEqual({
      ok: false,
      reason: 'kernel rule 198.18.128.0/20: not programmed (service CIDR)',
    });
    expect(rules.apply(P('198.18.64.0/26'), [{ address: '192.0.2.2' }])).toEqual({
      ok: false,
      reason: 'kernel rule 198.18.64.0/18: not programmed (VXLAN pool: Felix programs it)',
    });
  });

  it('IPIP Always: a single-path route goes via tunl0 onlink; a multipath route keeps its next hops', () => {
    expect(rules.apply(P('198.18.1.0/26'), [{ address: '192.0.2.2' }])).toEqual({ ok: true, gateways: [{ address: '192.0.2.2', dev: 'tunl0', onlink: true }] });
    const two = [{ address: '192.0.2.2' }, { address: '192.0.2.3' }];
    expect(rules.apply(P('198.18.1.0/26'), two)).toEqual({ ok: true, gateways: two });
  });

  it("IPIP CrossSubnet: tunl0 only when the next hop is outside the node's subnet", () => {
    expect(rules.apply(P('198.19.4.0/26'), [{ address: '192.0.2.2' }])).toEqual({ ok: true, gateways: [{ address: '192.0.2.2' }] });
    expect(rules.apply(P('198.19.4.0/26'), [{ address: '198.51.100.2' }])).toEqual({
      ok: true,
      gateways: [{ address: '198.51.100.2', dev: 'tunl0', onlink: true }],
    });
  });

  it('accepts what no rule covers (ToR routes, reachableBy statics) and a covering supernet only matches inside it', () => {
    expect(rules.apply(P('0.0.0.0/0'), [{ address: '192.0.2.1' }])).toEqual({ ok: true, gateways: [{ address: '192.0.2.1' }] });
    expect(rules.match(P('198.18.0.0/15'))).toBeUndefined();
    expect(rules.match(P('203.0.113.7/32'))?.action).toBe('accept');
  });

  it('names the malformed rule', () => {
    expect(() => new KernelRules([{ prefix: '198.18.0.0/33', action: 'reject' }])).toThrow(/^kernel rule 0 \("198\.18\.0\.0\/33"\): /);
    expect(() => new KernelRules([{ prefix: '198.18.0.0/16', action: 'accept', tunnel: { dev: 'tunl0', unlessWithin: ['x'] } }])).toThrow(
      /kernel rule 0 .*tunnel.unlessWithin "x"/,
    );
  });
});
