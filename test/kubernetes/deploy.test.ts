/**
 * deploy/ and the Dockerfile against the real code: the DaemonSet's args go
 * through the agent's own flag parser, its probes hit the metrics server's
 * real endpoints, and the image holds what package.json publishes. So the
 * manifests cannot drift from the CLI again.
 */
import { DEFAULT_DRAIN_SECONDS } from '../../src/agent/drain.js';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { parseAgentArgs } from '../../src/agent/cli.js';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { startMetricsServer, type MetricsServer } from '../../src/agent/metrics-server.js';
import { requireKubectl } from './kubectl.js';

const kubectl = requireKubectl();
const root = fileURLToPath(new URL('../../', import.meta.url));

const text = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');
const ds = parse(text('deploy/daemonset.yaml')) as Record<string, any>;
const pod = ds.spec.template.spec;
const c = pod.containers[0];
const pkg = JSON.parse(text('package.json')) as { bin: Record<string, string>; files: string[]; main: string };

/** The container's environment as the kubelet would set it on node `worker7`. */
function containerEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env as { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[]) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName') env[e.name] = 'worker7';
    else if (e.valueFrom?.fieldRef?.fieldPath === 'status.hostIP') env[e.name] = '192.0.2.7';
    else throw new Error(`env ${e.name}: unsupported source in this test`);
  }
  return env;
}

/** The Dockerfile's instructions of the last stage, e.g. [['COPY', 'bin ./bin'], …]. */
function finalStage(): [string, string][] {
  const lines = text('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const from = lines.map((l, i) => (l.startsWith('FROM ') ? i : -1)).filter((i) => i >= 0);
  return lines.slice(from.at(-1)).map((l) => {
    const i = l.indexOf(' ');
    return [l.slice(0, i), l.slice(i + 1)];
  });
}

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('deploy/daemonset.yaml against the CLI', () => {
  it('its args are accepted by the real agent parser: in-cluster, node from NODENAME, metrics on the container port', () => {
    expect(c.args[0]).toBe('agent');
    // The kubelet expands $(VAR) in args from the container's env.
    const env = containerEnv();
    const args = (c.args as string[]).map((x) => x.replace(/\$\(([A-Z_]+)\)/g, (_, n: string) => env[n] ?? `$(${n})`));
    const a = parseAgentArgs(args.slice(1), env);
    expect(a.source).toEqual({ kind: 'in-cluster' });
    expect(a.node).toBe('worker7');
    const metricsPort = c.ports.find((p: { name: string }) => p.name === 'metrics').containerPort;
    // Probes come from the kubelet to the node address (host network, pod IP = node IP): the node's own address, not every interface.
    expect(a.metrics).toEqual({ host: '192.0.2.7', port: metricsPort });
  });

  it('terminationGracePeriodSeconds covers the drain time (RFC 8326) with room to close the sessions', () => {
    const env = containerEnv();
    const args = (c.args as string[]).map((x) => x.replace(/\$\(([A-Z_]+)\)/g, (_, n: string) => env[n] ?? `$(${n})`));
    const drain = parseAgentArgs(args.slice(1), env).drainTime ?? DEFAULT_DRAIN_SECONDS;
    expect(drain).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(drain + 10);
  });

  it('the control socket (TSBGP_CONTROL) lies on a writable volume of the read-only container', () => {
    const socket = containerEnv().TSBGP_CONTROL;
    expect(socket).toMatch(/^\/var\/run\/tsbgp\//);
    const mount = (c.volumeMounts as { name: string; mountPath: string }[]).find((m) => socket.startsWith(`${m.mountPath}/`));
    expect(mount).toBeDefined();
    expect(pod.volumes.find((v: { name: string }) => v.name === mount!.name).emptyDir).toBeDefined();
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
  });

  it('its NODE_OPTIONS are accepted by node and cap the young generation (docs/performance.md, "V8 flags")', async () => {
    const env = containerEnv();
    expect(env.NODE_OPTIONS).toBe('--max-semi-space-size=2');
    // Short-lived objects that survive a scavenge or two grow the young generation to its cap.
    const churn =
      "let keep = []; for (let i = 0; i < 3e6; i++) { keep.push({ i }); if (keep.length > 200000) keep = []; } process.stdout.write(String(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));";
    const newSpace = async (nodeOptions: string | undefined) => {
      const { stdout } = await promisify(execFile)(process.execPath, ['-e', churn], { env: { ...process.env, NODE_OPTIONS: nodeOptions ?? '' } });
      return Number(stdout);
    };
    const [deployed, v8Default] = await Promise.all([newSpace(env.NODE_OPTIONS), newSpace(undefined)]);
    expect(deployed).toBeGreaterThan(0);
    expect(deployed).toBeLessThanOrEqual(4 * 2 ** 20);
    // the control: without the flag the same churn grows it further, so the bound above can fail
    expect(v8Default).toBeGreaterThan(4 * 2 ** 20);
  });

  it('the liveness and readiness probes name endpoints the metrics server answers', async () => {
    server = await startMetricsServer(new AgentMetrics({ processMetrics: false }), { host: '127.0.0.1', port: 0 });
    for (const probe of [c.livenessProbe, c.readinessProbe]) {
      const res = await fetch(`http://127.0.0.1:${server.address.port}${probe.httpGet.path}`);
      // 503 before an agent is attached is fine; 404 would mean the probe path does not exist.
      expect([200, 503]).toContain(res.status);
    }
    const res404 = await fetch(`http://127.0.0.1:${server.address.port}/nope`);
    expect(res404.status).toBe(404);
  });
});

describe.skipIf(!kubectl)('kubectl kustomize', () => {
  const build = async (dir: string) => {
    const { stdout } = await promisify(execFile)(kubectl!, ['kustomize', dir], { cwd: root, timeout: 30_000 });
    return parseAllDocuments(stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } });
  };

  it('deploy/ builds the agent in kube-system with its account, role and binding; deploy/crds the five Calico CRDs it reads and CalicoNodeStatus', async () => {
    const base = await build('deploy');
    expect(base.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/tsbgp',
      'ClusterRoleBinding/tsbgp',
      'DaemonSet/tsbgp',
      'Role/tsbgp-bgp-passwords',
      'RoleBinding/tsbgp-bgp-passwords',
      'ServiceAccount/tsbgp',
    ]);
    for (const o of base) expect(o.metadata.labels?.['app.kubernetes.io/name']).toBe('tsbgp');
    for (const o of base.filter((x) => x.kind === 'DaemonSet' || x.kind === 'ServiceAccount')) expect(o.metadata.namespace).toBe('kube-system');
    const crds = await build('deploy/crds');
    expect(crds.map((o) => o.metadata.name).sort()).toEqual(
      ['bgpconfigurations', 'bgpfilters', 'bgppeers', 'blockaffinities', 'caliconodestatuses', 'ippools'].map((p) => `${p}.crd.projectcalico.org`),
    );
  });
});

