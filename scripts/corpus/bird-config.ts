/**
 * A reader for the BIRD configuration Calico's confd renders (pure): the
 * top-level items (protocols, templates, functions, filters), each BGP
 * protocol's settings as data, and a small interpreter for the filter
 * language subset confd writes, so that a filter can be run over a route
 * ("is this static exported to that peer, with which communities?").
 *
 * Written for scripts/calico-corpus.ts; covers what confd emits, and throws
 * an Error naming the line on anything else rather than guessing.
 */

// ---------------------------------------------------------------- tokens

export type Tok =
  | { readonly t: 'id'; readonly v: string; readonly line: number }
  | { readonly t: 'num'; readonly v: string; readonly line: number }
  | { readonly t: 'str'; readonly v: string; readonly line: number }
  | { readonly t: 'op'; readonly v: string; readonly line: number };

const OPS = ['&&', '||', '!~', '!=', '<=', '>=', '[=', '=]', '{', '}', '(', ')', '[', ']', ';', ',', '~', '=', '<', '>', '!', '+', '-', '*', '.'];

/** Splits BIRD configuration text into tokens; an address or prefix (`10.0.0.0/8`, `fd00::/64`) is one `num` token. */
export function tokenize(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new Error(`line ${line}: unterminated string`);
      // A single-quoted word is a symbol name (confd quotes function names that contain '-').
      out.push(c === '"' ? { t: 'str', v: text.slice(i + 1, end), line } : { t: 'id', v: text.slice(i + 1, end), line });
      i = end + 1;
      continue;
    }
    // Numbers, addresses and prefixes: digits, hex, ':' and '.' and one '/len'.
    const num = /^(?:[0-9a-fA-F]*:[0-9a-fA-F:.]*|\d+(?:\.\d+){3}|\d+)(?:\/\d+)?/.exec(text.slice(i, i + 64));
    if (num && num[0].length > 0 && (/[0-9]/.test(c) || (c === ':' && text[i + 1] === ':') || (/[a-fA-F]/.test(c) && num[0].includes(':')))) {
      out.push({ t: 'num', v: num[0], line });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 128));
    if (id) {
      out.push({ t: 'id', v: id[0], line });
      i += id[0].length;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (!op) throw new Error(`line ${line}: unexpected character ${JSON.stringify(c)}`);
    out.push({ t: 'op', v: op, line });
    i += op.length;
  }
  return out;
}

// ---------------------------------------------------------------- top level

/** One statement of a protocol or template block, as its words (`['neighbor', '10.0.0.1', 'as', '64512']`), or a nested filter body. */
export type Setting = { readonly words: readonly string[]; readonly body?: readonly Tok[] };

export interface Item {
  /** `protocol`, `template`, `function`, `filter`, or a bare statement's first word (`router`, `include`, `listen`). */
  readonly kind: string;
  /** For protocol and template: the protocol type (`bgp`, `static`, `kernel`). */
  readonly type?: string;
  readonly name?: string;
  readonly from?: string;
  readonly params?: readonly { readonly type: string; readonly name: string }[];
  readonly settings: readonly Setting[];
  /** Function and filter bodies: the tokens between the braces. */
  readonly body?: readonly Tok[];
  readonly words?: readonly string[];
}

class Cursor {
  i = 0;
  constructor(readonly toks: readonly Tok[]) {}
  peek(k = 0): Tok | undefined {
    return this.toks[this.i + k];
  }
  next(): Tok {
    const t = this.toks[this.i++];
    if (!t) throw new Error('unexpected end of configuration');
    return t;
  }
  is(v: string, k = 0): boolean {
    const t = this.peek(k);
    return t !== undefined && t.t !== 'str' && t.v === v;
  }
  expect(v: string): Tok {
    const t = this.next();
    if (t.v !== v || t.t === 'str') throw new Error(`line ${t.line}: expected ${JSON.stringify(v)}, got ${JSON.stringify(t.v)}`);
    return t;
  }
  /** The tokens of a `{ ... }` group (the cursor is on `{`), braces excluded. */
  group(): Tok[] {
    this.expect('{');
    const start = this.i;
    let depth = 1;
    while (depth > 0) {
      const t = this.next();
      if (t.t === 'op' && t.v === '{') depth++;
      else if (t.t === 'op' && t.v === '}') depth--;
    }
    return this.toks.slice(start, this.i - 1) as Tok[];
  }
  done(): boolean {
    return this.i >= this.toks.length;
  }
}

