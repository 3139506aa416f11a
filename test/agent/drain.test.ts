/**
 * The agent's RFC 8326 drain: `tsbgp drain` over the control socket, the
 * cordon trigger, status, metrics and the Event. Signals are in
 * signals.test.ts (a real process).
 */
import { cp, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent, type StatusJson } from '../../src/agent/agent.js';
import { controlRequest } from '../../src/agent/control.js';
import { DEFAULT_DRAIN_SECONDS, drainedMessage, drainStatusJson, onSignalAction, remainingSeconds, startDrain } from '../../src/agent/drain.js';
import { createLogger } from '../../src/agent/log.js';
import { AgentMetrics } from '../../src/agent/metrics.js';
import type { DesiredEvent, EventSink } from '../../src/kubernetes/events.js';
import type { SpeakerOptions } from '../../src/speaker/types.js';
import { run } from './cli-helpers.js';
import { FakeSpeaker } from './fake-speaker.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));

describe('drain state (pure)', () => {
  it('counts down, and says what follows', () => {
    const d = startDrain('stop', 'SIGTERM', 1_000, 30);
    expect(remainingSeconds(d, 1_000)).toBe(30);
    expect(remainingSeconds(d, 30_500)).toBe(1);
    expect(remainingSeconds(d, 99_000)).toBe(0);
    expect(drainStatusJson(d, 11_000)).toEqual({
      kind: 'stop',
      reason: 'SIGTERM',
      since: new Date(1_000).toISOString(),
      remainingSeconds: 20,
      then: 'close sessions and exit',
    });
    expect(drainStatusJson(startDrain('hold', 'tsbgp drain', 0, 5), 0).then).toBe('hold until cancelled');
    expect(() => startDrain('stop', 'x', 0, -1)).toThrow(/drain time must be a non-negative number of seconds, got -1/);
    expect(DEFAULT_DRAIN_SECONDS).toBe(30);
  });

  it('the Cease message says why and fits RFC 9003 (255 bytes)', () => {
    const d = startDrain('stop', 'SIGTERM', 0, 30);
    expect(drainedMessage(d, 30_000)).toBe('tsbgp: node leaving (SIGTERM); routes drained with GRACEFUL_SHUTDOWN for 30 s');
    const long = startDrain('stop', 'é'.repeat(300), 0, 30);
    const m = drainedMessage(long, 0);
    expect(new TextEncoder().encode(m).length).toBeLessThanOrEqual(255);
    expect(m.startsWith('tsbgp: node leaving (éé')).toBe(true);
  });

  it('signals: SIGTERM drains, a second one or SIGINT stops at once, SIGTERM finishes a hold', () => {
    expect(onSignalAction('SIGTERM', undefined, 30)).toBe('drain');
    expect(onSignalAction('SIGTERM', undefined, 0)).toBe('stop-now');
    expect(onSignalAction('SIGINT', undefined, 30)).toBe('stop-now');
    expect(onSignalAction('SIGTERM', startDrain('stop', 'SIGTERM', 0, 30), 30)).toBe('stop-now');
    expect(onSignalAction('SIGINT', startDrain('hold', 'tsbgp drain', 0, 30), 30)).toBe('stop-now');
    expect(onSignalAction('SIGTERM', startDrain('hold', 'tsbgp drain', 0, 30), 30)).toBe('finish');
  });
});

class RecordingSink implements EventSink {
  readonly recorded: DesiredEvent[] = [];
  async record(events: readonly DesiredEvent[]): Promise<void> {
    this.recorded.push(...events);
  }
  async flush(): Promise<void> {}
}

const running: Agent[] = [];
afterEach(async () => {
  for (const a of running.splice(0)) await a.stop();
});

async function start(extra: { drainOnCordon?: boolean; drainTime?: number } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'tsbgp-drain-'));
  const base = join(dir, 'base');
  const overlay = join(dir, 'overlay');
  await cp(join(yb, 'base'), base, { recursive: true });
  await mkdir(overlay);
  let speaker: FakeSpeaker | undefined;
  const control = join(dir, 'tsbgp.sock');
  const events = new RecordingSink();
  const metrics = new AgentMetrics({ processMetrics: false });
  const agent = await runAgent({
    node: 'worker1',
    manifests: [base, overlay],
    control,
    signals: false,
    debounceMs: 20,
    events,
    metrics,
    ...extra,
    logger: createLogger({ level: 'error', write: () => undefined }),
    speakerFactory: (opts: SpeakerOptions) => (speaker = new FakeSpeaker(opts)),
  });
  running.push(agent);
  return { agent, speaker: () => speaker!, control, events, metrics, base };
}

