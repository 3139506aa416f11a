/**
 * The Calico YAO Bank lab for real (examples/lab/yaobank.clab.yml): three
 * node namespaces running `tsbgp agent`, host1 running BIRD 2 and
 * programming its kernel table. The test replays the lab's steps by editing
 * a per-run copy of the manifests and checks host1's `ip route` and that
 * curl from host1 reaches the Services; then the allow-list, a live
 * BGPFilter, routes injected by a local GoBGP, IPv6, and kill -9 of an agent
 * under graceful restart.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../lab/eventually.js';
import { cleanupStale, Lab, type KernelRoute } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { alive, sleep } from '../lab/shell.js';
import { loadTopology } from '../lab/topology.js';
import { run as cli } from '../agent/cli-helpers.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOPOLOGY = join(repo, 'examples', 'lab', 'yaobank.clab.yml');
const available = requireLab(['bird', 'gobgp', 'tsbgp', 'bridge'], { binaries: ['curl', 'python3', 'node'] });

const W1 = '192.0.2.10';
const W2 = '192.0.2.11';
const M1 = '192.0.2.12';
const ALL = [W1, W2, M1];
const NAMES = ['worker1', 'worker2', 'master1'];
const BLOCKS = { '198.19.0.0/26': [M1], '198.19.0.64/26': [W1], '198.19.0.128/26': [W2] };
const STEP_FILES = ['01-service-cluster-ips.yaml', '02-customer-local.yaml', '03-service-external-ips.yaml', '04-customer-external-ip.yaml'];

/** `ip -j route` prints host routes without a length. */
const dst = (r: KernelRoute): string => (r.dst.includes('/') ? r.dst : `${r.dst}/${r.dst.includes(':') ? 128 : 32}`);
const hops = (r: KernelRoute): string[] => (r.nexthops ? r.nexthops.map((h) => h.gateway ?? '?') : [r.gateway ?? '?']).sort();

