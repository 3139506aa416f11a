/**
 * The 3 a.m. views over the control socket, with the agent on a real
 * BgpSpeaker: a router that is up and one that refuses connections.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RoutesJson, StatusPeerJson } from '../../src/agent/agent.js';
import type { ReceivedJson } from '../../src/agent/received-view.js';
import { run } from './cli-helpers.js';
import { clusterManifests } from './cluster-manifests.js';
import { startAgent, startRouter, stopAfterEach, within } from './loopback.js';

stopAfterEach();

const manifests = (routerPort: number) =>
  clusterManifests({
    nodeAddress: '127.0.0.1',
    podCIDRs: ['10.244.1.0/24'],
    bgp: { serviceClusterIPs: [{ cidr: '198.18.0.0/16' }] },
    peers: {
      router: { peerIP: `127.0.0.2:${routerPort}`, asNumber: 65000 },
      down: { peerIP: `127.0.0.3:${routerPort}`, asNumber: 65001 },
    },
  });

describe('operator views: status, status PEER, routes, routes --received, explain', () => {
  it('say why a peer is down, agree on what is sent, and show what a peer sends us', async () => {
    const router = await startRouter('127.0.0.2', '127.0.0.1');
    router.originate('192.0.2.128/25', { communities: ['65000:7'] });
    // Nothing listens on 127.0.0.3: every connect is refused. A short deferral: the down router sends no End-of-RIB.
    const { agent, dir, logs } = await startAgent(manifests(router.port!), { control: true, logLevel: 'debug', selectionDeferralTime: 1 });
    const control = join(dir, 'tsbgp.sock');
    const peer = (a: string) => agent.status().peers.find((p) => p.address === a);
    await within(
      10_000,
      () =>
        peer('127.0.0.2')?.state === 'Established' &&
        peer('127.0.0.3')?.info === 'Socket: Connection refused' &&
        (peer('127.0.0.2')?.detail?.prefixes.advertised ?? 0) === 2,
    );

    const status = await run(['status', '--control', control]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/\| 127\.0\.0\.3 +\| global +\| start +\| \d\d:\d\d:\d\d +\| (Active|Connect) Socket: Connection refused +\|/);
    expect(status.stdout).toMatch(/\| 127\.0\.0\.2 +\| global +\| up +\| \d\d:\d\d:\d\d +\| Established +\|/);

    const one = await run(['status', '127.0.0.2', '--json', '--control', control]);
    const pj = JSON.parse(one.stdout) as StatusPeerJson;
    expect(pj.detail).toMatchObject({
      negotiated: {
        peerAsn: 65000,
        peerRouterId: '127.0.0.2',
        holdTime: 90,
        families: ['ipv4'],
        capabilities: expect.arrayContaining(['4-byte ASN', 'route refresh']),
      },
      prefixes: { received: 1, accepted: 1, advertised: 2 },
      lastError: null,
    });
    const text = await run(['status', '127.0.0.3', '--control', control]);
    expect(text.stdout).toMatch(
      /^BGP peer 127\.0\.0\.3, port \d+, AS 65001 \(Global_down_127_0_0_3\)\n {2}Type: {13}global\n {2}Description: {6}Global_down_127_0_0_3 \(global\)\n {2}State: {12}(Active|Connect) Socket: Connection refused\n {2}Down since: {7}\S+ \(down for \d+s\)\n/,
    );
    expect((await run(['status', '127.0.0.9', '--control', control])).stderr).toBe('tsbgp status: no peer 127.0.0.9 (peers: 127.0.0.2, 127.0.0.3)\n');

    const routes = await run(['routes', '--control', control]);
    expect(routes.stdout).toMatch(
      /peer 127\.0\.0\.3 \(global, AS 65001, (Active|Connect|Idle)\)\n {2}pending: the session is (Active|Connect|Idle); these are sent once it is Established\n {2}10\.244\.1\.0\/24 {2}\(pending\)\n {2}198\.18\.0\.0\/16 {2}\(pending\)\n/,
    );
    const routesJson = JSON.parse((await run(['routes', '--json', '--control', control])).stdout) as RoutesJson;
    expect(routesJson.peers.map((p) => [p.address, p.pending])).toEqual([
      ['127.0.0.2', []],
      ['127.0.0.3', ['10.244.1.0/24', '198.18.0.0/16']],
    ]);
    expect(routes.stdout).toContain(
      'peer 127.0.0.2 (global, AS 65000, Established)\n  198.18.0.0/16  next hop 127.0.0.1, AS path 64512  ← BGPConfiguration default serviceClusterIPs\n',
    );

    const explain = await run(['explain', '198.18.0.0/16', '--control', control]);
    expect(explain.stdout).toMatch(
      /→ 127\.0\.0\.3 \(global\): exported, pending: the session is (Active|Connect|Idle); sent once it is Established\. built-in export accepts/,
    );
    expect(explain.stdout).toContain('→ 127.0.0.2 (global): exported: built-in export accepts');
    const nosuch = await run(['explain', 'nosuch/svc', '--control', control]);
    expect([nosuch.code, nosuch.stdout, nosuch.stderr]).toEqual([1, '', 'tsbgp explain: no Service nosuch/svc in the cluster state\n']);

    const received = await run(['routes', '--received', '127.0.0.2', '--json', '--control', control]);
    const rj = JSON.parse(received.stdout) as ReceivedJson;
    expect(rj).toMatchObject({ peer: '127.0.0.2', state: 'Established', counts: { received: 1, accepted: 1, rejected: 0 } });
    expect(rj.routes).toEqual([
      expect.objectContaining({
        prefix: '192.0.2.128/25',
        received: expect.objectContaining({ asPath: [65000], communities: ['65000:7'] }),
        accepted: expect.objectContaining({ asPath: [65000] }),
        best: true,
      }),
    ]);
    const receivedText = await run(['routes', '--received', '127.0.0.2', '--control', control]);
    expect(receivedText.stdout).toBe(
      'routes received from 127.0.0.2 (Established): 1 received, 1 accepted, 0 rejected by import policy\n' +
        '  192.0.2.128/25  next hop 127.0.0.2, AS path 65000, origin igp, communities 65000:7  [best]\n' +
        '    import: accepted\n',
    );

    // The log: the refused peer once at info with its reason; its retries only at debug.
    const lines = logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.peer === '127.0.0.3' && String(l.msg).startsWith('BGP session'));
    expect(lines.filter((l) => l.level !== 'debug')).toEqual([
      expect.objectContaining({ level: 'info', msg: 'BGP session not established', reason: 'Socket: Connection refused' }),
    ]);
  }, 30_000);
});
