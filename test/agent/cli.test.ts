import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { defaultControlPath } from '../../src/agent/control.js';
import type { PlanJson } from '../../src/agent/views.js';
import { run } from './cli-helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const yb = join(root, 'examples/yaobank');
const STEPS = ['01-service-cluster-ips', '02-customer-local', '03-service-external-ips', '04-customer-external-ip'].map((s) => join(yb, 'steps', `${s}.yaml`));
const layers = (step: number) => [join(yb, 'base'), ...STEPS.slice(0, step)];

const blocks = { worker1: '198.19.0.64/26', worker2: '198.19.0.128/26', master1: '198.19.0.0/26' } as const;
type NodeName = keyof typeof blocks;
/** examples/yaobank/README.md's table. */
function expectedRoutes(step: number, node: NodeName): string[] {
  const r: string[] = [blocks[node]];
  if (step >= 1) r.push('198.18.0.0/16');
  if (step >= 2 && node === 'worker1') r.push('198.18.217.62/32');
  if (step >= 3) r.push('203.0.113.0/24');
  if (step >= 4 && node === 'worker1') r.push('203.0.113.10/32');
  return r.sort(cmpPrefix);
}
function cmpPrefix(a: string, b: string): number {
  const num = (p: string) =>
    p
      .split('/')[0]
      .split('.')
      .reduce((x, o) => x * 256 + Number(o), 0);
  return num(a) - num(b) || Number(a.split('/')[1]) - Number(b.split('/')[1]);
}

function assertShape(v: PlanJson): void {
  expect(Object.keys(v).sort()).toEqual([
    'errors',
    'exportPolicy',
    'ignored',
    'kernel',
    'listen',
    'node',
    'peers',
    'redistributed',
    'refused',
    'routerId',
    'routes',
    'version',
    'warnings',
  ]);
  expect(v.routerId).toBe(v.node.ipv4);
  expect(v.listen).toEqual({ addresses: [], port: v.node.listenPort });
  expect(v.version).toBe(1);
  expect(v.exportPolicy).toBe('builtin+filters');
  for (const r of v.routes) {
    expect(Object.keys(r).sort()).toEqual(['communities', 'prefix', 'reasons']);
    expect(r.prefix).toMatch(/^[0-9.]+\/\d+$/);
    expect(Array.isArray(r.communities)).toBe(true);
    expect(r.reasons.length).toBeGreaterThan(0);
    for (const x of r.reasons) expect(typeof x.kind === 'string' && typeof x.text === 'string').toBe(true);
  }
  for (const p of v.peers) {
    expect(Object.keys(p).sort()).toEqual([
      'addPaths',
      'address',
      'asn',
      'bfd',
      'exportChain',
      'exports',
      'filters',
      'gracefulRestart',
      'holdTime',
      'id',
      'importChain',
      'keepaliveTime',
      'localAsn',
      'maxPrefixes',
      'nextHopMode',
      'numAllowedLocalASNumbers',
      'origin',
      'passive',
      'password',
      'port',
      'reachableBy',
      'refused',
      'routeReflectorClusterId',
      'sourceAddress',
      'ttlSecurity',
      'type',
    ]);
    // Every peer of the lab: from the node's address, Calico's defaults (BIRD: ttl security off, graceful restart 120 s, add paths on).
    expect([p.sourceAddress, p.ttlSecurity, p.gracefulRestart, p.addPaths, p.holdTime]).toEqual([
      v.node.ipv4,
      null,
      { restartTime: 120, longLivedStaleTime: null },
      'both',
      90,
    ]);
    expect(p.maxPrefixes).toEqual({
      limit: expect.stringMatching(/^(none|\d+,(block|warn|restart),\d+%)$/),
      from: expect.stringMatching(/^(annotation|agent)$/),
    });
    expect([p.importChain.otherwise, p.exportChain.otherwise, Array.isArray(p.exportChain.filters), Array.isArray(p.exportChain.skipped)]).toEqual([
      'accept',
      'builtin',
      true,
      true,
    ]);
    expect(['global', 'node specific', 'node-to-node mesh']).toContain(p.type);
    expect(typeof p.port).toBe('number');
  }
  for (const r of v.refused) expect(Object.keys(r).sort()).toEqual(['ip', 'message', 'name', 'namespace', 'reason', 'service', 'source']);
  for (const e of [...v.errors, ...v.warnings, ...v.ignored]) expect(Object.keys(e).sort()).toEqual(['field', 'file', 'kind', 'message', 'name', 'namespace']);
}

