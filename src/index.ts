/**
 * tsbgp — a BGP-4 speaker in TypeScript.
 *
 * Public API only; everything else is internal.
 */
export { Address, Prefix, ParseError, type Family } from './net/index.js';
export type * from './wire/types.js';
export { BgpError } from './wire/errors.js';
