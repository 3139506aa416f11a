import ts from 'typescript';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { layerOf, EXCEPTIONS } from './layers.js';
const root = resolve(import.meta.dirname, '..');
const cfg = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
const program = ts.createProgram(
  cfg.fileNames.filter((f) => f.includes('/src/')),
  cfg.options,
);
const checker = program.getTypeChecker();
// additions per layer index: name -> {module, isType}
const adds = new Map<string, Map<string, { mod: string; type: boolean }>>();
const indexExports = new Map<string, Set<string>>();
function exportsOfIndex(layer: string): Set<string> {
  if (indexExports.has(layer)) return indexExports.get(layer)!;
  const f = join(root, 'src', layer, 'index.ts');
  const s = new Set<string>();
  const sf = program.getSourceFile(f);
  if (sf) {
    const sym = checker.getSymbolAtLocation(sf);
    if (sym) for (const e of checker.getExportsOfModule(sym)) s.add(e.name);
  }
  indexExports.set(layer, s);
  return s;
}
function isValue(sym: ts.Symbol): boolean {
  const t = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
  return (t.flags & ts.SymbolFlags.Value) !== 0;
}
for (const sf of program.getSourceFiles()) {
  const file = sf.fileName;
  if (!file.startsWith(join(root, 'src'))) continue;
  const rel = relative(root, file);
  const a = layerOf(rel)!;
  const edits: { start: number; end: number; text: string }[] = [];
  const groups = new Map<string, { decls: ts.ImportDeclaration[]; specs: string[] }>();
  for (const st of sf.statements) {
    const isImp = ts.isImportDeclaration(st);
    const isExp = ts.isExportDeclaration(st) && !!st.moduleSpecifier;
    if (!isImp && !isExp) continue;
    const ms = (st as any).moduleSpecifier as ts.StringLiteral;
    if (!ms.text.startsWith('.')) continue;
    const to = relative(root, resolve(dirname(file), ms.text)).replace(/\.js$/, '.ts');
    const b = layerOf(to);
    if (!b || b === a || to === `src/${b}/index.ts` || EXCEPTIONS[`${rel} -> ${to}`]) continue;
    const mod = './' + relative(join(root, 'src', b), join(root, to)).replace(/\.ts$/, '.js');
    const door = relative(dirname(file), join(root, 'src', b, 'index.js'));
    const doorSpec = door.startsWith('.') ? door : './' + door;
    const need = (name: string, type: boolean) => {
      if (exportsOfIndex(b).has(name)) return;
      if (!adds.has(b)) adds.set(b, new Map());
      const m = adds.get(b)!;
      if (!m.has(name)) m.set(name, { mod, type });
      else if (!type) m.get(name)!.type = false;
    };
    if (isImp) {
      const d = st as ts.ImportDeclaration;
      const c = d.importClause!;
      if (!c || c.name || !c.namedBindings || !ts.isNamedImports(c.namedBindings)) {
        console.error('MANUAL', rel, d.getText());
        continue;
      }
      const specs: string[] = [];
      for (const el of c.namedBindings.elements) {
        const orig = (el.propertyName ?? el.name).text;
        const sym = checker.getSymbolAtLocation(el.name)!;
        const type = c.isTypeOnly || el.isTypeOnly || !isValue(sym);
        need(orig, !isValue(sym));
        specs.push(`${c.isTypeOnly || el.isTypeOnly ? 'type ' : ''}${el.propertyName ? orig + ' as ' + el.name.text : orig}`);
      }
      const g = groups.get(doorSpec) ?? { decls: [], specs: [] };
      g.decls.push(d);
      g.specs.push(...specs);
      groups.set(doorSpec, g);
    } else {
      const d = st as ts.ExportDeclaration;
      if (!d.exportClause) {
        // export * / export type *
        const tsf = program.getSourceFile(join(root, to))!;
        const msym = checker.getSymbolAtLocation(tsf)!;
        const names = checker.getExportsOfModule(msym).map((e) => {
          need(e.name, !isValue(e));
          return e.name;
        });
        edits.push({ start: d.getStart(), end: d.getEnd(), text: `export ${d.isTypeOnly ? 'type ' : ''}{ ${names.join(', ')} } from '${doorSpec}';` });
      } else if (ts.isNamedExports(d.exportClause)) {
        for (const el of d.exportClause.elements) {
          const orig = (el.propertyName ?? el.name).text;
          const sym = checker.getExportSpecifierLocalTargetSymbol(el) ?? checker.getSymbolAtLocation(el.name)!;
          need(orig, !isValue(sym));
        }
        edits.push({ start: ms.getStart(), end: ms.getEnd(), text: `'${doorSpec}'` });
      } else console.error('MANUAL', rel, d.getText());
    }
  }
  for (const [doorSpec, g] of groups) {
    const uniq = [...new Set(g.specs)];
    const allType = uniq.every((s) => s.startsWith('type '));
    const body = allType
      ? `import type { ${uniq.map((s) => s.slice(5)).join(', ')} } from '${doorSpec}';`
      : `import { ${uniq.join(', ')} } from '${doorSpec}';`;
    g.decls.forEach((d, i) => {
      let end = d.getEnd();
      if (i > 0 && sf.text[end] === '\n') end++;
      edits.push({ start: d.getStart(), end, text: i === 0 ? body : '' });
    });
  }
  if (edits.length === 0) continue;
  let text = sf.text;
  for (const e of edits.sort((x, y) => y.start - x.start)) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  writeFileSync(file, text);
}
for (const [b, m] of adds) {
  const f = join(root, 'src', b, 'index.ts');
  const byMod = new Map<string, { v: string[]; t: string[] }>();
  for (const [name, { mod, type }] of m) {
    const e = byMod.get(mod) ?? { v: [], t: [] };
    (type ? e.t : e.v).push(name);
    byMod.set(mod, e);
  }
  let lines = '';
  for (const [mod, { v, t }] of [...byMod].sort()) {
    const parts = [...v.sort(), ...t.sort().map((n) => 'type ' + n)];
    lines += `export { ${parts.join(', ')} } from '${mod}';\n`;
  }
  const existing = existsSync(f)
    ? readFileSync(f, 'utf8')
    : `/** The ${b} layer's door: what other layers import from it (scripts/layers.ts keeps imports to this file). */\n`;
  writeFileSync(f, existing + lines);
  console.log('door', b, m.size);
}
