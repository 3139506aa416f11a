/**
 * Who may write routes. The image (Dockerfile) runs the agent as an
 * unprivileged user with the file capability cap_net_admin on node itself
 * and none on `ip` (which only reads); the fallback is a copy of `ip` with
 * that capability. In a scratch namespace, a child process as uid
 * 65534 with no capabilities of its own (setpriv: empty permitted, effective
 * and ambient sets; the bounding set keeps cap_net_admin so that the file
 * capability can take effect) runs KernelFib with that `ip` first on PATH:
 *
 *   - the capability on `ip` and CAP_NET_ADMIN in the inheritable set (iproute2
 *     built with libcap, as Debian's, drops every capability at start unless
 *     CAP_NET_ADMIN is inheritable; the inheritable set alone gives node
 *     nothing): status says writer iproute2 and why, the routes are
 *     installed, a route deleted by hand comes back;
 *   - the capability on `ip` without the inheritable bit (what container
 *     runtimes since the CVE-2022-24769 fixes give a non-root container), and
 *     no capability anywhere: one clear error, kernel programming off, and
 *     the process's BGP session comes up and learns a route all the same.
 *
 * The child runs the library built into that temporary folder (with its runtime
 * packages), not the checkout: uid 65534 may not enter a checkout inside a
 * private (0700) folder, so it could load neither the sources nor tsx from there.
 *
 * Fails (does not skip) in CI when it cannot set up: root, setpriv, setcap, and a
 * temporary folder where file capabilities take effect.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../speaker/helpers.js';
import { requireLab } from './require.js';
import { destroyNamespace, ip, protocolRoutes, vethNamespace } from './shell.js';

const available = requireLab([], { binaries: ['setpriv', 'setcap', 'node'] });
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NS = `tsbgp-i15cap${process.pid}`;
const NOBODY = 65534;

const ours = () => protocolRoutes(NS);

/**
 * The library built into `to` (to/dist/src/index.js) with the package.json
 * (ESM) and the runtime packages it imports, copied from the checkout: a
 * folder another user may read wherever the checkout is.
 */
