/**
 * Realizes a Topology with network namespaces: one namespace per node named
 * `tsbgp-<runid>-<node>`, a veth pair per link (a bridge node is a namespace
 * holding `br0`), addresses, and each node's daemon started inside its
 * namespace. Nothing is ever connected to the host's own namespace.
 *
 * Everything needed to tear a lab down (namespaces, pids, FRR pathspaces,
 * the work folder) lives in LabState, so the CLI can `down` a lab it brought
 * `up` in another process.
 */
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { alive, destroyNamespace, ip, listNamespaces, must, nsPids, run, sleep, sleepSync, type RunResult } from './shell.js';
import type { LabNode, NodeKind, Topology } from './topology.js';

export const NS_PREFIX = 'tsbgp-';
/** Where the CLI keeps the state of labs it brought up. */
export const STATE_DIR = '/run/tsbgp-lab';
export const GOBGP_PORT = 50051;

export interface NodeState {
  name: string;
  kind: NodeKind;
  ns: string;
  work: string;
  /** Pids of processes the lab spawned itself (gobgpd, exabgp, cmd). */
  pids: number[];
  /** Pid files of self-daemonizing daemons (bird, FRR), for inspection; teardown kills by namespace. */
  pidFiles: string[];
  birdSocket?: string;
  /** FRR pathspace name (`-N`), also the folder under /etc/frr and /var/run/frr. */
  frrPathspace?: string;
  gobgpPort?: number;
  /** Environment a self-spawned daemon runs with (besides the lab's own), to restart it alike. */
  env?: Record<string, string>;
}

export interface LabState {
  name: string;
  runId: string;
  work: string;
  nodes: NodeState[];
}

const DAEMON_BINARIES: Record<NodeKind, string[]> = {
  bird: ['bird', 'birdc'],
  frr: ['/usr/lib/frr/zebra', '/usr/lib/frr/bgpd', '/usr/lib/frr/staticd', 'vtysh'],
  gobgp: ['gobgpd', 'gobgp'],
  exabgp: ['exabgp'],
  tsbgp: [],
  host: [],
  bridge: [],
};

/** Binaries a topology with these kinds needs (besides `ip`). */
export function binariesFor(kinds: Iterable<NodeKind>): string[] {
  return [...new Set(['ip', ...[...kinds].flatMap((k) => DAEMON_BINARIES[k])])];
}

export class Lab {
  private torndown = false;
  private readonly onSignal = (): void => {
    this.teardown();
    process.exit(130);
  };
  private readonly onExit = (): void => this.teardown();

  private constructor(readonly state: LabState) {}

