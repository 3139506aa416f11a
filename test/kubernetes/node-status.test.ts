import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { calicoNodeStatusResource, defaultResources, FakeApiServer } from './fake-apiserver.js';
import { requireKubectl } from './kubectl.js';
import { KubeClient, parseKubeconfig } from '../../src/agent/sources/kube-client.js';
import { NodeStatusReporter } from '../../src/agent/sources/node-status-reporter.js';
import type { NodeStatusInput } from '../../src/agent/node-status.js';
import { Prefix } from '../../src/net/index.js';

const run = promisify(execFile);
const kubectl = requireKubectl();
const API = 'crd.projectcalico.org/v1';
const PATH = `/apis/${API}/caliconodestatuses`;

let server: FakeApiServer | undefined;
let reporter: NodeStatusReporter | undefined;
afterEach(async () => {
  reporter?.close();
  reporter = undefined;
  await server?.stop();
  server = undefined;
});

function ask(name: string, node: string, classes: string[], updatePeriodSeconds?: number) {
  return {
    apiVersion: API,
    kind: 'CalicoNodeStatus',
    metadata: { name },
    spec: { node, classes, ...(updatePeriodSeconds !== undefined ? { updatePeriodSeconds } : {}) },
  };
}

function agentState(): { state: NodeStatusInput } {
  return {
    state: {
      running: true,
      version: 'tsbgp 9.9.9',
      routerId: '192.0.2.1',
      startedAt: new Date('2026-03-01T10:00:00Z'),
      sessions: [{ address: '192.0.2.2', state: 'Established', since: new Date('2026-03-01T10:00:03Z') }],
      peerTypes: new Map([['192.0.2.2', 'node-to-node mesh']]),
      received: [],
      originated: [Prefix.parse('198.18.0.0/26')],
    },
  };
}

async function setup(reports: { name: string; wrote: boolean }[], errors: string[] = [], retryMs?: number) {
  server = new FakeApiServer([...defaultResources(), calicoNodeStatusResource()]);
  await server.start();
  const file = await server.writeKubeconfig();
  const client = new KubeClient(parseKubeconfig(readFileSync(file, 'utf8'), file));
  const holder = agentState();
  reporter = new NodeStatusReporter({
    client,
    node: 'n1',
    onReport: (name, wrote) => reports.push({ name, wrote }),
    onError: (e) => errors.push(e.message),
    watchTimeoutSeconds: 30,
    retryMs,
  });
  return { holder, file };
}

const patches = () => server!.requests.filter((r) => r.method === 'PATCH');
const stored = (name: string) => server!.get(API, 'CalicoNodeStatus', name) as Record<string, any>;

