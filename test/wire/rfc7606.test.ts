import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT, type CodecContext } from '../../src/wire/context.js';
import { BgpError } from '../../src/wire/errors.js';
import { decodeUpdate, encodeUpdateBody, type UpdateDecodeOptions } from '../../src/wire/update.js';
import type { UpdateMessage } from '../../src/wire/types.js';
import { plainUpdate } from '../../src/wire/received.js';

/**
 * One row per error case of RFC 4271 §6.3 (UPDATE) and RFC 7606 §3–§5 and
 * §7, each as hand-built bytes with the outcome the RFCs prescribe:
 * a NOTIFICATION (code/subcode), treat-as-withdraw, attribute-discard, or ok.
 */

type Bytes = number[];

function attr(flags: number, code: number, ...value: Bytes): Bytes {
  if (flags & 0x10) return [flags, code, value.length >>> 8, value.length & 255, ...value];
  return [flags, code, value.length, ...value];
}

function body(withdrawn: Bytes, attrs: Bytes, nlri: Bytes): Uint8Array {
  return Uint8Array.of(withdrawn.length >>> 8, withdrawn.length & 255, ...withdrawn, attrs.length >>> 8, attrs.length & 255, ...attrs, ...nlri);
}

const ORIGIN = attr(0x40, 1, 0);
const AS_PATH4 = attr(0x40, 2, 2, 1, 0, 0, 0xfd, 0xe8); // SEQ [65000], 4-byte
const NEXT_HOP = attr(0x40, 3, 192, 0, 2, 1);
const MANDATORY = [...ORIGIN, ...AS_PATH4, ...NEXT_HOP];
const NLRI = [24, 198, 51, 100]; // 198.51.100.0/24
const MP_REACH_V6 = attr(0x80, 14, 0, 2, 1, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 32, 0x20, 0x01, 0x0d, 0xb8);

type Outcome = { error: [number, number] } | { outcome: 'ok' } | { outcome: 'treat-as-withdraw' | 'attribute-discard'; code: number };

interface Row {
  rule: string;
  bytes: Uint8Array;
  expect: Outcome;
  ctx?: CodecContext;
  opts?: UpdateDecodeOptions;
}

