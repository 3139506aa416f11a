/**
 * The lab benchmarks' routers: one node per daemon kind (tsbgp, BIRD, FRR,
 * GoBGP) in the role of sender, device under test or receiver, with its
 * configuration generated for the sessions and table of a scenario, and the
 * few things a benchmark asks of it — is the table loaded, how many routes
 * came in, when did a session come up (BIRD), which pids to weigh.
 *
 * Built on test/lab (namespaces, daemons, teardown) and test/interop (the
 * speaker node, the renderers of daemon-routes.ts, the MRT writer).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { birdAttrs, frrRouteMap } from '../../test/interop/daemon-routes.js';
import { mrtFile } from '../../test/interop/mrt.js';
import { SpeakerProcess } from '../../test/interop/speaker-client.js';
import { Lab } from '../../test/lab/netns.js';
import { cleanupStale } from '../../test/lab/netns.js';
import { nsPids } from '../../test/lab/shell.js';
import type { LabNode, Topology } from '../../test/lab/topology.js';
import type { PeerOptions } from '../../src/speaker/types.js';
import { compileBench, deployedNodeFlags } from '../compile.js';
import { routes, type FullTable } from './table.js';
import { ACCEPT_ALL, type BenchNodeConfig } from './tsbgp-node.js';

export const KINDS = ['tsbgp', 'bird', 'frr', 'gobgp'] as const;
export type Kind = (typeof KINDS)[number];
export const LABEL: Record<Kind, string> = { tsbgp: 'tsbgp', bird: 'BIRD', frr: 'FRR', gobgp: 'GoBGP' };

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');

/**
 * tsbgp runs as plain JavaScript, as a deployment would: the node program and
 * what it imports compiled once by tsc into dist/lab-node (bench/compile.ts).
 * Through the tsx loader the process would carry ~30 MB more.
 */
export function compiledNode(): string {
  return compileBench([join(HERE, 'tsbgp-node.ts'), join(ROOT, 'src', 'bfd', 'worker.ts')], 'lab-node')[0];
}

export type Role = 'sender' | 'dut' | 'receiver';

/** A daemon cannot do what a scenario asks within the benchmark's bounds: measured, shown as n/a with the reason. */
export class DaemonLimit extends Error {}

/** One BGP session as seen from one end. */
export interface Session {
  /** Name on this node (BIRD protocol name): `p_<peer node>_<family>`. */
  readonly name: string;
  readonly family: 4 | 6;
  readonly local: string;
  readonly remote: string;
  readonly remoteAsn: number;
  /** The peer is downstream of us (we export to it), else upstream (we import). */
  readonly downstream: boolean;
  /** BIRD: starts disabled; the benchmark enables it (BIRD is the observer of every measured session). */
  readonly disabled?: boolean;
  /** false: no BFD on this session even though the router has `bfd` (a table feed beside BFD sessions). */
  readonly bfd?: boolean;
}

export interface RouterSpec {
  readonly node: string;
  readonly kind: Kind;
  readonly role: Role;
  readonly asn: number;
  readonly routerId: string;
  readonly sessions: readonly Session[];
  /** What a sender originates. */
  readonly table?: FullTable;
  /** tsbgp only: extra `node` flags for this router (a runtime variant measured beside the default). */
  readonly nodeArgs?: readonly string[];
  /** BFD 300 ms × 3 on every session (BIRD: `protocol bfd` + `bfd on`; FRR: bfdd, a `bfd profile`; tsbgp: PeerOptions.bfd, its worker thread unless `thread: false`), except those with `bfd: false`. */
  readonly bfd?: { readonly thread: boolean };
}

const ORIGIN_NH = { 4: '192.0.2.254', 6: '2001:db8:ffff::1' } as const;

// ------------------------------------------------------------ configs

