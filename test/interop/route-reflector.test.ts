/**
 * In-cluster route reflectors as Calico's documentation sets them up, for
 * real (examples/lab/route-reflector.clab.yml): four node namespaces running
 * `tsbgp agent` (rr1 and rr2 reflectors with cluster ID 244.0.0.1, n3 and n4
 * plain nodes), the mesh off, the documentation's manifests unchanged, and
 * FRR peered with the two reflectors only. FRR learns every node's block,
 * reflected with its original next hop, ORIGINATOR_ID and CLUSTER_LIST; each
 * node has exactly the sessions Calico would give it; and FRR keeps every
 * route while one reflector restarts (graceful restart) and while it is dead.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as cli } from '../agent/cli-helpers.js';
import { eventually } from '../lab/eventually.js';
import { cleanupStale, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { alive, sleep } from '../lab/shell.js';
import { loadTopology } from '../lab/topology.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOPOLOGY = join(repo, 'examples', 'lab', 'route-reflector.clab.yml');
const available = requireLab(['frr', 'tsbgp', 'bridge'], { binaries: ['node'] });

const IP: Record<string, string> = { rr1: '192.0.2.1', rr2: '192.0.2.2', n3: '192.0.2.3', n4: '192.0.2.4' };
const ROUTER = '192.0.2.20';
const BLOCK: Record<string, string> = { rr1: '198.19.0.0/26', rr2: '198.19.0.64/26', n3: '198.19.0.128/26', n4: '198.19.0.192/26' };
const CLUSTER = '244.0.0.1';

/** One path of `show bgp ipv4 unicast PREFIX json`, the fields this test reads. */
interface FrrDetailPath {
  valid?: boolean;
  stale?: boolean;
  peer?: { peerId?: string };
  nexthops?: { ip?: string }[];
  originatorId?: string;
  clusterList?: { list?: string[] };
}

interface StatusPeer {
  address: string;
  type: string;
  state: string;
  since: string;
  routeReflectorClient?: boolean;
}

