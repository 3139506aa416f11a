import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../lab/eventually.js';
import { cleanupStale, gobgpEstablished, Lab, type KernelRoute } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { alive, listNamespaces, nsPids } from '../lab/shell.js';
import { loadTopology } from '../lab/topology.js';

const TOPOLOGY = join(dirname(fileURLToPath(import.meta.url)), '..', 'lab', 'topologies', 'interop.clab.yml');
const available = requireLab(['bird', 'frr', 'gobgp', 'exabgp', 'host', 'bridge'], { binaries: ['curl', 'python3'] });

const route = (routes: KernelRoute[], dst: string): KernelRoute | undefined => routes.find((r) => r.dst === dst);

describe.skipIf(!available.ok)('interop lab: BIRD, FRR, GoBGP and ExaBGP in namespaces', () => {
  let lab: Lab;
  let namespaces: string[] = [];

  beforeAll(async () => {
    cleanupStale();
    lab = await Lab.up(loadTopology(TOPOLOGY), { ephemeral: true });
    namespaces = lab.state.nodes.map((n) => n.ns);
  });
  afterAll(() => lab?.teardown());

  it('brings every session to Established', async () => {
    await eventually(() => {
      const bgp = lab.birdProtocols('bird1').filter((p) => p.proto === 'BGP');
      expect(bgp.map((p) => p.name).sort()).toEqual(['exa4', 'exa6', 'frr4', 'frr6', 'gobgp4', 'gobgp6']);
      for (const p of bgp) expect({ name: p.name, state: p.details['BGP state'] }).toEqual({ name: p.name, state: 'Established' });
      const frr = lab.frrNeighbors('frr1');
      expect(Object.keys(frr).sort()).toEqual(['198.51.100.1', '198.51.100.3', '2001:db8:51::1', '2001:db8:51::3']);
      for (const [addr, n] of Object.entries(frr)) expect({ addr, state: n.bgpState }).toEqual({ addr, state: 'Established' });
      const gobgp = lab.gobgpNeighbors('gobgp1');
      expect(gobgp).toHaveLength(4);
      for (const n of gobgp) expect({ addr: n.conf.neighbor_address, up: gobgpEstablished(n) }).toEqual({ addr: n.conf.neighbor_address, up: true });
    });
  });

  it("installs FRR's, GoBGP's and ExaBGP's routes in BIRD's kernel table as proto bird", async () => {
    await eventually(() => {
      const v4 = lab.kernelRoutes('bird1', 4);
      expect(route(v4, '198.18.2.0/24')).toMatchObject({ protocol: 'bird', gateway: '198.51.100.2' }); // FRR
      expect(route(v4, '198.18.3.0/24')).toMatchObject({ protocol: 'bird', gateway: '198.51.100.3' }); // GoBGP
      expect(route(v4, '198.18.4.0/24')).toMatchObject({ protocol: 'bird', gateway: '192.0.2.2', dev: 'eth2' }); // ExaBGP
      const v6 = lab.kernelRoutes('bird1', 6);
      expect(route(v6, '2001:db8:1002::/48')).toMatchObject({ protocol: 'bird' });
      expect(route(v6, '2001:db8:1003::/48')).toMatchObject({ protocol: 'bird' });
      expect(route(v6, '2001:db8:1004::/48')).toMatchObject({ protocol: 'bird', dev: 'eth2' });
    });
    // BIRD's own view agrees: the GoBGP route carries GoBGP's community
    const r = lab.birdRoutes('bird1').find((x) => x.prefix === '198.18.3.0/24' && x.primary);
    expect(r).toMatchObject({ protocol: 'gobgp4', via: [{ gateway: '198.51.100.3', dev: 'eth1' }] });
    expect(r!.attrs['BGP.community']).toBe('(65003,3)');
    expect(r!.attrs['BGP.as_path']).toBe('65003');
  });

  it("installs BIRD's, GoBGP's and (through BIRD) ExaBGP's routes in FRR's kernel table as proto bgp", async () => {
    await eventually(() => {
      const v4 = lab.kernelRoutes('frr1', 4);
      expect(route(v4, '198.18.1.0/24')).toMatchObject({ protocol: 'bgp', gateway: '198.51.100.1' });
      expect(route(v4, '198.18.3.0/24')).toMatchObject({ protocol: 'bgp', gateway: '198.51.100.3' });
      expect(route(v4, '198.18.4.0/24')).toMatchObject({ protocol: 'bgp', gateway: '198.51.100.1' });
      const v6 = lab.kernelRoutes('frr1', 6);
      for (const p of ['2001:db8:1001::/48', '2001:db8:1003::/48', '2001:db8:1004::/48'])
        expect({ p, proto: route(v6, p)?.protocol }).toEqual({ p, proto: 'bgp' });
    });
    const rib = lab.frrRib('frr1', 4);
    const exa = rib['198.18.4.0/24'];
    expect(exa?.some((p) => p.bestpath && p.path === '65001 65004')).toBe(true);
  });

  it('merges equal paths from FRR and GoBGP into one ECMP kernel route in BIRD (merge paths on)', async () => {
    await eventually(() => {
      const r = route(lab.kernelRoutes('bird1', 4), '198.18.9.0/24');
      expect(r?.protocol).toBe('bird');
      expect((r?.nexthops ?? []).map((h) => h.gateway).sort()).toEqual(['198.51.100.2', '198.51.100.3']);
    });
  });

  it('forwards traffic along BGP-installed routes: BIRD reaches the host behind FRR', async () => {
    await eventually(() => {
      const r = lab.exec('bird1', ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '3', 'http://203.0.113.10:8080/']);
      expect(r.stdout).toBe('200');
    }, 30_000);
  });

  it('GoBGP learns BIRD and FRR prefixes', () => {
    const rib = lab.gobgpRib('gobgp1', 4);
    expect(Object.keys(rib)).toEqual(expect.arrayContaining(['198.18.1.0/24', '198.18.2.0/24', '198.18.4.0/24', '203.0.113.0/24']));
  });

  it('teardown kills every daemon and leaves no namespace or FRR pathspace behind', () => {
    const frrSpace = lab.node('frr1').frrPathspace!;
    expect(existsSync(`/etc/frr/${frrSpace}`)).toBe(true);
    const pids = namespaces.flatMap((ns) => nsPids(ns));
    expect(pids.length).toBeGreaterThanOrEqual(6); // bird, zebra, staticd, bgpd, gobgpd, exabgp, python
    lab.teardown();
    expect(pids.filter(alive)).toEqual([]);
    expect(listNamespaces().filter((n) => namespaces.includes(n))).toEqual([]);
    expect(existsSync(`/etc/frr/${frrSpace}`)).toBe(false);
    expect(existsSync(`/var/run/frr/${frrSpace}`)).toBe(false);
    expect(existsSync(lab.state.work)).toBe(false);
  });
});
