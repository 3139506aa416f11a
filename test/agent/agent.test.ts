import { cp, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, SHUTDOWN_MESSAGE, type Agent, type RoutesJson, type StatusJson } from '../../src/agent/agent.js';
import { createLogger } from '../../src/agent/log.js';
import { renderExplain } from '../../src/agent/render.js';
import type { ExplainJson } from '../../src/agent/views.js';
import { sessionKey } from '../../src/speaker/peer-config.js';
import type { PeerOptions, SpeakerOptions } from '../../src/speaker/types.js';
import { run } from './cli-helpers.js';
import { FakeSpeaker } from './fake-speaker.js';

const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));

interface Harness {
  agent: Agent;
  speaker: () => FakeSpeaker;
  logs: Record<string, unknown>[];
  base: string;
  overlay: string;
  control: string;
}

const running: Agent[] = [];
afterEach(async () => {
  for (const a of running.splice(0)) await a.stop();
});

async function start(node = 'worker1', extra: { routerIdSetting?: string } = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'tsbgp-agent-'));
  const base = join(dir, 'base');
  const overlay = join(dir, 'overlay');
  await cp(join(yb, 'base'), base, { recursive: true });
  await mkdir(overlay);
  const logs: Record<string, unknown>[] = [];
  let speaker: FakeSpeaker | undefined;
  const control = join(dir, 'tsbgp.sock');
  const agent = await runAgent({
    node,
    manifests: [base, overlay],
    control,
    signals: false,
    debounceMs: 50,
    logger: createLogger({ level: 'debug', write: (l) => void logs.push(JSON.parse(l) as Record<string, unknown>) }),
    speakerFactory: (opts: SpeakerOptions) => (speaker = new FakeSpeaker(opts)),
    ...extra,
  });
  running.push(agent);
  return { agent, speaker: () => speaker!, logs, base, overlay, control };
}

/** Polls until `fn` holds, failing after `ms`; returns the time it took. */
async function within(ms: number, fn: () => boolean): Promise<number> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - t0;
}

const routesOf = (s: FakeSpeaker) => [...s.routes.keys()].sort();

