/**
 * Receive over TCP in slices (issue 14): the same full-table stream sent over
 * loopback to a BgpConnection whose handler feeds Rib.ingest, as a session
 * does, once with the default slicing (at most 5 ms of messages per turn of
 * the event loop, the socket paused between slices) and once without
 * (`sliceMs: Infinity`: every read handled whole, as before). Runs alternate
 * in one process; prints the median wall time, routes per second and the
 * longest event-loop stall (what a health probe or a timer waits behind).
 *
 *   node --import tsx bench/receive-slices.ts [--quick]
 */
import { createServer, connect, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { Rib } from '../src/rib/rib.js';
import type { Packer } from '../src/rib/ports.js';
import { BgpConnection } from '../src/session/connection.js';
import type { CodecContext } from '../src/wire/context.js';
import { decodeMessage, encodeMessage } from '../src/wire/message.js';
import { packUpdates } from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';
import { emit, median } from './report.js';

const quick = process.argv.includes('--quick');
const N = quick ? 200_000 : 1_000_000;
const SETS = 2_000;
const RUNS = quick ? 3 : 5;
const CTX: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };
const PEER = Address.parse('192.0.2.1');
const NO_PACK: Packer = { packUpdates: () => [], packWithdrawals: () => [] };

function stream(): Buffer {
  const parts: Uint8Array[] = [];
  for (let s = 0; s < SETS; s++) {
    const attrs: PathAttributes = {
      origin: 0,
      asPath: [{ type: 2, asns: [65200, 65300 + (s % 50), 64512 + (s % 401)] }],
      nextHop: PEER,
      med: s % 7,
      communities: [(65200 * 65536 + s) >>> 0],
    };
    const prefixes: Prefix[] = [];
    for (let i = s; i < N; i += SETS) prefixes.push(Prefix.v4((0x10000000 + i * 256) >>> 0, 24));
    parts.push(...packUpdates(attrs, prefixes, CTX));
  }
  return Buffer.concat(parts);
}

async function pair(): Promise<[Socket, Socket, () => void]> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const client = connect({ host: '127.0.0.1', port });
  const srv = await accepted;
  return [
    client,
    srv,
    () => {
      client.destroy();
      srv.destroy();
      server.close();
    },
  ];
}

interface Result {
  ms: number;
  stallMs: number;
  slices: number;
}

async function run(bytes: Buffer, updates: number, sliceMs: number): Promise<Result> {
  const [client, srv, close] = await pair();
  const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.254', packer: NO_PACK });
  const src = rib.addPeer({ address: PEER, asn: 65200 });
  rib.peerUp(src, { ctx: CTX, families: [4], routerId: '192.0.2.1' }, 0);
  let got = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => {
    done = r;
  });
  const conn = new BgpConnection(
    srv,
    {
      onMessage: (m) => {
        if (m.type !== 'update') return;
        rib.ingest(src, m, 0);
        if (++got === updates) done();
      },
      onError: (e) => {
        throw e;
      },
      onClose: () => {},
    },
    { sliceMs, codec: { decode: decodeMessage, encode: encodeMessage } },
  );
  conn.setContexts(CTX, CTX);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now();
  client.write(bytes);
  await all;
  const ms = performance.now() - t0;
  loop.disable();
  if (rib.locRibSize !== N) throw new Error(`expected ${N} routes, got ${rib.locRibSize}`);
  close();
  return { ms, stallMs: loop.max / 1e6, slices: conn.slices };
}

const bytes = stream();
let updates = 0;
for (let o = 0; o < bytes.length; o += (bytes[o + 16] << 8) | bytes[o + 17]) updates++;
const modes = [
  ['sliced (5 ms, the default)', 5],
  ['unsliced (sliceMs Infinity)', Infinity],
] as const;
const res = new Map<string, Result[]>(modes.map(([name]) => [name, []]));
await run(bytes, updates, 5); // warm-up
for (let r = 0; r < RUNS; r++) for (const [name, ms] of r % 2 === 0 ? modes : [...modes].reverse()) res.get(name)!.push(await run(bytes, updates, ms));
const rows = modes.map(([name]) => {
  const rs = res.get(name)!;
  const ms = median(rs.map((x) => x.ms));
  return [
    name,
    Math.round(ms),
    Math.round(N / (ms / 1000)).toLocaleString('en-US'),
    Math.round(median(rs.map((x) => x.stallMs))),
    Math.round(Math.max(...rs.map((x) => x.stallMs))),
    Math.round(median(rs.map((x) => x.slices))),
  ];
});
emit({
  suite: 'receive-slices',
  title: `Receive ${N.toLocaleString('en-US')} routes over loopback TCP (${updates} UPDATEs, ${(bytes.length / 1e6).toFixed(1)} MB) into Rib.ingest: sliced vs unsliced`,
  columns: ['mode', 'wall (ms, median)', 'routes/s', 'longest loop stall (ms, median)', 'longest loop stall (ms, max)', 'slices (median)'],
  rows,
  notes: [
    `Median of ${RUNS} runs each, alternating modes, in one process; the stream is written whole by the client socket in the same process. Loop stall from monitorEventLoopDelay (1 ms resolution).`,
  ],
});
