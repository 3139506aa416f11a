/**
 * Our own paths with an interface (`Rib.originate(…, iface)`): one path per
 * attribute set and interface, the export policy sees the interface, and
 * the attribute sets are released when the last prefix using them goes.
 */
import { describe, expect, it } from 'vitest';
import type { ExportPolicy, PolicyRoute } from '../../src/rib/ports.js';
import { Rib } from '../../src/rib/rib.js';
import { A, FakePacker, P } from './helpers.js';

describe('originate with an interface', () => {
  it('paths per (attributes, interface); replaced when the interface changes; released on withdraw', () => {
    const seen: PolicyRoute[] = [];
    const policy: ExportPolicy = (r) => {
      seen.push(r);
      return { verdict: r.iface?.startsWith('cali') ? 'reject' : 'accept', attrs: r.attrs };
    };
    const rib = new Rib({ localAsn: 65000, routerId: '192.0.2.100', packer: new FakePacker() });
    const id = rib.addPeer({ address: A('192.0.2.1'), asn: 65001, localAddressV4: A('192.0.2.100'), exportPolicy: policy });
    rib.peerUp(id, { ctx: { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false }, families: [4], routerId: '192.0.2.1' }, 0);
    const attrs = { origin: 0 as const, asPath: [] };
    rib.originate(P('198.19.0.1/32'), attrs, 0, undefined, 'cali1');
    rib.originate(P('198.19.0.2/32'), attrs, 0, undefined, 'eth0');
    rib.originate(P('198.19.0.3/32'), attrs, 0);
    const [b1, b2, b3] = ['198.19.0.1/32', '198.19.0.2/32', '198.19.0.3/32'].map((p) => rib.best(P(p))!);
    expect([b1.iface, b2.iface, b3.iface]).toEqual(['cali1', 'eth0', undefined]);
    expect(b1.attrs).toBe(b2.attrs); // one attribute set, three paths
    expect(new Set([b1, b2, b3]).size).toBe(3);
    rib.originate(P('198.19.0.4/32'), attrs, 0, undefined, 'cali1');
    expect(rib.best(P('198.19.0.4/32'))).toBe(b1); // the same (attributes, interface) shares its path

    rib.flushDue(1_000);
    expect(Object.fromEntries(seen.map((r) => [r.prefix.toString(), r.iface ?? null]))).toEqual({
      '198.19.0.1/32': 'cali1',
      '198.19.0.2/32': 'eth0',
      '198.19.0.3/32': null,
      '198.19.0.4/32': 'cali1',
    });
    expect([...rib.adjRibOut(id)!.keys()].length).toBe(2);

    // Another interface, same attributes: a new path, the route re-evaluated.
    rib.originate(P('198.19.0.1/32'), attrs, 1_000, undefined, 'eth1');
    expect(rib.best(P('198.19.0.1/32'))!.iface).toBe('eth1');
    rib.flushDue(2_000);
    expect([...rib.adjRibOut(id)!.keys()].length).toBe(3);

    // Everything withdrawn: the store holds nothing of ours; originating again works.
    for (const p of ['198.19.0.1/32', '198.19.0.2/32', '198.19.0.3/32', '198.19.0.4/32']) rib.withdraw(P(p), 3_000);
    rib.flushDue(4_000);
    expect(rib.store.size).toBe(0);
    rib.originate(P('198.19.0.1/32'), attrs, 5_000, undefined, 'cali1');
    expect(rib.best(P('198.19.0.1/32'))!.iface).toBe('cali1');
  });
});
