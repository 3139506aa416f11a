import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/tsbgp.js', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('bin/tsbgp.js', () => {
  it('before a build says what is missing and how to build, without a stack trace', () => {
    const root = mkdtempSync(join(tmpdir(), 'tsbgp-bin-'));
    dirs.push(root);
    mkdirSync(join(root, 'bin'));
    copyFileSync(bin, join(root, 'bin', 'tsbgp.js'));
    const r = spawnSync(process.execPath, [join(root, 'bin', 'tsbgp.js'), 'status'], { encoding: 'utf8' });
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `tsbgp: not built yet: ${root}/dist/ is missing. Run \`npm run build\` in ${root}/ (npm install does it), or run it from source: node --import tsx src/agent/main.ts\n`,
    );
    expect(r.status).toBe(1);
  });
});