function buildFor(to: string): string {
  const tsc = spawnSync(
    process.execPath,
    [
      join(repo, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(repo, 'tsconfig.build.json'),
      '--outDir',
      join(to, 'dist'),
      '--sourceMap',
      'false',
      '--declaration',
      'false',
    ],
    { encoding: 'utf8' },
  );
  if (tsc.status !== 0) throw new Error(`building the library into ${to} failed: ${tsc.stdout}${tsc.stderr}`);
  copyFileSync(join(repo, 'package.json'), join(to, 'package.json'));
  const copied = new Set<string>();
  // Each package with its dependencies, and those of its optional dependencies that are installed (koffi's native
  // module is one: @koromix/koffi-<platform>).
  const copy = (name: string, optional = false): void => {
    if (copied.has(name)) return;
    const from = join(repo, 'node_modules', name);
    if (!existsSync(from)) {
      if (optional) return;
      throw new Error(`runtime package ${name} is not installed in ${join(repo, 'node_modules')}`);
    }
    copied.add(name);
    mkdirSync(join(to, 'node_modules', name, '..'), { recursive: true });
    cpSync(from, join(to, 'node_modules', name), { recursive: true, dereference: true });
    const pkg = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const d of Object.keys(pkg.dependencies ?? {})) copy(d);
    for (const d of Object.keys(pkg.optionalDependencies ?? {})) copy(d, true);
  };
  for (const d of Object.keys((JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies)) copy(d);
  return join(to, 'dist', 'src', 'index.js');
}
/** What the children import: set by beforeAll (the build in the temporary folder). */
let library = '';
let children = 0;

/** A child in NS as uid 65534 with no capabilities; `inheritNetAdmin` puts CAP_NET_ADMIN in its inheritable set only. */
function unprivileged(script: string, path: string, inheritNetAdmin: boolean, node = process.execPath) {
  // The script as a module file next to the library (not `--input-type=module -e`: the kernel shell's worker
  // threads inherit the process's flags, and --input-type refuses a file entry).
  const file = join(dirname(library), '..', '..', `child-${++children}.mjs`);
  writeFileSync(file, script);
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      NS,
      'setpriv',
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      `--inh-caps=-all${inheritNetAdmin ? ',+net_admin' : ''}`,
      '--bounding-set=-all,+net_admin',
      '--',
      'env',
      `PATH=${path}:/usr/sbin:/usr/bin:/sbin:/bin`,
      `HOME=${path}`,
      node,
      file,
    ],
    { cwd: tmpdir(), stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push(l);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  /** The next JSON line the child prints. */
  let read = 0;
  const next = async (what: string, timeoutMs = 30_000): Promise<Record<string, any>> => {
    const end = Date.now() + timeoutMs;
    while (lines.length <= read) {
      if (child.exitCode !== null) throw new Error(`child exited (${child.exitCode}) before ${what}: ${stderr}`);
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stderr: ${stderr}`);
      await Promise.race([new Promise<void>((r) => waiters.push(r)), exited, new Promise((r) => setTimeout(r, 200))]);
    }
    return JSON.parse(lines[read++]) as Record<string, any>;
  };
  return { child, next, exited, stderr: () => stderr };
}

/** The child for the writing cases: KernelFib installs two routes, prints its status (again on each stdin line) and stops at stdin's end. */
const fibChild = () => `import { KernelFib } from ${JSON.stringify(library)};
    const f = new KernelFib({ scanSeconds: 0, adopt: false, log: (l, m) => process.stderr.write(l + ' ' + m + '\\n') });
    await f.start();
    f.setRoute('203.0.113.0/26', { kind: 'unicast', gateways: [{ address: '192.0.2.7' }, { address: '192.0.2.8' }] });
    f.setRoute('203.0.113.64/26', { kind: 'unicast', gateways: [{ address: '192.0.2.7' }] });
    await f.flushed();
    const show = () => console.log(JSON.stringify({ uid: process.getuid(), status: f.status() }));
    show();
    process.stdin.on('data', show);
    process.stdin.on('end', () => f.stop().then(() => process.exit(0)));`;

describe.skipIf(!available.ok)('kernel programming without CAP_NET_ADMIN in the process (the image: the capability on ip)', () => {
  let dir = '';
  let ipWithCap = '';
  let nodeWithCap = '';
  beforeAll(() => {
    vethNamespace(NS);
    // The copy of ip with the file capability: a folder uid 65534 may enter, on a filesystem that honours file capabilities.
    dir = mkdtempSync(join(tmpdir(), 'tsbgp-i15cap-'));
    chmodSync(dir, 0o755);
    ipWithCap = join(dir, 'ip');
    copyFileSync(spawnSync('sh', ['-c', 'command -v ip'], { encoding: 'utf8' }).stdout.trim(), ipWithCap);
    chmodSync(ipWithCap, 0o755);
    const set = spawnSync('setcap', ['cap_net_admin+ep', ipWithCap], { encoding: 'utf8' });
    if (set.status !== 0) throw new Error(`setcap cap_net_admin+ep ${ipWithCap} failed: ${set.stderr.trim()}`);
    // The setup itself: the copy may write a route as uid 65534 (else the folder's filesystem ignores file capabilities: nosuid?).
    const probe = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        NS,
        'setpriv',
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        '--inh-caps=-all,+net_admin',
        '--bounding-set=-all,+net_admin',
        '--',
        ipWithCap,
        'route',
        'add',
        '198.51.100.0/24',
        'via',
        '192.0.2.9',
      ],
      { encoding: 'utf8' },
    );
    if (probe.status !== 0)
      throw new Error(
        `setup: ${ipWithCap} (cap_net_admin+ep) cannot write a route as uid ${NOBODY}: ${probe.stderr.trim()} — does ${tmpdir()} honour file capabilities (mounted nosuid?)`,
      );
    ip('-n', NS, 'route', 'del', '198.51.100.0/24');
    // The image's way (Dockerfile): the file capability on node itself, none on ip.
    nodeWithCap = join(dir, 'node');
    copyFileSync(process.execPath, nodeWithCap);
    chmodSync(nodeWithCap, 0o755);
    const setNode = spawnSync('setcap', ['cap_net_admin+ep', nodeWithCap], { encoding: 'utf8' });
    if (setNode.status !== 0) throw new Error(`setcap cap_net_admin+ep ${nodeWithCap} failed: ${setNode.stderr.trim()}`);
    library = buildFor(join(dir, 'lib'));
  }, 120_000);
  afterAll(() => {
    destroyNamespace(NS);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('capability on ip (inheritable): writer iproute2 and why, routes installed, a route deleted by hand comes back', async () => {
    const c = unprivileged(fibChild(), dir, true);
    try {
      const first = await c.next('KernelFib started');
      expect(first.uid).toBe(NOBODY);
      expect(first.status).toMatchObject({ enabled: true, writer: 'iproute2', routes: { installed: 2, refused: 0 } });
      expect(first.status.writerNote).toMatch(
        /^this process may not write routes over netlink \(.*Operation not permitted.*; CAP_NET_ADMIN missing here\), but ip may: writing through ip -batch$/,
      );
      expect(ours()).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.64/26': ['192.0.2.7'] });

      // deleted by hand (as root): KernelFib's monitor sees it and its ip puts it back (no scan: scanSeconds 0)
      // (not checked gone in between: the put-back may already have happened; putBack below counts it)
      ip('-n', NS, 'route', 'del', '203.0.113.64/26', 'proto', '12');
      await eventually('the deleted route back', () => ours()['203.0.113.64/26'] !== undefined, 15_000);
      expect(ours()).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.64/26': ['192.0.2.7'] });
      c.child.stdin.write('status\n');
      const again = await c.next('status after the put-back');
      expect(again.status).toMatchObject({ enabled: true, writer: 'iproute2', routes: { installed: 2, refused: 0 } });
      expect(again.status.counters.putBack).toBeGreaterThanOrEqual(1);
      c.child.stdin.end();
      expect(await c.exited).toBe(0);
      // said once in the log, as a warning (read once the child is gone: stderr is another pipe)
      expect(
        c
          .stderr()
          .split('\n')
          .filter((l) => l.includes('over netlink')),
      ).toEqual([`warning kernel: ${first.status.writerNote}`]);
      // persist: stopping leaves the routes in the kernel
      expect(Object.keys(ours()).sort()).toEqual(['203.0.113.0/26', '203.0.113.64/26']);
    } finally {
      c.child.kill('SIGKILL');
      spawnSync('ip', ['-n', NS, 'route', 'flush', 'proto', '12']);
    }
  }, 60_000);

  it('capability on node, none on ip (the image): writer netlink, routes installed, a route deleted by hand comes back', async () => {
    // The system's ip first on PATH (no capability: a probe by it would say "Operation not permitted").
    const c = unprivileged(fibChild(), '/nonexistent', false, nodeWithCap);
    try {
      const first = await c.next('KernelFib started');
      expect(first.uid).toBe(NOBODY);
      expect(first.status).toMatchObject({ enabled: true, writer: 'netlink', listener: 'netlink', routes: { installed: 2, refused: 0 } });
      expect(first.status.error).toBeUndefined();
      expect(first.status.writerNote).toBeUndefined();
      expect(ours()).toEqual({ '203.0.113.0/26': ['192.0.2.7', '192.0.2.8'], '203.0.113.64/26': ['192.0.2.7'] });
      ip('-n', NS, 'route', 'del', '203.0.113.64/26', 'proto', '12');
      await eventually('the deleted route back', () => ours()['203.0.113.64/26'] !== undefined, 15_000);
      c.child.stdin.write('status\n');
      const again = await c.next('status after the put-back');
      expect(again.status).toMatchObject({ enabled: true, writer: 'netlink', routes: { installed: 2, refused: 0 } });
      expect(again.status.counters.putBack).toBeGreaterThanOrEqual(1);
      c.child.stdin.end();
      expect(await c.exited).toBe(0);
      expect(c.stderr()).not.toMatch(/^(warning|error) /m);
      expect(Object.keys(ours()).sort()).toEqual(['203.0.113.0/26', '203.0.113.64/26']);
    } finally {
      c.child.kill('SIGKILL');
      spawnSync('ip', ['-n', NS, 'route', 'flush', 'proto', '12']);
    }
  }, 60_000);

  // Two speakers in one process in the namespace, iBGP over loopback: the one with the kernel option learns a route.
  const speakers = () => `import { BgpSpeaker } from ${JSON.stringify(library)};
    const a = new BgpSpeaker({ asn: 65000, routerId: '192.0.2.1', listen: { addresses: ['127.0.0.1'], port: 0 }, kernel: { scanSeconds: 0 }, log: (l, m) => process.stderr.write(l + ' ' + m + '\\n') });
    await a.start();
    a.addPeer({ address: '127.0.0.2', asn: 65000, passive: true, families: ['ipv4'] });
    const b = new BgpSpeaker({ asn: 65000, routerId: '192.0.2.2', listen: false });
    b.addPeer({ address: '127.0.0.1', port: a.port, localAddress: '127.0.0.2', asn: 65000, families: ['ipv4'] });
    b.originate('203.0.113.0/26', { nextHop: '192.0.2.7' });
    await b.start();
    const end = Date.now() + 20000;
    const learned = () => a.status().find((p) => p.address === '127.0.0.2');
    while (!(learned()?.state === 'Established' && learned().counters.prefixesAccepted >= 1) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    console.log(JSON.stringify({ uid: process.getuid(), kernel: a.kernelStatus(), peer: { state: learned()?.state, accepted: learned()?.counters.prefixesAccepted } }));
    await b.stop(); await a.stop(); process.exit(0);`;

  it.each([
    ['the capability on ip but not inheritable (ip drops it)', true, false],
    ['no capability anywhere', false, false],
  ])(
    '%s: one clear error, kernel programming off, BGP runs on',
    async (_name, capOnIp, inherit) => {
      const c = unprivileged(speakers(), capOnIp ? dir : '/nonexistent', inherit);
      try {
        const r = await c.next('the speakers');
        expect(r.uid).toBe(NOBODY);
        expect(r.kernel).toMatchObject({
          enabled: false,
          error:
            'no permission to change routes (CAP_NET_ADMIN missing in this process and for ip: RTNETLINK answers: Operation not permitted); run as root or grant the capability',
        });
        expect(r.peer).toEqual({ state: 'Established', accepted: 1 });
        expect(await c.exited).toBe(0);
        // one error line about it (read once the child is gone: stderr is another pipe), nothing written
        expect(
          c
            .stderr()
            .split('\n')
            .filter((l) => l.includes('no permission to change routes')),
        ).toHaveLength(1);
        expect(ours()).toEqual({});
      } finally {
        c.child.kill('SIGKILL');
      }
    },
    60_000,
  );
});
