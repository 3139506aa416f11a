/**
 * Policies on loopback: A (AS 65001) announces three routes to B (AS 65002),
 * which filters them on import and passes its customers' routes on to C
 * (AS 65003) with an export policy; then B explains what it sends C, and why.
 *
 *   node --import tsx examples/policies.ts
 */
import { BgpSpeaker, formatTrace, type PeerOptions } from '../src/index.js';

const speaker = (asn: number, address: string) => new BgpSpeaker({ asn, routerId: address, listen: { addresses: [address], port: 0 }, coalesceMs: 2 });
const a = speaker(65001, '127.0.0.1');
const b = speaker(65002, '127.0.0.2');
const c = speaker(65003, '127.0.0.3');
for (const s of [a, b, c]) await s.start();

// Named sets and policies, compiled once; peers refer to policies by name.
b.definePolicies({
  sets: {
    prefix: { customers: ['203.0.113.0/24 le 26', '198.51.100.0/24'] },
    community: { blackhole: ['65535:666'], fromA: ['65001:*'] },
  },
  policies: {
    'from-a': {
      statements: [
        { name: 'no-blackhole', conditions: { communitySet: { set: 'blackhole' } }, actions: { result: 'reject' } },
        {
          name: 'customers',
          conditions: { prefixSet: { set: 'customers' } },
          actions: { localPref: 200, community: { add: ['65002:100'] }, result: 'accept' },
        },
        { name: 'rest', actions: { result: 'reject' } },
      ],
    },
    'to-c': {
      statements: [
        {
          name: 'customers-only',
          conditions: { prefixSet: { set: 'customers' }, communitySet: { set: 'fromA' } },
          actions: { asPathPrepend: { asn: 'self', count: 2 }, med: 50, result: 'accept' },
        },
      ],
    },
  },
});

const link = (x: BgpSpeaker, xAddr: string, y: BgpSpeaker, yAddr: string, xSide: Partial<PeerOptions> = {}) => {
  x.addPeer({ address: yAddr, port: y.port, asn: y.options.asn, localAddress: xAddr, families: ['ipv4'], connectRetryTime: 1, ...xSide });
  y.addPeer({ address: xAddr, port: x.port, asn: x.options.asn, localAddress: yAddr, families: ['ipv4'], connectRetryTime: 1 });
};
link(b, '127.0.0.2', a, '127.0.0.1', { importPolicies: ['from-a'] });
link(b, '127.0.0.2', c, '127.0.0.3', { exportPolicies: ['to-c'] });

const atC = new Promise<void>((resolve) => c.on('routeReceived', (r) => r.prefix.toString() === '203.0.113.0/25' && resolve()));
a.originate('203.0.113.0/25', { communities: ['65001:1'] }); // a customer route: accepted, tagged, passed on
a.originate('198.51.100.0/24', { communities: ['65001:1', '65535:666'] }); // blackholed: refused on import
a.originate('192.0.2.0/24', { communities: ['65001:1'] }); // not a customer prefix: refused on import
await atC;
const fromA = () => b.status().find((p) => p.address === '127.0.0.1')!.counters;
while (fromA().prefixesReceived < 3) await new Promise((r) => setTimeout(r, 10));

console.log(`B: from A ${fromA().prefixesReceived} received, ${fromA().prefixesAccepted} accepted`);
for (const r of c.received()) console.log(`C: ${r.prefix} AS path ${r.asPath.join(' ')} med ${r.med} communities ${r.communities.join(' ')}`);

// Why does C get 203.0.113.0/25, and as what?
const why = b.explain('203.0.113.0/25', '127.0.0.3');
for (const k of why.candidates) console.log(`B: candidate from ${k.from}: ${k.outcome} (${k.step})`);
const toC = why.peers[0];
console.log(`B: to ${toC.peer}: ${toC.sent ? 'sent' : 'not sent'}: ${toC.reason}`);
console.log(formatTrace(toC.trace!));

for (const s of [a, b, c]) await s.stop();
console.log('all stopped');
