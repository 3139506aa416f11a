import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Prefix } from '../../src/net/prefix.js';
import { formatCommunity, formatExtendedCommunity, formatLargeCommunity, linkBandwidthOf, parseExtendedCommunity } from '../../src/wire/communities.js';
import { LEGACY_CONTEXT, type CodecContext } from '../../src/wire/context.js';
import { Framer } from '../../src/wire/framer.js';
import { decodeMessage, encodeMessage } from '../../src/wire/message.js';
import { capabilitiesOf, openAsn } from '../../src/wire/open.js';
import type { Message, OpenMessage, UpdateMessage } from '../../src/wire/types.js';
import { CAP, ROUTES, setByName } from '../fixtures/capture/routes.js';

// The codec against real bytes from BIRD, FRR, GoBGP and ExaBGP (test/fixtures/README.md):
// every message decodes cleanly, carries what the daemon was configured to send,
// and re-encodes to bytes whose attributes match the daemon's value for value.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const files = readdirSync(ROOT)
  .filter((d) => statSync(join(ROOT, d)).isDirectory() && d !== 'capture')
  .flatMap((d) =>
    readdirSync(join(ROOT, d))
      .filter((f) => f.endsWith('.bin'))
      .map((f) => `${d}/${f}`),
  )
  .sort();

/** The session's receive context, as our capture OPEN negotiated it. */
function contextFor(file: string): CodecContext {
  const addPath = file.includes('addpath');
  return { asn4: !file.includes('as2'), extendedMessage: true, addPathV4: addPath, addPathV6: addPath };
}

function frames(file: string): { type: number; body: Uint8Array }[] {
  const out: { type: number; body: Uint8Array }[] = [];
  new Framer(65535).push(new Uint8Array(readFileSync(join(ROOT, file))), (type, body) => out.push({ type, body: body.slice() }));
  return out;
}

/** Attribute (code, value) pairs of an UPDATE body, independent of order and of the extended-length flag. */
function attributeValues(body: Uint8Array): string[] {
  const wl = (body[0] << 8) | body[1];
  let o = 2 + wl;
  const end = o + 2 + ((body[o] << 8) | body[o + 1]);
  o += 2;
  const out: string[] = [];
  while (o < end) {
    const flags = body[o];
    const code = body[o + 1];
    const ext = (flags & 0x10) !== 0;
    const len = ext ? (body[o + 2] << 8) | body[o + 3] : body[o + 2];
    const start = o + (ext ? 4 : 3);
    out.push(`${code}/${flags & 0xe0}/${Buffer.from(body.subarray(start, start + len)).toString('hex')}`);
    o = start + len;
  }
  return out.sort();
}

function nlriOf(u: UpdateMessage): string[] {
  return [...u.nlri, ...(u.attributes.mpReach?.nlri ?? [])].map((p) => p.toString());
}

