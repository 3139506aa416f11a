/**
 * Issue 14 §3: a peer that keeps sending KEEPALIVEs but never reads. Over
 * real loopback sockets: a raw BGP client completes the OPEN exchange, then
 * stops reading (its kernel buffer fills, the window closes) while it keeps
 * sending KEEPALIVEs. The speaker's user-space queue must stay bounded
 * however often the table changes (what the peer is owed is kept per
 * prefix, not per change), and the RFC 9687 send hold timer must drop it.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BgpSpeaker } from '../../src/speaker/speaker.js';
import type { SpeakerScheduler } from '../../src/index.js';
import { LEGACY_CONTEXT } from '../../src/wire/context.js';
import { Framer } from '../../src/wire/framer.js';
import { decodeMessage, encodeMessage } from '../../src/wire/message.js';
import { fullTable, routes } from '../../bench/lab/table.js';
import { eventually } from './helpers.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** Connects from 127.0.0.3 as AS 65010, answers the OPEN, then never reads again; KEEPALIVE every second. */
async function deafPeer(port: number): Promise<{ sock: Socket; keepalivesSent: () => number }> {
  const sock = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.3' });
  let sent = 0;
  const ka = encodeMessage({ type: 'keepalive' }, LEGACY_CONTEXT);
  const framer = new Framer(4096);
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject);
    sock.once('connect', () => {
      sock.write(
        encodeMessage(
          {
            type: 'open',
            version: 4,
            myAs: 65010,
            holdTime: 90,
            bgpId: '127.0.0.3',
            params: [
              {
                type: 2,
                capabilities: [
                  { kind: 'multiprotocol', afi: 1, safi: 1 },
                  { kind: 'fourOctetAs', asn: 65010 },
                ],
              },
            ],
          },
          LEGACY_CONTEXT,
        ),
      );
    });
    const onData = (chunk: Buffer) =>
      framer.push(chunk, (type, body) => {
        const m = decodeMessage(type, body, LEGACY_CONTEXT);
        if (m.type === 'keepalive') {
          // Its KEEPALIVE after our OPEN: the session is up on its side; answer and go deaf.
          sock.write(ka);
          sock.off('data', onData);
          sock.pause();
          resolve();
        }
      });
    sock.on('data', onData);
  });
  sock.on('error', () => undefined);
  const timer = setInterval(() => {
    if (!sock.destroyed) sock.write(ka, () => sent++);
  }, 1000);
  cleanup.push(() => (clearInterval(timer), sock.destroy()));
  return { sock, keepalivesSent: () => sent };
}

/**
 * The real clock, with a way to wait until the timers a change armed (its UPDATE flush) have fired or been
 * cleared: then whatever that change queues is queued. (Timers armed later, such as a KEEPALIVE, are not waited for.)
 */
class TrackedScheduler implements SpeakerScheduler {
  private seq = 0;
  private readonly live = new Map<number, ReturnType<typeof setTimeout>>();
  now(): number {
    return performance.now();
  }
  setTimeout(fn: () => void, ms: number): number {
    const id = ++this.seq;
    this.live.set(
      id,
      setTimeout(() => (this.live.delete(id), fn()), ms),
    );
    return id;
  }
  clearTimeout(id: unknown): void {
    clearTimeout(this.live.get(id as number));
    this.live.delete(id as number);
  }
  mark(): number {
    return this.seq;
  }
  /** Resolves once no timer armed in (from, to] is still pending. */
  async fired(from: number, to: number): Promise<void> {
    const pending = () => [...this.live.keys()].some((id) => id > from && id <= to);
    await eventually('the change flushed', () => !pending(), 20_000);
  }
}

