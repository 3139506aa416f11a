import { ParseError } from './errors.js';
import { Prefix } from './prefix.js';
import { PrefixTrie } from './trie.js';
import { V4Index } from './trie-v4-index.js';

/** One prefix-set entry: prefixes inside `prefix` whose length is within [ge, le]. */
export interface PrefixRange {
  readonly prefix: Prefix;
  readonly ge: number;
  readonly le: number;
}

/**
 * Allowed lengths of every range stored at one trie node, as a 129-bit mask
 * (four 32-bit words; bit `len & 31` of word `len >>> 5`). Several ranges on
 * the same prefix merge into one mask, so a membership check is one walk down
 * the trie with a bit test per stored ancestor.
 */
type LengthMask = Uint32Array;

/** Below this many ranges a walk over the ancestors is cheap and needs no lookup index. */
const FLAT_THRESHOLD = 64;

function lengthAllowed(mask: LengthMask, len: number): boolean {
  return ((mask[len >>> 5] >>> (len & 31)) & 1) === 1;
}

/**
 * A set of prefix ranges (BIRD's `10.0.0.0/8{16,24}`, GoBGP's
 * `10.0.0.0/8 masklength 16..24`), IPv4 and IPv6 together.
 */
export class PrefixSet {
  private readonly trie = new PrefixTrie<LengthMask>();
  private readonly list: PrefixRange[] = [];
  /**
   * For large sets: each stored prefix mapped to the OR of its own and all its
   * ancestors' masks. A prefix q then matches iff bit q.length is set in the
   * entry of the longest stored prefix containing q's address (a mask never
   * holds lengths shorter than its own prefix, so longer entries that contain
   * the address but not q cannot add a false bit). Rebuilt lazily after `add`.
   * IPv4 entries go in a 16-8-8 index whose result ids point straight into
   * `masks4` (two words per id: lengths 0-31, then 32), so a check is three
   * reads of one Int32Array and one of a Uint32Array, no object visited;
   * IPv6 uses a trie of the cumulative masks.
   */
  private flat: { readonly index4: V4Index<number>; readonly masks4: Uint32Array; readonly trie6: PrefixTrie<LengthMask> } | null = null;

  constructor(ranges: Iterable<PrefixRange | string> = []) {
    for (const r of ranges) this.add(r);
  }

  static parse(lines: Iterable<string>): PrefixSet {
    return new PrefixSet([...lines].map(parsePrefixRange));
  }

  add(range: PrefixRange | string): this {
    const r = typeof range === 'string' ? parsePrefixRange(range) : checkRange(range);
    let mask = this.trie.get(r.prefix);
    if (mask === undefined) {
      mask = new Uint32Array(5);
      this.trie.set(r.prefix, mask);
    }
    for (let l = r.ge; l <= r.le; l++) mask[l >>> 5] |= 1 << (l & 31);
    this.list.push(r);
    this.flat = null;
    return this;
  }

  /** True when `prefix` lies inside some entry's prefix with its length in that entry's [ge, le]. */
  matches(prefix: Prefix): boolean {
    if (this.list.length < FLAT_THRESHOLD) return this.trie.someCovering(prefix, lengthAllowed, prefix.length);
    const flat = this.flat ?? this.buildFlat();
    const len = prefix.length;
    if (prefix.family === 4) {
      const id = flat.index4.lookupId(prefix.w0);
      return id >= 0 && ((flat.masks4[(id << 1) + (len >>> 5)] >>> (len & 31)) & 1) === 1;
    }
    const e = flat.trie6.lookup(prefix);
    return e !== undefined && lengthAllowed(e.value, len);
  }

  private buildFlat(): NonNullable<PrefixSet['flat']> {
    const index4 = new V4Index<number>();
    const masks: number[] = [];
    const trie6 = new PrefixTrie<LengthMask>();
    // Entries come ancestors first, so a stack of open ancestors gives each one's cumulative mask.
    const stack: { prefix: Prefix; mask: LengthMask }[] = [];
    for (const { prefix, value } of this.trie) {
      while (stack.length > 0 && !stack[stack.length - 1].prefix.contains(prefix)) stack.pop();
      const mask = Uint32Array.from(value);
      if (stack.length > 0) {
        const up = stack[stack.length - 1].mask;
        for (let i = 0; i < mask.length; i++) mask[i] |= up[i];
      }
      stack.push({ prefix, mask });
      if (prefix.family === 6) trie6.set(prefix, mask);
      else {
        const id = index4.insert(prefix.w0, prefix.length, 0);
        masks[id * 2] = mask[0];
        masks[id * 2 + 1] = mask[1];
      }
    }
    this.flat = { index4, masks4: Uint32Array.from(masks), trie6 };
    return this.flat;
  }

