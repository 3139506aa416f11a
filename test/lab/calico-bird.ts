/**
 * BIRD 2 configured as confd configures Calico's BIRD on a node, for the
 * migration lab (migration.test.ts). Calico ships a BIRD 1.6 fork; this is
 * the BIRD 2 equivalent of what confd renders today from
 * confd/etc/calico/confd/templates/bird.cfg.template, bird_aggr.cfg.template,
 * bird_ipam.cfg.template and confd/pkg/backends/calico/bgp_processor.go, for
 * a node in a node-to-node mesh with no-encapsulation IP pools:
 *
 * - `protocol kernel`: learn, persist, scan time 2, graceful restart, merge
 *   paths, export through `calico_kernel_programming` (Calico v3.32's metric:
 *   2147483647 − LOCAL_PREF for BGP routes, preference 200 below the normal
 *   priority; pools accepted). BIRD 1.6 writes no metric unless krt_metric
 *   says, BIRD 2 writes its `metric` option (32 by default): `metric 0` here,
 *   so the blackholes land in the kernel as Calico's BIRD puts them there.
 * - `protocol device`, `protocol direct` (all interfaces but cali* and
 *   kube-ipvs*: connected networks for `gateway recursive`).
 * - `protocol static`: a blackhole per affine block that is not a /32.
 * - the BGP template (`gateway recursive`, `add paths on`, `graceful
 *   restart`, connect delay 2, connect retry 5, error wait 5,30) and one
 *   `Mesh_<ip>` per other node: multihop, source address, ttl security off,
 *   `passive on` when the peer's address is greater as a string (the lower
 *   address waits), the import filter (preference 200 above the normal
 *   priority) and the export filter (LOCAL_PREF from the metric,
 *   `calico_export_to_bgp_peers(true)`).
 *
 * BIRD 1.6 options that became channel options in BIRD 2 (`gateway`, `add
 * paths`, import/export) sit in the `ipv4 {}` channel.
 */

/** BIRD's largest integer; Calico's metric is this minus LOCAL_PREF. */
const BIRD_INT_MAX = 2147483647;

export interface CalicoBirdNode {
  /** The node's IPv4 address (router ID, source address). */
  readonly address: string;
  readonly asn: number;
  /** The other nodes of the mesh (their IPv4 addresses). */
  readonly peers: readonly string[];
  /** Blocks affine to this node (confirmed). */
  readonly blocks: readonly string[];
  /** Enabled no-encapsulation IP pools. */
  readonly pools: readonly string[];
  /** BGPConfiguration ipv4NormalRoutePriority (Felix's metric for workload routes), default 1024. */
  readonly normalRoutePriority?: number;
  /** Global BGPPeers (`Global_<ip>`): a router outside the mesh, e.g. a ToR. */
  readonly globalPeers?: readonly { readonly address: string; readonly asn: number }[];
  /**
   * Static routes confd renders from the BGPConfiguration's service ranges
   * (serviceLoadBalancerIPs, serviceExternalIPs, serviceClusterIPs): a
   * blackhole each in `protocol static`, exported to every peer, never
   * programmed into the kernel.
   */
  readonly staticRoutes?: readonly string[];
}

/** The mesh peer's protocol name, as confd names it. */
export const meshName = (ip: string): string => `Mesh_${ip.replaceAll('.', '_')}`;
/** A global BGPPeer's protocol name, as confd names it. */
export const globalName = (ip: string): string => `Global_${ip.replaceAll('.', '_')}`;

export function calicoBirdConfig(n: CalicoBirdNode): string {
  const prio = n.normalRoutePriority ?? 1024;
  const aggr = n.blocks.flatMap((b) => [
    `  if ( net = ${b} ) then { accept; }`,
    `  if ( net ~ ${b} && krt_metric < ${prio} ) then { accept; }`,
    `  if ( net ~ ${b} ) then { reject; }`,
  ]);
  const statics = n.staticRoutes ?? [];
  const blackholes = [...n.blocks.filter((b) => !b.endsWith('/32')), ...statics].map((b) => `  route ${b} blackhole;`);
  const sessions = [
    ...n.peers.map((ip) => ({ name: meshName(ip), address: ip, asn: n.asn, mesh: true })),
    ...(n.globalPeers ?? []).map((p) => ({ name: globalName(p.address), ...p, mesh: false })),
  ];
  const peers = sessions.map(({ name, address: ip, asn, mesh }) => {
    const lines = [
      `protocol bgp ${name} from bgp_template {`,
      `  neighbor ${ip} as ${asn};`,
      `  source address ${n.address};`,
      '  ttl security off;',
      '  multihop;',
      '  ipv4 {',
      '    import filter {',
      `      if (defined(bgp_local_pref) && (bgp_local_pref > ${BIRD_INT_MAX - prio})) then preference = 200;`,
      '      accept;',
      '    };',
      '    export filter {',
      '      if (defined(source) && source = RTS_BGP && defined(bgp_local_pref)) then {',
      `        krt_metric = ${BIRD_INT_MAX} - bgp_local_pref;`,
      '      } else {',
      `        if (!defined(krt_metric)) then { krt_metric = ${prio}; }`,
      `        bgp_local_pref = ${BIRD_INT_MAX} - krt_metric;`,
      '      }',
      `      calico_export_to_bgp_peers(${asn === n.asn});`,
      '      reject;',
      '    };',
      '  };',
    ];
    // confd: the node is passive toward a mesh peer whose address is greater as a string.
    if (mesh && ip > n.address) lines.push('  passive on;');
    lines.push('}');
    return lines.join('\n');
  });
  return `# BIRD 2 as confd renders a Calico node (test/lab/calico-bird.ts)
router id ${n.address};

function calico_aggr () {
${aggr.join('\n')}
}

function calico_export_to_bgp_peers (bool internal_peer) {
  if (internal_peer) then {
    if (defined(ifname)) then {
      if ((ifname ~ "*.cali") || (ifname ~ "*.calico") || (ifname ~ "tunl0")) then { reject; }
    }
  }
  calico_aggr();
${[...statics, ...n.pools].map((p) => `  if (net ~ ${p}) then { accept; }`).join('\n')}
}

filter calico_kernel_programming {
${statics.map((r) => `  if (net ~ ${r}) then { reject; }`).join('\n')}
  if (defined(source) && (source = RTS_BGP) && !defined(krt_metric)) then {
    krt_metric = ${prio};
    if (defined(bgp_local_pref)) then { krt_metric = ${BIRD_INT_MAX} - bgp_local_pref; }
    if (krt_metric < ${prio}) then { preference = 200; }
  }
${n.pools.map((p) => `  if (net ~ ${p}) then { accept; }`).join('\n')}
  accept;
}

protocol kernel {
  learn;
  persist;
  scan time 2;
  graceful restart;
  merge paths on;
  metric 0;
  ipv4 { import all; export filter calico_kernel_programming; };
}

protocol device { scan time 2; }

protocol direct {
  ipv4;
  interface -"cali*", -"kube-ipvs*", "*";
}

protocol static {
  ipv4;
${blackholes.join('\n')}
}

template bgp bgp_template {
  description "Connection to BGP peer";
  local as ${n.asn};
  ipv4 { gateway recursive; add paths on; };
  graceful restart;
  connect delay time 2;
  connect retry time 5;
  error wait time 5,30;
}

${peers.join('\n\n')}
`;
}
