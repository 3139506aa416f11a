import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeApiServer } from './fake-apiserver.js';
import { everyKind } from './api-fixtures.js';
import { requireKubectl } from './kubectl.js';

const run = promisify(execFile);
const kubectl = requireKubectl();

// The Accept header kubectl 1.32 sends for discovery: aggregated first, plain JSON as the fallback.
const KUBECTL_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

let server: FakeApiServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function get(path: string, auth = true): Promise<{ status: number; body: any; type: string | null }> {
  const res = await fetch(server!.url + path, { headers: { Accept: KUBECTL_ACCEPT, ...(auth ? { Authorization: `Bearer ${server!.token}` } : {}) } });
  return { status: res.status, body: await res.json(), type: res.headers.get('content-type') };
}

describe('fake API server discovery', () => {
  it('answers kubectl-shaped discovery requests with legacy (non-aggregated) documents', async () => {
    server = new FakeApiServer();
    for (const o of everyKind()) server.apply(o);
    await server.start();
    expect((await get('/api', false)).status).toBe(401);
    const api = await get('/api');
    expect(api.type).toBe('application/json');
    expect(api.body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
    const apis = await get('/apis');
    expect(apis.body.kind).toBe('APIGroupList');
    expect(apis.body.groups.map((g: { name: string }) => g.name).sort()).toEqual(['crd.projectcalico.org', 'discovery.k8s.io']);
    const core = await get('/api/v1');
    expect(core.body.resources.find((r: { name: string }) => r.name === 'services')).toMatchObject({ kind: 'Service', namespaced: true, shortNames: ['svc'] });
    const calico = await get('/apis/crd.projectcalico.org/v1');
    expect(calico.body.resources.map((r: { name: string }) => r.name).sort()).toEqual([
      'bgpconfigurations',
      'bgpfilters',
      'bgppeers',
      'blockaffinities',
      'ippools',
    ]);
    const list = await get('/api/v1/services');
    expect(list.body).toMatchObject({ kind: 'ServiceList', metadata: { resourceVersion: String(server.resourceVersion) } });
    expect(list.body.items[0].kind).toBeUndefined();
    expect((await get('/api/v1/namespaces/default/services/web')).body.metadata.name).toBe('web');
    expect((await get('/apis/nope.example/v1')).status).toBe(404);
  });

  it.skipIf(!kubectl)(
    'kubectl pointed at it lists what it serves (a check that it speaks the protocol)',
    async () => {
      server = new FakeApiServer();
      for (const o of everyKind()) server.apply(o);
      await server.start();
      server.allowAnonymous = true; // kubectl sends no bearer token over plain http
      const kubeconfig = await server.writeKubeconfig();
      const nodes = JSON.parse((await run(kubectl!, ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'json'], { timeout: 15_000 })).stdout);
      expect(nodes.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(['node-a']);
      const peers = (await run(kubectl!, ['--kubeconfig', kubeconfig, 'get', 'bgppeers.crd.projectcalico.org', '-o', 'name'], { timeout: 15_000 })).stdout;
      expect(peers.trim()).toBe('bgppeer.crd.projectcalico.org/tor');
      const svc = (await run(kubectl!, ['--kubeconfig', kubeconfig, 'get', 'svc', '-A', '-o', 'name'], { timeout: 15_000 })).stdout;
      expect(svc.trim()).toBe('service/web');
      // --server alone (no kubeconfig), as the issue puts it.
      const byServer = (
        await run(kubectl!, ['--server', server.url, '--kubeconfig', '/dev/null', 'get', 'ippools.crd.projectcalico.org', '-o', 'name'], { timeout: 15_000 })
      ).stdout;
      expect(byServer.trim()).toBe('ippool.crd.projectcalico.org/pool-a');
      // Four kubectl processes: seconds each on a loaded machine (scripts/stress-unit.sh).
    },
    90_000,
  );

  it('the kubectl gate fails in CI and skips elsewhere when kubectl is missing', () => {
    const none = () => undefined;
    expect(() => requireKubectl({ CI: 'true' }, none)).toThrow(/kubectl is not on PATH.*CI=true, so this is a failure/);
    expect(requireKubectl({}, none)).toBeUndefined();
  });

  it('streams a watch as JSON lines and answers a too-old resourceVersion with ERROR 410', async () => {
    server = new FakeApiServer();
    await server.start();
    const rv = server.resourceVersion;
    server.apply(everyKind()[0]);
    const res = await fetch(`${server.url}/api/v1/nodes?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`, {
      headers: { Authorization: `Bearer ${server.token}` },
    });
    const reader = res.body!.getReader();
    const lines: any[] = [];
    let buf = '';
    const readLines = async (n: number) => {
      while (lines.length < n) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += Buffer.from(value).toString();
        const parts = buf.split('\n');
        buf = parts.pop()!;
        for (const p of parts) lines.push(JSON.parse(p));
      }
    };
    await readLines(1);
    server.bookmark();
    server.remove('v1', 'Node', 'node-a');
    await readLines(3);
    expect(lines.map((l) => l.type)).toEqual(['ADDED', 'BOOKMARK', 'DELETED']);
    expect(lines[1].object.metadata.resourceVersion).toBe(String(rv + 1));
    server.expireHistory();
    await readLines(4);
    expect(lines[3]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    const stale = await fetch(`${server.url}/api/v1/nodes?watch=true&resourceVersion=${rv}`, { headers: { Authorization: `Bearer ${server.token}` } });
    expect(JSON.parse((await stale.text()).trim())).toMatchObject({ type: 'ERROR', object: { code: 410 } });
  });
});
