/**
 * The Calico selector language used by nodeSelector / peerSelector:
 *   all()  has(k)  k == 'v'  k != 'v'  k in {'a','b'}  k not in {...}
 *   k contains 's'  k starts with 's'  k ends with 's'
 *   !e  e && e  e || e  ( e )
 * `&&` binds tighter than `||`; `!` tighter than both. An empty selector is all().
 */

export type SelectorExpr =
  | { readonly op: 'all' }
  | { readonly op: 'has'; readonly key: string }
  | { readonly op: 'eq' | 'ne' | 'contains' | 'startsWith' | 'endsWith'; readonly key: string; readonly value: string }
  | { readonly op: 'in' | 'notIn'; readonly key: string; readonly values: readonly string[] }
  | { readonly op: 'not'; readonly expr: SelectorExpr }
  | { readonly op: 'and' | 'or'; readonly left: SelectorExpr; readonly right: SelectorExpr };

export interface Selector {
  /** The source text, as written. */
  readonly text: string;
  readonly expr: SelectorExpr;
}

/** A selector that does not parse; `position` is the 0-based character offset. */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';
  constructor(
    readonly text: string,
    readonly position: number,
    readonly reason: string,
  ) {
    super(`invalid selector ${JSON.stringify(text)} at character ${position + 1}: ${reason}`);
  }
}

type Token =
  { t: 'ident'; v: string; pos: number } | { t: 'string'; v: string; pos: number } | { t: 'punct'; v: string; pos: number } | { t: 'end'; pos: number };

const KEY_CHAR = /[A-Za-z0-9_.\/-]/;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '==' || two === '!=' || two === '&&' || two === '||') {
      out.push({ t: 'punct', v: two, pos: i });
      i += 2;
      continue;
    }
    if ('(){},!'.includes(c)) {
      out.push({ t: 'punct', v: c, pos: i });
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new SelectorError(text, i, `unterminated string starting with ${c}`);
      out.push({ t: 'string', v: text.slice(i + 1, end), pos: i });
      i = end + 1;
      continue;
    }
    if (KEY_CHAR.test(c)) {
      let j = i;
      while (j < text.length && KEY_CHAR.test(text[j])) j++;
      out.push({ t: 'ident', v: text.slice(i, j), pos: i });
      i = j;
      continue;
    }
    if (c === '=') throw new SelectorError(text, i, 'single "=" (use "==")');
    if (c === '&' || c === '|') throw new SelectorError(text, i, `single "${c}" (use "${c}${c}")`);
    throw new SelectorError(text, i, `unexpected character ${JSON.stringify(c)}`);
  }
  out.push({ t: 'end', pos: text.length });
  return out;
}

class Parser {
  private i = 0;
  constructor(
    private readonly text: string,
    private readonly toks: Token[],
  ) {}

  private peek(): Token {
    return this.toks[this.i];
  }
  private next(): Token {
    return this.toks[this.i++];
  }
  private fail(tok: Token, reason: string): never {
    throw new SelectorError(this.text, tok.pos, reason);
  }
  private isPunct(v: string): boolean {
    const t = this.peek();
    return t.t === 'punct' && t.v === v;
  }
  private expectPunct(v: string, what: string): void {
    const t = this.next();
    if (t.t !== 'punct' || t.v !== v) this.fail(t, `expected "${v}" ${what}, found ${show(t)}`);
  }
  private expectString(what: string): string {
    const t = this.next();
    if (t.t !== 'string') this.fail(t, `expected a quoted string ${what}, found ${show(t)}`);
    return t.v;
  }

  parseTop(): SelectorExpr {
    if (this.peek().t === 'end') return { op: 'all' };
    const e = this.parseOr();
    const t = this.peek();
    if (t.t !== 'end') this.fail(t, `unexpected ${show(t)} after a complete expression (missing "&&" or "||"?)`);
    return e;
  }

  private parseOr(): SelectorExpr {
    let left = this.parseAnd();
    while (this.isPunct('||')) {
      this.next();
      left = { op: 'or', left, right: this.parseAnd() };
    }
    return left;
  }

  private parseAnd(): SelectorExpr {
    let left = this.parseUnary();
    while (this.isPunct('&&')) {
      this.next();
      left = { op: 'and', left, right: this.parseUnary() };
    }
    return left;
  }

  private parseUnary(): SelectorExpr {
    if (this.isPunct('!')) {
      this.next();
      return { op: 'not', expr: this.parseUnary() };
    }
    if (this.isPunct('(')) {
      this.next();
      const e = this.parseOr();
      this.expectPunct(')', 'to close "("');
      return e;
    }
    return this.parseTerm();
  }