describe('tsbgp plan over examples/yaobank', () => {
  for (let step = 0; step <= 4; step++) {
    for (const node of ['worker1', 'worker2', 'master1'] as const) {
      it(`step ${step}, ${node}: the lab's routes, exported to every peer, in the documented shape`, async () => {
        const res = await run(['plan', '--node', node, '--json', ...layers(step).flatMap((p) => ['--manifests', p])]);
        expect(res.stderr).toBe('');
        expect(res.code).toBe(0);
        const v = JSON.parse(res.stdout) as PlanJson;
        assertShape(v);
        expect(v.node.name).toBe(node);
        expect(v.routes.map((r) => r.prefix)).toEqual(expectedRoutes(step, node));
        expect(v.peers.map((p) => p.type).sort()).toEqual(['global', 'node-to-node mesh', 'node-to-node mesh']);
        const host1 = v.peers.find((p) => p.type === 'global')!;
        expect([host1.address, host1.asn, host1.port]).toEqual(['192.0.2.20', 65000, 179]);
        for (const p of v.peers) expect(p.exports).toEqual(expectedRoutes(step, node));
        expect(v.errors).toEqual([]);
        // ipipMode is read (kernel programming); natOutgoing stays ignored
        expect(v.ignored.map((i) => i.kind)).toEqual(['IPPool', 'Namespace', 'Deployment']);
        expect(v.warnings).toEqual([]);
        if (step === 4 && node !== 'worker1') {
          expect(v.refused).toEqual([
            {
              service: 'yaobank/customer',
              namespace: 'yaobank',
              name: 'customer',
              ip: '203.0.113.10',
              source: 'externalIP',
              reason: 'not-local',
              message: `externalTrafficPolicy=Local and no endpoint runs on node ${node}`,
            },
          ]);
        } else expect(v.refused).toEqual([]);
      });
    }
  }

  it('step 2, worker1: the /32 names the Service and rule that caused it; the block names its pool', async () => {
    const v = JSON.parse((await run(['plan', '--node', 'worker1', '--json', '--manifests', ...layers(2)])).stdout) as PlanJson;
    expect(v.routes.find((r) => r.prefix === '198.18.217.62/32')!.reasons).toEqual([
      {
        kind: 'Service',
        namespace: 'yaobank',
        name: 'customer',
        ip: '198.18.217.62',
        source: 'clusterIP',
        rule: 'externalTrafficPolicy=Local with a ready local endpoint',
        text: 'Service yaobank/customer clusterIP 198.18.217.62: externalTrafficPolicy=Local with a ready local endpoint',
      },
    ]);
    expect(v.routes.find((r) => r.prefix === '198.19.0.64/26')!.reasons[0].text).toContain('IPPool default-ipv4-ippool');
  });

  it('text output lists routes with reasons, peers and exports', async () => {
    const res = await run(['plan', '--node', 'worker1', '--manifests', ...layers(4)]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('203.0.113.10/32  ← Service yaobank/customer externalIP 203.0.113.10');
    expect(res.stdout).toMatch(/192\.0\.2\.20:179 AS 65000 global ← BGPPeer host1 {2}max-prefixes 20000,block,80% {2}exports: .*203\.0\.113\.10\/32/);
  });

  it('invalid manifests: exit 1, each error with file, kind, name and field, the valid rest still planned', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-plan-'));
    await writeFile(
      join(dir, 'bad.yaml'),
      'apiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: bad}\nspec: {peerIP: 300.1.1.1, asNumber: 65000}\n',
    );
    const res = await run(['plan', '--node', 'worker1', '--json', '--manifests', join(yb, 'base'), '--manifests', dir]);
    expect(res.code).toBe(1);
    const v = JSON.parse(res.stdout) as PlanJson;
    assertShape(v);
    expect(v.errors).toEqual([
      { file: join(dir, 'bad.yaml'), kind: 'BGPPeer', namespace: null, name: 'bad', field: 'spec.peerIP', message: expect.stringContaining('300') },
    ]);
    expect(v.routes.map((r) => r.prefix)).toEqual(['198.19.0.64/26']);
    expect(res.stderr).toContain('spec.peerIP');
  });

  it('a missing manifest path is an error naming it; an unknown node is an error too', async () => {
    const missing = await run(['plan', '--node', 'worker1', '--manifests', '/nonexistent/tsbgp']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('/nonexistent/tsbgp: cannot read: ENOENT');
    const ghost = await run(['plan', '--node', 'ghost', '--json', '--manifests', join(yb, 'base')]);
    expect(ghost.code).toBe(1);
    expect((JSON.parse(ghost.stdout) as PlanJson).errors.map((e) => e.message)).toEqual([expect.stringContaining('node ghost is not in the cluster state')]);
  });

  it('refused peers (TCP MD5) appear in errors, not started, with no exports', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-plan-'));
    await writeFile(
      join(dir, 'md5.yaml'),
      'apiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: secure}\nspec: {peerIP: 192.0.2.99, asNumber: 65099, password: {secretKeyRef: {name: s, key: k}}}\n',
    );
    const res = await run(['plan', '--node', 'worker1', '--json', '--manifests', join(yb, 'base'), '--manifests', dir]);
    const v = JSON.parse(res.stdout) as PlanJson;
    expect(res.code).toBe(1);
    expect(v.peers.find((p) => p.address === '192.0.2.99')).toMatchObject({ refused: true, exports: [] });
    expect(v.errors).toEqual([expect.objectContaining({ kind: 'BGPPeer', name: 'secure', field: 'spec.password' })]);
  });
});

