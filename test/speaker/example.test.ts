import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('examples/two-speakers.ts', () => {
  it('runs, prints the route as received on B, and exits on its own', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/two-speakers.ts'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('A: session with 127.0.0.2 (AS 65002) is up');
    expect(out).toContain('B: received 203.0.113.0/24 from 127.0.0.1 next hop 127.0.0.1 AS path 65001 communities 65001:100 large 65001:1:2 med 10');
    expect(out.trim().endsWith('both stopped')).toBe(true);
  }, 30_000);
});
