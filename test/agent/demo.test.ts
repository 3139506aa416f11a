/**
 * Runs `examples/demo.ts` (what `npm run demo` runs) as a child process —
 * without any capability when the tests run as root, so it proves the demo
 * needs no privilege (no port below 1024, no namespace, no route table) —
 * and checks
 * the router's table it prints after each lab step, then the status and
 * explain output of the real CLI commands.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const W1 = '127.0.0.10';
const W2 = '127.0.0.11';
const M1 = '127.0.0.12';
const ALL = [W1, W2, M1];

/**
 * As root, the demo runs as root with every capability dropped (`setpriv`,
 * util-linux): unprivileged as far as the kernel's checks go, yet still the
 * owner of the checkout. Switching to `nobody` instead failed wherever the
 * clone sat in a directory only root can enter (`mktemp -d`, `/root`): the
 * child could not read node_modules (`Cannot find package 'tsx'`).
 */
const SETPRIV = ['setpriv', '--inh-caps=-all', '--ambient-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];

function runDemo(): Promise<{ code: number | null; out: string }> {
  const node = [process.execPath, '--import', 'tsx', join(repo, 'examples/demo.ts')];
  const [cmd, ...args] = process.getuid?.() === 0 ? [...SETPRIV, ...node] : node;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'ENOENT' && cmd === 'setpriv' ? new Error('running the demo without capabilities as root needs setpriv (Debian package util-linux)') : e,
      ),
    );
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** `ip route`-style lines → prefix → sorted next hops. */
function parseTable(section: string): Map<string, string[]> {
  const table = new Map<string, string[]>();
  let current: string | undefined;
  for (const line of section.split('\n')) {
    let m = /^(\S+\/\d+) via (\S+) proto bgp/.exec(line);
    if (m) {
      table.set(m[1], [m[2]]);
      current = undefined;
      continue;
    }
    m = /^(\S+\/\d+) proto bgp/.exec(line);
    if (m) {
      current = m[1];
      table.set(current, []);
      continue;
    }
    m = /^\tnexthop via (\S+)/.exec(line);
    if (m && current) table.get(current)!.push(m[1]);
  }
  for (const hops of table.values()) hops.sort();
  return table;
}

const blocks = { '198.19.0.0/26': [M1], '198.19.0.64/26': [W1], '198.19.0.128/26': [W2] };

describe('npm run demo', () => {
  it('is the package script', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.demo).toContain('examples/demo.ts');
  });

  it.runIf(process.getuid?.() === 0)('as root, the demo process has no capability left', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout } = await promisify(execFile)(SETPRIV[0], [...SETPRIV.slice(1), 'grep', '^Cap', '/proc/self/status']);
    expect(
      stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[1]),
    ).toEqual(['0000000000000000', '0000000000000000', '0000000000000000', '0000000000000000', '0000000000000000']);
  });

  it('walks the lab steps; the router sees pod blocks, the ranges via all nodes, the Local /32s via worker1 only', async () => {
    const { code, out } = await runDemo();
    expect(out).toContain('# demo finished');
    expect(code).toBe(0);
    const sections = out.split(/^== /m);
    const step = (n: number) => {
      const s = sections.find((x) => x.startsWith(`step ${n}:`));
      expect(s, `step ${n} printed`).toBeDefined();
      return Object.fromEntries(parseTable(s!));
    };
    expect(step(0)).toEqual(blocks);
    expect(step(1)).toEqual({ ...blocks, '198.18.0.0/16': ALL });
    expect(step(2)).toEqual({ ...blocks, '198.18.0.0/16': ALL, '198.18.217.62/32': [W1] });
    expect(step(3)).toEqual({ ...blocks, '198.18.0.0/16': ALL, '198.18.217.62/32': [W1], '203.0.113.0/24': ALL });
    expect(step(4)).toEqual({ ...blocks, '198.18.0.0/16': ALL, '198.18.217.62/32': [W1], '203.0.113.0/24': ALL, '203.0.113.10/32': [W1] });

    // The real `tsbgp status` over worker1's control socket: every session up.
    const status = sections.find((x) => x.startsWith('worker1$ tsbgp status'))!;
    expect(status).toMatch(/127\.0\.0\.20\s+\| global\s+\| up\s+\|.*Established/);
    expect(status).toMatch(/127\.0\.0\.11\s+\| node-to-node mesh \| up/);
    // worker2 reports the external IP refused (no customer pod there).
    const status2 = sections.find((x) => x.startsWith('worker2$ tsbgp status'))!;
    expect(status2).toContain('203.0.113.10: not-local');
    const explain = sections.find((x) => x.startsWith('worker1$ tsbgp explain yaobank/customer'))!;
    expect(explain).toContain('203.0.113.10/32: advertised by this node');
    expect(explain).toMatch(/→ 127\.0\.0\.20 \(global\): exported/);
  }, 330_000);
});
