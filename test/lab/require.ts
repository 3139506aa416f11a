/**
 * Gate for tests that need the lab (root, network namespaces, real daemons).
 *
 *   const lab = requireLab(['bird', 'frr'], { binaries: ['curl'] });
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

/** What the gate looks at; tests swap it to see both outcomes on one machine. */
export interface LabProbe {
  platform: string;
  uid: number | undefined;
  findBinary(name: string): string | undefined;
  env: NodeJS.ProcessEnv;
}

export const realProbe = (): LabProbe => ({ platform: process.platform, uid: process.getuid?.(), findBinary, env: process.env });

export interface LabNeeds {
  /** Further binaries the test runs itself (curl, python3, …). */
  binaries?: readonly string[];
  probe?: LabProbe;
}

export function checkLab(kinds: readonly NodeKind[], needs: LabNeeds = {}): LabAvailability {
  const probe = needs.probe ?? realProbe();
  const reasons: string[] = [];
  if (probe.platform !== 'linux') reasons.push(`network namespaces need Linux (this is ${probe.platform})`);
  if (probe.uid !== 0) reasons.push('not running as root (network namespaces need root: run with sudo)');
  const missing = [...new Set([...binariesFor(kinds), ...(needs.binaries ?? [])])].filter((b) => !probe.findBinary(b));
  if (missing.length) reasons.push(`missing binaries: ${missing.join(', ')} (Debian: apt-get install bird2 frr gobgpd exabgp iproute2)`);
  if (reasons.length === 0 && probe.platform === process.platform && run('ip', ['netns', 'list']).status !== 0)
    reasons.push('"ip netns list" fails: no namespace support');
  return { ok: reasons.length === 0, reasons };
}

export function requireLab(kinds: readonly NodeKind[] = ['bird', 'frr', 'gobgp', 'exabgp'], needs: LabNeeds = {}): LabAvailability {
  const probe = needs.probe ?? realProbe();
  const a = checkLab(kinds, { ...needs, probe });
  if (!a.ok) {
    const msg = `lab tests need ${kinds.join(', ')}: ${a.reasons.join('; ')}`;
    if (isCi(probe.env)) throw new Error(`${msg} (CI=true, so this is a failure, not a skip)`);
    console.warn(`SKIPPING lab tests: ${msg}`);
  }
  return a;
}

export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.CI ?? '').toLowerCase();
  return v !== '' && v !== 'false' && v !== '0';
}

export function findBinary(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .concat(['/usr/sbin', '/sbin'])
        .map((d) => join(d, name));
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