function settingsOf(toks: readonly Tok[]): Setting[] {
  const c = new Cursor(toks);
  const out: Setting[] = [];
  let words: string[] = [];
  while (!c.done()) {
    const t = c.peek()!;
    if (t.t === 'op' && t.v === ';') {
      c.next();
      if (words.length > 0) out.push({ words });
      words = [];
    } else if (t.t === 'op' && t.v === '{') {
      const body = c.group();
      out.push({ words, body });
      words = [];
      if (c.is(';')) c.next();
    } else {
      c.next();
      words.push(t.v);
    }
  }
  if (words.length > 0) out.push({ words });
  return out;
}

/** The top-level items of one configuration text (several files may be concatenated). */
export function parseItems(text: string): Item[] {
  const c = new Cursor(tokenize(text));
  const out: Item[] = [];
  while (!c.done()) {
    const t = c.next();
    if (t.v === 'protocol' || t.v === 'template') {
      const type = c.next().v;
      let name: string | undefined;
      let from: string | undefined;
      if (!c.is('{') && !c.is('from')) name = c.next().v;
      if (c.is('from')) {
        c.next();
        from = c.next().v;
      }
      const body = c.group();
      out.push({ kind: t.v, type, name, from, settings: settingsOf(body), body });
    } else if (t.v === 'function') {
      const name = c.next().v;
      const params: { type: string; name: string }[] = [];
      c.expect('(');
      while (!c.is(')')) {
        const type = c.next().v;
        const pname = c.next().v;
        params.push({ type, name: pname });
        if (c.is(',')) c.next();
      }
      c.expect(')');
      out.push({ kind: 'function', name, params, settings: [], body: c.group() });
    } else if (t.v === 'filter') {
      const name = c.next().v;
      out.push({ kind: 'filter', name, settings: [], body: c.group() });
    } else {
      const words = [t.v];
      while (!c.is(';')) words.push(c.next().v);
      c.next();
      out.push({ kind: t.v, words, settings: [] });
    }
  }
  return out;
}

// ---------------------------------------------------------------- BGP peers

export interface BirdPeer {
  readonly protocol: string;
  readonly address: string;
  readonly port: number;
  readonly asn: number;
  readonly localAsn?: number;
  readonly passive: boolean;
  /** `multihop` alone: true; `multihop N`: N; absent: false. */
  readonly multihop: boolean | number;
  readonly sourceAddress?: string;
  readonly password?: string;
  /** TTL security hops (on: the multihop value, 1 when none), 0: off. */
  readonly ttlSecurity: number;
  readonly nextHop: 'self' | 'keep' | 'auto';
  readonly rrClient: boolean;
  readonly rrClusterId?: string;
  readonly gracefulRestartTime?: number;
  readonly allowLocalAs?: number;
  /** BIRD 1.6 `add paths on|rx|tx|off` (on: rx and tx); absent: off. */
  readonly addPaths: 'off' | 'receive' | 'send' | 'both';
  readonly importFilter?: FilterRef;
  readonly exportFilter?: FilterRef;
}

/** A filter: `all`, `none`, a named filter, or an inline body. */
export type FilterRef =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'inline'; readonly body: readonly Tok[] };

function filterRef(s: Setting): FilterRef {
  if (s.body) return { kind: 'inline', body: s.body };
  const w = s.words[s.words.length - 1];
  if (s.words[1] === 'all' || s.words[1] === 'none') return { kind: s.words[1] };
  if (s.words[1] === 'filter' && w !== undefined) return { kind: 'named', name: w };
  throw new Error(`unrecognised filter setting: ${s.words.join(' ')}`);
}