describe('Dockerfile', () => {
  const stage = finalStage();
  const args = (op: string) => stage.filter(([o]) => o === op).map(([, a]) => a);

  it('the runtime stage installs production dependencies only and holds what package.json publishes', () => {
    expect(text('Dockerfile')).toMatch(/^FROM node:\$\{NODE_VERSION\}-slim AS build$/m);
    expect(stage[0][1]).toBe('node:${NODE_VERSION}-slim');
    expect(args('RUN').some((r) => r.includes('npm ci --omit=dev'))).toBe(true);
    const copied = args('COPY').map((a) => a.replace(/^--from=build \/src\//, ''));
    for (const f of pkg.files)
      expect(
        copied.some((a) => a.startsWith(`${f} `)),
        `package.json files entry ${f}`,
      ).toBe(true);
    // bin/tsbgp.js imports the built CLI from dist/src, which "main" also points into.
    expect(text(pkg.bin.tsbgp)).toContain("import('../dist/src/agent/cli.js')");
    expect(pkg.main.startsWith('./dist/src/')).toBe(true);
  });

  it('runs the published bin as a non-root user; its default command parses, and exposes the DaemonSet ports', () => {
    expect(args('ENTRYPOINT').map((a) => JSON.parse(a) as unknown)).toEqual([['node', `/app/${pkg.bin.tsbgp.replace(/^\.\//, '')}`]]);
    expect(args('USER')).toEqual([`${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`]);
    const cmd = JSON.parse(args('CMD')[0]) as string[];
    expect(cmd[0]).toBe('agent');
    expect(parseAgentArgs(cmd.slice(1), { NODENAME: 'worker7' }).source).toEqual({ kind: 'in-cluster' });
    const exposed = args('EXPOSE')[0].split(/\s+/).map(Number);
    for (const p of c.ports as { containerPort: number }[]) expect(exposed).toContain(p.containerPort);
  });

  it('gives its file capabilities to node only, exactly those the DaemonSet adds (ip only reads: iproute2 would drop one anyway)', () => {
    const setcaps = [
      ...args('RUN')
        .join('\n')
        .matchAll(/setcap\s+(\S+)=\+ep\s+(\S+)/g),
    ].map((m) => ({ caps: m[1].split(','), file: m[2] }));
    expect(setcaps.map((s) => s.file)).toEqual(['/usr/local/bin/node']);
    const granted = setcaps[0].caps.map((cap) => cap.replace(/^cap_/, '').toUpperCase()).sort();
    expect(granted).toEqual([...(c.securityContext.capabilities.add as string[])].sort());
    expect(granted).toEqual(['NET_ADMIN', 'NET_BIND_SERVICE']);
  });
});
