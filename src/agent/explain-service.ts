/**
 * `tsbgp explain NAMESPACE/SERVICE` when the Service has no route of its own
 * and nothing refused: each of its IPs, exactly why — covered by which
 * advertised range, or inside no allow-list at all.
 */
import { Prefix } from '../net/index.js';
import type { Plan, Service } from '../kubernetes/index.js';

const SOURCES = [
  ['cluster IP', 'clusterIPs', 'serviceClusterIPs'],
  ['external IP', 'externalIPs', 'serviceExternalIPs'],
  ['load-balancer IP', 'loadBalancerIngressIPs', 'serviceLoadBalancerIPs'],
] as const;

function reasonText(r: Plan['routes'][number]['reasons'][number]): string {
  switch (r.kind) {
    case 'BGPConfiguration':
      return `BGPConfiguration ${r.name} ${r.field}`;
    case 'Service':
      return `Service ${r.namespace}/${r.name} ${r.source} ${r.ip}`;
    case 'BlockAffinity':
      return `BlockAffinity ${r.name}`;
    case 'Node':
      return `Node ${r.name} spec.podCIDRs`;
  }
}

/** One line per IP of the Service. */
export function serviceIpsSummary(plan: Plan, svc: Service): string {
  const name = `Service ${svc.namespace}/${svc.name}`;
  if (svc.headless) return `${name} is headless (clusterIP: None): it has no IP to advertise`;
  const lines: string[] = [];
  for (const [label, field, allowField] of SOURCES) {
    for (const ip of svc[field]) {
      const p = Prefix.parse(ip.toString(), { allowBareAddress: true });
      const covering = plan.routes.filter((r) => r.prefix.contains(p));
      if (covering.length > 0) {
        lines.push(
          `${label} ${ip}: no /${p.length} of its own; covered by the advertised ` +
            `${covering.map((r) => r.prefix.toString()).join(', ')} (${covering.flatMap((r) => r.reasons.map(reasonText)).join('; ')})`,
        );
        continue;
      }
      const ranges = plan.exportAllowList.serviceRanges.filter((r) => r.field === allowField);
      const inRange = ranges.filter((r) => r.prefix.contains(p));
      if (inRange.length > 0)
        lines.push(
          `${label} ${ip}: inside BGPConfiguration ${allowField} ${inRange.map((r) => r.prefix.toString()).join(', ')}, but not advertised from this node`,
        );
      else
        lines.push(
          `${label} ${ip}: not inside any allow-list: BGPConfiguration ${allowField} ` +
            `${ranges.length > 0 ? `has ${ranges.map((r) => r.prefix.toString()).join(', ')}` : 'is not set'}`,
        );
    }
  }
  if (lines.length === 0) return `${name} has no IP yet (no cluster IP, external IP or load-balancer ingress IP)`;
  return lines.join('\n');
}
