import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  out: string;
  msgs: string[];
  code: number | null;
}

/**
 * Runs the agent (fake speaker) in a child with `drainTime`; sends `first`
 * once it is ready, and `second` (if any) once the drain has started.
 */
async function runWith(drainTime: number, first: NodeJS.Signals, second?: NodeJS.Signals, env: Record<string, string> = {}): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), 'tsbgp-sig-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/agent/fixtures/run-agent.ts', 'worker1', join(dir, 'tsbgp.sock'), 'examples/yaobank/base'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TSBGP_TEST_DRAIN_TIME: String(drainTime), ...env },
  });
  let out = '';
  let err = '';
  let sentFirst = false;
  let sentSecond = false;
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    if (!sentFirst && out.includes('ready')) ((sentFirst = true), child.kill(first));
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
    if (second && !sentSecond && err.includes('draining before shutdown')) ((sentSecond = true), child.kill(second));
  });
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  const msgs = err
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { out, msgs, code };
}

describe('the agent process and signals', () => {
  it.each([
    ['SIGTERM', 0],
    ['SIGINT', 30],
  ] as const)('%s (drain time %i): speaker.stop with graceful restart at once, the shutdown log line, exit 0', async (signal, drainTime) => {
    const r = await runWith(drainTime, signal);
    expect(r.out).toContain('ready ["198.19.0.64/26"]');
    expect(r.out).toContain('stopped {"op":"stop","opts":{"message":"tsbgp agent shutting down","graceful":true}}');
    expect(r.out).not.toContain('"drain"');
    expect(r.msgs).toContain(`received ${signal}`);
    expect(r.msgs).toContain('tsbgp agent shutting down');
    expect(r.code).toBe(0);
  });

  it('SIGTERM drains (RFC 8326) for the drain time, then closes with Cease and a message, exit 0', async () => {
    const r = await runWith(1, 'SIGTERM');
    expect(r.out).toMatch(/calls \[.*"drain","stop"\]/);
    const stop = JSON.parse(/stopped (.*)/.exec(r.out)![1]) as { opts: { message: string; graceful?: boolean } };
    expect(stop.opts.graceful).toBeUndefined();
    expect(stop.opts.message).toMatch(/^tsbgp: node leaving \(SIGTERM\); routes drained with GRACEFUL_SHUTDOWN for [12] s$/);
    expect(r.msgs).toContain('draining before shutdown (RFC 8326 graceful shutdown)');
    expect(r.code).toBe(0);
  });

  it('--drain-close keep-stale: the Cease after the drain keeps the routes stale at the peers (graceful), with the message', async () => {
    const r = await runWith(1, 'SIGTERM', undefined, { TSBGP_TEST_DRAIN_CLOSE: 'keep-stale' });
    expect(r.out).toMatch(/calls \[.*"drain","stop"\]/);
    const stop = JSON.parse(/stopped (.*)/.exec(r.out)![1]) as { opts: { message: string; graceful?: boolean } };
    expect(stop.opts.graceful).toBe(true);
    expect(stop.opts.message).toMatch(/^tsbgp: node leaving \(SIGTERM\); routes drained with GRACEFUL_SHUTDOWN for [12] s$/);
    expect(r.code).toBe(0);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('a %s during the drain stops at once (drain time 600 s)', async (second) => {
    const r = await runWith(600, 'SIGTERM', second);
    const stop = JSON.parse(/stopped (.*)/.exec(r.out)![1]) as { opts: { message: string } };
    expect(stop.opts.message).toMatch(/^tsbgp: node leaving \(SIGTERM\); routes drained with GRACEFUL_SHUTDOWN for \d+ s$/);
    expect(r.msgs.filter((m) => m.startsWith('received '))).toEqual(['received SIGTERM', `received ${second}`]);
    expect(r.code).toBe(0);
  });
});
