import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BgpConnection, joinUpdates, RUN_BYTES, type MessageStats } from '../../src/session/connection.js';
import { LEGACY_CONTEXT } from '../../src/wire/context.js';
import { packUpdates } from '../../src/wire/packer.js';
import { Address } from '../../src/net/address.js';
import { Prefix } from '../../src/net/prefix.js';

async function socketPair(): Promise<[Socket, Socket, () => void]> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const client = connect({ host: '127.0.0.1', port });
  const other = await accepted;
  return [client, other, () => server.close()];
}

describe('BgpConnection.sendUpdateRuns, a message a run', () => {
  it('writes pre-encoded UPDATEs byte for byte and counts them', async () => {
    const [mine, theirs, close] = await socketPair();
    const stats: MessageStats = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 };
    const got: Buffer[] = [];
    theirs.on('data', (d: Buffer) => got.push(d));
    const conn = new BgpConnection(mine, { onMessage: () => {}, onError: () => {}, onClose: () => {} }, { stats });
    const msgs = packUpdates(
      { origin: 0, asPath: [], nextHop: Address.parse('192.0.2.1') },
      [Prefix.parse('10.0.0.0/8'), Prefix.parse('10.1.0.0/16')],
      LEGACY_CONTEXT,
    );
    for (const m of msgs) expect(conn.sendUpdateRuns([{ bytes: m, count: 1 }])).toBe(true);
    const want = Buffer.concat(msgs.map((m) => Buffer.from(m)));
    for (let i = 0; i < 100 && Buffer.concat(got).length < want.length; i++) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(got).equals(want)).toBe(true);
    expect(stats).toEqual({ messagesIn: 0, messagesOut: msgs.length, updatesIn: 0, updatesOut: msgs.length });
    conn.close();
    expect(conn.sendUpdateRuns([{ bytes: msgs[0], count: 1 }])).toBe(false);
    theirs.destroy();
    close();
  });
});

describe('joinUpdates', () => {
  const msg = (n: number, fill: number) => new Uint8Array(n).fill(fill);

  it('joins shared messages into runs of at most RUN_BYTES, in order, byte for byte', () => {
    const msgs = Array.from({ length: 40 }, (_, i) => msg(4096, i));
    const runs = joinUpdates(msgs, true);
    expect(runs.map((r) => r.count)).toEqual([16, 16, 8]);
    for (const r of runs) expect(r.bytes.length).toBeLessThanOrEqual(RUN_BYTES);
    expect(Buffer.concat(runs.map((r) => Buffer.from(r.bytes))).equals(Buffer.concat(msgs.map((m) => Buffer.from(m))))).toBe(true);
  });

  it('joins a small unshared batch, leaves a large one (an initial dump) uncopied', () => {
    const small = [msg(60, 1), msg(70, 2), msg(80, 3)];
    expect(joinUpdates(small, false)).toEqual([{ bytes: Uint8Array.from([...small[0], ...small[1], ...small[2]]), count: 3 }]);
    const large = Array.from({ length: 20 }, (_, i) => msg(4096, i));
    const runs = joinUpdates(large, false);
    expect(runs.length).toBe(20);
    runs.forEach((r, i) => expect(r.bytes).toBe(large[i]));
  });

  it('joins messages adjacent in one buffer by a view, uncopied, also in a large unshared batch', () => {
    const whole = new Uint8Array(20 * 4096).map((_, i) => i >> 12);
    const views = Array.from({ length: 20 }, (_, i) => whole.subarray(i * 4096, (i + 1) * 4096));
    for (const shared of [false, true]) {
      const runs = joinUpdates(views, shared);
      expect(runs.map((r) => r.count)).toEqual([16, 4]);
      for (const r of runs) expect(r.bytes.buffer).toBe(whole.buffer);
      expect(Buffer.concat(runs.map((r) => Buffer.from(r.bytes))).equals(Buffer.from(whole))).toBe(true);
    }
    // A gap or another buffer ends a view run; unshared and large, what is not adjacent stays apart.
    const other = msg(4096, 7);
    const runs = joinUpdates([...views.slice(0, 3), other, ...views.slice(4, 20)], false);
    expect(runs.map((r) => r.count)).toEqual([3, 1, 16]);
    expect(runs[1].bytes).toBe(other);
  });

  it('sends a message longer than a run alone, uncopied', () => {
    const big = msg(RUN_BYTES + 1, 9);
    const runs = joinUpdates([msg(10, 1), big, msg(10, 2)], true);
    expect(runs.map((r) => r.count)).toEqual([1, 1, 1]);
    expect(runs[1].bytes).toBe(big);
  });
});

