import { describe, expect, it } from 'vitest';
import {
  formatCommunity,
  parseCommunity,
  parseCommunityPattern,
  parseExtCommunity,
  parseLargeCommunity,
  parseLargePattern,
} from '../../src/policy/communities.js';
import { asPathLength, asPathText, originAs, parseAsPathMatcher } from '../../src/policy/sets.js';

describe('community text', () => {
  it('reads asn:value and well-known names', () => {
    expect(parseCommunity('65000:100')).toBe(65000 * 65536 + 100);
    expect(parseCommunity('NO-EXPORT')).toBe(0xffffff01);
    expect(parseCommunity('blackhole')).toBe(0xffff029a);
    expect(formatCommunity(parseCommunity('65535:65535'))).toBe('65535:65535');
  });
  it.each(['65536:1', '1:65536', '1', '1:2:3', 'a:b', '-1:2', ''])('rejects %j', (t) => {
    expect(() => parseCommunity(t)).toThrow(/community|number/);
  });
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
  });
});

describe('large and extended communities', () => {
  it('reads g:l1:l2 and patterns', () => {
    expect(parseLargeCommunity('4200000000:1:2')).toEqual({ global: 4200000000, local1: 1, local2: 2 });
    expect(() => parseLargeCommunity('4294967296:1:2')).toThrow('global part');
    const p = parseLargePattern('65000:*:3');
    expect(p.kind === 'test' && p.test({ global: 65000, local1: 8, local2: 3 })).toBe(true);
    expect(p.kind === 'test' && p.test({ global: 65000, local1: 8, local2: 4 })).toBe(false);
  });
  it('reads route targets and sites of origin in their three encodings, and raw hex', () => {
    expect(parseExtCommunity('rt:65000:100')).toBe(0x0002fde800000064n);
    expect(parseExtCommunity('soo:65000:100')).toBe(0x0003fde800000064n);
    expect(parseExtCommunity('rt:192.0.2.1:7')).toBe(0x0102c00002010007n);
    expect(parseExtCommunity('rt:4200000000:7')).toBe(0x0202fa56ea000007n);
    expect(parseExtCommunity('0x0002fde800000064')).toBe(0x0002fde800000064n);
    expect(() => parseExtCommunity('rt:65000')).toThrow('extended community');
    expect(() => parseExtCommunity('rt:4200000000:70000')).toThrow('local part');
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
