/**
 * A tsbgp speaker as a child process, for the `tsbgp` lab node kind.
 *
 *   ip netns exec NS node --import tsx test/interop/speaker-node.ts CONFIG.json
 *
 * One Node process cannot switch network namespaces, so each speaker runs in
 * its own process inside its node's namespace and is driven over stdio with
 * JSON lines (see speaker-protocol.ts): requests `{id, cmd, ...}` on stdin,
 * replies `{id, ok, result | error}` and events `{event, ...}` on stdout.
 * Logs go to stderr. End of stdin stops the speaker (not gracefully).
 *
 * Other programs reuse it with hooks (`runSpeakerNode(file, hooks)`): the lab
 * benchmarks generate a full table in the node and define policies.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import type { PeerStatus, SpeakerApi, SpeakerDrainApi } from '../../src/speaker/types.js';
import { expandRange, type NodeConfig, type Reply, type Request, type WireEvent } from './speaker-protocol.js';

/** Optional extras a BgpSpeaker may offer beyond SpeakerApi. */
interface SpeakerExtras {
  on?(event: string, fn: (...args: unknown[]) => void): unknown;
  routeRefresh?(peer: string, family?: string): unknown;
  requestRouteRefresh?(peer: string, family?: string): unknown;
  refresh?(peer: string, family?: string): unknown;
}
export type Speaker = SpeakerApi & SpeakerExtras & { definePolicy?(name: string, def: unknown): void } & Partial<SpeakerDrainApi>;

/** What a program built on this node adds: setup before the peers, and its own commands. */
export interface NodeHooks {
  /** Runs after the speaker is built, before peers are added and routes originated. */
  setup?(sp: Speaker, cfg: NodeConfig): void | Promise<void>;
  /** Runs after the configured routes are originated, before start(). */
  beforeStart?(sp: Speaker, cfg: NodeConfig): void | Promise<void>;
  /** Handlers for `{ cmd: 'ext', name, args }` requests. */
  commands?: Record<string, (sp: Speaker, args: unknown) => unknown>;
}

function send(msg: Reply | WireEvent): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

function loadSpeaker(cfg: NodeConfig): Speaker {
  const log = cfg.verbose
    ? (level: string, msg: string, fields?: Record<string, unknown>): void => {
        process.stderr.write(`${new Date().toISOString()} ${level} ${msg}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`);
      }
    : undefined;
  return new BgpSpeaker({ ...cfg.speaker, ...(log ? { log } : {}) }) as Speaker;
}

/** /proc/self/status VmHWM and VmRSS in bytes (peak and current resident set). */
function residentSet(): { hwm: number; rss: number } {
  const text = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

async function handle(sp: Speaker, req: Request, hooks: NodeHooks): Promise<unknown> {
  switch (req.cmd) {
    case 'status':
      return sp.status();
    case 'counts': {
      const m = process.memoryUsage();
      return {
        peers: sp.status().map((p) => ({ address: p.address, state: p.state, ...p.counters })),
        memory: { ...residentSet(), heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers },
      };
    }
    case 'ext': {
      const f = hooks.commands?.[req.name];
      if (!f) throw new Error(`unknown extension command "${req.name}"`);
      return f(sp, req.args);
    }
    case 'originate':
      for (const r of req.routes) sp.originate(r.prefix, r.attrs);
      return req.routes.length;
    case 'originateRange': {
      const prefixes = expandRange(req.range);
      for (const p of prefixes) sp.originate(p, req.attrs);
      return prefixes.length;
    }
    case 'withdraw':
      for (const p of req.prefixes) sp.withdraw(p);
      return req.prefixes.length;
    case 'withdrawRange': {
      const prefixes = expandRange(req.range);
      for (const p of prefixes) sp.withdraw(p);
      return prefixes.length;
    }
    case 'received':
      return sp.received(req.peer);
    case 'advertised':
      return sp.advertised(req.peer);
    case 'routeRefresh': {
      const f = sp.routeRefresh ?? sp.requestRouteRefresh ?? sp.refresh;
      if (!f) throw new Error('this BgpSpeaker has no routeRefresh(peer, family) method');
      await f.call(sp, req.peer, req.family);
      return true;
    }
    case 'removePeer':
      await sp.removePeer(req.address, req.message === undefined ? undefined : { message: req.message });
      return true;
    case 'updatePeer':
      sp.updatePeer(req.peer);
      return true;
    case 'addPeer':
      sp.addPeer(req.peer);
      return true;
    case 'stop':
      await sp.stop({ message: req.message, graceful: req.graceful });
      return true;
    case 'drain':
      if (!sp.drain || !sp.undrain) throw new Error('this speaker cannot drain');
      if (req.undo === true) sp.undrain();
      else sp.drain();
      return true;
  }
}

/** Runs a speaker node from CONFIG.json until stdin closes or a `stop` request. */
export async function runSpeakerNode(file: string | undefined, hooks: NodeHooks = {}): Promise<void> {
  if (!file) throw new Error('usage: speaker-node.ts CONFIG.json');
  const cfg = JSON.parse(readFileSync(file, 'utf8')) as NodeConfig;
  const sp = loadSpeaker(cfg);
  await hooks.setup?.(sp, cfg);
  const brief = (p: PeerStatus): PeerStatus => p;
  sp.on?.('peerUp', (p) => send({ event: 'peerUp', peer: brief(p as PeerStatus) }));
  sp.on?.('peerDown', (p, reason) => send({ event: 'peerDown', peer: brief(p as PeerStatus), reason: String(reason) }));
  sp.on?.('stateChange', (p, from) => send({ event: 'stateChange', peer: brief(p as PeerStatus), from: String(from) }));
  for (const p of cfg.peers) sp.addPeer(p);
  for (const r of cfg.routes ?? []) sp.originate(r.prefix, r.attrs);
  for (const r of cfg.ranges ?? []) for (const p of expandRange(r.range)) sp.originate(p, r.attrs);
  await hooks.beforeStart?.(sp, cfg);
  await sp.start();
  send({ event: 'ready', pid: process.pid });

  let stopping = false;
  const rl = createInterface({ input: process.stdin });
  // requests are handled in order, so a reply also means every earlier request took effect
  let chain = Promise.resolve();
  rl.on('line', (line) => {
    if (!line.trim()) return;
    chain = chain.then(async () => {
      let req: Request;
      try {
        req = JSON.parse(line) as Request;
      } catch (e) {
        send({ id: -1, ok: false, error: `bad request line: ${(e as Error).message}` });
        return;
      }
      try {
        const result = await handle(sp, req, hooks);
        send({ id: req.id, ok: true, result });
        if (req.cmd === 'stop') {
          stopping = true;
          process.exit(0);
        }
      } catch (e) {
        send({ id: req.id, ok: false, error: (e as Error).stack ?? String(e) });
      }
    });
  });
  rl.on('close', () => {
    if (stopping) return;
    void chain.then(() => sp.stop()).finally(() => process.exit(0));
  });
}

/** Reports a failure to start as a `fatal` event (the driver shows it) and exits. */
export function fatal(e: unknown): never {
  send({ event: 'fatal', error: (e as Error).stack ?? String(e) });
  process.exit(1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) runSpeakerNode(process.argv[2]).catch(fatal);
