/**
 * Manifest mode keeps the last valid state (issue 14 §3): a file turned to
 * garbage or emptied, and a folder deleted, are faults reported and waited
 * out, never deletions; a path that appears later is picked up without a
 * restart. Real files in a temporary folder, a running agent, the fake
 * speaker; every wait is on the agent's log or on `settled()`.
 */
import { cp, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type Agent } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import type { SpeakerOptions } from '../../src/speaker/types.js';
import { FakeSpeaker } from './fake-speaker.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));
const POD_BLOCK = '198.19.0.64/26';
const SERVICE_RANGE = '198.18.0.0/16';

const running: Agent[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const a of running.splice(0)) await a.stop();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

type LogLine = Record<string, unknown>;

/** An agent on `manifests`, with a log one can wait on. */
async function start(manifests: string[]) {
  const logs: LogLine[] = [];
  const waiters: { pred: (l: LogLine) => boolean; wake: () => void }[] = [];
  let speaker: FakeSpeaker | undefined;
  const agent = await runAgent({
    node: 'worker1',
    manifests,
    control: false,
    signals: false,
    debounceMs: 20,
    logger: createLogger({
      level: 'debug',
      write: (text) => {
        const l = JSON.parse(text) as LogLine;
        logs.push(l);
        for (const w of [...waiters]) if (w.pred(l)) (waiters.splice(waiters.indexOf(w), 1), w.wake());
      },
    }),
    speakerFactory: (o: SpeakerOptions) => (speaker = new FakeSpeaker(o)),
  });
  running.push(agent);
  /** Resolves at the first log line from now on that `pred` accepts. */
  const logged = (pred: (l: LogLine) => boolean) => new Promise<void>((wake) => waiters.push({ pred, wake }));
  const routes = () => [...(speaker?.routes.keys() ?? [])].sort();
  return { agent, speaker: () => speaker, logs, logged, routes };
}

const invalid = (text: string) => (l: LogLine) => l.level === 'error' && String(l.msg).includes(text);

async function folder(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'tsbgp-faults-'));
  dirs.push(d);
  return d;
}

/** base/ (the yaobank cluster) and svc/ with the service range. */
async function cluster() {
  const dir = await folder();
  const base = join(dir, 'base');
  const svc = join(dir, 'svc');
  await cp(join(yb, 'base'), base, { recursive: true });
  await cp(join(yb, 'steps/01-service-cluster-ips.yaml'), join(svc, 'config.yaml'), { recursive: true });
  return { dir, base, svc };
}

