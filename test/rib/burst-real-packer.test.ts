import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { Rib } from '../../src/rib/rib.js';
import * as wire from '../../src/wire/packer.js';
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

// The update group packs IPv4 keys as arrays when the packer can (packUpdatesV4): the bytes must be those of the Prefix path.
describe('packing keys as arrays', () => {
  it('sends the same UPDATEs, announcements and withdrawals, IPv4 (/32 too) beside IPv6, as a packer taking Prefixes only', () => {
    const run = (packer?: Pick<typeof wire, 'packUpdates' | 'packWithdrawals'>): string[] => {
      const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.1', ...(packer ? { packer } : {}) });
      const id = rib.addPeer({
        address: Address.parse('192.0.2.2'),
        asn: 65001,
        localAddressV4: Address.parse('192.0.2.1'),
        localAddressV6: Address.parse('2001:db8::1'),
      });
      rib.peerUp(id, { ctx: CTX, families: [4, 6], routerId: '192.0.2.2' }, 0);
      const out: string[] = [];
      const flush = (now: number) => {
        for (const s of rib.flushDue(now)) for (const m of s.messages) out.push(Buffer.from(m).toString('hex'));
      };
      flush(100);
      const sets = [0, 1, 2, 3].map((i) => ({ origin: 0 as const, asPath: [], communities: [65000 * 65536 + i], med: i }));
      const prefixes = Array.from({ length: 3000 }, (_, i) =>
        i % 7 === 0 ? Prefix.v6(0x20010db8, i << 16, 0, 0, 48) : Prefix.v4((0xc6120000 + i * 8) >>> 0, i % 5 === 0 ? 32 : 29),
      );
      prefixes.forEach((p, i) => rib.originate(p, sets[(i * 7) % 4], 200));
      flush(1000);
      prefixes.forEach((p, i) => i % 3 !== 0 && rib.withdraw(p, 2000));
      flush(3000);
      return out;
    };
    const fast = run();
    expect(fast.length).toBeGreaterThan(10);
    expect(fast).toEqual(run({ packUpdates: wire.packUpdates, packWithdrawals: wire.packWithdrawals }));
  });
});
