/**
 * Agent idle memory: the real `tsbgp agent` process (the compiled CLI in
 * dist/, as bin/tsbgp.js runs it) on the yaobank example (3 nodes, a few
 * Services, manifest files), started fresh per run. Once its control socket
 * answers `status` with the speaker configured, it settles, then VmRSS is read
 * from /proc/PID/status a few times (median per run; median over runs).
 *
 *   node --import tsx bench/agent-idle.ts [--quick] [--runs N] [--entry LABEL=PATH]...
 *
 * --entry-flags LABEL="FLAGS" gives one entry's agent node flags of its own.
 * --entry compares builds side by side in one run (e.g. an older commit's
 * dist/src/agent/main.js built in a worktree); without it, this tree's
 * dist/ is measured (rebuilt first when a source file is newer) and the run
 * FAILS (exit 1) when the idle RSS exceeds its goal by more than 25%.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { agentEntries, statusKb } from './agent-builds.js';
import { controlRequest } from '../src/agent/control.js';
import { sleep, until } from './clock.js';
import { emit, median } from './report.js';

const quick = process.argv.includes('--quick');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : quick ? 3 : 7;
/** The goal (issue 18) and the limit the smoke run enforces: goal + 25%. */
const GOAL_MB = 64;
const LIMIT_MB = GOAL_MB * 1.25;
const SETTLE_MS = 2000;
const SAMPLES = 5;
const MANIFESTS = resolve('examples/yaobank/base');

const { entries, thisTree: guarded } = agentEntries();

interface Run {
  rssMb: number;
  hwmMb: number;
  readyMs: number;
}

async function once(entry: string, entryFlags: readonly string[], i: number): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), `tsbgp-idle-${process.pid}-`));
  const control = join(dir, 'control.sock');
  const port = 20_000 + ((process.pid * 7 + i * 13) % 30_000);
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      ...entryFlags,
      entry,
      'agent',
      '--node',
      'worker1',
      '--manifests',
      MANIFESTS,
      '--listen-port',
      String(port),
      '--control',
      control,
      '--log-level',
      'warn',
      '--drain-time',
      '0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited: string | undefined;
  child.on('exit', (code, sig) => (exited = `exited (${code ?? sig}): ${stderr.trim()}`));
  try {
    for (let configured = false; !configured;) {
      if (exited) throw new Error(`agent ${exited}`);
      if (performance.now() - t0 > 30_000)
        throw new Error(`timed out after 30 s waiting for the agent (${entry}) to answer status with its speaker configured`);
      try {
        const s = (await controlRequest(control, 'status', {}, 1000)) as { speaker: unknown; running: boolean };
        configured = s.running && s.speaker !== null;
      } catch {
        // not listening yet
      }
      if (!configured) await sleep(50);
    }
    const readyMs = performance.now() - t0;
    await sleep(SETTLE_MS);
    const rss: number[] = [];
    for (let k = 0; k < SAMPLES; k++) {
      if (exited) throw new Error(`agent ${exited}`);
      rss.push(statusKb(child.pid!, 'VmRSS'));
      await sleep(200);
    }
    return { rssMb: (median(rss) * 1024) / 1e6, hwmMb: (statusKb(child.pid!, 'VmHWM') * 1024) / 1e6, readyMs };
  } finally {
    child.kill('SIGTERM');
    await until('the agent exits', () => child.exitCode !== null || child.signalCode !== null, 10_000, 20).catch(() => child.kill('SIGKILL'));
    await rm(dir, { recursive: true, force: true });
  }
}

// Runs interleaved across entries, so that machine load hits them alike.
const results = new Map<string, Run[]>(entries.map((e) => [e.label, []]));
for (let i = 0; i < RUNS; i++) {
  for (const e of entries) results.get(e.label)!.push(await once(e.path, e.flags, i));
}

const rows = entries.map((e) => {
  const rs = results.get(e.label)!;
  return [
    e.label,
    median(rs.map((r) => r.rssMb)),
    Math.min(...rs.map((r) => r.rssMb)),
    Math.max(...rs.map((r) => r.rssMb)),
    median(rs.map((r) => r.hwmMb)),
    Math.round(median(rs.map((r) => r.readyMs))),
    GOAL_MB,
  ];
});
emit({
  suite: 'agent-idle',
  title: 'Agent memory, idle: the yaobank example from manifest files',
  columns: ['build', 'idle RSS (MB, median)', 'min', 'max', 'peak RSS, VmHWM (MB)', 'start to configured (ms)', 'goal (MB)'],
  rows,
  notes: [
    `\`tsbgp agent --node worker1 --manifests examples/yaobank/base\` (the compiled CLI, ${entries.map((e) => `${e.label}: ${[...e.flags, e.path].join(' ')}`).join('; ')}), a fresh process per run, ${RUNS} runs${entries.length > 1 ? ' interleaved across builds' : ''}. Configured = its control socket answers \`status\` with the speaker set up; then ${SETTLE_MS / 1000} s of settling and the median of ${SAMPLES} VmRSS readings from /proc/PID/status, 200 ms apart. The peers (192.0.2.x) are unreachable: no session comes up. MB = 10^6 bytes.`,
    `The smoke run fails when this tree's idle RSS exceeds the goal (${GOAL_MB} MB) by more than 25% (${LIMIT_MB} MB).`,
  ],
});

if (guarded) {
  const got = median(results.get('this tree')!.map((r) => r.rssMb));
  if (got > LIMIT_MB) {
    console.error(
      `\nFAIL agent-idle: the agent's idle RSS on yaobank is ${got.toFixed(1)} MB, over its goal of ${GOAL_MB} MB by more than 25% (limit ${LIMIT_MB} MB).`,
    );
    process.exitCode = 1;
  } else {
    console.log(`agent-idle: idle RSS ${got.toFixed(1)} MB, within ${LIMIT_MB} MB (goal ${GOAL_MB} MB + 25%)`);
  }
}