  /**
   * Creates namespaces, links and addresses, starts the daemons and runs each
   * node's `exec` commands. With `ephemeral` (tests) teardown is also hooked
   * to process exit, SIGINT and SIGTERM. On any failure the lab is torn down
   * before the error propagates.
   */
  static async up(topo: Topology, opts: { runId?: string; ephemeral?: boolean; log?: (s: string) => void; startTimeoutMs?: number } = {}): Promise<Lab> {
    const runId = opts.runId ?? String(process.pid);
    if (!/^[a-z0-9]{1,12}$/i.test(runId)) throw new Error(`run id "${runId}" must be 1-12 letters or digits`);
    const work = join(tmpdir(), `${NS_PREFIX}${runId}-${topo.name}`);
    const log = opts.log ?? (() => {});
    const state: LabState = {
      name: topo.name,
      runId,
      work,
      nodes: topo.nodes.map((n) => ({ name: n.name, kind: n.kind, ns: `${NS_PREFIX}${runId}-${n.name}`, work: join(work, n.name), pids: [], pidFiles: [] })),
    };
    const lab = new Lab(state);
    // hooked while coming up in any case, so Ctrl-C mid-way leaves nothing behind
    lab.hookProcess();
    try {
      for (const ns of state.nodes.map((n) => n.ns))
        if (listNamespaces().includes(ns)) throw new Error(`namespace ${ns} already exists (lab already up? try "down")`);
      mkdirSync(work, { recursive: true });
      chmodSync(work, 0o755);
      for (const n of state.nodes) {
        mkdirSync(n.work, { recursive: true });
        chmodSync(n.work, 0o1777); // FRR runs as user frr and logs here; sticky, as /tmp: an agent refuses a control socket folder others may write without it
        ip('netns', 'add', n.ns);
        ip('-n', n.ns, 'link', 'set', 'lo', 'up');
        if (n.kind === 'bridge') {
          ip('-n', n.ns, 'link', 'add', 'br0', 'type', 'bridge');
          ip('-n', n.ns, 'link', 'set', 'br0', 'up');
        } else {
          must('ip', ['netns', 'exec', n.ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1']);
        }
      }
      lab.createLinks(topo);
      lab.addAddresses(topo);
      for (const node of topo.nodes) {
        const n = lab.node(node.name);
        if (n.kind === 'bridge') continue;
        log(`starting ${node.name} (${node.kind}) in ${n.ns}`);
        await lab.startNode(node, n, opts.startTimeoutMs ?? 15_000);
      }
      for (const node of topo.nodes) {
        for (const cmd of node.exec) {
          const r = lab.exec(node.name, cmd);
          if (r.status !== 0) throw new Error(`exec on node "${node.name}" failed (exit ${r.status}): ${cmd}\n${r.stderr.trim() || r.stdout.trim()}`);
        }
      }
      writeFileSync(join(work, 'state.json'), JSON.stringify(state, null, 2));
      if (!opts.ephemeral) lab.unhookProcess();
      return lab;
    } catch (e) {
      lab.teardown();
      throw e;
    }
  }

  /** A handle on a lab brought up by another process (the CLI's `down`/`exec`). */
  static fromState(state: LabState): Lab {
    return new Lab(state);
  }

  node(name: string): NodeState {
    const n = this.state.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`lab "${this.state.name}" has no node "${name}" (nodes: ${this.state.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  ns(name: string): string {
    return this.node(name).ns;
  }

  /**
   * Runs a command in a node: a string goes through `sh -c`, an array is run
   * as is. `birdc`, `vtysh` and `gobgp` resolve to wrappers that already point
   * at the node's daemon (socket, pathspace, API port), as in a container.
   */
  exec(name: string, cmd: string | readonly string[], opts: { timeoutMs?: number } = {}): RunResult {
    const n = this.node(name);
    const argv = typeof cmd === 'string' ? ['sh', '-c', cmd] : [...cmd];
    const env = { ...process.env, PATH: `${join(n.work, 'bin')}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`, TSBGP_NODE: name, TSBGP_WORK: n.work };
    return run('ip', ['netns', 'exec', n.ns, ...argv], { env, timeoutMs: opts.timeoutMs ?? 30_000 });
  }

  /** Like exec, but throws with the output when the command fails. */
  mustExec(name: string, cmd: string | readonly string[]): string {
    const r = this.exec(name, cmd);
    if (r.status !== 0)
      throw new Error(
        `${this.state.name}/${name}: ${typeof cmd === 'string' ? cmd : cmd.join(' ')} failed (exit ${r.status}): ${r.stderr.trim() || r.stdout.trim()}`,
      );
    return r.stdout;
  }

  /** Kills the daemons, deletes the namespaces, FRR pathspaces and work folder. Idempotent, synchronous. */
  teardown(): void {
    if (this.torndown) return;
    this.torndown = true;
    this.unhookProcess();
    // Every process in a lab namespace was started by this lab, so the
    // namespace's own pid list is the kill list (a stale pid file could name
    // an unrelated process that reused the pid).
    const pids = this.state.nodes.flatMap((n) => nsPids(n.ns));
    for (const p of pids) signal(p, 'SIGTERM');
    const deadline = Date.now() + 3000;
    while (pids.some(alive) && Date.now() < deadline) sleepSync(50);
    for (const p of pids) if (alive(p)) signal(p, 'SIGKILL');
    for (const n of this.state.nodes) {
      destroyNamespace(n.ns, 1000);
      if (n.frrPathspace) removeFrrPathspace(n.frrPathspace);
    }
    rmSync(this.state.work, { recursive: true, force: true });
    rmSync(join(STATE_DIR, `${this.state.name}.json`), { force: true });
  }

  private hookProcess(): void {
    process.on('exit', this.onExit);
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  private unhookProcess(): void {
    process.off('exit', this.onExit);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }

  private createLinks(topo: Topology): void {
    topo.links.forEach((l, i) => {
      const a = this.node(l.a.node);
      const b = this.node(l.b.node);
      // temporary names, unique per run, so nothing clashes even for a moment
      const ta = `v${this.state.runId.slice(-7)}x${i}a`;
      const tb = `v${this.state.runId.slice(-7)}x${i}b`;
      ip('link', 'add', ta, 'netns', a.ns, 'type', 'veth', 'peer', 'name', tb, 'netns', b.ns);
      for (const [n, tmp, iface] of [
        [a, ta, l.a.iface],
        [b, tb, l.b.iface],
      ] as const) {
        ip('-n', n.ns, 'link', 'set', tmp, 'name', iface);
        if (n.kind === 'bridge') ip('-n', n.ns, 'link', 'set', iface, 'master', 'br0');
        ip('-n', n.ns, 'link', 'set', iface, 'up');
      }
    });
  }

  private addAddresses(topo: Topology): void {
    for (const [key, addrs] of Object.entries(topo.addresses)) {
      const [node, iface] = key.split(':');
      const n = this.node(node);
      for (const a of addrs) ip('-n', n.ns, 'addr', 'add', a, 'dev', iface, ...(a.includes(':') ? ['nodad'] : []));
    }
  }

  private wrapper(n: NodeState, name: string, target: string, args: string[]): void {
    const dir = join(n.work, 'bin');
    mkdirSync(dir, { recursive: true });
    const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
    writeFileSync(join(dir, name), `#!/bin/sh\nexec ${target} ${quoted} "$@"\n`, { mode: 0o755 });
  }

  private spawnDetached(n: NodeState, argv: string[], logName: string, env: NodeJS.ProcessEnv = process.env): number {
    const fd = openSync(join(n.work, logName), 'a');
    const child = spawn('ip', ['netns', 'exec', n.ns, ...argv], { env, stdio: ['ignore', fd, fd], detached: true });
    closeSync(fd);
    child.unref();
    if (!child.pid) throw new Error(`could not start ${argv[0]} in ${n.ns}`);
    // `ip netns exec` execs the command in place, so this is the daemon's pid
    n.pids.push(child.pid);
    return child.pid;
  }

  /** `timeoutMs`: how long a daemon may take to answer (configs with a full table take longer). */
  private async startNode(node: LabNode, n: NodeState, timeoutMs: number): Promise<void> {
    const mustIn = (argv: string[], env?: NodeJS.ProcessEnv): string => must('ip', ['netns', 'exec', n.ns, ...argv], { env });
    switch (node.kind) {
      case 'bird': {
        const conf = join(n.work, 'bird.conf');
        copyFileSync(node.config!, conf);
        n.birdSocket = join(n.work, 'bird.ctl');
        const pidFile = join(n.work, 'bird.pid');
        n.pidFiles.push(pidFile);
        mustIn(['bird', '-c', conf, '-s', n.birdSocket, '-P', pidFile]);
        this.wrapper(n, 'birdc', '/usr/sbin/birdc', ['-s', n.birdSocket]);
        await waitUntil(`${node.name}: bird control socket`, timeoutMs, () => run('birdc', ['-s', n.birdSocket!, 'show', 'status']).status === 0);
        break;
      }
      case 'frr': {
        const space = n.ns;
        n.frrPathspace = space;
        const etc = `/etc/frr/${space}`;
        const varRun = `/var/run/frr/${space}`;
        mkdirSync(etc, { recursive: true });
        mkdirSync(varRun, { recursive: true });
        const conf = join(etc, 'frr.conf');
        const text = readFileSync(node.config!, 'utf8');
        writeFileSync(conf, text);
        const statics = /^\s*ipv?6? route /m.test(text);
        // bfdd when the config speaks of BFD (a `bfd` block or `neighbor … bfd`)
        const bfd = /^\s*(bfd\b|neighbor \S+ bfd\b)/m.test(text);
        writeFileSync(join(etc, 'daemons'), `zebra=yes\nbgpd=yes\nstaticd=${statics ? 'yes' : 'no'}\nbfdd=${bfd ? 'yes' : 'no'}\nvtysh_enable=yes\n`);
        writeFileSync(join(etc, 'vtysh.conf'), 'service integrated-vtysh-config\n');
        must('chown', ['-R', 'frr:frr', etc, varRun]);
        for (const d of ['zebra', ...(statics ? ['staticd'] : []), ...(bfd ? ['bfdd'] : []), 'bgpd']) {
          const pidFile = join(varRun, `${d}.pid`);
          n.pidFiles.push(pidFile);
          mustIn([`/usr/lib/frr/${d}`, '-d', '-N', space, '-f', conf, '-i', pidFile]);
        }
        this.wrapper(n, 'vtysh', '/usr/bin/vtysh', ['-N', space]);
        await waitUntil(`${node.name}: vtysh`, timeoutMs, () => run('vtysh', ['-N', space, '-c', 'show bgp summary']).status === 0);
        break;
      }
      case 'gobgp': {
        const conf = join(n.work, 'gobgpd.toml');
        copyFileSync(node.config!, conf);
        n.gobgpPort = GOBGP_PORT;
        this.spawnDetached(n, ['gobgpd', '-f', conf, '--api-hosts', `127.0.0.1:${GOBGP_PORT}`, '--pprof-disable'], 'gobgpd.log');
        this.wrapper(n, 'gobgp', '/usr/bin/gobgp', ['-p', String(GOBGP_PORT)]);
        await waitUntil(
          `${node.name}: gobgpd API`,
          timeoutMs,
          () => run('ip', ['netns', 'exec', n.ns, 'gobgp', '-p', String(GOBGP_PORT), 'global']).status === 0,
        );
        break;
      }
      case 'exabgp': {
        copyFileSync(node.config!, join(n.work, 'exabgp.conf'));
        n.env = {
          'exabgp.daemon.user': 'root',
          'exabgp.daemon.daemonize': 'false',
          'exabgp.daemon.pid': join(n.work, 'exabgp.pid'),
          'exabgp.log.destination': join(n.work, 'exabgp.log'),
          'exabgp.api.cli': 'false',
          'exabgp.tcp.bind': '',
          ...node.env,
        };
        n.pidFiles.push(join(n.work, 'exabgp.pid'));
        await this.spawnExabgp(node.name, n);
        break;
      }
      case 'tsbgp':
      case 'host':
        if (node.cmd)
          this.spawnDetached(n, ['sh', '-c', node.cmd], `${node.kind}.log`, { ...process.env, TSBGP_NODE: node.name, TSBGP_WORK: n.work, ...node.env });
        break;
      case 'bridge':
        break;
    }
  }

  private async spawnExabgp(name: string, n: NodeState): Promise<void> {
    const pid = this.spawnDetached(n, ['exabgp', join(n.work, 'exabgp.conf')], 'exabgp.out', { ...process.env, ...n.env });
    await sleep(500);
    if (!alive(pid)) throw new Error(`${name}: exabgp exited at once; see ${join(n.work, 'exabgp.out')}:\n${safeRead(join(n.work, 'exabgp.out'))}`);
  }

  /**
   * Stops an ExaBGP node's daemon (SIGTERM: it closes its sessions) and
   * starts it again on the config in its work folder, which the caller may
   * have rewritten: ExaBGP's own reload (SIGUSR1) is ignored while a peer has
   * routes not yet sent (one that never connects, say).
   */
  async restartExabgp(name: string): Promise<void> {
    const n = this.node(name);
    if (n.kind !== 'exabgp') throw new Error(`node "${name}" is a ${n.kind}, not an exabgp node`);
    const old = n.pids.filter(alive);
    for (const p of old) signal(p, 'SIGTERM');
    const deadline = Date.now() + 5000;
    while (old.some(alive) && Date.now() < deadline) await sleep(50);
    for (const p of old) if (alive(p)) signal(p, 'SIGKILL');
    n.pids = n.pids.filter((p) => !old.includes(p));
    await this.spawnExabgp(name, n);
  }

  // ------------------------------------------------------------ state readers

  /** `birdc show protocols all`, one entry per protocol. */
  birdProtocols(name: string): BirdProtocol[] {
    return parseBirdProtocols(this.mustExec(name, ['birdc', 'show', 'protocols', 'all']));
  }

  /** `birdc show route all`, one entry per route (several per prefix with multipath or several sources). */
  birdRoutes(name: string): BirdRoute[] {
    return parseBirdRoutes(this.mustExec(name, ['birdc', 'show', 'route', 'all']));
  }

  /** `show bgp neighbor json`: neighbor address → FRR's neighbor object (bgpState, …). */
  frrNeighbors(name: string): Record<string, { bgpState: string; [k: string]: unknown }> {
    return JSON.parse(this.mustExec(name, ['vtysh', '-c', 'show bgp neighbor json'])) as Record<string, { bgpState: string }>;
  }

  /** `show bgp ipv4|ipv6 unicast json`: prefix → paths. */
  frrRib(name: string, family: 4 | 6 = 4): Record<string, FrrPath[]> {
    const j = JSON.parse(this.mustExec(name, ['vtysh', '-c', `show bgp ipv${family} unicast json`])) as { routes?: Record<string, FrrPath[]> };
    return j.routes ?? {};
  }

  /** `gobgp -j neighbor`. */
  gobgpNeighbors(name: string): GobgpNeighbor[] {
    return JSON.parse(this.mustExec(name, ['gobgp', '-j', 'neighbor'])) as GobgpNeighbor[];
  }

  /** `gobgp -j global rib [-a ipv6]`: prefix → paths. */
  gobgpRib(name: string, family: 4 | 6 = 4): Record<string, unknown[]> {
    return JSON.parse(this.mustExec(name, ['gobgp', '-j', 'global', 'rib', '-a', family === 4 ? 'ipv4' : 'ipv6'])) as Record<string, unknown[]>;
  }

  /** The node's kernel routing table (`ip -j route` / `ip -6 -j route`). */
  kernelRoutes(name: string, family: 4 | 6 = 4): KernelRoute[] {
    return JSON.parse(this.mustExec(name, ['ip', ...(family === 6 ? ['-6'] : []), '-j', 'route']) || '[]') as KernelRoute[];
  }

  /** The node's IPv4 routes of tsbgp's (and BIRD's) kernel protocol (12, "bird"): prefix → "blackhole" or its sorted gateways. */
  kernelBirdRoutes(name: string): Record<string, string[] | string> {
    const view = (r: KernelRoute): string[] | string =>
      r.type === 'blackhole' ? 'blackhole' : (r.nexthops ? r.nexthops.map((h) => h.gateway ?? '?') : [r.gateway ?? '?']).sort();
    return Object.fromEntries(
      this.kernelRoutes(name, 4)
        .filter((r) => r.protocol === 'bird')
        .map((r) => [routeDst(r), view(r)]),
    );
  }

  /** One ping from the node to `to` (3 s to answer): whether it came back. */
  pings(name: string, to: string): boolean {
    return this.exec(name, ['ping', '-n', '-c', '1', '-W', '3', to]).status === 0;
  }
}

/** A kernel route's destination as a prefix (`ip -j route` gives a host route without its /32). */
export const routeDst = (r: KernelRoute): string => (r.dst.includes('/') ? r.dst : `${r.dst}/32`);

export interface KernelRoute {
  dst: string;
  gateway?: string;
  dev?: string;
  protocol?: string;
  nexthops?: { gateway?: string; dev?: string; weight?: number }[];
  [k: string]: unknown;
}

export interface FrrPath {
  valid?: boolean;
  bestpath?: boolean;
  multipath?: boolean;
  path?: string;
  /** The neighbor the path came from. */
  peerId?: string;
  nexthops?: { ip?: string; afi?: string }[];
  [k: string]: unknown;
}

export interface GobgpNeighbor {
  conf: { neighbor_address: string; peer_asn?: number };
  state: { session_state?: number | string; [k: string]: unknown };
}

/** GoBGP's JSON gives session_state as a number (6 = established) or a name, by version. */
export function gobgpEstablished(n: GobgpNeighbor): boolean {
  const s = n.state.session_state;
  return s === 6 || (typeof s === 'string' && s.toLowerCase().includes('established'));
}

export interface BirdProtocol {
  name: string;
  proto: string;
  table: string;
  state: string;
  since: string;
  info: string;
  /** Indented "Key: value" lines of `show protocols all`, e.g. "BGP state" → "Established". */
  details: Record<string, string>;
}

export function parseBirdProtocols(text: string): BirdProtocol[] {
  const out: BirdProtocol[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim() || /^BIRD [\d.]+ ready\./.test(line) || /^Name\s+Proto\s+Table/.test(line)) continue;
    if (!/^\s/.test(line)) {
      const [name, proto, table, state, since, ...info] = line.trim().split(/\s+/);
      out.push({ name, proto, table, state, since, info: info.join(' '), details: {} });
      // "since" may be a date and a time in some time formats; the rest stays in info
    } else if (out.length) {
      const m = /^\s+([A-Za-z][^:]*):\s*(.*)$/.exec(line);
      if (m && !(m[1].trim() in out[out.length - 1].details)) out[out.length - 1].details[m[1].trim()] = m[2].trim();
    }
  }
  return out;
}

export interface BirdRoute {
  table: string;
  prefix: string;
  /** e.g. "unicast", "blackhole", "unreachable". */
  type: string;
  protocol: string;
  primary: boolean;
  /** Next hops from "via X on dev" lines (several for ECMP). */
  via: { gateway: string; dev?: string }[];
  /** Attribute lines, e.g. "BGP.as_path" → "65002". */
  attrs: Record<string, string>;
}

export function parseBirdRoutes(text: string): BirdRoute[] {
  const out: BirdRoute[] = [];
  let table = '';
  let prefix = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+$/, '');
    if (!line || /^BIRD [\d.]+ ready\./.test(line)) continue;
    const t = /^Table (\S+):$/.exec(line);
    if (t) {
      table = t[1];
      continue;
    }
    // "<prefix>  <type> [<proto> <since>] * (<pref>) …" or, for more routes to the same prefix, the same without the prefix
    const r = /^(\S+)?\s+(unicast|blackhole|unreachable|prohibit|multicast)\s+\[(\S+)\s[^\]]*\](\s+\*)?/.exec(line);
    if (r && (r[1] || prefix)) {
      if (r[1]) prefix = r[1];
      out.push({ table, prefix, type: r[2], protocol: r[3], primary: !!r[4], via: [], attrs: {} });
      continue;
    }
    const cur = out[out.length - 1];
    if (!cur) continue;
    const via = /^\s+via (\S+)(?: on (\S+))?/.exec(line);
    if (via) {
      cur.via.push({ gateway: via[1], dev: via[2] });
      continue;
    }
    const a = /^\s+([A-Za-z][\w.]*):\s?(.*)$/.exec(line);
    if (a) cur.attrs[a[1]] = a[2];
  }
  return out;
}

