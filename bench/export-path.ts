/**
 * The export side of propagation, in process: what the lab's propagate
 * device does after ingest. A BIRD-like sender's table (the lab's synthetic
 * IPv4 table, bench/lab/table.ts, 2,000 attribute sets) arrives as UPDATEs
 * of one or two prefixes (BIRD sends the propagate scenario ~1.7 prefixes
 * per UPDATE) into a Rib with a sender and a receiver peer (eBGP, an
 * accept-all export policy, the real packer); the update group is flushed
 * every `--flush-every` routes, as the device's coalescing window does
 * (the lab's device plans ~13 flushes per 100,000 routes). Then the whole
 * table is withdrawn the same way. Measured: this process's CPU in
 * `flushDue` (plan and pack) while announcing and while withdrawing (the
 * lab times only the announcements), and in ingest, median of the rounds.
 *
 *   node --import tsx bench/export-path.ts [--routes 100000] [--flush-every 7500] [--rounds 5]
 */
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { acceptAll } from '../src/rib/ports.js';
import { Rib } from '../src/rib/rib.js';
import { toPathAttributes } from '../src/speaker/attributes.js';
import type { RouteAttributes } from '../src/speaker/types.js';
import type { CodecContext } from '../src/wire/context.js';
import { decodeMessage } from '../src/wire/message.js';
import { Framer } from '../src/wire/framer.js';
import { packUpdates, packWithdrawals } from '../src/wire/packer.js';
import type { PathAttributes } from '../src/wire/types.js';
import { fullTable } from './lab/table.js';
import { emit, median } from './report.js';

const opt = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const quick = process.argv.includes('--quick');
const N = opt('--routes', quick ? 20_000 : 100_000);
const EVERY = opt('--flush-every', 7_500);
const ROUNDS = opt('--rounds', quick ? 3 : 5);
const CTX: CodecContext = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };
const SENDER = Address.parse('198.51.100.1');
const SENDER_ASN = 4200000001;

/** The sender's stream, cut at flush points: each part a run of whole UPDATEs covering about `EVERY` routes. */
function streams(): { announce: Uint8Array[]; withdraw: Uint8Array[] } {
  const t = fullTable({ v4: N, v6: 0, sets: 2_000, seed: 3 });
  const attrs: PathAttributes[] = t.sets.map((a) => {
    const r: RouteAttributes = {
      origin: a.origin,
      ...(a.med !== undefined ? { med: a.med } : {}),
      asPath: [SENDER_ASN, ...(a.asPath ?? [])],
      communities: a.communities,
      largeCommunities: a.largeCommunities,
    };
    return { ...toPathAttributes(r, 4), nextHop: SENDER };
  });
  // Routes by set, then UPDATEs of 2, 2, 1 prefixes (1.67 on average) taken from the sets in turn.
  const bySet: Prefix[][] = t.sets.map(() => []);
  for (let i = 0; i < N; i++) bySet[t.v4.set[i]].push(Prefix.v4(t.v4.addr[i], t.v4.len[i]));
  const updates: { set: number; prefixes: Prefix[] }[] = [];
  const at = new Array<number>(bySet.length).fill(0);
  let k = 0;
  for (let left = N; left > 0;) {
    for (let s = 0; s < bySet.length; s++) {
      if (at[s] >= bySet[s].length) continue;
      const take = Math.min(k++ % 3 === 2 ? 1 : 2, bySet[s].length - at[s]);
      updates.push({ set: s, prefixes: bySet[s].slice(at[s], at[s] + take) });
      at[s] += take;
      left -= take;
    }
  }
  const cut = (msg: (u: { set: number; prefixes: Prefix[] }) => Uint8Array[]): Uint8Array[] => {
    const parts: Uint8Array[] = [];
    let cur: Uint8Array[] = [];
    let routes = 0;
    const close = () => {
      const out = new Uint8Array(cur.reduce((n, m) => n + m.length, 0));
      let o = 0;
      for (const m of cur) out.set(m, (o += m.length) - m.length);
      parts.push(out);
      cur = [];
      routes = 0;
    };
    for (const u of updates) {
      cur.push(...msg(u));
      if ((routes += u.prefixes.length) >= EVERY) close();
    }
    if (cur.length > 0) close();
    return parts;
  };
  return {
    announce: cut((u) => packUpdates(attrs[u.set], u.prefixes, CTX)),
    withdraw: cut((u) => packWithdrawals(u.prefixes, CTX)),
  };
}