describe('CLI flags', () => {
  it.each([
    [
      ['plan', '--bogus'],
      'plan: unknown flag --bogus; its flags: --node, --manifests, --json, --listen-port, --max-prefixes, --strict, --endpoint-status-dir\n',
    ],
    [['plan', '--nod', 'w'], 'plan: unknown flag --nod (did you mean --node?)'],
    [['status', '--jsn'], 'status: unknown flag --jsn (did you mean --json?); its flags: --json, --control\n'],
    [['routes', 'x'], 'routes: unexpected argument "x": this command takes flags only'],
    [['plan', '--manifests', 'x'], '--node is required'],
    [['plan', '--node', 'w'], '--manifests PATH is required'],
    [['plan', '--node'], "Option '--node <value>' argument missing"],
    [['agent', '--node', 'w', '--manifests', 'x', '--listen-port', '70000'], '--listen-port must be a port number 1-65535'],
    [['agent', '--node', 'w', '--manifests', 'x', '--log-level', 'loud'], '--log-level: invalid log level "loud"'],
    [['agent', '--node', 'w', '--manifests', 'x', '--drain-close', 'soft'], 'agent: --drain-close must be one of hard-reset, keep-stale, got "soft"'],
    [['status', '--peer', '1.2.3.4'], 'status: unknown flag --peer; its flags: --json, --control'],
    [['status', 'a', 'b'], 'status: expected at most one PEER, got 2'],
    [['routes', '--json=3'], '--json'],
    [['explain'], 'expected one PREFIX or NAMESPACE/SERVICE, got 0'],
    [['explain', 'not-a-thing'], 'cannot explain "not-a-thing"'],
  ])('%j → exit 2 naming the problem', async (argv, message) => {
    const res = await run(argv);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
    expect(res.stdout).toBe('');
  });

  it('an unknown command exits 2 with the usage; help and version exit 0', async () => {
    const bad = await run(['frobnicate']);
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'tsbgp: unknown command "frobnicate"; commands: agent, status, routes, explain, drain, plan, version, help\nrun \'tsbgp help\' for usage\n',
    ]);
    const typo = await run(['statsu']);
    expect([typo.code, typo.stderr.split('\n')[0]]).toEqual([
      2,
      'tsbgp: unknown command "statsu" (did you mean status?); commands: agent, status, routes, explain, drain, plan, version, help',
    ]);
    expect((await run(['help'])).stdout).toContain('explain  PREFIX|NAMESPACE/SERVICE');
    expect((await run(['version'])).stdout).toMatch(/^tsbgp \d+\.\d+\.\d+\n$/);
  });

  it('status with no agent listening says so and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-cli-'));
    const res = await run(['status', '--control', join(dir, 'none.sock')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`no tsbgp agent at ${join(dir, 'none.sock')}`);
  });

  it('runs as a process: node --import tsx src/agent/main.ts plan … (exit code and JSON)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'src/agent/main.ts', 'plan', '--node', 'worker1', '--json', '--manifests', ...layers(4)],
      { cwd: root },
    );
    expect((JSON.parse(stdout) as PlanJson).routes.map((r) => r.prefix)).toEqual(expectedRoutes(4, 'worker1'));
    const bad = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/agent/main.ts', 'plan', '--nod', 'x'], { cwd: root }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect('code' in bad && bad.code).toBe(2);
    // Two Node.js processes compiling TypeScript: seconds each on a loaded machine.
  }, 300_000);
});