/** Settings of a protocol merged over its template's (the protocol's own win). */
function mergedSettings(items: readonly Item[], it: Item): Setting[] {
  const tmpl = it.from ? items.find((x) => x.kind === 'template' && x.name === it.from) : undefined;
  return [...(tmpl ? mergedSettings(items, tmpl) : []), ...it.settings];
}

const ADD_PATHS: Record<string, BirdPeer['addPaths']> = { on: 'both', yes: 'both', off: 'off', no: 'off', rx: 'receive', tx: 'send' };

function fail(what: string): never {
  throw new Error(`cannot read ${what}`);
}

/** Every `protocol bgp` of the configuration, its template's settings applied. */
export function bgpPeers(items: readonly Item[]): BirdPeer[] {
  const out: BirdPeer[] = [];
  for (const it of items) {
    if (it.kind !== 'protocol' || it.type !== 'bgp') continue;
    const p: {
      -readonly [K in keyof BirdPeer]?: BirdPeer[K];
    } = { protocol: it.name, passive: false, multihop: false, ttlSecurity: 0, nextHop: 'auto', rrClient: false, port: 179, addPaths: 'off' };
    let ttlOn = false;
    for (const s of mergedSettings(items, it)) {
      const w = s.words;
      const k = w.join(' ');
      if (w[0] === 'neighbor') {
        p.address = w[1];
        const at = w.indexOf('as');
        const port = w.indexOf('port');
        if (at >= 0) p.asn = Number(w[at + 1]);
        if (port >= 0) p.port = Number(w[port + 1]);
      } else if (w[0] === 'local' && w.includes('as')) p.localAsn = Number(w[w.indexOf('as') + 1]);
      else if (k === 'passive on') p.passive = true;
      else if (k === 'passive off') p.passive = false;
      else if (w[0] === 'multihop') p.multihop = w[1] !== undefined ? Number(w[1]) : true;
      else if (w[0] === 'source' && w[1] === 'address') p.sourceAddress = w[2];
      else if (w[0] === 'password') p.password = w[1];
      else if (k === 'ttl security on') ttlOn = true;
      else if (k === 'ttl security off') ttlOn = false;
      else if (k === 'next hop self') p.nextHop = 'self';
      else if (k === 'next hop keep') p.nextHop = 'keep';
      else if (k === 'rr client') p.rrClient = true;
      else if (w[0] === 'rr' && w[1] === 'cluster') p.rrClusterId = w[3];
      else if (w[0] === 'graceful' && w[2] === 'time') p.gracefulRestartTime = Number(w[3]);
      else if (w[0] === 'allow' && w[1] === 'local') p.allowLocalAs = w[3] !== undefined ? Number(w[3]) : 1;
      else if (w[0] === 'add' && w[1] === 'paths') p.addPaths = ADD_PATHS[w[2]] ?? fail(`protocol bgp ${it.name}: add paths ${w[2]}`);
      else if (w[0] === 'import') p.importFilter = filterRef(s);
      else if (w[0] === 'export') p.exportFilter = filterRef(s);
    }
    if (p.address === undefined || p.asn === undefined) throw new Error(`protocol bgp ${it.name}: no neighbor address and AS`);
    p.ttlSecurity = ttlOn ? (typeof p.multihop === 'number' ? p.multihop : 1) : 0;
    out.push(p as BirdPeer);
  }
  return out;
}

/** Every `route` of the static protocols (and the static templates they use). */
export function staticRoutes(items: readonly Item[]): { readonly prefix: string; readonly blackhole: boolean; readonly via?: string }[] {
  const out: { prefix: string; blackhole: boolean; via?: string }[] = [];
  for (const it of items) {
    if (it.kind !== 'protocol' || it.type !== 'static') continue;
    for (const s of mergedSettings(items, it)) {
      if (s.words[0] !== 'route') continue;
      const via = s.words[2] === 'via' ? s.words[3] : undefined;
      out.push({ prefix: s.words[1], blackhole: s.words[2] === 'blackhole', ...(via !== undefined ? { via } : {}) });
    }
  }
  return out;
}

