import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deadExports } from '../../scripts/dead-exports.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tsbgp-dead-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('scripts/dead-exports.ts', () => {
  it('names an export nothing else uses; a use in another module, a test or the public API keeps it; a door does not', () => {
    const root = tree({
      'src/wire/families.ts': [
        'export const used = 1;',
        'export const byTest = 2;',
        'export function dead(): number { return used; }',
        'export const onlyDoor = 3;',
        'export const inApi = 4;',
        'export interface Options { a: number }',
        'export function make(o: Options): number { return o.a; }',
        'export type Lonely = string;',
      ].join('\n'),
      'src/wire/index.ts': "export { used, onlyDoor, inApi } from './families.js';\n",
      'src/rib/rib.ts': "import { used } from '../wire/index.js';\nexport const x = used;\n",
      'src/index.ts': "export { inApi } from './wire/index.js';\n",
      'test/wire/families.test.ts': "import { byTest, x } from '../../src/wire/families.js';\n",
    });
    expect(deadExports(root)).toEqual([
      'src/wire/families.ts: dead',
      'src/wire/families.ts: onlyDoor',
      'src/wire/families.ts: make',
      'src/wire/families.ts: Lonely',
    ]);
  });
});

describe('src/', () => {
  it('exports nothing that no other module, test or the public API uses', () => {
    expect(deadExports(join(import.meta.dirname, '../..'))).toEqual([]);
  });
});
