import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inClusterConnection, KubeClient, ListWatch, loadKubeConfig, parseKubeconfig, type ListWatchOptions } from '../../../src/agent/sources/kube-client.js';
import { FakeApiServer } from '../../kubernetes/fake-apiserver.js';
import { rawIpPool, rawNode } from '../../kubernetes/api-fixtures.js';

const fixture = (name: string) => readFile(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');
const until = FakeApiServer.until;
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A kubeconfig with one context `c` → cluster `k`, user `u`. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown> = {}): string {
  const block = (o: Record<string, unknown>) =>
    Object.entries(o)
      .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
      .join('\n');
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: c',
    'contexts:',
    '- name: c',
    '  context:',
    '    cluster: k',
    '    user: u',
    '    namespace: tsbgp',
    'clusters:',
    '- name: k',
    '  cluster:',
    block(cluster),
    'users:',
    '- name: u',
    '  user:',
    Object.keys(user).length === 0 ? '    {}' : block(user),
    '',
  ].join('\n');
}

describe('kubeconfig', () => {
  it('server, CA data, client certificate and key data', () => {
    const c = parseKubeconfig(kubeconfig({ server: 'https://192.0.2.1:6443/', 'certificate-authority-data': b64('CA'), 'tls-server-name': 'api' }, { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }), '/k/config');
    expect(c).toMatchObject({ server: 'https://192.0.2.1:6443', namespace: 'tsbgp', insecureSkipTlsVerify: false, tlsServerName: 'api' });
    expect([c.ca, c.cert, c.key].map(String)).toEqual(['CA', 'CERT', 'KEY']);
    expect(c.token).toBeUndefined();
  });

  it('files relative to the kubeconfig: CA, client certificate and key, tokenFile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kc-'));
    await mkdir(join(dir, 'pki'));
    for (const [f, t] of [['pki/ca.crt', 'CA'], ['pki/me.crt', 'CERT'], ['pki/me.key', 'KEY'], ['token', 'tok']]) await writeFile(join(dir, f), t);
    const c = parseKubeconfig(kubeconfig({ server: 'https://192.0.2.1', 'certificate-authority': 'pki/ca.crt' }, { 'client-certificate': 'pki/me.crt', 'client-key': join(dir, 'pki/me.key'), tokenFile: 'token' }), join(dir, 'config'));
    expect([c.ca, c.cert, c.key].map(String)).toEqual(['CA', 'CERT', 'KEY']);
    expect(c.tokenFile).toBe(join(dir, 'token'));
  });

  it('token, insecure-skip-tls-verify, username/password, exec, and a context given by name', () => {
    expect(parseKubeconfig(kubeconfig({ server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true }, { token: 'abc' }), '/k')).toMatchObject({ server: 'http://127.0.0.1:8080', insecureSkipTlsVerify: true, token: 'abc' });
    expect(parseKubeconfig(kubeconfig({ server: 'https://h' }, { username: 'admin', password: 'pw' }), '/k').basic).toEqual({ username: 'admin', password: 'pw' });
    const exec = parseKubeconfig(kubeconfig({ server: 'https://h' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args: ['eks', 'get-token'], env: [{ name: 'AWS_PROFILE', value: 'p' }] } }), '/k').exec;
    expect(exec).toEqual({ command: 'aws', args: ['eks', 'get-token'], env: { AWS_PROFILE: 'p' }, apiVersion: 'client.authentication.k8s.io/v1beta1' });
    expect(parseKubeconfig(kubeconfig({ server: 'https://h' }), '/k', { context: 'c' }).server).toBe('https://h');
    expect(() => parseKubeconfig(kubeconfig({ server: 'https://h' }), '/k', { context: 'nope' })).toThrow('contexts: no entry named "nope"');
  });

  it('errors name the field that is wrong', async () => {
    const bad = (cluster: Record<string, unknown>, user: Record<string, unknown> = {}) => () => parseKubeconfig(kubeconfig(cluster, user), '/k/config');
    expect(bad({})).toThrow('clusters[k].cluster.server is missing');
    expect(bad({ server: 'not a url' })).toThrow('clusters[k].cluster.server "not a url" is not a URL');
    expect(bad({ server: 'ftp://h' })).toThrow('must be http or https');
    expect(bad({ server: 'https://h', 'insecure-skip-tls-verify': 'yes' })).toThrow('clusters[k].cluster.insecure-skip-tls-verify must be true or false');
    expect(bad({ server: 'https://h', 'certificate-authority-data': 'not base64!' })).toThrow('clusters[k].cluster.certificate-authority-data is not base64');
    expect(bad({ server: 'https://h', 'certificate-authority': 'missing.crt' })).toThrow(/^clusters\[k\]\.cluster\.certificate-authority \/k\/missing\.crt: ENOENT/);
    expect(bad({ server: 'https://h', 'proxy-url': 'http://proxy' })).toThrow('clusters[k].cluster.proxy-url is not supported');
    expect(bad({ server: 'https://h' }, { 'client-certificate-data': b64('C') })).toThrow('users[u].user.client-certificate is given without client-key(-data)');
    expect(bad({ server: 'https://h' }, { 'client-key-data': b64('K') })).toThrow('users[u].user.client-key is given without client-certificate(-data)');
    expect(bad({ server: 'https://h' }, { tokenFile: '/nonexistent/token' })).toThrow(/^users\[u\]\.user\.tokenFile \/nonexistent\/token: ENOENT/);
    expect(bad({ server: 'https://h' }, { username: 'admin' })).toThrow('users[u].user.username is given without password');
    expect(bad({ server: 'https://h' }, { 'auth-provider': { name: 'gcp' } })).toThrow('users[u].user.auth-provider (gcp) is not supported');
    expect(bad({ server: 'https://h' }, { exec: { args: ['x'] } })).toThrow('users[u].user.exec.command is missing');
    expect(bad({ server: 'https://h' }, { exec: { command: 'x', args: 'y' } })).toThrow('users[u].user.exec.args must be a list of strings');
    expect(bad({ server: 'https://h' }, { token: 7 })).toThrow('users[u].user.token must be a string');
    expect(() => parseKubeconfig('apiVersion: v1\nkind: Config\n', '/k')).toThrow('no current-context');
    expect(() => parseKubeconfig('current-context: c\ncontexts: []\n', '/k')).toThrow('contexts: no entry named "c"');
    expect(() => parseKubeconfig('current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters: []\n', '/k')).toThrow('clusters: no entry named "k"');
    expect(() => parseKubeconfig('{ not: [yaml', '/k')).toThrow(/^not a kubeconfig: /);
    expect(() => parseKubeconfig('- a list', '/k')).toThrow('not a kubeconfig: the kubeconfig must be a mapping');
    expect(() => loadKubeConfig({ kubeconfig: '/nonexistent/kubeconfig' })).toThrow(/ENOENT.*\/nonexistent\/kubeconfig/);
  });

  it('in-cluster: the service address (IPv6 in brackets), CA, token file and namespace; what is missing is named', async () => {
    const root = await mkdtemp(join(tmpdir(), 'sa-'));
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    expect(() => inClusterConnection({}, root)).toThrow('not running in a cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset)');
    const env = { KUBERNETES_SERVICE_HOST: '2001:db8::1', KUBERNETES_SERVICE_PORT: '443' };
    expect(() => inClusterConnection(env, root)).toThrow(/^in-cluster service account: ENOENT.*serviceaccount\/token/);
    await writeFile(join(sa, 'token'), 't');
    expect(() => inClusterConnection(env, root)).toThrow(/^in-cluster service account: ENOENT.*ca\.crt/);
    await writeFile(join(sa, 'ca.crt'), 'CA');
    await writeFile(join(sa, 'namespace'), 'kube-system\n');
    const c = inClusterConnection(env, root);
    expect(c).toMatchObject({ server: 'https://[2001:db8::1]:443', namespace: 'kube-system', tokenFile: join(sa, 'token'), insecureSkipTlsVerify: false });
    expect(String(c.ca)).toBe('CA');
  });
});