describe('runAgent with a fake speaker', () => {
  it('starts the speaker from the plan and reconciles the base routes and peers', async () => {
    const h = await start();
    const s = h.speaker();
    expect(s.started).toBe(true);
    expect(s.options).toMatchObject({ asn: 64512, routerId: '192.0.2.10', listen: { port: 179 } });
    expect(routesOf(s)).toEqual(['198.19.0.64/26']);
    expect([...s.peers.keys()].sort()).toEqual(['192.0.2.11', '192.0.2.12', '192.0.2.20']);
    expect(s.peers.get('192.0.2.20')).toMatchObject({ asn: 65000, localAsn: 64512, gracefulRestart: { restartTime: 120 }, families: ['ipv4'] });
  });

  it("CALICO_ROUTER_ID: the speaker runs with the router ID it gives, not the node's address (status and plan say so)", async () => {
    const h = await start('worker1', { routerIdSetting: '198.51.100.7' });
    expect(h.speaker().options).toMatchObject({ asn: 64512, routerId: '198.51.100.7' });
    expect(h.agent.status().speaker).toMatchObject({ routerId: '198.51.100.7' });
  });

  it('a manifest edit is originated; an invalid edit is logged and not applied', async () => {
    const h = await start();
    const s = h.speaker();
    await cp(join(yb, 'steps/01-service-cluster-ips.yaml'), join(h.overlay, 'config.yaml'));
    // How fast is bench/agent-reconcile.ts's business; here only that it arrives (honest slack for a loaded machine).
    await within(10_000, () => s.routes.has('198.18.0.0/16'));
    expect(
      h.logs.find((l) => l.msg === 'configuration changed' && JSON.stringify(l.changes) === JSON.stringify(['update BGPConfiguration default'])),
    ).toBeDefined();
    expect(h.logs.find((l) => l.msg === 'applied configuration to the speaker')).toMatchObject({ originated: ['198.18.0.0/16'], withdrawn: [] });

    // Host bits set: invalid. The running configuration (with the /16) stays.
    const calls = s.calls.length;
    await writeFile(
      join(h.overlay, 'config.yaml'),
      'apiVersion: projectcalico.org/v3\nkind: BGPConfiguration\nmetadata: {name: default}\nspec:\n  serviceClusterIPs: [{cidr: 198.18.0.1/16}]\n',
    );
    // (A reload between writeFile's truncation and its write would also log the empty file: look for the resource's error.)
    const invalidConfig = (l: Record<string, unknown>) => l.level === 'error' && String(l.msg).includes('invalid manifest') && l.kind === 'BGPConfiguration';
    await within(10_000, () => h.logs.some(invalidConfig));
    const err = h.logs.find(invalidConfig)!;
    expect(err.msg).toContain(join(h.overlay, 'config.yaml'));
    expect(err).toMatchObject({ kind: 'BGPConfiguration', name: 'default', field: 'spec.serviceClusterIPs[0].cidr' });
    await h.agent.settled();
    expect(s.calls.slice(calls)).toEqual([]);
    expect(routesOf(s)).toEqual(['198.18.0.0/16', '198.19.0.64/26']);
    expect(h.agent.status().errors).toEqual([expect.objectContaining({ file: join(h.overlay, 'config.yaml'), field: 'spec.serviceClusterIPs[0].cidr' })]);

    // Fixing it clears the error; deleting the overlay's definition falls back to base (route withdrawn).
    // An empty list says so explicitly (a file with no documents at all would be a fault, kept: manifest-faults.test.ts).
    await writeFile(join(h.overlay, 'config.yaml'), '# nothing\napiVersion: v1\nkind: List\nitems: []\n');
    await within(10_000, () => !s.routes.has('198.18.0.0/16'));
    expect(h.agent.status().errors).toEqual([]);
  });

  it('refused IPs are logged once per change and kept for status', async () => {
    const h = await start('worker2');
    for (const [i, f] of ['01-service-cluster-ips', '04-customer-external-ip'].entries()) await cp(join(yb, `steps/${f}.yaml`), join(h.overlay, `${i}.yaml`));
    // Step 3's config: the external range.
    await cp(join(yb, 'steps/03-service-external-ips.yaml'), join(h.overlay, '0.yaml'));
    await within(10_000, () => h.speaker().routes.has('203.0.113.0/24'));
    await h.agent.settled();
    const refusedLogs = h.logs.filter((l) => String(l.msg).startsWith('not advertising externalIP 203.0.113.10'));
    expect(refusedLogs.length).toBeGreaterThanOrEqual(1);
    expect(refusedLogs[0]).toMatchObject({ level: 'warning', service: 'yaobank/customer', reason: 'not-local' });
    expect(h.agent.status().refused).toEqual([expect.objectContaining({ service: 'yaobank/customer', ip: '203.0.113.10', reason: 'not-local' })]);
    expect(h.speaker().routes.has('203.0.113.10/32')).toBe(false);
  });

  it('logs one line per session change; status, routes and explain answer over the control socket', async () => {
    const h = await start();
    const s = h.speaker();
    s.setState('192.0.2.20', 'Established', new Date('2026-12-02T10:00:00Z'));
    s.setState('192.0.2.11', 'Active');
    expect(h.logs.filter((l) => String(l.msg).startsWith('BGP session'))).toEqual([
      expect.objectContaining({ level: 'info', msg: 'BGP session established', peer: '192.0.2.20' }),
      // 192.0.2.11 Idle → Active without a reason yet (the fake gives none) is a retry: debug, below this log's level.
    ]);

    const st = await run(['status', '--json', '--control', h.control]);
    expect(st.code).toBe(0);
    const sj = JSON.parse(st.stdout) as StatusJson;
    expect(sj.peers.map((p) => [p.address, p.type, p.state])).toEqual([
      ['192.0.2.11', 'node-to-node mesh', 'Active'],
      ['192.0.2.12', 'node-to-node mesh', 'Idle'],
      ['192.0.2.20', 'global', 'Established'],
    ]);
    const text = await run(['status', '--control', h.control], { now: () => new Date('2026-12-02T12:00:00Z') });
    expect(text.stdout).toContain('IPv4 BGP status');
    expect(text.stdout).toMatch(/\| 192\.0\.2\.20 +\| global +\| up +\| 10:00:00 +\| Established +\|/);
    expect(text.stdout).toContain('No IPv6 peers found.');

    const r = JSON.parse((await run(['routes', '--json', '--peer', '192.0.2.20', '--control', h.control])).stdout) as RoutesJson;
    expect(r.peers.map((p) => p.address)).toEqual(['192.0.2.20']);
    expect(r.peers[0].advertised).toEqual([
      expect.objectContaining({
        prefix: '198.19.0.64/26',
        reasons: [expect.objectContaining({ kind: 'BlockAffinity', text: expect.stringContaining('IPPool default-ipv4-ippool') })],
      }),
    ]);
    const badPeer = await run(['routes', '--peer', '10.9.9.9', '--control', h.control]);
    expect([badPeer.code, badPeer.stderr.includes('no planned peer 10.9.9.9')]).toEqual([1, true]);

    const x = JSON.parse((await run(['explain', '198.19.0.64/26', '--json', '--control', h.control])).stdout) as ExplainJson;
    expect(x.prefixes[0].export).toEqual({ accept: true, reason: 'originated by this node' });
    expect(x.prefixes[0].peers.every((p) => p.exported)).toBe(true);
    const y = JSON.parse((await run(['explain', '198.19.0.70', '--json', '--control', h.control])).stdout) as ExplainJson;
    expect(y.prefixes[0]).toMatchObject({ prefix: '198.19.0.70/32', planned: null, export: { accept: false } });
    expect(y.summary).toContain('covered by 198.19.0.64/26');
    const z = await run(['explain', 'yaobank/customer', '--control', h.control]);
    expect(z.stdout).toContain('Service yaobank/customer');
    // The agent is still fine after all that.
    expect((await run(['status', '--json', '--control', h.control])).code).toBe(0);
  });

  it('re-advertises routes from a local peer when the built-in export accepts them, and withdraws them when lost', async () => {
    const h = await start();
    await writeFile(
      join(h.overlay, 'metallb.yaml'),
      'apiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: metallb}\nspec: {node: worker1, peerIP: 127.0.0.1, asNumber: 64512}\n',
    );
    await within(10_000, () => h.speaker().peers.has('127.0.0.1'));
    await h.agent.settled();
    const s = h.speaker();
    s.receive('127.0.0.1', '198.19.200.5/32', ['65000:7', '64512:0:7'], [], ['rt:65000:100']); // inside the pool: accepted
    s.receive('127.0.0.1', '10.9.9.9/32'); // outside every pool and range: not
    s.receive('127.0.0.1', '198.19.0.70/32'); // inside the local block: the block is exported instead
    s.receive('192.0.2.20', '198.19.201.0/24'); // not a local peer
    await h.agent.settled();
    expect(routesOf(s)).toEqual(['198.19.0.64/26', '198.19.200.5/32']);
    // Large and extended communities pass through with the standard ones.
    expect(s.routes.get('198.19.200.5/32')!.attrs).toEqual({
      origin: 'igp',
      communities: ['65000:7'],
      largeCommunities: ['64512:0:7'],
      extendedCommunities: ['rt:65000:100'],
    });
    const r = h.agent.routes('192.0.2.20');
    expect(r.redistributed).toEqual([
      {
        prefix: '198.19.200.5/32',
        from: '127.0.0.1',
        communities: ['65000:7', '64512:0:7'],
        extendedCommunities: ['rt:65000:100'],
        withheldExtendedCommunities: [],
        export: { accept: true, reason: 'inside IPPool default-ipv4-ippool (198.19.0.0/16)' },
        kernel: null,
      },
    ]);
    expect(r.peers[0].exports).toEqual(['198.19.0.64/26', '198.19.200.5/32']);
    expect(h.agent.explain('198.19.200.5/32').summary).toContain('re-advertised from local peer 127.0.0.1');
    expect(h.agent.explain('198.19.200.5/32').prefixes[0]!.redistributedCommunities).toEqual(['65000:7', '64512:0:7', 'rt:65000:100']);
    expect(renderExplain(h.agent.explain('198.19.200.5/32'))).toContain('planner: received from local peer 127.0.0.1 [65000:7 64512:0:7 rt:65000:100]');
    s.lose('127.0.0.1', '198.19.200.5/32');
    await h.agent.settled();
    expect(routesOf(s)).toEqual(['198.19.0.64/26']);
  });

  it("BFD is started before the first peer with BFD is added: the peer's BFD session starts with its BGP connection", async () => {
    const h = await start();
    const s = h.speaker();
    expect(s.calls.some((c) => c.op === 'startBfd')).toBe(false); // no peer with BFD yet: no worker, no UDP 3784
    const node =
      'apiVersion: v1\nkind: Node\nmetadata: {name: worker1, labels: {kubernetes.io/hostname: worker1}, ' +
      "annotations: {projectcalico.org/IPv4Address: '192.0.2.10/24'}}\n" +
      'spec: {podCIDRs: [10.244.1.0/24]}\nstatus: {addresses: [{type: InternalIP, address: 192.0.2.10}]}\n';
    const peer =
      '---\napiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: tor-bfd}\n' +
      'spec: {node: worker1, peerIP: 192.0.2.30, asNumber: 65030, failureDetectionMode: BFDIfDirectlyConnected}\n';
    const mark = s.calls.length;
    await writeFile(join(h.overlay, 'bfd.yaml'), node + peer);
    await within(10_000, () => s.peers.has('192.0.2.30'));
    const ops = s.calls.slice(mark).map((c) => (c.op === 'addPeer' || c.op === 'updatePeer' ? `${c.op} ${c.opts.address}` : c.op));
    expect(s.peers.get('192.0.2.30')?.bfd).toMatchObject({ minRx: 300, minTx: 300, multiplier: 3 });
    expect(ops.indexOf('startBfd')).toBeGreaterThanOrEqual(0);
    expect(ops.indexOf('startBfd')).toBeLessThan(ops.indexOf('addPeer 192.0.2.30'));
  });

  it('a prefix leaving the plan while a local peer still sends it is handed over without a withdrawal', async () => {
    const h = await start();
    const metallb = 'apiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: metallb}\nspec: {node: worker1, peerIP: 127.0.0.1, asNumber: 64512}\n';
    const block =
      '---\napiVersion: crd.projectcalico.org/v1\nkind: BlockAffinity\nmetadata: {name: extra}\nspec: {node: worker1, cidr: 198.19.1.0/26, state: confirmed}\n';
    await writeFile(join(h.overlay, 'extra.yaml'), metallb + block);
    await within(10_000, () => h.speaker().routes.has('198.19.1.0/26') && h.speaker().peers.has('127.0.0.1'));
    const s = h.speaker();
    s.receive('127.0.0.1', '198.19.1.0/26', ['65000:9']);
    await h.agent.settled();
    const mark = s.calls.length;
    await writeFile(join(h.overlay, 'extra.yaml'), metallb);
    await within(10_000, () => s.routes.get('198.19.1.0/26')?.attrs?.communities?.[0] === '65000:9');
    await h.agent.settled();
    expect(s.calls.slice(mark).filter((c) => c.op === 'withdraw')).toEqual([]);
    expect(h.agent.routes().redistributed.map((r) => r.prefix)).toEqual(['198.19.1.0/26']);
  });

  it('stop: speaker.stop with graceful restart kept and the shutdown message; the control socket goes away', async () => {
    const h = await start();
    await h.agent.stop();
    await h.agent.done;
    expect(h.speaker().calls.at(-1)).toEqual({ op: 'stop', opts: { message: SHUTDOWN_MESSAGE, graceful: true } });
    expect(h.logs.some((l) => l.msg === 'tsbgp agent shutting down')).toBe(true);
    const st = await run(['status', '--control', h.control]);
    expect(st.code).toBe(1);
  });
});

