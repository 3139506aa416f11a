import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValueTable } from '../../src/rib/value-table.js';

interface V {
  readonly name: string;
  readonly shared: boolean;
}

describe('ValueTable', () => {
  it('behaves like a Map, sharing slots for shareable values (property)', () => {
    const pool: V[] = [
      { name: 's1', shared: true },
      { name: 's2', shared: true },
      { name: 'u1', shared: false },
      { name: 'u2', shared: false },
    ];
    const key = fc.oneof(fc.integer({ min: -20, max: 20 }), fc.constantFrom('x/48', 2 ** 32 + 1));
    const op = fc.oneof(
      fc.tuple(fc.constant('set' as const), key, fc.integer({ min: 0, max: 3 })),
      fc.tuple(fc.constant('del' as const), key, fc.constant(0)),
      // A fresh unshared object each time, as peer routes are.
      fc.tuple(fc.constant('fresh' as const), key, fc.constant(0)),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const t = new ValueTable<V>((v) => v.shared);
        const m = new Map<number | string, V>();
        for (const [kind, k, i] of ops) {
          if (kind === 'del') expect(t.delete(k)).toBe(m.delete(k));
          else {
            const v = kind === 'set' ? pool[i] : { name: `f${k}`, shared: false };
            t.set(k, v);
            m.set(k, v);
          }
          expect(t.size).toBe(m.size);
        }
        for (const [k, v] of m) expect(t.get(k)).toBe(v);
        const seen = new Map<number | string, V>();
        t.forEach((v, k) => seen.set(k, v));
        expect(seen).toEqual(m);
        expect([...seen.keys()].every((k) => t.has(k))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
