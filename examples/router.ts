/**
 * A router for the README's quick-start tour: a tsbgp speaker on
 * 127.0.0.20:1180 (AS 65000) that peers with the agent for worker1 on
 * 127.0.0.10:1179 and prints each route it receives and each it loses.
 * Ctrl-C stops it.
 *
 *   node --import tsx examples/router.ts
 */
import { BgpSpeaker } from '../src/index.js';

const router = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.20', listen: { addresses: ['127.0.0.20'], port: 1180 } });
router.on('peerUp', (peer) => console.log(`router: session with ${peer.address} is up`));
router.on('peerDown', (peer) => console.log(`router: session with ${peer.address} is down`));
router.on('routeReceived', (r) => console.log(`router: received ${r.prefix} via ${r.nextHop} AS path ${r.asPath.join(' ')}`));
router.on('routeWithdrawn', (peer, prefix) => console.log(`router: ${peer} withdrew ${prefix}`));
await router.start();
router.addPeer({ address: '127.0.0.10', port: 1179, asn: 64512, localAddress: '127.0.0.20', families: ['ipv4'], connectRetryTime: 1 });
console.log('router: AS 65000 on 127.0.0.20:1180, peering with worker1 at 127.0.0.10:1179');
process.once('SIGINT', () => void router.stop({ message: 'tour finished' }).then(() => process.exit(0)));
process.once('SIGTERM', () => void router.stop({ message: 'tour finished' }).then(() => process.exit(0)));