describe('runAgent start-up failures', () => {
  it('a node becoming a route reflector (label and annotation) is re-planned live: only the sessions whose role changes reset', async () => {
    // Calico's documented setup, with the mesh still on: worker1 becomes the reflector.
    const docs = [
      "apiVersion: projectcalico.org/v3\nkind: BGPPeer\nmetadata: {name: peer-with-route-reflectors}\nspec:\n  nodeSelector: all()\n  peerSelector: route-reflector == 'true'\n",
      'apiVersion: v1\nkind: Node\nmetadata:\n  name: worker1\n  labels: {kubernetes.io/hostname: worker1, route-reflector: "true"}\n  annotations: {projectcalico.org/RouteReflectorClusterID: 244.0.0.1}\nspec: {podCIDRs: [10.244.1.0/24]}\nstatus:\n  addresses: [{type: InternalIP, address: 192.0.2.10}]\n',
    ].join('---\n');
    const rr = await start('worker1');
    const client = await start('worker2');
    const [rs, cs] = [rr.speaker(), client.speaker()];
    const [rrMark, clientMark] = [rs.calls.length, cs.calls.length];
    const before = { rr: new Map(rs.peers), client: new Map(cs.peers) };
    await writeFile(join(rr.overlay, 'rr.yaml'), docs);
    await writeFile(join(client.overlay, 'rr.yaml'), docs);
    await within(10_000, () => rs.clusterId === '244.0.0.1' && cs.peers.get('192.0.2.10')?.description?.startsWith('Node_') === true);
    await rr.agent.settled();
    await client.agent.settled();
    const resets = (calls: typeof rs.calls, was: Map<string, PeerOptions>) =>
      calls
        .filter((c) => c.op === 'updatePeer')
        .filter((c) => c.op === 'updatePeer' && sessionKey(c.opts) !== sessionKey(was.get(c.opts.address)!))
        .map((c) => (c as { opts: PeerOptions }).opts.address);
    // The reflector: cluster ID set live; its two mesh peers become its clients (a session setting: they reset); the router is untouched.
    const rrCalls = rs.calls.slice(rrMark);
    expect(rrCalls.filter((c) => c.op === 'setClusterId')).toEqual([{ op: 'setClusterId', clusterId: '244.0.0.1' }]);
    expect(resets(rrCalls, before.rr).sort()).toEqual(['192.0.2.11', '192.0.2.12']);
    expect(rrCalls.filter((c) => (c.op === 'addPeer' || c.op === 'updatePeer') && c.opts.address === '192.0.2.20')).toEqual([]);
    expect(rrCalls.filter((c) => c.op === 'addPeer' || c.op === 'removePeer')).toEqual([]);
    expect(rs.peers.get('192.0.2.11')).toMatchObject({
      routeReflectorClient: true,
      description: 'Reverse_peer-with-route-reflectors_192_0_2_11 (node specific)',
    });
    // A client: its mesh session to worker1 is now the BGPPeer's, with nothing that resets it; the rest untouched.
    const clientCalls = cs.calls.slice(clientMark);
    expect(clientCalls.filter((c) => c.op === 'updatePeer').map((c) => (c as { opts: PeerOptions }).opts.address)).toEqual(['192.0.2.10']);
    expect(resets(clientCalls, before.client)).toEqual([]);
    expect(clientCalls.filter((c) => c.op !== 'updatePeer' && c.op !== 'originate' && c.op !== 'withdraw')).toEqual([]);
    expect(cs.clusterId).toBeUndefined();

    // Ceasing to be a reflector: back to the mesh, the cluster ID cleared live (an empty List says "this
    // file defines nothing now"; a file with no document is a fault the agent waits out).
    await writeFile(join(rr.overlay, 'rr.yaml'), 'apiVersion: v1\nkind: List\nitems: []\n');
    await within(10_000, () => rs.clusterId === undefined && rs.calls.some((c) => c.op === 'setClusterId' && c.clusterId === undefined));
    await rr.agent.settled();
    expect(rs.peers.get('192.0.2.11')).toMatchObject({ routeReflectorClient: false, description: 'Mesh_192_0_2_11 (node-to-node mesh)' });
  });

  it('a speaker that cannot start (e.g. the port is taken) fails runAgent with the reason', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-agent-'));
    const logs: string[] = [];
    const failing = (o: SpeakerOptions) =>
      Object.assign(new FakeSpeaker(o), {
        start: async () => {
          throw new Error('listen EADDRINUSE: address already in use 0.0.0.0:179');
        },
      });
    await expect(
      runAgent({
        node: 'worker1',
        manifests: [join(yb, 'base')],
        control: join(dir, 's.sock'),
        signals: false,
        logger: createLogger({ write: (l) => void logs.push(l) }),
        speakerFactory: failing,
      }),
    ).rejects.toThrow('cannot start the BGP speaker: listen EADDRINUSE');
    expect(logs.some((l) => l.includes('tsbgp agent shutting down'))).toBe(true);
  });

  it('without the node in the manifests: no speaker yet, the error is kept for status; adding the node starts it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-agent-'));
    await cp(join(yb, 'base', 'calico.yaml'), join(dir, 'calico.yaml'));
    let speaker: FakeSpeaker | undefined;
    const agent = await runAgent({
      node: 'worker1',
      manifests: [dir],
      control: false,
      signals: false,
      debounceMs: 50,
      logger: createLogger({ write: () => undefined }),
      speakerFactory: (o) => (speaker = new FakeSpeaker(o)),
    });
    running.push(agent);
    expect(speaker).toBeUndefined();
    expect(agent.status()).toMatchObject({
      speaker: null,
      errors: [expect.objectContaining({ kind: 'Node', message: expect.stringContaining('node worker1 is not in the cluster state') })],
    });
    await cp(join(yb, 'base', 'nodes.yaml'), join(dir, 'nodes.yaml'));
    await within(10_000, () => speaker?.routes.has('198.19.0.64/26') ?? false);
    expect(agent.status().speaker).toEqual({ asn: 64512, routerId: '192.0.2.10', listenPort: 179 });
  });
});