function birdConfig(r: RouterSpec): string {
  const lines = [`router id ${r.routerId};`, 'timeformat protocol "%F %T.%3f";', 'protocol device {}'];
  if (r.table) {
    // one static protocol per family and attribute set: the set is applied once by its import filter
    const bySet = new Map<string, string[]>();
    for (const family of [4, 6] as const) {
      for (const { prefix, set } of routes(r.table, family)) {
        const k = `${family}_${set}`;
        let l = bySet.get(k);
        if (!l) bySet.set(k, (l = []));
        l.push(`  route ${prefix} blackhole;`);
      }
    }
    for (const [k, l] of bySet) {
      const [family, set] = k.split('_').map(Number);
      lines.push(`protocol static t${k} { ipv${family} { import filter { ${birdAttrs(r.table.sets[set])} accept; }; };`);
      for (const x of l) lines.push(x); // not push(...l): a million arguments overflow the stack
      lines.push('}');
    }
    // BIRD sends MED to an eBGP peer only when the export filter set it (see tsbgp-bird/bird.conf)
    lines.push('filter originated { if defined(bgp_med) then bgp_med = bgp_med; accept; }');
  }
  if (r.bfd) lines.push('protocol bfd { interface "*" { min rx interval 300 ms; min tx interval 300 ms; multiplier 3; }; }');
  for (const s of r.sessions) {
    const exp = !s.downstream ? 'none' : r.table ? 'filter originated' : 'all';
    lines.push(
      `protocol bgp ${s.name} {`,
      ...(s.disabled ? ['  disabled;'] : []),
      ...(r.bfd && s.bfd !== false ? ['  bfd on;'] : []),
      `  local ${s.local} as ${r.asn}; neighbor ${s.remote} as ${s.remoteAsn};`,
      '  connect delay time 1; connect retry time 1; error wait time 1, 2; graceful restart off;',
      `  ipv${s.family} { import ${s.downstream ? 'none' : 'all'}; export ${exp}; };`,
      '}',
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * FRR: the sessions go in the startup config (read by zebra and bgpd alike);
 * the table (route maps and `network` statements) is loaded into bgpd alone
 * afterwards (`frrTable`, `vtysh -d bgpd -f`), its networks grouped by route
 * map. FRR re-applies a route map to every network statement each time its
 * update timer finds the map changed, and a network naming a map counts as
 * a change: in table order (maps interleaved) the load of 1.26 M networks
 * with 2,000 maps did not finish in 10 minutes (20,000 in over 100 s).
 */
function frrConfig(r: RouterSpec): string {
  const lines = ['frr defaults traditional', `hostname ${r.node}`, '! routes stay in bgpd: nothing goes to zebra or a kernel table', 'bgp no-rib', '!'];
  if (r.bfd) lines.push('bfd', ' profile fast', '  receive-interval 300', '  transmit-interval 300', '  detect-multiplier 3', ' !', '!');
  lines.push(
    `router bgp ${r.asn}`,
    ` bgp router-id ${r.routerId}`,
    ' no bgp ebgp-requires-policy',
    ' no bgp network import-check',
    ' no bgp default ipv4-unicast',
  );
  for (const s of r.sessions) {
    lines.push(` neighbor ${s.remote} remote-as ${s.remoteAsn}`, ` neighbor ${s.remote} timers connect 1`, ` neighbor ${s.remote} advertisement-interval 0`);
    if (r.bfd && s.bfd !== false) lines.push(` neighbor ${s.remote} bfd profile fast`);
  }
  for (const family of [4, 6] as const) {
    const ss = r.sessions.filter((s) => s.family === family);
    if (ss.length === 0) continue;
    lines.push(` address-family ipv${family} unicast`, ...ss.map((s) => `  neighbor ${s.remote} activate`), ' exit-address-family');
  }
  lines.push('exit', '');
  return lines.join('\n');
}

/** FRR: the sender's table as vtysh commands: route maps first (applied at once, to no route yet), then the networks. */
function frrTable(r: RouterSpec): string {
  const t = r.table!;
  const lines: string[] = [];
  t.sets.forEach((a, i) => lines.push(frrRouteMap(`g${i}`, a)));
  lines.push(`router bgp ${r.asn}`);
  for (const family of [4, 6] as const) {
    if (!r.sessions.some((s) => s.family === family)) continue;
    lines.push(` address-family ipv${family} unicast`);
    const bySet = [...routes(t, family)].sort((a, b) => a.set - b.set);
    for (const { prefix, set } of bySet) lines.push(`  network ${prefix} route-map g${set}`);
    lines.push(' exit-address-family');
  }
  lines.push('exit', '');
  return lines.join('\n');
}

function gobgpConfig(r: RouterSpec): string {
  const lines = ['[global.config]', `  as = ${r.asn}`, `  router-id = "${r.routerId}"`];
  for (const s of r.sessions) {
    lines.push(
      '[[neighbors]]',
      '  [neighbors.config]',
      `    neighbor-address = "${s.remote}"`,
      `    peer-as = ${s.remoteAsn}`,
      '  [neighbors.transport.config]',
      `    local-address = "${s.local}"`,
      // without it GoBGP refuses connections for 30 s after a session ends
      '  [neighbors.timers.config]',
      '    connect-retry = 1',
      '    idle-hold-time-after-reset = 1',
      '  [[neighbors.afi-safis]]',
      '    [neighbors.afi-safis.config]',
      `      afi-safi-name = "ipv${s.family}-unicast"`,
    );
  }
  return lines.join('\n') + '\n';
}

function tsbgpConfig(r: RouterSpec): BenchNodeConfig {
  const peers: PeerOptions[] = r.sessions.map((s) => ({
    address: s.remote,
    asn: s.remoteAsn,
    localAddress: s.local,
    families: [s.family === 4 ? 'ipv4' : 'ipv6'],
    // as the daemons are set: retry and restart after a reset within a second
    connectRetryTime: 1,
    idleHoldTime: 1,
    gracefulRestart: false,
    ...(s.downstream && r.role === 'dut' ? { exportPolicies: [ACCEPT_ALL] } : {}),
    ...(r.bfd && s.bfd !== false ? { bfd: { minTx: 300, minRx: 300, multiplier: 3 } } : {}),
  }));
  return {
    speaker: { asn: r.asn, routerId: r.routerId, listen: { port: 179 }, ...(r.bfd ? { bfd: { thread: r.bfd.thread } } : {}) },
    peers,
    verbose: false,
    bench: { table: r.table?.spec, acceptAll: r.role === 'dut' },
  };
}

// ------------------------------------------------------------ processes

/** Runs a command in a namespace without blocking the event loop (the tsbgp node's replies keep flowing). */
export function nsExec(ns: string, argv: readonly string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, ...argv], { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${argv.join(' ')} in ${ns} failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

const DAEMONS = new Set(['bird', 'zebra', 'bgpd', 'staticd', 'gobgpd', 'node', 'watchfrr']);

function procStatus(pid: number): { name: string; hwm: number; rss: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (k: string): string | undefined => new RegExp(`^${k}:\\s+(.*)$`, 'm').exec(text)?.[1];
    return {
      name: field('Name') ?? '',
      hwm: Number(field('VmHWM')?.replace(' kB', '') ?? NaN) * 1024,
      rss: Number(field('VmRSS')?.replace(' kB', '') ?? NaN) * 1024,
    };
  } catch {
    return undefined;
  }
}

export class Router {
  private constructor(
    readonly spec: RouterSpec,
    readonly lab: Lab,
    readonly ts?: SpeakerProcess,
  ) {}

  get kind(): Kind {
    return this.spec.kind;
  }

  get ns(): string {
    return this.lab.ns(this.spec.node);
  }

  static async start(lab: Lab, spec: RouterSpec): Promise<Router> {
    if (spec.kind !== 'tsbgp') {
      const r = new Router(spec, lab);
      if (spec.kind === 'gobgp' && spec.table) await r.injectMrt();
      if (spec.kind === 'frr' && spec.table) await r.loadFrrTable();
      return r;
    }
    // --expose-gc: the heap figure is taken after a full collection; then the deployment's flags (deploy/daemonset.yaml),
    // the scenario's, and TSBGP_NODE_ARGS (--cpu-prof …): a later flag wins
    const ts = await SpeakerProcess.start(lab, spec.node, tsbgpConfig(spec), {
      script: compiledNode(),
      nodeArgs: [
        '--expose-gc',
        '--max-old-space-size=4096',
        ...deployedNodeFlags(),
        ...(spec.nodeArgs ?? []),
        ...(process.env.TSBGP_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ],
      timeoutMs: 300_000,
    });
    return new Router(spec, lab, ts);
  }

  /** GoBGP: the sender's table through `gobgp mrt inject`, re-injected until all of it is in (inject loses a tail). */
  private async injectMrt(): Promise<void> {
    const t = this.spec.table!;
    const want = { 4: t.v4.addr.length, 6: t.v6.hi.length };
    const dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-mrt-`));
    try {
      const file = join(dir, 'table.mrt');
      const [nh4, nh6] = [
        this.spec.sessions.find((s) => s.family === 4)?.local ?? ORIGIN_NH[4],
        this.spec.sessions.find((s) => s.family === 6)?.local ?? ORIGIN_NH[6],
      ];
      const all = [...routes(t)].map((r) => ({ prefix: r.prefix, set: t.sets[r.set] }));
      for (let attempt = 0; ; attempt++) {
        // `mrt inject` loses the last few hundred paths it reads: end the file with a padding of
        // routes already given (re-adding a path changes nothing), longer on each attempt
        const pad = Math.min(all.length, 2000 << attempt);
        writeFileSync(file, mrtFile({ routerId: this.spec.routerId, peerAsn: this.spec.asn, nextHop4: nh4, nextHop6: nh6 }, [...all, ...all.slice(0, pad)]));
        await nsExec(this.ns, ['gobgp', '-p', '50051', 'mrt', 'inject', 'global', file], 1_800_000);
        const have = { 4: await this.gobgpRibSize(4), 6: await this.gobgpRibSize(6) };
        if (have[4] >= want[4] && have[6] >= want[6]) return;
        if (attempt === 3) throw new Error(`gobgp mrt inject: ${have[4]}/${want[4]} IPv4 and ${have[6]}/${want[6]} IPv6 routes after 4 attempts`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async loadFrrTable(): Promise<void> {
    const file = join(this.lab.node(this.spec.node).work, 'table.vtysh');
    writeFileSync(file, frrTable(this.spec));
    const limitMs = 600_000;
    const t0 = Date.now();
    try {
      await nsExec(this.ns, ['vtysh', '-N', this.lab.node(this.spec.node).frrPathspace!, '-d', 'bgpd', '-f', file], limitMs);
    } catch (e) {
      if (Date.now() - t0 < limitMs) throw e;
      const t = this.spec.table!;
      throw new DaemonLimit(
        `FRR did not load ${t.v4.addr.length + t.v6.hi.length} \`network … route-map\` statements over ${t.sets.length} route maps in ${limitMs / 60_000} min`,
      );
    }
  }

  private async gobgpRibSize(family: 4 | 6): Promise<number> {
    const j = JSON.parse(await nsExec(this.ns, ['gobgp', '-p', '50051', '-j', 'global', 'rib', 'summary', '-a', `ipv${family}`])) as {
      num_destination?: number;
    };
    return j.num_destination ?? 0;
  }

  /** Routes the sender has ready to send (its own table, not yet any session). */
  async loaded(): Promise<number> {
    switch (this.kind) {
      case 'tsbgp':
        return this.spec.table ? this.spec.table.v4.addr.length + this.spec.table.v6.hi.length : 0; // originated before start()
      case 'bird': {
        const out = await nsExec(this.ns, ['birdc', '-s', this.lab.node(this.spec.node).birdSocket!, 'show', 'route', 'count']);
        return Number(/Total: (\d+) of/.exec(out)?.[1] ?? 0);
      }
      case 'frr': {
        let n = 0;
        for (const family of [4, 6] as const) {
          if (!this.spec.sessions.some((s) => s.family === family)) continue;
          const j = JSON.parse(await this.vtysh(`show bgp ipv${family} unicast summary json`)) as { tableVersion?: number };
          n += j.tableVersion ?? 0;
        }
        return n;
      }
      case 'gobgp':
        return (await this.gobgpRibSize(4)) + (await this.gobgpRibSize(6));
    }
  }

  private vtysh(cmd: string): Promise<string> {
    return nsExec(this.ns, ['vtysh', '-N', this.lab.node(this.spec.node).frrPathspace!, '-c', cmd]);
  }

  /** Routes received over the upstream sessions, each kind's cheapest count. */
  async received(): Promise<number> {
    const up = this.spec.sessions.filter((s) => !s.downstream);
    switch (this.kind) {
      case 'tsbgp': {
        const c = await this.ts!.counts();
        return c.peers.filter((p) => up.some((s) => s.remote === p.address)).reduce((n, p) => n + p.prefixesAccepted, 0);
      }
      case 'bird': {
        // protocol statistics: a counter, where `show route count` walks the table
        let n = 0;
        for (const s of up)
          n += [...(await this.birdc('show', 'protocols', 'all', s.name)).matchAll(/Routes:\s+(\d+) imported/g)].reduce((k, m) => k + Number(m[1]), 0);
        return n;
      }
      case 'frr': {
        const j = JSON.parse(await this.vtysh('show bgp summary json')) as Record<string, { peers?: Record<string, { pfxRcd?: number }> }>;
        return up.reduce((n, s) => n + (j[s.family === 4 ? 'ipv4Unicast' : 'ipv6Unicast']?.peers?.[s.remote]?.pfxRcd ?? 0), 0);
      }
      case 'gobgp': {
        let n = 0;
        for (const s of up) {
          const j = JSON.parse(await nsExec(this.ns, ['gobgp', '-p', '50051', '-j', 'neighbor', s.remote])) as {
            afi_safis?: { state?: { accepted?: number; received?: number } }[];
          };
          n += (j.afi_safis ?? []).reduce((k, a) => k + (a.state?.accepted ?? a.state?.received ?? 0), 0);
        }
        return n;
      }
    }
  }

  /** BIRD only: the sessions' state and the moment each came up, from BIRD's own clock (ms). */
  async birdSessions(names: readonly string[]): Promise<{ name: string; established: boolean; since: number }[]> {
    // BGP sessions are all named p_…; static protocols (thousands in a sender) are not
    const out = await this.birdc('show', 'protocols', '"p_*"');
    const res: { name: string; established: boolean; since: number }[] = [];
    for (const m of out.matchAll(/^(\S+)\s+BGP\s+\S+\s+(\S+)\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\s*(\S*)/gm)) {
      // BIRD prints local time; Date parses "YYYY-MM-DDTHH:MM:SS.mmm" as local time too
      if (names.includes(m[1]))
        res.push({ name: m[1], established: m[2] === 'up' && m[4] === 'Established', since: new Date(m[3].replace(' ', 'T')).getTime() });
    }
    return res;
  }

  async birdc(...args: string[]): Promise<string> {
    return nsExec(this.ns, ['birdc', '-s', this.lab.node(this.spec.node).birdSocket!, ...args]);
  }

  /** The daemon's own processes in the node (not the CLI tools the benchmark runs there). */
  pids(): number[] {
    return nsPids(this.ns).filter((p) => DAEMONS.has(procStatus(p)?.name ?? ''));
  }

  /** Peak (since the last reset) and current resident set of the daemon's processes, summed, bytes. */
  memory(): { hwm: number; rss: number } {
    let hwm = 0;
    let rss = 0;
    for (const p of this.pids()) {
      const s = procStatus(p);
      if (s) {
        hwm += s.hwm;
        rss += s.rss;
      }
    }
    return { hwm, rss };
  }

  /** Starts a new peak (VmHWM) for the daemon's processes (`5` > clear_refs, Linux ≥ 4.0). */
  resetPeak(): void {
    for (const p of this.pids()) {
      try {
        writeFileSync(`/proc/${p}/clear_refs`, '5');
      } catch {
        /* gone */
      }
    }
  }

  /** tsbgp only: the node at its largest RSS since the last call (bench/lab/tsbgp-node.ts memPeak). */
  async memPeak(): Promise<{ rss: number; heapCommitted: number; heapUsed: number; external: number; spaces: Record<string, number> } | undefined> {
    if (!this.ts) return undefined;
    return (await this.ts.ext('memPeak')) ?? undefined;
  }

  /** tsbgp only: V8 heap in use after a full collection, bytes. */
  async heapUsed(): Promise<number | undefined> {
    if (!this.ts) return undefined;
    return this.ts.ext<number>('heap');
  }
}

// ------------------------------------------------------------ labs

export interface LabSpec {
  readonly name: string;
  readonly routers: readonly RouterSpec[];
  /** Links between routers: [a, b, IPv4 /24 base "198.51.100", IPv6 /64 base "2001:db8:51"]. */
  readonly links: readonly (readonly [string, string, string, string])[];
}

/** Brings the routers up in namespaces (one lab), starting with what is upstream. */
export async function startLab(spec: LabSpec, log: (s: string) => void): Promise<{ lab: Lab; routers: Map<string, Router>; teardown: () => Promise<void> }> {
  cleanupStale();
  const dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-bench-`));
  const nodes: LabNode[] = spec.routers.map((r) => {
    let config: string | undefined;
    if (r.kind !== 'tsbgp') {
      config = join(dir, `${r.node}.${r.kind === 'gobgp' ? 'toml' : 'conf'}`);
      writeFileSync(config, r.kind === 'bird' ? birdConfig(r) : r.kind === 'frr' ? frrConfig(r) : gobgpConfig(r));
    }
    return { name: r.node, kind: r.kind, config, binds: [], exec: [], env: {} };
  });
  const addresses: Record<string, string[]> = {};
  const links = spec.links.map(([a, b, v4, v6]) => {
    addresses[`${a}:${b}`] = [`${v4}.1/24`, `${v6}::1/64`];
    addresses[`${b}:${a}`] = [`${v4}.2/24`, `${v6}::2/64`];
    return { a: { node: a, iface: b }, b: { node: b, iface: a } };
  });
  const topo: Topology = { name: spec.name, file: join(dir, `${spec.name}.clab.yml`), dir, nodes, links, addresses };
  let lab: Lab | undefined;
  const routers = new Map<string, Router>();
  const teardown = async (): Promise<void> => {
    // a profiled node (TSBGP_NODE_ARGS) writes its profile on a normal exit
    if (process.env.TSBGP_NODE_ARGS) for (const r of routers.values()) await r.ts?.stop().catch(() => undefined);
    for (const r of routers.values()) r.ts?.child.kill('SIGKILL');
    lab?.teardown();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const t0 = Date.now();
    // a daemon reading a full table from its configuration takes a while to answer
    lab = await Lab.up(topo, { ephemeral: true, startTimeoutMs: 600_000 });
    for (const r of spec.routers) routers.set(r.node, await Router.start(lab, r));
    log(`lab ${spec.name} up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return { lab, routers, teardown };
  } catch (e) {
    await teardown();
    throw e;
  }
}

/** Address of `node`'s end of its link to `peer` in a LabSpec (".1" on the first-named end). */
export function linkAddress(spec: Pick<LabSpec, 'links'>, node: string, peer: string, family: 4 | 6): string {
  const l = spec.links.find(([a, b]) => (a === node && b === peer) || (a === peer && b === node));
  if (!l) throw new Error(`no link between ${node} and ${peer}`);
  const end = l[0] === node ? 1 : 2;
  return family === 4 ? `${l[2]}.${end}` : `${l[3]}::${end}`;
}
