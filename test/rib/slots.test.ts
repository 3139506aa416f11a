import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeySlots, Slots } from '../../src/rib/slots.js';

type Op = { op: 'push'; v: number | string } | { op: 'set'; at: number; v: number | string } | { op: 'clear' };

const value = fc.oneof(fc.integer(), fc.double({ min: 2 ** 32, max: 2 ** 51, noNaN: true }), fc.string({ maxLength: 3 }));
const ops = fc.array(
  fc.oneof(
    { weight: 20, arbitrary: fc.record({ op: fc.constant('push' as const), v: value }) },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('set' as const), at: fc.nat(), v: value }) },
    { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
  ),
  { maxLength: 400 },
);

/** Runs `ops` on Slots and on a plain array; `bulk` pushes first, so the lists cross chunk boundaries (8,192 slots). */
function agree(bulk: number, list: readonly Op[], keys: boolean): void {
  const s = keys ? new KeySlots() : new Slots<number | string>();
  const a: (number | string | undefined)[] = [];
  for (let i = 0; i < bulk; i++) expect(s.push(i)).toBe(a.push(i) - 1);
  for (const o of list) {
    if (o.op === 'push') expect(s.push(o.v)).toBe(a.push(o.v) - 1);
    else if (o.op === 'clear') {
      s.clear();
      a.length = 0;
    } else if (a.length > 0) {
      const at = o.at % a.length;
      s.set(at, o.v);
      a[at] = o.v;
    }
  }
  expect(s.length).toBe(a.length);
  for (let i = 0; i < a.length; i++) expect(s.get(i)).toBe(a[i]);
  const seen: (number | string | undefined)[] = [];
  s.forEach((v, i) => {
    expect(i).toBe(seen.length);
    seen.push(v);
  });
  expect(seen).toEqual(a);
}

describe('Slots (chunked growable array)', () => {
  it('reads, writes, lists and clears as a plain array does, within one chunk', () => {
    fc.assert(fc.property(ops, (list) => agree(0, list, false)));
  });

  it('KeySlots (chunks that start as numbers, for keys) the same: doubles and strings stored into them read back', () => {
    fc.assert(fc.property(ops, (list) => agree(0, list, true)));
  });

  it('the same across chunk boundaries (lists of 8,100–16,500 slots)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 8100, max: 16_500 }), ops, fc.boolean(), (bulk, list, keys) => agree(bulk, list, keys)),
      { numRuns: 25 },
    );
  });
});
