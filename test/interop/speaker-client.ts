/**
 * Drives a speaker-node.ts child inside a lab node's namespace:
 *
 *   const ts = await SpeakerProcess.start(lab, 'ts1', config);
 *   await ts.waitEstablished('198.51.100.21');
 *   await ts.originate([{ prefix: '203.0.113.0/28', attrs: { med: 10 } }]);
 *   ts.kill9();  // graceful-restart tests
 *
 * The child lives in the namespace, so Lab.teardown() kills it with the rest.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { Lab } from '../lab/netns.js';
import { isCi } from '../lab/require.js';
import type { PeerOptions, PeerStatus, RouteAttributes } from '../../src/speaker/types.js';
import type { NodeConfig, NodeCounts, PrefixRange, Reply, Request, RouteSpec, WireEvent, WireRoute } from './speaker-protocol.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
export const SPEAKER_NODE = join(HERE, 'speaker-node.ts');
const SPEAKER_MODULE = join(ROOT, 'src', 'speaker', 'speaker.ts');

/** Like requireLab for the library speaker: fails in CI when src/speaker/speaker.ts is missing, else prints and skips. */
export function requireSpeaker(): boolean {
  if (existsSync(SPEAKER_MODULE)) return true;
  const msg = `interop tests need the tsbgp speaker: ${SPEAKER_MODULE} does not exist yet`;
  if (isCi()) throw new Error(`${msg} (CI=true, so this is a failure, not a skip)`);
  console.warn(`SKIPPING speaker interop tests: ${msg}`);
  return false;
}

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;
export type Command = Distribute<Request>;

export class SpeakerProcess {
  readonly events: (WireEvent & { at: number })[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; cmd: string }>();
  private exited: { code: number | null; signal: string | null } | undefined;
  private readonly waiters = new Set<() => void>();

  private constructor(
    readonly node: string,
    readonly child: ChildProcess,
    readonly logFile: string,
  ) {}

  /**
   * Writes CONFIG.json into the node's work folder and starts the child in the
   * node's namespace; resolves once the speaker has started (its `ready` event).
   */
  static async start(
    lab: Lab,
    node: string,
    config: NodeConfig,
    opts: { tag?: string; timeoutMs?: number; script?: string; nodeArgs?: readonly string[] } = {},
  ): Promise<SpeakerProcess> {
    const n = lab.node(node);
    mkdirSync(n.work, { recursive: true });
    const tag = opts.tag ?? 'speaker';
    const cfgFile = join(n.work, `${tag}.json`);
    writeFileSync(cfgFile, JSON.stringify(config, null, 2));
    const logFile = join(n.work, `${tag}.log`);
    const fd = openSync(logFile, 'a');
    // `script`: a program built on speaker-node.ts (runSpeakerNode with hooks), e.g. the lab benchmarks' node
    const script = opts.script ?? SPEAKER_NODE;
    // a compiled .js script runs as plain JavaScript, without the tsx loader
    const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
    const child = spawn('ip', ['netns', 'exec', n.ns, process.execPath, ...(opts.nodeArgs ?? []), ...loader, script, cfgFile], {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', fd],
    });
    closeSync(fd);
    const sp = new SpeakerProcess(node, child, logFile);
    sp.attach();
    await sp
      .waitEvent((e) => e.event === 'ready' || e.event === 'fatal', opts.timeoutMs ?? 30_000, 'speaker ready')
      .then((e) => {
        if (e.event === 'fatal') throw new Error(`speaker on ${node} failed to start: ${e.error}`);
      });
    return sp;
  }

