/**
 * tsbgp's BFD against FRR's bfdd and BIRD's `protocol bfd`, in namespaces:
 *
 *   f1 (FRR, AS 65002) 198.51.100.11 ── eth1 ── ts1 (tsbgp, AS 65001) ── eth2 ── 203.0.113.11 b1 (BIRD, AS 65003)
 *
 * BGP with FRR is held back (nftables) until BFD is Up: when it then
 * establishes, FRR's bgpd re-registers its BFD session with bfdd, whose old
 * session says Down ("Neighbor Signaled Session Down", which we never did)
 * and is replaced by a new one; tsbgp's BFD goes Down and Up again, but
 * tsbgp does not take BGP down for it (FRR's own bgpd may: it hears of its
 * old session going down and sends Cease 10) (issue 32: the whole
 * suite met this order by chance, and the BGP reset that followed). Every
 * measurement starts from a stable Up (both ends Up, 300 ms × 3 agreed) and
 * a flap fails with the last down's diagnostics in the message.
 *
 * Sessions come up with BFD 300 ms × 3 on both ends; timer changes on either
 * side go through Poll/Final without a flap; the link is cut by an nftables
 * rule in the router's namespace (no TCP reset, no netem here) and tsbgp's
 * BGP session must go down within the detection time, its routes with it;
 * the rule removed, BFD and BGP come back. Hold time is 90 s throughout, so
 * only BFD can explain a fast down. tsbgp programs its namespace's kernel
 * table (`kernel`, proto 12): the routes learned from the cut peer leave it
 * too. FRR's packets rewritten to TTL 254 (nftables) are dropped by our
 * socket filter (RFC 5881 §5): they neither keep nor bring the session up.
 * Measured figures are printed ("BFD figure:") for src/bfd/README.md.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerOptions, PeerStatus } from '../../src/speaker/types.js';
import { cleanupStale, Lab } from '../lab/netns.js';
import { requireLab } from '../lab/require.js';
import type { Topology } from '../lab/topology.js';
import { requireSpeaker, SpeakerProcess } from './speaker-client.js';

const available = requireLab(['frr', 'bird', 'tsbgp'], { binaries: ['nft', '/usr/lib/frr/bfdd'] });
const withSpeaker = available.ok && requireSpeaker();

const TS = { frr: '198.51.100.1', bird: '203.0.113.1' };
const FRR = '198.51.100.11';
const BIRD = '203.0.113.11';
const FAST = { minTx: 300, minRx: 300, multiplier: 3 };
/** Asserted bound on "cut → BGP down" (nominal ≤ 900 ms + one interval); slack for a loaded 2-core machine. */
const DOWN_BOUND_MS = 3000;

const frrConf = (tx: number): string => `frr defaults traditional
hostname f1
!
bfd
 profile fast
  receive-interval 300
  transmit-interval ${tx}
  detect-multiplier 3
 !
!
router bgp 65002
 bgp router-id ${FRR}
 no bgp ebgp-requires-policy
 no bgp network import-check
 neighbor ${TS.frr} remote-as 65001
 neighbor ${TS.frr} bfd profile fast
 neighbor ${TS.frr} timers connect 1
 address-family ipv4 unicast
  network 192.0.2.0/25
 exit-address-family
!
`;

const birdConf = (tx: number): string => `router id ${BIRD};
timeformat protocol "%F %T.%3f";
protocol device {}
protocol static s4 { ipv4; route 192.0.2.128/25 blackhole; }
protocol bfd {
  interface "eth1" { min rx interval 300 ms; min tx interval ${tx} ms; multiplier 3; };
}
protocol bgp ts {
  local ${BIRD} as 65003; neighbor ${TS.bird} as 65001;
  bfd on;
  hold time 90; connect delay time 1; connect retry time 1; error wait time 1, 2; graceful restart off;
  ipv4 { import all; export all; };
}
`;

const peer = (address: string, asn: number, local: string, bfd: PeerOptions['bfd']): PeerOptions => ({
  address,
  asn,
  localAddress: local,
  families: ['ipv4'],
  holdTime: 90,
  keepaliveTime: 30,
  connectRetryTime: 1,
  idleHoldTime: 1,
  gracefulRestart: false,
  bfd,
});

