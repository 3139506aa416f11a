/**
 * Containerlab-style topology files, validated into plain values.
 *
 *   name: lab1
 *   topology:
 *     nodes:
 *       r1: { kind: bird, startup-config: r1.conf, exec: ["ip addr"] }
 *       sw: { kind: bridge }
 *     links:
 *       - endpoints: ["r1:eth1", "sw:p1"]
 *   x-tsbgp:
 *     addresses: { "r1:eth1": ["192.0.2.1/24", "2001:db8::1/64"] }
 *
 * Errors name the file, the node or link, and the field.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { cleanupStale, Lab } from './netns.js';

/** The repository's root (tsbgp nodes find the agent's sources there through TSBGP_REPO). */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const NODE_KINDS = ['bird', 'frr', 'gobgp', 'exabgp', 'tsbgp', 'host', 'bridge'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** Where containerlab images expect each daemon's config; a bind to this path names the config. */
export const CONFIG_PATHS: Partial<Record<NodeKind, string>> = {
  bird: '/etc/bird/bird.conf',
  frr: '/etc/frr/frr.conf',
  gobgp: '/gobgp/gobgpd.toml',
  exabgp: '/etc/exabgp/exabgp.conf',
};

export interface Bind {
  /** Absolute host path. */
  source: string;
  target: string;
  readOnly: boolean;
}

export interface LabNode {
  name: string;
  kind: NodeKind;
  /** Absolute path of the daemon's config, from `startup-config` or a bind to the kind's config path. */
  config?: string;
  binds: Bind[];
  /** Shell commands run in the node once its daemon is up, in order. */
  exec: string[];
  env: Record<string, string>;
  /** For `tsbgp` (and optionally `host`): a long-running command started in the node. */
  cmd?: string;
  /** Containerlab image; kept only for the README's mapping and round trips. */
  image?: string;
}

export interface Endpoint {
  node: string;
  iface: string;
}

export interface LabLink {
  a: Endpoint;
  b: Endpoint;
}

export interface Topology {
  name: string;
  /** The file it came from (for error messages), and its folder (for relative paths). */
  file: string;
  dir: string;
  nodes: LabNode[];
  links: LabLink[];
  /** Addresses per "node:iface" (also "node:lo"). */
  addresses: Record<string, string[]>;
}

export class TopologyError extends Error {
  constructor(file: string, where: string, message: string) {
    super(`${file}: ${where}: ${message}`);
    this.name = 'TopologyError';
  }
}

const NAME_RE = /^[a-z0-9][a-z0-9_]{0,14}$/i;
const IFACE_RE = /^[a-z][a-z0-9_.]{0,14}$/i;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function loadTopology(file: string): Topology {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new TopologyError(file, 'file', `cannot read: ${(e as Error).message}`);
  }
  return parseTopology(text, resolve(file));
}

