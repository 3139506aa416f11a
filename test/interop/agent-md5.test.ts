/**
 * The agent end to end with TCP-MD5: `tsbgp agent` (node worker1, manifest
 * files) peers with FRR (router, AS 65000) through a BGPPeer whose password
 * comes from a Secret in the agent's namespace (kube-system). First without
 * the Secret: the peering is refused and `tsbgp status` says why; the Secret
 * written: the session comes up and FRR learns the service range; FRR's key
 * rotated: the session drops; the Secret rotated: it comes back, with the
 * same agent process (a watch, not a restart).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as cli } from '../agent/cli-helpers.js';
import { clusterManifests } from '../agent/cluster-manifests.js';
import { cleanupStale, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { loadTopology } from '../lab/topology.js';
import { until } from './harness.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const available = requireLab(['frr', 'tsbgp', 'bridge'], { binaries: ['node'] });

const NODE = '192.0.2.10';
const ROUTER = '192.0.2.20';

const MANIFESTS = clusterManifests({
  nodeAddress: NODE,
  bgp: { serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] },
  peers: { router: { peerIP: ROUTER, asNumber: 65000, password: { secretKeyRef: { name: 'bgp-passwords', key: 'router' } } } },
});

const secret = (pw: string) => `apiVersion: v1
kind: Secret
metadata: { name: bgp-passwords, namespace: kube-system }
type: Opaque
data:
  router: ${Buffer.from(pw).toString('base64')}
`;

const FRR = `frr defaults traditional
hostname router
router bgp 65000
 bgp router-id ${ROUTER}
 no bgp ebgp-requires-policy
 neighbor ${NODE} remote-as 64512
 neighbor ${NODE} timers 3 9
 neighbor ${NODE} timers connect 2
 neighbor ${NODE} password agent-K1
`;

describe.skipIf(!available.ok)('the agent with a BGPPeer password from a Secret, against FRR', () => {
  let lab: Lab;
  let dir: string;
  const sock = () => join(lab.node('worker1').work, 'tsbgp.sock');
  const status = async () => {
    const r = await cli(['status', '--json', '--control', sock()]);
    if (r.stdout.trim() === '') throw new Error(`tsbgp status --json printed nothing (exit ${r.code}): ${r.stderr}`);
    return (JSON.parse(r.stdout) as { peers: { address: string; state: string; info: string | null; refused: boolean }[] }).peers.find(
      (p) => p.address === ROUTER,
    );
  };
  const frrState = () => lab.frrNeighbors('router')[NODE]?.bgpState;

  beforeAll(async () => {
    cleanupStale();
    dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-agentmd5-`));
    writeFileSync(join(dir, 'frr.conf'), FRR);
    writeFileSync(join(dir, 'cluster.yaml'), MANIFESTS);
    writeFileSync(
      join(dir, 'lab.clab.yml'),
      `name: agentmd5
topology:
  nodes:
    lan: { kind: bridge }
    router: { kind: frr, startup-config: frr.conf }
    worker1:
      kind: tsbgp
      cmd: cd '${repo}' && exec node --import tsx src/agent/main.ts agent --node worker1 --control "$TSBGP_WORK/tsbgp.sock" --log-level debug '${dir}/cluster.yaml' '${dir}/secrets'
  links:
    - endpoints: ["router:eth1", "lan:p1"]
    - endpoints: ["worker1:eth1", "lan:p2"]
x-tsbgp:
  addresses:
    "router:eth1": ["${ROUTER}/24"]
    "worker1:eth1": ["${NODE}/24"]
`,
    );
    // the Secret's layer exists but is empty at first
    writeFileSync(join(dir, 'secrets'), '');
    lab = await Lab.up(loadTopology(join(dir, 'lab.clab.yml')), { ephemeral: true });
  }, 60_000);
  afterAll(() => {
    if (process.env.TSBGP_KEEP_LOG) writeFileSync(process.env.TSBGP_KEEP_LOG, readFileSync(join(lab.node('worker1').work, 'tsbgp.log')));
    lab?.teardown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('no Secret: the peering is refused (not run unprotected) and status says why', async () => {
    const p = await until(async () => {
      const s = await status();
      expect(s?.refused).toBe(true);
      return s!;
    }, 60_000);
    expect(p.info).toBe(
      'Not started: Secret kube-system/bgp-passwords not found; the peering is refused until it exists (running without the password would leave the session unprotected)',
    );
    expect(frrState()).not.toBe('Established');
  }, 90_000);

  it('the Secret written: Established with the key, FRR learns the service range; rotated on both sides: back, same agent process', async () => {
    writeFileSync(join(dir, 'secrets'), secret('agent-K1'));
    await until(async () => expect((await status())?.state).toBe('Established'), 60_000);
    await until(() => expect(frrState()).toBe('Established'), 30_000);
    await until(() => expect(Object.keys(lab.frrRib('router'))).toContain('198.18.0.0/16'), 30_000);
    const pids = () => readFileSync(`/proc/${lab.node('worker1').pids[0]}/stat`, 'utf8').split(' ')[21];
    const started = pids();

    // FRR's key changes: it resets the session, and every segment with the old key is dropped
    lab.mustExec('router', ['vtysh', '-c', 'configure terminal', '-c', 'router bgp 65000', '-c', `neighbor ${NODE} password agent-K2`]);
    await until(async () => expect((await status())?.state).not.toBe('Established'), 30_000);
    // the hint shows once the peer has been silent 10 s (twice ConnectRetry, at least 10 s)
    await until(async () => expect((await status())?.info).toBe('TCP-MD5 configured; no answer from the peer: check the key first'), 40_000, 1000);

    writeFileSync(join(dir, 'secrets'), secret('agent-K2'));
    await until(async () => expect((await status())?.state).toBe('Established'), 60_000);
    await until(() => expect(frrState()).toBe('Established'), 30_000);
    // the hint is gone: `info` (why a session is not up) is null while Established
    expect((await status())?.info).toBeNull();
    expect(pids()).toBe(started);
  }, 110_000);
});
