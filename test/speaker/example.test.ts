import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs an example in its own process: its output, stderr and exit code. */
async function runExample(file: string): Promise<{ out: string; err: string; code: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { out, err, code };
}

describe('examples/two-speakers.ts', () => {
  it('runs, prints the route as received on B, and exits on its own', async () => {
    const { out, err, code } = await runExample('examples/two-speakers.ts');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('A: session with 127.0.0.2 (AS 65002) is up');
    expect(out).toContain('B: received 203.0.113.0/24 from 127.0.0.1 next hop 127.0.0.1 AS path 65001 communities 65001:100 large 65001:1:2 med 10');
    expect(out.trim().endsWith('both stopped')).toBe(true);
  }, 30_000);
});

describe('examples/policies.ts', () => {
  it('filters on import, modifies on export, and explains what C is sent', async () => {
    const { out, err, code } = await runExample('examples/policies.ts');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('B: from A 3 received, 1 accepted');
    // Only the customer route reaches C: prepended twice, MED set, B's community added on import.
    expect(out.split('\n').filter((l) => l.startsWith('C: '))).toEqual([
      'C: 203.0.113.0/25 AS path 65002 65002 65002 65001 med 50 communities 65001:1 65002:100',
    ]);
    expect(out).toContain('B: candidate from 127.0.0.1: best (only candidate)');
    expect(out).toContain('B: to 127.0.0.3: sent: policy "to-c" statement "customers-only" accepted the route');
    expect(out).toContain('✓ prefix in set "customers": 203.0.113.0/25 is in prefix set "customers"');
    // The export policy sees the path as learned; the session puts B's own AS in front afterwards (as BIRD's filters).
    expect(out).toContain('~ AS path "65001" → "65002 65002 65001"');
    expect(out.trim().endsWith('all stopped')).toBe(true);
  }, 30_000);
});