export function parseTopology(text: string, file: string): Topology {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new TopologyError(file, 'yaml', (e as Error).message.split('\n')[0]);
  }
  if (!isObj(doc)) throw new TopologyError(file, 'document', 'expected a mapping at the top level');
  const dir = dirname(file);
  const err = (where: string, msg: string): TopologyError => new TopologyError(file, where, msg);

  const name = doc.name;
  if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9-]{0,30}$/i.test(name)) throw err('name', 'required: letters, digits and "-", at most 31 characters');
  const topo = doc.topology;
  if (!isObj(topo)) throw err('topology', 'required mapping with "nodes" and "links"');
  const rawNodes = topo.nodes;
  if (!isObj(rawNodes) || Object.keys(rawNodes).length === 0) throw err('topology.nodes', 'required mapping of node name to node');

  const nodes: LabNode[] = [];
  for (const [nodeName, raw] of Object.entries(rawNodes)) {
    const at = `node "${nodeName}"`;
    if (!NAME_RE.test(nodeName)) throw err(at, 'node names are 1-15 letters, digits or "_" (they become namespace names)');
    if (!isObj(raw)) throw err(at, 'expected a mapping with at least "kind"');
    const kind = raw.kind;
    if (typeof kind !== 'string' || !(NODE_KINDS as readonly string[]).includes(kind)) {
      throw err(`${at}.kind`, `must be one of ${NODE_KINDS.join(', ')} (got ${JSON.stringify(kind)})`);
    }
    const k = kind as NodeKind;
    const known = new Set(['kind', 'image', 'startup-config', 'binds', 'exec', 'env', 'cmd', 'labels']);
    for (const key of Object.keys(raw)) if (!known.has(key)) throw err(`${at}.${key}`, `unknown field (known: ${[...known].join(', ')})`);

    const binds: Bind[] = [];
    if (raw.binds !== undefined) {
      if (!Array.isArray(raw.binds)) throw err(`${at}.binds`, 'expected a list of "host-path:node-path[:ro]"');
      raw.binds.forEach((b, i) => {
        const parts = typeof b === 'string' ? b.split(':') : [];
        if (parts.length < 2 || parts.length > 3 || !parts[0] || !parts[1] || (parts[2] !== undefined && parts[2] !== 'ro' && parts[2] !== 'rw')) {
          throw err(`${at}.binds[${i}]`, `expected "host-path:node-path[:ro]", got ${JSON.stringify(b)}`);
        }
        binds.push({ source: abs(dir, parts[0]), target: parts[1], readOnly: parts[2] === 'ro' });
      });
    }
    let config: string | undefined;
    if (raw['startup-config'] !== undefined) {
      if (typeof raw['startup-config'] !== 'string' || !raw['startup-config']) throw err(`${at}.startup-config`, 'expected a file path');
      config = abs(dir, raw['startup-config']);
    } else {
      const target = CONFIG_PATHS[k];
      config = binds.find((b) => b.target === target)?.source;
    }
    if ((k === 'bird' || k === 'frr' || k === 'gobgp' || k === 'exabgp') && !config) {
      throw err(at, `a ${k} node needs "startup-config" or a bind to ${CONFIG_PATHS[k]}`);
    }
    if (k === 'bridge' && (config || raw.exec !== undefined)) throw err(at, 'a bridge has no config or exec');

    const exec = strings(raw.exec, `${at}.exec`, err);
    const env: Record<string, string> = {};
    if (raw.env !== undefined) {
      if (!isObj(raw.env)) throw err(`${at}.env`, 'expected a mapping of name to value');
      for (const [key, v] of Object.entries(raw.env)) {
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw err(`${at}.env.${key}`, 'expected a scalar');
        env[key] = String(v);
      }
    }
    if (raw.cmd !== undefined && typeof raw.cmd !== 'string') throw err(`${at}.cmd`, 'expected a command string');
    if (raw.image !== undefined && typeof raw.image !== 'string') throw err(`${at}.image`, 'expected a string');
    nodes.push({ name: nodeName, kind: k, config, binds, exec, env, cmd: raw.cmd as string | undefined, image: raw.image as string | undefined });
  }

  const byName = new Map(nodes.map((n) => [n.name, n]));
  const links: LabLink[] = [];
  const used = new Set<string>();
  const rawLinks = topo.links ?? [];
  if (!Array.isArray(rawLinks)) throw err('topology.links', 'expected a list');
  rawLinks.forEach((l, i) => {
    const at = `topology.links[${i}]`;
    if (!isObj(l) || !Array.isArray(l.endpoints) || l.endpoints.length !== 2) throw err(`${at}.endpoints`, 'expected exactly two "node:iface" endpoints');
    const [a, b] = l.endpoints.map((e, j) => endpoint(e, `${at}.endpoints[${j}]`, byName, err));
    if (a.node === b.node) throw err(at, `both ends are on node "${a.node}"`);
    if (byName.get(a.node)!.kind === 'bridge' && byName.get(b.node)!.kind === 'bridge') throw err(at, 'bridge-to-bridge links are not supported');
    for (const e of [a, b]) {
      const key = `${e.node}:${e.iface}`;
      if (used.has(key)) throw err(at, `interface ${key} is used by another link`);
      used.add(key);
    }
    links.push({ a, b });
  });

  const addresses: Record<string, string[]> = {};
  const ext = doc['x-tsbgp'] ?? topo['x-tsbgp'];
  if (ext !== undefined) {
    if (!isObj(ext)) throw err('x-tsbgp', 'expected a mapping');
    for (const key of Object.keys(ext)) if (key !== 'addresses') throw err(`x-tsbgp.${key}`, 'unknown field (known: addresses)');
    if (ext.addresses !== undefined) {
      if (!isObj(ext.addresses)) throw err('x-tsbgp.addresses', 'expected a mapping of "node:iface" to a list of addresses');
      for (const [key, list] of Object.entries(ext.addresses)) {
        const at = `x-tsbgp.addresses."${key}"`;
        const ep = endpoint(key, at, byName, err);
        if (byName.get(ep.node)!.kind === 'bridge') throw err(at, 'bridge ports carry no addresses');
        if (ep.iface !== 'lo' && !used.has(key)) throw err(at, `no link uses interface ${key}`);
        const addrs = strings(list, at, err);
        for (const a of addrs) if (!isCidr(a)) throw err(at, `"${a}" is not an address with prefix length like 192.0.2.1/24 or 2001:db8::1/64`);
        addresses[key] = addrs;
      }
    }
  }
  return { name, file, dir, nodes, links, addresses };
}

function abs(dir: string, p: string): string {
  return isAbsolute(p) ? p : resolve(dir, p);
}

function strings(v: unknown, where: string, err: (w: string, m: string) => TopologyError): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw err(where, 'expected a list of strings');
  return v as string[];
}

function endpoint(v: unknown, where: string, nodes: Map<string, LabNode>, err: (w: string, m: string) => TopologyError): Endpoint {
  if (typeof v !== 'string') throw err(where, `expected "node:iface", got ${JSON.stringify(v)}`);
  const m = /^([^:]+):([^:]+)$/.exec(v);
  if (!m) throw err(where, `expected "node:iface", got "${v}"`);
  const [, node, iface] = m;
  if (!nodes.has(node)) throw err(where, `unknown node "${node}"`);
  if (!IFACE_RE.test(iface)) throw err(where, `interface name "${iface}" must be 1-15 letters, digits, "_" or "."`);
  return { node, iface };
}

function isCidr(s: string): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s);
  if (!m) return false;
  const len = Number(m[2]);
  if (m[1].includes(':')) return len <= 128 && /^[0-9a-f:.]+$/i.test(m[1]) && m[1].split('::').length <= 2;
  const parts = m[1].split('.');
  return len <= 32 && parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/**
 * A test's lab: removes what killed runs left (cleanupStale), loads the
 * topology file, gives every `tsbgp` node TSBGP_REPO and `env` (e.g.
 * TSBGP_MANIFEST), and brings it up ephemeral (torn down on exit and
 * signals too). The caller tears it down in `afterAll`.
 */
export async function bringUp(file: string, opts: { env?: Record<string, string>; runId?: string } = {}): Promise<Lab> {
  cleanupStale();
  const topo = loadTopology(file);
  for (const n of topo.nodes) if (n.kind === 'tsbgp') n.env = { ...n.env, TSBGP_REPO: REPO, ...opts.env };
  return Lab.up(topo, { ephemeral: true, ...(opts.runId !== undefined ? { runId: opts.runId } : {}) });
}
