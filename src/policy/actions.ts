import { Address } from '../net/index.js';
import {
  type AsPathSegment,
  type LargeCommunity,
  type PathAttributes,
  formatCommunity,
  formatExtendedCommunity,
  formatLargeCommunity,
  linkBandwidthOf,
  parseCommunity,
  parseExtendedCommunity,
  parseLargeCommunity,
} from '../wire/index.js';
import { parseCommunityPattern, parseExtPattern, parseLargePattern, PolicyError } from './communities.js';
import type { ActionsDef, CommunityActionDef } from './definitions.js';
import { asPathText, CommunitySet, ExtCommunitySet, LargeCommunitySet } from './sets.js';
import type { PolicyContext, PolicyRoute } from './types.js';

/** Mutable per-evaluation state that modifications report into (not into the route). */
export interface ModState {
  nextHopDirective: 'self' | 'unchanged' | undefined;
}

/** One compiled modification: returns a new attributes object, never touches its input. */
export interface Modification {
  readonly apply: (attrs: PathAttributes, route: PolicyRoute, ctx: PolicyContext, st: ModState) => PathAttributes;
  readonly describe: (before: PathAttributes, after: PathAttributes) => string;
  /**
   * True when the result depends only on the input attributes (not on the
   * route, the context or ModState), so the engine may memoize it per
   * attributes object.
   */
  readonly attrsOnly?: boolean;
}

export type StatementResult = 'accept' | 'reject' | 'continue' | 'next-policy';

const ACTION_KEYS = new Set(['result', 'community', 'largeCommunity', 'extCommunity', 'localPref', 'med', 'nextHop', 'asPathPrepend']);
const COMMUNITY_OP_KEYS = new Set(['add', 'remove', 'replace']);
const U32 = 0xffffffff;

function without<K extends keyof PathAttributes>(a: PathAttributes, key: K): PathAttributes {
  const copy: Record<string, unknown> = { ...a };
  delete copy[key];
  return copy as PathAttributes;
}

function list(where: string, v: unknown): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new PolicyError(where, 'must be a list of strings');
  return v as string[];
}

function parsed<T>(where: string, texts: string[], parse: (t: string) => T): T[] {
  return texts.map((t, i) => {
    try {
      return parse(t);
    } catch (err) {
      throw new PolicyError(`${where}[${i}]`, (err as Error).message);
    }
  });
}

function communityOps(where: string, def: CommunityActionDef): Modification {
  if (typeof def !== 'object' || def === null) throw new PolicyError(where, 'must be { replace?, remove?, add? }');
  for (const k of Object.keys(def)) if (!COMMUNITY_OP_KEYS.has(k)) throw new PolicyError(`${where}.${k}`, 'unknown operation (known: replace, remove, add)');
  const replace = def.replace === undefined ? undefined : parsed(`${where}.replace`, list(`${where}.replace`, def.replace), parseCommunity);
  const remove =
    def.remove === undefined ? undefined : new CommunitySet('(remove)', parsed(`${where}.remove`, list(`${where}.remove`, def.remove), parseCommunityPattern));
  const add = def.add === undefined ? undefined : parsed(`${where}.add`, list(`${where}.add`, def.add), parseCommunity);
  return {
    apply: (a) => {
      let l: number[] = replace ? [...replace] : [...(a.communities ?? [])];
      if (remove) l = l.filter((c) => !remove.matchesOne(c));
      if (add) for (const c of add) if (!l.includes(c)) l.push(c);
      return l.length === 0 ? without(a, 'communities') : { ...a, communities: l };
    },
    attrsOnly: true,
    describe: (b, a) => `communities [${(b.communities ?? []).map(formatCommunity).join(' ')}] → [${(a.communities ?? []).map(formatCommunity).join(' ')}]`,
  };
}

const sameLarge = (x: LargeCommunity, y: LargeCommunity) => x.global === y.global && x.local1 === y.local1 && x.local2 === y.local2;

