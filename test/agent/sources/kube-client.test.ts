import { chmod, mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  inClusterConnection,
  KubeClient,
  LineSplitter,
  ListWatch,
  loadKubeConfig,
  parseKubeconfig,
  retryAfterMs,
  type KubeClientOptions,
  type ListWatchOptions,
} from '../../../src/agent/sources/kube-client.js';
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
    const c = parseKubeconfig(
      kubeconfig(
        { server: 'https://192.0.2.1:6443/', 'certificate-authority-data': b64('CA'), 'tls-server-name': 'api' },
        { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
      ),
      '/k/config',
    );
    expect(c).toMatchObject({ server: 'https://192.0.2.1:6443', namespace: 'tsbgp', insecureSkipTlsVerify: false, tlsServerName: 'api' });
    expect([c.ca, c.cert, c.key].map(String)).toEqual(['CA', 'CERT', 'KEY']);
    expect(c.token).toBeUndefined();
  });

  it('files relative to the kubeconfig: CA, client certificate and key, tokenFile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kc-'));
    await mkdir(join(dir, 'pki'));
    for (const [f, t] of [
      ['pki/ca.crt', 'CA'],
      ['pki/me.crt', 'CERT'],
      ['pki/me.key', 'KEY'],
      ['token', 'tok'],
    ])
      await writeFile(join(dir, f), t);
    const c = parseKubeconfig(
      kubeconfig(
        { server: 'https://192.0.2.1', 'certificate-authority': 'pki/ca.crt' },
        { 'client-certificate': 'pki/me.crt', 'client-key': join(dir, 'pki/me.key'), tokenFile: 'token' },
      ),
      join(dir, 'config'),
    );
    expect([c.ca, c.cert, c.key].map(String)).toEqual(['CA', 'CERT', 'KEY']);
    expect(c.tokenFile).toBe(join(dir, 'token'));
    // remembered by path, to be read again as they rotate
    expect(c.tlsFiles).toEqual({ ca: join(dir, 'pki/ca.crt'), cert: join(dir, 'pki/me.crt'), key: join(dir, 'pki/me.key') });
  });

  it('token, insecure-skip-tls-verify, username/password, exec, and a context given by name', () => {
    expect(parseKubeconfig(kubeconfig({ server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true }, { token: 'abc' }), '/k')).toMatchObject({
      server: 'http://127.0.0.1:8080',
      insecureSkipTlsVerify: true,
      token: 'abc',
    });
    expect(parseKubeconfig(kubeconfig({ server: 'https://h' }, { username: 'admin', password: 'pw' }), '/k').basic).toEqual({
      username: 'admin',
      password: 'pw',
    });
    const exec = parseKubeconfig(
      kubeconfig(
        { server: 'https://h' },
        {
          exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args: ['eks', 'get-token'], env: [{ name: 'AWS_PROFILE', value: 'p' }] },
        },
      ),
      '/k',
    ).exec;
    expect(exec).toEqual({ command: 'aws', args: ['eks', 'get-token'], env: { AWS_PROFILE: 'p' }, apiVersion: 'client.authentication.k8s.io/v1beta1' });
    expect(parseKubeconfig(kubeconfig({ server: 'https://h' }), '/k', { context: 'c' }).server).toBe('https://h');
    expect(() => parseKubeconfig(kubeconfig({ server: 'https://h' }), '/k', { context: 'nope' })).toThrow('contexts: no entry named "nope"');
  });

  it('errors name the field that is wrong', async () => {
    const bad =
      (cluster: Record<string, unknown>, user: Record<string, unknown> = {}) =>
      () =>
        parseKubeconfig(kubeconfig(cluster, user), '/k/config');
    expect(bad({})).toThrow('clusters[k].cluster.server is missing');
    expect(bad({ server: 'not a url' })).toThrow('clusters[k].cluster.server "not a url" is not a URL');
    expect(bad({ server: 'ftp://h' })).toThrow('must be http or https');
    expect(bad({ server: 'https://h', 'insecure-skip-tls-verify': 'yes' })).toThrow('clusters[k].cluster.insecure-skip-tls-verify must be true or false');
    expect(bad({ server: 'https://h', 'certificate-authority-data': 'not base64!' })).toThrow('clusters[k].cluster.certificate-authority-data is not base64');
    expect(bad({ server: 'https://h', 'certificate-authority': 'missing.crt' })).toThrow(
      /^clusters\[k\]\.cluster\.certificate-authority \/k\/missing\.crt: ENOENT/,
    );
    expect(bad({ server: 'https://h', 'proxy-url': 'http://proxy' })).toThrow('clusters[k].cluster.proxy-url is not supported');
    expect(bad({ server: 'https://h' }, { 'client-certificate-data': b64('C') })).toThrow(
      'users[u].user.client-certificate is given without client-key(-data)',
    );
    expect(bad({ server: 'https://h' }, { 'client-key-data': b64('K') })).toThrow('users[u].user.client-key is given without client-certificate(-data)');
    expect(bad({ server: 'https://h' }, { tokenFile: '/nonexistent/token' })).toThrow(/^users\[u\]\.user\.tokenFile \/nonexistent\/token: ENOENT/);
    expect(bad({ server: 'https://h' }, { username: 'admin' })).toThrow('users[u].user.username is given without password');
    expect(bad({ server: 'https://h' }, { 'auth-provider': { name: 'gcp' } })).toThrow('users[u].user.auth-provider (gcp) is not supported');
    expect(bad({ server: 'https://h' }, { exec: { args: ['x'] } })).toThrow('users[u].user.exec.command is missing');
    expect(bad({ server: 'https://h' }, { exec: { command: 'x', args: 'y' } })).toThrow('users[u].user.exec.args must be a list of strings');
    expect(bad({ server: 'https://h' }, { token: 7 })).toThrow('users[u].user.token must be a string');
    expect(() => parseKubeconfig('apiVersion: v1\nkind: Config\n', '/k')).toThrow('no current-context');
    expect(() => parseKubeconfig('current-context: c\ncontexts: []\n', '/k')).toThrow('contexts: no entry named "c"');
    expect(() => parseKubeconfig('current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters: []\n', '/k')).toThrow(
      'clusters: no entry named "k"',
    );
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
    expect(await new KubeClient({ server: open, insecureSkipTlsVerify: true, basic: { username: 'a', password: 'b' } }).getJson('/')).toEqual({
      auth: `Basic ${b64('a:b')}`,
      cn: null,
    });
  });

  it('a client certificate and key from files are read again every 5 minutes; a change takes a new connection pool', async () => {
    const [cert, rotated] = [await fixture('cert.pem'), await fixture('rotated-cert.pem')];
    const server = await echo({ requestCert: true, rejectUnauthorized: true, ca: [cert, rotated] });
    const dir = await mkdtemp(join(tmpdir(), 'certs-'));
    const [certFile, keyFile] = [join(dir, 'me.crt'), join(dir, 'me.key')];
    const put = async (c: string, k: string) => {
      await writeFile(`${certFile}.new`, await fixture(c));
      await writeFile(`${keyFile}.new`, await fixture(k));
      await rename(`${certFile}.new`, certFile);
      await rename(`${keyFile}.new`, keyFile);
    };
    await put('cert.pem', 'key.pem');
    let now = 0;
    const conn = {
      server,
      ca: Buffer.from(cert),
      cert: await readFile(certFile),
      key: await readFile(keyFile),
      insecureSkipTlsVerify: false,
      tlsFiles: { cert: certFile, key: keyFile },
    };
    const client = new KubeClient(conn, { now: () => now });
    expect(await client.getJson('/')).toMatchObject({ cn: '127.0.0.1' });
    await put('rotated-cert.pem', 'rotated-key.pem');
    now += 4 * 60_000;
    expect(await client.getJson('/')).toMatchObject({ cn: '127.0.0.1' });
    expect(client.tlsReloads).toBe(0);
    now += 60_000;
    expect(await client.getJson('/')).toMatchObject({ cn: 'rotated' });
    expect(client.tlsReloads).toBe(1);
    now += 5 * 60_000; // read again, unchanged: the pool stays
    expect(await client.getJson('/')).toMatchObject({ cn: 'rotated' });
    expect(client.tlsReloads).toBe(1);
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
    await writeFile(
      plugin,
      '#!/bin/sh\necho "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"$1-$PLUGIN_ENV-$(echo "$KUBERNETES_EXEC_INFO" | grep -c ExecCredential)\\"}}"\n',
    );
    await chmod(plugin, 0o755);
    const exec = { command: plugin, args: ['arg'], env: { PLUGIN_ENV: 'env' }, apiVersion: 'client.authentication.k8s.io/v1' };
    expect(await new KubeClient({ server, insecureSkipTlsVerify: true, exec }).getJson('/')).toMatchObject({ auth: 'Bearer arg-env-1' });
    const failing = join(dir, 'failing.sh');
    await writeFile(failing, '#!/bin/sh\necho "no credentials here" >&2\nexit 3\n');
    await chmod(failing, 0o755);
    await expect(new KubeClient({ server, insecureSkipTlsVerify: true, exec: { ...exec, command: failing } }).getJson('/')).rejects.toThrow(
      `exec credential plugin ${failing}: Command failed: ${failing} arg: no credentials here`,
    );
    const empty = join(dir, 'empty.sh');
    await writeFile(empty, '#!/bin/sh\necho \'{"kind":"ExecCredential","status":{}}\'\n');
    await chmod(empty, 0o755);
    await expect(new KubeClient({ server, insecureSkipTlsVerify: true, exec: { ...exec, command: empty } }).getJson('/')).rejects.toThrow(
      `exec credential plugin ${empty}: its ExecCredential has no status.token`,
    );
  });
});

