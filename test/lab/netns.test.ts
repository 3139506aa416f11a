import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cleanupStale, Lab, parseBirdProtocols, parseBirdRoutes } from './netns.js';
import { requireLab } from './require.js';
import { ip, listNamespaces } from './shell.js';
import { parseTopology } from './topology.js';

// `birdc show protocols all` / `show route all` as BIRD 2.0.12 prints them (trimmed).
const PROTOCOLS = `BIRD 2.0.12 ready.
Name       Proto      Table      State  Since         Info
device1    Device     ---        up     17:36:53.255  
k4         Kernel     master4    up     17:36:53.255  
frr6       BGP        ---        start  17:34:59.690  Idle          Received: Finite state machine error
  BGP state:          Idle
    Neighbor address: 2001:db8:12::2
    Neighbor AS:      65002
    Last error:       Received: Finite state machine error
  Channel ipv6
    State:          DOWN
gobgp4     BGP        ---        up     17:36:57.133  Established   
  BGP state:          Established
    Neighbor address: 198.51.100.3
`;

const ROUTES = `BIRD 2.0.12 ready.
Table master4:
198.18.9.0/24        unicast [frr4 17:36:55.311] * (100) [AS65002i]
\tvia 198.51.100.2 on eth1
\tType: BGP univ
\tBGP.origin: IGP
\tBGP.as_path: 65002
\tBGP.med: 0
                     unicast [gobgp4 17:36:57.134] (100) [AS65003?]
\tvia 198.51.100.3 on eth1
\tBGP.as_path: 65003
198.18.1.0/24        blackhole [st4 17:36:53.255] * (200)
\tType: static univ

Table master6:
2001:db8:1003::/48   unicast [gobgp6 17:36:57.380] * (100) [AS65003i]
\tvia 2001:db8:51::3 on eth1
\tBGP.community: (65003,3)
`;

describe('BIRD output parsers', () => {
  it('reads protocols with their detail lines', () => {
    const p = parseBirdProtocols(PROTOCOLS);
    expect(p.map((x) => [x.name, x.proto, x.state, x.info])).toEqual([
      ['device1', 'Device', 'up', ''],
      ['k4', 'Kernel', 'up', ''],
      ['frr6', 'BGP', 'start', 'Idle Received: Finite state machine error'],
      ['gobgp4', 'BGP', 'up', 'Established'],
    ]);
    expect(p[2].details).toMatchObject({ 'BGP state': 'Idle', 'Neighbor address': '2001:db8:12::2', 'Neighbor AS': '65002' });
    expect(p[3].details['BGP state']).toBe('Established');
  });

  it('reads routes, alternatives for one prefix, next hops and attributes', () => {
    const r = parseBirdRoutes(ROUTES);
    expect(r.map((x) => [x.table, x.prefix, x.type, x.protocol, x.primary])).toEqual([
      ['master4', '198.18.9.0/24', 'unicast', 'frr4', true],
      ['master4', '198.18.9.0/24', 'unicast', 'gobgp4', false],
      ['master4', '198.18.1.0/24', 'blackhole', 'st4', true],
      ['master6', '2001:db8:1003::/48', 'unicast', 'gobgp6', true],
    ]);
    expect(r[0].via).toEqual([{ gateway: '198.51.100.2', dev: 'eth1' }]);
    expect(r[0].attrs).toEqual({ Type: 'BGP univ', 'BGP.origin': 'IGP', 'BGP.as_path': '65002', 'BGP.med': '0' });
    expect(r[1].attrs['BGP.as_path']).toBe('65003');
    expect(r[3].attrs['BGP.community']).toBe('(65003,3)');
  });
});

const available = requireLab(['host', 'bridge'], { binaries: ['bash'] });

const LAN = `
name: lan
topology:
  nodes:
    sw: { kind: bridge }
    a: { kind: host }
    b: { kind: host }
  links:
    - endpoints: ["a:eth1", "sw:pa"]
    - endpoints: ["b:eth1", "sw:pb"]
x-tsbgp:
  addresses:
    "a:eth1": ["198.51.100.10/24", "2001:db8:9::a/64"]
    "b:eth1": ["198.51.100.11/24"]
    "a:lo": ["192.0.2.10/32"]
`;

describe.skipIf(!available.ok)('namespaces', () => {
  it('builds a bridged LAN with addresses and runs commands in nodes', async () => {
    const lab = await Lab.up(parseTopology(LAN, '/t/lan.clab.yml'), { runId: `${process.pid}`, ephemeral: true });
    try {
      expect(listNamespaces()).toEqual(expect.arrayContaining([`tsbgp-${process.pid}-a`, `tsbgp-${process.pid}-b`, `tsbgp-${process.pid}-sw`]));
      const addrs = JSON.parse(lab.mustExec('a', ['ip', '-j', 'addr', 'show'])) as { ifname: string; addr_info: { local: string; prefixlen: number }[] }[];
      const byIf = Object.fromEntries(addrs.map((i) => [i.ifname, i.addr_info.map((x) => `${x.local}/${x.prefixlen}`)]));
      expect(byIf.eth1).toEqual(expect.arrayContaining(['198.51.100.10/24', '2001:db8:9::a/64']));
      expect(byIf.lo).toEqual(expect.arrayContaining(['127.0.0.1/8', '192.0.2.10/32']));
      expect(lab.kernelRoutes('b', 4).map((r) => r.dst)).toEqual(['198.51.100.0/24']);
      // the bridge forwards between its ports: a's ARP entry for b fills in after a probe
      lab.exec('a', ['bash', '-c', 'echo > /dev/tcp/198.51.100.11/9']);
      const neigh = lab.mustExec('a', 'ip neigh show 198.51.100.11');
      expect(neigh).toMatch(/lladdr [0-9a-f:]{17}/);
      expect(lab.exec('b', 'exit 3').status).toBe(3);
    } finally {
      lab.teardown();
    }
    expect(listNamespaces().filter((n) => n.startsWith(`tsbgp-${process.pid}-`))).toEqual([]);
  });

  it('tears everything down when bringing a lab up fails', async () => {
    const bad = LAN.replace('b: { kind: host }', 'b: { kind: host, exec: ["false"] }');
    await expect(Lab.up(parseTopology(bad, '/t/lan.clab.yml'), { runId: `${process.pid}` })).rejects.toThrow(/exec on node "b" failed \(exit 1\): false/);
    expect(listNamespaces().filter((n) => n.startsWith(`tsbgp-${process.pid}-`))).toEqual([]);
  });

  it('cleanupStale removes namespaces of dead runs and keeps live ones', () => {
    const dead = spawnSync('true').pid!; // a pid that has just exited
    const staleNs = `tsbgp-${dead}-stale`;
    const liveNs = `tsbgp-${process.pid}-live`;
    ip('netns', 'add', staleNs);
    ip('netns', 'add', liveNs);
    try {
      const removed = cleanupStale();
      expect(removed).toContain(staleNs);
      expect(listNamespaces()).not.toContain(staleNs);
      expect(listNamespaces()).toContain(liveNs);
    } finally {
      ip('netns', 'del', liveNs);
      if (listNamespaces().includes(staleNs)) ip('netns', 'del', staleNs);
    }
  });
});
