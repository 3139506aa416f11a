/**
 * The test API server (test/kubernetes/fake-apiserver.ts) in a process of its
 * own, for the agent-reconcile benchmark: as in a cluster, serving lists and
 * writing watch events costs the agent's process nothing. The parent sends
 * objects to write; the server says when it wrote them (epoch ms, comparable
 * across processes), which is when the change happened.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FakeApiServer, defaultResources } from '../test/kubernetes/fake-apiserver.js';
import { epochMs } from './clock.js';
import { serviceObjects } from './cluster-fixture.js';

type Obj = Record<string, unknown>;

type ParentMessage = { type: 'init'; cluster: Obj[]; services: number; probes: number[] } | { type: 'apply'; id: number; objects: Obj[] };

type ChildMessage = { type: 'ready'; kubeconfig: string } | { type: 'applied'; id: number; t: number; tEnd: number };

/** When the server wrote the first and the last of the objects (epoch ms). */
export interface Written {
  readonly t: number;
  readonly tEnd: number;
}

export interface ApiServerProcess {
  readonly kubeconfig: string;
  /** Writes the objects (one watch event each); resolves with when the first and the last were written. */
  apply(objects: object[]): Promise<Written>;
  stop(): Promise<void>;
}

/** Starts the server holding `cluster` and Services [0, services) with their slices, the `probes` not ready on the node. */
export async function startApiServer(cluster: object[], services: number, probes: readonly number[]): Promise<ApiServerProcess> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<number, (w: Written) => void>();
  let ready: ((kc: string) => void) | undefined;
  const kubeconfig = new Promise<string>((r) => (ready = r));
  child.on('message', (m: ChildMessage) => {
    if (m.type === 'ready') ready!(m.kubeconfig);
    else (waiting.get(m.id)!({ t: m.t, tEnd: m.tEnd }), waiting.delete(m.id));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const failed = exited.then(() => {
    throw new Error('the API server process exited');
  });
  child.send({ type: 'init', cluster: cluster as Obj[], services, probes: [...probes] } satisfies ParentMessage);
  const kc = await Promise.race([kubeconfig, failed]);
  let next = 0;
  return {
    kubeconfig: kc,
    apply: (objects) => {
      const id = next++;
      const done = new Promise<Written>((r) => waiting.set(id, r));
      child.send({ type: 'apply', id, objects: objects as Obj[] } satisfies ParentMessage);
      return Promise.race([done, failed]);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function runChild(): void {
  const server = new FakeApiServer(defaultResources({ calicoV3: true }));
  process.on('message', (m: ParentMessage) => {
    if (m.type === 'init') {
      for (const o of m.cluster) server.apply(o);
      for (const o of serviceObjects(0, m.services, new Set(m.probes))) server.apply(o as Obj);
      void (async () => {
        await server.start();
        process.send?.({ type: 'ready', kubeconfig: await server.writeKubeconfig() } satisfies ChildMessage);
      })();
      return;
    }
    const t = epochMs();
    for (const o of m.objects) server.apply(o);
    process.send?.({ type: 'applied', id: m.id, t, tEnd: epochMs() } satisfies ChildMessage);
  });
  process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
}

if (process.argv.includes('--child')) runChild();