/** Backoff timers the test fires one at a time: `next()` waits for the loop to ask for one, fires it and returns its delay. */
function manualTimers() {
  const pending: { fn: () => void; ms: number }[] = [];
  return {
    set: (fn: () => void, ms: number) => {
      const t = { fn, ms };
      pending.push(t);
      return {
        cancel: () => {
          const i = pending.indexOf(t);
          if (i >= 0) pending.splice(i, 1);
        },
      };
    },
    /** Waits for the loop to ask for a timer; returns its delay without firing it. */
    async waiting(): Promise<number> {
      await until(() => pending.length > 0, 5000, 'a backoff timer');
      return pending[0].ms;
    },
    async next(): Promise<number> {
      await until(() => pending.length > 0, 5000, 'a backoff timer');
      const t = pending.shift()!;
      t.fn();
      return t.ms;
    },
  };
}

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
    server.failWith = 503;
    const timers = manualTimers();
    const { seen } = await start({ backoff: { initialMs: 40, maxMs: 1000, jitter: 0 }, setTimer: timers.set });
    expect(await timers.next()).toBe(40);
    expect(await timers.next()).toBe(80);
    expect(await timers.next()).toBe(160);
    expect(seen.errors).toHaveLength(3);
    expect(seen.errors[0]).toBe('GET /api/v1/nodes?limit=500&resourceVersion=0: 503 injected failure');
    expect(await timers.waiting()).toBe(320);
    server.failWith = undefined;
    await timers.next();
    await until(() => seen.lists.length === 1 && server.openWatches('nodes') === 1, 10_000, 'recovered');
    // the watch delivers: the backoff starts over; a cut watch is an error (reported), then a relist
    server.apply(rawNode('n0', '192.0.2.1'));
    await until(() => seen.events.length === 1, 5000, 'event');
    server.dropConnections();
    expect(await timers.next()).toBe(40);
    await until(() => seen.lists.length === 2, 5000, 'relist after the cut');
    expect(seen.errors.at(-1)).toBe('watch /api/v1/nodes: connection cut by the server or the network');
  });

  it('a watch refused every time (lists work) still backs off: only a watch that delivers resets the backoff', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    server.failWatchesWith = 403;
    const timers = manualTimers();
    const { seen } = await start({ backoff: { initialMs: 40, maxMs: 1000, jitter: 0 }, setTimer: timers.set });
    expect(await timers.next()).toBe(40);
    expect(await timers.next()).toBe(80);
    expect(await timers.next()).toBe(160);
    expect(await timers.waiting()).toBe(320);
    expect(seen.errors[0]).toBe('watch /api/v1/nodes: 403 injected watch failure');
    expect(seen.lists.length).toBe(4);
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
    // the server's delay is over: had the request not been abandoned, the watch would be open (and n1 on its way) now
    await until(() => server.delayedWatchesDue === 1, 5000, 'the delayed watch answered');
    expect(server.openWatches()).toBe(0);
    expect(seen.events).toEqual([]);
    expect(seen.errors).toEqual([]);
  });
});

