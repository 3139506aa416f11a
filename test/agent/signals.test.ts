import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('the agent process and signals', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s: speaker.stop with graceful restart, the shutdown log line, exit 0', async (signal) => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-sig-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/agent/fixtures/run-agent.ts', 'worker1', join(dir, 'tsbgp.sock'), 'examples/yaobank/base'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let sent = false;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!sent && out.includes('ready')) (sent = true), child.kill(signal);
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(out).toContain('ready ["198.19.0.64/26"]');
    expect(out).toContain('stopped {"op":"stop","opts":{"message":"tsbgp agent shutting down","graceful":true}}');
    const lines = err.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; level: string });
    expect(lines.map((l) => l.msg)).toContain(`received ${signal}`);
    expect(lines.map((l) => l.msg)).toContain('tsbgp agent shutting down');
    expect(code).toBe(0);
  });
});
