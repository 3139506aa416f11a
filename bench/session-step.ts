/**
 * The session's per-message cost, in process: two src/session Peers over
 * loopback TCP (no RIB, no speaker). The sender puts N small UPDATEs (one
 * /24 each, as BIRD sends a propagation: ~1.7 prefixes an UPDATE) on the wire
 * as prebuilt runs, so its own cost is a few large writes; the receiver
 * frames, decodes and steps its FSM once per UPDATE (hold timer restart, the
 * update action, the hook). Prints, per round, the wall time and this
 * process's CPU time from the first write until the receiver's hook has seen
 * the last UPDATE, and their medians per UPDATE.
 *
 *   node --import tsx bench/session-step.ts [--updates 100000] [--rounds 5] [--cpu-prof …]
 *
 * Runs compiled (bench/compile.ts), as the agent does.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Address } from '../src/net/address.js';
import { Prefix } from '../src/net/prefix.js';
import { joinUpdates } from '../src/session/connection.js';
import { Listener } from '../src/session/listener.js';
import { Peer } from '../src/session/peer.js';
import { sessionConfig } from '../src/session/types.js';
import { DEFAULT_CONTEXT } from '../src/wire/context.js';
import { encodeMessage } from '../src/wire/message.js';
import { until } from './clock.js';
import { compileBench, deployedNodeFlags } from './compile.js';
import { median } from './report.js';

const self = fileURLToPath(import.meta.url);
if (self.endsWith('.ts')) {
  const [js] = compileBench([self], 'bench-js');
  const flags = [...deployedNodeFlags(), ...(process.env.TSBGP_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const r = spawnSync(process.execPath, [...flags, js, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg('updates', '100000'));
const ROUNDS = Number(arg('rounds', '5'));
if (!(N > 0 && N <= 65536 * 200 && ROUNDS > 0)) throw new Error(`--updates (${N}) must be 1..13,107,200 and --rounds (${ROUNDS}) positive`);

// N UPDATEs of one /24 each (10.0.0.0/24 onwards: route data only, no address is configured), one attribute set.
const attributes = { origin: 0 as const, asPath: [{ type: 2 as const, asns: [65002] }], nextHop: Address.parse('192.0.2.2') };
const messages = Array.from({ length: N }, (_, i) =>
  encodeMessage({ type: 'update', withdrawn: [], attributes, nlri: [Prefix.parse(`${10 + (i >> 16)}.${(i >> 8) & 0xff}.${i & 0xff}.0/24`)] }, DEFAULT_CONTEXT),
);
const runs = joinUpdates(messages, true);

const listener = new Listener({ addresses: ['127.0.0.1'], port: 0 });
await listener.listen();
let received = 0;
const receiver = new Peer({
  session: sessionConfig({ localAs: 65001, localId: '192.0.2.1', peerAs: 65002, passive: true }),
  remoteAddress: '127.0.0.1',
  hooks: { onUpdate: () => void received++ },
});
listener.addPeer('127.0.0.1', receiver);
const sender = new Peer({
  session: sessionConfig({ localAs: 65002, localId: '192.0.2.2', peerAs: 65001 }),
  remoteAddress: '127.0.0.1',
  remotePort: listener.ports[0],
  localAddress: '127.0.0.1',
});
receiver.start(true);
sender.start();
try {
  await until('both sessions Established', () => receiver.state === 'Established' && sender.state === 'Established', 30_000, 5);
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    received = 0;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    sender.sendUpdateRuns(runs);
    await until('every UPDATE received', () => received >= N, 120_000, 1);
    const c = process.cpuUsage(c0);
    // round 0 warms the JIT up
    if (r > 0) {
      wall.push(performance.now() - t0);
      cpu.push((c.user + c.system) / 1000);
    }
    console.log(`round ${r}${r === 0 ? ' (warm-up)' : ''}: ${(performance.now() - t0).toFixed(0)} ms wall, ${((c.user + c.system) / 1000).toFixed(0)} ms CPU`);
  }
  const mw = median(wall);
  const mc = median(cpu);
  console.log(
    `${N} UPDATEs of one /24, ${ROUNDS} rounds: median ${mw.toFixed(0)} ms wall, ${mc.toFixed(0)} ms CPU; ${((mc * 1000) / N).toFixed(2)} µs CPU per UPDATE`,
  );
} finally {
  sender.dispose();
  receiver.dispose();
  await listener.close();
}
