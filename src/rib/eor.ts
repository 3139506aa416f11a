/**
 * End-of-RIB markers (RFC 4724 §2): an empty UPDATE for IPv4 unicast, an
 * UPDATE holding only an empty MP_UNREACH_NLRI for other families. Fixed
 * bytes, so they are built here rather than through the packer.
 */
const MARKER = new Array<number>(16).fill(0xff);

export function endOfRib(family: 4 | 6): Uint8Array {
  if (family === 4) return Uint8Array.from([...MARKER, 0, 23, 2, 0, 0, 0, 0]);
  // withdrawn len 0, attrs len 6: flags 0x80 (optional), type 15, len 3, AFI 2, SAFI 1.
  return Uint8Array.from([...MARKER, 0, 29, 2, 0, 0, 0, 6, 0x80, 15, 3, 0, 2, 1]);
}
