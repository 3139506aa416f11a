import { describe, expect, it } from 'vitest';
import { AdjRibOut } from '../../src/rib/adj-rib-out.js';
import { AttrStore } from '../../src/rib/attr-store.js';

describe('AdjRibOut', () => {
  it('maps keys to attribute sets holding one store reference per distinct set', () => {
    const store = new AttrStore();
    const x = store.lookupOrCreate({ origin: 0 });
    const y = store.lookupOrCreate({ origin: 1 });
    const out = new AdjRibOut(store);
    out.set(1, x);
    out.set(2, x);
    out.set('v6/48', y);
    out.set(2 ** 32 + 7, y);
    expect(out.size).toBe(4);
    expect(x.refs).toBe(1);
    expect(y.refs).toBe(1);
    expect(out.get(2)).toBe(x);
    expect(out.get('v6/48')).toBe(y);
    out.set(1, y); // replace
    expect(out.get(1)).toBe(y);
    out.delete(2);
    expect(x.refs).toBe(0);
    expect(store.size).toBe(1); // x gone from the store
    expect(out.has(2)).toBe(false);
    const z = store.lookupOrCreate({ origin: 2 });
    out.set(3, z); // reuses x's freed index
    expect(out.snapshot()).toEqual(
      new Map<number | string, unknown>([
        [1, y],
        [3, z],
        ['v6/48', y],
        [2 ** 32 + 7, y],
      ]),
    );
    out.clear();
    expect(out.size).toBe(0);
    expect(store.size).toBe(0);
  });
});
