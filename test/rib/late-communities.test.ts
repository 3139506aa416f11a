/**
 * Communities added after the export policy (Path.late): a local route
 * originated with them is seen by the export policy without them, and every
 * route the policy lets through is sent with them, unless a policy
 * statement accepted it (BIRD's `accept` ends the filter before Calico adds
 * its prefixAdvertisements communities).
 */
import { describe, expect, it } from 'vitest';
import { keyOf } from '../../src/rib/prefix-key.js';
import { Rib, type SessionInfo } from '../../src/rib/rib.js';
import type { ExportPolicy } from '../../src/rib/ports.js';
import type { PathAttributes } from '../../src/wire/types.js';
import { A, CTX, FakePacker, P } from './helpers.js';

const LOCAL_ASN = 64512;
const C100 = 65000 * 65536 + 100;
const C7 = 65000 * 65536 + 7;
const BASE: PathAttributes = { origin: 0, asPath: [] };
const LATE: PathAttributes = { ...BASE, communities: [C100] };
const session = (routerId: string): SessionInfo => ({ ctx: CTX, families: [4], routerId });

/** A Rib with one eBGP peer under `policy` and one iBGP peer without a policy, both up. */
function setup(policy: ExportPolicy) {
  const rib = new Rib({ localAsn: LOCAL_ASN, routerId: '192.0.2.100', packer: new FakePacker() });
  const ebgp = rib.addPeer({ address: A('192.0.2.20'), asn: 65000, localAddressV4: A('192.0.2.100'), exportPolicy: policy });
  const ibgp = rib.addPeer({ address: A('192.0.2.21'), asn: LOCAL_ASN, localAddressV4: A('192.0.2.100') });
  rib.peerUp(ebgp, session('192.0.2.20'), 0);
  rib.peerUp(ibgp, session('192.0.2.21'), 0);
  const sent = (peer: string, prefix: string) => rib.adjRibOut(peer)!.get(keyOf(P(prefix)))?.attrs;
  return { rib, ebgp, ibgp, sent };
}

describe('communities added after the export policy', () => {
  it('the policy does not see them; a rule on them cannot reject the route; both peers receive them', () => {
    const seen: (readonly number[] | undefined)[] = [];
    const rejectC100: ExportPolicy = (r) => {
      seen.push(r.attrs.communities);
      return r.attrs.communities?.includes(C100) ? { verdict: 'reject', attrs: r.attrs, decided: true } : { verdict: 'accept', attrs: r.attrs };
    };
    const { rib, ebgp, ibgp, sent } = setup(rejectC100);
    rib.originate(P('198.18.1.64/26'), BASE, 0, LATE);
    rib.flushDue(100);
    expect(seen).toEqual([undefined]);
    expect(sent(ebgp, '198.18.1.64/26')?.communities).toEqual([C100]);
    expect(sent(ebgp, '198.18.1.64/26')?.asPath).toEqual([{ type: 2, asns: [LOCAL_ASN] }]);
    expect(sent(ibgp, '198.18.1.64/26')?.communities).toEqual([C100]);
    // The same community as an ordinary one: the policy sees it and rejects.
    rib.originate(P('198.18.1.0/26'), LATE, 0);
    rib.flushDue(200);
    expect(sent(ebgp, '198.18.1.0/26')).toBeUndefined();
    expect(sent(ibgp, '198.18.1.0/26')?.communities).toEqual([C100]);
  });

  it('what the policy adds is kept and the late ones follow; a statement that accepts sends the route without them', () => {
    const addC7: ExportPolicy = (r) =>
      r.prefix.toString() === '198.18.1.64/26'
        ? { verdict: 'accept', attrs: { ...r.attrs, communities: [C7] } }
        : { verdict: 'accept', attrs: r.attrs, decided: true };
    const { rib, ebgp, sent } = setup(addC7);
    rib.originate(P('198.18.1.64/26'), BASE, 0, LATE);
    rib.originate(P('198.18.1.128/26'), BASE, 0, LATE);
    rib.flushDue(100);
    expect(sent(ebgp, '198.18.1.64/26')?.communities).toEqual([C7, C100]);
    expect(sent(ebgp, '198.18.1.128/26')?.communities).toBeUndefined();
    // explain computes the same (Rib.exportPreview).
    const x = rib.exportPreview(ebgp, P('198.18.1.128/26'));
    expect(x.attrs?.communities).toBeUndefined();
    expect(x.send!(x.attrs!, true).communities).toBeUndefined();
    expect(x.send!(x.attrs!).communities).toEqual([C100]);
  });

  it('interning: one Path per (set, late set); re-originating without late communities sends without them; withdrawing frees both sets', () => {
    const { rib, ebgp, sent } = setup((r) => ({ verdict: 'accept', attrs: r.attrs }));
    const before = rib.store.size;
    rib.originate(P('198.18.1.64/26'), BASE, 0, LATE);
    rib.originate(P('198.18.1.128/26'), BASE, 0, LATE);
    rib.flushDue(100);
    expect(sent(ebgp, '198.18.1.64/26')).toBe(sent(ebgp, '198.18.1.128/26'));
    rib.originate(P('198.18.1.64/26'), BASE, 200);
    rib.flushDue(300);
    expect(sent(ebgp, '198.18.1.64/26')?.communities).toBeUndefined();
    expect(sent(ebgp, '198.18.1.128/26')?.communities).toEqual([C100]);
    rib.withdraw(P('198.18.1.64/26'), 400);
    rib.withdraw(P('198.18.1.128/26'), 400);
    rib.flushDue(500);
    expect(rib.adjRibOut(ebgp)!.size).toBe(0);
    expect(rib.store.size).toBe(before);
  });
});