describe.skipIf(!available.ok)('route reflectors as Calico builds them: tsbgp agents and FRR in namespaces', () => {
  let lab: Lab;
  let dir: string;

  const sock = (node: string) => join(lab.node(node).work, 'tsbgp.sock');
  const status = async (node: string): Promise<StatusPeer[]> => {
    const r = await cli(['status', '--json', '--control', sock(node)]);
    if (r.code !== 0) throw new Error(`tsbgp status on ${node}: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { peers: StatusPeer[] }).peers;
  };
  /** FRR's paths for one prefix (none: []). */
  const paths = (prefix: string): FrrDetailPath[] => {
    const r = lab.exec('router', ['vtysh', '-c', `show bgp ipv4 unicast ${prefix} json`]);
    if (r.status !== 0) return [];
    return ((JSON.parse(r.stdout || '{}') as { paths?: FrrDetailPath[] }).paths ?? []).filter((p) => p.valid !== false);
  };
  /** Reflector addresses FRR holds a path for each node's block from (prefix → sorted peer addresses, `*` when stale); one vtysh call. */
  const held = (): Record<string, string[]> => {
    const rib = lab.frrRib('router');
    return Object.fromEntries(
      Object.values(BLOCK).map((b) => [
        b,
        (rib[b] ?? [])
          .filter((p) => p.valid !== false)
          .map((p) => `${String(p.peerId ?? '?')}${p.stale ? '*' : ''}`)
          .sort(),
      ]),
    );
  };
  const routerStates = () => {
    const n = lab.frrNeighbors('router');
    return Object.fromEntries([IP.rr1, IP.rr2].map((a) => [a, n[a]?.bgpState]));
  };

  beforeAll(async () => {
    cleanupStale();
    dir = mkdtempSync(join(tmpdir(), 'tsbgp-rr-'));
    cpSync(join(repo, 'examples', 'lab', 'route-reflector', 'manifests'), join(dir, 'manifests'), { recursive: true });
    const topo = loadTopology(TOPOLOGY);
    for (const n of topo.nodes) if (n.kind === 'tsbgp') n.env = { ...n.env, TSBGP_REPO: repo, TSBGP_MANIFESTS: join(dir, 'manifests') };
    lab = await Lab.up(topo, { ephemeral: true });
  }, 60_000);
  afterAll(() => {
    lab?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('FRR, peered with the reflectors only, learns every node’s block: original next hop, ORIGINATOR_ID and CLUSTER_LIST', async () => {
    await eventually(() => expect(routerStates()).toEqual({ [IP.rr1]: 'Established', [IP.rr2]: 'Established' }), 45_000, 300);
    await eventually(
      () => {
        for (const b of Object.values(BLOCK)) expect(paths(b)).toHaveLength(2);
      },
      30_000,
      300,
    );
    for (const [node, block] of Object.entries(BLOCK)) {
      const ps = paths(block);
      for (const p of ps) {
        // Reflection leaves the next hop alone: it is the node that owns the block.
        expect(
          p.nexthops?.map((h) => h.ip),
          `${block} via ${p.peer?.peerId}`,
        ).toEqual([IP[node]]);
        const fromOwner = p.peer?.peerId === IP[node];
        if (fromOwner) {
          // A reflector's own block, straight from it: nothing reflected.
          expect(p.clusterList, `${block} from its owner`).toBeUndefined();
        } else {
          expect(p.originatorId, `${block} via ${p.peer?.peerId}`).toBe(IP[node]);
          expect(p.clusterList?.list, `${block} via ${p.peer?.peerId}`).toEqual([CLUSTER]);
        }
      }
    }
  }, 80_000);

  it('each node has exactly the sessions Calico would give it, all Established; the reflectors show their clients', async () => {
    const expected: Record<string, Record<string, string>> = {
      // reflector: the other reflector (non-client), the two nodes and the router (clients)
      rr1: { [IP.rr2]: 'node specific', [IP.n3]: 'node specific, rr client', [IP.n4]: 'node specific, rr client', [ROUTER]: 'node specific, rr client' },
      rr2: { [IP.rr1]: 'node specific', [IP.n3]: 'node specific, rr client', [IP.n4]: 'node specific, rr client', [ROUTER]: 'node specific, rr client' },
      // a plain node: the two reflectors, nothing else
      n3: { [IP.rr1]: 'node specific', [IP.rr2]: 'node specific' },
      n4: { [IP.rr1]: 'node specific', [IP.rr2]: 'node specific' },
    };
    for (const [node, want] of Object.entries(expected)) {
      const t0 = Date.now();
      let peers = await status(node);
      while (peers.some((p) => p.state !== 'Established') && Date.now() - t0 < 30_000) {
        await sleep(300);
        peers = await status(node);
      }
      expect(Object.fromEntries(peers.map((p) => [p.address, `${p.type}${p.routeReflectorClient ? ', rr client' : ''}`])), node).toEqual(want);
      expect(
        peers.map((p) => p.state),
        node,
      ).toEqual(peers.map(() => 'Established'));
    }
    const text = await cli(['status', '--control', sock('rr1')]);
    expect(text.stdout).toMatch(/\| 192\.0\.2\.3 +\| node specific, rr client +\| up /);
  }, 90_000);

  it('kill -9 of a reflector’s agent and its restart: FRR keeps every block throughout (graceful restart, and the other reflector)', async () => {
    const before = held();
    for (const ps of Object.values(before)) expect(ps).toEqual([IP.rr1, IP.rr2].sort());
    const n3Since = Object.fromEntries((await status('n3')).map((p) => [p.address, p.since]));
    const pidFile = join(lab.node('rr1').work, 'agent.pid');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
    const missing = new Set<string>();
    let polls = 0;
    let sawStale = false;
    const deadline = Date.now() + 40_000;
    let backSince = 0;
    while (Date.now() < deadline) {
      const now = held();
      polls++;
      for (const [b, ps] of Object.entries(now)) if (ps.length === 0) missing.add(b);
      if (Object.values(now).some((ps) => ps.some((p) => p.endsWith('*')))) sawStale = true;
      // Back: a new agent whose session with the router is up again and every path fresh, then 2 s more.
      if (backSince === 0) {
        const fresh = Object.values(now).every((ps) => ps.length === 2 && ps.every((p) => !p.endsWith('*')));
        if (fresh && routerStates()[IP.rr1] === 'Established' && Number(readFileSync(pidFile, 'utf8')) !== pid) backSince = Date.now();
      } else if (Date.now() - backSince > 2000) break;
      await sleep(100);
    }
    expect(backSince, 'rr1 came back').toBeGreaterThan(0);
    // Sampled while rr1 was away (its paths stale), not only before and after.
    expect(polls).toBeGreaterThanOrEqual(3);
    expect([...missing]).toEqual([]);
    expect(sawStale, 'FRR held rr1’s paths as stale while it restarted').toBe(true);
    expect(held()).toEqual(before);
    // n3's session with the other reflector never went down.
    const after = Object.fromEntries((await status('n3')).map((p) => [p.address, p.since]));
    expect(after[IP.rr2]).toBe(n3Since[IP.rr2]);
  }, 60_000);

  it('a reflector that dies: FRR keeps every block through the other, fresh', async () => {
    const n = lab.node('rr1');
    // Stop the node's restart loop first, then its agent: rr1 stays dead.
    const loop = n.pids[0];
    expect(alive(loop)).toBe(true);
    process.kill(loop, 'SIGKILL');
    const agent = Number(readFileSync(join(n.work, 'agent.pid'), 'utf8'));
    process.kill(agent, 'SIGKILL');
    await eventually(() => expect(routerStates()[IP.rr1]).not.toBe('Established'), 15_000, 200);
    await sleep(1000);
    for (const [node, block] of Object.entries(BLOCK)) {
      const fromRr2 = paths(block).filter((p) => p.peer?.peerId === IP.rr2 && !p.stale);
      if (node === 'rr1') continue; // rr1's own block goes with it (stale until its restart time ends)
      expect(
        fromRr2.map((p) => p.nexthops?.map((h) => h.ip)),
        block,
      ).toEqual([[IP[node]]]);
    }
    // The clients still hold their session with rr2.
    for (const c of ['n3', 'n4']) expect((await status(c)).find((p) => p.address === IP.rr2)?.state).toBe('Established');
  }, 40_000);
});
