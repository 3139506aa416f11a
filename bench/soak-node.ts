/**
 * The node under soak (bench/soak.ts): a speaker peering with the router at
 * 127.0.0.1:PORT, with the agent's metrics server on 127.0.0.2:0. Prints
 * `{"metrics": PORT}` once listening; one JSON line per session change on
 * stdout (`{"event": "down", "reason": …}`), and every 5 s the longest
 * event-loop stall and GC pause of the last 5 s (`{"loopMaxMs": …, "gcMaxMs": …}`).
 *
 *   node --import tsx bench/soak-node.ts ROUTER_PORT
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { startMetricsServer } from '../src/agent/metrics-server.js';
import { AgentMetrics } from '../src/agent/metrics.js';
import { BgpSpeaker } from '../src/speaker/speaker.js';

const routerPort = Number(process.argv[2]);
const sp = new BgpSpeaker({ asn: 64512, routerId: '127.0.0.2', listen: false });
sp.originate('203.0.113.0/24');
// Hold 90 s (a common router default); a loop stalled past it shows as a reset.
sp.addPeer({ address: '127.0.0.1', port: routerPort, asn: 65000, localAddress: '127.0.0.2', families: ['ipv4'], holdTime: 90, connectRetryTime: 1 });
const metrics = new AgentMetrics();
metrics.attach(() => ({ running: true, speaker: sp, configErrors: 0 }));
sp.on('stateChange', () => metrics.refresh());
sp.on('peerDown', (_st, reason) => process.stdout.write(`${JSON.stringify({ event: 'down', reason })}\n`));
sp.on('peerUp', () => process.stdout.write(`${JSON.stringify({ event: 'up' })}\n`));
const server = await startMetricsServer(metrics, { host: '127.0.0.2', port: 0 });
await sp.start();
process.stdout.write(`${JSON.stringify({ metrics: server.address.port })}\n`);
// The longest event-loop stall in each 5 s window (what a health probe waits behind).
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
// And the longest garbage-collection pause in it: a stall that slicing cannot remove.
let gcMaxMs = 0;
new PerformanceObserver((l) => {
  for (const e of l.getEntries()) gcMaxMs = Math.max(gcMaxMs, e.duration);
}).observe({ entryTypes: ['gc'] });
setInterval(() => {
  process.stdout.write(`${JSON.stringify({ loopMaxMs: loop.max / 1e6, loopP99Ms: loop.percentile(99) / 1e6, gcMaxMs })}\n`);
  loop.reset();
  gcMaxMs = 0;
}, 5000).unref();
process.stdin.resume();
process.stdin.on('end', () => void sp.stop().then(() => process.exit(0)));
