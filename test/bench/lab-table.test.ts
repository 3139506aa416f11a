import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import { fullTable, routes, v6Prefix } from '../../bench/lab/table.js';

describe('bench/lab/table: the synthetic full table', () => {
  const spec = { v4: 20_000, v6: 4_000, sets: 300, seed: 7 };
  const t = fullTable(spec);
  const all = [...routes(t)];

  it('is the same table for the same seed, another for another seed', () => {
    expect([...routes(fullTable(spec))].slice(0, 50)).toEqual(all.slice(0, 50));
    expect([...routes(fullTable({ ...spec, seed: 8 }))].slice(0, 50)).not.toEqual(all.slice(0, 50));
  });

  it('has the asked number of distinct, well-formed prefixes, IPv4 first', () => {
    expect(all).toHaveLength(spec.v4 + spec.v6);
    expect(new Set(all.map((r) => r.prefix)).size).toBe(all.length);
    // parsing canonicalises: host bits set or a non-canonical IPv6 text would differ
    expect(all.filter((r) => Prefix.parse(r.prefix).toString() !== r.prefix)).toEqual([]);
    expect(all.slice(0, spec.v4).every((r) => !r.prefix.includes(':'))).toBe(true);
    expect(all.slice(spec.v4).every((r) => r.prefix.includes(':'))).toBe(true);
  });

  it('keeps out of private, special and the lab link ranges', () => {
    const banned = [
      '10.0.0.0/8',
      '127.0.0.0/8',
      '192.168.0.0/16',
      '172.16.0.0/12',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '192.0.2.0/24',
      '224.0.0.0/3',
      '2001:db8::/32',
    ].map((p) => Prefix.parse(p));
    const inside = all.filter((r) => {
      const p = Prefix.parse(r.prefix);
      return banned.some((b) => b.family === p.family && b.length <= p.length && b.contains(p));
    });
    expect(inside.map((r) => r.prefix)).toEqual([]);
  });

  it('looks like a real table: mostly /24 and /48, sets skewed, AS paths 1-6 hops', () => {
    const share = (family: 4 | 6, len: number): number => {
      const fam = all.filter((r) => r.prefix.includes(':') === (family === 6));
      return fam.filter((r) => r.prefix.endsWith(`/${len}`)).length / fam.length;
    };
    expect(share(4, 24)).toBeGreaterThan(0.5);
    expect(share(6, 48)).toBeGreaterThan(0.4);
    const perSet = new Map<number, number>();
    for (const r of all) perSet.set(r.set, (perSet.get(r.set) ?? 0) + 1);
    const counts = [...perSet.values()].sort((a, b) => b - a);
    expect(counts[0]).toBeGreaterThan(20 * counts[counts.length >> 1]);
    for (const s of t.sets) {
      expect(s.asPath!.length).toBeGreaterThanOrEqual(1);
      expect(s.asPath!.length).toBeLessThanOrEqual(6);
      for (const c of s.communities) expect(Number(c.split(':')[0])).toBeLessThan(65536);
    }
  });

  it('plain24: consecutive /24s with one attribute set', () => {
    const p = fullTable({ v4: 1000, v6: 0, sets: 1, seed: 1, plain24: true });
    expect(p.sets).toHaveLength(1);
    const list = [...routes(p)];
    expect(list.every((r) => r.prefix.endsWith('/24') && r.set === 0)).toBe(true);
    expect(list[0].prefix).toBe('11.0.0.0/24');
    expect(list[999].prefix).toBe('11.3.231.0/24');
  });

  it('writes IPv6 networks as RFC 5952 text', () => {
    expect(v6Prefix(0x2a010000, 0, 32)).toBe('2a01::/32');
    expect(v6Prefix(0x2a01000a, 0x00010000, 48 + 16)).toBe('2a01:a:1::/64');
    expect(v6Prefix(0x2a010000, 0x00010000, 64)).toBe('2a01:0:1::/64');
  });
});