describe('the watch line buffer', () => {
  it('splits lines across any chunking, keeping the chunks of an unfinished line as they came', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 40 }).map((x) => x.replace(/\n/g, ' ')),
          { maxLength: 8 },
        ),
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 10 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
          const got: string[] = [];
          const split = new LineSplitter(1 << 20);
          let at = 0;
          for (let i = 0; at < bytes.length; i++) {
            const n = cuts[i % cuts.length];
            split.push(bytes.subarray(at, at + n), (l) => void got.push(l));
            at += n;
          }
          expect(got).toEqual(lines);
          expect(split.pending).toBe(0);
        },
      ),
    );
  });

  it('a line over the limit throws, naming the limit, whether it comes in one chunk or many; a line at the limit passes', () => {
    const split = new LineSplitter(10);
    const got: string[] = [];
    split.push(Buffer.from('0123456789\nab'), (l) => void got.push(l));
    expect(got).toEqual(['0123456789']);
    expect(split.pending).toBe(2);
    expect(() => split.push(Buffer.from('cdefghijk'), () => undefined)).toThrow('a watch line over 10 bytes (maxWatchLineBytes); restarting the watch');
    expect(split.pending).toBe(0);
    expect(() => new LineSplitter(10).push(Buffer.from('0123456789a\n'), () => undefined)).toThrow('a watch line over 10 bytes');
    // a consumer that stops reading: the rest of the chunk is not delivered
    const first: string[] = [];
    new LineSplitter(10).push(Buffer.from('a\nb\nc\n'), (l) => (first.push(l), false));
    expect(first).toEqual(['a']);
  });
});

