/**
 * TCP-MD5 (RFC 2385) against BIRD, FRR, GoBGP and ExaBGP in one lab: every
 * daemon hangs off one bridge with tsbgp (ts1). Per daemon:
 *   S1  ts .1 ↔ d .x1  daemon passive: tsbgp connects (key before its SYN)
 *   S2  ts .2 ↔ d .x2  tsbgp passive: the daemon connects (key on tsbgp's listener)
 *   S3  ts .3 ↔ d .x3  keys differ: no session, status says why, the others run
 * plus IPv6 with a key: BIRD and ExaBGP passive over ::1 ↔ ::11 / ::41
 * (tsbgp connects), FRR and GoBGP connecting over ::2 ↔ ::21 / ::31 (tsbgp
 * passive: a v6 key on the dual-stack listener, whose IPv4 keys are
 * v4-mapped). ExaBGP listens per neighbor (`passive true; listen 179;`: its
 * listener on the neighbor's local address carries that neighbor's key), and
 * reports what it receives through an API process that appends ExaBGP's JSON
 * to api.jsonl. Then a key is rotated on both sides and the session comes
 * back: S1 (tsbgp connects) with BIRD (`configure`), FRR (vtysh), GoBGP
 * (new gobgpd.toml, SIGHUP) and ExaBGP; S2 (ExaBGP connects: tsbgp's
 * listener key replaced) with ExaBGP (new exabgp.conf, ExaBGP restarted).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerOptions } from '../../src/speaker/types.js';
import { MD5_NO_ANSWER_HINT } from '../../src/speaker/transport-hint.js';
import { cleanupStale, gobgpEstablished } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import { loadTopology } from '../lab/topology.js';
import { until } from './harness.js';
import { InteropRun } from './scenarios.js';
import { requireSpeaker } from './speaker-client.js';

const available = requireLab(['bird', 'frr', 'gobgp', 'exabgp', 'tsbgp']);
const withSpeaker = available.ok && requireSpeaker();

const TS_AS = 65001;
const TS_ROUTE = '203.0.113.0/28';
type Name = 'bird' | 'frr' | 'gobgp' | 'exa';
const D: Record<Name, { as: number; base: number; route: string }> = {
  bird: { as: 65011, base: 10, route: '198.18.11.0/24' },
  frr: { as: 65021, base: 20, route: '198.18.21.0/24' },
  gobgp: { as: 65031, base: 30, route: '198.18.31.0/24' },
  exa: { as: 65041, base: 40, route: '198.18.41.0/24' },
};
const addr = (d: Name, s: 1 | 2 | 3): string => `198.51.100.${D[d].base + s}`;
const key = (d: Name, s: 1 | 2 | 3): string => `${d}-s${s}-Key!`;
const BIRD_V6 = '2001:db8:51::11';
const FRR_V6 = '2001:db8:51::21';
const GOBGP_V6 = '2001:db8:51::31';
const EXA_V6 = '2001:db8:51::41';

function birdConf(k1: string): string {
  const p = (s: 1 | 2 | 3, extra: string) =>
    `protocol bgp s${s} { local ${addr('bird', s)} as ${D.bird.as}; neighbor 198.51.100.${s} as ${TS_AS}; hold time 9; keepalive time 3; connect retry time 2; error wait time 1, 4; ${extra} ipv4 { import all; export where proto = "gen"; }; }`;
  return [
    `router id ${addr('bird', 1)};`,
    'protocol device {}',
    `protocol static gen { ipv4; route ${D.bird.route} blackhole; }`,
    `protocol static gen6 { ipv6; route 2001:db8:1011::/48 blackhole; }`,
    p(1, `passive on; password "${k1}";`),
    p(2, `password "${key('bird', 2)}";`),
    p(3, 'password "not-the-key";'),
    `protocol bgp v6 { local ${BIRD_V6} as ${D.bird.as}; neighbor 2001:db8:51::1 as ${TS_AS}; hold time 9; keepalive time 3; passive on; password "bird-v6-Key"; ipv6 { import all; export where proto = "gen6"; }; }`,
    '',
  ].join('\n');
}

function frrConf(): string {
  const n = (s: 1 | 2 | 3, pw: string, passive: boolean) => [
    ` neighbor 198.51.100.${s} remote-as ${TS_AS}`,
    ` neighbor 198.51.100.${s} update-source ${addr('frr', s)}`,
    ` neighbor 198.51.100.${s} timers 3 9`,
    ` neighbor 198.51.100.${s} timers connect 2`,
    ` neighbor 198.51.100.${s} password ${pw}`,
    ...(passive ? [` neighbor 198.51.100.${s} passive`] : []),
  ];
  return [
    'frr defaults traditional',
    'hostname frr',
    `ip route ${D.frr.route} blackhole`,
    `router bgp ${D.frr.as}`,
    ` bgp router-id ${addr('frr', 1)}`,
    ' no bgp ebgp-requires-policy',
    ' no bgp default ipv4-unicast',
    ...n(1, key('frr', 1), true),
    ...n(2, key('frr', 2), false),
    ...n(3, 'not-the-key', false),
    ' neighbor 2001:db8:51::2 remote-as 65001',
    ` neighbor 2001:db8:51::2 update-source ${FRR_V6}`,
    ' neighbor 2001:db8:51::2 timers 3 9',
    ' neighbor 2001:db8:51::2 timers connect 2',
    ' neighbor 2001:db8:51::2 password frr-v6-Key',
    ' address-family ipv4 unicast',
    `  network ${D.frr.route}`,
    '  neighbor 198.51.100.1 activate',
    '  neighbor 198.51.100.2 activate',
    '  neighbor 198.51.100.3 activate',
    ' exit-address-family',
    ' address-family ipv6 unicast',
    '  neighbor 2001:db8:51::2 activate',
    ' exit-address-family',
    '',
  ].join('\n');
}

function gobgpConf(k1: string): string {
  const n = (s: 1 | 2 | 3, pw: string, passive: boolean) =>
    [
      '[[neighbors]]',
      '  [neighbors.config]',
      `    neighbor-address = "198.51.100.${s}"`,
      `    peer-as = ${TS_AS}`,
      `    auth-password = "${pw}"`,
      '  [neighbors.timers.config]',
      '    connect-retry = 2',
      '    hold-time = 9',
      '    keepalive-interval = 3',
      '  [neighbors.transport.config]',
      `    local-address = "${addr('gobgp', s)}"`,
      `    passive-mode = ${passive}`,
      '',
    ].join('\n');
  return [
    '[global.config]',
    `  as = ${D.gobgp.as}`,
    `  router-id = "${addr('gobgp', 1)}"`,
    '',
    n(1, k1, true),
    n(2, key('gobgp', 2), false),
    n(3, 'not-the-key', false),
    '[[neighbors]]',
    '  [neighbors.config]',
    '    neighbor-address = "2001:db8:51::2"',
    `    peer-as = ${TS_AS}`,
    '    auth-password = "gobgp-v6-Key"',
    '  [neighbors.timers.config]',
    '    connect-retry = 2',
    '    hold-time = 9',
    '    keepalive-interval = 3',
    '  [neighbors.transport.config]',
    `    local-address = "${GOBGP_V6}"`,
    '  [[neighbors.afi-safis]]',
    '    [neighbors.afi-safis.config]',
    '      afi-safi-name = "ipv6-unicast"',
    '',
  ].join('\n');
}

/** ExaBGP's API process: appends every JSON message ExaBGP sends (what it receives) to api.jsonl. Not `exec cat`: the shell keeps ExaBGP's stdout pipe open, whose end ExaBGP takes for the process's death. */
const EXA_API = '#!/bin/sh\ncat >> "$(dirname "$0")/api.jsonl"\n';

