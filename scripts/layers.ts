/**
 * The layer check (docs: /DESIGN.md "Layers", src/README files): reads every
 * import in `src/` with the TypeScript compiler API and names each one that
 *
 * - runs up a layer (a layer imports only the layers above it in `LAYERS`);
 * - reaches native code from a layer that is not a shell over it (`NATIVE_USERS`);
 * - reaches into another layer's insides instead of its door, `src/<layer>/index.ts`
 *   (type-only imports count too: a type names a layer's insides as surely
 *   as a value does, and moving a type file then breaks its importers);
 * - goes through its own layer's door (a cycle waiting to happen);
 * - leaves `src/`;
 *
 * and every cycle of runtime imports (static value imports; `import type`
 * and `import()` do not run at load time, so they cannot form one), and
 * every line in `src/` longer than `MAX_LINE` characters (prettier keeps code
 * to that width but cannot break a long string or comment: those are broken
 * by hand).
 *
 * Run it: `node --import tsx scripts/layers.ts` (exit 1 on a finding). The
 * unit suite runs it too (test/scripts/layers.test.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** DESIGN.md's order: each layer may import only the layers before it. */
export const LAYERS = ['native', 'net', 'wire', 'session', 'rib', 'policy', 'bfd', 'kernel', 'speaker', 'kubernetes', 'agent'] as const;
/** The layers whose shells may call native code. */
export const NATIVE_USERS: readonly string[] = ['session', 'bfd', 'kernel'];
/** `src/index.ts`, the public library API: above every layer, and through their doors like any other importer. */
export const API = 'api';

/** One import: files are paths relative to the repository root (`src/wire/open.ts`). */
export interface Edge {
  from: string;
  to: string;
  /** `import type`, `export type`, an `import('…')` type, or every name marked `type`: erased at run time. */
  typeOnly: boolean;
  /** `await import('…')`: loaded when called, not when the importer loads. */
  dynamic: boolean;
}

/** Known exceptions, each with the reason and who removes it. Keep it short. */
export const EXCEPTIONS: Readonly<Record<string, string>> = {};

/** The layer a file belongs to: `src/<layer>/…` (or `src/<layer>.ts`), `api` for src/index.ts, undefined outside src/. */
export function layerOf(file: string): string | undefined {
  const parts = file.split('/');
  if (parts[0] !== 'src') return undefined;
  if (parts.length === 2) return parts[1] === 'index.ts' ? API : parts[1]!.replace(/\.ts$/, '');
  return parts[1];
}

function rank(layer: string): number {
  return layer === API ? LAYERS.length : (LAYERS as readonly string[]).indexOf(layer);
}

/** What is wrong with each edge, one line per finding (empty when the graph keeps the layers). */
export function layerViolations(edges: readonly Edge[], exceptions: Readonly<Record<string, string>> = EXCEPTIONS): string[] {
  const out: string[] = [];
  for (const e of edges) {
    if (exceptions[`${e.from} -> ${e.to}`] !== undefined) continue;
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    const what = `${e.from} imports ${e.to}`;
    if (a === undefined) continue;
    if (b === undefined) {
      out.push(`${what}: outside src/`);
      continue;
    }
    if (rank(a) < 0) out.push(`${what}: ${a} is not a layer in DESIGN.md`);
    if (rank(b) < 0) out.push(`${what}: ${b} is not a layer in DESIGN.md`);
    if (rank(a) < 0 || rank(b) < 0) continue;
    if (a === b) {
      if (e.to === `src/${b}/index.ts` && e.from !== e.to) out.push(`${what}: inside its own layer, import the module, not the door`);
      continue;
    }
    if (b === API) {
      out.push(`${what}: src/index.ts is the public API, not a door for the layers`);
      continue;
    }
    if (rank(b) > rank(a)) out.push(`${what}: runs up a layer (${a} may not import ${b})`);
    else if (b === 'native' && !NATIVE_USERS.includes(a)) out.push(`${what}: native code is for the shells of ${NATIVE_USERS.join(', ')}`);
    if (e.to !== `src/${b}/index.ts`) out.push(`${what}: reaches into ${b}; import src/${b}/index.ts`);
  }
  return out;
}

/** Cycles among runtime imports (static, not type-only), each as the files around it, smallest first; Tarjan's SCC. */
export function runtimeCycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (e.typeOnly || e.dynamic) continue;
    if (!next.has(e.from)) next.set(e.from, []);
    next.get(e.from)!.push(e.to);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    on.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        on.delete(w);
        scc.push(w);
        if (w === v) break;
      }
      if (scc.length > 1 || (next.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) strong(v);
  return out.sort((x, y) => x.length - y.length || x[0]!.localeCompare(y[0]!));
}

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The imports of one file's text (relative specifiers only; packages and node: builtins are not layers). */
export function importsOf(file: string, text: string, root: string): Edge[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const from = relative(root, file).split(sep).join('/');
  const out: Edge[] = [];
  const add = (spec: string, typeOnly: boolean, dynamic: boolean): void => {
    if (!spec.startsWith('.')) return;
    const to = relative(root, resolve(dirname(file), spec))
      .split(sep)
      .join('/')
      .replace(/\.js$/, '.ts');
    out.push({ from, to, typeOnly, dynamic });
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      const c = n.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      // `import { type A, type B }` is erased like `import type`; a bare `import './x.js'` runs.
      const allTypes =
        c !== undefined && (c.isTypeOnly || (c.name === undefined && named !== undefined && named.length > 0 && named.every((s) => s.isTypeOnly)));
      add(n.moduleSpecifier.text, allTypes, false);
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      const named = n.exportClause && ts.isNamedExports(n.exportClause) ? n.exportClause.elements : undefined;
      add(n.moduleSpecifier.text, n.isTypeOnly || (named !== undefined && named.length > 0 && named.every((s) => s.isTypeOnly)), false);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) {
      add(n.arguments[0].text, false, true);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      add(n.argument.literal.text, true, false);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The widest line allowed in src/: prettier's printWidth (.prettierrc). */
export const MAX_LINE = 160;

/** The lines of one file's text longer than `max` characters (code points), each as `file:line: N characters`. */
export function longLines(file: string, text: string, max = MAX_LINE): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    const n = [...line.replace(/\r$/, '')].length;
    if (n > max) out.push(`${file}:${i + 1}: ${n} characters (at most ${max})`);
  });
  return out;
}

/** Every line over `MAX_LINE` in the files under `root/src`. */
export function srcLongLines(root: string): string[] {
  return tsFiles(join(root, 'src')).flatMap((f) => longLines(relative(root, f).split(sep).join('/'), readFileSync(f, 'utf8')));
}

/** Every import of every file under `root/src`. */
export function importGraph(root: string): Edge[] {
  return tsFiles(join(root, 'src')).flatMap((f) => importsOf(f, readFileSync(f, 'utf8'), root));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const root = join(import.meta.dirname, '..');
  const edges = importGraph(root);
  const bad = layerViolations(edges);
  const cycles = runtimeCycles(edges);
  const long = srcLongLines(root);
  for (const line of bad) console.log(line);
  for (const c of cycles) console.log(`runtime import cycle: ${c.join(' ↔ ')}`);
  for (const line of long) console.log(line);
  console.log(`${edges.length} imports, ${bad.length} layer findings, ${cycles.length} runtime cycles, ${long.length} lines over ${MAX_LINE} characters`);
  process.exit(bad.length + cycles.length + long.length > 0 ? 1 : 0);
}
