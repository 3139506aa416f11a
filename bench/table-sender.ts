/**
 * A router in a child process that sends a synthetic full table (bench/lab/table.ts)
 * to one peer over TCP, for the scrape test, the scrape benchmark and the soak:
 *
 *   node --import tsx bench/table-sender.ts ROUTES LISTEN_ADDR PEER_ADDR [PEER_ASN]
 *
 * It listens on LISTEN_ADDR (port 0) for PEER_ADDR (AS PEER_ASN, default
 * 64512), originates the table, and prints one JSON line `{"port": P}` once
 * started. Commands on stdin, one per line, each answered by a JSON line:
 * `withdraw` (every route), `announce` (every route again), `status`
 * (the peer's state and counters). End of stdin stops it. Run apart from the
 * receiver so that packing and sending a million routes does not stall the
 * receiver's event loop (which is what is measured).
 */
import { createInterface } from 'node:readline';
import { Prefix } from '../src/net/prefix.js';
import { BgpSpeaker } from '../src/speaker/speaker.js';
import type { RouteAttributes } from '../src/speaker/types.js';
import { fullTable, routes } from './lab/table.js';

const [routesArg, listenAddr, peerAddr, peerAsnArg] = process.argv.slice(2);
const n = Number(routesArg);
if (!Number.isInteger(n) || n < 0 || !listenAddr || !peerAddr) {
  process.stderr.write('usage: table-sender.ts ROUTES LISTEN_ADDR PEER_ADDR [PEER_ASN]\n');
  process.exit(2);
}
const table = fullTable({ v4: n, v6: 0, sets: 2000, seed: 14 });
const sp = new BgpSpeaker({ asn: 65000, routerId: listenAddr.includes(':') ? '192.0.2.254' : listenAddr, listen: { addresses: [listenAddr], port: 0 } });
sp.addPeer({ address: peerAddr, asn: Number(peerAsnArg ?? 64512), passive: true, families: ['ipv4'], holdTime: 90 });

// Parsed once: a router re-announcing its table does not re-read it from text each time.
const prefixes: Prefix[] = [];
const setOf: number[] = [];
for (const r of routes(table, 4)) {
  prefixes.push(Prefix.parse(r.prefix));
  setOf.push(r.set);
}
const attrs: RouteAttributes[] = table.sets.map((s) => ({
  origin: s.origin,
  med: s.med,
  communities: s.communities,
  largeCommunities: s.largeCommunities,
  asPath: s.asPath,
}));
const announce = () => {
  for (let i = 0; i < prefixes.length; i++) sp.originate(prefixes[i], attrs[setOf[i]]);
};
const withdraw = () => {
  for (const p of prefixes) sp.withdraw(p);
};
announce();
await sp.start();
process.stdout.write(`${JSON.stringify({ port: sp.port })}\n`);

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const cmd = line.trim();
  if (cmd === 'withdraw') withdraw();
  else if (cmd === 'announce') announce();
  else if (cmd !== 'status') {
    process.stdout.write(`${JSON.stringify({ error: `unknown command ${JSON.stringify(cmd)}` })}\n`);
    return;
  }
  const st = sp.status()[0];
  process.stdout.write(
    `${JSON.stringify({ done: cmd, state: st?.state, advertised: st?.counters.prefixesAdvertised, sendQueueBytes: st?.counters.sendQueueBytes })}\n`,
  );
});
rl.on('close', () => {
  void sp.stop().then(() => process.exit(0));
});
