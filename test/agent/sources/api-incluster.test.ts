import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubernetesApiSource } from '../../../src/agent/sources/api-source.js';
import { loadKubeConfig } from '../../../src/agent/sources/kube-client.js';
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
    for (const [k, v] of [['KUBERNETES_SERVICE_HOST', saved.host], ['KUBERNETES_SERVICE_PORT', saved.port]] as const) {
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
});