describe('CalicoNodeStatus against the fake API server', () => {
  it("answers this node's requests only, by a merge patch of the status subresource, leaving the spec alone", async () => {
    const reports: { name: string; wrote: boolean }[] = [];
    const { holder } = await setup(reports);
    server!.apply(ask('mine', 'n1', ['Agent', 'BGP']));
    server!.apply(ask('theirs', 'n2', ['Agent', 'BGP']));
    await reporter!.start(() => holder.state);
    await FakeApiServer.until(() => reports.some((r) => r.name === 'mine' && r.wrote), 10_000, 'the status of "mine"');
    const mine = stored('mine');
    expect(mine.spec).toEqual({ node: 'n1', classes: ['Agent', 'BGP'] });
    expect(mine.status.agent.birdV4).toEqual({ state: 'Ready', version: 'tsbgp 9.9.9', routerID: '192.0.2.1', lastBootTime: '2026-03-01 10:00:00' });
    expect(mine.status.bgp).toEqual({
      numberEstablishedV4: 1,
      numberNotEstablishedV4: 0,
      numberEstablishedV6: 0,
      numberNotEstablishedV6: 0,
      peersV4: [{ peerIP: '192.0.2.2', type: 'NodeMesh', state: 'Established', since: '2026-03-01 10:00:03' }],
      // an empty list is written as null, which a merge patch turns into "absent" (as Go's omitempty leaves it)
    });
    expect('peersV6' in mine.status.bgp).toBe(false);
    expect(mine.status.routes).toBeUndefined();
    expect(Date.parse(mine.status.lastUpdated)).not.toBeNaN();
    expect(stored('theirs').status).toBeUndefined();
    expect(patches().map((p) => [p.path, p.contentType])).toEqual([[`${PATH}/mine/status`, 'application/merge-patch+json']]);
    expect(reporter!.names()).toEqual(['mine']);
  });

  it('refreshes at most once per period and only when something changed; a changed spec is answered at once', async () => {
    const reports: { name: string; wrote: boolean }[] = [];
    const { holder } = await setup(reports);
    server!.apply(ask('mine', 'n1', ['BGP'], 1));
    await reporter!.start(() => holder.state);
    await FakeApiServer.until(() => reports.length >= 1, 10_000, 'the first report');
    const firstAt = Date.now();
    // Nothing changed: the next period's report writes nothing.
    await FakeApiServer.until(() => reports.length >= 2, 10_000, 'the second report');
    expect(reports.map((r) => r.wrote)).toEqual([true, false]);
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(900);
    expect(patches()).toHaveLength(1);
    // The session goes down: the next period writes it.
    holder.state = { ...holder.state, sessions: [{ address: '192.0.2.2', state: 'Active', since: new Date('2026-03-01T10:05:00Z') }] };
    await FakeApiServer.until(() => reports.some((r, i) => i >= 2 && r.wrote), 10_000, 'a report of the change');
    expect(stored('mine').status.bgp.peersV4[0]).toMatchObject({ state: 'Active', since: '2026-03-01 10:05:00' });
    expect(stored('mine').status.bgp.numberNotEstablishedV4).toBe(1);
    // A new class: answered without waiting for the period (the period is now a day).
    const before = reports.length;
    server!.apply({ ...ask('mine', 'n1', ['BGP', 'Routes'], 86_400), status: stored('mine').status });
    await FakeApiServer.until(() => reports.length > before && reports[reports.length - 1].wrote, 10_000, 'the Routes class');
    expect(stored('mine').status.routes.routesV4).toEqual([
      { type: 'FIB', destination: '198.18.0.0/26', gateway: 'N/A', learnedFrom: { sourceType: 'Static' } },
    ]);
  });

  it('names the field of a request it cannot read, writes nothing to it, and drops a deleted one', async () => {
    const reports: { name: string; wrote: boolean }[] = [];
    const errors: string[] = [];
    const { holder } = await setup(reports, errors);
    server!.apply(ask('bad', 'n1', ['BGP', 'Everything']));
    server!.apply(ask('mine', 'n1', ['Agent']));
    await reporter!.start(() => holder.state);
    await FakeApiServer.until(() => reports.some((r) => r.name === 'mine'), 10_000, 'the status of "mine"');
    expect(errors).toEqual(['CalicoNodeStatus bad: spec.classes[1]: "Everything" is not one of Agent, BGP, Routes']);
    expect(stored('bad').status).toBeUndefined();
    server!.remove(API, 'CalicoNodeStatus', 'mine');
    await FakeApiServer.until(() => reporter!.names().length === 0, 10_000, 'the deleted request dropped');
    expect(reporter!.names()).toEqual([]);
  });

  it('a write the API server refuses is tried again, even with no period', async () => {
    const reports: { name: string; wrote: boolean }[] = [];
    const errors: string[] = [];
    const { holder } = await setup(reports, errors, 200);
    server!.apply(ask('mine', 'n1', ['Agent']));
    await reporter!.start(() => holder.state);
    await FakeApiServer.until(() => reporter!.names().length === 1, 10_000, 'the request seen');
    // The first write may have gone through before the failure is injected: ask again with a new spec.
    server!.failWith = 503;
    server!.apply({ ...ask('mine', 'n1', ['Agent', 'BGP']), status: stored('mine').status });
    await FakeApiServer.until(() => errors.some((e) => /status not written \(trying again in 200 ms\)/.test(e)), 10_000, 'a refused write');
    server!.failWith = undefined;
    await FakeApiServer.until(() => stored('mine').status?.bgp !== undefined, 10_000, 'the write tried again');
    expect(stored('mine').status.bgp.numberEstablishedV4).toBe(1);
  });

  it.skipIf(!kubectl)(
    'a user creates a request with kubectl and reads the answer with kubectl',
    async () => {
      const reports: { name: string; wrote: boolean }[] = [];
      const { holder, file } = await setup(reports);
      server!.allowAnonymous = true; // kubectl sends no bearer token over plain http
      await reporter!.start(() => holder.state);
      const manifest = join(dirname(file), 'status.json');
      await writeFile(manifest, JSON.stringify(ask('from-kubectl', 'n1', ['Agent', 'BGP', 'Routes'], 60)));
      await run(kubectl!, ['--kubeconfig', file, 'create', '--validate=false', '-f', manifest], { timeout: 30_000 });
      await FakeApiServer.until(() => reports.some((r) => r.name === 'from-kubectl' && r.wrote), 15_000, 'the status of the kubectl request');
      const got = JSON.parse(
        (await run(kubectl!, ['--kubeconfig', file, 'get', 'caliconodestatuses.crd.projectcalico.org', 'from-kubectl', '-o', 'json'], { timeout: 30_000 }))
          .stdout,
      );
      expect(got.spec).toEqual({ node: 'n1', classes: ['Agent', 'BGP', 'Routes'], updatePeriodSeconds: 60 });
      expect(got.status.bgp.peersV4).toEqual([{ peerIP: '192.0.2.2', type: 'NodeMesh', state: 'Established', since: '2026-03-01 10:00:03' }]);
      expect(got.status.agent.birdV6.state).toBe('Ready');
      expect(got.status.routes.routesV4[0].destination).toBe('198.18.0.0/26');
    },
    90_000,
  );
});
