/**
 * Community patterns of defined sets and set actions. The values themselves
 * are read and written by the one text form in src/wire/communities.ts.
 */
import {
  communityPair,
  decimal,
  formatLargeCommunity,
  linkBandwidthOf,
  parseCommunity,
  parseExtendedCommunity,
  parseLargeCommunity,
  type LargeCommunity,
} from '../wire/index.js';

/** A definition that cannot be used; `where` names policy, statement and field. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  constructor(
    readonly where: string,
    readonly reason: string,
  ) {
    super(`${where}: ${reason}`);
  }
}

const u16 = (text: string, whole: string, what: string): number => decimal(whole, text, 0xffff, what);
const u32 = (text: string, whole: string, what: string): number => decimal(whole, text, 0xffffffff, what);

/** A community-set member: exact values are hashed; the rest are tested one by one. */
export type CommunityPattern = { kind: 'exact'; value: number } | { kind: 'test'; text: string; test: (c: number) => boolean };

function partTest(part: string, whole: string, what: string): (x: number) => boolean {
  if (part === '*') return () => true;
  const range = /^([0-9]+)\.\.([0-9]+)$/.exec(part);
  if (range) {
    const lo = u16(range[1], whole, what);
    const hi = u16(range[2], whole, what);
    if (lo > hi) throw new Error(`range ${part} in ${JSON.stringify(whole)} is empty`);
    return (x) => x >= lo && x <= hi;
  }
  const v = u16(part, whole, what);
  return (x) => x === v;
}

export function parseCommunityPattern(text: string): CommunityPattern {
  if (typeof text !== 'string' || text === '') throw new Error('community pattern is empty');
  if (text.length > 2 && text.startsWith('/') && text.endsWith('/')) {
    const re = compileRegex(text.slice(1, -1), text);
    return { kind: 'test', text, test: (c) => re.test(communityPair(c)) };
  }
  if (!text.includes('*') && !text.includes('..')) return { kind: 'exact', value: parseCommunity(text) };
  const parts = text.split(':');
  if (parts.length !== 2) throw new Error(`community pattern ${JSON.stringify(text)} is not "asn:value" (parts may be *, N or N..M)`);
  const hi = partTest(parts[0], text, 'AS part');
  const lo = partTest(parts[1], text, 'value part');
  return { kind: 'test', text, test: (c) => hi(c >>> 16) && lo(c & 0xffff) };
}

export function compileRegex(source: string, whole: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new Error(`bad regular expression ${JSON.stringify(whole)}: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------- large communities

export type LargePattern = { kind: 'exact'; value: LargeCommunity } | { kind: 'test'; text: string; test: (c: LargeCommunity) => boolean };

export function parseLargePattern(text: string): LargePattern {
  if (typeof text !== 'string' || text === '') throw new Error('large community pattern is empty');
  if (text.length > 2 && text.startsWith('/') && text.endsWith('/')) {
    const re = compileRegex(text.slice(1, -1), text);
    return { kind: 'test', text, test: (c) => re.test(formatLargeCommunity(c)) };
  }
  if (!text.includes('*')) return { kind: 'exact', value: parseLargeCommunity(text) };
  const parts = text.split(':');
  if (parts.length !== 3) throw new Error(`large community pattern ${JSON.stringify(text)} is not "global:local1:local2"`);
  const t = parts.map((p, i) => (p === '*' ? null : u32(p, text, ['global part', 'local1 part', 'local2 part'][i])));
  return {
    kind: 'test',
    text,
    test: (c) => (t[0] === null || c.global === t[0]) && (t[1] === null || c.local1 === t[1]) && (t[2] === null || c.local2 === t[2]),
  };
}

/** Exact large communities hashed without building strings: global → local1 → set of local2. */
export class LargeCommunityTable {
  private readonly map = new Map<number, Map<number, Set<number>>>();
  add(c: LargeCommunity): void {
    let m = this.map.get(c.global);
    if (!m) this.map.set(c.global, (m = new Map()));
    let s = m.get(c.local1);
    if (!s) m.set(c.local1, (s = new Set()));
    s.add(c.local2);
  }
  has(c: LargeCommunity): boolean {
    return this.map.get(c.global)?.get(c.local1)?.has(c.local2) ?? false;
  }
}

// ---------------------------------------------------------------- extended communities

/**
 * An extended-community-set member: an exact value in the one text form
 * ("rt:65000:100", "lb:65000:125000", "0x…"), or a link bandwidth of any
 * value: "lb:*" (any AS) or "lb:65000:*" (bandwidths vary per route, so
 * matching one exact float is rarely what a policy means). Both the
 * non-transitive and the transitive link bandwidth types match a wildcard.
 */
export type ExtPattern = { kind: 'exact'; value: bigint } | { kind: 'test'; text: string; test: (c: bigint) => boolean };

export function parseExtPattern(text: string): ExtPattern {
  if (typeof text !== 'string' || text === '') throw new Error('extended community pattern is empty');
  const t = text.trim().toLowerCase();
  if (t === 'lb:*') return { kind: 'test', text, test: (c) => linkBandwidthOf(c) !== undefined };
  const m = /^lb:([^:]*):\*$/.exec(t);
  if (m) {
    const asn = decimal(text, m[1], 0xffff, 'link bandwidth AS');
    return { kind: 'test', text, test: (c) => linkBandwidthOf(c)?.asn === asn };
  }
  return { kind: 'exact', value: parseExtendedCommunity(text) };
}