  private parseTerm(): SelectorExpr {
    const t = this.next();
    if (t.t !== 'ident') this.fail(t, `expected a label key, all() or has(key), found ${show(t)}`);
    if ((t.v === 'all' || t.v === 'has' || t.v === 'global') && this.isPunct('(')) {
      this.next();
      if (t.v === 'all') {
        this.expectPunct(')', 'after "all("');
        return { op: 'all' };
      }
      if (t.v === 'global') this.fail(t, 'global() is not supported here');
      const k = this.next();
      if (k.t !== 'ident') this.fail(k, `expected a label key inside has(), found ${show(k)}`);
      this.expectPunct(')', 'to close "has("');
      return { op: 'has', key: k.v };
    }
    const key = t.v;
    const op = this.next();
    if (op.t === 'punct' && (op.v === '==' || op.v === '!=')) {
      return { op: op.v === '==' ? 'eq' : 'ne', key, value: this.expectString(`after "${op.v}"`) };
    }
    if (op.t === 'ident') {
      if (op.v === 'in') return { op: 'in', key, values: this.parseSet() };
      if (op.v === 'not') {
        const n = this.next();
        if (n.t !== 'ident' || n.v !== 'in') this.fail(n, `expected "in" after "not", found ${show(n)}`);
        return { op: 'notIn', key, values: this.parseSet() };
      }
      if (op.v === 'contains') return { op: 'contains', key, value: this.expectString('after "contains"') };
      if (op.v === 'starts' || op.v === 'ends') {
        const w = this.next();
        if (w.t !== 'ident' || w.v !== 'with') this.fail(w, `expected "with" after "${op.v}", found ${show(w)}`);
        return { op: op.v === 'starts' ? 'startsWith' : 'endsWith', key, value: this.expectString(`after "${op.v} with"`) };
      }
    }
    return this.fail(op, `expected an operator (==, !=, in, not in, contains, starts with, ends with) after label key "${key}", found ${show(op)}`);
  }

  private parseSet(): string[] {
    this.expectPunct('{', 'to open a set');
    const values: string[] = [];
    if (this.isPunct('}')) {
      this.next();
      return values;
    }
    for (;;) {
      values.push(this.expectString('in a set'));
      const t = this.next();
      if (t.t === 'punct' && t.v === '}') return values;
      if (t.t !== 'punct' || t.v !== ',') this.fail(t, `expected "," or "}" in a set, found ${show(t)}`);
    }
  }
}

function show(t: Token): string {
  if (t.t === 'end') return 'end of selector';
  if (t.t === 'string') return `string '${t.v}'`;
  return `"${t.v}"`;
}

/** Parses a selector; throws SelectorError naming the position and what was expected. */
export function parseSelector(text: string): Selector {
  return { text, expr: new Parser(text, tokenize(text)).parseTop() };
}

function matchesExpr(e: SelectorExpr, labels: Readonly<Record<string, string>>): boolean {
  switch (e.op) {
    case 'all':
      return true;
    case 'has':
      return Object.hasOwn(labels, e.key);
    case 'eq':
      return Object.hasOwn(labels, e.key) && labels[e.key] === e.value;
    case 'ne':
      // Calico: a missing label is "not equal".
      return !Object.hasOwn(labels, e.key) || labels[e.key] !== e.value;
    case 'contains':
      return Object.hasOwn(labels, e.key) && labels[e.key].includes(e.value);
    case 'startsWith':
      return Object.hasOwn(labels, e.key) && labels[e.key].startsWith(e.value);
    case 'endsWith':
      return Object.hasOwn(labels, e.key) && labels[e.key].endsWith(e.value);
    case 'in':
      return Object.hasOwn(labels, e.key) && e.values.includes(labels[e.key]);
    case 'notIn':
      return !Object.hasOwn(labels, e.key) || !e.values.includes(labels[e.key]);
    case 'not':
      return !matchesExpr(e.expr, labels);
    case 'and':
      return matchesExpr(e.left, labels) && matchesExpr(e.right, labels);
    case 'or':
      return matchesExpr(e.left, labels) || matchesExpr(e.right, labels);
  }
}

export function matches(s: Selector, labels: Readonly<Record<string, string>>): boolean {
  return matchesExpr(s.expr, labels);
}

export const ALL: Selector = { text: 'all()', expr: { op: 'all' } };
