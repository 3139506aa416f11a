/**
 * Translates a lab topology into a plain containerlab file: every daemon kind
 * becomes `kind: linux` with an image that ships it, the config becomes a bind
 * to where that image reads it, and x-tsbgp addresses become `ip addr add`
 * commands ahead of the node's own `exec`. See README.md for the images.
 */
import { stringify } from 'yaml';
import { CONFIG_PATHS, type NodeKind, type Topology } from './topology.js';

/** Default images per kind; a node's own `image` wins. */
export const IMAGES: Record<Exclude<NodeKind, 'bridge'>, string> = {
  bird: 'tsbgp/lab-daemons:bookworm',
  frr: 'quay.io/frrouting/frr:8.4.4',
  gobgp: 'tsbgp/lab-daemons:bookworm',
  exabgp: 'tsbgp/lab-daemons:bookworm',
  tsbgp: 'node:20-bookworm',
  host: 'debian:bookworm-slim',
};

/** The command each daemon container runs in the foreground. */
const COMMANDS: Partial<Record<NodeKind, string>> = {
  bird: 'bird -f -c /etc/bird/bird.conf',
  gobgp: 'gobgpd -f /gobgp/gobgpd.toml --api-hosts 127.0.0.1:50051',
  exabgp: 'env exabgp.daemon.user=root exabgp /etc/exabgp/exabgp.conf',
};

export function toContainerlab(topo: Topology): string {
  const nodes: Record<string, Record<string, unknown>> = {};
  for (const n of topo.nodes) {
    if (n.kind === 'bridge') {
      nodes[n.name] = { kind: 'bridge' };
      continue;
    }
    const binds = n.binds.map((b) => `${b.source}:${b.target}${b.readOnly ? ':ro' : ''}`);
    const target = CONFIG_PATHS[n.kind];
    if (n.config && target && !n.binds.some((b) => b.target === target)) binds.push(`${n.config}:${target}:ro`);
    const addrs = Object.entries(topo.addresses)
      .filter(([key]) => key.startsWith(`${n.name}:`))
      .flatMap(([key, list]) => list.map((a) => `ip ${a.includes(':') ? '-6 ' : ''}addr add ${a} dev ${key.split(':')[1]}`));
    const node: Record<string, unknown> = { kind: 'linux', image: n.image ?? IMAGES[n.kind] };
    const cmd = n.cmd ?? COMMANDS[n.kind];
    if (cmd) node.cmd = cmd;
    if (binds.length) node.binds = binds;
    if (Object.keys(n.env).length) node.env = n.env;
    if (addrs.length || n.exec.length) node.exec = [...addrs, ...n.exec];
    nodes[n.name] = node;
  }
  const links = topo.links.map((l) => ({ endpoints: [`${l.a.node}:${l.a.iface}`, `${l.b.node}:${l.b.iface}`] }));
  return stringify({ name: topo.name, topology: { nodes, links } });
}