const rows: Row[] = [
  // ---- RFC 4271 §6.3 message-level checks (unchanged by RFC 7606: session reset)
  { rule: '4271 6.3: body too short for the length fields', bytes: Uint8Array.of(0, 0, 0), expect: { error: [3, 1] } },
  { rule: '4271 6.3: withdrawn routes length runs past the message', bytes: Uint8Array.of(0, 9, 24, 10, 0, 0, 0, 0), expect: { error: [3, 1] } },
  { rule: '4271 6.3: total attribute length runs past the message', bytes: Uint8Array.of(0, 0, 0, 20, ...ORIGIN), expect: { error: [3, 1] } },
  { rule: '4271 6.3 / 7606 5.3: withdrawn prefix length above 32', bytes: body([33, 10, 0, 0, 0, 0], [], []), expect: { error: [3, 10] } },
  { rule: '7606 5.3: withdrawn prefix overruns the field', bytes: body([24, 10, 0], [], []), expect: { error: [3, 10] } },
  { rule: '4271 6.3 / 7606 5.3: NLRI prefix length above 32', bytes: body([], MANDATORY, [33, 1, 2, 3, 4, 5]), expect: { error: [3, 10] } },
  { rule: '7606 5.3: NLRI prefix overruns the message', bytes: body([], MANDATORY, [24, 10, 0]), expect: { error: [3, 10] } },
  {
    rule: '7606 5.3: ADD-PATH NLRI truncated inside the path id',
    bytes: body([], MANDATORY, [0, 0, 1]),
    ctx: { ...DEFAULT_CONTEXT, addPathV4: true },
    expect: { error: [3, 10] },
  },
  { rule: '4271 6.3: unrecognized well-known attribute', bytes: body([], [...MANDATORY, ...attr(0x40, 99, 1)], NLRI), expect: { error: [3, 2] } },
  {
    rule: '4271 6.3 / 7606 3(d): missing ORIGIN with NLRI',
    bytes: body([], [...AS_PATH4, ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 1 },
  },
  {
    rule: '4271 6.3 / 7606 3(d): missing AS_PATH with NLRI',
    bytes: body([], [...ORIGIN, ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 2 },
  },
  {
    rule: '4271 6.3 / 7606 3(d): missing NEXT_HOP with classic NLRI',
    bytes: body([], [...ORIGIN, ...AS_PATH4], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 3 },
  },
  {
    rule: '4760 3: NEXT_HOP not needed when only MP_REACH announces',
    bytes: body([], [...MP_REACH_V6, ...ORIGIN, ...AS_PATH4], []),
    expect: { outcome: 'ok' },
  },
  { rule: '7606 3(d): NLRI with no attributes at all', bytes: body([], [], NLRI), expect: { outcome: 'treat-as-withdraw', code: 1 } },
  {
    rule: '4271 5.1.5: missing LOCAL_PREF from an internal peer',
    bytes: body([], MANDATORY, NLRI),
    opts: { peer: 'internal' },
    expect: { outcome: 'treat-as-withdraw', code: 5 },
  },
  { rule: 'no NLRI: attributes are not required', bytes: body([24, 10, 0, 0], [], []), expect: { outcome: 'ok' } },
  {
    rule: '4271 6.3 / 7606 3(g): a repeated attribute: first kept, rest discarded',
    bytes: body([], [...MANDATORY, ...attr(0x40, 1, 2)], NLRI),
    expect: { outcome: 'attribute-discard', code: 1 },
  },
  { rule: '7606 3(g): MP_REACH_NLRI twice', bytes: body([], [...MP_REACH_V6, ...MP_REACH_V6, ...ORIGIN, ...AS_PATH4], []), expect: { error: [3, 1] } },
  { rule: '7606 3(g): MP_UNREACH_NLRI twice', bytes: body([], [...attr(0x80, 15, 0, 2, 1), ...attr(0x80, 15, 0, 2, 1)], []), expect: { error: [3, 1] } },
  {
    rule: '4271 6.3 / 7606 3(c): well-known attribute flagged optional',
    bytes: body([], [...attr(0xc0, 1, 0), ...AS_PATH4, ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 1 },
  },
  {
    rule: '7606 3(c): optional attribute flagged well-known',
    bytes: body([], [...MANDATORY, ...attr(0x40, 4, 0, 0, 0, 1)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 4 },
  },
  { rule: '7606 3(c): Partial bit alone is no conflict', bytes: body([], [...attr(0x60, 1, 0), ...AS_PATH4, ...NEXT_HOP], NLRI), expect: { outcome: 'ok' } },
  {
    rule: '4271 4.3: extended length on a short attribute is accepted',
    bytes: body([], [...attr(0x50, 1, 0), ...AS_PATH4, ...NEXT_HOP], NLRI),
    expect: { outcome: 'ok' },
  },
  {
    rule: '7606 4: attribute length overruns the attribute block',
    bytes: body([], [...MANDATORY, 0xc0, 8, 9, 1, 2, 3, 4], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 8 },
  },
  {
    rule: '7606 4: fewer than 3 bytes left for an attribute header',
    bytes: body([], [...MANDATORY, 0x40, 1], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 1 },
  },
  {
    rule: '7606 4: one byte left for an extended-length header',
    bytes: body([], [...MANDATORY, 0x50, 1, 0], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 1 },
  },
  {
    rule: '7606 4 + 5.2: MP_REACH_NLRI overruns the block (its NLRI cannot be found)',
    bytes: body([], [...ORIGIN, ...AS_PATH4, 0x80, 14, 40, 0, 2, 1], []),
    expect: { error: [3, 9] },
  },
  { rule: 'unknown optional non-transitive attribute is dropped', bytes: body([], [...MANDATORY, ...attr(0x80, 99, 1, 2)], NLRI), expect: { outcome: 'ok' } },
  { rule: 'unknown optional transitive attribute is kept', bytes: body([], [...MANDATORY, ...attr(0xc0, 99, 1, 2)], NLRI), expect: { outcome: 'ok' } },

  // ---- RFC 7606 §7, attribute by attribute
  {
    rule: '7606 7.1: ORIGIN length not 1',
    bytes: body([], [...attr(0x40, 1, 0, 0), ...AS_PATH4, ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 1 },
  },
  {
    rule: '7606 7.1: ORIGIN undefined value',
    bytes: body([], [...attr(0x40, 1, 3), ...AS_PATH4, ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 1 },
  },
  {
    rule: '7606 7.2: AS_PATH segment overruns',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 2, 0, 0, 0, 1), ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 2 },
  },
  {
    rule: '7606 7.2: AS_PATH one byte left after a segment',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 1, 0, 0, 0, 1, 2), ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 2 },
  },
  {
    rule: '7606 7.2: AS_PATH zero-length segment',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 0), ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 2 },
  },
  {
    rule: '7606 7.2: AS_PATH unknown segment type',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 5, 1, 0, 0, 0, 1), ...NEXT_HOP], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 2 },
  },
  {
    rule: '7606 7.2: AS_PATH read with the wrong ASN width',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 1, 0, 0, 0, 1), ...NEXT_HOP], NLRI),
    ctx: LEGACY_CONTEXT,
    expect: { outcome: 'treat-as-withdraw', code: 2 },
  },
  { rule: '7606 7.2: empty AS_PATH is valid (iBGP origination)', bytes: body([], [...ORIGIN, ...attr(0x40, 2), ...NEXT_HOP], NLRI), expect: { outcome: 'ok' } },
  {
    rule: '7606 7.3: NEXT_HOP length not 4',
    bytes: body([], [...ORIGIN, ...AS_PATH4, ...attr(0x40, 3, 1, 2, 3, 4, 5)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 3 },
  },
  {
    rule: '7606 7.4: MULTI_EXIT_DISC length not 4',
    bytes: body([], [...MANDATORY, ...attr(0x80, 4, 0, 0, 1)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 4 },
  },
  {
    rule: '7606 7.5: LOCAL_PREF length not 4 (internal peer)',
    bytes: body([], [...MANDATORY, ...attr(0x40, 5, 0, 100)], NLRI),
    opts: { peer: 'internal' },
    expect: { outcome: 'treat-as-withdraw', code: 5 },
  },
  {
    rule: '7606 7.5: LOCAL_PREF from an external peer is disregarded',
    bytes: body([], [...MANDATORY, ...attr(0x40, 5, 0, 100)], NLRI),
    opts: { peer: 'external' },
    expect: { outcome: 'attribute-discard', code: 5 },
  },
  {
    rule: '7606 7.6: ATOMIC_AGGREGATE length not 0',
    bytes: body([], [...MANDATORY, ...attr(0x40, 6, 1)], NLRI),
    expect: { outcome: 'attribute-discard', code: 6 },
  },
  {
    rule: '7606 7.7: AGGREGATOR length not 8 (4-byte AS)',
    bytes: body([], [...MANDATORY, ...attr(0xc0, 7, 0, 1, 10, 0, 0, 1)], NLRI),
    expect: { outcome: 'attribute-discard', code: 7 },
  },
  {
    rule: '7606 7.7: AGGREGATOR length not 6 (2-byte AS)',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 1, 0xfd, 0xe8), ...NEXT_HOP, ...attr(0xc0, 7, 0, 0, 0, 1, 10, 0, 0, 1)], NLRI),
    ctx: LEGACY_CONTEXT,
    expect: { outcome: 'attribute-discard', code: 7 },
  },
  {
    rule: '7606 7.8: COMMUNITIES length not a multiple of 4',
    bytes: body([], [...MANDATORY, ...attr(0xc0, 8, 0, 1, 0, 2, 9)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 8 },
  },
  { rule: '7606 7.8: COMMUNITIES length zero', bytes: body([], [...MANDATORY, ...attr(0xc0, 8)], NLRI), expect: { outcome: 'treat-as-withdraw', code: 8 } },
  {
    rule: '7606 7.9: ORIGINATOR_ID length not 4',
    bytes: body([], [...MANDATORY, ...attr(0x80, 9, 1, 2, 3)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 9 },
  },
  {
    rule: '7606 7.10: CLUSTER_LIST length not a multiple of 4',
    bytes: body([], [...MANDATORY, ...attr(0x80, 10, 1, 2, 3, 4, 5, 6)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 10 },
  },
  { rule: '7606 7.10: CLUSTER_LIST length zero', bytes: body([], [...MANDATORY, ...attr(0x80, 10)], NLRI), expect: { outcome: 'treat-as-withdraw', code: 10 } },
  { rule: '7606 7.11: MP_REACH_NLRI shorter than AFI/SAFI', bytes: body([], [...attr(0x80, 14, 0, 2), ...ORIGIN, ...AS_PATH4], []), expect: { error: [3, 9] } },
  {
    rule: '7606 7.11: MP_REACH_NLRI unicast shorter than 5 bytes',
    bytes: body([], [...attr(0x80, 14, 0, 2, 1, 0), ...ORIGIN, ...AS_PATH4], []),
    expect: { error: [3, 9] },
  },
  {
    rule: '7606 7.11: MP_REACH_NLRI next hop overruns',
    bytes: body([], [...attr(0x80, 14, 0, 2, 1, 16, 1, 2, 3), ...ORIGIN, ...AS_PATH4], []),
    expect: { error: [3, 9] },
  },
  {
    rule: '7606 7.11: MP_REACH_NLRI next-hop length invalid for IPv6',
    bytes: body([], [...attr(0x80, 14, 0, 2, 1, 4, 1, 2, 3, 4, 0), ...ORIGIN, ...AS_PATH4], []),
    expect: { error: [3, 9] },
  },
  {
    rule: '7606 7.11 / 5.3: MP_REACH_NLRI prefix length above 128',
    bytes: body([], [...attr(0x80, 14, 0, 2, 1, 16, ...new Array(16).fill(0), 0, 129, ...new Array(17).fill(0)), ...ORIGIN, ...AS_PATH4], []),
    expect: { error: [3, 9] },
  },
  {
    rule: '7606 7.11 / 5.3: MP_REACH_NLRI IPv4 prefix length above 32',
    bytes: body([], [...attr(0x80, 14, 0, 1, 1, 4, 10, 0, 0, 1, 0, 33, 1, 2, 3, 4, 5), ...ORIGIN, ...AS_PATH4], []),
    expect: { error: [3, 9] },
  },
  {
    rule: '7606 7.11 / 3(c): MP_REACH_NLRI with conflicting flags',
    bytes: body([], [...attr(0xc0, 14, ...MP_REACH_V6.slice(3)), ...ORIGIN, ...AS_PATH4], []),
    expect: { error: [3, 4] },
  },
  {
    rule: '7606 7.11: MP_REACH_NLRI of another family is kept raw',
    bytes: body([], [...attr(0x80, 14, 0, 25, 70, 1, 2, 3), ...ORIGIN, ...AS_PATH4], []),
    expect: { outcome: 'ok' },
  },
  { rule: '7606 7.12: MP_UNREACH_NLRI shorter than AFI/SAFI', bytes: body([], attr(0x80, 15, 0, 2), []), expect: { error: [3, 9] } },
  { rule: '7606 7.12 / 5.3: MP_UNREACH_NLRI prefix overruns', bytes: body([], attr(0x80, 15, 0, 2, 1, 64, 0x20, 0x01), []), expect: { error: [3, 9] } },
  {
    rule: '7606 7.14: EXTENDED_COMMUNITIES length not a multiple of 8',
    bytes: body([], [...MANDATORY, ...attr(0xc0, 16, 0, 2, 0, 1, 0, 0, 0)], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 16 },
  },
  {
    rule: '8092 / 7606: LARGE_COMMUNITIES length not a multiple of 12',
    bytes: body([], [...MANDATORY, ...attr(0xc0, 32, ...new Array(11).fill(1))], NLRI),
    expect: { outcome: 'treat-as-withdraw', code: 32 },
  },
  // §7.13 (traffic engineering, 22), §7.15 (IPv6 address-specific extended communities, 25) and §7.16 (ATTR_SET, 128) have no decoder here: as unknown optional transitive attributes they pass through untouched.
  {
    rule: '7606 7.13/7.15/7.16: attributes without a decoder pass through as unknown',
    bytes: body([], [...MANDATORY, ...attr(0xc0, 22, 1), ...attr(0xc0, 25, 1, 2, 3), ...attr(0xc0, 128, 0, 0, 0, 1)], NLRI),
    expect: { outcome: 'ok' },
  },
  {
    rule: '6793 6: malformed AS4_PATH is discarded (2-byte session)',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 1, 0x5b, 0xa0), ...NEXT_HOP, ...attr(0xc0, 17, 2, 1, 0, 0)], NLRI),
    ctx: LEGACY_CONTEXT,
    expect: { outcome: 'attribute-discard', code: 17 },
  },
  {
    rule: '6793 6: AS4_PATH with a confederation segment is discarded',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 1, 0x5b, 0xa0), ...NEXT_HOP, ...attr(0xc0, 17, 3, 1, 0, 0, 0, 1)], NLRI),
    ctx: LEGACY_CONTEXT,
    expect: { outcome: 'attribute-discard', code: 17 },
  },
  {
    rule: '6793 6: malformed AS4_AGGREGATOR is discarded',
    bytes: body([], [...ORIGIN, ...attr(0x40, 2, 2, 1, 0x5b, 0xa0), ...NEXT_HOP, ...attr(0xc0, 18, 0, 0, 0, 1, 10, 0, 0)], NLRI),
    ctx: LEGACY_CONTEXT,
    expect: { outcome: 'attribute-discard', code: 18 },
  },
  {
    rule: '6793: AS4_PATH on a 4-byte session is ignored, even malformed',
    bytes: body([], [...MANDATORY, ...attr(0x40, 17, 9)], NLRI),
    expect: { outcome: 'ok' },
  },
];

