import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listenHint } from '../../src/agent/help.js';
import { run } from './cli-helpers.js';
import { FakeSpeaker } from './fake-speaker.js';

const base = fileURLToPath(new URL('../../examples/yaobank/base', import.meta.url));

describe('per-command help', () => {
  it('tsbgp status -h', async () => {
    const r = await run(['status', '-h']);
    expect(r).toEqual({
      code: 0,
      stderr: '',
      stdout: `usage: tsbgp status [PEER] [--json] [--control SOCKET]

Without PEER: the BGP sessions as \`calicoctl node status\` shows them (SINCE is
the last up/down change; INFO says why a session is down), the configuration
source, configuration errors and warnings, and refused advertisements.
With PEER (an address or a BGPPeer id): that peer in full, like
\`birdc show protocols all\`: uptime, hold time, capabilities, prefixes
received/accepted/advertised, messages, last error.

options:
  --json             print JSON, a stable contract (docs/json-output.md)
  --control SOCKET   the agent's control socket (default $TSBGP_CONTROL, then /run/tsbgp/tsbgp.sock)
`,
    });
  });

  it.each(['agent', 'status', 'routes', 'explain', 'plan', 'version'])('tsbgp help %s = tsbgp %s --help, its own usage', async (cmd) => {
    const a = await run(['help', cmd]);
    const b = await run([cmd, '--help']);
    expect(a).toEqual(b);
    expect(a.code).toBe(0);
    expect(a.stdout.startsWith(`usage: tsbgp ${cmd}`)).toBe(true);
  });

  it('tsbgp agent --help does not start an agent, even with other flags', async () => {
    const r = await run(['agent', '--node', 'x', '--help']);
    expect([r.code, r.stdout.split('\n')[0]]).toEqual([0, 'usage: tsbgp agent [--node NAME] (--manifests PATH... | --kubeconfig PATH | --in-cluster) [options]']);
  });

  it('tsbgp help nosuch: exit 2 naming the commands', async () => {
    const r = await run(['help', 'nosuch']);
    expect(r).toEqual({ code: 2, stdout: '', stderr: `tsbgp help: unknown command "nosuch" (commands: agent, status, routes, explain, plan, version, help)\nrun 'tsbgp help' for usage\n` });
  });
});

describe('tsbgp agent when port 179 is refused', () => {
  it('the error says what to do: root, the capability, or --listen-port', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-help-'));
    const eacces = Object.assign(new Error('listen EACCES: permission denied :::179'), { code: 'EACCES', port: 179 });
    const speakerFactory = () => Object.assign(new FakeSpeaker(), { start: () => Promise.reject(eacces) });
    const r = await run(['agent', '--node', 'worker1', '--manifests', base, '--control', join(dir, 's.sock')], { speakerFactory, log: () => undefined });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'tsbgp agent: cannot start the BGP speaker: listen EACCES: permission denied :::179: port 179 needs root or CAP_NET_BIND_SERVICE (setcap cap_net_bind_service=+ep "$(command -v node)"), or pick a port above 1023 with --listen-port (e.g. --listen-port 1179; the peers must then dial that port)\n',
    });
  });

  it('EADDRINUSE names the likely culprit; other errors get no hint', () => {
    expect(listenHint(Object.assign(new Error('listen EADDRINUSE: address already in use :::179'), { code: 'EADDRINUSE' }))).toBe(
      ': another BGP daemon (BIRD of calico-node?) or tsbgp agent already listens on port 179; stop it, or use --listen-port',
    );
    expect(listenHint(new Error('something else'))).toBe('');
  });
});

describe('examples/yaobank/steps', () => {
  const yb = fileURLToPath(new URL('../../examples/yaobank/', import.meta.url));
  const steps = ['01-service-cluster-ips', '02-customer-local', '03-service-external-ips', '04-customer-external-ip'].map((s) => join(yb, 'steps', `${s}.yaml`));

  it('apply as layers in order, as the example README says: no errors', async () => {
    const r = await run(['plan', '--node', 'worker1', '--manifests', join(yb, 'base'), ...steps]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toContain('203.0.113.10/32');
  });

  it('the folder as one layer is refused, and the error says how to apply the files in order', async () => {
    const r = await run(['plan', '--node', 'worker1', '--manifests', join(yb, 'base'), '--manifests', join(yb, 'steps')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `${steps[2]}: BGPConfiguration default: metadata.name: duplicate name: already defined in ${steps[0]}; this definition is skipped (the files of one layer must not redefine a resource; to apply files in order, give each its own --manifests layer)`,
    );
  });
});