function largeOps(where: string, def: CommunityActionDef): Modification {
  if (typeof def !== 'object' || def === null) throw new PolicyError(where, 'must be { replace?, remove?, add? }');
  for (const k of Object.keys(def)) if (!COMMUNITY_OP_KEYS.has(k)) throw new PolicyError(`${where}.${k}`, 'unknown operation (known: replace, remove, add)');
  const replace = def.replace === undefined ? undefined : parsed(`${where}.replace`, list(`${where}.replace`, def.replace), parseLargeCommunity);
  const remove =
    def.remove === undefined ? undefined : new LargeCommunitySet('(remove)', parsed(`${where}.remove`, list(`${where}.remove`, def.remove), parseLargePattern));
  const add = def.add === undefined ? undefined : parsed(`${where}.add`, list(`${where}.add`, def.add), parseLargeCommunity);
  return {
    apply: (a) => {
      let l: LargeCommunity[] = replace ? [...replace] : [...(a.largeCommunities ?? [])];
      if (remove) l = l.filter((c) => !remove.matchesOne(c));
      if (add) for (const c of add) if (!l.some((x) => sameLarge(x, c))) l.push(c);
      return l.length === 0 ? without(a, 'largeCommunities') : { ...a, largeCommunities: l };
    },
    attrsOnly: true,
    describe: (b, a) =>
      `large communities [${(b.largeCommunities ?? []).map(formatLargeCommunity).join(' ')}] → [` +
      `${(a.largeCommunities ?? []).map(formatLargeCommunity).join(' ')}]`,
  };
}

function extOps(where: string, def: CommunityActionDef): Modification {
  if (typeof def !== 'object' || def === null) throw new PolicyError(where, 'must be { replace?, remove?, add? }');
  for (const k of Object.keys(def)) if (!COMMUNITY_OP_KEYS.has(k)) throw new PolicyError(`${where}.${k}`, 'unknown operation (known: replace, remove, add)');
  const replace = def.replace === undefined ? undefined : parsed(`${where}.replace`, list(`${where}.replace`, def.replace), parseExtendedCommunity);
  const remove =
    def.remove === undefined ? undefined : new ExtCommunitySet('(remove)', parsed(`${where}.remove`, list(`${where}.remove`, def.remove), parseExtPattern));
  const add = def.add === undefined ? undefined : parsed(`${where}.add`, list(`${where}.add`, def.add), parseExtendedCommunity);
  if (add && add.filter((c) => linkBandwidthOf(c) !== undefined).length > 1)
    throw new PolicyError(`${where}.add`, 'holds more than one link bandwidth ("lb:…"); a route carries one');
  const addsBandwidth = add?.some((c) => linkBandwidthOf(c) !== undefined) ?? false;
  return {
    apply: (a) => {
      let l: bigint[] = replace ? [...replace] : [...(a.extendedCommunities ?? [])];
      if (remove) l = l.filter((c) => !remove.matchesOne(c));
      if (addsBandwidth) l = l.filter((c) => linkBandwidthOf(c) === undefined);
      if (add) for (const c of add) if (!l.includes(c)) l.push(c);
      return l.length === 0 ? without(a, 'extendedCommunities') : { ...a, extendedCommunities: l };
    },
    attrsOnly: true,
    describe: (b, a) => {
      const text = (x: typeof b) => (x.extendedCommunities ?? []).map(formatExtendedCommunity).join(' ');
      return `extended communities [${text(b)}] → [${text(a)}]`;
    },
  };
}

/** Puts `count` copies of `asn` in front, merging into a leading AS_SEQUENCE and keeping segments ≤ 255 ASNs. */
function prependAsPath(path: readonly AsPathSegment[] | undefined, asn: number, count: number): AsPathSegment[] {
  const segs = path ?? [];
  let asns: number[] = new Array<number>(count).fill(asn);
  let rest = segs;
  if (segs.length > 0 && segs[0].type === 2) {
    asns = asns.concat(segs[0].asns);
    rest = segs.slice(1);
  }
  const out: AsPathSegment[] = [];
  for (let i = 0; i < asns.length; i += 255) out.push({ type: 2, asns: asns.slice(i, i + 255) });
  return out.concat(rest);
}

function uint(where: string, v: unknown, max = U32): number {
  if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > max) throw new PolicyError(where, `must be an integer 0..${max}, got ${JSON.stringify(v)}`);
  return v as number;
}

