import { Address, Prefix, PrefixSet, PrefixTrie } from '../net/index.js';
import { parseExtendedCommunity, type AsPathSegment, type LargeCommunity } from '../wire/index.js';
import {
  type CommunityPattern,
  type ExtPattern,
  parseExtPattern,
  compileRegex,
  LargeCommunityTable,
  type LargePattern,
  parseCommunityPattern,
  parseLargePattern,
  PolicyError,
} from './communities.js';
import type { DefinedSetsDef } from './definitions.js';

/** Community set: exact members in a hashed Set of numbers, patterns tested in order. */
export class CommunitySet {
  private readonly exact = new Set<number>();
  private readonly tests: ((c: number) => boolean)[] = [];
  constructor(
    readonly name: string,
    readonly members: readonly CommunityPattern[],
  ) {
    for (const m of members) {
      if (m.kind === 'exact') this.exact.add(m.value);
      else this.tests.push(m.test);
    }
  }
  /** True when community `c` matches some member. */
  matchesOne(c: number): boolean {
    if (this.exact.has(c)) return true;
    for (const t of this.tests) if (t(c)) return true;
    return false;
  }
  any(list: readonly number[] | undefined): boolean {
    if (list === undefined) return false;
    for (const c of list) if (this.matchesOne(c)) return true;
    return false;
  }
  /** Every member matched by some community in the list. */
  all(list: readonly number[] | undefined): boolean {
    const l = list ?? [];
    for (const m of this.members) {
      if (m.kind === 'exact' ? !l.includes(m.value) : !l.some(m.test)) return false;
    }
    return true;
  }
}

export class LargeCommunitySet {
  private readonly exact = new LargeCommunityTable();
  private readonly tests: ((c: LargeCommunity) => boolean)[] = [];
  constructor(
    readonly name: string,
    readonly members: readonly LargePattern[],
  ) {
    for (const m of members) {
      if (m.kind === 'exact') this.exact.add(m.value);
      else this.tests.push(m.test);
    }
  }
  matchesOne(c: LargeCommunity): boolean {
    if (this.exact.has(c)) return true;
    for (const t of this.tests) if (t(c)) return true;
    return false;
  }
  any(list: readonly LargeCommunity[] | undefined): boolean {
    if (list === undefined) return false;
    for (const c of list) if (this.matchesOne(c)) return true;
    return false;
  }
  all(list: readonly LargeCommunity[] | undefined): boolean {
    const l = list ?? [];
    for (const m of this.members) {
      const ok = m.kind === 'exact' ? l.some((c) => c.global === m.value.global && c.local1 === m.value.local1 && c.local2 === m.value.local2) : l.some(m.test);
      if (!ok) return false;
    }
    return true;
  }
}

export class ExtCommunitySet {
  private readonly exact = new Set<bigint>();
  private readonly tests: ((c: bigint) => boolean)[] = [];
  constructor(
    readonly name: string,
    readonly members: readonly ExtPattern[],
  ) {
    for (const m of members) {
      if (m.kind === 'exact') this.exact.add(m.value);
      else this.tests.push(m.test);
    }
  }
  matchesOne(c: bigint): boolean {
    if (this.exact.has(c)) return true;
    for (const t of this.tests) if (t(c)) return true;
    return false;
  }
  any(list: readonly bigint[] | undefined): boolean {
    if (list === undefined) return false;
    for (const c of list) if (this.matchesOne(c)) return true;
    return false;
  }
  all(list: readonly bigint[] | undefined): boolean {
    const l = list ?? [];
    for (const m of this.members) if (!(m.kind === 'exact' ? l.includes(m.value) : l.some(m.test))) return false;
    return true;
  }
}

// ---------------------------------------------------------------- AS paths

const pathTexts = new WeakMap<readonly AsPathSegment[], string>();

/** The path as text: "65001 65002", AS_SET as "{1 2}", confederation segments as "(1 2)" / "[1 2]". Cached per (interned) path. */
export function asPathText(path: readonly AsPathSegment[] | undefined): string {
  if (path === undefined || path.length === 0) return '';
  let t = pathTexts.get(path);
  if (t === undefined) {
    t = path
      .map((s) => {
        const inner = s.asns.join(' ');
        return s.type === 2 ? inner : s.type === 1 ? `{${inner}}` : s.type === 3 ? `(${inner})` : `[${inner}]`;
      })
      .join(' ');
    pathTexts.set(path, t);
  }
  return t;
}

/** RFC 4271 §9.1.2.2: an AS_SET counts as one, confederation segments count nothing. */
export function asPathLength(path: readonly AsPathSegment[] | undefined): number {
  let n = 0;
  if (path) for (const s of path) n += s.type === 2 ? s.asns.length : s.type === 1 ? 1 : 0;
  return n;
}

/** The AS_SEQUENCE ASNs in order, sets and confederation segments left out. */
function sequenceOf(path: readonly AsPathSegment[] | undefined): number[] {
  const out: number[] = [];
  if (path) for (const s of path) if (s.type === 2) out.push(...s.asns);
  return out;
}

/** The origin AS: the last ASN when the path ends in an AS_SEQUENCE. */
export function originAs(path: readonly AsPathSegment[] | undefined): number | undefined {
  if (!path || path.length === 0) return undefined;
  const last = path[path.length - 1];
  return last.type === 2 && last.asns.length > 0 ? last.asns[last.asns.length - 1] : undefined;
}

export interface AsPathMatcher {
  readonly text: string;
  readonly test: (path: readonly AsPathSegment[] | undefined) => boolean;
}

