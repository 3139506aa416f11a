/**
 * Gate for tests that need the lab (root, network namespaces, real daemons).
 *
 *   const lab = requireLab(['bird', 'frr']);
 *   describe.skipIf(!lab.ok)('…', () => { … });
 *
 * In CI (CI=true) anything missing throws, so the suite fails instead of
 * quietly skipping; elsewhere the reason is printed once and the caller skips.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { binariesFor } from './netns.js';
import { run } from './shell.js';
import type { NodeKind } from './topology.js';

export interface LabAvailability {
  ok: boolean;
  /** Why the lab cannot run here (empty when ok). */
  reasons: string[];
}

export function checkLab(kinds: readonly NodeKind[]): LabAvailability {
  const reasons: string[] = [];
  if (process.platform !== 'linux') reasons.push(`network namespaces need Linux (this is ${process.platform})`);
  if (process.getuid?.() !== 0) reasons.push('not running as root (network namespaces need root: run with sudo)');
  const missing = binariesFor(kinds).filter((b) => !findBinary(b));
  if (missing.length) reasons.push(`missing binaries: ${missing.join(', ')} (Debian: apt-get install bird2 frr gobgpd exabgp iproute2)`);
  if (reasons.length === 0 && run('ip', ['netns', 'list']).status !== 0) reasons.push('"ip netns list" fails: no namespace support');
  return { ok: reasons.length === 0, reasons };
}

export function requireLab(kinds: readonly NodeKind[] = ['bird', 'frr', 'gobgp', 'exabgp']): LabAvailability {
  const a = checkLab(kinds);
  if (!a.ok) {
    const msg = `lab tests need ${kinds.join(', ')}: ${a.reasons.join('; ')}`;
    if (isCi()) throw new Error(`${msg} (CI=true, so this is a failure, not a skip)`);
    console.warn(`SKIPPING lab tests: ${msg}`);
  }
  return a;
}

export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.CI ?? '').toLowerCase();
  return v !== '' && v !== 'false' && v !== '0';
}

function findBinary(name: string): string | undefined {
  const candidates = name.includes('/') ? [name] : (process.env.PATH ?? '').split(delimiter).concat(['/usr/sbin', '/sbin']).map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      /* next */
    }
  }
  return undefined;
}