describe('manifest mode keeps the last valid state', () => {
  it('a file replaced with plain text, or with a map that is no Kubernetes object, is an error and keeps what it defined', async () => {
    const { base, svc } = await cluster();
    const h = await start([base, svc]);
    expect(h.routes()).toEqual([SERVICE_RANGE, POD_BLOCK]);
    const peers = [...h.speaker()!.peers.keys()].sort();
    const file = join(svc, 'config.yaml');

    let seen = h.logged(invalid(file));
    await writeFile(file, 'this is not a manifest\n');
    await seen;
    await h.agent.settled();
    expect(h.routes()).toEqual([SERVICE_RANGE, POD_BLOCK]);
    expect(h.agent.status().errors).toEqual([
      expect.objectContaining({ file, message: expect.stringContaining('expected a resource (a map with apiVersion and kind), got string') }),
    ]);

    seen = h.logged(invalid('is required'));
    await writeFile(join(base, 'calico.yaml'), 'note: the router config moved\n');
    await seen;
    await h.agent.settled();
    expect(h.routes()).toEqual([SERVICE_RANGE, POD_BLOCK]);
    expect([...h.speaker()!.peers.keys()].sort()).toEqual(peers);

    // Fixed: the errors go, nothing was withdrawn meanwhile.
    await cp(join(yb, 'base', 'calico.yaml'), join(base, 'calico.yaml'));
    await cp(join(yb, 'steps/01-service-cluster-ips.yaml'), file);
    await h.agent.settled();
    expect(h.agent.status().errors).toEqual([]);
    expect(h.speaker()!.calls.filter((c) => c.op === 'withdraw' || c.op === 'removePeer')).toEqual([]);
  });

  it('a 0-byte file (or one of only comments) is a fault: its resources stay, status says why; an empty List deletes', async () => {
    const { base, svc } = await cluster();
    const h = await start([base, svc]);
    const file = join(svc, 'config.yaml');
    for (const text of ['', '# truncated\n']) {
      // Logged when it appears (the second is the same error: not logged again).
      const seen = text === '' ? h.logged(invalid('no documents')) : undefined;
      await writeFile(file, text);
      await seen;
      await h.agent.settled();
      expect(h.routes()).toEqual([SERVICE_RANGE, POD_BLOCK]);
      expect(h.agent.status().errors).toEqual([expect.objectContaining({ file, message: expect.stringContaining('no documents (empty, or only comments)') })]);
    }
    // The operator's explicit intent: an empty list.
    await writeFile(file, 'apiVersion: v1\nkind: List\nitems: []\n');
    await h.agent.settled();
    expect(h.routes()).toEqual([POD_BLOCK]);
    expect(h.agent.status().errors).toEqual([]);
  });

  it('a manifest folder deleted under a running agent keeps every route and peer, says so, and is picked up when it is created again', async () => {
    const { dir, base, svc } = await cluster();
    const h = await start([base, svc]);
    const peers = [...h.speaker()!.peers.keys()].sort();

    let seen = h.logged(invalid(`${svc}: cannot read: ENOENT`));
    await rm(svc, { recursive: true });
    await seen;
    await h.agent.settled();
    expect(h.routes()).toEqual([SERVICE_RANGE, POD_BLOCK]);
    expect(h.speaker()!.calls.filter((c) => c.op === 'withdraw' || c.op === 'removePeer' || c.op === 'stop')).toEqual([]);
    const st = h.agent.status();
    expect(st.errors).toEqual([
      expect.objectContaining({
        file: svc,
        message: expect.stringContaining('cannot read: ENOENT: keeping the 1 resource last loaded from it until it returns'),
      }),
    ]);
    expect(st.source.lastError).toContain(`${svc}: cannot read: ENOENT`);

    // The whole tree too: base/ and the folder above both gone.
    seen = h.logged(invalid(`${base}: cannot read: ENOENT`));
    await rm(dir, { recursive: true });
    await seen;
    await h.agent.settled();
    expect(h.routes()).toEqual([SERVICE_RANGE, POD_BLOCK]);
    expect([...h.speaker()!.peers.keys()].sort()).toEqual(peers);

    // Created again (by rename, as a deploy tool would), with the service range gone: picked up, by events.
    const staging = await folder();
    await cp(join(yb, 'base'), join(staging, 'base'), { recursive: true });
    await cp(join(yb, 'base', 'calico.yaml'), join(staging, 'svc', 'config.yaml'), { recursive: true });
    seen = h.logged((l) => l.msg === 'applied configuration to the speaker');
    await rename(staging, dir);
    dirs.push(dir);
    await seen;
    await h.agent.settled();
    expect(h.routes()).toEqual([POD_BLOCK]);
    expect(h.agent.status().errors).toEqual([]);
    expect(h.agent.status().source.lastError).toBeNull();
  });

  it('a --manifests path that does not exist at the start is reported, and picked up when it appears', async () => {
    const dir = await folder();
    const later = join(dir, 'not', 'yet');
    const h = await start([later]);
    expect(h.speaker()).toBeUndefined();
    expect(h.agent.status().errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ file: later, message: expect.stringContaining('cannot read: ENOENT') })]),
    );
    const staging = await folder();
    await cp(join(yb, 'base'), join(staging, 'yet'), { recursive: true });
    const seen = h.logged((l) => l.msg === 'BGP speaker started');
    await cp(join(staging, 'yet'), later, { recursive: true });
    await seen;
    await h.agent.settled();
    expect(h.routes()).toEqual([POD_BLOCK]);
    expect(h.agent.status().errors).toEqual([]);
  });
});
