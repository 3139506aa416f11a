import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matches, parseSelector, SelectorError } from '../../src/kubernetes/selector.js';

const labels = { rack: 'r1', zone: 'west', 'projectcalico.org/namespace': 'prod', 'route-reflector': 'true' };

describe('Calico selector evaluation', () => {
  it.each([
    ['all()', true],
    ['', true],
    ['has(rack)', true],
    ['has(missing)', false],
    ['!has(missing)', true],
    ["rack == 'r1'", true],
    ['rack == "r2"', false],
    ["missing == ''", false],
    ["rack != 'r2'", true],
    ["missing != 'x'", true],
    ["rack in {'r1','r2'}", true],
    ['rack in {}', false],
    ["rack not in {'r1'}", false],
    ["missing not in {'r1'}", true],
    ["zone contains 'es'", true],
    ["zone starts with 'we'", true],
    ["zone ends with 'st'", true],
    ["projectcalico.org/namespace == 'prod'", true],
    ["has(route-reflector) && rack == 'r1'", true],
    ["rack == 'r2' || zone == 'west'", true],
    ["rack == 'r2' || zone == 'east' && has(rack)", false],
    ["(rack == 'r2' || zone == 'west') && !has(route-reflector)", false],
    ["!(rack == 'r2')", true],
    ['!!has(rack)', true],
    // && binds tighter than ||
    ['has(rack) || has(x) && has(y)', true],
    ['(has(rack) || has(x)) && has(y)', false],
  ])('%s → %s', (text, expected) => {
    expect(matches(parseSelector(text), labels)).toBe(expected);
  });
});

describe('Calico selector parse errors', () => {
  it.each([
    ["rack = 'r1'", 5, 'single "="'],
    ['rack == r1', 8, 'expected a quoted string'],
    ["rack == 'r1", 8, 'unterminated string'],
    ['has(rack', 8, 'expected ")"'],
    ["(rack == 'a'", 12, 'expected ")"'],
    ["rack in {'a' 'b'}", 13, 'expected "," or "}"'],
    ["rack not {'a'}", 9, 'expected "in" after "not"'],
    ["rack == 'a' rack == 'b'", 12, 'missing "&&" or "||"'],
    ["rack == 'a' & zone == 'b'", 12, 'single "&"'],
    ['rack', 4, 'expected an operator'],
    ['&& has(a)', 0, 'expected a label key'],
    ["rack == 'a' ||", 14, 'expected a label key'],
    ['all(x)', 4, 'expected ")"'],
    ['rack ~ x', 5, 'unexpected character'],
  ])('%s', (text, pos, reason) => {
    let err: unknown;
    try {
      parseSelector(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SelectorError);
    expect((err as SelectorError).position).toBe(pos);
    expect((err as SelectorError).message).toContain(reason);
    expect((err as SelectorError).message).toContain(JSON.stringify(text));
  });
});

describe('selector algebra (property)', () => {
  const key = fc.constantFrom('a', 'b', 'c');
  const val = fc.constantFrom('x', 'y');
  const labelsArb = fc.dictionary(key, val);
  const atom = fc.oneof(
    key.map((k) => `has(${k})`),
    fc.tuple(key, val).map(([k, v]) => `${k} == '${v}'`),
    fc.tuple(key, val).map(([k, v]) => `${k} != '${v}'`),
    fc.tuple(key, fc.array(val, { maxLength: 2 })).map(([k, vs]) => `${k} in {${vs.map((v) => `'${v}'`).join(',')}}`),
  );
  it('!e is the complement of e, and De Morgan holds', () => {
    fc.assert(
      fc.property(atom, atom, labelsArb, (x, y, l) => {
        const m = (s: string) => matches(parseSelector(s), l);
        expect(m(`!(${x})`)).toBe(!m(x));
        expect(m(`!(${x} && ${y})`)).toBe(m(`!(${x}) || !(${y})`));
        expect(m(`${x} || ${y}`)).toBe(m(x) || m(y));
      }),
    );
  });
  it('"not in" is the negation of "in"', () => {
    fc.assert(
      fc.property(key, fc.array(val, { maxLength: 2 }), labelsArb, (k, vs, l) => {
        const set = `{${vs.map((v) => `'${v}'`).join(', ')}}`;
        expect(matches(parseSelector(`${k} not in ${set}`), l)).toBe(!matches(parseSelector(`${k} in ${set}`), l));
      }),
    );
  });
});

describe('selector parser on untrusted text (property)', () => {
  it('either parses or throws SelectorError, never anything else', () => {
    const pieces = fc.constantFrom('has(', ')', '(', 'a', "'x'", '"y"', '==', '!=', '!', '&&', '||', ' in ', ' not ', '{', '}', ',', 'all()', ' ', '=', '&');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(pieces, { maxLength: 12 }).map((p) => p.join('')),
        ),
        (text) => {
          try {
            const s = parseSelector(text);
            expect(typeof matches(s, { a: 'x' })).toBe('boolean');
          } catch (e) {
            expect(e).toBeInstanceOf(SelectorError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