async function until<T>(what: string, ms: number, f: () => Promise<T | undefined | false> | T | undefined | false, everyMs = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe.skipIf(!available.ok || !withSpeaker)('BFD against FRR bfdd and BIRD', () => {
  let lab: Lab;
  let ts: SpeakerProcess;
  let dir: string;
  const figures: Record<string, number> = {};

  beforeAll(async () => {
    cleanupStale();
    dir = mkdtempSync(join(tmpdir(), `tsbgp-i19-${process.pid}-bfd-`));
    writeFileSync(join(dir, 'f1.conf'), frrConf(300));
    writeFileSync(join(dir, 'b1.conf'), birdConf(300));
    const topo: Topology = {
      name: 'bfd',
      file: join(dir, 'bfd.clab.yml'),
      dir,
      nodes: [
        { name: 'ts1', kind: 'tsbgp', binds: [], exec: [], env: {} },
        { name: 'f1', kind: 'frr', config: join(dir, 'f1.conf'), binds: [], exec: [], env: {} },
        { name: 'b1', kind: 'bird', config: join(dir, 'b1.conf'), binds: [], exec: [], env: {} },
      ],
      links: [
        { a: { node: 'ts1', iface: 'eth1' }, b: { node: 'f1', iface: 'eth1' } },
        { a: { node: 'ts1', iface: 'eth2' }, b: { node: 'b1', iface: 'eth1' } },
      ],
      addresses: { 'ts1:eth1': [`${TS.frr}/24`], 'f1:eth1': [`${FRR}/24`], 'ts1:eth2': [`${TS.bird}/24`], 'b1:eth1': [`${BIRD}/24`] },
    };
    lab = await Lab.up(topo, { runId: `i19${process.pid}`.slice(0, 12), ephemeral: true });
    // BGP with FRR held back until BFD is Up: the order in which FRR restarts its BFD session (first test)
    nft(
      'f1',
      `table inet i19bgp {\n chain in { type filter hook input priority 0; policy accept; tcp dport 179 drop; tcp sport 179 drop; }\n chain out { type filter hook output priority 0; policy accept; tcp dport 179 drop; tcp sport 179 drop; }\n}`,
    );
    ts = await SpeakerProcess.start(lab, 'ts1', {
      // kernel: ts1's main table, proto 12; no periodic scan, the diff alone
      speaker: { asn: 65001, routerId: TS.frr, listen: { port: 179 }, coalesceMs: 5, maxDelayMs: 50, kernel: { scanSeconds: 0 } },
      peers: [peer(FRR, 65002, TS.frr, FAST), peer(BIRD, 65003, TS.bird, FAST)],
      routes: [{ prefix: '198.18.0.0/24' }],
      verbose: true,
    });
  }, 120_000);

  afterAll(async () => {
    await ts?.stop().catch(() => undefined);
    lab?.teardown();
    if (dir) rmSync(dir, { recursive: true, force: true });
    for (const [k, v] of Object.entries(figures)) console.log(`BFD figure: ${k}: ${v} ms`);
  });

  const status = (addr: string): Promise<PeerStatus> => ts.peer(addr);
  const bfdUp = (addr: string, ms = 30_000) =>
    until(`tsbgp's BFD with ${addr} Up`, ms, async () => {
      const s = await status(addr);
      return s.state === 'Established' && s.bfd?.state === 'Up' ? s : undefined;
    });
  const received = async (addr: string, prefix: string) => (await ts.received(addr)).some((r) => r.prefix === prefix);

  const vtysh = (cmd: string): string => lab.mustExec('f1', ['vtysh', '-c', cmd]);
  type FrrBfd = {
    peer: string;
    id: number;
    status: string;
    diagnostic: string;
    'remote-diagnostic': string;
    'transmit-interval': number;
    'receive-interval': number;
    'remote-transmit-interval': number;
    'remote-receive-interval': number;
    'remote-detect-multiplier': number;
  };
  const frrBfd = (): FrrBfd | undefined => {
    const list = JSON.parse(vtysh('show bfd peers json')) as FrrBfd[];
    return list.find((p) => p.peer === TS.frr);
  };
  const frrHas = (prefix: string): boolean =>
    prefix in ((JSON.parse(vtysh('show bgp ipv4 unicast json')) as { routes?: Record<string, unknown> }).routes ?? {});
  const birdc = (...args: string[]): string => lab.mustExec('b1', ['birdc', ...args]);
  const birdBfd = (): { state: string; interval: string; timeout: string } | undefined => {
    const line = birdc('show', 'bfd', 'sessions')
      .split('\n')
      .find((l) => l.trim().startsWith(TS.bird));
    if (!line) return undefined;
    const f = line.trim().split(/\s+/);
    // IP address  Interface  State  Since(2 words)  Interval  Timeout
    return { state: f[2], interval: f.at(-2)!, timeout: f.at(-1)! };
  };
  /** BIRD's routes learned from tsbgp (`show route protocol ts`: one line per prefix). */
  const birdHas = (prefix: string): boolean => lab.mustExec('b1', ['birdc', 'show', 'route', 'protocol', 'ts']).includes(prefix);

  /** tsbgp's routes in ts1's kernel table: prefix → gateway. */
  const kernelRoutes = (): Record<string, string> => {
    const rows = JSON.parse(lab.mustExec('ts1', ['ip', '-j', 'route', 'show', 'proto', '12']).trim() || '[]') as { dst: string; gateway?: string }[];
    return Object.fromEntries(rows.map((r) => [r.dst, r.gateway ?? '?']));
  };

  function nft(node: 'f1' | 'b1', script: string): void {
    const r = lab.exec(node, ['sh', '-c', `nft -f - <<'EOF'\n${script}\nEOF`]);
    if (r.status !== 0) throw new Error(`nft in ${node}: ${r.stderr}`);
  }
  const cutLink = (node: 'f1' | 'b1', addr: string): void =>
    nft(
      node,
      `table inet i19cut {\n chain in { type filter hook input priority 0; policy accept; ip saddr ${addr} drop; }\n chain out { type filter hook output priority 0; policy accept; ip daddr ${addr} drop; }\n}`,
    );
  const restoreLink = (node: 'f1' | 'b1'): void => nft(node, 'delete table inet i19cut');

  /**
   * Issue 32: measure only from a stable Up: BGP Established, tsbgp's BFD Up
   * with the remote Up, 300 ms × 3 agreed both ways, and the daemon's own
   * session Up at 300 ms. The message shows both ends should it not come.
   */
  const stableUp = async (addr: string, ms = 30_000): Promise<PeerStatus> => {
    let last: PeerStatus | undefined;
    let theirs: unknown;
    return until(`a stable BFD Up with ${addr} (both ends Up, 300 ms × 3 agreed, BGP Established)`, ms, async () => {
      const st = (last = await status(addr));
      const b = st.bfd;
      if (!(st.state === 'Established' && b?.state === 'Up' && b.remoteState === 'Up' && b.txIntervalMs === 300 && b.detectionTimeMs === 900)) return undefined;
      if (addr === FRR) {
        const f = (theirs = frrBfd());
        return f?.status === 'up' && f['transmit-interval'] === 300 && f['remote-transmit-interval'] === 300 && f['remote-receive-interval'] === 300 && st;
      }
      const bb = (theirs = birdBfd());
      return bb?.state === 'Up' && bb.interval === '0.300' && st;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; tsbgp: ${JSON.stringify({ state: last?.state, bfd: last?.bfd })}; theirs: ${JSON.stringify(theirs)}`);
    });
  };
  /** tsbgp's log lines about the BFD session with `addr` (every state change, both sides' diagnostics). */
  const bfdLog = (addr: string): string[] =>
    readFileSync(ts.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes(`BFD ${addr}:`));
  /** No BFD down and no BGP reset since `before`; else the failure names the last down's diagnostics. */
  const expectNoFlap = async (addr: string, before: PeerStatus): Promise<void> => {
    const now = await status(addr);
    const downs = (now.bfd?.counters?.downTransitions ?? 0) - (before.bfd?.counters?.downTransitions ?? 0);
    if (downs !== 0 || String(now.since) !== String(before.since) || now.state !== 'Established') {
      throw new Error(
        `BFD with ${addr} went down ${downs}× or BGP was reset (${before.state} since ${String(before.since)} → ${now.state} since ${String(now.since)}): last down ${JSON.stringify(now.bfd?.lastDown)}, remote diag now ${JSON.stringify(now.bfd?.remoteDiag)}; log:\n${bfdLog(addr).join('\n')}`,
      );
    }
    expect(downs).toBe(0);
  };

  it("FRR restarts its BFD session when its BGP session establishes after BFD came Up: tsbgp's BFD goes Down and Up again and tsbgp does not reset BGP for it (issue 32)", async () => {
    let firstId: number | undefined;
    try {
      const up = await until('BFD Up with FRR, BGP held back', 30_000, async () => {
        const b = (await status(FRR)).bfd;
        return b?.state === 'Up' && b.remoteState === 'Up' && b;
      });
      firstId = await until("FRR's BFD session up", 10_000, () => {
        const f = frrBfd();
        return f?.status === 'up' && f.id;
      });
      expect((await status(FRR)).state).not.toBe('Established');
      expect(up.counters?.downTransitions).toBe(0);
    } finally {
      nft('f1', 'delete table inet i19bgp');
    }
    const nEvents = ts.events.length;
    await until('BGP Established with FRR', 30_000, async () => {
      const s = await status(FRR);
      return s.state === 'Established' && s;
    });
    // bgpd re-registers the session with its addresses now; bfdd says Down (diag 3) from the old one, frees it and starts another
    const replaced = await until("FRR's new BFD session (another id)", 15_000, () => {
      const f = frrBfd();
      return f && f.id !== firstId && f;
    }).catch((e: Error) => {
      throw new Error(`${e.message}: this FRR did not restart its BFD session as 8.4 does (id ${firstId} kept)`);
    });
    const st = await stableUp(FRR);
    expect(st.bfd?.remoteDiscriminator).toBe(replaced.id);
    expect(st.bfd?.lastDown, bfdLog(FRR).join('\n')).toMatchObject({ diag: { code: 3 }, remoteState: 'Down', remoteRestarted: true, remoteAdminDown: false });
    expect(st.bfd?.counters?.downTransitions).toBe(1);
    // tsbgp took no BGP session down for it (no Cease 10 sent, before or after Established). FRR's own
    // bgpd may: bfdd tells it its old session went down, and it sends Cease 10 ("received" here) —
    // FRR's doing, seen in the lab; the session comes back by itself after IdleHold.
    const ours = ts.events.slice(nEvents).filter((e) => e.event === 'peerDown' && e.peer.address === FRR && /6\/10 sent/.test(e.reason));
    expect(ours, JSON.stringify(ours)).toEqual([]);
    expect(
      st.lastError?.code === 6 && st.lastError.subcode === 10 && st.lastError.direction === 'sent',
      `Cease 10 "BFD Down" sent: ${JSON.stringify(st.lastError)}`,
    ).toBe(false);
  });

  it('BFD comes up with FRR bfdd and BIRD, beside the BGP sessions', async () => {
    const f = await stableUp(FRR);
    const b = await stableUp(BIRD);
    for (const s of [f, b])
      expect(s.bfd).toMatchObject({
        state: 'Up',
        remoteState: 'Up',
        txIntervalMs: 300,
        detectionTimeMs: 900,
        desired: { minTxMs: 300, minRxMs: 300, multiplier: 3 },
      });
    expect(frrBfd()?.status).toBe('up');
    expect(birdBfd()?.state).toBe('Up');
    // FRR single-hop BFD drops packets whose TTL is not 255 (RFC 5881 §5): Up proves ours carry 255.
    await until("FRR's route at tsbgp", 10_000, () => received(FRR, '192.0.2.0/25'));
    await until("BIRD's route at tsbgp", 10_000, () => received(BIRD, '192.0.2.128/25'));
    await until("tsbgp's route at FRR", 10_000, () => frrHas('198.18.0.0/24'));
    await until('both routes in the kernel', 10_000, () => Object.keys(kernelRoutes()).length === 2);
    expect(kernelRoutes()).toEqual({ '192.0.2.0/25': FRR, '192.0.2.128/25': BIRD });
    expect(f.bfd?.receivedTtl?.checked).toBe(true);
    await expectNoFlap(FRR, f);
    await expectNoFlap(BIRD, b);
  });

  it('timer changes on either side go through Poll/Final without a flap (FRR)', async () => {
    const before = await stableUp(FRR);
    await ts.updatePeer(peer(FRR, 65002, TS.frr, { minTx: 500, minRx: 500, multiplier: 3 }));
    await until('FRR sees our 500 ms', 10_000, () => {
      const p = frrBfd();
      return p?.['remote-transmit-interval'] === 500 && p['remote-receive-interval'] === 500;
    });
    await until('tsbgp sends every 500 ms', 10_000, async () => (await status(FRR)).bfd?.txIntervalMs === 500);
    lab.mustExec('f1', ['vtysh', '-c', 'configure terminal', '-c', 'bfd', '-c', 'profile fast', '-c', 'transmit-interval 700']);
    await until('tsbgp detection 3 × 700', 10_000, async () => (await status(FRR)).bfd?.detectionTimeMs === 2100);
    await ts.updatePeer(peer(FRR, 65002, TS.frr, FAST));
    lab.mustExec('f1', ['vtysh', '-c', 'configure terminal', '-c', 'bfd', '-c', 'profile fast', '-c', 'transmit-interval 300']);
    await until('back to 300 × 3', 10_000, async () => {
      const s = (await status(FRR)).bfd;
      return s?.detectionTimeMs === 900 && s.txIntervalMs === 300;
    });
    await expectNoFlap(FRR, before);
    expect(frrBfd()?.status).toBe('up');
  });

  it('timer changes on either side go through Poll/Final without a flap (BIRD)', async () => {
    const before = await stableUp(BIRD);
    await ts.updatePeer(peer(BIRD, 65003, TS.bird, { minTx: 500, minRx: 500, multiplier: 3 }));
    await until('tsbgp sends every 500 ms', 10_000, async () => (await status(BIRD)).bfd?.txIntervalMs === 500);
    await until('BIRD sends to us every 500 ms', 10_000, () => birdBfd()?.interval === '0.500');
    writeFileSync(join(lab.node('b1').work, 'bird.conf'), birdConf(700));
    birdc('configure');
    await until('tsbgp detection 3 × 700', 10_000, async () => (await status(BIRD)).bfd?.detectionTimeMs === 2100);
    await ts.updatePeer(peer(BIRD, 65003, TS.bird, FAST));
    writeFileSync(join(lab.node('b1').work, 'bird.conf'), birdConf(300));
    birdc('configure');
    await until('back to 300 × 3', 10_000, async () => {
      const s = (await status(BIRD)).bfd;
      return s?.detectionTimeMs === 900 && s.txIntervalMs === 300;
    });
    await expectNoFlap(BIRD, before);
    expect(birdBfd()?.state).toBe('Up');
  });

  it("FRR's packets at TTL 254 are dropped by the kernel (RFC 5881 §5): they neither keep nor bring the session up; at 255 it comes back", async () => {
    await stableUp(FRR);
    // FRR sends at TTL 255; from here on its BFD packets to us leave at 254, as if from one hop further
    nft('f1', `table ip i19ttl {\n chain out { type filter hook output priority 0; policy accept; ip daddr ${TS.frr} udp dport 3784 ip ttl set 254; }\n}`);
    try {
      const down = await until('tsbgp BFD down while FRR still sends', 10_000, async () => {
        const b = (await status(FRR)).bfd;
        return b?.state !== 'Up' && b;
      });
      expect(down.lastDiag).toEqual({ code: 1, text: 'Control Detection Time Expired' });
      const packetsIn = (await status(FRR)).bfd!.counters!.packetsIn;
      const drops = (await status(FRR)).bfd!.receivedTtl?.kernelDrops ?? 0;
      // FRR keeps sending (at 1 s while not Up): two more of its packets dropped, none reaching the session
      const later = await until('two more kernel drops', 15_000, async () => {
        const b = (await status(FRR)).bfd;
        return (b?.receivedTtl?.kernelDrops ?? 0) >= drops + 2 && b;
      });
      expect(later.state).not.toBe('Up');
      expect(later.counters?.packetsIn).toBe(packetsIn);
      expect(later.receivedTtl?.checked).toBe(true);
    } finally {
      nft('f1', 'delete table ip i19ttl');
    }
    await bfdUp(FRR, 60_000);
    await until("FRR's route back", 30_000, () => received(FRR, '192.0.2.0/25'));
  });

  for (const [name, node, addr, tsAddr, theirPrefix] of [
    ['FRR', 'f1', FRR, TS.frr, '192.0.2.0/25'],
    ['BIRD', 'b1', BIRD, TS.bird, '192.0.2.128/25'],
  ] as const) {
    it(`a cut link to ${name} (no TCP reset) takes BGP down within the detection time; restored, all comes back`, async () => {
      await stableUp(addr, 60_000);
      const nEvents = ts.events.length;
      const t0 = Date.now();
      cutLink(node, tsAddr);
      const cutAt = Date.now();
      // their own detection, polled (resolution: one vtysh/birdc call, ~20-60 ms)
      const theirs = until(`${name}'s BFD down`, 10_000, () => (node === 'f1' ? frrBfd()?.status === 'down' : birdBfd()?.state === 'Down') && Date.now(), 20);
      const ev = await until(`peerDown ${addr}`, 10_000, () => ts.events.slice(nEvents).find((e) => e.event === 'peerDown' && e.peer.address === addr), 10);
      const downAt = ev.event === 'peerDown' ? new Date(ev.peer.since).getTime() : NaN;
      const took = downAt - t0;
      figures[`tsbgp detection, link to ${name} cut (cut → BGP down)`] = took;
      figures[`${name} bfd detection (cut → its BFD session down, polled)`] = (await theirs) - cutAt;
      expect(took).toBeGreaterThan(0);
      expect(took).toBeLessThan(DOWN_BOUND_MS);
      if (ev.event === 'peerDown') expect(ev.reason).toMatch(/NOTIFICATION 6\/10 sent/);
      const st = await status(addr);
      // the BFD worker's own moment (the rest is the main thread hearing of it and stopping BGP)
      if (st.bfd?.since !== undefined) figures[`tsbgp BFD worker, link to ${name} cut (cut → BFD down)`] = new Date(st.bfd.since).getTime() - t0;
      expect(st.bfd?.lastDiag).toEqual({ code: 1, text: 'Control Detection Time Expired' });
      expect(st.lastError).toMatchObject({ code: 6, subcode: 10 });
      expect(await received(addr, theirPrefix)).toBe(false);
      // and the kernel's copy of it (the other peer's stays)
      const gone = await until(`${theirPrefix} out of the kernel`, 10_000, () => !(theirPrefix in kernelRoutes()) && Date.now());
      figures[`tsbgp kernel route removed, link to ${name} cut (cut → route gone, polled)`] = gone - t0;
      expect(Object.keys(kernelRoutes())).toEqual([name === 'FRR' ? '192.0.2.128/25' : '192.0.2.0/25']);
      // and their table loses ours once their own BFD has acted
      await until(`tsbgp's route gone at ${name}`, 10_000, () => !(node === 'f1' ? frrHas('198.18.0.0/24') : birdHas('198.18.0.0/24')));

      restoreLink(node);
      await bfdUp(addr, 60_000);
      await until(`${name}'s route back`, 30_000, () => received(addr, theirPrefix));
      await until(`${theirPrefix} back in the kernel`, 10_000, () => kernelRoutes()[theirPrefix] === addr);
      await until(`tsbgp's route back at ${name}`, 30_000, () => (node === 'f1' ? frrHas('198.18.0.0/24') : birdHas('198.18.0.0/24')));
    });
  }
});
