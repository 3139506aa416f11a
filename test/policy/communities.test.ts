import { describe, expect, it } from 'vitest';
import { parseCommunityPattern, parseLargePattern } from '../../src/policy/communities.js';
import { parseCommunity } from '../../src/wire/communities.js';
import { asPathLength, asPathText, originAs, parseAsPathMatcher } from '../../src/policy/sets.js';

describe('community patterns', () => {
  it('patterns: wildcards, ranges and regular expressions', () => {
    const test = (p: string, c: string) => {
      const m = parseCommunityPattern(p);
      return m.kind === 'exact' ? m.value === parseCommunity(c) : m.test(parseCommunity(c));
    };
    expect(test('65000:*', '65000:9')).toBe(true);
    expect(test('65000:*', '65001:9')).toBe(false);
    expect(test('*:9', '1:9')).toBe(true);
    expect(test('65000:100..200', '65000:150')).toBe(true);
    expect(test('65000:100..200', '65000:201')).toBe(false);
    expect(test('/^1:[0-9]$/', '1:5')).toBe(true);
    expect(test('/^1:[0-9]$/', '1:55')).toBe(false);
    expect(() => parseCommunityPattern('65000:200..100')).toThrow('empty');
    expect(() => parseCommunityPattern('/(/')).toThrow('regular expression');
    // regular expressions see numbers, also for well-known values
    expect(test('/^65535:65281$/', 'no-export')).toBe(true);
  });
});

describe('large community patterns', () => {
  it('reads g:*:l2 and regular expressions', () => {
    const p = parseLargePattern('65000:*:3');
    expect(p.kind === 'test' && p.test({ global: 65000, local1: 8, local2: 3 })).toBe(true);
    expect(p.kind === 'test' && p.test({ global: 65000, local1: 8, local2: 4 })).toBe(false);
    expect(() => parseLargePattern('4294967296:*:1')).toThrow('global part');
  });
});

describe('AS paths', () => {
  const path = [
    { type: 2 as const, asns: [65001, 65002] },
    { type: 1 as const, asns: [3, 4] },
  ];
  it('renders text, counts length per RFC 4271 and finds the origin', () => {
    expect(asPathText(path)).toBe('65001 65002 {3 4}');
    expect(asPathLength(path)).toBe(3);
    expect(originAs(path)).toBeUndefined();
    expect(originAs([{ type: 2, asns: [1, 2] }])).toBe(2);
    expect(asPathText(undefined)).toBe('');
  });
  it('matches regexes with _ as a boundary, and simple forms', () => {
    expect(parseAsPathMatcher('^65001_').test(path)).toBe(true);
    expect(parseAsPathMatcher('_3_').test(path)).toBe(true);
    expect(parseAsPathMatcher('_650_').test(path)).toBe(false);
    expect(parseAsPathMatcher('ends-with 65002').test(path)).toBe(true);
    expect(parseAsPathMatcher('starts-with 65001 65002').test(path)).toBe(true);
    expect(parseAsPathMatcher('contains 65002 65001').test(path)).toBe(false);
    expect(() => parseAsPathMatcher('origin 1 2')).toThrow('one AS number');
    expect(() => parseAsPathMatcher('starts-with x')).toThrow('AS number');
  });
});
