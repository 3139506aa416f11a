/**
 * RouteAttributes (user terms) ↔ PathAttributes (wire terms). Pure.
 * Conversions are memoised per distinct attribute text so a burst of
 * originations sharing attributes builds one PathAttributes object per family.
 */
import { Address, type Prefix } from '../net/index.js';
import {
  formatCommunity,
  formatExtendedCommunity,
  formatLargeCommunity,
  parseCommunity,
  parseExtendedCommunity,
  parseLargeCommunity,
  UNICAST,
  type PathAttributes,
} from '../wire/index.js';
import type { AdvertisedRoute, RouteAttributes } from './types.js';

const ORIGIN = { igp: 0, egp: 1, incomplete: 2 } as const;

export class RouteAttributeError extends Error {
  override readonly name = 'RouteAttributeError';
}

function u32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RouteAttributeError(`${what} must be an integer 0..4294967295, got ${v}`);
  return v;
}

/** The PathAttributes to originate `attrs` with for one family (throws RouteAttributeError naming the bad field). */
export function toPathAttributes(attrs: RouteAttributes, family: 4 | 6): PathAttributes {
  const origin = attrs.origin ?? 'igp';
  if (!(origin in ORIGIN)) throw new RouteAttributeError(`origin must be "igp", "egp" or "incomplete", got ${JSON.stringify(origin)}`);
  const out: { -readonly [K in keyof PathAttributes]: PathAttributes[K] } = { origin: ORIGIN[origin], asPath: [] };
  if (attrs.asPath !== undefined && attrs.asPath.length > 0) {
    out.asPath = [{ type: 2, asns: attrs.asPath.map((a, i) => u32(a, `asPath[${i}]`)) }];
  }
  if (attrs.med !== undefined) out.med = u32(attrs.med, 'med');
  if (attrs.localPref !== undefined) out.localPref = u32(attrs.localPref, 'localPref');
  if (attrs.communities !== undefined && attrs.communities.length > 0) {
    const list = attrs.communities.map((c, i) => {
      if (typeof c === 'number') return u32(c, `communities[${i}]`);
      try {
        return parseCommunity(c);
      } catch (e) {
        throw new RouteAttributeError(`communities[${i}]: ${(e as Error).message}`);
      }
    });
    out.communities = [...new Set(list)];
  }
  if (attrs.largeCommunities !== undefined && attrs.largeCommunities.length > 0) {
    out.largeCommunities = attrs.largeCommunities.map((c, i) => {
      try {
        return parseLargeCommunity(c);
      } catch (e) {
        throw new RouteAttributeError(`largeCommunities[${i}]: ${(e as Error).message}`);
      }
    });
  }
  if (attrs.extendedCommunities !== undefined && attrs.extendedCommunities.length > 0) {
    const list = attrs.extendedCommunities.map((c, i) => {
      if (typeof c === 'bigint') {
        if (c < 0n || c > 0xffffffffffffffffn) throw new RouteAttributeError(`extendedCommunities[${i}] must be a 64-bit unsigned value, got ${c}`);
        return c;
      }
      try {
        return parseExtendedCommunity(c);
      } catch (e) {
        throw new RouteAttributeError(`extendedCommunities[${i}]: ${(e as Error).message}`);
      }
    });
    out.extendedCommunities = [...new Set(list)];
  }
  if (attrs.nextHop !== undefined) {
    let nh: Address;
    try {
      nh = Address.parse(attrs.nextHop);
    } catch (e) {
      throw new RouteAttributeError(`nextHop: ${(e as Error).message}`);
    }
    if (nh.family !== family) throw new RouteAttributeError(`nextHop ${attrs.nextHop} is IPv${nh.family} but the prefix is IPv${family}`);
    if (family === 4) out.nextHop = nh;
    else out.mpReach = { ...UNICAST[6], nextHops: [nh], nlri: [] };
  }
  return out;
}

/**
 * `attrs` split at the export policy: what the policy sees (`policy`, without
 * exportCommunities / exportLargeCommunities) and, when there are late ones,
 * what is sent (`sent`, those joined to communities / largeCommunities).
 */
export function splitLate(attrs: RouteAttributes | undefined): { policy: RouteAttributes | undefined; sent?: RouteAttributes } {
  if (attrs === undefined || (attrs.exportCommunities === undefined && attrs.exportLargeCommunities === undefined)) return { policy: attrs };
  const { exportCommunities = [], exportLargeCommunities = [], ...policy } = attrs;
  if (exportCommunities.length === 0 && exportLargeCommunities.length === 0) return { policy };
  const sent: RouteAttributes = {
    ...policy,
    communities: [...(policy.communities ?? []), ...exportCommunities.filter((c) => !(policy.communities ?? []).includes(c))],
    largeCommunities: [...(policy.largeCommunities ?? []), ...exportLargeCommunities.filter((c) => !(policy.largeCommunities ?? []).includes(c))],
  };
  return { policy, sent };
}

const bigintText = (_k: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

/** Memoises toPathAttributes by the attributes' text; bounded so a long-running speaker does not grow it forever. */
export class AttributeCache {
  private readonly map = new Map<string, PathAttributes>();
  constructor(private readonly limit = 4096) {}

  get(attrs: RouteAttributes | undefined, family: 4 | 6): PathAttributes {
    const key = `${family}${JSON.stringify(attrs ?? {}, bigintText)}`;
    let pa = this.map.get(key);
    if (pa === undefined) {
      pa = toPathAttributes(attrs ?? {}, family);
      if (this.map.size >= this.limit) this.map.clear();
      this.map.set(key, pa);
    }
    return pa;
  }
}

/** A route for status output: communities as text, AS path flattened (sets in order). */
export function describeRoute(prefix: Prefix, a: PathAttributes): AdvertisedRoute {
  const nh = prefix.family === 4 ? a.nextHop : a.mpReach?.nextHops[0];
  const route: { -readonly [K in keyof AdvertisedRoute]: AdvertisedRoute[K] } = {
    prefix,
    asPath: (a.asPath ?? []).filter((s) => s.type === 1 || s.type === 2).flatMap((s) => s.asns),
    communities: (a.communities ?? []).map(formatCommunity),
    largeCommunities: (a.largeCommunities ?? []).map(formatLargeCommunity),
  };
  if (a.extendedCommunities !== undefined && a.extendedCommunities.length > 0) route.extendedCommunities = a.extendedCommunities.map(formatExtendedCommunity);
  if (nh !== undefined) route.nextHop = nh.toString();
  if (a.med !== undefined) route.med = a.med;
  if (a.localPref !== undefined) route.localPref = a.localPref;
  if (a.originatorId !== undefined) route.originatorId = a.originatorId.toString();
  if (a.clusterList !== undefined) route.clusterList = a.clusterList.map((c) => c.toString());
  if (a.origin !== undefined) route.origin = (['igp', 'egp', 'incomplete'] as const)[a.origin];
  return route;
}
