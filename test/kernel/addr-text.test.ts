import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalV6Prefix } from '../../src/kernel/addr-text.js';
import { Prefix } from '../../src/net/prefix.js';

const full = (text: string): string | undefined => {
  try {
    return Prefix.parse(text, { allowBareAddress: true }).toString();
  } catch {
    return undefined;
  }
};

describe("canonicalV6Prefix (the monitor's fast path)", () => {
  it('gives what the full parser gives, or leaves the text to it', () => {
    for (const t of [
      '2001:db8::/32',
      '2001:DB8:0:0:1::/80',
      '2001:db8:0:1::/64',
      '::/0',
      '::1',
      'fe80::1/128',
      '2001:db8:1:2:3:4:5:6/128',
      '2001:db8:0:0:0:0:0:1/128',
    ])
      expect(canonicalV6Prefix(t), t).toBe(full(t));
    // host bits set, bad lengths, junk: not taken here (the full parser says what is wrong)
    for (const t of ['2001:db8::1/64', '2001:db8::/129', '2001:db8::/032', '2001:db8::/', '2001:db8:::/48', '::ffff:192.0.2.1/128', 'fe80::1%v0/128', 'x::/0'])
      expect(canonicalV6Prefix(t), t).toBeUndefined();
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 0, max: 128 }), (a, len) => {
        const text = `${a}/${len}`;
        const fast = canonicalV6Prefix(text);
        // taken: the same text as the full parser; not taken: embedded IPv4 or host bits set
        if (fast !== undefined) expect(fast).toBe(full(text));
        else expect(a.includes('.') || full(text) === undefined).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