describe('RFC 4271 §6.3 and RFC 7606 error table', () => {
  it.each(rows.map((r) => [r.rule, r] as const))('%s', (_rule, row) => {
    const ctx = row.ctx ?? DEFAULT_CONTEXT;
    const e = row.expect;
    if ('error' in e) {
      let caught: unknown;
      try {
        decodeUpdate(row.bytes, ctx, row.opts);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(BgpError);
      expect([(caught as BgpError).code, (caught as BgpError).subcode]).toEqual(e.error);
      return;
    }
    const m = decodeUpdate(row.bytes, ctx, row.opts);
    if (e.outcome === 'ok') {
      expect(m.issues).toBeUndefined();
      return;
    }
    expect(m.issues?.map((i) => [i.code, i.action])).toContainEqual([e.code, e.outcome]);
    const withdrawn = m.issues!.some((i) => i.action === 'treat-as-withdraw');
    expect(withdrawn).toBe(e.outcome === 'treat-as-withdraw');
    if (e.outcome === 'treat-as-withdraw') {
      expect(m.nlri).toEqual([]);
      expect(m.attributes).toEqual({});
      expect(m.withdrawn.map(String)).toContain('198.51.100.0/24');
    } else {
      expect(m.nlri.map(String)).toEqual(['198.51.100.0/24']);
      expect(m.attributes.origin).toBe(0);
    }
  });

  it('NOTIFICATION data carries the offending attribute where RFC 4271 asks for it', () => {
    const bad = attr(0x40, 99, 1);
    try {
      decodeUpdate(body([], [...MANDATORY, ...bad], NLRI), DEFAULT_CONTEXT);
      expect.unreachable();
    } catch (err) {
      expect(Array.from((err as BgpError).data)).toEqual(bad);
      expect((err as BgpError).message).toContain('unrecognized well-known attribute 99');
    }
  });

  it('MP_* NOTIFICATIONs carry the whole attribute as data', () => {
    const bad = attr(0x80, 15, 0, 2, 1, 64, 0x20, 0x01);
    try {
      decodeUpdate(body([], bad, []), DEFAULT_CONTEXT);
      expect.unreachable();
    } catch (err) {
      expect((err as BgpError).subcode).toBe(9);
      expect(Array.from((err as BgpError).data)).toEqual(bad);
      expect((err as BgpError).message).toMatch(/MP_UNREACH_NLRI: prefix \/64 needs 8 bytes/);
    }
  });

  it('treat-as-withdraw moves MP_REACH NLRI into MP_UNREACH and classic NLRI into withdrawn', () => {
    const m = decodeUpdate(body([24, 10, 1, 2], [...MP_REACH_V6, ...attr(0x40, 1, 7), ...AS_PATH4, ...NEXT_HOP], NLRI), DEFAULT_CONTEXT);
    expect(m.withdrawn.map(String)).toEqual(['10.1.2.0/24', '198.51.100.0/24']);
    expect(m.nlri).toEqual([]);
    expect(m.attributes.mpReach).toBeUndefined();
    expect(m.attributes.mpUnreach?.afi).toBe(2);
    expect(m.attributes.mpUnreach?.withdrawn.map(String)).toEqual(['2001:db8::/32']);
    expect(m.issues).toEqual([{ code: 1, action: 'treat-as-withdraw', reason: 'malformed ORIGIN: undefined value 7' }]);
  });

  it('treat-as-withdraw keeps ADD-PATH ids with the prefixes they belong to', () => {
    const ctx = { ...DEFAULT_CONTEXT, addPathV4: true };
    const m = decodeUpdate(body([0, 0, 0, 5, 24, 10, 1, 2], [...attr(0x40, 1, 9), ...AS_PATH4, ...NEXT_HOP], [0, 0, 0, 7, ...NLRI]), ctx);
    expect(m.withdrawn.map(String)).toEqual(['10.1.2.0/24', '198.51.100.0/24']);
    expect(m.withdrawnPathIds).toEqual([5, 7]);
    expect(m.nlriPathIds).toEqual([]);
  });

  it('keeps the unknown transitive attribute and passes it on with the Partial bit', () => {
    const m = decodeUpdate(body([], [...MANDATORY, ...attr(0xc0, 99, 1, 2)], NLRI), DEFAULT_CONTEXT);
    expect(m.attributes.unknown).toEqual([{ flags: 0xc0, code: 99, value: Uint8Array.of(1, 2) }]);
    const again: UpdateMessage = decodeUpdate(encodeUpdateBody(m, DEFAULT_CONTEXT), DEFAULT_CONTEXT);
    expect(again.attributes.unknown).toEqual([{ flags: 0xe0, code: 99, value: Uint8Array.of(1, 2) }]);
  });

  it('keeps the first of repeated attributes', () => {
    const m = decodeUpdate(body([], [...MANDATORY, ...attr(0x40, 1, 2)], NLRI), DEFAULT_CONTEXT);
    expect(m.attributes.origin).toBe(0);
  });

  it('keeps a raw MP_REACH_NLRI of another family', () => {
    const m = decodeUpdate(body([], [...attr(0x80, 14, 0, 25, 70, 1, 2, 3), ...ORIGIN, ...AS_PATH4], []), DEFAULT_CONTEXT);
    expect(plainUpdate(m).attributes.mpReach).toEqual({ afi: 25, safi: 70, nextHops: [], nlri: [], raw: Uint8Array.of(1, 2, 3) });
  });
});
