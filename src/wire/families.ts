/**
 * The one place AFI/SAFI numbers meet the families the other layers speak
 * of (`Family`, 4 | 6, and `FamilyName`, 'ipv4' | 'ipv6', in src/net). Only
 * unicast is carried; anything else maps to undefined.
 */
import type { Family, FamilyName } from '../net/index.js';
import { Afi, Safi } from './constants.js';
import type { AfiSafi } from './types.js';

export const UNICAST: Readonly<Record<Family, AfiSafi>> = {
  4: { afi: Afi.IPV4, safi: Safi.UNICAST },
  6: { afi: Afi.IPV6, safi: Safi.UNICAST },
};

/** 4 or 6 for AFI 1 or 2, whatever the SAFI; else undefined. */
export function familyOfAfi(afi: number): Family | undefined {
  return afi === Afi.IPV4 ? 4 : afi === Afi.IPV6 ? 6 : undefined;
}

/** 4 or 6 for IPv4 / IPv6 unicast; else undefined. */
export function unicastFamily(f: { readonly afi: number; readonly safi: number }): Family | undefined {
  return f.safi === Safi.UNICAST ? familyOfAfi(f.afi) : undefined;
}

export const familyName = (f: Family): FamilyName => (f === 4 ? 'ipv4' : 'ipv6');