async function speakerWithTable(n: number, sendHoldTime: number): Promise<{ sp: BgpSpeaker; churn: (med: number) => Promise<void> }> {
  const scheduler = new TrackedScheduler();
  const sp = new BgpSpeaker({ asn: 65000, routerId: '127.0.0.1', listen: { addresses: ['127.0.0.1'], port: 0 }, scheduler });
  const table = fullTable({ v4: n, v6: 0, sets: 500, seed: 3 });
  const list = [...routes(table, 4)];
  const change = (med: number) => {
    for (const r of list) {
      const s = table.sets[r.set];
      sp.originate(r.prefix, { origin: s.origin, med: med * 1000 + r.set, communities: s.communities, largeCommunities: s.largeCommunities, asPath: s.asPath });
    }
  };
  change(0);
  // one change of every route, returning once its flush timer has run
  const churn = async (med: number) => {
    const mark = scheduler.mark();
    change(med);
    expect(scheduler.mark(), 'the change armed its UPDATE flush').toBeGreaterThan(mark);
    await scheduler.fired(mark, scheduler.mark());
  };
  sp.addPeer({ address: '127.0.0.3', asn: 65010, passive: true, families: ['ipv4'], holdTime: 90, sendHoldTime });
  await sp.start();
  cleanup.push(() => sp.stop());
  return { sp, churn };
}

const queued = (sp: BgpSpeaker) => sp.status()[0].counters.sendQueueBytes ?? 0;

/** Changes every route until the kernel buffers are full and bytes wait in our queue; returns the next MED. */
async function churnUntilBlocked(sp: BgpSpeaker, churn: (med: number) => Promise<void>): Promise<number> {
  for (let k = 1; k <= 20; k++) {
    await churn(k);
    // the kernel buffers fill in real time: look often, move on to the next change after 300 ms without push-back
    for (let t = 0; t < 300 && queued(sp) === 0; t += 20) await new Promise((r) => setTimeout(r, 20));
    if (queued(sp) > 0) return k + 1;
  }
  throw new Error(`the socket never pushed back after 20 full-table changes (queue ${queued(sp)})`);
}

describe('a peer that stops reading', () => {
  it('keeps the send queue bounded by one table however often the table changes (owed prefixes, not queued changes)', async () => {
    const { sp, churn } = await speakerWithTable(150_000, 0);
    await deafPeer(sp.port!);
    await eventually('Established', () => sp.status()[0].state === 'Established', 20_000);
    // The kernel buffers take the first tables; then the socket pushes back and bytes wait in our queue.
    const next = await churnUntilBlocked(sp, churn);
    const afterDump = queued(sp);
    const sizes: number[] = [];
    for (let k = next; k < next + 8; k++) {
      await churn(k); // every route changes: on main each change queued another full table
      sizes.push(queued(sp));
    }
    expect(sp.status()[0].state).toBe('Established');
    // Only our KEEPALIVEs (19 bytes a time, every few seconds) may join what waited already.
    for (const s of sizes) expect(s).toBeLessThanOrEqual(afterDump + 19 * 16);
    console.log(`queued when the socket first pushed back ${afterDump} bytes; after 8 full-table changes ${sizes.join(', ')}`);
  }, 90_000);

  it('drops the peer with NOTIFICATION 8 (Send Hold Timer Expired) once it has read nothing for the send hold time, though it keeps sending KEEPALIVEs', async () => {
    const { sp, churn } = await speakerWithTable(150_000, 3);
    const deaf = await deafPeer(sp.port!);
    await eventually('Established', () => sp.status()[0].state === 'Established', 20_000);
    await churnUntilBlocked(sp, churn);
    const blockedAt = Date.now();
    const down = await eventually('session down', () => (sp.status()[0].state !== 'Established' ? sp.status()[0] : undefined), 30_000);
    const after = Date.now() - blockedAt;
    expect(down.lastError).toMatchObject({ code: 8, subcode: 0, direction: 'sent' });
    expect(down.lastError?.text).toContain('Send Hold Timer Expired');
    // Not before the send hold time (3 s; the check runs every quarter of it), whatever the KEEPALIVEs said.
    expect(after).toBeGreaterThanOrEqual(2_500);
    expect(deaf.keepalivesSent()).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
