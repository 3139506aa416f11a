import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadTopology, parseTopology, TopologyError } from './topology.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), 'topologies');
const FILE = '/labs/t.clab.yml';

const base = `
name: t
topology:
  nodes:
    r1: { kind: bird, startup-config: r1.conf }
    r2: { kind: frr, binds: ["cfg/frr.conf:/etc/frr/frr.conf:ro", "/abs/x:/y"] }
    sw: { kind: bridge }
    h1: { kind: host, exec: ["ip route add default via 192.0.2.1"], env: { A: 1 } }
  links:
    - endpoints: ["r1:eth1", "sw:p1"]
    - endpoints: ["r2:eth1", "sw:p2"]
    - endpoints: ["r1:eth2", "h1:eth1"]
x-tsbgp:
  addresses:
    "r1:eth1": ["198.51.100.1/24", "2001:db8::1/64"]
    "r1:lo": ["192.0.2.255/32"]
`;

const parseErr = (text: string): string => {
  try {
    parseTopology(text, FILE);
  } catch (e) {
    expect(e).toBeInstanceOf(TopologyError);
    return (e as Error).message;
  }
  throw new Error('expected a TopologyError');
};

const edit = (from: string, to: string): string => {
  expect(base).toContain(from);
  return base.replace(from, to);
};

describe('parseTopology', () => {
  it('reads nodes, config paths, binds, links and addresses', () => {
    const t = parseTopology(base, FILE);
    expect(t.name).toBe('t');
    expect(t.nodes.map((n) => [n.name, n.kind])).toEqual([
      ['r1', 'bird'],
      ['r2', 'frr'],
      ['sw', 'bridge'],
      ['h1', 'host'],
    ]);
    expect(t.nodes[0].config).toBe('/labs/r1.conf');
    // a bind to the kind's config path names the config, relative to the file
    expect(t.nodes[1].config).toBe('/labs/cfg/frr.conf');
    expect(t.nodes[1].binds).toEqual([
      { source: '/labs/cfg/frr.conf', target: '/etc/frr/frr.conf', readOnly: true },
      { source: '/abs/x', target: '/y', readOnly: false },
    ]);
    expect(t.nodes[3].exec).toEqual(['ip route add default via 192.0.2.1']);
    expect(t.nodes[3].env).toEqual({ A: '1' });
    expect(t.links[2]).toEqual({ a: { node: 'r1', iface: 'eth2' }, b: { node: 'h1', iface: 'eth1' } });
    expect(t.addresses).toEqual({ 'r1:eth1': ['198.51.100.1/24', '2001:db8::1/64'], 'r1:lo': ['192.0.2.255/32'] });
  });

  it('names file, node and field in errors', () => {
    expect(parseErr(edit('kind: bird, startup', 'kind: quagga, startup'))).toBe(
      `${FILE}: node "r1".kind: must be one of bird, frr, gobgp, exabgp, tsbgp, host, bridge (got "quagga")`,
    );
    expect(parseErr(edit('r1: { kind: bird, startup-config: r1.conf }', 'r1: { kind: bird }'))).toBe(
      `${FILE}: node "r1": a bird node needs "startup-config" or a bind to /etc/bird/bird.conf`,
    );
    expect(parseErr(edit('"/abs/x:/y"', '"nocolon"'))).toBe(`${FILE}: node "r2".binds[1]: expected "host-path:node-path[:ro]", got "nocolon"`);
    expect(parseErr(edit('kind: host, exec', 'kind: host, colour: red, exec'))).toMatch(/^\/labs\/t\.clab\.yml: node "h1"\.colour: unknown field/);
    expect(parseErr(edit('["r2:eth1", "sw:p2"]', '["r9:eth1", "sw:p2"]'))).toBe(`${FILE}: topology.links[1].endpoints[0]: unknown node "r9"`);
    expect(parseErr(edit('["r2:eth1", "sw:p2"]', '["r1:eth1", "sw:p2"]'))).toBe(`${FILE}: topology.links[1]: interface r1:eth1 is used by another link`);
    expect(parseErr(edit('["r2:eth1", "sw:p2"]', '["r2:eth1"]'))).toBe(`${FILE}: topology.links[1].endpoints: expected exactly two "node:iface" endpoints`);
    expect(parseErr(edit('["r2:eth1", "sw:p2"]', '["r2:eth1", "r2:eth2"]'))).toBe(`${FILE}: topology.links[1]: both ends are on node "r2"`);
    expect(parseErr(edit('"2001:db8::1/64"', '"2001:db8::1"'))).toBe(
      `${FILE}: x-tsbgp.addresses."r1:eth1": "2001:db8::1" is not an address with prefix length like 192.0.2.1/24 or 2001:db8::1/64`,
    );
    expect(parseErr(edit('"198.51.100.1/24"', '"198.51.100.256/24"'))).toMatch(/"198\.51\.100\.256\/24" is not an address/);
    expect(parseErr(edit('"r1:lo"', '"r1:eth9"'))).toBe(`${FILE}: x-tsbgp.addresses."r1:eth9": no link uses interface r1:eth9`);
    expect(parseErr(edit('"r1:lo"', '"sw:p1"'))).toBe(`${FILE}: x-tsbgp.addresses."sw:p1": bridge ports carry no addresses`);
    expect(parseErr(edit('name: t', 'name: "bad name"'))).toMatch(/: name: required/);
    expect(parseErr(edit('h1: {', 'averyveryverylongnodename: {'))).toMatch(/node "averyveryverylongnodename": node names are 1-15/);
    expect(parseErr('name: [unclosed')).toMatch(/^\/labs\/t\.clab\.yml: yaml: /);
    expect(parseErr('name: t\n')).toBe(`${FILE}: topology: required mapping with "nodes" and "links"`);
  });

  it('reports an unreadable file by name', () => {
    expect(() => loadTopology('/nonexistent/x.clab.yml')).toThrow(/^\/nonexistent\/x\.clab\.yml: file: cannot read/);
  });

  it('accepts every shipped example topology', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.clab.yml'));
    expect(files).toEqual(expect.arrayContaining(['bird-frr.clab.yml', 'interop.clab.yml']));
    for (const f of files) {
      const t = loadTopology(join(DIR, f));
      for (const n of t.nodes) if (n.config) expect(readdirSync(dirname(n.config))).toContain(n.config.split('/').pop());
    }
  });
});