describe.skipIf(!available.ok)('YAO Bank lab: tsbgp agents and BIRD in namespaces', () => {
  let lab: Lab;
  let dir: string;
  const layer = (name: string) => join(dir, name);

  /** host1's BGP routes, prefix → sorted next hops. */
  const table = (family: 4 | 6 = 4): Record<string, string[]> =>
    Object.fromEntries(
      lab
        .kernelRoutes('host1', family)
        .filter((r) => r.protocol === 'bird')
        .map((r) => [dst(r), hops(r)]),
    );
  const curl = (ip: string): string => lab.exec('host1', ['curl', '-s', '-m', '2', ip.includes(':') ? `http://[${ip}]/` : `http://${ip}/`]).stdout.trim();
  const sock = (node: string) => join(lab.node(node).work, 'tsbgp.sock');
  const step = (n: number) => cpSync(join(repo, 'examples', 'yaobank', 'steps', STEP_FILES[n - 1]), join(layer(`step${n}`), STEP_FILES[n - 1]));

  beforeAll(async () => {
    cleanupStale();
    dir = mkdtempSync(join(tmpdir(), 'tsbgp-yaobank-'));
    cpSync(join(repo, 'examples', 'yaobank', 'base'), layer('base'), { recursive: true });
    cpSync(join(repo, 'examples', 'lab', 'yaobank', 'manifests'), layer('lab'), { recursive: true });
    for (const d of ['step1', 'step2', 'step3', 'step4', 'extra']) mkdirSync(layer(d));
    const layers = ['base', 'lab', 'step1', 'step2', 'step3', 'step4', 'extra'].map(layer).join(' ');
    const topo = loadTopology(TOPOLOGY);
    for (const n of topo.nodes) if (n.kind === 'tsbgp') n.env = { ...n.env, TSBGP_REPO: repo, TSBGP_MANIFESTS: layers };
    lab = await Lab.up(topo, { ephemeral: true });
  }, 60_000);
  afterAll(() => {
    lab?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('step 0: host1 learns each node’s pod block', async () => {
    await eventually(() => expect(table()).toEqual(BLOCKS), 45_000, 300);
    for (const n of NAMES) expect(lab.birdProtocols('host1').find((p) => p.name === n)?.details['BGP state']).toBe('Established');
  }, 50_000);

  it('step 1: serviceClusterIPs — the range via all three nodes (ECMP); curl reaches customer', async () => {
    step(1);
    await eventually(() => expect(table()).toEqual({ ...BLOCKS, '198.18.0.0/16': ALL }), 15_000, 200);
    expect(NAMES).toContain(curl('198.18.217.62'));
  });

  it('step 2: externalTrafficPolicy Local — customer’s /32 via worker1 only', async () => {
    step(2);
    await eventually(() => expect(table()).toEqual({ ...BLOCKS, '198.18.0.0/16': ALL, '198.18.217.62/32': [W1] }), 15_000, 200);
    expect(curl('198.18.217.62')).toBe('worker1');
  });

  it('step 3: serviceExternalIPs — the external range via all three nodes', async () => {
    step(3);
    await eventually(() => expect(table()).toEqual({ ...BLOCKS, '198.18.0.0/16': ALL, '198.18.217.62/32': [W1], '203.0.113.0/24': ALL }), 15_000, 200);
    expect(NAMES).toContain(curl('203.0.113.10'));
  });

  it('step 4: an external IP on customer — its /32 via worker1 only', async () => {
    step(4);
    await eventually(
      () => expect(table()).toEqual({ ...BLOCKS, '198.18.0.0/16': ALL, '198.18.217.62/32': [W1], '203.0.113.0/24': ALL, '203.0.113.10/32': [W1] }),
      15_000,
      200,
    );
    expect(curl('203.0.113.10')).toBe('worker1');
    expect(curl('198.18.217.62')).toBe('worker1');
  });

  it('an external IP outside the allow-list never reaches host1 and shows in tsbgp status', async () => {
    writeFileSync(
      join(layer('extra'), 'outside.yaml'),
      `apiVersion: v1
kind: Service
metadata: { name: outside, namespace: yaobank }
spec:
  type: ClusterIP
  clusterIP: 198.18.10.10
  externalIPs: [198.51.100.177]
  ports: [{ port: 80 }]
`,
    );
    // eventually() takes a synchronous check: poll the control socket by hand.
    const t0 = Date.now();
    while (!(await cli(['status', '--control', sock('worker1')])).stdout.includes('198.51.100.177') && Date.now() - t0 < 10_000) await sleep(200);
    const text = await cli(['status', '--control', sock('worker1')]);
    expect(text.stdout).toMatch(/198\.51\.100\.177/);
    const r = await cli(['status', '--json', '--control', sock('worker1')]);
    expect(JSON.parse(r.stdout).refused).toEqual([expect.objectContaining({ service: 'yaobank/outside', ip: '198.51.100.177' })]);
    await sleep(1000);
    expect(Object.keys(table()).filter((p) => p.startsWith('198.51.100.'))).toEqual([]);
  });

  it('a BGPFilter rejecting a CIDR toward host1 takes effect live, without a session reset', async () => {
    const since = () =>
      Object.fromEntries(
        lab
          .birdProtocols('host1')
          .filter((p) => NAMES.includes(p.name))
          .map((p) => [p.name, `${p.state} ${p.since}`]),
      );
    const before = since();
    const filter = join(layer('extra'), 'filter.yaml');
    writeFileSync(
      filter,
      `apiVersion: projectcalico.org/v3
kind: BGPFilter
metadata: { name: no-cluster-range }
spec:
  exportV4:
    - { action: Reject, matchOperator: Equal, cidr: 198.18.0.0/16 }
---
apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: host1 }
spec: { peerIP: 192.0.2.20, asNumber: 65000, filters: [no-cluster-range] }
`,
    );
    await eventually(
      () => {
        const t = table();
        expect(t['198.18.0.0/16']).toBeUndefined();
        expect(t['198.18.217.62/32']).toEqual([W1]);
      },
      15_000,
      200,
    );
    expect(since()).toEqual(before);
    const x = await cli(['explain', '198.18.0.0/16', '--json', '--control', sock('worker2')]);
    expect(JSON.parse(x.stdout).prefixes[0].peers.find((p: { address: string }) => p.address === '192.0.2.20')).toMatchObject({
      exported: false,
      why: 'BGPFilter no-cluster-range exportV4[0] rejects',
    });
    rmSync(filter);
    await eventually(() => expect(table()['198.18.0.0/16']).toEqual(ALL), 15_000, 200);
    expect(since()).toEqual(before);
  });

  it('a GoBGP on worker2 injects a /32 inside a disabled pool (reaches host1) and one outside every pool (does not)', async () => {
    writeFileSync(
      join(layer('extra'), 'gobgp.yaml'),
      `apiVersion: projectcalico.org/v3
kind: IPPool
metadata: { name: lb-pool }
spec: { cidr: 198.51.100.0/25, blockSize: 32, disabled: true }
---
apiVersion: projectcalico.org/v3
kind: BGPPeer
metadata: { name: worker2-gobgp }
spec: { node: worker2, peerIP: "127.0.0.2:1790", asNumber: 64513, sourceAddress: None }
`,
    );
    const n = lab.node('worker2');
    const conf = join(n.work, 'gobgpd.toml');
    cpSync(join(repo, 'examples', 'lab', 'yaobank', 'gobgp-worker2.toml'), conf);
    // Started in worker2's namespace; the lab's teardown kills every process there.
    const g = spawn('ip', ['netns', 'exec', n.ns, 'gobgpd', '-f', conf, '--api-hosts', '127.0.0.1:50052', '--pprof-disable'], {
      stdio: 'ignore',
      detached: true,
    });
    g.unref();
    const gobgp = (...args: string[]) => lab.exec('worker2', ['gobgp', '-p', '50052', ...args]);
    await eventually(() => expect(gobgp('global').status).toBe(0), 15_000, 200);
    expect(gobgp('global', 'rib', 'add', '-a', 'ipv4', '198.51.100.5/32', 'origin', 'igp').status).toBe(0);
    expect(gobgp('global', 'rib', 'add', '-a', 'ipv4', '198.51.100.200/32', 'origin', 'igp').status).toBe(0);
    await eventually(() => expect(table()['198.51.100.5/32']).toEqual([W2]), 20_000, 200);
    const x = await cli(['explain', '198.51.100.200/32', '--control', sock('worker2')]);
    expect(x.stdout).toContain('not inside any IP pool');
    expect(table()['198.51.100.200/32']).toBeUndefined();
  }, 40_000);

  it('an IPv6 service range and a /128 reach host1’s IPv6 table', async () => {
    writeFileSync(
      join(layer('extra'), 'ipv6.yaml'),
      `apiVersion: projectcalico.org/v3
kind: BGPConfiguration
metadata: { name: default }
spec:
  asNumber: 64512
  nodeToNodeMeshEnabled: true
  serviceClusterIPs: [{ cidr: 198.18.0.0/16 }, { cidr: "2001:db8:18::/112" }]
  serviceExternalIPs: [{ cidr: 203.0.113.0/24 }]
---
apiVersion: v1
kind: Service
metadata: { name: customer-v6, namespace: yaobank }
spec:
  type: NodePort
  clusterIP: "2001:db8:18::62"
  clusterIPs: ["2001:db8:18::62"]
  ipFamilies: [IPv6]
  externalTrafficPolicy: Local
  ports: [{ port: 80, nodePort: 30181 }]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: customer-v6-abcde
  namespace: yaobank
  labels: { kubernetes.io/service-name: customer-v6 }
addressType: IPv6
endpoints:
  - addresses: ["2001:db8:19::66"]
    nodeName: worker1
    conditions: { ready: true }
`,
    );
    await eventually(
      () => {
        const t = table(6);
        expect(t['2001:db8:18::/112']).toEqual(['2001:db8:2::10', '2001:db8:2::11', '2001:db8:2::12']);
        expect(t['2001:db8:18::62/128']).toEqual(['2001:db8:2::10']);
      },
      20_000,
      200,
    );
    expect(curl('2001:db8:18::62')).toBe('worker1');
  }, 30_000);

  it('kill -9 of an agent and its restart lose no route in host1’s kernel table (graceful restart)', async () => {
    const pairs = () =>
      new Set(
        lab
          .kernelRoutes('host1', 4)
          .filter((r) => r.protocol === 'bird')
          .flatMap((r) => hops(r).map((h) => `${dst(r)} via ${h}`)),
      );
    const before = pairs();
    expect(before.has('203.0.113.10/32 via 192.0.2.10')).toBe(true);
    const pidFile = join(lab.node('worker1').work, 'agent.pid');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    const missing = new Set<string>();
    let polls = 0;
    const deadline = Date.now() + 30_000;
    let backSince = 0;
    while (Date.now() < deadline) {
      const now = pairs();
      polls++;
      for (const p of before) if (!now.has(p)) missing.add(p);
      // Back: a new agent answering with an Established session to host1, then 2 s more to be sure.
      if (backSince === 0) {
        const st = await cli(['status', '--json', '--control', sock('worker1')]).catch(() => undefined);
        const up =
          st &&
          st.code === 0 &&
          (JSON.parse(st.stdout) as { peers: { address: string; state: string }[] }).peers.some((p) => p.address === '192.0.2.20' && p.state === 'Established');
        if (up && Number(readFileSync(pidFile, 'utf8')) !== pid) backSince = Date.now();
      } else if (Date.now() - backSince > 2000) break;
      await sleep(100);
    }
    expect(backSince, 'the agent came back').toBeGreaterThan(0);
    expect(polls).toBeGreaterThan(10);
    expect([...missing]).toEqual([]);
    expect(pairs()).toEqual(before);
  }, 40_000);
});
