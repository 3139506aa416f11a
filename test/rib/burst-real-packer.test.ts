import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { Rib } from '../../src/rib/rib.js';
import { decodeUpdate } from '../../src/wire/update.js';
import { CTX } from './helpers.js';

// The burst rule with the real packer: 10,000 originations over 3 attribute sets
// reach one eBGP peer as at most ceil(n / prefixes-per-message) UPDATEs per set.
describe('burst with the real packer', () => {
  it('packs 10,000 /24 originations into the fewest 4096-byte UPDATEs per attribute set', () => {
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.1' });
    const id = rib.addPeer({ address: Address.parse('192.0.2.2'), asn: 65001, localAddressV4: Address.parse('192.0.2.1') });
    rib.peerUp(id, { ctx: CTX, families: [4], routerId: '192.0.2.2' }, 0);
    rib.flushDue(100); // initial End-of-RIB
    const sets = [0, 1, 2].map((i) => ({ origin: 0 as const, asPath: [], communities: [65000 * 65536 + i], med: i }));
    for (let i = 0; i < 10_000; i++) rib.originate(Prefix.v4((0x14000000 + i * 256) >>> 0, 24), sets[i % 3], 200);
    const messages = rib.flushDue(1000).flatMap((s) => s.messages);

    const perSet = new Map<number, { count: number; prefixes: number; attrBytes: number }>();
    const seen = new Set<string>();
    for (const m of messages) {
      expect(m.length).toBeLessThanOrEqual(4096);
      const body = m.subarray(19);
      const u = decodeUpdate(body, CTX);
      const med = u.attributes.med!;
      const attrBytes = (body[2] << 8) | body[3];
      const e = perSet.get(med) ?? { count: 0, prefixes: 0, attrBytes };
      e.count++;
      e.prefixes += u.nlri.length;
      perSet.set(med, e);
      for (const p of u.nlri) seen.add(p.toString());
    }
    expect(seen.size).toBe(10_000);
    expect([...perSet.keys()].sort()).toEqual([0, 1, 2]);
    for (const e of perSet.values()) {
      const perMessage = Math.floor((4096 - 19 - 4 - e.attrBytes) / 4); // a /24 is 4 NLRI bytes
      expect(e.count).toBeLessThanOrEqual(Math.ceil(e.prefixes / perMessage));
    }
  });
});