interface Round {
  flushMs: number;
  withdrawFlushMs: number;
  ingestMs: number;
  messages: number;
  bytes: number;
  flushes: number;
}

const cpu = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

function round(s: { announce: Uint8Array[]; withdraw: Uint8Array[] }): Round {
  const rib = new Rib({ localAsn: 4200000002, routerId: '192.0.2.2' });
  const src = rib.addPeer({ address: SENDER, asn: SENDER_ASN });
  const dst = rib.addPeer({ address: Address.parse('203.0.113.2'), asn: 4200000003, localAddressV4: Address.parse('203.0.113.1'), exportPolicy: acceptAll });
  rib.peerUp(src, { ctx: CTX, families: [4], routerId: '192.0.2.1' }, 0);
  rib.peerUp(dst, { ctx: CTX, families: [4], routerId: '192.0.2.3' }, 0);
  rib.flushDue(1_000);
  const r: Round = { flushMs: 0, withdrawFlushMs: 0, ingestMs: 0, messages: 0, bytes: 0, flushes: 0 };
  let now = 2_000;
  const framer = new Framer();
  for (const [i, part] of [...s.announce, ...s.withdraw].entries()) {
    const c0 = cpu();
    framer.push(part, (type, body) => {
      const m = decodeMessage(type, body, CTX);
      if (m.type !== 'update') throw new Error(`unexpected ${m.type}`);
      rib.ingest(src, m, now);
    });
    const c1 = cpu();
    now += 100;
    for (const send of rib.flushDue(now)) {
      r.messages += send.messages.length;
      for (const m of send.messages) r.bytes += m.length;
    }
    r.flushes++;
    if (i < s.announce.length) r.flushMs += cpu() - c1;
    else r.withdrawFlushMs += cpu() - c1;
    r.ingestMs += c1 - c0;
  }
  if (rib.locRibSize !== 0) throw new Error(`expected an empty Loc-RIB after the withdrawals, got ${rib.locRibSize}`);
  return r;
}

const s = streams();
round(s); // warm-up
const rounds = Array.from({ length: ROUNDS }, () => round(s));
const med = (f: (r: Round) => number) => median(rounds.map(f));
console.log(
  `each round, flushDue CPU (ms): ${rounds.map((r) => r.flushMs.toFixed(0)).join(', ')}; withdrawn: ${rounds.map((r) => r.withdrawFlushMs.toFixed(0)).join(', ')}; ingest: ${rounds.map((r) => r.ingestMs.toFixed(0)).join(', ')}`,
);
emit({
  suite: 'export-path',
  title: `Export path: ${N.toLocaleString('en')} IPv4 routes in UPDATEs of 1–2 prefixes, flushed every ${EVERY.toLocaleString('en')} routes, then withdrawn`,
  columns: ['figure', 'value'],
  rows: [
    ['announcing: plan and pack (flushDue), CPU (ms)', med((r) => r.flushMs).toFixed(0)],
    ['withdrawing: plan and pack (flushDue), CPU (ms)', med((r) => r.withdrawFlushMs).toFixed(0)],
    ['ingest, CPU (ms)', med((r) => r.ingestMs).toFixed(0)],
    ['flushes', String(rounds[0].flushes)],
    ['UPDATEs sent', String(rounds[0].messages)],
    ['bytes sent', String(rounds[0].bytes)],
  ],
  notes: [`Median of ${ROUNDS} rounds after a warm-up; this process's CPU time.`],
});