describe('KubeClient authentication', () => {
  const servers: https.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  /** An HTTPS server on 127.0.0.1 answering each request with what it saw: the Authorization header and the client certificate's CN. */
  async function echo(opts: https.ServerOptions = {}): Promise<string> {
    const [key, cert] = [await fixture('key.pem'), await fixture('cert.pem')];
    const s = https.createServer({ key, cert, ...opts }, (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ auth: req.headers.authorization ?? null, cn: peer?.subject?.CN ?? null }));
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `https://127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  it('verifies the server against the CA; a client certificate is presented; insecure skips verification', async () => {
    const [key, cert] = [await fixture('key.pem'), await fixture('cert.pem')];
    const server = await echo({ requestCert: true, rejectUnauthorized: true, ca: cert });
    const client = new KubeClient({ server, ca: Buffer.from(cert), cert: Buffer.from(cert), key: Buffer.from(key), insecureSkipTlsVerify: false });
    expect(await client.getJson('/version')).toEqual({ auth: null, cn: '127.0.0.1' });
    const open = await echo();
    await expect(new KubeClient({ server: open, insecureSkipTlsVerify: false }).getJson('/version')).rejects.toThrow(/^GET \/version: .*self[- ]signed/i);
    expect(await new KubeClient({ server: open, insecureSkipTlsVerify: true, token: 'x' }).getJson('/version')).toEqual({ auth: 'Bearer x', cn: null });
    expect(await new KubeClient({ server: open, insecureSkipTlsVerify: true, basic: { username: 'a', password: 'b' } }).getJson('/')).toEqual({ auth: `Basic ${b64('a:b')}`, cn: null });
  });

  it('a token file is re-read once its minute is up (bound service-account tokens rotate)', async () => {
    const server = await echo();
    const file = join(await mkdtemp(join(tmpdir(), 'tok-')), 'token');
    await writeFile(file, 'one\n');
    let now = 0;
    const client = new KubeClient({ server, insecureSkipTlsVerify: true, tokenFile: file }, { now: () => now });
    expect(await client.getJson('/')).toMatchObject({ auth: 'Bearer one' });
    await writeFile(file, 'two\n');
    now += 30_000;
    expect(await client.getJson('/')).toMatchObject({ auth: 'Bearer one' });
    now += 31_000;
    expect(await client.getJson('/')).toMatchObject({ auth: 'Bearer two' });
  });

  it('an exec credential plugin gives the token (with KUBERNETES_EXEC_INFO and its env); a failing plugin is named', async () => {
    const server = await echo();
    const dir = await mkdtemp(join(tmpdir(), 'exec-'));
    const plugin = join(dir, 'plugin.sh');
    await writeFile(plugin, '#!/bin/sh\necho "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"$1-$PLUGIN_ENV-$(echo "$KUBERNETES_EXEC_INFO" | grep -c ExecCredential)\\"}}"\n');
    await chmod(plugin, 0o755);
    const exec = { command: plugin, args: ['arg'], env: { PLUGIN_ENV: 'env' }, apiVersion: 'client.authentication.k8s.io/v1' };
    expect(await new KubeClient({ server, insecureSkipTlsVerify: true, exec }).getJson('/')).toMatchObject({ auth: 'Bearer arg-env-1' });
    const failing = join(dir, 'failing.sh');
    await writeFile(failing, '#!/bin/sh\necho "no credentials here" >&2\nexit 3\n');
    await chmod(failing, 0o755);
    await expect(new KubeClient({ server, insecureSkipTlsVerify: true, exec: { ...exec, command: failing } }).getJson('/')).rejects.toThrow(`exec credential plugin ${failing}: Command failed: ${failing} arg: no credentials here`);
    const empty = join(dir, 'empty.sh');
    await writeFile(empty, '#!/bin/sh\necho \'{"kind":"ExecCredential","status":{}}\'\n');
    await chmod(empty, 0o755);
    await expect(new KubeClient({ server, insecureSkipTlsVerify: true, exec: { ...exec, command: empty } }).getJson('/')).rejects.toThrow(`exec credential plugin ${empty}: its ExecCredential has no status.token`);
  });
});

describe('ListWatch against the test API server', () => {
  let server: FakeApiServer;
  const loops: ListWatch[] = [];
  afterEach(async () => {
    for (const l of loops.splice(0)) l.stop();
    await server.stop();
  });

  async function start(opts: Partial<ListWatchOptions> & { path?: string } = {}) {
    const client = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
    const seen = { lists: [] as unknown[][], pages: [] as number[], events: [] as string[], errors: [] as string[], watches: 0 };
    let listing: unknown[] = [];
    const lw = new ListWatch({
      client,
      path: '/api/v1/nodes',
      backoff: { initialMs: 20, maxMs: 100, jitter: 0.5 },
      onListStart: () => (listing = []),
      onListPage: (items) => (seen.pages.push(items.length), listing.push(...items)),
      onListEnd: () => seen.lists.push(listing),
      onEvent: (type, o) => seen.events.push(`${type} ${(o as { metadata: { name: string } }).metadata.name}`),
      onWatch: () => seen.watches++,
      onError: (e) => seen.errors.push(e.message),
      ...opts,
    });
    loops.push(lw);
    lw.start();
    return { lw, seen };
  }
  const watchRequests = () => server.requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === 'true');
  const listRequests = () => server.requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === undefined);

  it('lists in pages (limit, continue), then watches from the list resourceVersion with bookmarks and a timeout', async () => {
    server = new FakeApiServer();
    for (let i = 0; i < 7; i++) server.apply(rawNode(`n${i}`, `192.0.2.${i + 1}`));
    await server.start();
    const { seen } = await start({ pageSize: 3, timeoutSeconds: 42 });
    await until(() => server.openWatches('nodes') === 1, 5000, 'watch');
    expect(seen.lists.map((l) => l.length)).toEqual([7]);
    expect(seen.pages).toEqual([3, 3, 1]);
    expect(listRequests().map((r) => [r.query.limit, r.query.continue])).toEqual([
      ['3', undefined],
      ['3', '107:3'],
      ['3', '107:6'],
    ]);
    expect(watchRequests().map((r) => r.query)).toEqual([{ watch: 'true', resourceVersion: '107', allowWatchBookmarks: 'true', timeoutSeconds: '42' }]);
    server.apply(rawNode('n7', '192.0.2.8'));
    server.remove('v1', 'Node', 'n0');
    await until(() => seen.events.length === 2, 5000, 'events');
    expect(seen.events).toEqual(['ADDED n7', 'DELETED n0']);
  });

  it('an expired continue token starts the list over in one piece', async () => {
    server = new FakeApiServer();
    for (let i = 0; i < 4; i++) server.apply(rawNode(`n${i}`, `192.0.2.${i + 1}`));
    await server.start();
    const client = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
    // the first page is answered, then the history is compacted before the second is asked for
    const request = client.request.bind(client);
    let calls = 0;
    client.request = async (method, path, o) => {
      if (++calls === 2) server.expireHistory();
      return request(method, path, o);
    };
    const list = await client.list('/api/v1/nodes', { limit: 2 });
    expect(list.items).toHaveLength(4);
    expect(server.requests.map((r) => [r.query.limit, r.query.continue])).toEqual([
      ['2', undefined],
      ['2', '104:2'],
      [undefined, undefined],
    ]);
  });

  it('a bookmark moves the resourceVersion on; a clean end re-watches from it without a relist', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const { lw, seen } = await start();
    await until(() => server.openWatches('nodes') === 1, 5000, 'watch');
    server.apply(rawIpPool('p1', '198.18.0.0/16')); // another kind: the nodes watch does not see it
    server.bookmark();
    const rv = String(server.resourceVersion);
    await until(() => lw.resourceVersion === rv, 5000, 'bookmark');
    server.dropConnections({ clean: true });
    await until(() => watchRequests().length === 2 && server.openWatches('nodes') === 1, 5000, 're-watch');
    expect(watchRequests().map((r) => r.query.resourceVersion)).toEqual(['101', rv]);
    expect(listRequests()).toHaveLength(1);
    expect(seen).toMatchObject({ watches: 2, errors: [], events: [] });
  });

  it('410 Gone (an ERROR event on the watch, or the status of the watch request) relists at once, without an error', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const { seen } = await start({ backoff: { initialMs: 60_000, maxMs: 60_000, jitter: 0 } });
    await until(() => server.openWatches('nodes') === 1, 5000, 'watch');
    server.expireHistory(); // open watch: ERROR 410 event
    await until(() => seen.lists.length === 2 && server.openWatches('nodes') === 1, 5000, 'relist');
    expect(seen.errors).toEqual([]);
    expect(listRequests()).toHaveLength(2);
    expect(seen.watches).toBe(2);
  });

  it('errors back off exponentially (backoffDelay, here without jitter), are reported, and a good list ends them', async () => {
    server = new FakeApiServer();
    await server.start();
    const times: number[] = [];
    server.failWith = 503;
    const { seen } = await start({ backoff: { initialMs: 40, maxMs: 1000, jitter: 0 }, onError: (e) => (times.push(Date.now()), seen.errors.push(e.message)) });
    await until(() => times.length >= 4, 10_000, 'four failures');
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    // 40, 80, 160 ms at least (a timer never fires early by more than its rounding)
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
    expect(seen.errors[0]).toBe('GET /api/v1/nodes?limit=500&resourceVersion=0: 503 injected failure');
    server.failWith = undefined;
    await until(() => seen.lists.length === 1 && server.openWatches('nodes') === 1, 10_000, 'recovered');
    // a cut watch is an error (reported), then a relist
    server.dropConnections();
    await until(() => seen.lists.length === 2, 5000, 'relist after the cut');
    expect(seen.errors.at(-1)).toBe('watch /api/v1/nodes: connection cut by the server or the network');
  });

  it('a watch refused every time (lists work) still backs off: only a watch that delivers resets the backoff', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    server.failWatchesWith = 403;
    const times: number[] = [];
    const { seen } = await start({ backoff: { initialMs: 40, maxMs: 1000, jitter: 0 }, onError: (e) => (times.push(Date.now()), seen.errors.push(e.message)) });
    await until(() => times.length >= 4, 10_000, 'four refused watches');
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
    expect(seen.errors[0]).toBe('watch /api/v1/nodes: 403 injected watch failure');
    expect(seen.lists.length).toBeGreaterThanOrEqual(4);
  });

  it('checkIdle: a watch silent for idleMs (half-open) fails, is reported, and relists; a listing or live one is left alone', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    let now = 0;
    const { lw, seen } = await start({ now: () => now });
    expect(lw.checkIdle(0)).toBe(false); // still listing
    await until(() => server.openWatches('nodes') === 1, 5000, 'watch');
    now += 999;
    expect(lw.checkIdle(1000)).toBe(false);
    server.freezeWatches();
    server.apply(rawNode('n1', '192.0.2.2'));
    now += 1;
    expect(lw.checkIdle(1000)).toBe(true);
    expect(seen.errors).toEqual(['watch silent for 1 s; reconnecting']);
    await until(() => seen.lists.length === 2, 5000, 'relist');
    expect(seen.lists[1].map((o) => (o as { metadata: { name: string } }).metadata.name).sort()).toEqual(['n0', 'n1']);
  });

  it('stop() ends the list or watch at once, also one still opening, and nothing is called after', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    server.watchDelayMs = 300;
    const { lw, seen } = await start();
    await until(() => watchRequests().length === 1, 5000, 'watch asked');
    lw.stop();
    server.apply(rawNode('n1', '192.0.2.2'));
    await new Promise((r) => setTimeout(r, 400));
    expect(server.openWatches()).toBe(0);
    expect(seen.events).toEqual([]);
    expect(seen.errors).toEqual([]);
  });
});
