import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAgentArgs, UsageError } from '../../src/agent/cli.js';
import { COMMAND_HELP } from '../../src/agent/help.js';
import { kernelStatusText } from '../../src/agent/kernel.js';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import type { SpeakerOptions } from '../../src/speaker/types.js';
import { run } from './cli-helpers.js';
import { FakeSpeaker } from './fake-speaker.js';

const base = fileURLToPath(new URL('../../examples/yaobank/base', import.meta.url));
const agentArgs = (...extra: string[]) => ['--node', 'worker1', '--manifests', base, ...extra];

describe('tsbgp agent --kernel-writer', () => {
  it('netlink or iproute2 with --kernel on; absent: the kernel FIB chooses (netlink)', () => {
    expect(parseAgentArgs(agentArgs('--kernel', 'on', '--kernel-writer', 'iproute2')).kernel).toEqual({ writer: 'iproute2' });
    expect(parseAgentArgs(agentArgs('--kernel', 'on', '--kernel-writer', 'netlink', '--kernel-table', '100')).kernel).toEqual({
      writer: 'netlink',
      table: 100,
    });
    expect(parseAgentArgs(agentArgs('--kernel', 'on')).kernel).toEqual({});
  });

  it('an unknown writer is a usage error naming the flag and the values it takes', async () => {
    expect(() => parseAgentArgs(agentArgs('--kernel', 'on', '--kernel-writer', 'rtnl'))).toThrow(
      new UsageError('agent: --kernel-writer must be "netlink" or "iproute2", got "rtnl"'),
    );
    expect(() => parseAgentArgs(agentArgs('--kernel', 'on', '--kernel-writer', ''))).toThrow('--kernel-writer must be "netlink" or "iproute2", got ""');
    const r = await run(['agent', ...agentArgs('--kernel', 'on', '--kernel-writer', 'NETLINK')]);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tsbgp agent: --kernel-writer must be "netlink" or "iproute2", got "NETLINK"\nrun \'tsbgp help\' for usage\n',
    });
  });

  it('needs --kernel on, as the other kernel flags', () => {
    expect(() => parseAgentArgs(agentArgs('--kernel-writer', 'iproute2'))).toThrow('--kernel-writer need --kernel on');
    expect(() => parseAgentArgs(agentArgs('--kernel', 'off', '--kernel-writer', 'netlink'))).toThrow('need --kernel on');
  });

  it('is in `tsbgp agent --help` with both values', () => {
    expect(COMMAND_HELP.agent).toMatch(/--kernel-writer netlink\|iproute2\n\s+with --kernel on: how routes are written/);
  });

  it('reaches the speaker the agent builds, in its kernel options', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tsbgp-kwriter-'));
    const seen: SpeakerOptions[] = [];
    // The speaker refuses to start, so the agent ends right after building it.
    const speakerFactory = (o: SpeakerOptions) => {
      seen.push(o);
      return Object.assign(new FakeSpeaker(o), { start: () => Promise.reject(new Error('not this time')) });
    };
    const r = await run(['agent', ...agentArgs('--kernel', 'on', '--kernel-writer', 'iproute2', '--control', join(dir, 's.sock'))], {
      speakerFactory,
      log: () => undefined,
    });
    expect(r.code).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0].kernel).toMatchObject({ writer: 'iproute2', metricFromLocalPref: true });
  });

  it('the speaker hands it to its KernelFib (which checks it)', () => {
    // A writer the CLI would refuse, passed to the library directly: KernelFib's own check names it.
    expect(() => new BgpSpeaker({ asn: 64512, routerId: '192.0.2.1', listen: false, kernel: { writer: 'rtnl' as never } })).toThrow(
      'kernel writer must be "netlink" or "iproute2", got "rtnl"',
    );
    expect(() => new BgpSpeaker({ asn: 64512, routerId: '192.0.2.1', listen: false, kernel: { writer: 'iproute2' } })).not.toThrow();
  });
});

describe('`tsbgp status` names the kernel writer in use', () => {
  const base = {
    enabled: true,
    error: null,
    table: 254,
    protocol: 12,
    restarting: false,
    installed: 3,
    desired: 3,
    stale: 0,
    refused: [],
    refusedCount: 0,
    programClusterRoutes: 'Enabled',
    listener: 'netlink' as const,
    listenerNote: null,
  };
  it('netlink, iproute2 (with the note why when rtnetlink was wanted), nothing while off', () => {
    expect(kernelStatusText({ ...base, writer: 'netlink', writerNote: null })).toEqual([
      'Kernel routes: table 254, proto 12, writer netlink: 3 installed of 3 wanted, 0 refused',
    ]);
    expect(kernelStatusText({ ...base, writer: 'iproute2', writerNote: null })).toEqual([
      'Kernel routes: table 254, proto 12, writer iproute2: 3 installed of 3 wanted, 0 refused',
    ]);
    const note = 'this process may not write routes over netlink (Operation not permitted; CAP_NET_ADMIN missing here), but ip may: writing through ip -batch';
    expect(kernelStatusText({ ...base, writer: 'iproute2', writerNote: note })).toEqual([
      'Kernel routes: table 254, proto 12, writer iproute2: 3 installed of 3 wanted, 0 refused',
      `  ${note}`,
    ]);
    expect(kernelStatusText({ ...base, enabled: false, error: 'no permission', writer: null, writerNote: null })).toEqual([
      'Kernel routes: OFF: no permission',
    ]);
  });
});