describe('toContainerlab', () => {
  it('maps kinds to linux images, configs to binds and addresses to exec', async () => {
    const { toContainerlab } = await import('./containerlab.js');
    const { parse } = await import('yaml');
    const out = parse(toContainerlab(parseTopology(base, FILE))) as {
      name: string;
      topology: { nodes: Record<string, Record<string, unknown>>; links: unknown[] };
    };
    expect(out.name).toBe('t');
    expect(out.topology.nodes.sw).toEqual({ kind: 'bridge' });
    expect(out.topology.nodes.r1).toEqual({
      kind: 'linux',
      image: 'tsbgp/lab-daemons:bookworm',
      cmd: 'bird -f -c /etc/bird/bird.conf',
      binds: ['/labs/r1.conf:/etc/bird/bird.conf:ro'],
      exec: ['ip addr add 198.51.100.1/24 dev eth1', 'ip -6 addr add 2001:db8::1/64 dev eth1', 'ip addr add 192.0.2.255/32 dev lo'],
    });
    // an existing bind to the config path is kept, not doubled
    expect(out.topology.nodes.r2.binds).toEqual(['/labs/cfg/frr.conf:/etc/frr/frr.conf:ro', '/abs/x:/y']);
    expect(out.topology.nodes.h1).toMatchObject({ kind: 'linux', exec: ['ip route add default via 192.0.2.1'], env: { A: '1' } });
    expect(out.topology.links).toEqual([{ endpoints: ['r1:eth1', 'sw:p1'] }, { endpoints: ['r2:eth1', 'sw:p2'] }, { endpoints: ['r1:eth2', 'h1:eth1'] }]);
  });
});
