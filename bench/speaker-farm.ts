/**
 * Several tsbgp speakers in one child process, each a client of one target
 * speaker (a route reflector) over real TCP from its own 127.0.x.y address.
 * The parent drives it over IPC: start the speakers, originate routes from
 * one of them, and learn when every speaker holds a given number of routes.
 * Once told to watch, each speaker reports every route it receives in the
 * probe range with the time it arrived (bench/clock.ts epochMs).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BgpSpeaker } from '../src/speaker/speaker.js';
import { epochMs, sleep, until } from './clock.js';

export interface FarmMemory {
  /** V8 heap plus external memory (typed arrays, buffers). */
  readonly heap: number;
  readonly rss: number;
}

type Cmd =
  | { cmd: 'start'; asn: number; targets: readonly { address: string; port: number }[]; clients: readonly string[]; connectRetryTime: number }
  | { cmd: 'originate'; client: number; prefixes: readonly string[] }
  | { cmd: 'sync'; routes: number; from?: readonly string[]; down?: readonly string[] }
  | { cmd: 'watch'; range: string }
  | { cmd: 'memory' };

/**
 * How the farm's sessions came up: TCP connections its speakers opened, the
 * sessions that needed more than one (a connect-retry expiry dropped an
 * attempt and dialled again), and the longest the farm's event loop stalled
 * while starting (a stall longer than the connect-retry time makes the retry
 * timer fire before a connection that completed in the kernel is seen: Node
 * runs expired timers before polling for I/O).
 */
export interface FarmStart {
  readonly dials: number;
  readonly redialled: number;
  /** Client addresses with a session that was dialled more than once (all of them). */
  readonly redialledClients: readonly string[];
  readonly maxLoopStallMs: number;
}

type Reply =
  | ({ type: 'ready' } & FarmStart)
  | { type: 'originated'; t: number }
  | { type: 'synced' }
  | { type: 'watching' }
  | { type: 'got'; prefix: string; client: number; t: number }
  | { type: 'memory'; memory: FarmMemory }
  | { type: 'error'; message: string };

export interface Farm {
  /** The speakers' addresses, in order. */
  readonly clients: readonly string[];
  /** The farm process's pid (to read its CPU time from /proc). */
  readonly pid: number;
  /**
   * Each speaker peers with the target (or with every one of several, e.g.
   * route reflectors), dialling again after `connectRetryTime` seconds (5, as
   * Calico's BIRD template `connect retry time 5`) when an attempt has not
   * completed; resolves when every session is Established.
   */
  start(asn: number, target: { address: string; port: number } | readonly { address: string; port: number }[], connectRetryTime?: number): Promise<FarmStart>;
  /** Originates from one speaker; resolves with the time just before the originate() calls. */
  originate(client: number, prefixes: readonly string[]): Promise<number>;
  /**
   * Resolves once every speaker holds at least `routes` routes from each
   * target (or from each of `from`), and has seen its sessions to the
   * targets in `down` go down (e.g. a killed reflector).
   */
  sync(routes: number, from?: readonly string[], down?: readonly string[]): Promise<void>;
  /** From now on, report routes received inside `range` (prefix text starting with it), once per speaker and prefix. */
  watch(range: string, onRoute: (prefix: string, client: string, t: number) => void): Promise<void>;
  /** Heap and RSS of the process after a full GC. */
  memory(): Promise<FarmMemory>;
  stop(): Promise<void>;
}

/** How long `sync` waits for the routes (FARM_SYNC_MS, default 280 s), e.g. shorter to see sooner what is missing. */
const SYNC_MS = Number(process.env.FARM_SYNC_MS ?? 280_000);

