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
  it('writes a batch in order, byte for byte, also past the socket buffer (the rest queued), and counts every message', async () => {
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
    expect(conn.sendUpdateBatch(msgs.slice(0, 1))).toBe(true);
    expect(conn.sendUpdateBatch(msgs.slice(1))).toBe(true);
    expect(conn.queuedBytes).toBeGreaterThan(0);
    await all;
    expect(Buffer.concat(got).equals(want)).toBe(true);
    expect(stats).toEqual({ messagesIn: 0, messagesOut: msgs.length, updatesIn: 0, updatesOut: msgs.length });
    conn.close();
    expect(conn.sendUpdateBatch(msgs.slice(0, 2))).toBe(false);
    theirs.destroy();
    close();
  });
});
