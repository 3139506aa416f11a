/**
 * Exported symbols that nothing uses outside their own file: not imported
 * by another module of src/, test/, bench/, examples/ or scripts/, and not
 * part of the public API (src/index.ts). A layer's door (src/<layer>/index.ts)
 * re-exporting a name is not a use by itself. Matching is by name (whole
 * word), so a name used elsewhere for something else keeps its export: the
 * list errs on the side of keeping. A type named by another exported
 * declaration of its file (an options interface, an event map) is part of
 * that declaration's signature and is kept.
 *
 * Run it: `node --import tsx scripts/dead-exports.ts` (exit 1 when it finds any).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (/\.(m?ts|js)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/**
 * Names a file exports by declaration (`export function f`, `export const a, b`,
 * `export class`, `export interface`, `export type`, `export enum`), except
 * types named by another of its exported declarations.
 */
export function exportedNames(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const exported = sf.statements.filter((st) => ts.canHaveModifiers(st) && ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword));
  const out: string[] = [];
  for (const st of exported) {
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) out.push(d.name.text);
    } else if ((ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) && st.name) {
      const word = new RegExp(`\\b${st.name.text}\\b`);
      if (!exported.some((o) => o !== st && word.test(o.getText()))) out.push(st.name.text);
    } else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st)) && st.name) {
      out.push(st.name.text);
    }
  }
  return out;
}

/** `file: name` for every export nothing else uses. */
export function deadExports(root: string): string[] {
  const src = files(join(root, 'src'));
  const all = ['src', 'test', 'bench', 'examples', 'scripts'].flatMap((d) => {
    try {
      return files(join(root, d));
    } catch {
      return [];
    }
  });
  const rel = (f: string) => relative(root, f).split(sep).join('/');
  const isDoor = (f: string) => /^src\/[^/]+\/index\.ts$/.test(rel(f));
  const texts = new Map(all.map((f) => [f, readFileSync(f, 'utf8')]));
  const out: string[] = [];
  for (const f of src) {
    if (isDoor(f) || rel(f) === 'src/index.ts') continue;
    for (const name of exportedNames(f, texts.get(f)!)) {
      const word = new RegExp(`\\b${name}\\b`);
      const used = all.some((g) => g !== f && !isDoor(g) && word.test(texts.get(g)!));
      if (!used) out.push(`${rel(f)}: ${name}`);
    }
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dead = deadExports(join(import.meta.dirname, '..'));
  for (const line of dead) console.log(line);
  console.log(`${dead.length} exports used nowhere outside their file`);
  process.exit(dead.length > 0 ? 1 : 0);
}
