import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_CONTEXT } from '../../src/wire/context.js';
import { encodeMessage } from '../../src/wire/message.js';
import type { OpenMessage } from '../../src/wire/types.js';
import type { BgpSpeaker } from '../../src/index.js';
import { eventually, established, link, peerStatus, routeOf, speaker, stopAll } from './helpers.js';

/** What a raw socket read from the speaker: every complete message's type, and the NOTIFICATION if any. */
interface Seen {
  types: number[];
  notification?: { code: number; subcode: number; data: number[] };
  closed: boolean;
}

function watch(sock: Socket): Seen {
  const seen: Seen = { types: [], closed: false };
  let buf = Buffer.alloc(0);
  sock.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 19) {
      const len = buf.readUInt16BE(16);
      if (buf.length < len) break;
      const type = buf[18];
      seen.types.push(type);
      if (type === 3) seen.notification = { code: buf[19], subcode: buf[20], data: [...buf.subarray(21, len)] };
      buf = buf.subarray(len);
    }
  });
  sock.on('error', () => {});
  sock.on('close', () => {
    seen.closed = true;
  });
  return seen;
}

const marker = () => Buffer.alloc(16, 0xff);
const header = (len: number, type: number) => Buffer.concat([marker(), Buffer.from([len >> 8, len & 0xff, type])]);
const open = (patch: Partial<OpenMessage>, asn: number, id: string) =>
  Buffer.from(
    encodeMessage(
      {
        type: 'open',
        version: 4,
        myAs: asn,
        holdTime: 90,
        bgpId: id,
        params: [
          {
            type: 2,
            capabilities: [
              { kind: 'multiprotocol', afi: 1, safi: 1 },
              { kind: 'fourOctetAs', asn },
            ],
          },
        ],
        ...patch,
      },
      LEGACY_CONTEXT,
    ),
  );

const CASES: { name: string; from: string; bytes: (asn: number, id: string) => Buffer; code: number; subcode: number; data?: number[] }[] = [
  { name: 'garbage bytes', from: '127.0.0.3', bytes: () => Buffer.from('GET / HTTP/1.1\r\nHost: bgp\r\n\r\n'), code: 1, subcode: 1 },
  { name: 'a truncated header (length 15)', from: '127.0.0.4', bytes: () => header(15, 4), code: 1, subcode: 2, data: [0, 15] },
  { name: 'an OPEN with version 3', from: '127.0.0.5', bytes: (asn, id) => open({ version: 3 }, asn, id), code: 2, subcode: 1, data: [0, 4] },
  { name: 'an OPEN with hold time 2', from: '127.0.0.6', bytes: (asn, id) => open({ holdTime: 2 }, asn, id), code: 2, subcode: 6 },
  {
    name: 'a 5000-byte message without extended messages',
    from: '127.0.0.7',
    bytes: () => Buffer.concat([header(5000, 2), Buffer.alloc(5000 - 19)]),
    code: 1,
    subcode: 2,
    data: [5000 >> 8, 5000 & 0xff],
  },
];

describe('bad input from a peer ends only that session', () => {
  let s: BgpSpeaker & { address: string };
  let good: BgpSpeaker & { address: string };
  let goodSince: Date;

  beforeAll(async () => {
    s = await speaker('127.0.0.1', { asn: 65000 });
    good = await speaker('127.0.0.2', { asn: 65002 });
    link(s, good, { families: ['ipv4'] }, { families: ['ipv4'] });
    goodSince = (await established(s, '127.0.0.2')).since;
    for (const c of CASES) s.addPeer({ address: c.from, asn: 65003, passive: true, families: ['ipv4'] });
  });
  afterAll(stopAll);

  for (const c of CASES) {
    it(`${c.name} → NOTIFICATION ${c.code}/${c.subcode}, the good session stays up`, async () => {
      await eventually(`${c.from} waiting passively`, () => peerStatus(s, c.from).state === 'Active');
      const sock = connect({ host: '127.0.0.1', port: s.port!, localAddress: c.from });
      const seen = watch(sock);
      await new Promise<void>((r) => sock.once('connect', () => r()));
      await eventually('our OPEN', () => seen.types.includes(1));
      sock.write(c.bytes(65003, c.from));
      await eventually('NOTIFICATION and close', () => seen.notification !== undefined && seen.closed);
      expect(seen.notification).toMatchObject({ code: c.code, subcode: c.subcode });
      if (c.data) expect(seen.notification!.data).toEqual(c.data);
      const err = peerStatus(s, c.from).lastError;
      expect(err).toMatchObject({ code: c.code, subcode: c.subcode, direction: 'sent' });
      sock.destroy();

      const g = peerStatus(s, '127.0.0.2');
      expect(g.state).toBe('Established');
      expect(g.since).toEqual(goodSince);
      // And it still carries routes.
      const p = `10.${60 + CASES.indexOf(c)}.0.0/16`;
      good.originate(p);
      await eventually(`${p} from the good peer`, () => routeOf(s, p));
    });
  }
});
