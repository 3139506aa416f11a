/**
 * A minimal BGP receiver in a child process that timestamps every UPDATE as
 * its bytes arrive (bench/clock.ts epochMs, comparable with the parent's
 * clock), so latency figures stop at the wire, not at a receiving RIB, and
 * the receiver's work never shares the sender's event loop.
 *
 * It listens on one address or several (one session each), answers the
 * OPEN with its own (IPv4 unicast, 4-byte ASN), keeps the session alive and
 * reports each UPDATE to the parent over IPC: session, arrival time, counts,
 * End-of-RIB, and the prefixes themselves when there are few (a latency
 * probe, not a full dump).
 */
import { fork, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { Framer } from '../src/wire/framer.js';
import { frameMessage } from '../src/wire/header.js';
import { buildOpen, encodeOpenBody } from '../src/wire/open.js';
import { decodeUpdate } from '../src/wire/update.js';
import { packUpdates } from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { DEFAULT_CONTEXT } from '../src/wire/context.js';
import { MessageType } from '../src/wire/constants.js';
import { epochMs, until } from './clock.js';

/** One UPDATE as the receiver saw it. */
export interface Arrival {
  /** Which session (index of its listening address). */
  readonly s: number;
  /** epochMs() when the chunk holding it arrived. */
  readonly t: number;
  readonly announced: number;
  readonly withdrawn: number;
  readonly bytes: number;
  readonly eor: boolean;
  /** The prefixes, when at most PROBE_LIMIT of each kind. */
  readonly a?: readonly string[];
  readonly w?: readonly string[];
}

/** Parent → child: send `count` /24s (10.0.0.0/24 upward) on session `s`. */
type ParentMessage = { type: 'announce'; s: number; count: number };

type ChildMessage =
  { type: 'listening'; ports: number[] } | { type: 'up'; s: number; t: number } | { type: 'update'; u: Arrival } | { type: 'down'; s: number; reason: string };

const PROBE_LIMIT = 64;

export interface WirePeer {
  /** The port of the first address. */
  readonly port: number;
  /** The port of each address. */
  readonly ports: readonly number[];
  /** Every UPDATE so far, in arrival order. */
  readonly arrivals: Arrival[];
  /** Sum of announced prefixes over the arrivals from index `from` on (of one session, or all). */
  announced(from?: number, session?: number): number;
  /** How many sessions are up now. */
  up(): number;
  /** Session `s` went down (TCP closed or NOTIFICATION) and no new one is up. */
  isDown(s?: number): boolean;
  /** Sends `count` /24s from 10.0.0.0/24 upward (AS path 65000…, one attribute set) on session `s`, as a router would. */
  announce(count: number, s?: number): void;
  /** Arrival time of the first UPDATE at or after index `from` announcing (or withdrawing) `prefix`. */
  waitPrefix(prefix: string, kind: 'a' | 'w', from: number, timeoutMs: number): Promise<number>;
  stop(): Promise<void>;
}

/** Forks the receiver listening on `address` (or each of several; port 0: any), AS `asn`. */
export async function startWirePeer(address: string | readonly string[], asn: number, bgpId = '127.255.255.254'): Promise<WirePeer> {
  const addresses = typeof address === 'string' ? [address] : address;
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child', String(asn), bgpId, ...addresses], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const arrivals: Arrival[] = [];
  const up = new Set<number>();
  const down = new Map<number, string>();
  let ports: number[] = [];
  child.on('message', (m: ChildMessage) => {
    if (m.type === 'listening') ports = m.ports;
    else if (m.type === 'up') (up.add(m.s), down.delete(m.s));
    else if (m.type === 'down') (up.delete(m.s), down.set(m.s, m.reason));
    else arrivals.push(m.u);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await until('the wire peer to listen', () => ports.length > 0, 10_000);
  const check = () => {
    if (down.has(0)) throw new Error(`wire peer session went down: ${down.get(0)}`);
    return false;
  };
  return {
    port: ports[0],
    ports,
    arrivals,
    announced: (from = 0, session?: number) => {
      let n = 0;
      for (let i = from; i < arrivals.length; i++) if (session === undefined || arrivals[i].s === session) n += arrivals[i].announced;
      return n;
    },
    up: () => up.size,
    isDown: (s = 0) => down.has(s),
    announce: (count, s = 0) => void child.send({ type: 'announce', s, count } satisfies ParentMessage),
    async waitPrefix(prefix, kind, from, timeoutMs) {
      let found: number | undefined;
      let i = from;
      await until(
        `${kind === 'a' ? 'announcement' : 'withdrawal'} of ${prefix}`,
        () => {
          for (; i < arrivals.length; i++) {
            if (arrivals[i][kind]?.includes(prefix)) {
              found = arrivals[i].t;
              return true;
            }
          }
          return check();
        },
        timeoutMs,
        1,
      );
      return found!;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function runChild(asn: number, bgpId: string, addresses: readonly string[]): void {
  const send = (m: ChildMessage): void => void process.send?.(m);
  const keepalive = frameMessage(MessageType.KEEPALIVE, new Uint8Array(0));
  // We send no routes: End-of-RIB at once, as a router with nothing to say
  // does (a restarting speaker may wait for it before its own best paths).
  const endOfRib = frameMessage(MessageType.UPDATE, new Uint8Array(4));
  const open = frameMessage(
    MessageType.OPEN,
    encodeOpenBody(
      buildOpen({
        asn,
        holdTime: 90,
        bgpId,
        capabilities: [{ kind: 'multiprotocol', afi: 1, safi: 1 }, { kind: 'fourOctetAs', asn }, { kind: 'routeRefresh' }],
      }),
    ),
  );
  const sockets = new Map<number, net.Socket>();
  process.on('message', (m: ParentMessage) => {
    const prefixes = Array.from({ length: m.count }, (_, k) => Prefix.v4((0x0a000000 + k * 256) >>> 0, 24));
    const attrs: PathAttributes = { origin: 0, asPath: [{ type: 2, asns: [asn, 64999] }], nextHop: Address.parse(addresses[m.s]) };
    for (const msg of packUpdates(attrs, prefixes, DEFAULT_CONTEXT)) sockets.get(m.s)?.write(msg);
  });
  const session = (s: number) => {
    let taken = false;
    return net.createServer((sock) => {
      if (taken) return void sock.destroy(); // one session at a time; a second dial would be a collision
      taken = true;
      sockets.set(s, sock);
      sock.setNoDelay(true);
      sock.write(open);
      const framer = new Framer();
      let established = false;
      const timer = setInterval(() => sock.write(keepalive), 20_000);
      sock.on('data', (chunk: Buffer) => {
        const t = epochMs();
        framer.push(chunk, (type, body) => {
          if (type === MessageType.OPEN) sock.write(keepalive);
          else if (type === MessageType.KEEPALIVE && !established) {
            established = true;
            sock.write(endOfRib);
            send({ type: 'up', s, t });
          } else if (type === MessageType.UPDATE) {
            const m = decodeUpdate(body, DEFAULT_CONTEXT);
            const a = (m.nlriKeys ?? m.nlri).length + (m.attributes.mpReach?.keys ?? m.attributes.mpReach?.nlri ?? []).length;
            const w = (m.withdrawnKeys ?? m.withdrawn).length + (m.attributes.mpUnreach?.keys ?? m.attributes.mpUnreach?.withdrawn ?? []).length;
            const u: { -readonly [K in keyof Arrival]: Arrival[K] } = { s, t, announced: a, withdrawn: w, bytes: body.length + 19, eor: a === 0 && w === 0 };
            if (a > 0 && a <= PROBE_LIMIT) u.a = [...m.nlri, ...(m.attributes.mpReach?.nlri ?? [])].map(String);
            if (w > 0 && w <= PROBE_LIMIT) u.w = [...m.withdrawn, ...(m.attributes.mpUnreach?.withdrawn ?? [])].map(String);
            send({ type: 'update', u });
          } else if (type === MessageType.NOTIFICATION) send({ type: 'down', s, reason: `NOTIFICATION ${body[0]}/${body[1]}` });
        });
      });
      sock.on('close', () => {
        taken = false;
        sockets.delete(s);
        clearInterval(timer);
        send({ type: 'down', s, reason: 'TCP closed' });
      });
      sock.on('error', () => undefined);
    });
  };
  const ports: number[] = [];
  let listening = 0;
  addresses.forEach((address, s) => {
    const server = session(s);
    server.listen(0, address, () => {
      ports[s] = (server.address() as net.AddressInfo).port;
      if (++listening === addresses.length) send({ type: 'listening', ports });
    });
  });
  process.on('SIGTERM', () => process.exit(0));
  process.on('disconnect', () => process.exit(0));
}

const i = process.argv.indexOf('--child');
if (i >= 0) runChild(Number(process.argv[i + 1]), process.argv[i + 2], process.argv.slice(i + 3));