export function compileActions(where: string, def: ActionsDef | undefined): { result: StatementResult; mods: Modification[] } {
  const mods: Modification[] = [];
  if (def === undefined) return { result: 'continue', mods };
  if (typeof def !== 'object' || def === null) throw new PolicyError(where, 'must be an object');
  for (const k of Object.keys(def)) if (!ACTION_KEYS.has(k)) throw new PolicyError(`${where}.${k}`, `unknown action (known: ${[...ACTION_KEYS].join(', ')})`);
  const w = (f: string) => `${where}.${f}`;
  const result = def.result ?? 'continue';
  if (!['accept', 'reject', 'continue', 'next-policy'].includes(result))
    throw new PolicyError(w('result'), `must be "accept", "reject", "continue" or "next-policy", got ${JSON.stringify(def.result)}`);

  if (def.community !== undefined) mods.push(communityOps(w('community'), def.community));
  if (def.largeCommunity !== undefined) mods.push(largeOps(w('largeCommunity'), def.largeCommunity));
  if (def.extCommunity !== undefined) mods.push(extOps(w('extCommunity'), def.extCommunity));
  if (def.localPref !== undefined) {
    const v = uint(w('localPref'), def.localPref);
    mods.push({ attrsOnly: true, apply: (a) => ({ ...a, localPref: v }), describe: (b) => `LOCAL_PREF ${b.localPref ?? '(none)'} → ${v}` });
  }
  if (def.med !== undefined) {
    const m = def.med;
    let apply: (cur: number | undefined) => number;
    if (typeof m === 'number') {
      const v = uint(w('med'), m);
      apply = () => v;
    } else if (typeof m === 'string' && /^[+-](0|[1-9][0-9]{0,9})$/.test(m) && Math.abs(Number(m)) <= U32) {
      const d = Number(m);
      apply = (cur) => Math.min(U32, Math.max(0, (cur ?? 0) + d));
    } else throw new PolicyError(w('med'), `must be a number 0..4294967295 or "+N" / "-N", got ${JSON.stringify(m)}`);
    mods.push({ attrsOnly: true, apply: (a) => ({ ...a, med: apply(a.med) }), describe: (b, a) => `MED ${b.med ?? '(none)'} → ${a.med}` });
  }
  if (def.nextHop !== undefined) {
    const nh = def.nextHop;
    if (nh === 'self') {
      mods.push({
        apply: (a, _r, ctx, st) => {
          st.nextHopDirective = 'self';
          return ctx.peer.localAddress ? { ...a, nextHop: ctx.peer.localAddress } : a;
        },
        describe: (b, a) =>
          a.nextHop !== b.nextHop
            ? `next hop ${b.nextHop?.toString() ?? '(none)'} → ${a.nextHop?.toString()} (self)`
            : 'next hop → self (filled in by the speaker)',
      });
    } else if (nh === 'unchanged' || nh === 'keep') {
      mods.push({
        apply: (a, _r, _c, st) => {
          st.nextHopDirective = 'unchanged';
          return a;
        },
        describe: (b) => `next hop kept unchanged (${b.nextHop?.toString() ?? 'none'})`,
      });
    } else {
      let addr: Address;
      try {
        addr = Address.parse(String(nh));
      } catch (err) {
        throw new PolicyError(w('nextHop'), `must be "self", "unchanged" or an address: ${(err as Error).message}`);
      }
      mods.push({
        apply: (a, _r, _c, st) => {
          st.nextHopDirective = undefined;
          return { ...a, nextHop: addr };
        },
        describe: (b) => `next hop ${b.nextHop?.toString() ?? '(none)'} → ${addr.toString()}`,
      });
    }
  }
  if (def.asPathPrepend !== undefined) {
    const p = def.asPathPrepend;
    if (typeof p !== 'object' || p === null) throw new PolicyError(w('asPathPrepend'), 'must be { asn?: number | "self" | "last", count } or { asns: [...] }');
    if ('asns' in p) {
      if (!Array.isArray(p.asns) || p.asns.length === 0 || p.asns.length > 255)
        throw new PolicyError(w('asPathPrepend.asns'), 'must be a list of 1..255 AS numbers');
      const asns = p.asns.map((a, i) => uint(w(`asPathPrepend.asns[${i}]`), a));
      mods.push({
        apply: (a) => {
          let path = a.asPath;
          for (let i = asns.length - 1; i >= 0; i--) path = prependAsPath(path, asns[i], 1);
          return { ...a, asPath: path };
        },
        attrsOnly: true,
        describe: (b, a) => `AS path "${asPathText(b.asPath)}" → "${asPathText(a.asPath)}"`,
      });
    } else {
      const count = uint(w('asPathPrepend.count'), p.count, 255);
      const asn = p.asn ?? 'self';
      if (asn !== 'self' && asn !== 'last') uint(w('asPathPrepend.asn'), asn);
      mods.push({
        apply: (a, _r, ctx) => {
          const which = asn === 'self' ? ctx.peer.localAsn : asn === 'last' ? firstAsn(a) : asn;
          if (which === undefined || count === 0) return a;
          return { ...a, asPath: prependAsPath(a.asPath, which, count) };
        },
        attrsOnly: asn !== 'self',
        describe: (b, a) => `AS path "${asPathText(b.asPath)}" → "${asPathText(a.asPath)}"`,
      });
    }
  }
  return { result: result as StatementResult, mods };
}

function firstAsn(a: PathAttributes): number | undefined {
  const s = a.asPath?.[0];
  return s && s.type === 2 && s.asns.length > 0 ? s.asns[0] : undefined;
}
