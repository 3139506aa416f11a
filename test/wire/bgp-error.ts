/** What the codec throws, caught for a test: the wire tests share these. */
import { expect } from 'vitest';
import { BgpError } from '../../src/wire/errors.js';

/** The BgpError `fn` throws; the test fails when it throws nothing or something else. */
export function bgpError(fn: () => unknown): BgpError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BgpError);
    return err as BgpError;
  }
  throw new Error('expected a BgpError');
}

/** The BgpError `fn` throws, checked to carry NOTIFICATION `code`/`subcode` (and `data`, when given). */
export function expectBgpError(fn: () => unknown, code: number, subcode: number, data?: Uint8Array): BgpError {
  const e = bgpError(fn);
  expect([e.code, e.subcode]).toEqual([code, subcode]);
  if (data) expect(e.data).toEqual(data);
  return e;
}
