/**
 * The routes each daemon announces to tsbgp, defined once and rendered into
 * each daemon's own configuration language, so a test knows exactly what
 * tsbgp should receive. Four attribute sets, cycled over the prefixes.
 */
import { expandRange, type PrefixRange } from './speaker-protocol.js';

export interface AttrSet {
  readonly origin: 'igp' | 'egp' | 'incomplete';
  readonly med?: number;
  readonly communities: readonly string[];
  readonly largeCommunities: readonly string[];
  /** ASNs after the sender's own (a path learned from elsewhere); none by default. */
  readonly asPath?: readonly number[];
}

export const ATTR_SETS: readonly AttrSet[] = [
  { origin: 'igp', communities: [], largeCommunities: [] },
  { origin: 'igp', med: 10, communities: ['65010:1'], largeCommunities: [] },
  { origin: 'egp', med: 20, communities: ['65010:2', '65010:3'], largeCommunities: ['4200000002:1:2'] },
  { origin: 'incomplete', med: 30, communities: [], largeCommunities: ['4200000002:3:4'] },
];

/** 2048 IPv4 /30s and 1024 IPv6 /64s. Outside the scale range 198.18.0.0 + 100,000 /32s. */
export const DAEMON_V4: PrefixRange = { start: '198.19.192.0', length: 30, count: 2048 };
export const DAEMON_V6: PrefixRange = { start: '2001:db8:2000::', length: 64, count: 1024 };
export const daemonRange = (family: 'ipv4' | 'ipv6'): PrefixRange => (family === 'ipv4' ? DAEMON_V4 : DAEMON_V6);

export interface DaemonRoute {
  readonly prefix: string;
  readonly set: number;
}

export function daemonRoutes(range: PrefixRange): DaemonRoute[] {
  return expandRange(range).map((prefix, i) => ({ prefix, set: i % ATTR_SETS.length }));
}

const ORIGIN_BIRD = { igp: 'ORIGIN_IGP', egp: 'ORIGIN_EGP', incomplete: 'ORIGIN_INCOMPLETE' } as const;
const birdPair = (c: string): string => `(${c.split(':').join(',')})`;

/** BIRD filter statements giving a route these attributes (in a static route block or an import filter). */
export function birdAttrs(a: AttrSet): string {
  const parts = [`bgp_origin = ${ORIGIN_BIRD[a.origin]};`];
  // prepend puts an ASN in front: last one first, so the path reads in order
  if (a.asPath?.length) parts.push('bgp_path = +empty+;', ...[...a.asPath].reverse().map((asn) => `bgp_path.prepend(${asn});`));
  if (a.med !== undefined) parts.push(`bgp_med = ${a.med};`);
  for (const c of a.communities) parts.push(`bgp_community.add(${birdPair(c)});`);
  for (const c of a.largeCommunities) parts.push(`bgp_large_community.add(${birdPair(c)});`);
  return parts.join(' ');
}

/** BIRD: static protocols gen4/gen6, one blackhole route each with its attributes in a per-route block. */
export function birdStatic(): string {
  const proto = (name: string, ch: string, range: PrefixRange): string =>
    [`protocol static ${name} {`, `  ${ch};`, ...daemonRoutes(range).map((r) => `  route ${r.prefix} blackhole { ${birdAttrs(ATTR_SETS[r.set])} };`), '}'].join(
      '\n',
    );
  return `${proto('gen4', 'ipv4', DAEMON_V4)}\n${proto('gen6', 'ipv6', DAEMON_V6)}\n`;
}

/** FRR: a route map setting these attributes, for `network X route-map NAME`. */
export function frrRouteMap(name: string, a: AttrSet): string {
  return [
    `route-map ${name} permit 10`,
    ` set origin ${a.origin}`,
    ...(a.asPath?.length ? [` set as-path prepend ${a.asPath.join(' ')}`] : []),
    ...(a.med !== undefined ? [` set metric ${a.med}`] : []),
    ...(a.communities.length ? [` set community ${a.communities.join(' ')}`] : []),
    ...(a.largeCommunities.length ? [` set large-community ${a.largeCommunities.join(' ')}`] : []),
    'exit',
  ].join('\n');
}

/** FRR: `network X route-map gen-N` under router bgp (with `no bgp network import-check`). */
export function frrNetworks(asn: number): string {
  const maps = ATTR_SETS.map((a, i) => frrRouteMap(`gen-${i}`, a));
  const af = (family: 'ipv4' | 'ipv6', range: PrefixRange): string =>
    [` address-family ${family} unicast`, ...daemonRoutes(range).map((r) => `  network ${r.prefix} route-map gen-${r.set}`), ' exit-address-family'].join('\n');
  return [...maps, `router bgp ${asn}`, af('ipv4', DAEMON_V4), af('ipv6', DAEMON_V6), 'exit', ''].join('\n');
}

/** ExaBGP: `route … ;` lines for a neighbor's static block (next-hop self is the session's local address). */
export function exabgpRoutes(family: 'ipv4' | 'ipv6'): string {
  return daemonRoutes(daemonRange(family))
    .map((r) => {
      const a = ATTR_SETS[r.set];
      const parts = [`route ${r.prefix} next-hop self origin ${a.origin}`];
      if (a.med !== undefined) parts.push(`med ${a.med}`);
      if (a.communities.length) parts.push(`community [ ${a.communities.join(' ')} ]`);
      if (a.largeCommunities.length) parts.push(`large-community [ ${a.largeCommunities.join(' ')} ]`);
      return `    ${parts.join(' ')};`;
    })
    .join('\n');
}

/** GoBGP: arguments of `gobgp global rib add` for each route. */
export function gobgpAddArgs(family: 'ipv4' | 'ipv6', nextHop: string): string[][] {
  return daemonRoutes(daemonRange(family)).map((r) => {
    const a = ATTR_SETS[r.set];
    const args = ['global', 'rib', 'add', '-a', family, r.prefix, 'origin', a.origin, 'nexthop', nextHop];
    if (a.med !== undefined) args.push('med', String(a.med));
    if (a.communities.length) args.push('community', a.communities.join(','));
    if (a.largeCommunities.length) args.push('large-community', a.largeCommunities.join(','));
    return args;
  });
}