/** S1 and the IPv6 neighbor are passive and listen (on their local address, with their key); S2 and S3 connect. */
function exaConf(api: string, k1: string, k2: string): string {
  const n = (peerAddr: string, local: string, pw: string, family: string, route: string, passive: boolean) =>
    [
      `neighbor ${peerAddr} {`,
      `  router-id ${addr('exa', 2)};`,
      `  local-address ${local};`,
      `  local-as ${D.exa.as};`,
      `  peer-as ${TS_AS};`,
      '  hold-time 9;',
      `  md5-password "${pw}";`,
      ...(passive ? ['  passive true;', '  listen 179;'] : []),
      `  family { ${family} unicast; }`,
      '  api { processes [ tsapi ]; neighbor-changes; receive { parsed; update; } }',
      `  static { route ${route} next-hop self; }`,
      '}',
      '',
    ].join('\n');
  return [
    `process tsapi {\n  run ${api};\n  encoder json;\n}\n`,
    n('198.51.100.1', addr('exa', 1), k1, 'ipv4', D.exa.route, true),
    n('198.51.100.2', addr('exa', 2), k2, 'ipv4', D.exa.route, false),
    n('198.51.100.3', addr('exa', 3), 'not-the-key', 'ipv4', D.exa.route, false),
    n('2001:db8:51::1', EXA_V6, 'exa-v6-Key', 'ipv6', '2001:db8:1041::/48', true),
  ].join('\n');
}

