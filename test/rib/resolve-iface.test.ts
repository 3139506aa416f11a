/**
 * A route learned over BGP whose next hop is off the session's network gets
 * the interface the speaker's resolver finds for it (`resolveIface`: with
 * kernel programming, the kernel's learned routes, as BIRD's `gateway
 * recursive`): import and export policies' `interface` conditions see it.
 */
import { describe, expect, it } from 'vitest';
import type { ExportPolicy, ImportPolicy, PolicyRoute } from '../../src/rib/ports.js';
import { linkIface, type PeerSource } from '../../src/rib/path.js';
import { Rib } from '../../src/rib/rib.js';
import { Prefix, type Address } from '../../src/net/index.js';
import { A, ebgpAttrs, FakePacker, P, update } from './helpers.js';

const CTX = { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false };

describe('the interface of a BGP route whose next hop is off the session network', () => {
  it('linkIface: the session interface for a next hop on its network, else the resolver’s answer for the first next hop (never for a link-local one)', () => {
    const asked: string[] = [];
    const resolveIface = (a: Address) => (asked.push(a.toString()), a.toString().startsWith('198.19.') ? 'cali1' : undefined);
    const s: PeerSource = {
      kind: 'peer',
      id: 'p',
      address: A('169.254.0.2'),
      asn: 64516,
      type: 'ebgp',
      routerIdNum: 0,
      rrClient: false,
      link: { iface: 'caliA', network: Prefix.parse('169.254.0.0/30') },
      resolveIface,
    };
    expect(linkIface(s, { nextHop: A('169.254.0.2') })).toBe('caliA');
    expect(linkIface(s, { nextHop: A('198.19.0.2') })).toBe('cali1');
    expect(linkIface(s, { nextHop: A('203.0.113.1') })).toBeUndefined();
    expect(linkIface(s, { mpReach: { afi: 2, safi: 1, nextHops: [A('fe80::1')], nlri: [] } })).toBeUndefined();
    expect(asked).toEqual(['198.19.0.2', '203.0.113.1']);
    expect(linkIface({ ...s, resolveIface: undefined }, { nextHop: A('198.19.0.2') })).toBeUndefined();
  });

  it('import and export policies see it on routes from a peer whose session gave a resolver', () => {
    const imported: PolicyRoute[] = [];
    const exported: PolicyRoute[] = [];
    const importPolicy: ImportPolicy = (r) => (imported.push(r), { verdict: r.iface === 'cali1' ? 'accept' : 'reject', attrs: r.attrs });
    const exportPolicy: ExportPolicy = (r) => (exported.push(r), { verdict: 'accept', attrs: r.attrs });
    const rib = new Rib({ localAsn: 64512, routerId: '192.0.2.100', packer: new FakePacker() });
    const pod = rib.addPeer({ address: A('198.19.0.2'), asn: 64516, localAddressV4: A('169.254.0.1'), importPolicy });
    const tor = rib.addPeer({ address: A('192.0.2.20'), asn: 65000, localAddressV4: A('192.0.2.100'), exportPolicy });
    const resolveIface = (a: Address) => (a.toString() === '198.19.0.2' ? 'cali1' : undefined);
    rib.peerUp(pod, { ctx: CTX, families: [4], routerId: '198.19.0.2', link: { iface: 'caliA', network: Prefix.parse('169.254.0.1/32') }, resolveIface }, 0);
    rib.peerUp(tor, { ctx: CTX, families: [4], routerId: '192.0.2.20' }, 0);
    rib.ingest(pod, update(ebgpAttrs([64516], '198.19.0.2'), ['198.19.200.0/24']), 0);
    rib.ingest(pod, update(ebgpAttrs([64516], '198.19.0.9'), ['203.0.113.0/24']), 0);
    expect(imported.map((r) => [r.prefix.toString(), r.iface ?? null])).toEqual([
      ['198.19.200.0/24', 'cali1'],
      ['203.0.113.0/24', null],
    ]);
    expect(rib.best(P('198.19.200.0/24'))).toBeDefined();
    expect(rib.best(P('203.0.113.0/24'))).toBeUndefined();
    rib.flushDue(1_000);
    expect(exported.map((r) => [r.prefix.toString(), r.iface ?? null])).toEqual([['198.19.200.0/24', 'cali1']]);
  });
});
