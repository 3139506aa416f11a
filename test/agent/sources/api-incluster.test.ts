import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesApiSource } from '../../../src/agent/sources/api-source.js';
import { ListWatch, loadKubeConfig } from '../../../src/agent/sources/kube-client.js';
import type { ClusterEvent } from '../../../src/kubernetes/state.js';
import { FakeApiServer } from '../../kubernetes/fake-apiserver.js';
import { everyKind } from '../../kubernetes/api-fixtures.js';

const fixture = (name: string) => readFile(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');

describe('in-cluster configuration', () => {
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  let server: FakeApiServer | undefined;
  let source: KubernetesApiSource | undefined;
  afterEach(async () => {
    await source?.close();
    await server?.stop();
    for (const [k, v] of [
      ['KUBERNETES_SERVICE_HOST', saved.host],
      ['KUBERNETES_SERVICE_PORT', saved.port],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('without --kubeconfig and outside a cluster, says so', () => {
    delete process.env.KUBERNETES_SERVICE_HOST;
    expect(() => loadKubeConfig({})).toThrow(/KUBERNETES_SERVICE_HOST.*--kubeconfig/);
  });

  it('syncs over HTTPS with the service-account CA and token file from KUBERNETES_SERVICE_HOST/PORT', async () => {
    server = new FakeApiServer(undefined, { key: await fixture('key.pem'), cert: await fixture('cert.pem') });
    for (const o of everyKind()) server.apply(o);
    await server.start();
    const root = await mkdtemp(join(tmpdir(), 'sa-'));
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), server.token);
    await writeFile(join(sa, 'ca.crt'), await fixture('cert.pem'));
    await writeFile(join(sa, 'namespace'), 'kube-system');
    process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    process.env.KUBERNETES_SERVICE_PORT = String(server.port);
    const client = loadKubeConfig({ serviceAccountRoot: root });
    expect(client.server).toBe(`https://127.0.0.1:${server.port}`);
    const events: ClusterEvent[] = [];
    source = new KubernetesApiSource({ client, backoff: { initialMs: 20, maxMs: 100 }, onChange: (e) => events.push(...e) });
    source.start();
    await source.synced();
    expect(events).toHaveLength(8);
    // The watch runs over the same TLS connection settings and carries the token.
    await FakeApiServer.until(() => server!.openWatches() === 8, 5000, 'watches');
    server.remove('v1', 'Node', 'node-a');
    await FakeApiServer.until(() => events.length === 9, 5000, 'delete over TLS watch');
    expect(events[8]).toEqual({ type: 'delete', kind: 'Node', name: 'node-a', namespace: undefined });
  });

  it('a rotated service-account token (401) and CA (TLS failure) are read again: the watch carries on without a relist', async () => {
    server = new FakeApiServer(undefined, { key: await fixture('key.pem'), cert: await fixture('cert.pem') });
    for (const o of everyKind()) server.apply(o);
    await server.start();
    const root = await mkdtemp(join(tmpdir(), 'sa-'));
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), server.token);
    // the CA the pod started with is not the one the server's certificate is signed with (the cluster CA rotates)
    await writeFile(join(sa, 'ca.crt'), await fixture('rotated-cert.pem'));
    const env = { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) };
    let now = 0;
    const client = loadKubeConfig({ serviceAccountRoot: root, env, client: { now: () => now } });
    const errors: string[] = [];
    let lists = 0;
    const lw = new ListWatch({
      client,
      path: '/api/v1/nodes',
      backoff: { initialMs: 10, maxMs: 10, jitter: 0 },
      onListStart: () => undefined,
      onListPage: () => undefined,
      onListEnd: () => lists++,
      onEvent: () => undefined,
      onError: (e) => errors.push(e.message),
    });
    try {
      lw.start();
      await FakeApiServer.until(() => errors.length >= 1, 5000, 'a TLS failure');
      expect(errors[0]).toMatch(/^GET \/api\/v1\/nodes\?limit=500&resourceVersion=0: .*(self[- ]signed|verify|certificate)/i);
      expect(client.tlsReloads).toBe(0); // the file did not change: nothing to retry with
      // swapped in whole, as the kubelet does (a reader never sees half a file)
      await writeFile(join(sa, 'ca.crt.new'), await fixture('cert.pem'));
      await rename(join(sa, 'ca.crt.new'), join(sa, 'ca.crt'));
      await FakeApiServer.until(() => lists === 1 && server!.openWatches('nodes') === 1, 5000, 'synced with the new CA');
      expect(client.tlsReloads).toBe(1);
      // the token rotates: the server takes only the new one; the client reads the file again on the 401
      const failures = errors.length;
      server.rotateToken('rotated-token');
      await writeFile(join(sa, 'token.new'), 'rotated-token\n');
      await rename(join(sa, 'token.new'), join(sa, 'token'));
      now += 5_000; // the watch has been open a while (one that ends at once is an error); the token read is still fresh
      server.dropConnections({ clean: true });
      await FakeApiServer.until(() => server!.openWatches('nodes') === 1, 5000, 're-watch with the new token');
      expect(server.unauthorized).toBe(1);
      expect(errors.length).toBe(failures);
      expect(lists).toBe(1);
    } finally {
      lw.stop();
    }
  });
});