describe('CLI help and strict plans', () => {
  it('help gives the control socket default as it is for the user running it', async () => {
    const help = await run(['help', 'status']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`for you now: ${defaultControlPath(process.env)})`);
    expect(help.stdout).not.toContain('{control}');
  });

  it('plan --strict fails on a warning (a misspelt field), plain plan passes it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-strict-'));
    await writeFile(
      join(dir, 'typo.yaml'),
      'apiVersion: projectcalico.org/v3\nkind: BGPConfiguration\nmetadata: {name: default}\nspec: {asNumber: 64512, serviceClusterIps: [{cidr: 198.18.0.0/16}]}\n' +
        'apiVersion: v1\nkind: Node\nmetadata: {name: w1, annotations: {projectcalico.org/IPv4Address: 192.0.2.10/24}}\n'.replace(/^/, '---\n'),
    );
    const plain = await run(['plan', '--node', 'w1', '--manifests', dir]);
    expect(plain.code).toBe(0);
    const strict = await run(['plan', '--node', 'w1', '--strict', '--manifests', dir]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/warning: .*spec\.serviceClusterIps.*did you mean serviceClusterIPs\?/);
    expect(strict.stderr).toContain('tsbgp plan: 1 warning (--strict)\n');
  });
});

describe("the README's quick-start tour", () => {
  it('examples/yaobank/tour points worker1 at the router of examples/router.ts, and the block is planned for it', async () => {
    const yb = join(root, 'examples/yaobank');
    const res = await run(['plan', '--node', 'worker1', '--json', '--manifests', join(yb, 'base'), '--manifests', join(yb, 'tour')]);
    expect(res.code).toBe(0);
    const v = JSON.parse(res.stdout) as PlanJson;
    expect(v.node.ipv4).toBe('127.0.0.10');
    expect(v.peers.find((p) => p.address === '127.0.0.20')).toMatchObject({ port: 1180, asn: 65000, exports: ['198.19.0.64/26'] });
    const router = await readFile(join(root, 'examples/router.ts'), 'utf8');
    expect(router).toContain("listen: { addresses: ['127.0.0.20'], port: 1180 }");
    expect(router).toContain("address: '127.0.0.10', port: 1179, asn: 64512");
  });
});
