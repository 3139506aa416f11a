export { Address, type Family } from './address.js';
export { Prefix, wordMask } from './prefix.js';
export { ParseError } from './errors.js';