// ---------------------------------------------------------------- the filter language

/** A route as a filter sees it. Attributes absent from the map are undefined (`defined(x)` is false). */
export interface Route {
  net: string;
  attrs: Map<string, Value>;
}

export type Value =
  | { readonly k: 'num'; readonly v: number }
  | { readonly k: 'bool'; readonly v: boolean }
  | { readonly k: 'str'; readonly v: string }
  | { readonly k: 'sym'; readonly v: string }
  | { readonly k: 'prefix'; readonly v: string }
  | { readonly k: 'ip'; readonly v: string }
  | { readonly k: 'pair'; readonly v: readonly number[] }
  | { readonly k: 'clist'; readonly v: readonly (readonly number[])[] }
  | { readonly k: 'path'; readonly v: readonly number[] }
  | { readonly k: 'set'; readonly v: readonly Value[] }
  | { readonly k: 'mask'; readonly v: readonly (number | '*')[] };

export type Verdict = 'accept' | 'reject' | 'none';

class Stop {
  constructor(readonly verdict: 'accept' | 'reject' | 'return') {}
}

// Prefix arithmetic on bigints, both families.
function parseAddr(a: string): { fam: 4 | 6; n: bigint } {
  if (a.includes(':')) {
    let [head, tail] = a.split('::') as [string, string | undefined];
    const h = head === '' ? [] : head.split(':');
    const t = tail === undefined || tail === '' ? [] : tail.split(':');
    const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
    const parts = [...h, ...fill, ...t];
    if (parts.length !== 8) throw new Error(`bad IPv6 address ${a}`);
    return { fam: 6, n: parts.reduce((acc, p) => (acc << 16n) | BigInt(parseInt(p, 16)), 0n) };
  }
  const q = a.split('.').map(Number);
  if (q.length !== 4 || q.some((x) => !(x >= 0 && x <= 255))) throw new Error(`bad IPv4 address ${a}`);
  return { fam: 4, n: q.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n) };
}

function parsePrefix(p: string): { fam: 4 | 6; n: bigint; len: number } {
  const [a, l] = p.split('/');
  const { fam, n } = parseAddr(a);
  return { fam, n, len: l === undefined ? (fam === 4 ? 32 : 128) : Number(l) };
}

/** Whether `inner` (a prefix or an address) lies inside `outer`. */
export function prefixWithin(inner: string, outer: string): boolean {
  const a = parsePrefix(inner);
  const b = parsePrefix(outer);
  if (a.fam !== b.fam || a.len < b.len) return false;
  const bits = a.fam === 4 ? 32 : 128;
  const shift = BigInt(bits - b.len);
  return a.n >> shift === b.n >> shift;
}

function same(a: string, b: string): boolean {
  const x = parsePrefix(a);
  const y = parsePrefix(b);
  return x.fam === y.fam && x.n === y.n && x.len === y.len;
}

function glob(s: string, pattern: string): boolean {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(s);
}

function truthy(v: Value | undefined): boolean {
  if (!v || v.k !== 'bool') throw new Error(`expected a boolean, got ${JSON.stringify(v)}`);
  return v.v;
}

function pathMatch(path: readonly number[], mask: readonly (number | '*')[]): boolean {
  const go = (i: number, j: number): boolean => {
    if (j === mask.length) return i === path.length;
    const m = mask[j];
    if (m === '*') return go(i, j + 1) || (i < path.length && go(i + 1, j));
    return i < path.length && path[i] === m && go(i + 1, j + 1);
  };
  return go(0, 0);
}

function matches(a: Value, b: Value): boolean {
  if (b.k === 'set') return b.v.some((x) => matches(a, x));
  if (a.k === 'prefix' && b.k === 'prefix') return prefixWithin(a.v, b.v);
  if (a.k === 'ip' && b.k === 'prefix') return prefixWithin(a.v, b.v);
  if (a.k === 'str' && b.k === 'str') return glob(a.v, b.v);
  if (a.k === 'pair' && b.k === 'clist') return b.v.some((c) => c.length === a.v.length && c.every((x, i) => x === a.v[i]));
  if (a.k === 'path' && b.k === 'mask') return pathMatch(a.v, b.v);
  if (a.k === 'sym' && b.k === 'sym') return a.v === b.v;
  if (a.k === 'num' && b.k === 'num') return a.v === b.v;
  throw new Error(`cannot match ${a.k} against ${b.k}`);
}

