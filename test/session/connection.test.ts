import { EventEmitter } from 'node:events';
import { createServer, connect, type Socket, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BgpConnection, WIRE_CODEC } from '../../src/session/connection.js';
import { frameMessage } from '../../src/wire/header.js';
import type { Message } from '../../src/wire/types.js';

/** A socket stand-in whose write() pushes back on demand. */
class FakeSocket extends EventEmitter {
  written: Uint8Array[] = [];
  full = false;
  noDelay?: boolean;
  keepAlive?: [boolean, number];
  ended = false;
  destroyed = false;
  setNoDelay(v: boolean) {
    this.noDelay = v;
    return this;
  }
  setKeepAlive(v: boolean, ms: number) {
    this.keepAlive = [v, ms];
    return this;
  }
  write(b: Uint8Array) {
    this.written.push(b);
    return !this.full;
  }
  end() {
    this.ended = true;
    return this;
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
    return this;
  }
}

const handlers = () => {
  const got: Message[] = [];
  const errors: { code: number; subcode: number }[] = [];
  let closed = 0;
  let drained = 0;
  return {
    got,
    errors,
    get closed() {
      return closed;
    },
    get drained() {
      return drained;
    },
    h: {
      onMessage: (m: Message) => got.push(m),
      onError: (e: { code: number; subcode: number }) => errors.push({ code: e.code, subcode: e.subcode }),
      onClose: () => {
        closed++;
      },
      onDrain: () => {
        drained++;
      },
    },
  };
};

const decodeAll = (chunks: Uint8Array[]) =>
  chunks.map((b) => WIRE_CODEC.decode(b[18], b.subarray(19), { asn4: true, extendedMessage: false, addPathV4: false, addPathV6: false }).type);
const upd: Message = { type: 'update', withdrawn: [], attributes: {}, nlri: [] };
const notif: Message = { type: 'notification', code: 6, subcode: 2, data: new Uint8Array(0) };