describe('Retry-After', () => {
  it('delay-seconds or an HTTP-date (from the injected clock); absent or unreadable is none', () => {
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(['0'], 0)).toBe(0);
    const at = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:00 GMT', at - 5000)).toBe(5000);
    expect(retryAfterMs('Wed, 21 Oct 2026 07:28:00 GMT', at + 5000)).toBe(0);
    expect(retryAfterMs(undefined, 0)).toBeUndefined();
    expect(retryAfterMs('soon', 0)).toBeUndefined();
  });
});

describe('failures, as client-go handles them', () => {
  let server: FakeApiServer;
  const loops: ListWatch[] = [];
  afterEach(async () => {
    for (const l of loops.splice(0)) l.stop();
    server.release();
    await server.stop();
  });

  /** A client whose sleeps and backoff timers are recorded and return at once, on a clock the test moves. */
  async function client(opts: KubeClientOptions & { tokenFile?: boolean } = {}) {
    const clock = { now: 1_000_000, sleeps: [] as number[], timers: [] as number[] };
    const c = loadKubeConfig({
      kubeconfig: await server.writeKubeconfig({ tokenFile: opts.tokenFile }),
      client: {
        now: () => clock.now,
        sleep: async (ms) => {
          clock.sleeps.push(ms);
          clock.now += ms;
        },
        ...opts,
      },
    });
    return { c, clock };
  }

  function loop(c: KubeClient, clock: { timers: number[] }, opts: Partial<ListWatchOptions> = {}) {
    const seen = { lists: 0, events: [] as string[], errors: [] as string[] };
    const lw = new ListWatch({
      client: c,
      path: '/api/v1/nodes',
      random: () => 0,
      setTimer: (fn, ms) => {
        clock.timers.push(ms);
        const t = setImmediate(fn);
        return { cancel: () => clearImmediate(t) };
      },
      onListStart: () => undefined,
      onListPage: () => undefined,
      onListEnd: () => seen.lists++,
      onEvent: (type, o) => seen.events.push(`${type} ${(o as { metadata: { name: string } }).metadata.name}`),
      onError: (e) => seen.errors.push(e.message),
      ...opts,
    });
    loops.push(lw);
    lw.start();
    return { lw, seen };
  }
  const lists = () => server.requests.filter((r) => r.path === '/api/v1/nodes' && r.query.watch === undefined).map((r) => r.query);

  it('the first list asks resourceVersion 0 in pages; a relist asks the last resourceVersion seen, in one piece (watch cache), unless "0" came in pages', async () => {
    server = new FakeApiServer();
    server.watchCache = true;
    for (let i = 0; i < 4; i++) server.apply(rawNode(`n${i}`, `192.0.2.${i + 1}`));
    await server.start();
    const { c, clock } = await client();
    const { seen } = loop(c, clock);
    await until(() => seen.lists === 1 && server.openWatches('nodes') === 1, 5000, 'first sync');
    server.apply(rawNode('n9', '192.0.2.99'));
    await until(() => seen.events.length === 1, 5000, 'event');
    server.dropConnections();
    await until(() => seen.lists === 2 && server.openWatches('nodes') === 1, 5000, 'relist');
    expect(lists()).toEqual([{ limit: '500', resourceVersion: '0' }, { resourceVersion: String(server.resourceVersion) }]);

    // no watch cache: "0" is answered in pages, so relists keep asking in pages (at the last resourceVersion)
    await server.stop();
    server = new FakeApiServer();
    for (let i = 0; i < 501; i++) server.apply(rawNode(`n${i}`, `198.18.${i >> 8}.${i & 255}`));
    await server.start();
    const b = await client();
    const two = loop(b.c, b.clock);
    await until(() => two.seen.lists === 1 && server.openWatches('nodes') === 1, 10_000, 'first sync (paged)');
    server.dropConnections();
    await until(() => two.seen.lists === 2 && server.openWatches('nodes') === 1, 10_000, 'relist (paged)');
    const rv = String(server.resourceVersion);
    expect(lists()).toEqual([
      { limit: '500', resourceVersion: '0' },
      { limit: '500', continue: `${rv}:500` },
      { limit: '500', resourceVersion: rv },
      { limit: '500', continue: `${rv}:500` },
    ]);
  });

  it('a relist whose resourceVersion is too large (the cache is behind) waits as asked, then falls back to a quorum read ("")', async () => {
    server = new FakeApiServer();
    server.watchCache = true;
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const { c, clock } = await client();
    const { seen } = loop(c, clock);
    await until(() => seen.lists === 1 && server.openWatches('nodes') === 1, 5000, 'first sync');
    const rv = String(server.resourceVersion);
    const relist = (r: { path: string; query: Record<string, string> }) => r.query.watch === undefined && r.query.resourceVersion === rv;
    server.inject({
      status: 504,
      reason: 'Timeout',
      message: `Too large resource version: ${rv}`,
      causes: ['ResourceVersionTooLarge'],
      retryAfterSeconds: 1,
      times: 11,
      match: relist,
    });
    server.dropConnections();
    await until(() => seen.lists === 2 && server.openWatches('nodes') === 1, 5000, 'relist');
    expect(clock.sleeps).toEqual(Array(10).fill(1000)); // client-go's 10 retries, each after the Retry-After asked
    expect(lists().slice(1)).toEqual([...Array(11).fill({ resourceVersion: rv }), { limit: '500' }]);
    expect(seen.errors).toEqual(['watch /api/v1/nodes: connection cut by the server or the network']);
    // and the next relist goes back to the last resourceVersion seen
    server.dropConnections();
    await until(() => seen.lists === 3, 5000, 'relist again');
    expect(lists().at(-1)).toEqual({ resourceVersion: rv });
  });

  it('429 and 5xx with Retry-After are retried after the wait asked; once retries run out the loop waits at least that long', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const { c, clock } = await client({ maxRetries: 2 });
    server.inject({ status: 429, retryAfterSeconds: 3 });
    server.inject({ status: 503, retryAfterSeconds: 2 });
    expect(await c.getJson('/api/v1/nodes/n0')).toMatchObject({ metadata: { name: 'n0' } });
    expect(clock.sleeps).toEqual([3000, 2000]);
    // a 500 without Retry-After is not retried by the request
    server.inject({ status: 500 });
    await expect(c.getJson('/api/v1/nodes/n0')).rejects.toThrow('GET /api/v1/nodes/n0: 500 injected 500');
    // out of retries: the ApiError carries the last Retry-After, and the loop's delay is at least that
    server.inject({ status: 429, retryAfterSeconds: 7, times: 3 });
    const err = await c.getJson('/api/v1/nodes/n0').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ statusCode: 429, retryAfterMs: 7000 });
    server.inject({ status: 429, retryAfterSeconds: 7, times: 3 });
    const { seen } = loop(c, clock);
    await until(() => seen.lists === 1 && server.openWatches('nodes') === 1, 5000, 'sync after the 429s');
    expect(seen.errors).toEqual(['GET /api/v1/nodes?limit=500&resourceVersion=0: 429 injected 429']);
    expect(clock.timers).toEqual([7000]); // not the 500 ms backoff
  });

  it('a watch refused with 429 (retries spent) is asked again from the same resourceVersion after the backoff, without a relist', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const { c, clock } = await client({ maxRetries: 0 });
    server.inject({ status: 429, retryAfterSeconds: 2, match: (r) => r.query.watch === 'true' });
    const { seen } = loop(c, clock);
    await until(() => seen.lists === 1 && server.openWatches('nodes') === 1, 5000, 'watching');
    expect(seen.errors).toEqual(['watch /api/v1/nodes: 429 injected 429']);
    expect(clock.timers).toEqual([2000]);
    const watches = server.requests.filter((r) => r.query.watch === 'true').map((r) => r.query.resourceVersion);
    expect(watches).toEqual(['101', '101']);
    expect(lists()).toHaveLength(1);
  });

  it('a 401 reads a token file again and retries once; a token given inline is not retried', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const kc = await server.writeKubeconfig({ tokenFile: true });
    const c = loadKubeConfig({ kubeconfig: kc });
    expect(await c.getJson('/api/v1/nodes/n0')).toMatchObject({ metadata: { name: 'n0' } });
    server.rotateToken('second');
    await writeFile(join(kc, '..', 'token.new'), 'second\n');
    await rename(join(kc, '..', 'token.new'), join(kc, '..', 'token'));
    expect(await c.getJson('/api/v1/nodes/n0')).toMatchObject({ metadata: { name: 'n0' } });
    expect(server.unauthorized).toBe(1);
    const inline = loadKubeConfig({ kubeconfig: await server.writeKubeconfig() });
    server.rotateToken('third');
    await expect(inline.getJson('/api/v1/nodes/n0')).rejects.toThrow('GET /api/v1/nodes/n0: 401 Unauthorized');
    expect(server.unauthorized).toBe(2);
  });

  it('a watch line over maxWatchLineBytes ends the watch with an error naming the limit, and the loop relists', async () => {
    server = new FakeApiServer();
    server.apply(rawNode('n0', '192.0.2.1'));
    await server.start();
    const { c, clock } = await client({ maxWatchLineBytes: 4096 });
    const { seen } = loop(c, clock);
    await until(() => seen.lists === 1 && server.openWatches('nodes') === 1, 5000, 'first sync');
    server.apply(rawNode('n1', '192.0.2.2')); // an ordinary line passes
    await until(() => seen.events.length === 1, 5000, 'event');
    server.sendRaw(`{"type":"ADDED","object":{"metadata":{"name":"big","resourceVersion":"999"},"pad":"${'x'.repeat(3000)}`);
    server.sendRaw(`${'x'.repeat(3000)}"}}\n`);
    await until(() => seen.lists === 2 && server.openWatches('nodes') === 1, 5000, 'relist');
    expect(seen.errors).toEqual(['watch /api/v1/nodes: a watch line over 4096 bytes (maxWatchLineBytes); restarting the watch']);
    expect(seen.events).toEqual(['ADDED n1']);
  });
});

describe('abort from inside the watch', () => {
  it('abort() called from onEvent, on a response that ended in the same chunk on a kept-alive socket, throws nothing uncaught', async () => {
    // Node's own `signal` option destroyed the socket with an AbortError that had no listener here (CI saw it once)
    const http = await import('node:http');
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}}\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      const port = (server.address() as AddressInfo).port;
      const c = new KubeClient(parseKubeconfig(kubeconfig({ server: `http://127.0.0.1:${port}` }), '/k/config'));
      let events = 0;
      for (let i = 0; i < 20; i++) {
        const w = c.watch('/api/v1/nodes', {}, () => {
          events++;
          w.abort();
        });
        await w.done;
      }
      // let any late emission surface before counting
      await new Promise((r) => setTimeout(r, 50));
      expect(events).toBe(20);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