function equal(a: Value, b: Value): boolean {
  if (a.k === 'prefix' && b.k === 'prefix') return same(a.v, b.v);
  if (a.k !== b.k) return false;
  return JSON.stringify(a.v) === JSON.stringify(b.v);
}

/** Runs filters and functions of one configuration over routes. */
export class FilterRunner {
  private readonly functions = new Map<string, Item>();
  private readonly filters = new Map<string, Item>();

  constructor(items: readonly Item[]) {
    for (const it of items) {
      if (it.kind === 'function' && it.name) this.functions.set(it.name, it);
      if (it.kind === 'filter' && it.name) this.filters.set(it.name, it);
    }
  }

  hasFilter(name: string): boolean {
    return this.filters.has(name);
  }

  /** Runs a filter over `route` (changing its attributes as the filter does); `none`: it fell off the end. */
  run(ref: FilterRef | undefined, route: Route): Verdict {
    if (ref === undefined || ref.kind === 'all') return 'accept';
    if (ref.kind === 'none') return 'reject';
    const body = ref.kind === 'inline' ? ref.body : this.filters.get(ref.name)?.body;
    if (!body) throw new Error(`no filter ${ref.kind === 'named' ? ref.name : ''}`);
    try {
      this.block(new Cursor(body), route, new Map(), true);
    } catch (e) {
      if (e instanceof Stop) return e.verdict === 'return' ? 'none' : e.verdict;
      throw e;
    }
    return 'none';
  }

  private block(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): void {
    while (!c.done()) this.statement(c, r, vars, run);
  }

  /** One statement; with `run` false it is only skipped over. */
  private statement(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): void {
    const t = c.next();
    if (t.t === 'op' && t.v === ';') return;
    if (t.t === 'op' && t.v === '{') {
      c.i--;
      const body = c.group();
      if (c.is(';')) c.next();
      if (run) this.block(new Cursor(body), r, vars, true);
      return;
    }
    if (t.v === 'if') {
      const cond = this.expr(c, r, vars, run);
      c.expect('then');
      const yes = run && truthy(cond);
      this.statement(c, r, vars, yes);
      if (c.is('else')) {
        c.next();
        this.statement(c, r, vars, run && !yes);
      }
      return;
    }
    if (t.v === 'accept' || t.v === 'reject') {
      if (c.is(';')) c.next();
      if (run) throw new Stop(t.v);
      return;
    }
    if (t.v === 'return') {
      while (!c.is(';')) c.next();
      c.next();
      if (run) throw new Stop('return');
      return;
    }
    if (t.v === 'print') {
      while (!c.is(';')) c.next();
      c.next();
      return;
    }
    // attr.method(arg);  name = expr;  name(args);
    if (c.is('.')) {
      c.next();
      const method = c.next().v;
      c.expect('(');
      const arg = this.expr(c, r, vars, run);
      c.expect(')');
      c.expect(';');
      if (run) this.method(r, t.v, method, arg);
      return;
    }
    if (c.is('=')) {
      c.next();
      const v = this.expr(c, r, vars, run);
      c.expect(';');
      if (run) {
        if (vars.has(t.v)) vars.set(t.v, v);
        else r.attrs.set(t.v, v);
      }
      return;
    }
    if (c.is('(')) {
      const args = this.args(c, r, vars, run);
      c.expect(';');
      if (run) this.call(t.v, args, r);
      return;
    }
    throw new Error(`line ${t.line}: unsupported statement at ${JSON.stringify(t.v)}`);
  }