describe('real daemon bytes decode', () => {
  for (const file of files) {
    describe(file, () => {
      const ctx = contextFor(file);
      const all = frames(file);
      const decoded: Message[] = all.map((f) => decodeMessage(f.type, f.body, f.type === 1 ? LEGACY_CONTEXT : ctx));

      it('OPEN names the daemon AS and offers the families we configured', () => {
        const open = decoded[0] as OpenMessage;
        expect(open.type).toBe('open');
        expect(open.version).toBe(4);
        expect(openAsn(open)).toBe(CAP.daemonAsn);
        expect(open.myAs).toBe(23456); // AS_TRANS: the daemon's AS needs four bytes
        const mp = capabilitiesOf(open).filter((c) => c.kind === 'multiprotocol');
        expect(mp.map((c) => (c.kind === 'multiprotocol' ? `${c.afi}/${c.safi}` : '')).sort()).toEqual(['1/1', '2/1']);
        expect(capabilitiesOf(open).some((c) => c.kind === 'fourOctetAs')).toBe(true);
      });

      it('UPDATEs decode without RFC 7606 issues and carry exactly the configured routes and attributes', () => {
        const updates = decoded.filter((m): m is UpdateMessage => m.type === 'update');
        expect(updates.every((u) => u.issues === undefined)).toBe(true);
        const announced = new Map<string, UpdateMessage>();
        for (const u of updates) for (const p of nlriOf(u)) announced.set(p, u);
        for (const group of ROUTES) {
          const set = setByName(group.set);
          for (const text of group.prefixes) {
            const u = announced.get(Prefix.parse(text).toString());
            expect(u, `${file}: ${text} announced`).toBeDefined();
            const a = u!.attributes;
            expect((a.communities ?? []).map(formatCommunity).sort()).toEqual([...set.communities].sort());
            expect((a.largeCommunities ?? []).map(formatLargeCommunity).sort()).toEqual([...set.largeCommunities].sort());
            // FRR sends MED 0 on routes whose set configures none (its static redistribution carries metric 0).
            if (set.med !== undefined || !file.startsWith('frr/')) expect(a.med).toBe(set.med);
            else expect(a.med).toBe(0);
            if (file.includes('ibgp') && set.localPref !== undefined) expect(a.localPref).toBe(set.localPref);
            const path = (a.asPath ?? []).flatMap((s) => s.asns);
            if (file.includes('ebgp')) expect(path[0]).toBe(CAP.daemonAsn);
            for (const asn of set.prepend ?? []) expect(path).toContain(asn);
            if (group.family === 6) expect(a.mpReach?.nextHops[0]?.family).toBe(6);
          }
        }
      });

      it('re-encodes every message with the same attribute values (byte for byte where the daemon was canonical)', () => {
        let identical = 0;
        for (let i = 0; i < all.length; i++) {
          const m = decoded[i];
          const bytes = encodeMessage(m, m.type === 'open' ? LEGACY_CONTEXT : ctx).subarray(19);
          expect(decodeMessage(all[i].type, bytes, m.type === 'open' ? LEGACY_CONTEXT : ctx)).toEqual(m);
          if (m.type === 'update') {
            expect(attributeValues(bytes)).toEqual(attributeValues(all[i].body));
            expect(bytes.length).toBeLessThanOrEqual(all[i].body.length);
          } else {
            expect(Buffer.from(bytes).equals(Buffer.from(all[i].body))).toBe(true);
          }
          if (Buffer.from(bytes).equals(Buffer.from(all[i].body))) identical++;
        }
        expect(identical).toBeGreaterThanOrEqual(3); // OPEN, KEEPALIVE, NOTIFICATION at least
      });
    });
  }

  it('FRR talking to a 2-byte speaker sends AS4_PATH, and the merge restores the 4-byte path', () => {
    const updates = frames('frr/ebgp-as2.bin')
      .filter((f) => f.type === 2)
      .map((f) => decodeMessage(2, f.body, contextFor('frr/ebgp-as2.bin')) as UpdateMessage);
    const withPath = updates.filter((u) => u.attributes.asPath);
    expect(withPath.length).toBeGreaterThan(0);
    for (const u of withPath) expect(u.attributes.asPath![0].asns[0]).toBe(CAP.daemonAsn);
    expect(withPath.some((u) => u.attributes.aggregator?.asn === CAP.daemonAsn)).toBe(true);
  });
});

describe('link bandwidth from FRR 8.4 (set extcommunity bandwidth, test/fixtures/README.md)', () => {
  const lbOf = (file: string, prefix: string): string[] | undefined => {
    for (const f of frames(file).filter((x) => x.type === 2)) {
      const u = decodeMessage(2, f.body, contextFor(file)) as UpdateMessage;
      if (nlriOf(u).includes(prefix)) return (u.attributes.extendedCommunities ?? []).map(formatExtendedCommunity);
    }
    return undefined;
  };

  it("decodes FRR's transitive (default) and non-transitive forms into bytes per second, AS as the two-octet AS_TRANS", () => {
    // 100 Mbit/s = 12,500,000 bytes/s; FRR puts AS_TRANS (23456) for its 4-byte AS.
    expect(lbOf('frr/ibgp-addpath.bin', '198.19.4.0/24')).toEqual(['lb-transitive:23456:12500000']);
    expect(lbOf('frr/ibgp-addpath.bin', '198.19.5.0/24')).toEqual(['lb:23456:250000000']);
    const v = parseExtendedCommunity('lb:23456:250000000');
    expect(linkBandwidthOf(v)).toEqual({ asn: 23456, bytesPerSecond: 250_000_000, transitive: false });
  });

  it('FRR 8.4 sends its transitive link bandwidth to an eBGP neighbour and keeps the non-transitive one in the AS', () => {
    expect(lbOf('frr/ebgp.bin', '198.19.4.0/24')).toEqual(['lb-transitive:23456:12500000']);
    expect(lbOf('frr/ebgp.bin', '198.19.5.0/24')).toEqual([]);
  });
});
