/**
 * The traffic of the drain lab (drain-traffic.ts), one process per role, run
 * inside a namespace:
 *
 *   node --import tsx drain-traffic-udp.ts echo NAME ADDRESS PORT
 *     answers every datagram to ADDRESS:PORT with its payload followed by NAME
 *     (which node answered).
 *   node --import tsx drain-traffic-udp.ts send ADDRESS PORT INTERVAL_MS FLOWS
 *     sends one datagram every INTERVAL_MS carrying a sequence number, round
 *     robin over FLOWS sockets (FLOWS source ports, so a router hashing on
 *     ports spreads them over its ECMP next hops), and counts the answers.
 *     Commands on stdin, one per line, each answered with one JSON line on
 *     stdout: `stats` (counts so far) and `stop` (stop sending, wait
 *     LATE_MS for answers still on the way, print the final counts, exit).
 *
 * A datagram is lost when no answer to its sequence number came back; every
 * sequence number is accounted for, so the count is exact.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createInterface } from 'node:readline';

/** How long answers may still arrive after the last datagram went out. */
const LATE_MS = 1000;

export interface TrafficStats {
  readonly sent: number;
  readonly answered: number;
  /** Sent and not answered (after `stop`: for good). */
  readonly lost: number;
  /** Up to the first 50 lost sequence numbers. */
  readonly lostSeqs: number[];
  /** Answers per node name. */
  readonly byNode: Record<string, number>;
}

function echo(name: string, address: string, port: number): void {
  const tag = Buffer.from(name);
  const s = createSocket('udp4');
  s.on('message', (msg, from) => s.send(Buffer.concat([msg.subarray(0, 4), tag]), from.port, from.address));
  s.on('error', (e) => {
    console.error(`echo ${name}: ${e.message}`);
    process.exit(1);
  });
  s.bind(port, address, () => console.log(`echo ${name} on ${address}:${port}`));
}

function send(address: string, port: number, intervalMs: number, flows: number): void {
  const answered = new Uint8Array(1 << 24);
  const byNode: Record<string, number> = {};
  let sent = 0;
  let answers = 0;
  const sockets: Socket[] = [];
  const onMessage = (msg: Buffer): void => {
    if (msg.length < 4) return;
    const seq = msg.readUInt32BE(0);
    if (seq >= sent || answered[seq]) return;
    answered[seq] = 1;
    answers++;
    const node = msg.subarray(4).toString('utf8');
    byNode[node] = (byNode[node] ?? 0) + 1;
  };
  for (let i = 0; i < flows; i++) {
    const s = createSocket('udp4');
    s.on('message', onMessage);
    s.on('error', () => undefined); // ICMP errors while a path is gone: the datagram counts as lost
    s.bind(0);
    sockets.push(s);
  }
  const stats = (): TrafficStats => {
    const lostSeqs: number[] = [];
    for (let i = 0; i < sent && lostSeqs.length < 50; i++) if (!answered[i]) lostSeqs.push(i);
    return { sent, answered: answers, lost: sent - answers, lostSeqs, byNode };
  };
  // Paced against the clock, not by a timer per datagram: a late tick sends what is due, so the rate holds under load.
  const t0 = Date.now();
  const timer = setInterval(
    () => {
      const due = Math.floor((Date.now() - t0) / intervalMs) + 1;
      while (sent < due && sent < answered.length) {
        // A buffer per datagram: send() reads it later, after this loop has moved on.
        const buf = Buffer.alloc(4);
        buf.writeUInt32BE(sent, 0);
        sockets[sent % flows].send(buf, port, address);
        sent++;
      }
    },
    Math.max(1, intervalMs),
  );
  createInterface({ input: process.stdin }).on('line', (line) => {
    const cmd = line.trim();
    if (cmd === 'stats') console.log(JSON.stringify(stats()));
    else if (cmd === 'stop') {
      clearInterval(timer);
      setTimeout(() => {
        console.log(JSON.stringify(stats()));
        for (const s of sockets) s.close();
        process.exit(0);
      }, LATE_MS);
    }
  });
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'echo' && args.length === 3) echo(args[0], args[1], Number(args[2]));
else if (mode === 'send' && args.length === 4) send(args[0], Number(args[1]), Number(args[2]), Number(args[3]));
else {
  console.error('usage: drain-traffic-udp.ts echo NAME ADDRESS PORT | send ADDRESS PORT INTERVAL_MS FLOWS');
  process.exit(2);
}