  private args(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value[] {
    c.expect('(');
    const out: Value[] = [];
    while (!c.is(')')) {
      out.push(this.expr(c, r, vars, run));
      if (c.is(',')) c.next();
    }
    c.expect(')');
    return out;
  }

  private call(name: string, args: Value[], r: Route): void {
    const fn = this.functions.get(name);
    if (!fn) throw new Error(`no function ${name}`);
    const vars = new Map<string, Value>();
    (fn.params ?? []).forEach((p, i) => vars.set(p.name, args[i] ?? { k: 'bool', v: false }));
    try {
      this.block(new Cursor(fn.body ?? []), r, vars, true);
    } catch (e) {
      if (e instanceof Stop && e.verdict === 'return') return;
      throw e;
    }
  }

  private method(r: Route, attr: string, method: string, arg: Value): void {
    if (method === 'add' || method === 'delete') {
      const cur = r.attrs.get(attr);
      const list = cur?.k === 'clist' ? [...cur.v] : [];
      if (arg.k !== 'pair') throw new Error(`${attr}.${method}: expected a community, got ${arg.k}`);
      const i = list.findIndex((x) => JSON.stringify(x) === JSON.stringify(arg.v));
      if (method === 'add' && i < 0) list.push(arg.v);
      if (method === 'delete' && i >= 0) list.splice(i, 1);
      r.attrs.set(attr, { k: 'clist', v: list });
    } else if (method === 'prepend') {
      const cur = r.attrs.get(attr);
      if (arg.k !== 'num') throw new Error(`${attr}.prepend: expected an AS number`);
      r.attrs.set(attr, { k: 'path', v: [arg.v, ...(cur?.k === 'path' ? cur.v : [])] });
    } else throw new Error(`unsupported method ${attr}.${method}`);
  }

  // Expressions, lowest precedence first: || && comparison additive unary primary.
  private expr(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value {
    let a = this.and(c, r, vars, run);
    while (c.is('||')) {
      c.next();
      const b = this.and(c, r, vars, run && !(a.k === 'bool' && a.v));
      if (run) a = { k: 'bool', v: truthy(a) || truthy(b) };
    }
    return a;
  }

  private and(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value {
    let a = this.cmp(c, r, vars, run);
    while (c.is('&&')) {
      c.next();
      const short = run && a.k === 'bool' && !a.v;
      const b = this.cmp(c, r, vars, run && !short);
      if (run) a = short ? a : { k: 'bool', v: truthy(a) && truthy(b) };
    }
    return a;
  }

  private cmp(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value {
    const a = this.add(c, r, vars, run);
    const op = c.peek();
    if (op && op.t === 'op' && ['~', '!~', '=', '!=', '<', '>', '<=', '>='].includes(op.v)) {
      c.next();
      const b = this.add(c, r, vars, run);
      if (!run) return { k: 'bool', v: false };
      switch (op.v) {
        case '~':
          return { k: 'bool', v: matches(a, b) };
        case '!~':
          return { k: 'bool', v: !matches(a, b) };
        case '=':
          return { k: 'bool', v: equal(a, b) };
        case '!=':
          return { k: 'bool', v: !equal(a, b) };
        default: {
          // An undefined attribute compares false with anything.
          if ((a.k === 'sym' && a.v.startsWith('undefined:')) || (b.k === 'sym' && b.v.startsWith('undefined:'))) return { k: 'bool', v: false };
          if (a.k !== 'num' || b.k !== 'num') throw new Error(`line ${op.line}: ${op.v} needs numbers`);
          const v = op.v === '<' ? a.v < b.v : op.v === '>' ? a.v > b.v : op.v === '<=' ? a.v <= b.v : a.v >= b.v;
          return { k: 'bool', v };
        }
      }
    }
    return a;
  }

  private add(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value {
    let a = this.unary(c, r, vars, run);
    while (c.is('+') || c.is('-')) {
      const op = c.next().v;
      const b = this.unary(c, r, vars, run);
      if (run) {
        if (a.k !== 'num' || b.k !== 'num') throw new Error(`${op} needs numbers`);
        a = { k: 'num', v: op === '+' ? a.v + b.v : a.v - b.v };
      }
    }
    return a;
  }

  private unary(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value {
    if (c.is('!')) {
      c.next();
      const v = this.unary(c, r, vars, run);
      return run ? { k: 'bool', v: !truthy(v) } : v;
    }
    return this.primary(c, r, vars, run);
  }

  private primary(c: Cursor, r: Route, vars: Map<string, Value>, run: boolean): Value {
    const t = c.next();
    if (t.t === 'op' && t.v === '(') {
      // A pair `(a, b)` / triple, or a parenthesised expression.
      const first = this.expr(c, r, vars, run);
      if (c.is(',')) {
        const parts = [first];
        while (c.is(',')) {
          c.next();
          parts.push(this.expr(c, r, vars, run));
        }
        c.expect(')');
        return { k: 'pair', v: parts.map((p) => (p.k === 'num' ? p.v : NaN)) };
      }
      c.expect(')');
      return first;
    }
    if (t.t === 'op' && t.v === '[=') {
      const mask: (number | '*')[] = [];
      while (!c.is('=]')) {
        const x = c.next();
        mask.push(x.v === '*' ? '*' : Number(x.v));
      }
      c.next();
      return { k: 'mask', v: mask };
    }
    if (t.t === 'op' && t.v === '[') {
      const items: Value[] = [];
      while (!c.is(']')) {
        items.push(this.primary(c, r, vars, run));
        if (c.is(',')) c.next();
      }
      c.next();
      return { k: 'set', v: items };
    }
    if (t.t === 'str') return { k: 'str', v: t.v };
    if (t.t === 'num') {
      if (t.v.includes('/')) return { k: 'prefix', v: t.v };
      if (t.v.includes('.') || t.v.includes(':')) return { k: 'ip', v: t.v };
      return { k: 'num', v: Number(t.v) };
    }
    if (t.t === 'id') {
      if (t.v === 'true' || t.v === 'false') return { k: 'bool', v: t.v === 'true' };
      if (t.v === 'defined') {
        c.expect('(');
        const name = c.next().v;
        c.expect(')');
        return { k: 'bool', v: vars.has(name) || name === 'net' || r.attrs.has(name) };
      }
      if (t.v === 'net') return { k: 'prefix', v: r.net };
      if (/^RTS_/.test(t.v)) return { k: 'sym', v: t.v };
      if (vars.has(t.v)) return vars.get(t.v)!;
      const v = r.attrs.get(t.v);
      if (v !== undefined) return v;
      if (t.v === 'bgp_community' || t.v === 'bgp_large_community') return { k: 'clist', v: [] };
      if (t.v === 'bgp_path') return { k: 'path', v: [] };
      // Reading an undefined attribute: BIRD gives the type's void; comparisons with it are false.
      return run ? { k: 'sym', v: `undefined:${t.v}` } : { k: 'bool', v: false };
    }
    throw new Error(`line ${t.line}: unexpected ${JSON.stringify(t.v)} in an expression`);
  }
}

/** A locally originated static route as Calico's export filters see it. */
export function staticRoute(prefix: string): Route {
  return { net: prefix, attrs: new Map<string, Value>([['source', { k: 'sym', v: 'RTS_STATIC' }]]) };
}

/** A route learned over BGP with the given next hop, as the kernel protocol's export filter sees it. */
export function bgpRoute(prefix: string, nextHop: string): Route {
  return {
    net: prefix,
    attrs: new Map<string, Value>([
      ['source', { k: 'sym', v: 'RTS_BGP' }],
      ['bgp_next_hop', { k: 'ip', v: nextHop }],
      ['bgp_local_pref', { k: 'num', v: 100 }],
    ]),
  };
}

/** The communities a route carries after a filter: `a:b` and `a:b:c`, sorted. */
export function communitiesOf(r: Route): string[] {
  const out: string[] = [];
  for (const name of ['bgp_community', 'bgp_large_community']) {
    const v = r.attrs.get(name);
    if (v?.k === 'clist') for (const c of v.v) out.push(c.join(':'));
  }
  return out.sort();
}
