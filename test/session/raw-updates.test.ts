import { createServer, connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BgpConnection, type MessageStats } from '../../src/session/connection.js';
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

describe('BgpConnection.sendUpdateBytes', () => {
  it('writes pre-encoded UPDATEs byte for byte and counts them', async () => {
    const [mine, theirs, close] = await socketPair();
    const stats: MessageStats = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 };
    const got: Buffer[] = [];
    theirs.on('data', (d: Buffer) => got.push(d));
    const conn = new BgpConnection(mine, { onMessage: () => {}, onError: () => {}, onClose: () => {} }, { stats });
    const msgs = packUpdates({ origin: 0, asPath: [], nextHop: Address.parse('192.0.2.1') }, [Prefix.parse('10.0.0.0/8'), Prefix.parse('10.1.0.0/16')], LEGACY_CONTEXT);
    for (const m of msgs) expect(conn.sendUpdateBytes(m)).toBe(true);
    const want = Buffer.concat(msgs.map((m) => Buffer.from(m)));
    for (let i = 0; i < 100 && Buffer.concat(got).length < want.length; i++) await new Promise((r) => setTimeout(r, 10));
    expect(Buffer.concat(got).equals(want)).toBe(true);
    expect(stats).toEqual({ messagesIn: 0, messagesOut: msgs.length, updatesIn: 0, updatesOut: msgs.length });
    conn.close();
    expect(conn.sendUpdateBytes(msgs[0])).toBe(false);
    theirs.destroy();
    close();
  });
});

describe('BgpConnection.sendUpdateBatch', () => {
  it('writes a batch in order, byte for byte, joined into few writes, also past what the socket takes (the rest queued in the UPDATE lane), and counts every message', async () => {
    const [mine, theirs, close] = await socketPair();
    const stats: MessageStats = { messagesIn: 0, messagesOut: 0, updatesIn: 0, updatesOut: 0 };
    const conn = new BgpConnection(mine, { onMessage: () => {}, onError: () => {}, onClose: () => {} }, { stats });
    // ~2 MB of UPDATEs: well past the socket's high-water mark, so part of the batch waits in the connection's queue
    const prefixes = Array.from({ length: 200_000 }, (_, i) => Prefix.parse(`${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0/24`));
    const msgs = packUpdates({ origin: 0, asPath: [], nextHop: Address.parse('192.0.2.1') }, prefixes, LEGACY_CONTEXT);
    expect(msgs.length).toBeGreaterThan(100);
    const want = Buffer.concat(msgs.map((m) => Buffer.from(m)));
    const got: Buffer[] = [];
    let n = 0;
    const all = new Promise<void>((resolve) => theirs.on('data', (d: Buffer) => { got.push(d); n += d.length; if (n >= want.length) resolve(); }));
    theirs.pause(); // the peer does not read yet: the kernel's buffers fill and the socket pushes back
    expect(conn.sendUpdateBatch(msgs.slice(0, 1))).toBe(true);
    expect(conn.sendUpdateBatch(msgs.slice(1))).toBe(true);
    expect(conn.queuedBytes).toBeGreaterThan(0);
    expect(conn.queued[3]).toBeGreaterThan(0); // the rest waits in the UPDATE lane
    theirs.resume();
    await all;
    expect(Buffer.concat(got).equals(want)).toBe(true);
    expect(stats).toEqual({ messagesIn: 0, messagesOut: msgs.length, updatesIn: 0, updatesOut: msgs.length });
    conn.close();
    expect(conn.sendUpdateBatch(msgs.slice(0, 2))).toBe(false);
    theirs.destroy();
    close();
  });
  it('joins a batch into writes of at most 64 KiB each: one system call per 64 KiB, not one per message', async () => {
    const [mine, theirs, close] = await socketPair();
    const conn = new BgpConnection(mine, { onMessage: () => {}, onError: () => {}, onClose: () => {} });
    const attrs = { origin: 0 as const, asPath: [], nextHop: Address.parse('192.0.2.1') };
    // 300 one-prefix UPDATEs (~40 bytes each): one write
    const small = Array.from({ length: 300 }, (_, i) => packUpdates(attrs, [Prefix.parse(`10.${i >> 8}.${i & 255}.0/24`)], LEGACY_CONTEXT)[0]);
    const writes: number[] = [];
    const write = mine.write.bind(mine);
    mine.write = ((chunk: Uint8Array, cb?: () => void) => {
      writes.push(chunk.length);
      return write(chunk, cb);
    }) as typeof mine.write;
    let n = 0;
    const total = small.reduce((a, m) => a + m.length, 0);
    const all = new Promise<void>((resolve) => theirs.on('data', (d: Buffer) => { n += d.length; if (n >= total) resolve(); }));
    expect(conn.sendUpdateBatch(small)).toBe(true);
    expect(writes).toEqual([total]);
    await all;
    // 24 full-size UPDATEs (4096 bytes): 16 to a write
    const big = packUpdates(attrs, Array.from({ length: 24 * 1019 }, (_, i) => Prefix.parse(`${20 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0/24`)), LEGACY_CONTEXT);
    expect(big.length).toBeGreaterThanOrEqual(24);
    writes.length = 0;
    expect(conn.sendUpdateBatch(big)).toBe(true);
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(big.length / 16) + 1);
    expect(writes.every((w) => w <= 64 * 1024)).toBe(true);
    conn.close();
    theirs.destroy();
    close();
  });
});