  /** The ranges as added (duplicates kept). */
  get ranges(): readonly PrefixRange[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }
}

function checkRange(r: PrefixRange): PrefixRange {
  const max = r.prefix.maxLength;
  const text = `${r.prefix.toString()} ge ${r.ge} le ${r.le}`;
  if (!Number.isInteger(r.ge) || !Number.isInteger(r.le)) throw new ParseError(text, 'prefix range (lengths must be integers)');
  if (r.ge < r.prefix.length) throw new ParseError(text, `prefix range (minimum length ${r.ge} is shorter than the prefix length ${r.prefix.length})`);
  if (r.le > max) throw new ParseError(text, `prefix range (maximum length ${r.le} is above ${max} for IPv${r.prefix.family})`);
  if (r.ge > r.le) throw new ParseError(text, `prefix range (minimum length ${r.ge} is above maximum length ${r.le})`);
  return r;
}

const LEN = '(0|[1-9][0-9]{0,2})';
const BIRD_FORM = new RegExp(`^\\{\\s*${LEN}\\s*,\\s*${LEN}\\s*\\}$`);
const DOTS_FORM = new RegExp(`^(?:masklength\\s+)?${LEN}\\s*\\.\\.\\s*${LEN}$`);
const GE_LE_FORM = new RegExp(`^(?:ge\\s+${LEN})?\\s*(?:le\\s+${LEN})?$`);

/**
 * Parses one prefix-range entry. Accepted forms:
 * `10.0.0.0/8` (exactly /8), `10.0.0.0/8{16,24}`, `10.0.0.0/8+` (any longer or equal),
 * `10.0.0.0/8 le 24`, `10.0.0.0/8 ge 16`, `10.0.0.0/8 ge 16 le 24`,
 * `10.0.0.0/8 16..24`, `10.0.0.0/8 masklength 16..24`.
 */
export function parsePrefixRange(text: string): PrefixRange {
  if (typeof text !== 'string' || text.trim() === '') throw new ParseError(String(text), 'prefix range (empty)');
  const t = text.trim();
  const m = /^[0-9A-Fa-f.:]+\/[0-9]+/.exec(t);
  if (!m) throw new ParseError(text, 'prefix range (must start with a prefix like 10.0.0.0/8)');
  let prefix: Prefix;
  try {
    prefix = Prefix.parse(m[0]);
  } catch (err) {
    throw new ParseError(text, `prefix range (${(err as ParseError).reason ?? (err as Error).message})`);
  }
  const rest = t.slice(m[0].length).trim();
  const max = prefix.maxLength;
  let ge = prefix.length;
  let le = prefix.length;
  if (rest === '') {
    // exact
  } else if (rest === '+') {
    le = max;
  } else {
    let mm: RegExpExecArray | null;
    if ((mm = BIRD_FORM.exec(rest)) || (mm = DOTS_FORM.exec(rest))) {
      ge = Number(mm[1]);
      le = Number(mm[2]);
    } else if ((mm = GE_LE_FORM.exec(rest)) && (mm[1] !== undefined || mm[2] !== undefined)) {
      if (mm[1] !== undefined) {
        ge = Number(mm[1]);
        le = max; // "ge N" alone means N up to the family maximum
      }
      if (mm[2] !== undefined) le = Number(mm[2]);
    } else {
      throw new ParseError(text, `prefix range (cannot read ${JSON.stringify(rest)}; expected "{min,max}", "ge N", "le N", "ge N le M" or "N..M")`);
    }
  }
  try {
    return checkRange({ prefix, ge, le });
  } catch (err) {
    throw new ParseError(text, (err as ParseError).reason);
  }
}

export function formatPrefixRange(r: PrefixRange): string {
  if (r.ge === r.prefix.length && r.le === r.prefix.length) return r.prefix.toString();
  return `${r.prefix.toString()}{${r.ge},${r.le}}`;
}
