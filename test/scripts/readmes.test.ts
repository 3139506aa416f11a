/**
 * The docs are reference a reader can trust: every source file is in its
 * folder's README table (a folder without a README, such as
 * src/wire/attributes, is described by its parent's), and no document names
 * a path that exists only on the developers' machines.
 */
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

function folders(dir: string): string[] {
  return [dir, ...readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? folders(join(dir, n)) : []))];
}

/** The README that describes `dir`: its own, else the nearest parent's below `srcRoot`. */
function readmeFor(dir: string, srcRoot: string): string | undefined {
  for (let d = dir; d !== srcRoot && d.startsWith(srcRoot); d = dirname(d)) if (existsSync(join(d, 'README.md'))) return join(d, 'README.md');
  return undefined;
}

/** Source files not named in the README that describes their folder. */
function unlisted(srcRoot: string): string[] {
  const missing: string[] = [];
  for (const dir of folders(srcRoot)) {
    if (dir === srcRoot) continue; // src/index.ts: the README at the top describes it
    const files = readdirSync(dir).filter((n) => n.endsWith('.ts'));
    if (files.length === 0) continue;
    const readme = readmeFor(dir, srcRoot);
    const text = readme ? readFileSync(readme, 'utf8') : '';
    for (const f of files) if (!text.includes(f)) missing.push(relative(srcRoot, join(dir, f)));
  }
  return missing;
}

function docs(): string[] {
  const top = ['README.md', ...readdirSync(join(root, 'docs')).map((n) => `docs/${n}`)];
  const readmes = folders(join(root, 'src'))
    .map((d) => join(d, 'README.md'))
    .filter(existsSync)
    .map((p) => relative(root, p));
  return [...top, ...readmes].filter((p) => p.endsWith('.md'));
}

describe('folder READMEs and docs', () => {
  it('every source file is in the file table of its folder README', () => {
    expect(unlisted(join(root, 'src'))).toEqual([]);
  });

  it('the check finds a file no README names, and a nested folder falls to its parent README', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'tsbgp-readmes-'));
    await mkdir(join(tmp, 'layer', 'nested'), { recursive: true });
    await writeFile(join(tmp, 'layer', 'README.md'), '| `a.ts` | listed |\n| `nested/c.ts` | listed |\n');
    for (const f of ['layer/a.ts', 'layer/b.ts', 'layer/nested/c.ts', 'layer/nested/d.ts']) await writeFile(join(tmp, f), '');
    expect(unlisted(tmp).sort()).toEqual(['layer/b.ts', 'layer/nested/d.ts']);
  });

  it("no document names a path of the developers' machines", () => {
    const bad = docs().flatMap((p) =>
      readFileSync(join(root, p), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /\.\.\/shared\/|\/work\/notes|\/work\/main|\/work\/wt\/|tsbgp-heavy\.lock|\/tmp\/perf/.test(line) ? [`${p}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(bad).toEqual([]);
  });
});
