import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';
import { AttrStore } from '../../src/rib/attr-store.js';
import { DEFAULT_CONTEXT, LEGACY_CONTEXT } from '../../src/wire/context.js';
import { clearAttributeBlockCache, decodeUpdate, encodeUpdateBody } from '../../src/wire/update.js';
import type { PathAttributes, UpdateMessage } from '../../src/wire/types.js';

const attrs: PathAttributes = { origin: 0, asPath: [{ type: 2, asns: [64500, 64501] }], nextHop: Address.parse('192.0.2.1'), communities: [0xfde80001] };
const update = (prefixes: string[], a: PathAttributes = attrs): Uint8Array =>
  encodeUpdateBody({ type: 'update', withdrawn: [], attributes: a, nlri: prefixes.map((p) => Prefix.parse(p)) } as UpdateMessage, DEFAULT_CONTEXT);

describe('wire/update: attribute blocks cached by their raw bytes', () => {
  it('a repeated block decodes to the same frozen attributes, each UPDATE its own NLRI', () => {
    clearAttributeBlockCache();
    const a = decodeUpdate(update(['198.51.100.0/24']), DEFAULT_CONTEXT);
    const b = decodeUpdate(update(['203.0.113.0/24', '192.0.2.0/24']), DEFAULT_CONTEXT);
    expect(b.attributes).toBe(a.attributes);
    expect(Object.isFrozen(a.attributes)).toBe(true);
    expect(Object.isFrozen(a.attributes.asPath![0].asns)).toBe(true);
    expect(a.nlri.map(String)).toEqual(['198.51.100.0/24']);
    expect(b.nlri.map(String)).toEqual(['203.0.113.0/24', '192.0.2.0/24']);
    expect(b.attributes).toEqual(decodeUpdate(update(['198.51.100.0/24'], { ...attrs }), DEFAULT_CONTEXT).attributes);
  });

  it('the key includes what changes how the bytes read: 2-octet ASNs decode apart', () => {
    clearAttributeBlockCache();
    const body = update(['198.51.100.0/24']);
    const four = decodeUpdate(body, DEFAULT_CONTEXT).attributes;
    // the same bytes read with 2-octet ASNs: a different AS_PATH, not the cached one
    const two = decodeUpdate(body, LEGACY_CONTEXT).attributes;
    expect(two).not.toBe(four);
    expect(two.asPath).not.toEqual(four.asPath);
  });

  it('a block with a problem is decoded every time, its issues reported every time', () => {
    clearAttributeBlockCache();
    // ORIGIN with a bad value: treat-as-withdraw
    const bad = update(['198.51.100.0/24'], { ...attrs, origin: 0 });
    const at = bad.indexOf(0x40, 4); // ORIGIN's flags
    expect(bad[at + 1]).toBe(1);
    bad[at + 3] = 7;
    const first = decodeUpdate(bad, DEFAULT_CONTEXT);
    const second = decodeUpdate(bad, DEFAULT_CONTEXT);
    expect(first.issues?.length).toBeGreaterThan(0);
    expect(second.issues).toEqual(first.issues);
    expect(second.issues).not.toBe(first.issues);
    expect(second.withdrawn.map(String)).toEqual(['198.51.100.0/24']);
  });

  it('AttrStore remembers a frozen input: the same set, and a dead set is not handed out again', () => {
    clearAttributeBlockCache();
    const store = new AttrStore();
    const decoded = decodeUpdate(update(['198.51.100.0/24']), DEFAULT_CONTEXT).attributes;
    const s1 = store.acquire(decoded);
    expect(store.acquire(decodeUpdate(update(['192.0.2.0/24']), DEFAULT_CONTEXT).attributes)).toBe(s1);
    expect(store.acquire({ ...attrs })).toBe(s1);
    store.release(s1);
    store.release(s1);
    store.release(s1);
    expect(s1.live).toBe(false);
    const s2 = store.acquire(decoded);
    expect(s2).not.toBe(s1);
    expect(s2.live).toBe(true);
    expect(s2.attrs).toEqual(s1.attrs);
  });
});