function asnList(rest: string, whole: string): number[] {
  const parts = rest.trim().split(/\s+/);
  if (parts.length === 0 || parts[0] === '') throw new Error(`${JSON.stringify(whole)} names no AS number`);
  return parts.map((p) => {
    if (!/^(0|[1-9][0-9]{0,9})$/.test(p) || Number(p) > 0xffffffff)
      throw new Error(`AS number ${JSON.stringify(p)} in ${JSON.stringify(whole)} is not 0..4294967295`);
    return Number(p);
  });
}

function indexOfRun(hay: number[], needle: number[]): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

export function parseAsPathMatcher(text: string): AsPathMatcher {
  if (typeof text !== 'string' || text.trim() === '') throw new Error('AS-path entry is empty');
  const m = /^(starts-with|contains|ends-with|origin|length)\s+(.*)$/.exec(text.trim());
  if (m) {
    const kind = m[1];
    const asns = asnList(m[2], text);
    if (kind === 'starts-with') return { text, test: (p) => indexOfRun(sequenceOf(p).slice(0, asns.length), asns) === 0 };
    if (kind === 'ends-with')
      return {
        text,
        test: (p) => {
          const s = sequenceOf(p);
          return s.length >= asns.length && indexOfRun(s.slice(s.length - asns.length), asns) === 0;
        },
      };
    if (kind === 'contains') return { text, test: (p) => indexOfRun(sequenceOf(p), asns) >= 0 };
    if (kind === 'origin') {
      if (asns.length !== 1) throw new Error(`${JSON.stringify(text)}: origin takes one AS number`);
      return { text, test: (p) => originAs(p) === asns[0] };
    }
    if (asns.length !== 1) throw new Error(`${JSON.stringify(text)}: length takes one number`);
    return { text, test: (p) => asPathLength(p) === asns[0] };
  }
  // `_` is the usual "AS boundary" of router AS-path regexes.
  const re = compileRegex(text.replace(/_/g, '(?:^|[ {}()\\[\\]]|$)'), text);
  return { text, test: (p) => re.test(asPathText(p)) };
}

class AsPathSet {
  constructor(
    readonly name: string,
    readonly members: readonly AsPathMatcher[],
  ) {}
  any(path: readonly AsPathSegment[] | undefined): boolean {
    for (const m of this.members) if (m.test(path)) return true;
    return false;
  }
  all(path: readonly AsPathSegment[] | undefined): boolean {
    for (const m of this.members) if (!m.test(path)) return false;
    return true;
  }
}

/** Addresses and prefixes, matched by longest-prefix lookup. */
class AddressSet {
  private readonly trie = new PrefixTrie<true>();
  constructor(
    readonly name: string,
    members: readonly Prefix[],
  ) {
    for (const p of members) this.trie.set(p, true);
  }
  has(a: Address | undefined): boolean {
    return a !== undefined && this.trie.lookup(a) !== undefined;
  }
}

export interface CompiledSets {
  readonly prefix: Map<string, PrefixSet>;
  readonly community: Map<string, CommunitySet>;
  readonly largeCommunity: Map<string, LargeCommunitySet>;
  readonly extCommunity: Map<string, ExtCommunitySet>;
  readonly asPath: Map<string, AsPathSet>;
  readonly neighbor: Map<string, AddressSet>;
}

function each<T>(kind: string, defs: Readonly<Record<string, readonly string[]>> | undefined, parse: (text: string) => T): Map<string, T[]> {
  const out = new Map<string, T[]>();
  if (defs === undefined) return out;
  if (typeof defs !== 'object' || defs === null || Array.isArray(defs))
    throw new PolicyError(`sets.${kind}`, 'must be an object of set name → list of entries');
  for (const [name, entries] of Object.entries(defs)) {
    if (!Array.isArray(entries)) throw new PolicyError(`${kind} set ${JSON.stringify(name)}`, 'must be a list of entries');
    out.set(
      name,
      entries.map((e, i) => {
        try {
          if (typeof e !== 'string') throw new Error(`entry must be text, got ${JSON.stringify(e)}`);
          return parse(e);
        } catch (err) {
          throw new PolicyError(`${kind} set ${JSON.stringify(name)} entry ${i}`, (err as Error).message);
        }
      }),
    );
  }
  return out;
}

function remap<A, B>(m: Map<string, A>, f: (name: string, a: A) => B): Map<string, B> {
  return new Map([...m].map(([k, v]) => [k, f(k, v)]));
}

export function compileSets(def: DefinedSetsDef = {}): CompiledSets {
  return {
    prefix: remap(
      each('prefix', def.prefix, (t) => t),
      (_n, lines) => {
        try {
          return PrefixSet.parse(lines);
        } catch (err) {
          throw new PolicyError(`prefix set ${JSON.stringify(_n)}`, (err as Error).message);
        }
      },
    ),
    community: remap(each('community', def.community, parseCommunityPattern), (n, ms) => new CommunitySet(n, ms)),
    largeCommunity: remap(each('largeCommunity', def.largeCommunity, parseLargePattern), (n, ms) => new LargeCommunitySet(n, ms)),
    extCommunity: remap(each('extCommunity', def.extCommunity, parseExtPattern), (n, ms) => new ExtCommunitySet(n, ms)),
    asPath: remap(each('asPath', def.asPath, parseAsPathMatcher), (n, ms) => new AsPathSet(n, ms)),
    neighbor: remap(
      each('neighbor', def.neighbor, (t) => Prefix.parse(t, { allowBareAddress: true })),
      (n, ps) => new AddressSet(n, ps),
    ),
  };
}
