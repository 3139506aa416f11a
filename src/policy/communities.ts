import { parseV4 } from '../net/address.js';
import type { LargeCommunity } from '../wire/types.js';

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

/** RFC 1997 / IANA well-known communities, by their usual names. */
export const WELL_KNOWN_COMMUNITIES: Readonly<Record<string, number>> = {
  'graceful-shutdown': 0xffff0000,
  'accept-own': 0xffff0001,
  'llgr-stale': 0xffff0006,
  'no-llgr': 0xffff0007,
  blackhole: 0xffff029a,
  'no-export': 0xffffff01,
  'no-advertise': 0xffffff02,
  'no-export-subconfed': 0xffffff03,
  'no-peer': 0xffffff04,
};

function u16(text: string, whole: string, what: string): number {
  if (!/^(0|[1-9][0-9]{0,4})$/.test(text) || Number(text) > 0xffff) throw new Error(`${what} ${JSON.stringify(text)} in ${JSON.stringify(whole)} is not a number 0..65535`);
  return Number(text);
}

function u32(text: string, whole: string, what: string): number {
  if (!/^(0|[1-9][0-9]{0,9})$/.test(text) || Number(text) > 0xffffffff) throw new Error(`${what} ${JSON.stringify(text)} in ${JSON.stringify(whole)} is not a number 0..4294967295`);
  return Number(text);
}

/** "65000:100" or a well-known name → the 32-bit value. Throws Error with a reason. */
export function parseCommunity(text: string): number {
  const known = WELL_KNOWN_COMMUNITIES[text.toLowerCase()];
  if (known !== undefined) return known;
  const parts = text.split(':');
  if (parts.length !== 2) throw new Error(`community ${JSON.stringify(text)} is not "asn:value" or a well-known name`);
  return (u16(parts[0], text, 'AS part') * 65536 + u16(parts[1], text, 'value part')) >>> 0;
}

export function formatCommunity(c: number): string {
  return `${c >>> 16}:${c & 0xffff}`;
}

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
    return { kind: 'test', text, test: (c) => re.test(formatCommunity(c)) };
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

export function parseLargeCommunity(text: string): LargeCommunity {
  const parts = text.split(':');
  if (parts.length !== 3) throw new Error(`large community ${JSON.stringify(text)} is not "global:local1:local2"`);
  return { global: u32(parts[0], text, 'global part'), local1: u32(parts[1], text, 'local1 part'), local2: u32(parts[2], text, 'local2 part') };
}

export function formatLargeCommunity(c: LargeCommunity): string {
  return `${c.global}:${c.local1}:${c.local2}`;
}

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
  return { kind: 'test', text, test: (c) => (t[0] === null || c.global === t[0]) && (t[1] === null || c.local1 === t[1]) && (t[2] === null || c.local2 === t[2]) };
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

/** "rt:ASN:N", "rt:A.B.C.D:N", "soo:…", or "0x" + 16 hex digits → the 64-bit value (RFC 4360, RFC 5668). */
export function parseExtCommunity(text: string): bigint {
  if (/^0x[0-9a-fA-F]{16}$/.test(text)) return BigInt(text);
  const m = /^(rt|soo):([^:]+):([^:]+)$/.exec(text);
  if (!m) throw new Error(`extended community ${JSON.stringify(text)} is not "rt:asn:n", "soo:asn:n", "rt:a.b.c.d:n" or 0x + 16 hex digits`);
  const sub = m[1] === 'rt' ? 0x02n : 0x03n;
  if (m[2].includes('.')) {
    let ip: number;
    try {
      ip = parseV4(m[2], 'IPv4 address');
    } catch (err) {
      throw new Error(`extended community ${JSON.stringify(text)}: ${(err as Error).message}`);
    }
    const local = u16(m[3], text, 'local part');
    return (0x01n << 56n) | (sub << 48n) | (BigInt(ip) << 16n) | BigInt(local);
  }
  const asn = u32(m[2], text, 'AS part');
  if (asn <= 0xffff) return (0x00n << 56n) | (sub << 48n) | (BigInt(asn) << 32n) | BigInt(u32(m[3], text, 'local part'));
  return (0x02n << 56n) | (sub << 48n) | (BigInt(asn) << 16n) | BigInt(u16(m[3], text, 'local part'));
}

export function formatExtCommunity(c: bigint): string {
  return `0x${c.toString(16).padStart(16, '0')}`;
}
