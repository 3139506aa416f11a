/**
 * The fake speaker refuses exactly what BgpSpeaker refuses: each input is
 * given to both, and both must accept it or both must throw.
 */
import { describe, expect, it } from 'vitest';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import type { PeerOptions, RouteAttributes } from '../../src/speaker/types.js';
import { FakeSpeaker } from './fake-speaker.js';

const OPTIONS = { asn: 64512, routerId: '192.0.2.1', listen: false as const };

function outcome(f: () => void): string {
  try {
    f();
    return 'accepted';
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
}

const ROUTES: [string, string, RouteAttributes][] = [
  ['standard community', '198.51.100.0/24', { communities: ['64512:100'] }],
  ['well-known name', '198.51.100.0/24', { communities: ['no-export'] }],
  ['large community in communities (the route-losing case)', '198.51.100.0/24', { communities: ['64512:7:9'] }],
  ['large community in largeCommunities', '198.51.100.0/24', { largeCommunities: ['64512:7:9'] }],
  ['standard community in largeCommunities', '198.51.100.0/24', { largeCommunities: ['64512:7'] }],
  ['community part above 65535', '198.51.100.0/24', { communities: ['70000:1'] }],
  ['IPv6 next hop for an IPv4 prefix', '198.51.100.0/24', { nextHop: '2001:db8::1' }],
  ['bad origin', '198.51.100.0/24', { origin: 'bogus' as 'igp' }],
  ['MED out of range', '198.51.100.0/24', { med: -1 }],
];

const PEERS: [string, PeerOptions][] = [
  ['plain peer', { address: '192.0.2.20', asn: 65000 }],
  ['address not an IP', { address: 'router.example', asn: 65000 }],
  ['port 0', { address: '192.0.2.21', asn: 65000, port: 0 }],
  ['TCP-MD5 password', { address: '192.0.2.22', asn: 65000, password: 'x' }],
  ['unknown family', { address: '192.0.2.23', asn: 65000, families: ['ipv5' as 'ipv4'] }],
  ['allowOwnAs 11', { address: '192.0.2.24', asn: 65000, allowOwnAs: 11 }],
  ['IPv4 nextHopV6', { address: '192.0.2.25', asn: 65000, nextHopV6: '192.0.2.1' }],
];

describe('FakeSpeaker checks its input as BgpSpeaker does', () => {
  it.each(ROUTES)('originate: %s', (_name, prefix, attrs) => {
    const real = outcome(() => new BgpSpeaker(OPTIONS).originate(prefix, attrs));
    const fake = outcome(() => new FakeSpeaker(OPTIONS).originate(prefix, attrs));
    expect(fake).toBe(real);
  });

  it.each(PEERS)('addPeer and updatePeer: %s', (_name, opts) => {
    const realAdd = outcome(() => new BgpSpeaker(OPTIONS).addPeer(opts));
    expect(outcome(() => new FakeSpeaker(OPTIONS).addPeer(opts))).toBe(realAdd);
    const base = { address: opts.address, asn: 65000 };
    const real = new BgpSpeaker(OPTIONS);
    const fake = new FakeSpeaker(OPTIONS);
    const added = outcome(() => real.addPeer(base));
    expect(outcome(() => fake.addPeer(base))).toBe(added);
    if (added === 'accepted') expect(outcome(() => fake.updatePeer(opts))).toBe(outcome(() => real.updatePeer(opts)));
  });

  it('the large community the agent used to put into communities is refused by both', () => {
    const attrs = { communities: ['64512:7:9'] };
    expect(() => new BgpSpeaker(OPTIONS).originate('198.51.100.0/24', attrs)).toThrow(/communities\[0\]/);
    expect(() => new FakeSpeaker(OPTIONS).originate('198.51.100.0/24', attrs)).toThrow(/communities\[0\]/);
  });
});
