/**
 * kubectl for the protocol and kustomize checks. In CI (CI=true) a missing
 * kubectl throws, so the suite fails instead of quietly skipping; elsewhere
 * the reason is printed once and the caller skips (as test/lab/require.ts does).
 */
import { spawnSync } from 'node:child_process';
import { findBinary, isCi } from '../lab/require.js';

export function requireKubectl(env: NodeJS.ProcessEnv = process.env, find: (name: string) => string | undefined = findBinary): string | undefined {
  const path = find('kubectl');
  const works = path !== undefined && spawnSync(path, ['version', '--client'], { timeout: 10_000 }).status === 0;
  if (works) return path;
  const why = path ? `${path} version --client fails` : 'kubectl is not on PATH (install kubectl 1.27 or later)';
  if (isCi(env))
    throw new Error(`the fake API server's protocol check and the kustomize check need kubectl: ${why} (CI=true, so this is a failure, not a skip)`);
  console.warn(`SKIPPING kubectl checks: ${why}`);
  return undefined;
}
