/**
 * `tsbgp agent` with the Kubernetes API source: the flags (one source, the
 * node name from the environment, clear errors) and a real process reading
 * the fake API server through --kubeconfig, with metrics and Events.
 */
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusJson } from '../../src/agent/agent.js';
import { parseAgentArgs } from '../../src/agent/cli.js';
import { FakeApiServer } from '../kubernetes/fake-apiserver.js';
import { freePort, run } from './cli-helpers.js';
import { scrapeUrl } from './exposition.js';
import { bgpConfiguration, node, NODE, service, until } from './k8s-harness.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('tsbgp agent source flags', () => {
  it.each([
    [['agent', '--node', 'w'], {}, 'agent: a source is required: --manifests PATH, --kubeconfig PATH or --in-cluster'],
    [['agent', '--node', 'w', '--manifests', 'x', '--in-cluster'], {}, 'agent: --manifests and --in-cluster are exclusive: give exactly one source'],
    [['agent', '--node', 'w', '--kubeconfig', 'k', '--in-cluster'], {}, 'agent: --kubeconfig and --in-cluster are exclusive'],
    [['agent', '--node', 'w', 'extra/path', '--kubeconfig', 'k'], {}, 'agent: --manifests and --kubeconfig are exclusive'],
    [['agent', '--in-cluster'], {}, 'agent: --node NAME is required (or set NODENAME or CALICO_K8S_NODE_REF)'],
    [['agent', '--in-cluster'], { NODENAME: '' }, 'agent: --node NAME is required'],
    [['agent', '--node', '', '--in-cluster'], {}, 'agent: --node must not be empty'],
    [['agent', '--node', 'w', '--kubeconfig', ''], {}, 'agent: --kubeconfig must name a file'],
    [['agent', '--node', 'w', '--in-cluster=yes'], {}, "Option '--in-cluster' does not take an argument"],
    [['agent', '--node', 'w', '--in-cluster', '--metrics-port=9900'], {}, 'agent: unknown flag --metrics-port;'],
  ] as [string[], Record<string, string>, string][])('%j (env %j) → exit 2 naming the problem', async (argv, env, message) => {
    const res = await run(argv, { env });
    expect(res.stderr).toContain(message);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
  });

  it('the node name: --node, else NODENAME, else CALICO_K8S_NODE_REF', () => {
    const env = { NODENAME: 'from-nodename', CALICO_K8S_NODE_REF: 'from-calico' };
    expect(parseAgentArgs(['--node', 'flag', '--in-cluster'], env).node).toBe('flag');
    expect(parseAgentArgs(['--in-cluster'], env).node).toBe('from-nodename');
    expect(parseAgentArgs(['--in-cluster'], { CALICO_K8S_NODE_REF: 'from-calico' }).node).toBe('from-calico');
    expect(parseAgentArgs(['--node', 'n', '--kubeconfig', '/k']).source).toEqual({ kind: 'kubeconfig', path: '/k' });
    expect(parseAgentArgs(['--node', 'n', 'a', '--manifests', 'b']).source).toEqual({ kind: 'manifests', paths: ['b', 'a'] });
  });

  it('--in-cluster outside a cluster and a missing kubeconfig are errors naming the flag (exit 1)', async () => {
    const outside = await run(['agent', '--node', 'w', '--in-cluster'], { env: {} });
    expect(outside.code).toBe(1);
    expect(outside.stderr).toBe(
      'tsbgp agent: --in-cluster: not running in a cluster (KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT unset) and no --kubeconfig given\n',
    );
    const missing = await run(['agent', '--node', 'w', '--kubeconfig', '/nonexistent/kubeconfig'], { env: {} });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^tsbgp agent: --kubeconfig \/nonexistent\/kubeconfig: .*ENOENT/);
  });
});

describe('tsbgp agent --kubeconfig (a real process)', () => {
  let server: FakeApiServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('syncs, advertises, reports the source in status and metrics, writes Events; exits 0 on SIGTERM', async () => {
    server = new FakeApiServer();
    server.apply(node(NODE, '127.0.0.1', { podCIDRs: ['10.244.1.0/24'] }));
    server.apply(bgpConfiguration());
    server.apply(service('web', { externalIPs: ['198.51.100.7'] }));
    await server.start();
    const kubeconfig = await server.writeKubeconfig();
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-k8s-cli-'));
    const control = join(dir, 'tsbgp.sock');
    const [bgpPort, httpPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = { ...process.env, NODENAME: NODE, TSBGP_CONTROL: control };
    delete env.CALICO_K8S_NODE_REF;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/agent/main.ts',
        'agent',
        '--kubeconfig',
        kubeconfig,
        '--listen-port',
        String(bgpPort),
        `--metrics=127.0.0.1:${httpPort}`,
        '--drain-time',
        '0',
      ],
      { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    try {
      const url = `http://127.0.0.1:${httpPort}`;
      let ready = false;
      const t0 = Date.now();
      while (!ready) {
        if (Date.now() - t0 > 120_000) throw new Error(`not ready within 120 s; stderr: ${err}`);
        ready =
          (await fetch(`${url}/readyz`).then(
            (r) => r.status,
            () => 0,
          )) === 200;
        if (!ready) await new Promise((r) => setTimeout(r, 100));
      }
      // `tsbgp status` finds the socket through TSBGP_CONTROL, as `kubectl exec` in the DaemonSet does.
      const st = JSON.parse((await run(['status', '--json'], { env: { TSBGP_CONTROL: control } })).stdout) as StatusJson;
      expect(st.node).toBe(NODE);
      expect(st.source).toMatchObject({ kind: 'kubernetes', server: server.url, connected: true, synced: true });
      expect(st.refused).toEqual([expect.objectContaining({ ip: '198.51.100.7', reason: 'outside allow-list' })]);
      const m = await scrapeUrl(`${url}/metrics`);
      expect(m.get('tsbgp_kubernetes_api_connected')).toBe(1);
      expect(m.get('tsbgp_routes_refused', { reason: 'outside allow-list' })).toBe(1);
      await until('NotAdvertised event', () => server!.list('events').length === 1, 5000);
      expect(server.list('events')[0]).toMatchObject({
        reason: 'NotAdvertised',
        involvedObject: { kind: 'Service', name: 'web' },
        source: { component: 'tsbgp', host: NODE },
      });
      const logs = err
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { msg: string; source?: string });
      expect(logs.find((l) => l.msg === 'tsbgp agent starting')).toMatchObject({ source: 'kubernetes' });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);

  it('SIGTERM while the first sync waits for an unreachable API server: exits 0 at once', async () => {
    server = new FakeApiServer();
    await server.start();
    const kubeconfig = await server.writeKubeconfig();
    await server.stop();
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-k8s-cli-'));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/agent/main.ts', 'agent', '--node', NODE, '--kubeconfig', kubeconfig, '--control', join(dir, 'tsbgp.sock')],
      { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    await until('an API error logged', () => err.includes('ECONNREFUSED'), 120_000);
    // The control socket already answers.
    const st = JSON.parse((await run(['status', '--json', '--control', join(dir, 'tsbgp.sock')])).stdout) as StatusJson;
    expect(st.source).toMatchObject({ kind: 'kubernetes', synced: false, connected: false });
    const t0 = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    const msgs = err
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(msgs).toEqual(expect.arrayContaining(['waiting for the first sync of the Kubernetes API', 'received SIGTERM', 'tsbgp agent shutting down']));
  }, 180_000);
});
