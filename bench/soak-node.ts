/**
 * The node under soak (bench/soak.ts): a speaker peering with the router at
 * 127.0.0.1:PORT, with the agent's metrics server on 127.0.0.2:0. Prints
 * `{"metrics": PORT}` once listening; one JSON line per session change on
 * stdout (`{"event": "down", "reason": …}`).
 *
 *   node --import tsx bench/soak-node.ts ROUTER_PORT
 */
import { startMetricsServer } from '../src/agent/metrics-server.js';
import { AgentMetrics } from '../src/agent/metrics.js';
import { BgpSpeaker } from '../src/speaker.js';

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
process.stdin.resume();
process.stdin.on('end', () => void sp.stop().then(() => process.exit(0)));
