import { Address6 } from 'ip-address';
import { ParseError } from './errors.js';

/**
 * An address family, as every layer above the codec speaks of it: 4 or 6
 * in code, 'ipv4' / 'ipv6' where users read and write it (options, status).
 * AFI numbers exist only in src/wire; src/wire/families.ts converts.
 */
export type Family = 4 | 6;
export type FamilyName = 'ipv4' | 'ipv6';

/**
 * An IPv4 or IPv6 address as up to four unsigned 32-bit words (IPv4 uses w0
 * only). One hidden class for both families keeps hot paths monomorphic.
 */
export class Address {
  private constructor(
    readonly family: Family,
    readonly w0: number,
    readonly w1: number,
    readonly w2: number,
    readonly w3: number,
  ) {}

  static v4(value: number): Address {
    return new Address(4, value >>> 0, 0, 0, 0);
  }

  static v6(w0: number, w1: number, w2: number, w3: number): Address {
    return new Address(6, w0 >>> 0, w1 >>> 0, w2 >>> 0, w3 >>> 0);
  }

  /** Parses dotted-quad IPv4 or RFC 4291 IPv6 text; throws ParseError saying what is wrong. */
  static parse(text: string): Address {
    if (typeof text !== 'string' || text.length === 0) throw new ParseError(String(text), 'address (empty)');
    if (text.includes(':')) return parseV6(text);
    return Address.v4(parseV4(text, 'IPv4 address'));
  }

  /** Reads `family`'s full width from bytes (4 or 16 bytes). */
  static fromBytes(family: Family, bytes: Uint8Array, offset = 0): Address {
    if (family === 4) return Address.v4(readWord(bytes, offset));
    return Address.v6(readWord(bytes, offset), readWord(bytes, offset + 4), readWord(bytes, offset + 8), readWord(bytes, offset + 12));
  }

  get byteLength(): 4 | 16 {
    return this.family === 4 ? 4 : 16;
  }

  toBytes(): Uint8Array {
    const out = new Uint8Array(this.byteLength);
    this.writeTo(out, 0);
    return out;
  }

  writeTo(buf: Uint8Array, offset: number): number {
    writeWord(buf, offset, this.w0);
    if (this.family === 4) return offset + 4;
    writeWord(buf, offset + 4, this.w1);
    writeWord(buf, offset + 8, this.w2);
    writeWord(buf, offset + 12, this.w3);
    return offset + 16;
  }

  /** True for IPv6 link-local unicast (fe80::/10). */
  get isLinkLocal(): boolean {
    return this.family === 6 && this.w0 >>> 22 === 0x3fa;
  }

  equals(other: Address): boolean {
    return this.family === other.family && this.w0 === other.w0 && this.w1 === other.w1 && this.w2 === other.w2 && this.w3 === other.w3;
  }

  /** Numeric order; IPv4 sorts before IPv6. */
  compare(other: Address): number {
    return this.family - other.family || this.w0 - other.w0 || this.w1 - other.w1 || this.w2 - other.w2 || this.w3 - other.w3;
  }

  toString(): string {
    if (this.family === 4) return formatV4(this.w0);
    return formatV6([this.w0, this.w1, this.w2, this.w3]);
  }

  toJSON(): string {
    return this.toString();
  }

  /** `console.log` / `util.inspect` show `192.0.2.1`, not the address words. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

function readWord(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}

function writeWord(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
}

export function parseV4(text: string, what: string): number {
  const parts = text.split('.');
  if (parts.length !== 4) throw new ParseError(text, `${what} (expected four dotted decimal octets)`);
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) throw new ParseError(text, `${what} (octet ${JSON.stringify(part)} is not a decimal number)`);
    const n = Number(part);
    if (n > 255) throw new ParseError(text, `${what} (octet ${n} is above 255)`);
    value = value * 256 + n;
  }
  return value;
}

export function formatV4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

function parseV6(text: string): Address {
  if (text.includes('%')) throw new ParseError(text, 'IPv6 address (zone identifiers are not accepted)');
  if (text.includes('/')) throw new ParseError(text, 'IPv6 address (a prefix length is not allowed here)');
  let parsed: Address6;
  try {
    parsed = new Address6(text);
  } catch (err) {
    throw new ParseError(text, `IPv6 address (${(err as Error).message})`);
  }
  const bytes = parsed.toUnsignedByteArray();
  const full = new Uint8Array(16);
  full.set(bytes, 16 - bytes.length);
  return Address.fromBytes(6, full);
}

/** RFC 5952 text: lowercase, leading zeros dropped, the longest run (≥ 2) of zero groups as `::`. */
function formatV6(words: number[]): string {
  const groups: number[] = [];
  for (const w of words) groups.push(w >>> 16, w & 0xffff);
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}
