import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COMMAND_FLAGS } from '../../src/agent/cli.js';
import { COMMAND_HELP, commandHelp, listenHint } from '../../src/agent/help.js';
import { defaultControlPath } from '../../src/agent/control.js';
import { run } from './cli-helpers.js';
import { FakeSpeaker } from './fake-speaker.js';

const base = fileURLToPath(new URL('../../examples/yaobank/base', import.meta.url));

/** The flags a text names (`--help` aside: every command takes it). */
const flagsIn = (text: string) => [...new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1]))].filter((f) => f !== 'help').sort();
const commands = Object.keys(COMMAND_HELP);

describe('per-command help', () => {
  it('every command the parser knows has help, and the overview lists each', async () => {
    expect([...commands].sort()).toEqual(Object.keys(COMMAND_FLAGS).sort());
    const overview = (await run(['help'])).stdout;
    expect(overview.startsWith('usage: tsbgp <command>')).toBe(true);
    expect([...overview.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]).sort()).toEqual([...commands].sort());
  });

  it.each(commands)('tsbgp %s: its help names exactly the flags its parser takes, in the overview too', async (cmd) => {
    const parser = Object.keys(COMMAND_FLAGS[cmd]).sort();
    expect(flagsIn(COMMAND_HELP[cmd])).toEqual(parser);
    // The overview's entry: from "  cmd " to the next command or the blank line.
    const overview = (await run(['help'])).stdout;
    const entry = new RegExp(`^ {2}${cmd} [\\s\\S]*?(?=^ {2}[a-z]+ |^$)`, 'm').exec(overview)?.[0];
    expect(entry).toBeDefined();
    expect(flagsIn(entry!)).toEqual(parser);
    // A flag that takes a value shows one (--node NAME, --kernel on|off); a switch shows none.
    const takesValue = (flag: string) => new RegExp(`--${flag} ([A-Z]|[a-z-]+\\|)`).test(COMMAND_HELP[cmd]);
    expect(Object.keys(COMMAND_FLAGS[cmd]).filter(takesValue).sort()).toEqual(
      Object.entries(COMMAND_FLAGS[cmd])
        .filter(([, o]) => o.type === 'string')
        .map(([f]) => f)
        .sort(),
    );
  });

  it.each(commands)('tsbgp %s: the examples in its help parse', (cmd) => {
    const examples = COMMAND_HELP[cmd].split('\n').filter((l) => l.startsWith(`  tsbgp ${cmd}`));
    for (const line of examples) {
      const args = line.trim().split(/\s+/).slice(2);
      expect(() => parseArgs({ args, options: COMMAND_FLAGS[cmd], strict: true, allowPositionals: true }), line).not.toThrow();
    }
    expect(examples.length > 0 || !/^example/m.test(COMMAND_HELP[cmd])).toBe(true);
  });

  it.each(commands)('tsbgp help %s = tsbgp %s --help = -h: its own usage, on stdout', async (cmd) => {
    const a = await run(['help', cmd]);
    expect(a).toEqual({ code: 0, stdout: commandHelp(cmd, defaultControlPath(process.env)), stderr: '' });
    expect(await run([cmd, '--help'])).toEqual(a);
    expect(await run([cmd, '-h'])).toEqual(a);
    expect(a.stdout.startsWith(`usage: tsbgp ${cmd}`)).toBe(true);
  });

  it('tsbgp agent --help does not start an agent, even with other flags', async () => {
    const r = await run(['agent', '--node', 'x', '--help']);
    expect([r.code, r.stdout.split('\n')[0]]).toEqual([
      0,
      'usage: tsbgp agent [--node NAME] (--manifests PATH... | --kubeconfig PATH | --in-cluster) [options]',
    ]);
  });

  it('tsbgp help nosuch: exit 2 naming the commands', async () => {
    const r = await run(['help', 'nosuch']);
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr: `tsbgp help: unknown command "nosuch" (commands: agent, status, routes, explain, drain, plan, version, help)\nrun 'tsbgp help' for usage\n`,
    });
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
  const steps = ['01-service-cluster-ips', '02-customer-local', '03-service-external-ips', '04-customer-external-ip'].map((s) =>
    join(yb, 'steps', `${s}.yaml`),
  );

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