/** Forks a farm of speakers at the given addresses (nothing starts until `start`). */
export function startFarm(clients: readonly string[]): Farm {
  // FARM_CPU_PROF=<folder>: a V8 CPU profile of each farm process (written when it stops).
  const prof = process.env.FARM_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.FARM_CPU_PROF] : [];
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], {
    execArgv: ['--expose-gc', '--import', 'tsx', ...prof],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map<Reply['type'], ((r: Reply) => void)[]>();
  let onRoute: ((prefix: string, client: string, t: number) => void) | undefined;
  let failure: string | undefined;
  child.on('message', (r: Reply) => {
    if (r.type === 'got') return onRoute?.(r.prefix, clients[r.client], r.t);
    if (r.type === 'error') failure = r.message;
    const q = waiting.get(r.type);
    q?.shift()?.(r);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ask = <T extends Reply['type']>(cmd: Cmd, reply: T, timeoutMs = 120_000): Promise<Extract<Reply, { type: T }>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`speaker farm: no ${reply} within ${timeoutMs} ms${failure ? ` (${failure})` : ''}`)), timeoutMs);
      const q = waiting.get(reply) ?? [];
      q.push((r) => (clearTimeout(timer), resolve(r as Extract<Reply, { type: T }>)));
      waiting.set(reply, q);
      child.send(cmd);
    });
  return {
    clients,
    pid: child.pid!,
    start: async (asn, target, connectRetryTime = 5) => {
      const { type: _, ...r } = await ask(
        { cmd: 'start', asn, targets: Array.isArray(target) ? target : [target], clients, connectRetryTime },
        'ready',
        300_000,
      );
      return r;
    },
    originate: async (client, prefixes) => (await ask({ cmd: 'originate', client, prefixes }, 'originated')).t,
    sync: async (routes, from, down) => void (await ask({ cmd: 'sync', routes, from, down }, 'synced', SYNC_MS + 20_000)),
    watch: async (range, fn) => {
      onRoute = fn;
      await ask({ cmd: 'watch', range }, 'watching');
    },
    memory: async () => (await ask({ cmd: 'memory' }, 'memory')).memory,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Counts the TCP connections the speakers open, per local address and
 * target. Observation only: net.connect is wrapped (and the ESM bindings
 * of node:net re-synced, which the session shell's `import { connect }` sees)
 * and otherwise behaves as before. Undefined when the wrapper did not take.
 */
function countDials(): Map<string, number> {
  const dials = new Map<string, number>();
  const original = net.connect;
  const counted = ((...args: Parameters<typeof net.connect>) => {
    const o = args[0] as { host?: string; localAddress?: string };
    if (typeof o === 'object' && o.localAddress !== undefined) dials.set(`${o.localAddress}>${o.host}`, (dials.get(`${o.localAddress}>${o.host}`) ?? 0) + 1);
    return original(...args);
  }) as typeof net.connect;
  net.connect = counted;
  net.createConnection = counted;
  syncBuiltinESMExports();
  return dials;
}

function runChild(): void {
  const send = (r: Reply): void => void process.send?.(r);
  const dials = countDials();
  const redialledClients = (): string[] => [...new Set([...dials].filter(([, n]) => n > 1).map(([k]) => k.slice(0, k.indexOf('>'))))];
  const speakers: BgpSpeaker[] = [];
  const addresses: string[] = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  const handle = async (c: Cmd): Promise<void> => {
    switch (c.cmd) {
      case 'start': {
        const loop = monitorEventLoopDelay({ resolution: 10 });
        loop.enable();
        for (const address of c.clients) {
          const s = new BgpSpeaker({ asn: c.asn, routerId: address, listen: false });
          for (const t of c.targets)
            s.addPeer({ address: t.address, port: t.port, asn: c.asn, localAddress: address, families: ['ipv4'], connectRetryTime: c.connectRetryTime });
          await s.start();
          speakers.push(s);
          addresses.push(address);
          // start() does not yield (it settles at once): without this the whole farm would start in one
          // synchronous turn, seconds long on a loaded machine, and a session whose TCP connection had
          // completed meanwhile would see its connect-retry timer expire first (Node runs expired timers
          // before it polls for I/O), drop that connection and dial again: a collision at the reflector
          // that a real client, alone on its node, would not cause.
          await new Promise<void>((r) => setImmediate(r));
        }
        await until('every farm session Established', () => speakers.every((s) => s.status().every((p) => p.state === 'Established')), 280_000, 10);
        loop.disable();
        const total = [...dials.values()].reduce((a, b) => a + b, 0);
        // Every session dials at least once: fewer counted means the wrapper did not see the session shell's dials.
        if (total < speakers.length * c.targets.length)
          throw new Error(
            `speaker farm: counted ${total} TCP connections for ${speakers.length * c.targets.length} sessions (the net.connect wrapper did not take)`,
          );
        const again = [...dials.values()].filter((n) => n > 1).length;
        return send({ type: 'ready', dials: total, redialled: again, redialledClients: redialledClients(), maxLoopStallMs: loop.max / 1e6 });
      }
      case 'originate': {
        const s = speakers[c.client];
        const t = epochMs();
        for (const p of c.prefixes) s.originate(p, {});
        return send({ type: 'originated', t });
      }
      case 'sync':
        try {
          await until(
            `every farm speaker holding ${c.routes} routes`,
            () =>
              speakers.every((s) =>
                s
                  .status()
                  .every((p) =>
                    c.down?.includes(p.address)
                      ? p.state !== 'Established'
                      : (c.from && !c.from.includes(p.address)) || p.counters.prefixesAccepted >= c.routes,
                  ),
              ),
            SYNC_MS,
            20,
          );
        } catch (e) {
          throw new Error(`${(e as Error).message}; ${shortfall(c.routes, c.from)}`);
        }
        return send({ type: 'synced' });
      case 'watch':
        speakers.forEach((s, i) => {
          const seen = new Set<string>();
          s.on('routeReceived', (r) => {
            const p = r.prefix.toString();
            if (!p.startsWith(c.range) || seen.has(p)) return;
            seen.add(p);
            send({ type: 'got', prefix: p, client: i, t: epochMs() });
          });
        });
        return send({ type: 'watching' });
      case 'memory': {
        await sleep(50);
        gc?.();
        gc?.();
        const m = process.memoryUsage();
        return send({ type: 'memory', memory: { heap: m.heapUsed + m.external, rss: m.rss } });
      }
    }
  };
  /** Per target: sessions not Established, sessions short of `routes` and the fewest accepted (and received), UPDATEs in, the last error seen (what a sync timeout reports). */
  const shortfall = (routes: number, from?: readonly string[]): string => {
    const per = new Map<
      string,
      { down: number; short: number; fewest: number; fewestReceived: number; updatesIn: number; errors: number; lastError?: string }
    >();
    const shortClients = new Set<string>();
    for (const [i, s] of speakers.entries())
      for (const p of s.status()) {
        if (from && !from.includes(p.address)) continue;
        let t = per.get(p.address);
        if (t === undefined) per.set(p.address, (t = { down: 0, short: 0, fewest: Infinity, fewestReceived: Infinity, updatesIn: 0, errors: 0 }));
        if (p.state !== 'Established') t.down++;
        if (p.counters.prefixesAccepted < routes) {
          t.short++;
          shortClients.add(addresses[i]);
        }
        t.fewest = Math.min(t.fewest, p.counters.prefixesAccepted);
        t.fewestReceived = Math.min(t.fewestReceived, p.counters.prefixesReceived);
        t.updatesIn += p.counters.updatesIn;
        if (p.lastError) {
          t.errors++;
          t.lastError = `${p.lastError.direction} ${p.lastError.text}`;
        }
      }
    const each = [...per].map(
      ([a, t]) =>
        `${a}: ${t.down} not Established, ${t.short} short (fewest accepted ${t.fewest}, received ${t.fewestReceived}), ${t.updatesIn} UPDATEs in, ${t.errors} with an error${t.lastError ? ` (last: ${t.lastError})` : ''}`,
    );
    const again = new Set(redialledClients());
    const shortAgain = [...shortClients].filter((a) => again.has(a)).length;
    return `${each.join('; ')}; short clients: ${[...shortClients].slice(0, 20).join(' ')}${shortClients.size > 20 ? ' …' : ''}; ${shortAgain} of the ${shortClients.size} short clients had a session dialled more than once (of ${again.size} such clients in this farm)`;
  };
  process.on('message', (c: Cmd) => void handle(c).catch((e: Error) => send({ type: 'error', message: e.message })));
  const quit = () => void Promise.all(speakers.map((s) => s.stop())).finally(() => process.exit(0));
  process.on('SIGTERM', quit);
  process.on('disconnect', quit);
}

if (process.argv.includes('--child')) runChild();