function peer(d: Name, s: 1 | 2 | 3, extra: Partial<PeerOptions> = {}): PeerOptions {
  return {
    address: addr(d, s),
    asn: D[d].as,
    localAddress: `198.51.100.${s}`,
    families: ['ipv4'],
    holdTime: 9,
    keepaliveTime: 3,
    connectRetryTime: 2,
    idleHoldTime: 1,
    gracefulRestart: false,
    password: s === 3 ? `${d}-right-key` : key(d, s),
    passive: s === 2,
    description: `${d} S${s}`,
    ...extra,
  };
}

describe.skipIf(!available.ok)('TCP-MD5 against BIRD, FRR, GoBGP and ExaBGP', () => {
  const run = new InteropRun();
  let dir = '';
  const names: Name[] = ['bird', 'frr', 'gobgp', 'exa'];
  const sessionsOf = (): (1 | 2 | 3)[] => [1, 2, 3];
  const exaApi = (): string => join(dir, 'exa-api.sh');

  beforeAll(async () => {
    cleanupStale();
    dir = mkdtempSync(join(tmpdir(), `tsbgp-${process.pid}-md5-`));
    writeFileSync(join(dir, 'bird.conf'), birdConf(key('bird', 1)));
    writeFileSync(join(dir, 'frr.conf'), frrConf());
    writeFileSync(join(dir, 'gobgpd.toml'), gobgpConf(key('gobgp', 1)));
    writeFileSync(exaApi(), EXA_API, { mode: 0o755 });
    writeFileSync(join(dir, 'exabgp.conf'), exaConf(exaApi(), key('exa', 1), key('exa', 2)));
    const v6: Record<Name, string> = { bird: BIRD_V6, frr: FRR_V6, gobgp: GOBGP_V6, exa: EXA_V6 };
    const addrs = (d: Name) => JSON.stringify([1, 2, 3].map((s) => `${addr(d, s as 1)}/24`).concat([`${v6[d]}/64`]));
    writeFileSync(
      join(dir, 'md5.clab.yml'),
      [
        'name: md5',
        'topology:',
        '  nodes:',
        '    ts1: { kind: tsbgp }',
        '    sw: { kind: bridge }',
        '    bird: { kind: bird, startup-config: bird.conf }',
        '    frr: { kind: frr, startup-config: frr.conf }',
        '    gobgp: { kind: gobgp, startup-config: gobgpd.toml }',
        '    exa: { kind: exabgp, startup-config: exabgp.conf }',
        '  links:',
        ...['ts1', ...names].map((n, i) => `    - endpoints: ["${n}:eth1", "sw:p${i}"]`),
        'x-tsbgp:',
        '  addresses:',
        `    "ts1:eth1": ["198.51.100.1/24", "198.51.100.2/24", "198.51.100.3/24", "2001:db8:51::1/64", "2001:db8:51::2/64"]`,
        ...names.map((d) => `    "${d}:eth1": ${addrs(d)}`),
        '',
      ].join('\n'),
    );
    await run.up(loadTopology(join(dir, 'md5.clab.yml')), () => rmSync(dir, { recursive: true, force: true }));
    run.lab.mustExec('gobgp', ['gobgp', 'global', 'rib', 'add', D.gobgp.route, '-a', 'ipv4']);
    run.lab.mustExec('gobgp', ['gobgp', 'global', 'rib', 'add', '2001:db8:1031::/48', '-a', 'ipv6']);
  });
  afterAll(() => run.down());

  const received = async (peerAddr: string): Promise<string[]> =>
    (await run.ts.request<{ prefix: string }[]>({ cmd: 'received', peer: peerAddr })).map((r) => r.prefix);
  /** The prefixes ExaBGP has received on its session with `peerAddr` (tsbgp's address), from its API stream, since `sinceMs`. */
  const exaReceived = (peerAddr: string, sinceMs = 0): string[] => {
    const file = join(dir, 'api.jsonl');
    if (!existsSync(file)) return [];
    const out: string[] = [];
    // whole lines only (the last may be mid-write); updates only (ExaBGP 4.2 quotes some route-refresh strings twice)
    for (const line of readFileSync(file, 'utf8')
      .split('\n')
      .slice(0, -1)
      .filter((l) => l.includes('"type": "update"'))) {
      const m = JSON.parse(line) as {
        time: number;
        neighbor: { address: { peer: string }; direction?: string; message?: { update?: { announce?: Record<string, Record<string, { nlri: string }[]>> } } };
      };
      if (m.neighbor.address.peer !== peerAddr || m.neighbor.direction !== 'receive' || m.time * 1000 < sinceMs) continue;
      for (const byNextHop of Object.values(m.neighbor.message?.update?.announce ?? {}))
        for (const list of Object.values(byNextHop)) out.push(...list.map((n) => n.nlri));
    }
    return [...new Set(out)].sort();
  };
  /** tsbgp's route as the daemon holds it, from S1 and S2. */
  const daemonHasTsRoute: Record<Name, () => boolean> = {
    bird: () => /198\.51\.100\.1 on eth1/.test(run.lab.mustExec('bird', ['birdc', 'show', 'route', TS_ROUTE, 'protocol', 's1'])),
    frr: () => (run.lab.frrRib('frr')[TS_ROUTE] ?? []).length >= 2,
    gobgp: () => (run.lab.gobgpRib('gobgp')[TS_ROUTE] ?? []).length >= 2,
    exa: () => exaReceived('198.51.100.1').includes(TS_ROUTE) && exaReceived('198.51.100.2').includes(TS_ROUTE),
  };

  describe.skipIf(!withSpeaker)('with the tsbgp speaker', () => {
    it('right key: Established whichever side connects (IPv4 and IPv6), routes both ways; wrong key: no session, the hint, the rest unaffected', async () => {
      const peers = names.flatMap((d) => sessionsOf().map((s) => peer(d, s)));
      peers.push({ ...peer('bird', 1), address: BIRD_V6, localAddress: '2001:db8:51::1', families: ['ipv6'], password: 'bird-v6-Key', description: 'bird v6' });
      peers.push({ ...peer('frr', 2), address: FRR_V6, localAddress: '2001:db8:51::2', families: ['ipv6'], password: 'frr-v6-Key', description: 'frr v6' });
      peers.push({
        ...peer('gobgp', 2),
        address: GOBGP_V6,
        localAddress: '2001:db8:51::2',
        families: ['ipv6'],
        password: 'gobgp-v6-Key',
        description: 'gobgp v6',
      });
      peers.push({ ...peer('exa', 1), address: EXA_V6, localAddress: '2001:db8:51::1', families: ['ipv6'], password: 'exa-v6-Key', description: 'exa v6' });
      const started = Date.now();
      await run.restartTs({
        speaker: { asn: TS_AS, routerId: '198.51.100.1', listen: { port: 179 }, coalesceMs: 5, maxDelayMs: 50 },
        peers,
        routes: [{ prefix: TS_ROUTE }, { prefix: '2001:db8:1001::/48' }],
        verbose: true,
      });
      for (const d of names) {
        for (const s of sessionsOf().filter((x) => x !== 3)) {
          await run.ts.waitEstablished(addr(d, s), 60_000);
          await until(async () => expect(await received(addr(d, s))).toEqual([D[d].route]), 30_000);
        }
      }
      await run.ts.waitEstablished(BIRD_V6, 60_000);
      await until(async () => expect(await received(BIRD_V6)).toEqual(['2001:db8:1011::/48']), 30_000);
      await run.ts.waitEstablished(FRR_V6, 60_000);
      await until(() => expect(run.lab.frrNeighbors('frr')['2001:db8:51::2']?.bgpState).toBe('Established'), 30_000);
      await run.ts.waitEstablished(GOBGP_V6, 60_000);
      await until(async () => expect(await received(GOBGP_V6)).toEqual(['2001:db8:1031::/48']), 30_000);
      await run.ts.waitEstablished(EXA_V6, 60_000);
      await until(async () => expect(await received(EXA_V6)).toEqual(['2001:db8:1041::/48']), 30_000);
      // the daemons hold tsbgp's route from S1 and S2, and over IPv6
      for (const d of names) await until(() => expect(daemonHasTsRoute[d]()).toBe(true), 30_000);
      await until(() => expect(run.lab.mustExec('bird', ['birdc', 'show', 'route', '2001:db8:1001::/48'])).toContain('2001:db8:1001::/48'), 30_000);
      await until(() => expect(run.lab.frrRib('frr', 6)['2001:db8:1001::/48']).toBeDefined(), 30_000);
      await until(() => expect(run.lab.gobgpRib('gobgp', 6)['2001:db8:1001::/48']).toBeDefined(), 30_000);
      await until(() => expect(exaReceived('2001:db8:51::1')).toEqual(['2001:db8:1001::/48']), 30_000);
      expect(
        run.lab
          .birdProtocols('bird')
          .filter((p) => p.name === 's1' || p.name === 's2')
          .map((p) => p.info),
      ).toEqual(['Established', 'Established']);
      await until(() => expect(gobgpEstablished(run.lab.gobgpNeighbors('gobgp').find((n) => n.conf.neighbor_address === '198.51.100.2')!)).toBe(true), 30_000);

      // S3: both sides retry every 2 s; the kernel drops every segment (wrong or missing signature)
      await until(
        async () => {
          const st = await run.ts.status();
          for (const d of names) {
            const p = st.find((x) => x.address === addr(d, 3))!;
            expect(p.state).not.toBe('Established');
            expect(p.counters.messagesIn).toBe(0);
            expect(p.hint).toBe(MD5_NO_ANSWER_HINT);
          }
        },
        40_000,
        1000,
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
      const st = await run.ts.status();
      // the rest of the speaker unaffected: every right-key session still up, on its first connection
      for (const p of st.filter((x) => !x.address.endsWith('3'))) {
        expect({ peer: p.address, state: p.state, hint: p.hint }).toEqual({ peer: p.address, state: 'Established', hint: undefined });
      }
      expect(run.lab.birdProtocols('bird').find((p) => p.name === 's3')?.info).not.toBe('Established');
      expect(run.lab.frrNeighbors('frr')['198.51.100.3']?.bgpState).not.toBe('Established');
    }, 120_000);

    it('a key rotated on both sides brings the session back (S1: BIRD, FRR, GoBGP; S1 and S2: ExaBGP)', async () => {
      const rotated: [Name, 1 | 2][] = [
        ['bird', 1],
        ['frr', 1],
        ['gobgp', 1],
        ['exa', 1],
        ['exa', 2],
      ];
      const before = new Map<string, number>();
      for (const [d, s] of rotated) before.set(addr(d, s), new Date((await run.ts.peer(addr(d, s))).since).getTime());
      const rotatedAt = Date.now();
      // BIRD: new config, `configure` (a changed password restarts the protocol)
      writeFileSync(join(run.lab.node('bird').work, 'bird.conf'), birdConf('bird-rotated-Key'));
      run.lab.mustExec('bird', ['birdc', 'configure']);
      run.lab.mustExec('frr', ['vtysh', '-c', 'configure terminal', '-c', `router bgp ${D.frr.as}`, '-c', 'neighbor 198.51.100.1 password frr-rotated-Key']);
      // GoBGP: new gobgpd.toml, SIGHUP (gobgpd re-reads it and updates the changed neighbor, its listener's key included)
      const gobgpd = run.lab.node('gobgp');
      writeFileSync(join(gobgpd.work, 'gobgpd.toml'), gobgpConf('gobgp-rotated-Key'));
      process.kill(gobgpd.pids[0]!, 'SIGHUP');
      // ExaBGP: new exabgp.conf, restarted (its SIGUSR1 reload is ignored while a peer, S3 here, has routes not yet sent)
      writeFileSync(join(run.lab.node('exa').work, 'exabgp.conf'), exaConf(exaApi(), 'exa-rotated-Key', 'exa-rotated-Key'));
      await run.lab.restartExabgp('exa');
      for (const [d, s] of rotated) await run.ts.request({ cmd: 'updatePeer', peer: peer(d, s, { password: `${d}-rotated-Key` }) });
      for (const [d, s] of rotated) {
        const st = await until(async () => {
          const p = await run.ts.peer(addr(d, s));
          expect({ peer: p.address, state: p.state, newSession: new Date(p.since).getTime() > before.get(addr(d, s))! }).toEqual({
            peer: addr(d, s),
            state: 'Established',
            newSession: true,
          });
          return p;
        }, 60_000);
        expect(st.hint).toBeUndefined();
        await until(async () => expect(await received(addr(d, s))).toEqual([D[d].route]), 30_000);
      }
      await until(() => expect(run.lab.birdProtocols('bird').find((p) => p.name === 's1')?.info).toBe('Established'), 30_000);
      await until(() => expect(run.lab.frrNeighbors('frr')['198.51.100.1']?.bgpState).toBe('Established'), 30_000);
      await until(() => expect(gobgpEstablished(run.lab.gobgpNeighbors('gobgp').find((n) => n.conf.neighbor_address === '198.51.100.1')!)).toBe(true), 30_000);
      // ExaBGP got tsbgp's route again on the new sessions; its IPv6 session (key unchanged) is back too
      for (const a of ['198.51.100.1', '198.51.100.2']) await until(() => expect(exaReceived(a, rotatedAt)).toEqual([TS_ROUTE]), 30_000);
      await run.ts.waitEstablished(EXA_V6, 60_000);
      // the sessions not rotated stayed up throughout
      for (const a of [addr('bird', 2), addr('frr', 2), addr('gobgp', 2), BIRD_V6, FRR_V6, GOBGP_V6]) {
        const p = await run.ts.peer(a);
        expect({ peer: a, state: p.state, upSinceBeforeRotation: new Date(p.since).getTime() < rotatedAt }).toEqual({
          peer: a,
          state: 'Established',
          upSinceBeforeRotation: true,
        });
      }
    }, 90_000);
  });
});
