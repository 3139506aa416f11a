import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyTable } from '../../src/rib/key-table.js';

describe('KeyTable', () => {
  it('behaves like a Map under random set/delete sequences, including colliding and non-integer keys (property)', () => {
    // A small key space forces long probe runs and wrap-around; strings and 2^32+ numbers use the fallback.
    const key = fc.oneof(
      fc.integer({ min: -40, max: 40 }),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      fc.constantFrom(2 ** 32 + 5, 'a/48', 'b/64', -(2 ** 40), 1.5),
      // Wide keys (/32 host routes, IPv6 up to /48): a few colliding in their low half, and random ones.
      fc.integer({ min: 0, max: 40 }).map((i) => 2 ** 50 + (i % 8) * 2 ** 32 + (i >> 3)),
      fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
    );
    const op = fc.oneof(
      fc.tuple(fc.constant('set' as const), key, fc.integer({ min: 1, max: 1000 })),
      fc.tuple(fc.constant('del' as const), key, fc.constant(0)),
      fc.tuple(fc.constant('add' as const), key, fc.integer({ min: 1, max: 1000 })),
      // warm: reads slots ahead of lookups, must change nothing (any key kind, any range of the list).
      fc.tuple(fc.constant('warm' as const), fc.array(key, { maxLength: 12 }), fc.nat(12)),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300, size: 'large' }), (ops) => {
        const t = new KeyTable();
        const m = new Map<number | string, number>();
        for (const [kind, k, v] of ops) {
          if (kind === 'warm') {
            t.warm(k, Math.min(v, k.length), k.length);
            continue;
          }
          if (kind === 'set') {
            expect(t.set(k, v)).toBe(m.get(k) ?? 0); // the value it replaced
            m.set(k, v);
          } else if (kind === 'add') {
            expect(t.getOrAdd(k, v)).toBe(m.get(k) ?? 0);
            if (!m.has(k)) m.set(k, v);
          } else expect(t.delete(k)).toBe(m.delete(k));
          expect(t.size).toBe(m.size);
        }
        for (const [k, v] of m) expect(t.get(k)).toBe(v);
        for (let k = -40; k <= 40; k++) expect(t.get(k)).toBe(m.get(k) ?? 0);
        for (let i = 0; i <= 40; i++) expect(t.get(2 ** 50 + (i % 8) * 2 ** 32 + (i >> 3))).toBe(m.get(2 ** 50 + (i % 8) * 2 ** 32 + (i >> 3)) ?? 0);
        const seen = new Map<number | string, number>();
        t.forEach((v, k) => seen.set(k, v));
        expect(seen).toEqual(m);
      }),
      { numRuns: 300 },
    );
    // CPU-bound: several times the default on a loaded machine (scripts/stress-unit.sh).
  }, 120_000);

  it('grows past many entries and refuses values it cannot store', () => {
    const t = new KeyTable();
    for (let i = 0; i < 50_000; i++) t.set(i * 256 + 1, (i % 7) + 1);
    expect(t.size).toBe(50_000);
    expect(t.get(49_999 * 256 + 1)).toBe((49_999 % 7) + 1);
    expect(t.get(3)).toBe(0);
    for (let i = 0; i < 50_000; i += 2) t.delete(i * 256 + 1);
    expect(t.size).toBe(25_000);
    expect(t.get(1 * 256 + 1)).toBe(2);
    expect(t.get(2 * 256 + 1)).toBe(0);
    expect(() => t.set(1, 0)).toThrow(/1\.\.2\^31-1/);
    t.clear();
    expect(t.size).toBe(0);
  });
});
