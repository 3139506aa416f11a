/**
 * Issue 14 §5d: `tsbgp plan/status/routes` through a pipe must arrive whole.
 * The process used to exit right after the write, cutting what was still
 * queued for a slow reader (131,072 of 927,629 bytes here), with exit code 0.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { run } from './cli-helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

it('a large plan --json through a pipe to a slow reader arrives whole, and the exit code is kept', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tsbgp-pipe-'));
  const base = join(root, 'examples/yaobank/base');
  for (const f of await readdir(base)) await copyFile(join(base, f), join(dir, f));
  const services = Array.from(
    { length: 3000 },
    (_, i) =>
      `apiVersion: v1\nkind: Service\nmetadata: { name: svc${i}, namespace: bulk }\nspec:\n  type: ClusterIP\n  clusterIP: 198.19.${Math.floor(i / 250)}.${(i % 250) + 1}\n  externalIPs: [203.0.113.${(i % 250) + 1}]\n  ports: [{ port: 80, targetPort: 80 }]\n`,
  );
  await writeFile(join(dir, 'bulk.yaml'), services.join('---\n'));
  const argv = ['plan', '--node', 'worker1', '--json', '--manifests', dir];
  const inProcess = await run(argv);
  expect(inProcess.code).toBe(0);
  const want = Buffer.byteLength(inProcess.stdout);
  expect(want).toBeGreaterThan(500_000);
  // The reader sleeps first, so the pipe (64 KiB) fills and the writer must wait for it.
  const script = `${JSON.stringify(process.execPath)} --import tsx src/agent/main.ts ${argv.map((a) => JSON.stringify(a)).join(' ')} | (sleep 1; wc -c); echo "exit \${PIPESTATUS[0]}"`;
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: root, timeout: 120_000 });
  const [bytes, exit] = stdout.trim().split('\n');
  expect(Number(bytes.trim())).toBe(want);
  expect(exit).toBe('exit 0');
}, 150_000);