  private attach(): void {
    const rl = createInterface({ input: this.child.stdout! });
    rl.on('line', (line) => {
      let msg: Reply | WireEvent;
      try {
        msg = JSON.parse(line) as Reply | WireEvent;
      } catch {
        return; // stray output; the child writes logs to stderr
      }
      if ('id' in msg) {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.result);
        else p.reject(new Error(`speaker ${this.node}: ${p.cmd} failed: ${msg.error}`));
      } else {
        this.events.push({ ...msg, at: Date.now() });
      }
      for (const w of [...this.waiters]) w();
    });
    this.child.on('exit', (code, signal) => {
      this.exited = { code, signal };
      for (const p of this.pending.values()) p.reject(new Error(`speaker ${this.node} exited (${signal ?? code}) during ${p.cmd}; log: ${this.logFile}`));
      this.pending.clear();
      for (const w of [...this.waiters]) w();
    });
    // a dead child's stdin raises EPIPE; the exit handler reports it
    this.child.stdin!.on('error', () => {});
  }

  get alive(): boolean {
    return this.exited === undefined;
  }

  request<T = unknown>(cmd: Command, timeoutMs = 60_000): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`speaker ${this.node} has exited`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`speaker ${this.node}: ${cmd.cmd} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        cmd: cmd.cmd,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.stdin!.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  status(): Promise<PeerStatus[]> {
    return this.request<PeerStatus[]>({ cmd: 'status' });
  }

  async peer(address: string): Promise<PeerStatus> {
    const p = (await this.status()).find((s) => s.address === address);
    if (!p) throw new Error(`speaker ${this.node} has no peer ${address}`);
    return p;
  }

  /** Per-peer counters and memory, cheap enough to poll. */
  counts(): Promise<NodeCounts> {
    return this.request<NodeCounts>({ cmd: 'counts' });
  }

  /** A command of the program the node runs (NodeHooks.commands). */
  ext<T = unknown>(name: string, args?: unknown, timeoutMs?: number): Promise<T> {
    return this.request<T>({ cmd: 'ext', name, args }, timeoutMs);
  }

  originate(routes: readonly RouteSpec[]): Promise<number> {
    return this.request<number>({ cmd: 'originate', routes });
  }

  originateRange(range: PrefixRange, attrs?: RouteAttributes): Promise<number> {
    return this.request<number>({ cmd: 'originateRange', range, attrs }, 120_000);
  }

  withdraw(prefixes: readonly string[]): Promise<number> {
    return this.request<number>({ cmd: 'withdraw', prefixes });
  }

  withdrawRange(range: PrefixRange): Promise<number> {
    return this.request<number>({ cmd: 'withdrawRange', range }, 120_000);
  }

  received(peer?: string): Promise<WireRoute[]> {
    return this.request<WireRoute[]>({ cmd: 'received', peer });
  }

  advertised(peer: string): Promise<WireRoute[]> {
    return this.request<WireRoute[]>({ cmd: 'advertised', peer });
  }

  routeRefresh(peer: string, family?: 'ipv4' | 'ipv6'): Promise<unknown> {
    return this.request({ cmd: 'routeRefresh', peer, family });
  }

  updatePeer(peer: PeerOptions): Promise<unknown> {
    return this.request({ cmd: 'updatePeer', peer });
  }

  removePeer(address: string, message?: string): Promise<unknown> {
    return this.request({ cmd: 'removePeer', address, message });
  }

  /** RFC 8326: re-send every route with GRACEFUL_SHUTDOWN (`undo`: without). */
  drain(undo = false): Promise<unknown> {
    return this.request({ cmd: 'drain', undo });
  }

  /** Cease to every peer and exit. */
  async stop(opts: { message?: string; graceful?: boolean } = {}): Promise<void> {
    if (!this.alive) return;
    const exit = this.waitExit(15_000);
    await this.request({ cmd: 'stop', ...opts }).catch(() => undefined);
    await exit;
  }

  /** SIGKILL, no goodbye: the daemon sees the TCP connection reset (or nothing at all). */
  async kill9(): Promise<void> {
    if (!this.alive) return;
    const exit = this.waitExit(10_000);
    // `ip netns exec` execs in place, so the child's pid is the speaker's
    this.child.kill('SIGKILL');
    await exit;
  }

  waitExit(timeoutMs: number): Promise<void> {
    return this.until(() => !this.alive, timeoutMs, 'exit').then(() => undefined);
  }

  /** Resolves with the first event (seen already or later) matching `pred`. */
  waitEvent(pred: (e: WireEvent) => boolean, timeoutMs: number, what = 'event'): Promise<WireEvent> {
    return this.until(() => this.events.find(pred), timeoutMs, what);
  }

  /** Polls status() until the peer is Established; returns its status. */
  async waitEstablished(address: string, timeoutMs = 60_000): Promise<PeerStatus> {
    const deadline = Date.now() + timeoutMs;
    let last: PeerStatus | undefined;
    for (;;) {
      last = (await this.status()).find((s) => s.address === address);
      if (last?.state === 'Established') return last;
      if (Date.now() > deadline)
        throw new Error(
          `speaker ${this.node}: peer ${address} not Established after ${timeoutMs} ms (state ${last?.state ?? 'unknown'}, last error ${JSON.stringify(last?.lastError)})`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  private until<T>(check: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const tryNow = (): boolean => {
        const v = check();
        if (v) {
          cleanup();
          resolve(v);
          return true;
        }
        if (this.exited && what !== 'exit') {
          cleanup();
          reject(new Error(`speaker ${this.node} exited (${this.exited.signal ?? this.exited.code}) while waiting for ${what}; log: ${this.logFile}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`speaker ${this.node}: timed out after ${timeoutMs} ms waiting for ${what}; log: ${this.logFile}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(w);
      };
      const w = (): void => void tryNow();
      if (tryNow()) return;
      this.waiters.add(w);
    });
  }
}