describe('BgpConnection', () => {
  it('turns on no-delay and TCP keepalive', () => {
    const s = new FakeSocket();
    new BgpConnection(s as unknown as Socket, handlers().h, { codec: WIRE_CODEC, tcpKeepAliveMs: 15_000 });
    expect(s.noDelay).toBe(true);
    expect(s.keepAlive).toEqual([true, 15_000]);
  });

  it('writes straight through until the socket pushes back, then queues NOTIFICATION > KEEPALIVE > OPEN > UPDATE', () => {
    const s = new FakeSocket();
    const hs = handlers();
    const c = new BgpConnection(s as unknown as Socket, hs.h, { codec: WIRE_CODEC });
    s.full = true;
    c.send(upd); // accepted by the socket, which now reports it is full
    expect(c.writable).toBe(false);
    const open: Message = { type: 'open', version: 4, myAs: 1, holdTime: 90, bgpId: '1.1.1.1', params: [] };
    c.send(upd);
    c.send(open);
    c.send({ type: 'keepalive' });
    c.send(upd);
    c.send(notif);
    expect(c.queued).toEqual([1, 1, 1, 2]);
    s.full = false;
    s.written = [];
    s.emit('drain');
    expect(decodeAll(s.written)).toEqual(['notification', 'keepalive', 'open', 'update', 'update']);
    expect(c.writable).toBe(true);
    expect(hs.drained).toBe(1);
  });

  it('stops flushing when the socket fills again mid-drain', () => {
    const s = new FakeSocket();
    const c = new BgpConnection(s as unknown as Socket, handlers().h, { codec: WIRE_CODEC });
    s.full = true;
    c.send(upd);
    c.send(upd);
    c.send(upd);
    s.written = [];
    s.emit('drain'); // still full: one goes out, one stays
    expect(s.written).toHaveLength(1);
    expect(c.queued).toEqual([0, 0, 0, 1]);
  });

  it('close drops queued UPDATEs, flushes the NOTIFICATION, then ends', () => {
    const s = new FakeSocket();
    const c = new BgpConnection(s as unknown as Socket, handlers().h, { codec: WIRE_CODEC });
    s.full = true;
    c.send(upd);
    c.send(upd);
    c.send(notif);
    c.close();
    expect(c.send(upd)).toBe(false);
    s.full = false;
    s.written = [];
    s.emit('drain');
    expect(decodeAll(s.written)).toEqual(['notification']);
    expect(s.ended).toBe(true);
  });

  describe('over loopback TCP', () => {
    const cleanup: (() => void)[] = [];
    afterEach(() => {
      for (const f of cleanup.splice(0)) f();
    });

    async function pair(): Promise<[Socket, Socket]> {
      const server = createServer();
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const port = (server.address() as AddressInfo).port;
      const accepted = new Promise<Socket>((r) => server.once('connection', r));
      const client = connect(port, '127.0.0.1');
      const srv = await accepted;
      cleanup.push(() => {
        client.destroy();
        srv.destroy();
        server.close();
      });
      return [client, srv];
    }

    const until = async (pred: () => boolean) => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 5));
    };

    it('delivers messages split at every byte boundary', async () => {
      const [client, srv] = await pair();
      const hs = handlers();
      new BgpConnection(srv, hs.h, { codec: WIRE_CODEC });
      const bytes = Uint8Array.from([
        ...WIRE_CODEC.encode(notif, {} as never),
        ...WIRE_CODEC.encode({ type: 'keepalive' }, {} as never),
        ...WIRE_CODEC.encode(upd, {} as never),
      ]);
      for (let i = 0; i < bytes.length; i++) client.write(bytes.subarray(i, i + 1));
      await until(() => hs.got.length === 3);
      expect(hs.got.map((m) => m.type)).toEqual(['notification', 'keepalive', 'update']);
    });

    it('handles a big burst in slices that let the event loop run between them (issue 14: no loop blocked by a full table)', async () => {
      const [client, srv] = await pair();
      const N = 400;
      // Each message costs at least 1 ms (as a big UPDATE's ingest may): one turn of the loop may take about sliceMs of them.
      const busy = (ms: number) => {
        const end = performance.now() + ms;
        while (performance.now() < end) {
          /* spin */
        }
      };
      let got = 0;
      let done!: () => void;
      const all = new Promise<void>((r) => {
        done = r;
      });
      const conn = new BgpConnection(
        srv,
        {
          onMessage: () => {
            busy(1);
            if (++got === N) done();
          },
          onError: () => {},
          onClose: () => {},
        },
        { codec: WIRE_CODEC, sliceMs: 5 },
      );
      // A probe that runs once per turn of the loop: how many messages were handled between two of its runs.
      const perTurn: number[] = [];
      let last = 0;
      let probing = true;
      const probe = () => {
        perTurn.push(got - last);
        last = got;
        if (probing) setImmediate(probe);
      };
      setImmediate(probe);
      const one = WIRE_CODEC.encode(upd, {} as never);
      const burst = new Uint8Array(one.length * N);
      for (let i = 0; i < N; i++) burst.set(one, i * one.length);
      client.write(burst); // 9 KB: typically one or two reads, each holding hundreds of messages
      await all;
      probing = false;
      expect(got).toBe(N);
      // Without slicing, one read's worth (hundreds of messages, hundreds of ms) would be handled in one turn.
      expect(Math.max(...perTurn)).toBeLessThanOrEqual(6);
      expect(conn.slices).toBeGreaterThanOrEqual(N / 6 - 1);
      expect(perTurn.filter((n) => n > 0).length).toBeGreaterThanOrEqual(N / 6);
    });

    it('messages keep their order across slices and chunk splits', async () => {
      const [client, srv] = await pair();
      const seen: string[] = [];
      const conn = new BgpConnection(
        srv,
        {
          onMessage: (m) => {
            seen.push(m.type);
            const end = performance.now() + 2;
            while (performance.now() < end) {
              /* spin */
            }
          },
          onError: () => {},
          onClose: () => {},
        },
        { codec: WIRE_CODEC, sliceMs: 1 },
      );
      const kinds: Message[] = [];
      for (let i = 0; i < 60; i++) kinds.push(i % 3 === 0 ? { type: 'keepalive' } : upd);
      const bytes = Buffer.concat(kinds.map((m) => Buffer.from(WIRE_CODEC.encode(m, {} as never))));
      // Split at odd places so that slices end mid-chunk and frames straddle chunks.
      for (let o = 0; o < bytes.length; o += 37) client.write(bytes.subarray(o, o + 37));
      await until(() => seen.length === 60);
      expect(seen).toEqual(kinds.map((m) => m.type));
      expect(conn.slices).toBeGreaterThan(0);
    });

    it('a bad header gets NOTIFICATION 1/1 back and the connection closes', async () => {
      const [client, srv] = await pair();
      const hs = handlers();
      new BgpConnection(srv, hs.h, { codec: WIRE_CODEC });
      const received: Buffer[] = [];
      client.on('data', (b: Buffer) => received.push(b));
      let clientClosed = false;
      client.on('end', () => {
        clientClosed = true;
      });
      const bad = frameMessage(4, new Uint8Array(0));
      bad[3] = 0;
      client.write(bad);
      await until(() => clientClosed && hs.closed === 1);
      expect(hs.errors).toEqual([{ code: 1, subcode: 1 }]);
      const reply = Buffer.concat(received);
      expect(reply[18]).toBe(3);
      const n = WIRE_CODEC.decode(3, reply.subarray(19), {} as never);
      expect(n).toMatchObject({ type: 'notification', code: 1, subcode: 1 });
      expect(clientClosed).toBe(true);
    });
  });
});