async function until(what: string, fn: () => boolean | Promise<boolean>): Promise<void> {
  const t0 = Date.now();
  while (!(await fn())) {
    if (Date.now() - t0 > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('tsbgp drain (control socket)', () => {
  it('drains and holds, shows it in status, metrics and an Event; --cancel undoes it', async () => {
    const h = await start();
    const s = h.speaker();
    const r = (await controlRequest(h.control, 'drain')) as { draining: { kind: string; reason: string; remainingSeconds: number } };
    expect(r.draining).toMatchObject({ kind: 'hold', reason: 'tsbgp drain', remainingSeconds: 30 });
    expect(s.draining).toBe(true);
    const st = (await controlRequest(h.control, 'status')) as StatusJson;
    expect(st.draining).toMatchObject({ kind: 'hold', then: 'hold until cancelled' });
    const text = await h.metrics.registry.metrics();
    expect(text).toMatch(/^tsbgp_draining 1$/m);
    expect(text).toMatch(/^tsbgp_drain_remaining_seconds (29|30)$/m);
    expect(h.events.recorded.map((e) => [e.reason, e.involved.name])).toEqual([['Draining', 'worker1']]);
    expect(h.events.recorded[0].message).toMatch(/GRACEFUL_SHUTDOWN \(tsbgp drain\); sessions stay up/);
    // The sessions are not touched.
    expect(s.calls.filter((c) => c.op === 'removePeer' || c.op === 'stop')).toEqual([]);

    const c = (await controlRequest(h.control, 'drain', { cancel: true })) as { draining: null };
    expect(c.draining).toBeNull();
    expect(s.draining).toBe(false);
    expect(((await controlRequest(h.control, 'status')) as StatusJson).draining).toBeUndefined();
    expect(await h.metrics.registry.metrics()).toMatch(/^tsbgp_draining 0$/m);
    await expect(controlRequest(h.control, 'drain', { cancel: 'yes' })).rejects.toMatchObject({ code: 'bad-params' });
  });

  it('the CLI prints the drain in force', async () => {
    const h = await start();
    const r = await run(['drain', '--control', h.control]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^draining \(tsbgp drain\) since \S+: 30 s of the drain time left; then hold until cancelled$/m);
    const j = await run(['drain', '--cancel', '--json', '--control', h.control]);
    expect(JSON.parse(j.stdout)).toEqual({ draining: null });
  });

  it('a drain holds while the node is cordoned (--drain-on-cordon), and ends when uncordoned', async () => {
    const h = await start({ drainOnCordon: true });
    const s = h.speaker();
    const nodes = join(h.base, 'nodes.yaml');
    const original = await readFile(nodes, 'utf8');
    await writeFile(nodes, original.replace('spec:\n  podCIDRs: [10.244.1.0/24]', 'spec:\n  unschedulable: true\n  podCIDRs: [10.244.1.0/24]'));
    await until('drained on cordon', () => s.draining);
    expect(h.agent.status().draining).toMatchObject({ kind: 'hold', reason: 'node cordoned' });
    await writeFile(nodes, original);
    await until('undrained', () => !s.draining);
    expect(s.calls.filter((c) => c.op === 'drain' || c.op === 'undrain').map((c) => c.op)).toEqual(['drain', 'undrain']);
  });

  it('without the flag a cordon drains only with the tsbgp.io/drain-on-cordon annotation', async () => {
    const h = await start();
    const s = h.speaker();
    const nodes = join(h.base, 'nodes.yaml');
    const original = await readFile(nodes, 'utf8');
    await writeFile(nodes, original.replace('spec:\n  podCIDRs: [10.244.1.0/24]', 'spec:\n  unschedulable: true\n  podCIDRs: [10.244.1.0/24]'));
    await until('cordon seen', () => h.agent.plan() !== undefined && s.calls.length > 0);
    await h.agent.settled();
    expect(s.draining).toBe(false);
    await writeFile(
      nodes,
      original
        .replace('  name: worker1\n', "  name: worker1\n  annotations:\n    tsbgp.io/drain-on-cordon: 'true'\n")
        .replace('spec:\n  podCIDRs: [10.244.1.0/24]', 'spec:\n  unschedulable: true\n  podCIDRs: [10.244.1.0/24]'),
    );
    await until('drained by annotation', () => s.draining);
  });
});
