/**
 * TTL security (GTSM, RFC 5082) against BIRD and FRR. Each daemon has a
 * direct link to tsbgp (sw1, 198.51.100.0/24) and a far address two hops
 * away (sw2, 192.0.2.0/24, behind router r1, forwarding on); tsbgp reaches
 * the far addresses from 203.0.113.1 on its loopback:
 *
 *   ts1 .1 ──sw1── bird .11, frr .21, r1 .254 ──sw2── bird 192.0.2.11, frr 192.0.2.21
 *
 * Direct, hops 1 on both sides: up. Far, the daemon allowing 2 hops and
 * tsbgp 1: tsbgp's minimum TTL (255) drops the daemon's packets, which
 * arrive with 254: no session. tsbgp updated to hops 2: up.
 *
 * The same over IPv6 alongside (hop limit, IPV6_MINHOPCOUNT): sw1 also
 * carries 2001:db8:1::/64 (ts1 ::1, bird ::11, frr ::21, r1 ::254), sw2
 * 2001:db8:2::/64 (bird ::11, frr ::21, r1 ::254), and tsbgp's far IPv6
 * address is 2001:db8:113::1 on its loopback.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerOptions } from '../../src/speaker/types.js';
import { cleanupStale } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { loadTopology } from '../lab/topology.js';
import { sleep } from '../lab/shell.js';
import { until } from './harness.js';
import { InteropRun } from './scenarios.js';
import { requireSpeaker } from './speaker-client.js';

const available = requireLab(['bird', 'frr', 'tsbgp', 'host']);
const withSpeaker = available.ok && requireSpeaker();

const TS_AS = 65001;
const BIRD_AS = 65011;
const FRR_AS = 65021;
const TS_FAR = '203.0.113.1';
const TS_FAR6 = '2001:db8:113::1';

const BIRD_CONF = `router id 198.51.100.11;
protocol device {}
protocol static gen { ipv4; route 198.18.11.0/24 blackhole; }
protocol static gen6 { ipv6; route 2001:db8:1011::/48 blackhole; }
protocol bgp near { local 198.51.100.11 as ${BIRD_AS}; neighbor 198.51.100.1 as ${TS_AS}; hold time 9; keepalive time 3; connect retry time 2; error wait time 1, 4; ttl security on; ipv4 { import all; export where proto = "gen"; }; }
protocol bgp far { local 192.0.2.11 as ${BIRD_AS}; neighbor ${TS_FAR} as ${TS_AS}; hold time 9; keepalive time 3; connect retry time 2; error wait time 1, 4; ttl security on; multihop 2; ipv4 { import all; export where proto = "gen"; }; }
protocol bgp near6 { local 2001:db8:1::11 as ${BIRD_AS}; neighbor 2001:db8:1::1 as ${TS_AS}; hold time 9; keepalive time 3; connect retry time 2; error wait time 1, 4; ttl security on; ipv6 { import all; export where proto = "gen6"; }; }
protocol bgp far6 { local 2001:db8:2::11 as ${BIRD_AS}; neighbor ${TS_FAR6} as ${TS_AS}; hold time 9; keepalive time 3; connect retry time 2; error wait time 1, 4; ttl security on; multihop 2; ipv6 { import all; export where proto = "gen6"; }; }
`;

const FRR_CONF = `frr defaults traditional
hostname frr
ip route 198.18.21.0/24 blackhole
ip route ${TS_FAR}/32 192.0.2.254
ipv6 route 2001:db8:1021::/48 blackhole
ipv6 route ${TS_FAR6}/128 2001:db8:2::254
router bgp ${FRR_AS}
 bgp router-id 198.51.100.21
 no bgp ebgp-requires-policy
 no bgp default ipv4-unicast
 neighbor 198.51.100.1 remote-as ${TS_AS}
 neighbor 198.51.100.1 update-source 198.51.100.21
 neighbor 198.51.100.1 timers 3 9
 neighbor 198.51.100.1 timers connect 2
 neighbor 198.51.100.1 ttl-security hops 1
 neighbor ${TS_FAR} remote-as ${TS_AS}
 neighbor ${TS_FAR} update-source 192.0.2.21
 neighbor ${TS_FAR} timers 3 9
 neighbor ${TS_FAR} timers connect 2
 neighbor ${TS_FAR} ttl-security hops 2
 neighbor 2001:db8:1::1 remote-as ${TS_AS}
 neighbor 2001:db8:1::1 update-source 2001:db8:1::21
 neighbor 2001:db8:1::1 timers 3 9
 neighbor 2001:db8:1::1 timers connect 2
 neighbor 2001:db8:1::1 ttl-security hops 1
 neighbor ${TS_FAR6} remote-as ${TS_AS}
 neighbor ${TS_FAR6} update-source 2001:db8:2::21
 neighbor ${TS_FAR6} timers 3 9
 neighbor ${TS_FAR6} timers connect 2
 neighbor ${TS_FAR6} ttl-security hops 2
 address-family ipv4 unicast
  network 198.18.21.0/24
  neighbor 198.51.100.1 activate
  neighbor ${TS_FAR} activate
 exit-address-family
 address-family ipv6 unicast
  network 2001:db8:1021::/48
  neighbor 2001:db8:1::1 activate
  neighbor ${TS_FAR6} activate
 exit-address-family
`;

function peer(address: string, asn: number, localAddress: string, ttlSecurity: number): PeerOptions {
  return {
    address,
    asn,
    localAddress,
    ttlSecurity,
    families: [address.includes(':') ? 'ipv6' : 'ipv4'],
    holdTime: 9,
    keepaliveTime: 3,
    connectRetryTime: 2,
    idleHoldTime: 1,
    gracefulRestart: false,
  };
}

describe.skipIf(!available.ok)('TTL security against BIRD and FRR', () => {
  const run = new InteropRun();

  beforeAll(async () => {
    cleanupStale();
    const dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-ttl-`));
    writeFileSync(join(dir, 'bird.conf'), BIRD_CONF);
    writeFileSync(join(dir, 'frr.conf'), FRR_CONF);
    writeFileSync(
      join(dir, 'ttl.clab.yml'),
      `name: ttl
topology:
  nodes:
    ts1: { kind: tsbgp, exec: ["ip route add 192.0.2.0/24 via 198.51.100.254", "ip -6 route add 2001:db8:2::/64 via 2001:db8:1::254"] }
    r1: { kind: host }
    sw1: { kind: bridge }
    sw2: { kind: bridge }
    bird: { kind: bird, startup-config: bird.conf, exec: ["ip route add ${TS_FAR}/32 via 192.0.2.254", "ip -6 route add ${TS_FAR6}/128 via 2001:db8:2::254"] }
    frr: { kind: frr, startup-config: frr.conf }
  links:
    - endpoints: ["ts1:eth1", "sw1:p0"]
    - endpoints: ["r1:eth1", "sw1:p1"]
    - endpoints: ["bird:eth1", "sw1:p2"]
    - endpoints: ["frr:eth1", "sw1:p3"]
    - endpoints: ["r1:eth2", "sw2:p0"]
    - endpoints: ["bird:eth2", "sw2:p1"]
    - endpoints: ["frr:eth2", "sw2:p2"]
x-tsbgp:
  addresses:
    "ts1:eth1": ["198.51.100.1/24", "2001:db8:1::1/64"]
    "ts1:lo": ["${TS_FAR}/32", "${TS_FAR6}/128"]
    "r1:eth1": ["198.51.100.254/24", "2001:db8:1::254/64"]
    "r1:eth2": ["192.0.2.254/24", "2001:db8:2::254/64"]
    "bird:eth1": ["198.51.100.11/24", "2001:db8:1::11/64"]
    "bird:eth2": ["192.0.2.11/24", "2001:db8:2::11/64"]
    "frr:eth1": ["198.51.100.21/24", "2001:db8:1::21/64"]
    "frr:eth2": ["192.0.2.21/24", "2001:db8:2::21/64"]
`,
    );
    await run.up(loadTopology(join(dir, 'ttl.clab.yml')), () => rmSync(dir, { recursive: true, force: true }));
    run.lab.mustExec('r1', ['ip', 'route', 'add', `${TS_FAR}/32`, 'via', '198.51.100.1']);
    run.lab.mustExec('r1', ['ip', '-6', 'route', 'add', `${TS_FAR6}/128`, 'via', '2001:db8:1::1']);
  });
  afterAll(() => run.down());

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('the far addresses are two hops away, through r1 (IPv4 and IPv6)', () => {
      // traceroute-free check: a ping with TTL (hop limit) 1 from ts1's far address dies at r1, 2 arrives
      for (const [far, to, near] of [
        [TS_FAR, '192.0.2.11', '198.51.100.11'],
        [TS_FAR6, '2001:db8:2::11', '2001:db8:1::11'],
      ]) {
        expect(run.lab.exec('ts1', ['ping', '-c', '1', '-W', '2', '-t', '1', '-I', far, to]).status).not.toBe(0);
        expect(run.lab.exec('ts1', ['ping', '-c', '1', '-W', '2', '-t', '2', '-I', far, to]).status).toBe(0);
        expect(run.lab.exec('ts1', ['ping', '-c', '1', '-W', '2', '-t', '1', near]).status).toBe(0);
      }
    });

    it('hops 1 on a direct link: up; hops 1 to a peer two hops away: refused; hops 2: up (IPv4 and IPv6)', async () => {
      type P = { addr: string; asn: number; local: string; route: string; bird?: string; frr?: string };
      const near: P[] = [
        { addr: '198.51.100.11', asn: BIRD_AS, local: '198.51.100.1', route: '198.18.11.0/24', bird: 'near' },
        { addr: '198.51.100.21', asn: FRR_AS, local: '198.51.100.1', route: '198.18.21.0/24', frr: '198.51.100.1' },
        { addr: '2001:db8:1::11', asn: BIRD_AS, local: '2001:db8:1::1', route: '2001:db8:1011::/48', bird: 'near6' },
        { addr: '2001:db8:1::21', asn: FRR_AS, local: '2001:db8:1::1', route: '2001:db8:1021::/48', frr: '2001:db8:1::1' },
      ];
      const far: P[] = [
        { addr: '192.0.2.11', asn: BIRD_AS, local: TS_FAR, route: '198.18.11.0/24', bird: 'far' },
        { addr: '192.0.2.21', asn: FRR_AS, local: TS_FAR, route: '198.18.21.0/24', frr: TS_FAR },
        { addr: '2001:db8:2::11', asn: BIRD_AS, local: TS_FAR6, route: '2001:db8:1011::/48', bird: 'far6' },
        { addr: '2001:db8:2::21', asn: FRR_AS, local: TS_FAR6, route: '2001:db8:1021::/48', frr: TS_FAR6 },
      ];
      const daemonState = (p: P): string | undefined =>
        p.bird ? run.lab.birdProtocols('bird').find((x) => x.name === p.bird)?.info : run.lab.frrNeighbors('frr')[p.frr!]?.bgpState;
      const upWithRoute = async (p: P): Promise<void> => {
        await run.ts.waitEstablished(p.addr, 60_000);
        await until(
          async () => expect((await run.ts.request<{ prefix: string }[]>({ cmd: 'received', peer: p.addr })).map((r) => r.prefix)).toEqual([p.route]),
          30_000,
        );
        await until(() => expect({ peer: p.addr, daemon: daemonState(p) }).toEqual({ peer: p.addr, daemon: 'Established' }), 30_000);
      };
      await run.restartTs({
        speaker: { asn: TS_AS, routerId: '198.51.100.1', listen: { port: 179 }, coalesceMs: 5, maxDelayMs: 50 },
        peers: [...near, ...far].map((p) => peer(p.addr, p.asn, p.local, 1)),
        routes: [{ prefix: '203.0.113.128/28' }, { prefix: '2001:db8:1001::/48' }],
        verbose: true,
      });
      for (const p of near) await upWithRoute(p);

      // Far, hops 1: both sides keep trying (ConnectRetry 2 s); five rounds without a message from the peer.
      const t0 = Date.now();
      while (Date.now() - t0 < 10_000) {
        for (const p of far) {
          const st = await run.ts.peer(p.addr);
          // tsbgp's SYN-ACKs get no answer through its minimum TTL, and the daemon's SYNs are
          // closed at accept (their TTL, 254, is read from the saved SYN before any byte)
          expect({ peer: p.addr, established: st.state === 'Established', messagesIn: st.counters.messagesIn }).toEqual({
            peer: p.addr,
            established: false,
            messagesIn: 0,
          });
        }
        await sleep(500);
      }
      const log = readFileSync(run.ts.logFile, 'utf8');
      for (const p of far) expect(log).toContain(`the SYN from ${p.addr} arrived with TTL 254, so it is 2 hops away; 1 allowed`);
      for (const p of far) expect({ peer: p.addr, daemon: daemonState(p) }).not.toEqual({ peer: p.addr, daemon: 'Established' });
      // the direct sessions were not disturbed
      for (const p of near) expect({ peer: p.addr, state: (await run.ts.peer(p.addr)).state }).toEqual({ peer: p.addr, state: 'Established' });

      // hops 2: the daemons' packets (TTL 254 on arrival) pass
      for (const p of far) await run.ts.request({ cmd: 'updatePeer', peer: peer(p.addr, p.asn, p.local, 2) });
      for (const p of far) await upWithRoute(p);
    }, 110_000);
  });
});
