import { describe, expect, it } from 'vitest';
import { Address } from '../../src/net/address.js';
import { intBytes, md5PasswordProblem, md5sigStruct, MD5SIG_SIZE, synTtl, ttlOptions } from '../../src/session/sockopt-struct.js';

const hex = (b: Uint8Array, from: number, to: number) => Buffer.from(b.subarray(from, to)).toString('hex');
const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

describe('struct tcp_md5sig', () => {
  it('IPv4 peer on an IPv4 socket: sockaddr_in, keylen, key', () => {
    const b = md5sigStruct(Address.parse('192.0.2.7'), new TextEncoder().encode('s3cret'), 4, true);
    expect(b.length).toBe(MD5SIG_SIZE);
    expect(hex(b, 0, 8)).toBe('0200' + '0000' + 'c0000207');
    expect(zero(b, 8, 130)).toBe(true); // rest of sockaddr_storage, flags, prefixlen
    expect(hex(b, 130, 136)).toBe('0600' + '00000000'); // keylen 6 LE, ifindex 0
    expect(Buffer.from(b.subarray(136, 142)).toString()).toBe('s3cret');
    expect(zero(b, 142, 216)).toBe(true);
  });

  it('IPv6 peer: sockaddr_in6 with the address at 8..23', () => {
    const b = md5sigStruct(Address.parse('2001:db8::1'), new Uint8Array([1, 2, 3]), 6, true);
    expect(hex(b, 0, 8)).toBe('0a00' + '0000' + '00000000');
    expect(hex(b, 8, 24)).toBe('20010db8000000000000000000000001');
    expect(zero(b, 24, 130)).toBe(true); // scope_id and padding
    expect(hex(b, 130, 132)).toBe('0300');
    expect(hex(b, 136, 140)).toBe('01020300');
  });

  it('IPv4 peer on a dual-stack IPv6 socket: v4-mapped', () => {
    const b = md5sigStruct(Address.parse('198.51.100.9'), new Uint8Array([0x41]), 6, true);
    expect(hex(b, 0, 2)).toBe('0a00');
    expect(hex(b, 8, 24)).toBe('00000000000000000000ffffc6336409');
  });

  it('delete: keylen 0 and no key bytes', () => {
    const b = md5sigStruct(Address.parse('192.0.2.7'), undefined, 6, true);
    expect(hex(b, 0, 2)).toBe('0a00');
    expect(hex(b, 8, 24)).toBe('00000000000000000000ffffc0000207');
    expect(zero(b, 128, 216)).toBe(true);
  });

  it('big-endian hosts get host order for family and keylen', () => {
    const b = md5sigStruct(Address.parse('192.0.2.7'), new Uint8Array(80).fill(0x61), 4, false);
    expect(hex(b, 0, 2)).toBe('0002');
    expect(hex(b, 130, 132)).toBe('0050');
    expect(b[215]).toBe(0x61);
  });

  it('refuses keys the kernel would, and an IPv6 peer on an IPv4 socket', () => {
    expect(() => md5sigStruct(Address.parse('192.0.2.7'), new Uint8Array(81), 4)).toThrow(/1\.\.80 bytes, got 81/);
    expect(() => md5sigStruct(Address.parse('192.0.2.7'), new Uint8Array(0), 4)).toThrow(/got 0/);
    expect(() => md5sigStruct(Address.parse('2001:db8::1'), undefined, 4)).toThrow(/IPv6 peer/);
    expect(md5PasswordProblem('x'.repeat(80))).toBeUndefined();
    expect(md5PasswordProblem('é'.repeat(41))).toMatch(/82 bytes; Linux takes at most 80/);
    expect(md5PasswordProblem('')).toMatch(/empty/);
  });
});

describe('TTL options', () => {
  it('GTSM: TTL 255 out, minimum 256 - hops in, per family', () => {
    expect(ttlOptions(4, { ttlSecurity: 1 }).map((o) => [o.level, o.name, o.value])).toEqual([
      [0, 2, 255],
      [0, 21, 255],
    ]);
    expect(ttlOptions(4, { ttlSecurity: 2 }).map((o) => [o.label, o.value])).toEqual([
      ['IP_TTL', 255],
      ['IP_MINTTL', 254],
    ]);
    expect(ttlOptions(6, { ttlSecurity: 3 }).map((o) => [o.level, o.name, o.value])).toEqual([
      [41, 16, 255],
      [41, 73, 253],
    ]);
    expect(ttlOptions(4, { ttlSecurity: 0, multihopTtl: 5 }).map((o) => [o.label, o.value])).toEqual([['IP_TTL', 5]]);
    expect(ttlOptions(6, {})).toEqual([]);
    expect(() => ttlOptions(4, { ttlSecurity: 256 })).toThrow(/1\.\.255/);
  });

  it('ints in host order', () => {
    expect(hex(intBytes(254, true), 0, 4)).toBe('fe000000');
    expect(hex(intBytes(254, false), 0, 4)).toBe('000000fe');
  });
});

describe('saved SYN headers', () => {
  it('reads the TTL of an IPv4 header and the hop limit of an IPv6 one', () => {
    const v4 = new Uint8Array(20 + 40);
    v4[0] = 0x45;
    v4[8] = 254;
    expect(synTtl(v4)).toBe(254);
    const v6 = new Uint8Array(40 + 40);
    v6[0] = 0x60;
    v6[7] = 253;
    expect(synTtl(v6)).toBe(253);
    expect(synTtl(new Uint8Array(10).fill(0x45))).toBeUndefined();
    expect(synTtl(new Uint8Array(0))).toBeUndefined();
  });
});
