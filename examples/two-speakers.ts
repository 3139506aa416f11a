/**
 * Two BGP speakers on loopback: A (AS 65001, 127.0.0.1) and B (AS 65002,
 * 127.0.0.2) peer over eBGP on free high ports, A originates a route, B
 * prints it as received, and both stop with an RFC 9003 message.
 *
 *   node --import tsx examples/two-speakers.ts
 */
import { BgpSpeaker, type ReceivedRoute } from '../src/index.js';

// Port 0: each speaker listens on a free port; `speaker.port` says which.
const a = new BgpSpeaker({ asn: 65001, routerId: '127.0.0.1', listen: { addresses: ['127.0.0.1'], port: 0 } });
const b = new BgpSpeaker({ asn: 65002, routerId: '127.0.0.2', listen: { addresses: ['127.0.0.2'], port: 0 } });
await a.start();
await b.start();

// Each side names the other; both dial and the session layer settles the collision.
a.addPeer({ address: '127.0.0.2', port: b.port, asn: 65002, localAddress: '127.0.0.1', families: ['ipv4'], connectRetryTime: 1 });
b.addPeer({ address: '127.0.0.1', port: a.port, asn: 65001, localAddress: '127.0.0.2', families: ['ipv4'], connectRetryTime: 1 });

const received = new Promise<ReceivedRoute>((resolve) => b.once('routeReceived', resolve));
a.once('peerUp', (peer) => console.log(`A: session with ${peer.address} (AS ${peer.negotiated?.peerAsn}) is up`));

// Locally originated routes go to eBGP peers without an export policy (RFC 8212 only holds back learned ones).
a.originate('203.0.113.0/24', { communities: ['65001:100'], largeCommunities: ['65001:1:2'], med: 10 });

const route = await received;
console.log(
  `B: received ${route.prefix} from ${route.peer} next hop ${route.nextHop} AS path ${route.asPath.join(' ')} communities ${route.communities.join(',')} large ${route.largeCommunities.join(',')} med ${route.med}`,
);

await a.stop({ message: 'example finished' });
await b.stop();
console.log('both stopped');