describe('BgpConnection.sendUpdateRuns', () => {
  it('writes joined runs byte for byte and counts every UPDATE in them', async () => {
    const [mine, theirs, close] = await socketPair();
    const stats: MessageStats = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 };
    const got: Buffer[] = [];
    let want = Buffer.alloc(0);
    let arrived = () => {};
    const all = new Promise<void>((r) => (arrived = r));
    theirs.on('data', (d: Buffer) => {
      got.push(d);
      if (Buffer.concat(got).length >= want.length) arrived();
    });
    const conn = new BgpConnection(mine, { onMessage: () => {}, onError: () => {}, onClose: () => {} }, { stats });
    const msgs = Array.from(
      { length: 30 },
      (_, i) => packUpdates({ origin: 0, asPath: [], nextHop: Address.parse(`192.0.2.${i + 1}`) }, [Prefix.parse(`198.18.${i}.0/24`)], LEGACY_CONTEXT)[0],
    );
    const runs = joinUpdates(msgs, true);
    expect(runs.length).toBe(1);
    expect(conn.sendUpdateRuns(runs)).toBe(true);
    want = Buffer.concat(msgs.map((m) => Buffer.from(m)));
    await all;
    expect(Buffer.concat(got).equals(want)).toBe(true);
    expect(stats).toEqual({ messagesIn: 0, messagesOut: 30, updatesIn: 0, updatesOut: 30 });
    conn.close();
    expect(conn.sendUpdateRuns(runs)).toBe(false);
    theirs.destroy();
    close();
  });

  it('writes past what the socket takes byte for byte: the rest waits in the UPDATE lane, and every message is counted', async () => {
    const [mine, theirs, close] = await socketPair();
    const stats: MessageStats = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 };
    const conn = new BgpConnection(mine, { onMessage: () => {}, onError: () => {}, onClose: () => {} }, { stats });
    // ~2 MB of UPDATEs: well past the socket's high-water mark, so part of them waits in the connection's queue
    const prefixes = Array.from({ length: 200_000 }, (_, i) => Prefix.parse(`${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0/24`));
    const msgs = packUpdates({ origin: 0, asPath: [], nextHop: Address.parse('192.0.2.1') }, prefixes, LEGACY_CONTEXT);
    expect(msgs.length).toBeGreaterThan(100);
    const want = Buffer.concat(msgs.map((m) => Buffer.from(m)));
    const got: Buffer[] = [];
    let n = 0;
    const all = new Promise<void>((resolve) =>
      theirs.on('data', (d: Buffer) => {
        got.push(d);
        n += d.length;
        if (n >= want.length) resolve();
      }),
    );
    theirs.pause(); // the peer does not read yet: the kernel's buffers fill and the socket pushes back
    expect(conn.sendUpdateRuns(joinUpdates(msgs.slice(0, 1), true))).toBe(true);
    expect(conn.sendUpdateRuns(joinUpdates(msgs.slice(1), true))).toBe(true);
    expect(conn.queuedBytes).toBeGreaterThan(0);
    expect(conn.queued[3]).toBeGreaterThan(0); // the rest waits in the UPDATE lane
    theirs.resume();
    await all;
    expect(Buffer.concat(got).equals(want)).toBe(true);
    expect(stats).toEqual({ messagesIn: 0, messagesOut: msgs.length, updatesIn: 0, updatesOut: msgs.length });
    conn.close();
    theirs.destroy();
    close();
  });
});