// ------------------------------------------------------------ stale cleanup

/**
 * Removes what killed runs left behind: namespaces `tsbgp-<pid>-*` whose pid
 * is gone, `tsbgp-c<pid>-*` (CLI labs) without a state file, their FRR
 * pathspaces and work folders. Labs of live processes are never touched.
 */
export function cleanupStale(log: (s: string) => void = () => {}): string[] {
  const removed: string[] = [];
  const claimed = new Set(listStates().map((s) => s.runId));
  const stale = (runId: string): boolean => {
    if (/^\d+$/.test(runId)) return !alive(Number(runId));
    if (/^c\d+$/.test(runId)) return !claimed.has(runId);
    return false;
  };
  const re = /^tsbgp-([a-z0-9]+)-/i;
  for (const ns of listNamespaces()) {
    const m = re.exec(ns);
    if (m && stale(m[1])) {
      log(`removing stale namespace ${ns}`);
      destroyNamespace(ns, 1000);
      removed.push(ns);
    }
  }
  for (const dir of existsSync('/etc/frr') ? readdirSync('/etc/frr') : []) {
    const m = re.exec(dir);
    if (m && stale(m[1])) {
      removeFrrPathspace(dir);
      removed.push(`/etc/frr/${dir}`);
    }
  }
  for (const dir of readdirSync(tmpdir())) {
    const m = re.exec(dir);
    if (m && stale(m[1]) && existsSync(join(tmpdir(), dir, 'state.json'))) {
      rmSync(join(tmpdir(), dir), { recursive: true, force: true });
      removed.push(join(tmpdir(), dir));
    }
  }
  return removed;
}

/** States of labs the CLI brought up. */
export function listStates(): LabState[] {
  if (!existsSync(STATE_DIR)) return [];
  return readdirSync(STATE_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(STATE_DIR, f), 'utf8')) as LabState);
}

export function saveState(state: LabState): void {
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(join(STATE_DIR, `${state.name}.json`), JSON.stringify(state, null, 2));
}

function removeFrrPathspace(space: string): void {
  // only our own pathspaces: never the system's /etc/frr itself
  if (!space.startsWith(NS_PREFIX) || space.includes('/')) return;
  rmSync(`/etc/frr/${space}`, { recursive: true, force: true });
  rmSync(`/var/run/frr/${space}`, { recursive: true, force: true });
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-2000);
  } catch {
    return '';
  }
}

export async function waitUntil(what: string, ms: number, test: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(250);
  }
}
