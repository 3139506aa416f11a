/**
 * Gives each test run its own temporary folder (TMPDIR, inherited by the
 * workers and every child they start) and removes it when the run ends, so
 * that the temporary files tests make do not pile up in /tmp. The folder is
 * 0755: a child that runs as another user can still reach what a test makes
 * for it there (each mkdtemp folder inside stays 0700, as in /tmp).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const before = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), 'tsbgp-test-'));
  chmodSync(dir, 0o755);
  process.env.TMPDIR = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  };
}
