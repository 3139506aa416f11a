import { describe, expect, it } from 'vitest';
import { plannedRoute } from '../../src/kubernetes/export.js';
import { Prefix } from '../../src/net/index.js';
import { plan, route } from '../agent/plans.js';

describe('plannedRoute', () => {
  it('plannedRoute finds a prefix in the plan’s sorted routes exactly when a linear search does', () => {
    const prefixes = ['10.0.0.0/8', '10.0.0.0/16', '10.1.0.0/16', '192.0.2.0/24', '198.18.0.0/15', '198.18.0.1/32', '2001:db8::/32', '2001:db8::1/128'];
    const big = plan(
      prefixes
        .filter((_, i) => i % 2 === 0)
        .map((x) => route(x))
        .sort((a, b) => a.prefix.compare(b.prefix)),
    );
    for (const x of [...prefixes, '0.0.0.0/0', '255.255.255.255/32', '::/0']) {
      const q = Prefix.parse(x);
      expect(plannedRoute(big, q)).toBe(big.routes.find((r) => r.prefix.equals(q)));
    }
  });
});
