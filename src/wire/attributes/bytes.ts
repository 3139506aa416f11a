/**
 * A plain Uint8Array copy of b[start, end). Decoded values must not alias
 * the receive buffer (a socket's pooled Buffer would be kept alive and
 * overwritten), and Buffer#slice would alias rather than copy.
 */
export function copyBytes(b: Uint8Array, start: number, end: number): Uint8Array {
  const out = new Uint8Array(end - start);
  out.set(b.subarray(start, end));
  return out;
}
